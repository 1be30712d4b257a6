"""Child-process bodies for the reliability tests (run in a forkserver child or ``python -m``-style script).

Each body works until it is killed. After each completed durability point it appends one line
``<count>\\n`` to a progress file with a single ``os.write`` on an O_APPEND descriptor (a small
append is atomic, and it survives the SIGKILL), so the parent knows what must be on disk.

The logged sequence is deterministic (:func:`expected_events`), so the parent can check that the
event file holds an exact prefix of it.
"""
from __future__ import annotations

import os
import random

TEXT_EVERY = 7          # a large text event after every 7th scalar
TEXT_TAG = "blob/text_summary"   # add_text("blob") writes this tag, as TensorFlow and tensorboardX do


def text_payload(step: int, seed: int) -> str:
    """A large text value (tens to hundreds of KB): writes of many pages, so a kill can tear them."""
    size = 1000 * (20 + (step * 7919 + seed) % 300)
    return ("step %d " % step) * (size // 10)


def expected_events(n: int, seed: int):
    """The first ``n`` (tag, step) pairs :func:`log_until_killed` adds, in order."""
    out = []
    step = 0
    while len(out) < n:
        out.append(("loss", step))
        if step % TEXT_EVERY == 0 and len(out) < n:
            out.append((TEXT_TAG, step))
        step += 1
    return out


def scalar_value(step: int) -> float:
    return 1.0 / (step + 1)


def _progress(path: str):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    return lambda n: os.write(fd, b"%d\n" % n)


def log_until_killed(logdir: str, progress_path: str, seed: int) -> None:
    """Log scalars and large texts forever; flush every few events and report the count added."""
    from tfevents.summaries import SummaryWriter

    rng = random.Random(seed)
    report = _progress(progress_path)
    w = SummaryWriter(logdir, max_queue=rng.choice([1, 5, 50, 1000]), flush_secs=rng.choice([0.01, 0.5, 120]))
    flush_every = rng.choice([1, 3, 10, 40])
    added = 0
    step = 0
    while True:
        w.add_scalar("loss", scalar_value(step), step)
        added += 1
        if step % TEXT_EVERY == 0:
            w.add_text("blob", text_payload(step, seed), step)
            added += 1
        step += 1
        if step % flush_every == 0:
            w.flush()
            report(added)


def save_until_killed(ckpt_dir: str, progress_path: str, size: int) -> None:
    """Save a ``size``-float variable filled with k at global step k, forever (max_to_keep=1)."""
    import numpy as np

    from tfevents import core

    report = _progress(progress_path)
    with core.Graph().as_default():
        w = core.Variable(np.zeros(size, np.float32), name="w")
        value = core.placeholder(core.float32, [size])
        assign = core.assign(w, value)
        saver = core.train.Saver(max_to_keep=1)
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            k = 0
            while True:
                k += 1
                sess.run(assign, {value: np.full(size, k, np.float32)})
                saver.save(sess, os.path.join(ckpt_dir, "model.ckpt"), global_step=k)
                report(k)
