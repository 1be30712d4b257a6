"""Concurrency: many threads on one writer, many processes in one logdir, writers inherited across fork().

* 8 threads x 10k ``add_scalar`` on one SummaryWriter (with ``flush()`` racing from another
  thread): every one of the 80k events is in the file exactly once, each record intact (both
  checksums) and each thread's points in its order.
* Processes started with fork and with spawn, each opening a writer in the same logdir within
  the same second: distinct files, every event of every process present.
* A writer created before ``fork()`` and used in the child (as event_file_writer.py documents):
  the child's events go to a file of its own and the parent's file holds exactly the parent's
  events, even when the fork lands while the parent's writer thread is busy writing.

``TFEVENTS_SOAK=1`` raises the counts (threads x events, processes, forks) for a longer run.
"""
import multiprocessing
import os
import re
import threading
import time

import numpy as np
import pytest

from _events import read_events
from tfevents.summaries import SummaryWriter

SOAK = os.environ.get("TFEVENTS_SOAK", "") not in ("", "0")
THREADS, PER_THREAD = 8, 10_000 * (10 if SOAK else 1)
PROCS_PER_METHOD = 4 * (4 if SOAK else 1)
FORKS = 12 * (10 if SOAK else 1)


def _scalars(path):
    return [(e.summary.value[0].tag, e.step, e.summary.value[0].simple_value)
            for e in read_events(path)]


def test_eight_threads_on_one_writer_lose_and_interleave_nothing(logdir):
    w = SummaryWriter(logdir, max_queue=64)
    start = threading.Barrier(THREADS + 1)
    stop_flushing = threading.Event()

    def log(k):
        start.wait()
        for i in range(PER_THREAD):
            w.add_scalar("thread%d" % k, float(i % 1000), i)

    def flusher():
        while not stop_flushing.is_set():
            w.flush()
            time.sleep(0.001)

    threads = [threading.Thread(target=log, args=(k,)) for k in range(THREADS)]
    flushing = threading.Thread(target=flusher)
    for t in threads:
        t.start()
    flushing.start()
    start.wait()
    for t in threads:
        t.join()
    stop_flushing.set()
    flushing.join()
    w.close()
    (path,) = [os.path.join(logdir, n) for n in os.listdir(logdir)]
    rows = _scalars(path)
    assert len(rows) == THREADS * PER_THREAD
    for k in range(THREADS):
        mine = [(step, value) for tag, step, value in rows if tag == "thread%d" % k]
        assert [s for s, _ in mine] == list(range(PER_THREAD))        # all there, once, in order
        assert [v for _, v in mine] == [float(i % 1000) for i in range(PER_THREAD)]


def _process_body(logdir, ready, go, start_at, index, n):
    """Once every process is up, open a writer at ``start_at`` (all in one second), log n scalars, close."""
    ready.wait()
    go.wait()
    time.sleep(max(0.0, start_at.value - time.time()))
    w = SummaryWriter(logdir, max_queue=10)
    for i in range(n):
        w.add_scalar("proc%d" % index, float(i), i)
    w.close()


def test_processes_started_by_fork_and_spawn_in_the_same_second_write_distinct_complete_files(logdir):
    n = 2000
    methods = [m for m in ("fork", "spawn") if m in multiprocessing.get_all_start_methods()]
    procs = []
    sync = multiprocessing.get_context("spawn")      # its primitives work in fork children too
    parties = len(methods) * PROCS_PER_METHOD + 1
    ready, go, start_at = sync.Barrier(parties, timeout=120), sync.Barrier(parties, timeout=120), sync.Value("d")
    for m, method in enumerate(methods):
        ctx = multiprocessing.get_context(method)
        for j in range(PROCS_PER_METHOD):
            p = ctx.Process(target=_process_body, args=(logdir, ready, go, start_at, m * 100 + j, n))
            p.start()
            procs.append((m * 100 + j, p))
    ready.wait()                                     # every interpreter is up: start at the next whole second
    start_at.value = int(time.time()) + 1.05
    go.wait()
    for _, p in procs:
        p.join(120)
        assert p.exitcode == 0
    files = sorted(os.listdir(logdir))
    assert len(files) == len(procs) == len(set(files))
    seconds = {re.match(r"events\.out\.tfevents\.(\d+)\.", f).group(1) for f in files}
    assert len(seconds) == 1, "the processes did not open their writers in one second: %s" % files
    by_tag = {}
    for f in files:
        rows = _scalars(os.path.join(logdir, f))
        tags = {tag for tag, _, _ in rows}
        assert len(tags) == 1      # one process per file
        by_tag[tags.pop()] = [step for _, step, _ in rows]
    assert by_tag == {"proc%d" % i: list(range(n)) for i, _ in procs}


