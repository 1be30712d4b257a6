"""TensorBoard's web server as a child of ``tfevents serve``: its command, its start and its stop (stdlib only, so
the CLI can start it before it imports grpc and the loader, and TensorBoard starts while the logdir loads).

- **Without TensorFlow.** ``tensorboard`` imports TensorFlow at start-up when it is installed (``main_lib``'s
  ``global_init`` asks ``tf.__version__``): 4-5 s of CPU and ~600 MB, while a web server on our data provider
  needs none of it. So the child runs TensorBoard as ``pip install tensorboard`` alone would, on its own
  ``tensorflow_stub`` (``import tensorflow`` made to fail), unless ``with_tensorflow``: what it loses is the
  Projector's checkpoint-backed embeddings (``model_checkpoint_path`` in a ``projector_config.pbtxt``), which
  :func:`needs_tensorflow` looks for.
- **The provider's port, reserved first**: :func:`reserve_port` binds a free port with ``SO_REUSEPORT`` (which
  gRPC servers set too) and keeps it bound, so TensorBoard can be given the address before the provider exists,
  and nothing else takes the port meanwhile.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from typing import List, Optional

__all__ = ["bracket", "tensorboard_command", "start_tensorboard", "stop_process_group", "reserve_port", "needs_tensorflow"]

# run_main as the ``tensorboard`` script runs it, with ``import tensorflow`` failing (a None in sys.modules), and
# ``import botocore`` too: the web server reads no logdir on S3 (ours does), so its file layer skips the ~0.1 s of CPU
# that boto3 costs at start-up, beside the first load, where it is installed
_WITHOUT_TENSORFLOW = ("import sys; sys.modules['tensorflow'] = sys.modules['botocore'] = None; "
                       "sys.argv[0] = 'tensorboard'; from tensorboard.main import run_main; sys.exit(run_main())")


def bracket(host: str) -> str:
    """An IPv6 host in brackets, for an address with a port."""
    return "[%s]" % host if ":" in host and not host.startswith("[") else host


def tensorboard_command(with_tensorflow: bool = False) -> List[str]:
    """The command that starts TensorBoard (with TensorFlow imported, or on its stub)."""
    if not with_tensorflow:
        return [sys.executable, "-c", _WITHOUT_TENSORFLOW]
    exe = os.path.join(os.path.dirname(sys.executable), "tensorboard")
    return [exe] if os.path.exists(exe) else [sys.executable, "-m", "tensorboard.main"]


def needs_tensorflow(logdir: Optional[str], max_dirs: int = 10000) -> bool:
    """Whether a local logdir has a Projector config naming a checkpoint (read only through TensorFlow)."""
    if not logdir or "://" in logdir:
        return False
    for i, (folder, _, files) in enumerate(os.walk(logdir)):
        if i >= max_dirs:
            return False
        if "projector_config.pbtxt" in files:
            try:
                with open(os.path.join(folder, "projector_config.pbtxt"), "rb") as f:
                    if b"model_checkpoint_path" in f.read():
                        return True
            except OSError:
                pass
    return False


def reserve_port(host: str, port: int = 0) -> socket.socket:
    """A socket bound (not listening) to ``host:port`` (0: a free port) with SO_REUSEPORT, for a gRPC server to bind
    too; close it once the server has bound. OSError if the port is taken."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        s.bind((host.strip("[]"), port))
    except OSError:
        s.close()
        raise
    return s


def start_tensorboard(provider_address: str, *, host: str, port: int, logdir: Optional[str],
                      samples_per_plugin: Optional[str], reload_interval: float,
                      extra: Optional[List[str]] = None, with_tensorflow: bool = False) -> subprocess.Popen:
    """TensorBoard's web server on our provider, in a new process group. ``logdir`` (local logdirs) is passed
    too, for plugins that read files themselves (the Projector)."""
    cmd = tensorboard_command(with_tensorflow) + ["--grpc_data_provider", provider_address, "--host", host,
                                                  "--port", str(port), "--reload_interval", str(reload_interval)]
    if logdir:
        cmd += ["--logdir", logdir]
    if samples_per_plugin:
        cmd += ["--samples_per_plugin", samples_per_plugin]
    return subprocess.Popen(cmd + list(extra or ()), start_new_session=True)


def stop_process_group(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM the child's process group, SIGKILL it if it lingers."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)
    except ProcessLookupError:
        pass
