"""Directory walking that cannot hang: FIFOs, sockets and dangling links named like event files are skipped
and reported, symlink loops are walked once; shared by load_logdir, list_runs and the CLI."""
import os
import socket
import subprocess
import sys
import warnings

import pytest

from tfevents.summaries import SummaryWriter, load_logdir
from tfevents.summaries.reader import list_runs
from tfevents.summaries.reader.walk import discover


@pytest.fixture
def hostile_logdir(tmp_path):
    """A run with real scalars beside a FIFO, a Unix socket and a dangling symlink named like event files,
    a symlink loop, and a second symlink to the run."""
    run = tmp_path / "run"
    with SummaryWriter(str(run)) as w:
        for step in range(5):
            w.add_scalar("loss", 1.0 / (step + 1), step)
    os.mkfifo(str(run / "events.out.tfevents.1.fifo"))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(run / "events.out.tfevents.2.sock"))
    os.symlink(str(tmp_path / "missing"), str(run / "events.out.tfevents.3.dangling"))
    os.symlink(str(tmp_path), str(run / "loop"))            # run/loop -> logdir: a loop
    os.symlink(str(run), str(tmp_path / "alias"))            # the same run directory, linked once more
    yield tmp_path
    sock.close()


def test_walk_skips_special_files_and_walks_each_directory_once(hostile_logdir):
    found = discover(str(hostile_logdir))
    assert [run for run, _ in found.runs] in (["alias"], ["run"])  # one directory, however it is reached
    (_, files), = found.runs
    (path,), = [files]
    assert os.path.isfile(path) and os.path.getsize(path) > 0    # the writer's file, nothing else
    kinds = sorted((os.path.basename(p.path).split(".")[-1], p.kind) for p in found.problems)
    assert kinds == [("dangling", "unreadable"), ("fifo", "skipped"), ("sock", "skipped")]
    assert "FIFO" in next(str(p) for p in found.problems if p.path.endswith("fifo"))


def test_load_logdir_reads_the_run_and_reports_what_it_skipped(hostile_logdir):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        logdir = load_logdir(str(hostile_logdir))
    (key, series), = logdir.scalars.items()
    assert key[1] == "loss" and list(series.step) == [0, 1, 2, 3, 4]
    assert {p.kind for p in logdir.problems} == {"skipped", "unreadable"}
    assert sum("FIFO" in str(w.message) for w in caught) == 1
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert len(list_runs(str(hostile_logdir))[1]) == 1


def test_a_fifo_given_directly_is_a_clear_error(hostile_logdir):
    with pytest.raises(ValueError, match="FIFO"):
        load_logdir(str(hostile_logdir / "run" / "events.out.tfevents.1.fifo"))


def test_inspect_does_not_block_on_a_fifo(hostile_logdir):
    """`tfevents inspect` used to block forever opening a FIFO named events.out.tfevents.*."""
    out = subprocess.run([sys.executable, "-m", "tfevents.viewer.cli", "inspect", str(hostile_logdir)],
                         capture_output=True, text=True, timeout=60)
    assert "loss" in out.stdout
    assert "FIFO" in out.stderr