def _log_in_inherited_writer(w, tag, n):
    for i in range(n):
        w.add_scalar(tag, float(i), i)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_writer_inherited_across_fork_never_touches_the_parents_file(logdir):
    """Fork repeatedly while a parent thread keeps the writer thread busy; each child logs into the
    inherited writer (some close it, some flush, some only exit) and the parent's file stays exact."""
    w = SummaryWriter(logdir, max_queue=1, flush_secs=0.01)
    parent_file = w.file_writer.get_filename()
    stop = threading.Event()
    parent_steps = []

    def parent_logging():
        i = 0
        while not stop.is_set():
            w.add_scalar("parent", float(i), i)
            parent_steps.append(i)
            i += 1

    t = threading.Thread(target=parent_logging)
    t.start()
    children = {}
    try:
        for k in range(FORKS):
            time.sleep(0.005)
            pid = os.fork()
            if pid == 0:   # the child: log, then close, or flush, or leave it to the exit handler
                code = 1
                try:
                    _log_in_inherited_writer(w, "child%d" % k, 50)
                    if k % 3 == 0:
                        w.close()
                    elif k % 3 == 1:
                        w.flush()
                    else:
                        from tfevents.summaries.writer.event_file_writer import _close_all_at_exit
                        _close_all_at_exit()     # what atexit runs (os._exit below skips pytest's)
                    code = 0
                except BaseException:  # noqa: BLE001 - reported through the exit code
                    import traceback
                    traceback.print_exc()
                finally:
                    os._exit(code)
            children[pid] = k
    finally:
        stop.set()
        t.join()
    for pid, k in children.items():
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "child %d failed" % k
    w.close()

    rows = _scalars(parent_file)
    assert [(tag, step) for tag, step, _ in rows] == [("parent", i) for i in parent_steps]
    others = sorted(set(os.listdir(logdir)) - {os.path.basename(parent_file)})
    found = {}
    for name in others:
        pid = int(name.split(".")[-2])   # events.out.tfevents.<secs>.<host>.<pid>.<n>
        assert pid in children, "a file not written by a child: %s" % name
        rows = _scalars(os.path.join(logdir, name))
        found[children[pid]] = rows
    assert sorted(found) == list(range(FORKS))
    for k, rows in found.items():
        assert rows == [("child%d" % k, i, float(i)) for i in range(50)]


def test_fork_context_child_using_the_inherited_writer(logdir):
    """multiprocessing's fork start method: the child's events land in its own file, complete."""
    ctx = multiprocessing.get_context("fork")
    w = SummaryWriter(logdir, max_queue=1000)
    parent_file = w.file_writer.get_filename()
    for i in range(100):
        w.add_scalar("parent", float(i), i)          # still queued at the fork
    p = ctx.Process(target=_child_writes_and_closes, args=(w,))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    w.add_scalar("parent", 100.0, 100)
    w.close()
    files = {f: _scalars(os.path.join(logdir, f)) for f in os.listdir(logdir)}
    parent = files.pop(os.path.basename(parent_file))
    assert [s for _, s, _ in parent] == list(range(101))
    (child_rows,) = files.values()
    assert child_rows == [("child", i, np.float32(i * 0.5)) for i in range(100)]


def _child_writes_and_closes(w):
    for i in range(100):
        w.add_scalar("child", i * 0.5, i)
    w.close()
