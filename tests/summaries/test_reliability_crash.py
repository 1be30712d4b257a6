"""Crash safety: processes SIGKILLed at random moments while they log or save checkpoints.

* A child logs scalars and large text events, flushing every few events and reporting (in a
  progress file) how many events it had added when each ``flush()`` returned. It is SIGKILLed
  after a random delay. Every event added before the last completed flush must read back; the
  file must hold an exact prefix of what was logged (in order, nothing duplicated), be valid up
  to its last complete record, and a torn tail must be reported as *truncation* (by
  ``record.iter_records``, ``summary_iterator`` and ``load_logdir`` on both the C and the
  pure-Python path), never as corruption.
* A child saves a checkpoint over and over (``Saver(max_to_keep=1)``) and is SIGKILLed mid-save:
  ``latest_checkpoint`` must always name a checkpoint that restores, holding the last completed
  save or the one in flight.

Children are forked from a multiprocessing forkserver that has tfevents imported (fast: no
interpreter start per iteration). Iterations: ``TFEVENTS_SOAK=1`` multiplies them by 25
(default 40 writer kills and 12 saver kills, about 15 s; the soak run takes several minutes).
"""
import multiprocessing
import os
import random
import signal
import time

import numpy as np
import pytest

import _reliability_child as child
from tfevents.summaries import record
from tfevents.summaries.reader.scan import have_fast_path
from tfevents.summaries.iterator import summary_iterator
from tfevents.summaries.reader import load_logdir

SOAK = os.environ.get("TFEVENTS_SOAK", "") not in ("", "0")
WRITER_KILLS = 40 * (25 if SOAK else 1)
SAVER_KILLS = 12 * (25 if SOAK else 1)
STATS = {}   # figures for the report (printed with -s)


@pytest.fixture(scope="module")
def forkserver():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["_reliability_child", "tfevents.summaries.writer.summary_writer", "tfevents.summaries.builders",
                                "tfevents.core"])
    return ctx


def _run_and_kill(ctx, target, args, progress, min_reports, delay):
    """Start ``target(*args)``; once it has reported ``min_reports`` times, wait ``delay`` s and SIGKILL it."""
    proc = ctx.Process(target=target, args=args, daemon=True)
    proc.start()
    deadline = time.monotonic() + 60
    while _count_lines(progress) < min_reports:
        assert proc.is_alive(), "child died on its own (exit code %s)" % proc.exitcode
        assert time.monotonic() < deadline, "child made no progress"
        time.sleep(0.002)
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(30)
    assert proc.exitcode == -signal.SIGKILL


def _count_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def _last_report(path):
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    assert lines[-1] == b""   # every report is a whole line
    return int(lines[-2])


def _read_prefix(path):
    """(events, end of the last complete record, TruncatedRecordError or None); corruption fails the test."""
    from tfevents.proto import event_pb2

    events, end, torn = [], 0, None
    try:
        for offset, payload in record.iter_records(path):
            assert offset == end
            events.append(event_pb2.Event.FromString(payload))
            end = offset + record.HEADER_SIZE + len(payload) + record.FOOTER_SIZE
    except record.TruncatedRecordError as err:
        torn = err
    return events, end, torn


