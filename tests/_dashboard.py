"""``tfevents api`` as a child process, and reading its answers with urllib: shared by the dashboard's tests."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

from _tensorboard import stop_process_group

RELOAD_INTERVAL = 1.0


class ApiProcess:
    """``tfevents api LOGDIR ARGS`` in its own process group; ``url`` is the URL it prints once loaded, ``log()``
    what it wrote to stderr."""

    def __init__(self, logdir: str, *args: str, env=None):
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "tfevents.viewer.cli", "api", logdir, "--port", "0",
                                      "--reload-interval", str(RELOAD_INTERVAL)] + list(args),
                                     stdout=subprocess.PIPE, stderr=self._log, start_new_session=True,
                                     env=dict(os.environ, **(env or {})))
        self.url = None

    def wait_ready(self) -> "ApiProcess":
        line = self.proc.stdout.readline().decode()
        if not line.startswith("tfevents API: "):
            stop_process_group(self.proc)
            raise RuntimeError("tfevents api did not start: %r\n%s" % (line, self.log()))
        self.url = line.split()[2]
        return self

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    @property
    def base(self) -> str:
        """The scheme, host, port and prefix, ending in '/'."""
        return self.url.split("api/v1/runs")[0]

    @property
    def cookie(self) -> str:
        return "tfevents-token-%d" % urllib.parse.urlsplit(self.url).port

    @property
    def token(self) -> str:
        return urllib.parse.parse_qs(urllib.parse.urlsplit(self.url).query)["token"][0]

    def stop(self) -> None:
        stop_process_group(self.proc)
        self.proc.stdout.close()
        self._log.close()


def get(url: str, headers=None, context=None):
    """(status, headers, body) of a GET, errors included."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10,
                                    context=context) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.headers, err.read()


def get_json(url: str, **kw):
    status, headers, body = get(url, **kw)
    assert status == 200, body
    assert headers["Content-Type"] == "application/json"
    return json.loads(body)


def query(**params) -> str:
    return urllib.parse.urlencode(params)


class ServeProcess(ApiProcess):
    """``tfevents serve LOGDIR ARGS`` (the dashboard on a free port, TensorBoard's UI on ``port``): ``url`` is the
    dashboard's printed URL (with its token, if any), ``tensorboard`` TensorBoard's UI's, ``provider`` the gRPC
    data provider's address."""

    def __init__(self, logdir: str, port: int, *args: str):
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "tfevents.viewer.cli", "serve", logdir, "--port", str(port),
                                      "--dashboard-port", "0", "--reload-interval", str(RELOAD_INTERVAL)] + list(args),
                                     stdout=subprocess.PIPE, stderr=self._log, start_new_session=True)
        self.url = self.tensorboard = self.provider = None

    def wait_ready(self) -> "ServeProcess":
        line = self.proc.stdout.readline().decode()
        # tfevents dashboard: URL (TensorBoard's UI: URL; data provider HOST:PORT; Ctrl-C stops)
        if not line.startswith("tfevents dashboard: "):
            stop_process_group(self.proc)
            raise RuntimeError("tfevents serve did not start: %r\n%s" % (line, self.log()))
        words = line.replace(";", " ").split()
        self.url, self.tensorboard, self.provider = words[2], words[5], words[8]
        return self

    @property
    def base(self) -> str:
        return self.url.split("?")[0]
