"""Faults: a full disk, a file size limit and read-only places give the caller a clear OSError on its
next call, ``flush()`` or ``close()`` -- never a silent drop in the writer thread -- and the writer
can still be closed. What was flushed before the fault reads back; a torn tail is truncation.

The full disk is a real small tmpfs (``mount -t tmpfs -o size=...``, when this process may mount:
root in a container with CAP_SYS_ADMIN), else ``/dev/full`` behind the writer's descriptor. The file
size limit is RLIMIT_FSIZE in a subprocess (SIGXFSZ ignored, so write() fails with EFBIG). Read-only
is a read-only tmpfs, and a directory / file without write permission for a non-root subprocess.
"""
import contextlib
import errno
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from tfevents.proto import event_pb2
from tfevents.summaries import SummaryWriter, record
from conftest import REPO


@contextlib.contextmanager
def _tmpfs(path, options):
    os.makedirs(path, exist_ok=True)
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", path], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip("cannot mount a tmpfs here: %s" % res.stderr.strip())
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", path], capture_output=True)


def _read(path):
    """(events, TruncatedRecordError or None); corruption fails the test."""
    events = []
    try:
        for _, payload in record.iter_records(path):
            events.append(event_pb2.Event.FromString(payload))
    except record.TruncatedRecordError as err:
        return events, err
    return events, None


def _add_until_oserror(w, limit=100_000):
    """Log 2 KB texts until the caller hears of an I/O error; returns (steps flushed, steps added, error)."""
    flushed, added = [], []
    for step in range(limit):
        try:
            w.add_text("t", "x" * 2000, step)
            added.append(step)
            if step % 5 == 4:
                w.flush()
                flushed = list(added)
        except OSError as e:
            return flushed, added, e
    pytest.fail("no error after %d events" % limit)


def test_full_tmpfs_raises_on_the_next_call_and_the_writer_still_closes(tmp_path):
    with _tmpfs(str(tmp_path / "small"), "size=256k") as mnt:
        w = SummaryWriter(os.path.join(mnt, "run"), max_queue=3, flush_secs=0.05)
        path = w.file_writer.get_filename()
        flushed, added, error = _add_until_oserror(w)
        assert error.errno == errno.ENOSPC and error.filename == path
        assert "No space left" in str(error) and "kept for a retry" in str(error)
        with pytest.raises(OSError) as again:          # the disk is still full: flush says so too
            w.flush()
        assert again.value.errno == errno.ENOSPC
        with pytest.raises(OSError):
            w.close()                                   # events would be lost: close says so
        assert w.file_writer is None                    # closed (a later write would reopen, as the peers)
        w.close()                                       # and stays closed, quietly
        events, torn = _read(path)
        steps = [e.step for e in events[1:]]
        assert steps[:len(flushed)] == flushed and steps == added[:len(steps)]
        if torn is not None:
            assert torn.offset < os.path.getsize(path)


def test_disk_that_gets_space_back_loses_nothing(tmp_path):
    with _tmpfs(str(tmp_path / "small"), "size=512k") as mnt:
        filler = os.path.join(mnt, "filler")
        w = SummaryWriter(os.path.join(mnt, "run"), max_queue=2, flush_secs=0.05)
        with open(filler, "wb") as f:                   # another program fills the disk
            with contextlib.suppress(OSError):
                f.write(b"\0" * (1 << 20))
        path = w.file_writer.get_filename()
        _, added, error = _add_until_oserror(w)
        assert error.errno == errno.ENOSPC
        os.unlink(filler)                               # space comes back
        w.add_text("t", "after", 10**6)
        w.close()
        events, torn = _read(path)
        assert torn is None
        assert [e.step for e in events[1:]] == added + [10**6]


def test_read_only_mount_fails_at_construction_with_the_path(tmp_path):
    with _tmpfs(str(tmp_path / "ro"), "ro,size=64k") as mnt:
        logdir = os.path.join(mnt, "run")
        with pytest.raises(OSError) as info:
            SummaryWriter(logdir)
        assert info.value.errno == errno.EROFS and mnt in str(info.value)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_dev_full_error_reaches_add_scalar_flush_and_close(logdir):
    """The same without a mount: the file descriptor is pointed at /dev/full."""
    w = SummaryWriter(logdir, max_queue=1, flush_secs=0.01)
    w.add_scalar("a", 1.0, 0)
    w.flush()
    fd = w.file_writer._sink._fd
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, fd)
    os.close(full)
    deadline = time.monotonic() + 10
    with pytest.raises(OSError) as info:
        step = 1
        while time.monotonic() < deadline:   # the writer thread hits ENOSPC; a later add_scalar raises it
            w.add_scalar("a", 1.0, step)
            step += 1
            time.sleep(0.005)
    assert info.value.errno == errno.ENOSPC
    with pytest.raises(OSError):
        w.flush()
    with pytest.raises(OSError):
        w.close()
    assert w.file_writer is None


