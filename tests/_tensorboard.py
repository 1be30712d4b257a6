"""A real ``tensorboard`` server for tests: started on a free port in a process group of its own, asked over
HTTP, and always stopped by its PID (= its process group), whatever happened.

    with TensorBoardServer(logdir, load_fast=True, log_path=..., timeout=60) as server:
        server.wait_for("the loss curve", lambda: server.json("/data/plugin/scalars/scalars", run=".", tag="loss"))
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

# what a server that is still starting or loading answers with (HTTPError is a URLError; KeyError: a JSON answer
# without the run or tag yet)
NOT_YET = (urllib.error.URLError, ConnectionError, OSError, ValueError, KeyError)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tensorboard_command() -> list[str]:
    exe = os.path.join(os.path.dirname(sys.executable), "tensorboard")
    return [exe] if os.path.exists(exe) else [sys.executable, "-m", "tensorboard.main"]


def tensorboard_without_tensorflow_command() -> list[str]:
    """TensorBoard as ``pip install tensorboard`` alone runs it: ``import tensorflow`` fails (a None in
    ``sys.modules``), so it reads files through its own ``tensorflow_stub`` gfile, whose ``s3://`` support
    (boto3, the endpoint in ``S3_ENDPOINT``) TensorFlow itself no longer has."""
    code = ("import sys; sys.modules['tensorflow'] = None; sys.argv[0] = 'tensorboard'; "
            "from tensorboard.main import run_main; run_main()")
    return [sys.executable, "-c", code]


def terminate_process_group(proc: subprocess.Popen | None) -> None:
    """SIGTERM a process started with ``start_new_session=True`` and return at once (``stop_process_group`` then
    waits for it, and SIGKILLs it if it lingers)."""
    if proc is not None and proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def stop_process_group(proc: subprocess.Popen) -> None:
    """SIGTERM a process started with ``start_new_session=True`` (so its pgid is its pid), SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


class TensorBoardServer:
    """``tensorboard --logdir LOGDIR --load_fast=... --reload_interval 1`` on 127.0.0.1 and a free port
    (``command`` in place of ``tensorboard``, ``env`` added to the environment; with ``logdir_spec`` LOGDIR is
    ``name:path,...`` for ``--logdir_spec``).

    ``timeout`` bounds :meth:`wait_for`; ``request_timeout`` each HTTP request. The server's output goes to
    ``log_path`` (a temporary file when not given) and is shown when a wait fails."""

    def __init__(self, logdir: str, *, load_fast: bool = False, log_path: str | None = None,
                 extra_args: tuple = (), timeout: float = 60.0, request_timeout: float = 30.0,
                 command: list | None = None, env: dict | None = None, logdir_spec: bool = False):
        self.logdir, self.load_fast, self.extra_args = logdir, load_fast, list(extra_args)
        self.command, self.env = command, env or {}
        self.logdir_flag = "--logdir_spec" if logdir_spec else "--logdir"
        self.timeout, self.request_timeout = timeout, request_timeout
        self.log_path, self._own_log = log_path, log_path is None
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None

    def start(self) -> "TensorBoardServer":
        if self._own_log:
            fd, self.log_path = tempfile.mkstemp(prefix="tensorboard-", suffix=".log")
            os.close(fd)
        self.port = free_port()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                (self.command or tensorboard_command())
                + [self.logdir_flag, self.logdir, "--host", "127.0.0.1", "--port", str(self.port),
                   "--load_fast=%s" % ("true" if self.load_fast else "false"), "--reload_interval", "1"]
                + self.extra_args,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", **self.env))
        return self

    def terminate(self) -> None:
        """SIGTERM the server's process group without waiting (``stop`` waits): a fixture that stops several
        servers terminates them all first, so they shut down together."""
        terminate_process_group(self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process_group(self.proc)
        if self._own_log and self.log_path and os.path.exists(self.log_path):
            os.remove(self.log_path)

    def __enter__(self) -> "TensorBoardServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return "http://127.0.0.1:%d/" % self.port

    def get(self, route: str, **params) -> bytes:
        """The body of ``GET route?params``."""
        url = "http://127.0.0.1:%d%s" % (self.port, route)
        if params:
            url += "?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=self.request_timeout) as response:
            return response.read()

    def json(self, route: str, **params):
        return json.loads(self.get(route, **params).decode())

    def post_json(self, route: str, body: dict):
        """``POST route`` with a JSON body (the hparams plugin's API), the answer decoded."""
        request = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, route), data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json", "X-XSRF-Protected": "1"})
        with urllib.request.urlopen(request, timeout=self.request_timeout) as response:
            return json.loads(response.read().decode())

    def log(self) -> str:
        """The tail of the server's output."""
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")[-3000:]

    def wait_for(self, what: str, check, timeout: float | None = None, done=bool):
        """Poll ``check()`` every half second until ``done(answer)`` (by default: the answer is true), and return
        the answer; a :data:`NOT_YET` exception counts as not yet. Fails the test, with the last answer and the
        server's log, when the server exits or ``timeout`` (default: the server's) runs out."""
        deadline, last = time.monotonic() + (self.timeout if timeout is None else timeout), None
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                last = check()
                if done(last):
                    return last
            except NOT_YET as e:
                last = e
            time.sleep(0.5)
        pytest.fail("tensorboard (exit code %r) did not serve %s (last answer %r); its log:\n%s"
                    % (self.proc.poll(), what, last, self.log()))


# TensorBoard's Scalars charts are SVG paths inside shadow roots: the drawn lines, found by walking them
_LINES_DRAWN = """
const walk = (root, out) => { for (const el of root.querySelectorAll('*')) {
    if (el.shadowRoot) walk(el.shadowRoot, out);
    if (el.tagName.toLowerCase() === 'path' && /line/.test(el.getAttribute('class') || '')
        && (el.getAttribute('d') || '').length > 40) out.push(el); } return out; };
return walk(document, []).length;"""


def wait_for_tensorboard_lines(driver, at_least: int, timeout: float = 60.0) -> int:
    """How many scalar lines TensorBoard's page in ``driver`` draws, looked for every 0.5 s until at least
    ``at_least`` or ``timeout`` seconds."""
    deadline, count = time.monotonic() + timeout, 0
    while time.monotonic() < deadline and count < at_least:
        count = driver.execute_script(_LINES_DRAWN)
        if count < at_least:
            time.sleep(0.5)
    return count
