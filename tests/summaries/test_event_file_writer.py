"""EventFileWriter: file naming, queueing (max_queue / flush_secs), flush, close, errors, exit."""
import errno
import glob
import os
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

from tfevents.proto import event_pb2
from tfevents.summaries.writer import event_file_writer as efw
from tfevents.summaries import record
from tfevents.summaries.writer.event_file_writer import EventFileWriter


def _event(step):
    return event_pb2.Event(wall_time=1.5, step=step, file_version="x%d" % step)


def _steps(path):
    """Steps of the events after the file_version event."""
    events = [event_pb2.Event.FromString(p) for _, p in record.iter_records(path)]
    assert events[0].file_version == "brain.Event:2"
    return [e.step for e in events[1:]]


def _wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def test_file_is_created_with_name_and_file_version_event(logdir):
    before = time.time()
    w = EventFileWriter(logdir, filename_suffix=".v2")
    path = w.get_filename()
    assert os.path.dirname(path) == logdir and w.get_logdir() == logdir
    m = re.fullmatch(r"events\.out\.tfevents\.(\d{10})\.(.+)\.(\d+)\.(\d+)\.v2", os.path.basename(path))
    assert m, path
    assert int(before) <= int(m.group(1)) <= time.time()
    assert m.group(2) == socket.gethostname() and int(m.group(3)) == os.getpid()
    # the file and its first event exist before any flush
    (offset, payload), = list(record.iter_records(path))
    first = event_pb2.Event.FromString(payload)
    assert first.file_version == "brain.Event:2" and before <= first.wall_time <= time.time()
    w.close()


def test_logdir_is_created(tmp_path):
    w = EventFileWriter(str(tmp_path / "a" / "b"))
    assert os.path.isfile(w.get_filename())
    w.close()


def test_flush_returns_with_every_event_on_disk(logdir):
    w = EventFileWriter(logdir, max_queue=10_000, flush_secs=1000)
    for step in range(500):
        w.add_event(_event(step))
    assert _steps(w.get_filename()) == []          # queued, not yet written
    w.flush()
    assert _steps(w.get_filename()) == list(range(500))
    w.add_serialized_events([_event(7).SerializeToString(), _event(8).SerializeToString()])
    w.flush()
    assert _steps(w.get_filename())[-2:] == [7, 8]
    w.close()


def test_max_queue_pending_events_are_written_without_flush(logdir):
    w = EventFileWriter(logdir, max_queue=5, flush_secs=1000)
    for step in range(4):
        w.add_event(_event(step))
    time.sleep(0.3)
    assert _steps(w.get_filename()) == []           # below max_queue: still in memory
    w.add_event(_event(4))                          # the 5th pending event triggers the write
    assert _wait_for(lambda: _steps(w.get_filename()) == [0, 1, 2, 3, 4])
    w.close()


def test_max_queue_bursts_in_quick_succession_are_all_written(logdir):
    # writes triggered within 0.1 s of the previous one are left to the thread's follow-up look
    w = EventFileWriter(logdir, max_queue=3, flush_secs=1000)
    for step in range(15):
        w.add_event(_event(step))
        if step % 3 == 2:
            time.sleep(0.01)
    assert _wait_for(lambda: _steps(w.get_filename()) == list(range(15)))
    w.close()


def test_max_queue_size_is_tensorboards_name_for_max_queue(logdir):
    w = EventFileWriter(logdir, max_queue_size=2, flush_secs=1000)
    w.add_event(_event(0))
    w.add_event(_event(1))
    assert _wait_for(lambda: _steps(w.get_filename()) == [0, 1])
    w.close()


def test_flush_secs_writes_pending_events(logdir):
    w = EventFileWriter(logdir, max_queue=1000, flush_secs=0.2)
    w.add_event(_event(1))
    t0 = time.monotonic()
    assert _wait_for(lambda: _steps(w.get_filename()) == [1])
    assert time.monotonic() - t0 < 3
    w.close()


