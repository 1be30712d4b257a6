"""A real ``tensorboard`` server reads what we write: the Python loader (``--load_fast=false``) and the
Rust data server (``--load_fast=true``), both started at once on free ports and asked over HTTP."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pytest

TIMEOUT = 60.0
LOSS = [(0, 2.5), (1, 1.25), (3, 0.3), (10, -0.125)]
ACCURACY = [(0, 0.1), (5, 0.9)]


def tensorboard_command():
    exe = os.path.join(os.path.dirname(sys.executable), "tensorboard")
    return [exe] if os.path.exists(exe) else [sys.executable, "-m", "tensorboard.main"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(port, route, **params):
    url = "http://127.0.0.1:%d%s?%s" % (port, route, urllib.parse.urlencode(params))
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read().decode())


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    from tfevents.summaries import SummaryWriter
    d = str(tmp_path_factory.mktemp("tb_server"))
    with SummaryWriter(d) as w:
        for step, value in LOSS:
            w.add_scalar("loss", value, step)
        for step, value in ACCURACY:
            w.add_scalar("eval/accuracy", value, step)
        w.add_histogram("weights", np.random.default_rng(0).normal(size=100), 0)
        w.add_text("notes", "hello", 0)
    return d


@pytest.fixture(scope="module")
def servers(logdir, tmp_path_factory):
    """Both servers, started together; each stopped by its PID (its process group) afterwards."""
    if shutil.which("tensorboard") is None and not os.path.exists(tensorboard_command()[0]):
        pytest.skip("tensorboard is not installed")
    logs = tmp_path_factory.mktemp("tb_logs")
    procs = {}
    try:
        for load_fast in ("false", "true"):
            port = free_port()
            log = open(os.path.join(logs, "load_fast_%s.log" % load_fast), "wb")
            proc = subprocess.Popen(
                tensorboard_command() + ["--logdir", logdir, "--host", "127.0.0.1", "--port", str(port),
                                         "--load_fast=%s" % load_fast, "--reload_interval", "1"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES=""))
            procs[load_fast] = (proc, port, log)
        yield {k: (port, log.name, proc) for k, (proc, port, log) in procs.items()}
    finally:
        for proc, _, log in procs.values():
            stop(proc)
            log.close()


def stop(proc):
    """SIGTERM the server's process group (it was started in a new session, so pgid == pid)."""
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


def poll_scalars(server, tag, expected_steps):
    """GET /data/plugin/scalars/scalars until every expected step is there, or fail after TIMEOUT."""
    port, log_path, proc = server
    deadline = time.monotonic() + TIMEOUT
    last = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            last = get_json(port, "/data/plugin/scalars/scalars", run=".", tag=tag)
            if [row[1] for row in last] == expected_steps:
                return last
        except (urllib.error.URLError, ConnectionError, OSError, ValueError) as err:
            last = err
        time.sleep(0.5)
    with open(log_path, "rb") as f:
        output = f.read().decode(errors="replace")[-2000:]
    pytest.fail("tensorboard did not serve %r (last answer: %r, exit code %r); its log:\n%s"
                % (tag, last, proc.poll(), output))


@pytest.mark.parametrize("load_fast", ["false", "true"])
def test_tensorboard_serves_our_scalars(servers, load_fast):
    server = servers[load_fast]
    for tag, points in (("loss", LOSS), ("eval/accuracy", ACCURACY)):
        rows = poll_scalars(server, tag, [step for step, _ in points])
        assert [(step, value) for _, step, value in rows] == [(s, float(np.float32(v))) for s, v in points]
        assert all(abs(wall - time.time()) < 3600 for wall, _, _ in rows)
    port = server[0]
    tags = get_json(port, "/data/plugin/scalars/tags")
    assert set(tags["."]) == {"loss", "eval/accuracy"}
    assert "weights" in get_json(port, "/data/plugin/histograms/tags")["."]
    assert "notes/text_summary" in get_json(port, "/data/plugin/text/tags")["."]
