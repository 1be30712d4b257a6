"""``plot``, ``report``, ``show`` and ``watch`` on an ``s3://`` logdir (moto's S3 server, the real protocol) give what
they give on the local copy of the same files."""
import os
import re
import sys

import numpy as np
import pytest

from _terminal import Terminal
from test_watch import _row

pytest.importorskip("s3fs", reason="reading s3:// needs s3fs (the `test` extra)")

BUCKET = "viewer-remote"
STAMP = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC")   # when a report was rendered


@pytest.fixture(scope="module")
def copies(tmp_path_factory, s3_endpoint):
    """(local logdir, its s3:// URL, storage_options, environment for a subprocess reading it)."""
    import boto3
    from tfevents.summaries import SummaryWriter
    root = tmp_path_factory.mktemp("remote") / "logs"
    rng = np.random.default_rng(5)
    for k, run in enumerate(("train", "eval/seed-1")):
        with SummaryWriter(str(root / run)) as w:
            for step in range(0, 300, 3):
                w.add_scalar("loss", float(np.exp(-step / 80) + k + rng.normal(0, 0.05)), step)
                w.add_scalar("acc", float(1 - np.exp(-step / 60)), step)
            w.add_histogram("weights", rng.normal(size=500), 299)
            w.add_text("notes", "run **%s**" % run, 0)
    s3 = boto3.client("s3", endpoint_url=s3_endpoint, aws_access_key_id="testing",
                      aws_secret_access_key="testing", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    for directory, _, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            s3.upload_file(path, BUCKET, "logs/" + os.path.relpath(path, root))
    env = dict(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1",
               AWS_ENDPOINT_URL=s3_endpoint)
    opts = {"key": "testing", "secret": "testing",
            "client_kwargs": {"endpoint_url": s3_endpoint, "region_name": "us-east-1"}}
    return str(root), "s3://%s/logs" % BUCKET, opts, env


@pytest.fixture
def s3_env(copies, monkeypatch):
    for key, value in copies[3].items():
        monkeypatch.setenv(key, value)
    import fsspec
    fsspec.filesystem("s3").clear_instance_cache()


def _pixels(path):
    from PIL import Image
    return np.asarray(Image.open(path).convert("RGB"))


def test_plot_of_an_s3_logdir_equals_the_local_one(copies, s3_env, tmp_path):
    from tfevents.viewer.cli import main
    local, url, _, _ = copies
    assert main(["plot", local, "-o", str(tmp_path / "local.png"), "--x", "relative"]) == 0
    assert main(["plot", url, "-o", str(tmp_path / "s3.png"), "--x", "relative"]) == 0
    a, b = _pixels(tmp_path / "local.png"), _pixels(tmp_path / "s3.png")
    assert a.shape == b.shape and (a == b).all()


@pytest.mark.parametrize("static", [False, True], ids=["interactive", "static"])
def test_report_of_an_s3_logdir_equals_the_local_one(copies, s3_env, tmp_path, static):
    from tfevents.viewer.cli import main
    local, url, _, _ = copies
    pages = []
    for name, source in (("local", local), ("s3", url)):
        out = str(tmp_path / (name + ".html"))
        assert main(["report", source, "-o", out, "--title", "runs"] + (["--static"] if static else [])) == 0
        pages.append(STAMP.sub("", open(out, encoding="utf-8").read()))
    assert pages[0] == pages[1]
    assert "seed-1" in pages[0] and ("weights" in pages[0])


def test_show_of_an_s3_logdir_equals_the_local_one(copies):
    from tfevents.viewer import report_view
    local, url, opts, _ = copies
    a = report_view(local, title="runs", tags="loss|acc").page
    b = report_view(url, title="runs", tags="loss|acc", storage_options=opts).page
    assert STAMP.sub("", a) == STAMP.sub("", b)


def test_plot_and_report_say_what_is_wrong_with_a_remote_logdir(copies, s3_env, tmp_path, capsys):
    from tfevents.viewer.cli import main
    _, url, _, _ = copies
    assert main(["report", url + "-missing", "-o", str(tmp_path / "r.html")]) == 2
    assert "no such logdir: %s-missing" % url in capsys.readouterr().err
    assert main(["plot", url, "-o", str(tmp_path / "p.png"), "--watch"]) == 2
    assert "--watch follows a local directory" in capsys.readouterr().err


def test_watch_of_an_s3_logdir_shows_the_local_screen(copies):
    local, url, _, env = copies
    screens = []
    for source in (local, url):
        term = Terminal(80, 24, env=env)
        try:
            term.keys("%s %s -m tfevents.viewer.cli watch %s --interval 1; echo EXIT=$?"
                      % (" ".join("%s=%s" % kv for kv in env.items()), sys.executable, source), "Enter")
            screen = term.wait_for(lambda s: _row(s, "train") and _row(s, "eval/seed-1") and "pass 2" in s,
                                   what="both runs' rows")
            term.keys("q")
            term.wait_for(lambda s: "EXIT=0" in s, timeout=10, what="EXIT=0")
        finally:
            term.close()
        screens.append([line for line in screen.splitlines() if "pass " not in line])
    assert screens[0] == screens[1]


def test_an_upper_case_scheme_reads_as_the_lower_case_one(copies, s3_env, tmp_path, capsys):
    """``S3://`` on the command line (inspect, plot) reads what ``s3://`` reads (fsspec knows lower case only: it
    said 'Protocol not known')."""
    from tfevents.viewer.cli import main
    upper = "S3://" + copies[1][len("s3://"):]
    assert main(["inspect", upper]) == 0
    listed = capsys.readouterr().out
    assert main(["inspect", copies[1]]) == 0
    assert listed.replace(upper, copies[1]) == capsys.readouterr().out and "loss" in listed
    assert main(["plot", upper, "-o", str(tmp_path / "upper.png")]) == 0 and (tmp_path / "upper.png").stat().st_size