def test_close_is_idempotent_and_adding_after_close_raises(logdir):
    w = EventFileWriter(logdir, max_queue=1000)
    w.add_event(_event(3))
    w.close()
    assert w.closed
    assert _steps(w.get_filename()) == [3]          # close wrote the queue
    w.close()
    w.flush()                                       # no-op, as TF1/torch
    with pytest.raises(ValueError, match="closed"):
        w.add_event(_event(4))
    with pytest.raises(ValueError, match="closed"):
        w.add_serialized_event(b"")
    assert _steps(w.get_filename()) == [3]


def test_reopen_starts_a_new_file(logdir):
    w = EventFileWriter(logdir)
    first = w.get_filename()
    w.reopen()                                      # no-op while open
    assert w.get_filename() == first
    w.close()
    w.reopen()
    w.add_event(_event(9))
    w.close()
    assert w.get_filename() != first
    assert _steps(first) == [] and _steps(w.get_filename()) == [9]


def test_two_writers_in_the_same_second_get_distinct_files(logdir, monkeypatch):
    monkeypatch.setattr(efw.time, "time", lambda: 1700000000.25)
    writers = [EventFileWriter(logdir) for _ in range(3)]
    names = [os.path.basename(w.get_filename()) for w in writers]
    assert len(set(names)) == 3
    assert all(n.startswith("events.out.tfevents.1700000000.") for n in names)
    for i, w in enumerate(writers):
        w.add_event(_event(i))
        w.close()
    assert [_steps(w.get_filename()) for w in writers] == [[0], [1], [2]]