RLIMIT_CHILD = textwrap.dedent("""
    import json, os, resource, signal, sys, time
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # write() then fails with EFBIG instead of killing us
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
    from tfevents.summaries import SummaryWriter
    w = SummaryWriter(sys.argv[1], max_queue=4, flush_secs=0.01)
    out = {"path": w.file_writer.get_filename(), "flushed": [], "added": []}
    try:
        for step in range(100000):
            w.add_text("t", "y" * 1500, step)
            out["added"].append(step)
            if step % 3 == 2:
                w.flush()
                out["flushed"] = list(out["added"])
    except OSError as e:
        out["error"] = [e.errno, str(e)]
    for call in ("flush", "close"):
        try:
            getattr(w, call)()
            out[call] = "ok"
        except OSError as e:
            out[call] = [e.errno, str(e)]
    out["closed"] = w.file_writer is None
    # a second writer hits the limit in its background thread and is never called again:
    # the exit handler must say what was lost, not drop it silently
    w2 = SummaryWriter(sys.argv[1] + "2", max_queue=1, flush_secs=0.01)
    for step in range(100):
        w2.add_scalar("pad", 0.0, step)
    w2.add_text("t", "z" * 100000, 0)
    print(json.dumps(out), flush=True)
""")


def test_file_size_limit_in_a_subprocess_is_reported_not_dropped(tmp_path):
    logdir = str(tmp_path / "run")
    proc = subprocess.run([sys.executable, "-c", RLIMIT_CHILD, logdir], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["error"][0] == errno.EFBIG and out["path"] in out["error"][1]
    assert out["flush"][0] == errno.EFBIG and out["close"][0] == errno.EFBIG and out["closed"]
    events, torn = _read(out["path"])
    steps = [e.step for e in events[1:]]
    assert steps[:len(out["flushed"])] == out["flushed"] and steps == out["added"][:len(steps)]
    assert os.path.getsize(out["path"]) <= 64 * 1024
    assert "tfevents: could not write events at exit" in proc.stderr and "File too large" in proc.stderr


NOBODY_CHILD = textwrap.dedent("""
    import errno, json, os, socket, sys, time
    from tfevents.summaries import SummaryWriter
    from tfevents.summaries.writer import event_bytes as _event_bytes
    from tfevents.summaries.writer import event_file_writer as event_file_writer
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)    # root ignores permission bits: become nobody once everything is imported
    root = sys.argv[1]
    out = {}
    try:
        SummaryWriter(os.path.join(root, "readonly", "run"))
        out["construct"] = "ok"
    except OSError as e:
        out["construct"] = [e.errno, str(e)]
    # add_scalars sub-runs reopen their file for each write: a file made read-only mid-run
    w = SummaryWriter(os.path.join(root, "writable"), max_queue=1, flush_secs=0.01)
    w.add_scalars("m", {"a": 1.0}, 0)
    w.flush()
    sub = w._sub_writers[os.path.join(root, "writable", "m_a")].get_filename()
    os.chmod(sub, 0o444)
    out["error"] = None
    for step in range(1, 2000):
        try:
            w.add_scalars("m", {"a": float(step)}, step)
        except OSError as e:
            out["error"] = [e.errno, str(e)]
            break
        time.sleep(0.002)
    try:
        w.close()
        out["close"] = "ok"
    except OSError as e:
        out["close"] = [e.errno, str(e)]
    out["sub"] = sub
    print(json.dumps(out))
""")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user in a child")
def test_read_only_directory_and_file_for_a_non_root_process():
    import pathlib
    import shutil
    import tempfile

    root = pathlib.Path(tempfile.mkdtemp(prefix="tfevents-ro-"))   # pytest's tmp dirs are root-only
    try:
        (root / "readonly").mkdir()
        (root / "writable").mkdir()
        os.chmod(root, 0o755)
        os.chown(root / "writable", 65534, 65534)
        os.chmod(root / "readonly", 0o555)
        proc = subprocess.run([sys.executable, "-c", NOBODY_CHILD, str(root)], capture_output=True, text=True,
                              timeout=120, cwd=REPO)
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["construct"][0] == errno.EACCES and "readonly" in out["construct"][1]
        assert out["error"] is not None and out["error"][0] == errno.EACCES and out["sub"] in out["error"][1]
        assert out["close"] != "ok" and out["close"][0] == errno.EACCES
        events, torn = _read(out["sub"])      # what was written before stays intact
        assert torn is None and [e.step for e in events[1:]] == [0]
    finally:
        shutil.rmtree(root, ignore_errors=True)
