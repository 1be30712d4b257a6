"""A real ``tensorboard`` server reads what we write: the Python loader (``--load_fast=false``) and the
Rust data server (``--load_fast=true``), both started at once on free ports and asked over HTTP."""
import contextlib
import os
import time

import numpy as np
import pytest

from _tensorboard import TensorBoardServer

TIMEOUT = 60.0
LOSS = [(0, 2.5), (1, 1.25), (3, 0.3), (10, -0.125)]
ACCURACY = [(0, 0.1), (5, 0.9)]


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
    pytest.importorskip("tensorboard")
    logs = tmp_path_factory.mktemp("tb_logs")
    with contextlib.ExitStack() as stack:
        yield {load_fast: stack.enter_context(TensorBoardServer(
                   logdir, load_fast=load_fast == "true", timeout=TIMEOUT, request_timeout=5,
                   log_path=os.path.join(logs, "load_fast_%s.log" % load_fast)))
               for load_fast in ("false", "true")}


def poll_scalars(server, tag, expected_steps):
    """GET /data/plugin/scalars/scalars until every expected step is there, or fail after TIMEOUT."""
    return server.wait_for(repr(tag), lambda: server.json("/data/plugin/scalars/scalars", run=".", tag=tag),
                           done=lambda rows: [row[1] for row in rows] == expected_steps)


@pytest.mark.parametrize("load_fast", ["false", "true"])
def test_tensorboard_serves_our_scalars(servers, load_fast):
    server = servers[load_fast]
    for tag, points in (("loss", LOSS), ("eval/accuracy", ACCURACY)):
        rows = poll_scalars(server, tag, [step for step, _ in points])
        assert [(step, value) for _, step, value in rows] == [(s, float(np.float32(v))) for s, v in points]
        assert all(abs(wall - time.time()) < 3600 for wall, _, _ in rows)
    tags = server.json("/data/plugin/scalars/tags")
    assert set(tags["."]) == {"loss", "eval/accuracy"}
    assert "weights" in server.json("/data/plugin/histograms/tags")["."]
    assert "notes/text_summary" in server.json("/data/plugin/text/tags")["."]
