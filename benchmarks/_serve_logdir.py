"""The logdirs benchmarks/serve.py serves: RUNS runs x TAGS scalar tags x STEPS steps, with or without histograms
and images.

Each run is one event file written by our SummaryWriter, as a training loop logs: at every step one Event per
scalar tag (``simple_value``); in the ``full`` shape also every 10th step two histograms and every 100th step one
16x16 image (the ``scalars`` shape has the scalars alone). Written by a pool of processes, once per shape and size
(the directory name carries both; a ``.complete`` marker says it is whole).
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np

HIST_EVERY, IMAGE_EVERY = 10, 100
SHAPES = ("scalars", "full")


def _write_run(args) -> int:
    root, index, tags, steps, shape = args
    from tfevents.summaries import SummaryWriter
    rng = np.random.RandomState(index)
    names = ["group%d/metric%02d" % (t % 5, t) for t in range(tags)]
    values = rng.standard_normal((steps, tags)).astype(np.float32).cumsum(axis=0) * 0.01
    with SummaryWriter(os.path.join(root, "run%03d" % index), max_queue=10000, flush_secs=600) as w:
        add = w.add_scalar
        for step in range(steps):
            row = values[step].tolist()
            for name, value in zip(names, row):
                add(name, value, step)
            if shape == "scalars":
                continue
            if step % HIST_EVERY == 0:
                w.add_histogram("weights/layer0", rng.standard_normal(1000) + step * 1e-3, step)
                w.add_histogram("weights/layer1", rng.standard_normal(1000) * (1 + step * 1e-4), step)
            if step % IMAGE_EVERY == 0:
                w.add_image("samples", rng.randint(0, 255, (3, 16, 16)).astype(np.uint8), step)
    return index


def make_logdir(base: str, runs: int, tags: int, steps: int, shape: str = "full", workers: int = 2) -> str:
    """The logdir of this shape (``SHAPES``) and size under ``base``, written now unless a complete one is there."""
    if shape not in SHAPES:
        raise ValueError("shape must be one of %s, got %r" % (SHAPES, shape))
    root = os.path.join(base, "serve_%druns_%dtags_%dsteps%s" % (runs, tags, steps, "" if shape == "full" else
                                                                  "_scalars"))
    marker = os.path.join(root, ".complete")
    if os.path.exists(marker):
        return root
    import shutil
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(_write_run, [(root, i, tags, steps, shape) for i in range(runs)]))
    open(marker, "w").close()
    return root