def test_two_processes_in_the_same_second_get_distinct_files(logdir):
    code = ("import sys; from tfevents.summaries import EventFileWriter\n"
            "w = EventFileWriter(sys.argv[1]); print(w.get_filename()); w.close()")
    procs = [subprocess.Popen([sys.executable, "-c", code, logdir], stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    names = [p.communicate()[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len(set(names)) == 2 and sorted(glob.glob(os.path.join(logdir, "*"))) == sorted(names)


def _redirect_fd(fd, target, flags=os.O_WRONLY):
    """Point the writer's descriptor at another file (a real disk-full error, without mocks)."""
    other = os.open(target, flags)
    os.dup2(other, fd)
    os.close(other)


def _add_until_error(w, steps):
    """Add events until the background error surfaces; returns the steps accepted (the call that hears of the
    error keeps its event too)."""
    accepted = []
    for step in steps:
        accepted.append(step)
        try:
            w.add_event(_event(step))
        except OSError as e:
            return accepted, e
        time.sleep(0.02)
    pytest.fail("the background I/O error never reached the caller")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_background_io_error_surfaces_and_nothing_is_lost_once_space_returns(logdir):
    w = EventFileWriter(logdir, max_queue=1, flush_secs=1000)
    path = w.get_filename()
    _redirect_fd(w._sink._fd, "/dev/full")                     # the disk is full from now on
    accepted, error = _add_until_error(w, range(100))
    assert error.errno == errno.ENOSPC and error.filename == path
    assert "No space left" in str(error)
    # the error was raised once; the writer keeps the unwritten events and goes on queueing
    w.add_event(_event(100))
    _redirect_fd(w._sink._fd, path, os.O_WRONLY | os.O_APPEND)  # space is back
    w.close()
    assert _steps(path) == accepted + [100]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_flush_and_close_raise_when_the_disk_stays_full(logdir):
    w = EventFileWriter(logdir, max_queue=1000)
    _redirect_fd(w._sink._fd, "/dev/full")
    w.add_event(_event(1))
    with pytest.raises(OSError) as info:
        w.flush()
    assert info.value.errno == errno.ENOSPC
    with pytest.raises(OSError):
        w.close()                                   # data would be lost: say so
    assert w.closed
    w.close()                                       # still idempotent
    with pytest.raises(ValueError, match="closed"):
        w.add_event(_event(2))


def test_removed_directory_error_surfaces_and_close_still_works(tmp_path):
    logdir = str(tmp_path / "run")
    w = EventFileWriter(logdir, max_queue=1, flush_secs=1000)
    os.unlink(w.get_filename())
    os.rmdir(logdir)
    open(logdir, "w").close()                       # the run directory cannot be made again
    accepted, error = _add_until_error(w, range(100))
    assert isinstance(error, OSError) and logdir in str(error)
    with pytest.raises(OSError):
        w.close()
    assert w.closed


def test_deleted_file_is_replaced_by_a_new_one(logdir):
    # as TensorFlow's EventsWriter: a deleted file is not written into the void
    w = EventFileWriter(logdir, max_queue=1000)
    first = w.get_filename()
    w.add_event(_event(1))
    w.flush()
    os.unlink(first)
    w.add_event(_event(2))
    w.flush()
    assert w.get_filename() != first and _steps(w.get_filename()) == [2]
    w.close()


def test_one_thread_and_no_descriptors_for_many_unheld_writers(logdir):
    fds_before = len(os.listdir("/proc/self/fd"))
    writers = [EventFileWriter(os.path.join(logdir, "run%d" % i), keep_open=False) for i in range(30)]
    for i, w in enumerate(writers):
        w.add_event(_event(i))
    assert len(os.listdir("/proc/self/fd")) <= fds_before + 1
    assert sum(t.name == "tfevents-writer" for t in threading.enumerate()) == 1
    for w in writers:
        w.close()
    assert [_steps(w.get_filename()) for w in writers] == [[i] for i in range(30)]


def test_pending_events_are_written_at_interpreter_exit(logdir):
    code = ("import sys\n"
            "from tfevents.summaries import EventFileWriter\n"
            "from tfevents.proto import event_pb2\n"
            "w = EventFileWriter(sys.argv[1], max_queue=10**6, flush_secs=10**6)\n"
            "for i in range(1000): w.add_event(event_pb2.Event(step=i))\n"
            "print(w.get_filename())\n")       # exits without close() or flush()
    out = subprocess.run([sys.executable, "-c", code, logdir], check=True, capture_output=True, text=True)
    assert _steps(out.stdout.strip()) == list(range(1000))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_neither_duplicates_nor_loses_events(logdir):
    code = ("import os, sys\n"
            "from tfevents.summaries import EventFileWriter\n"
            "from tfevents.proto import event_pb2\n"
            "w = EventFileWriter(sys.argv[1], max_queue=10**6, flush_secs=10**6)\n"
            "for i in range(5): w.add_event(event_pb2.Event(step=i))\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    w.add_event(event_pb2.Event(step=100))\n"
            "    sys.exit(0)\n"                      # the child's exit handlers run
            "os.waitpid(pid, 0)\n"
            "w.add_event(event_pb2.Event(step=5))\n"
            "w.close()\n"
            "print(w.get_filename(), pid)\n")
    out = subprocess.run([sys.executable, "-c", code, logdir], check=True, capture_output=True, text=True)
    parent_file, child_pid = out.stdout.split()
    files = sorted(glob.glob(os.path.join(logdir, "*")))
    assert _steps(parent_file) == [0, 1, 2, 3, 4, 5]
    (child_file,) = [f for f in files if f != parent_file]
    assert ".%s." % child_pid in os.path.basename(child_file) and _steps(child_file) == [100]


def test_bad_arguments(logdir):
    with pytest.raises(ValueError, match="max_queue"):
        EventFileWriter(logdir, max_queue=0)
    with pytest.raises(ValueError, match="flush_secs"):
        EventFileWriter(logdir, flush_secs=0)
    assert os.listdir(logdir) == []


def test_events_from_several_threads_all_arrive(logdir):
    w = EventFileWriter(logdir, max_queue=7)

    def work(base):
        for i in range(2000):
            w.add_event(_event(base + i))

    threads = [threading.Thread(target=work, args=(k * 10_000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    w.close()
    steps = _steps(w.get_filename())
    assert sorted(steps) == sorted(k * 10_000 + i for k in range(4) for i in range(2000))
    for k in range(4):   # each thread's events stay in its order
        mine = [s for s in steps if k * 10_000 <= s < (k + 1) * 10_000]
        assert mine == sorted(mine)