def test_writer_killed_at_random_moments_loses_nothing_flushed(forkserver, tmp_path):
    rng = random.Random(1234)
    verified = torn_tails = 0
    for i in range(WRITER_KILLS):
        logdir, progress = str(tmp_path / ("run%d" % i)), str(tmp_path / ("progress%d" % i))
        seed = rng.randrange(1 << 30)
        _run_and_kill(forkserver, child.log_until_killed, (logdir, progress, seed), progress,
                      min_reports=rng.choice([1, 1, 2, 5]), delay=rng.uniform(0, 0.08))
        flushed = _last_report(progress)
        (path,) = [os.path.join(logdir, n) for n in os.listdir(logdir)]
        size = os.path.getsize(path)

        events, end, torn = _read_prefix(path)
        assert events[0].file_version == "brain.Event:2"
        got = [(e.summary.value[0].tag, e.step) for e in events[1:]]
        assert len(got) >= flushed, "%s: %d events flushed, %d read back" % (path, flushed, len(got))
        assert got == child.expected_events(len(got), seed)      # an exact prefix: in order, no duplicates
        for e in events[1:]:
            v = e.summary.value[0]
            if v.tag == "loss":
                assert v.simple_value == np.float32(child.scalar_value(e.step))
            else:
                assert v.tensor.string_val[0] == child.text_payload(e.step, seed).encode()
        if torn is None:
            assert end == size
        else:  # the tail is torn: reported as truncation at the end of the last complete record
            torn_tails += 1
            assert torn.offset == end < size and torn.path == path

        # summary_iterator: the same events, then the same truncation
        it_events = []
        if torn is None:
            it_events = list(summary_iterator(path))
        else:
            with pytest.raises(record.TruncatedRecordError) as info:
                for e in summary_iterator(path):
                    it_events.append(e)
            assert info.value.offset == end
        assert len(it_events) == len(events)

        # the reader (each path): no corruption, only the torn tail as truncation
        for fast in ([True, False] if have_fast_path() else [False]):
            from tfevents.summaries.reader import scan as _reader_scan
            rows = _reader_scan.scan_file(path, on_error="skip", fast=fast)
            assert [(p.kind, p.offset) for p in rows.problems] == ([] if torn is None else [("truncated", end)])
        logdir_read = load_logdir(logdir, on_error="skip")
        loss_steps = [s for t, s in got if t == "loss"]
        assert list(logdir_read.scalars[(".", "loss")].step) == loss_steps
        assert {p.kind for p in logdir_read.problems} <= {"truncated"}
        verified += len(got)
    STATS["writer"] = dict(kills=WRITER_KILLS, events_verified=verified, torn_tails=torn_tails)
    print("\nwriter crash: %s" % STATS["writer"])


def _restore(prefix, size):
    from tfevents import core

    with core.Graph().as_default():
        w = core.Variable(np.zeros(size, np.float32), name="w")
        with core.Session() as sess:
            core.train.Saver().restore(sess, prefix)
            return sess.run(w)


def test_saver_killed_mid_save_leaves_a_restorable_checkpoint(forkserver, tmp_path):
    from tfevents import core

    rng = random.Random(99)
    size = 1 << 18    # 1 MB of float32 per checkpoint: a save takes long enough to be hit
    restored = []
    for i in range(SAVER_KILLS):
        ckpt_dir, progress = str(tmp_path / ("ckpt%d" % i)), str(tmp_path / ("progress%d" % i))
        os.makedirs(ckpt_dir)
        _run_and_kill(forkserver, child.save_until_killed, (ckpt_dir, progress, size), progress,
                      min_reports=rng.choice([1, 2, 3]), delay=rng.uniform(0, 0.05))
        done = _last_report(progress)
        latest = core.train.latest_checkpoint(ckpt_dir)
        assert latest is not None, "%s: no restorable checkpoint after %d completed saves: %s" % (
            ckpt_dir, done, sorted(os.listdir(ckpt_dir)))
        values = _restore(latest, size)
        k = int(values[0])
        assert (values == k).all()
        assert k in (done, done + 1), "restored step %d, last completed save %d" % (k, done)
        assert latest.endswith("model.ckpt-%d" % k)
        restored.append(k)
    STATS["saver"] = dict(kills=SAVER_KILLS, restored=len(restored))
    print("\nsaver crash: %s" % STATS["saver"])


KILL_AT_STATE_FILE = r"""
import os, sys
import numpy as np
from tfevents import core
ckpt_dir = sys.argv[1]
with core.Graph().as_default():
    w = core.Variable(np.zeros(10, np.float32), name="w")
    saver = core.train.Saver(max_to_keep=1)
    with core.Session() as sess:
        sess.run(core.global_variables_initializer())
        saver.save(sess, os.path.join(ckpt_dir, "model.ckpt"), global_step=1)
        sess.run(core.assign(w, np.full(10, 2.0, np.float32)))
        replace = os.replace
        def die_at_state_file(src, dst):   # the process dies just before the state file names step 2
            if os.path.basename(dst) == "checkpoint":
                os.kill(os.getpid(), 9)
            replace(src, dst)
        os.replace = die_at_state_file
        saver.save(sess, os.path.join(ckpt_dir, "model.ckpt"), global_step=2)
"""


def test_saver_killed_before_the_state_file_update_keeps_the_previous_checkpoint(tmp_path):
    import subprocess
    import sys

    from tfevents import core

    proc = subprocess.run([sys.executable, "-c", KILL_AT_STATE_FILE, str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    latest = core.train.latest_checkpoint(str(tmp_path))
    assert latest == str(tmp_path / "model.ckpt-1"), sorted(os.listdir(tmp_path))
    assert (_restore(latest, 10) == 0).all()
