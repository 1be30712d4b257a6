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
- **Ended with its parent, however the parent ends.** The child runs in a session of its own (Ctrl-C in the
  terminal reaches ``tfevents serve`` only, which stops it), so a hang-up, a SIGKILL or a crash of the parent would
  leave it holding the port. Its first act (:func:`end_with_parent`) ties it to the parent: on Linux the kernel
  sends it SIGTERM when the parent dies (``PR_SET_PDEATHSIG``); on every system a thread of its own waits on a
  pipe only the parent can write to (its *lifeline*), whose end of file means the parent's process is gone.
"""
from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import List, Optional

__all__ = ["bracket", "tensorboard_command", "start_tensorboard", "stop_process_group", "reserve_port", "needs_tensorflow",
           "end_with_parent"]

# run_main as the ``tensorboard`` script runs it, with ``import tensorflow`` failing (a None in sys.modules), and
# ``import botocore`` too: the web server reads no logdir on S3 (ours does), so its file layer skips the ~0.1 s of CPU
# that boto3 costs at start-up, beside the first load, where it is installed
_WITHOUT_TENSORFLOW = ("import sys; sys.modules['tensorflow'] = sys.modules['botocore'] = None; "
                       "sys.argv[0] = 'tensorboard'; from tensorboard.main import run_main; sys.exit(run_main())")
_WITH_TENSORFLOW = "import sys; sys.argv[0] = 'tensorboard'; from tensorboard.main import run_main; sys.exit(run_main())"
# put before either when started by tfevents serve: (the parent's pid, the lifeline's read end) go in the %d
_ENDING_WITH_PARENT = "from tfevents.viewer.serve.web import end_with_parent; end_with_parent(%d, %d); "
_PR_SET_PDEATHSIG = 1   # linux/prctl.h
_GRACE_SECONDS = 5.0    # after its SIGTERM, how long the orphaned child may take to exit before it is ended


def bracket(host: str) -> str:
    """An IPv6 host in brackets, for an address with a port."""
    return "[%s]" % host if ":" in host and not host.startswith("[") else host


def tensorboard_command(with_tensorflow: bool = False, lifeline: Optional[int] = None, nice: int = 0) -> List[str]:
    """The command that starts TensorBoard (with TensorFlow imported, or on its stub); with ``lifeline`` (the read
    end of a pipe only this process writes to, passed to the child) it ends with this process
    (:func:`end_with_parent`); ``nice``: added to its scheduling niceness first (``os.nice``)."""
    script = _WITH_TENSORFLOW if with_tensorflow else _WITHOUT_TENSORFLOW
    if lifeline is not None:
        script = _ENDING_WITH_PARENT % (os.getpid(), lifeline) + script
    if nice:
        script = "import os; os.nice(%d); " % int(nice) + script
    return [sys.executable, "-c", script]


def end_with_parent(parent_pid: int, lifeline: int) -> None:
    """Called first thing in TensorBoard's process: end it (SIGTERM, as :func:`stop_process_group` does; its own
    exit after ``_GRACE_SECONDS`` if that does not do it) once ``parent_pid`` has gone, however it went.

    ``lifeline`` is the read end of a pipe whose write end only the parent holds: a read returns end of file when
    its process is gone (the kernel closes its descriptors whether it exits, crashes or is killed). On Linux,
    ``PR_SET_PDEATHSIG`` also has the kernel send SIGTERM when the parent dies (the thread that started the child,
    so :func:`start_tensorboard` is called from the main thread); a parent gone before that was set shows as a new
    parent pid."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent_pid:
            _end_self()
    threading.Thread(target=_wait_for_end_of_file, args=(lifeline,), name="tfevents-serve-lifeline",
                     daemon=True).start()


def _wait_for_end_of_file(lifeline: int) -> None:
    try:
        os.read(lifeline, 1)   # nothing is written: this returns (end of file) once the parent's end is closed
    except OSError:
        pass
    _end_self()


def _end_self() -> None:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(_GRACE_SECONDS)   # a daemon thread: if SIGTERM ended the process, this never returns
    os._exit(1)


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
                      extra: Optional[List[str]] = None, with_tensorflow: bool = False,
                      nice: int = 0) -> subprocess.Popen:
    """TensorBoard's web server on our provider, in a new process group, ending with this process however it ends
    (:func:`end_with_parent`; call it from the main thread). ``logdir`` (local logdirs) is passed too, for plugins
    that read files themselves (the Projector). The lifeline's write end is the Popen's ``lifeline``, closed by
    :func:`stop_process_group`. ``nice``: as :func:`tensorboard_command`'s."""
    read_end, write_end = os.pipe()   # not inheritable: only the read end goes to the child (pass_fds)
    cmd = tensorboard_command(with_tensorflow, lifeline=read_end, nice=nice) + [
        "--grpc_data_provider", provider_address, "--host", host, "--port", str(port),
        "--reload_interval", str(reload_interval)]
    if logdir:
        cmd += ["--logdir", logdir]
    if samples_per_plugin:
        cmd += ["--samples_per_plugin", samples_per_plugin]
    try:
        proc = subprocess.Popen(cmd + list(extra or ()), start_new_session=True, pass_fds=(read_end,))
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    proc.lifeline = write_end
    return proc


def stop_process_group(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM the child's process group, SIGKILL it if it lingers; close its lifeline, if it has one."""
    try:
        _stop(proc, timeout)
    finally:
        lifeline = getattr(proc, "lifeline", None)
        if lifeline is not None:
            proc.lifeline = None
            os.close(lifeline)


def _stop(proc: subprocess.Popen, timeout: float) -> None:
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
