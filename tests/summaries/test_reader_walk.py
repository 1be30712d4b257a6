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


def test_a_walk_with_a_cache_lists_again_only_the_folders_that_changed(hostile_logdir, monkeypatch):
    """The live loader's walk (``discover(cache=)``) equals a fresh walk after every change: a new run, a new file
    in a run, a removed run; a folder is listed again only when its mtime changed, or changed too recently to be
    trusted (a coarse mtime may hide a change made in the same tick)."""
    from tfevents.summaries.reader import walk
    listed = []
    real = walk._list_folder

    def counting(directory, key):
        listed.append(os.path.relpath(directory, hostile_logdir))
        return real(directory, key)
    monkeypatch.setattr(walk, "_list_folder", counting)

    def same_as_fresh(cache):
        """The cached walk (``listed``: the folders it listed) checked against a fresh one."""
        fresh = discover(str(hostile_logdir), listing=True)
        listed.clear()
        cached = discover(str(hostile_logdir), listing=True, cache=cache)
        assert (cached.runs, cached.listing) == (fresh.runs, fresh.listing)
        assert [(p.path, p.kind) for p in cached.problems] == [(p.path, p.kind) for p in fresh.problems]
        return cached

    cache = {}
    monkeypatch.setattr(walk, "RACY_SECONDS", 0.0)
    first = same_as_fresh(cache)
    assert [run for run, _ in first.runs] == ["run"] and first.problems   # (alias: the same folder, walked once)
    same_as_fresh(cache)
    assert listed == []                                       # nothing changed: no folder listed again
    with SummaryWriter(str(hostile_logdir / "new")) as w:     # a new run: the logdir's folder and the new one
        w.add_scalar("loss", 1.0, 0)
    (hostile_logdir / "run" / "notes.txt").write_text("x")    # a new file in a run
    assert [run for run, _ in same_as_fresh(cache).runs] == ["new", "run"]
    assert sorted(listed) == [".", "new", "run"]              # the folders that changed, each once
    os.remove(hostile_logdir / "run" / "notes.txt")
    same_as_fresh(cache)
    # a change within the same mtime tick: with the mtime put back, only the racy rule lists the folder again
    monkeypatch.setattr(walk, "RACY_SECONDS", 3600.0)
    stat = os.stat(hostile_logdir / "new")
    (hostile_logdir / "new" / "notes.txt").write_text("x")
    os.utime(hostile_logdir / "new", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "notes.txt" in same_as_fresh(cache).listing["new"]
