"""Cached synthetic logdirs of scalars for the benchmarks: ``runs`` runs × ``tags`` tags × ``steps`` steps of
random values, written once (in parallel processes) under the temp dir and reused while complete."""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Callable


def write_scalar_runs(root: str, first: int, last: int, tags: int, steps: int, run_path: Callable[[int], str]) -> None:
    """Runs ``first`` to ``last - 1`` at ``<root>/<run_path(r)>``: ``metric_<t>`` for ``t < tags``, seeded by r."""
    import numpy as np
    from tfevents.summaries import SummaryWriter
    names = ["metric_%02d" % t for t in range(tags)]
    for r in range(first, last):
        values = np.random.RandomState(r).rand(steps, tags).tolist()
        with SummaryWriter(os.path.join(root, run_path(r)), max_queue=10000, flush_secs=3600) as w:
            for step in range(steps):
                row = values[step]
                for t, name in enumerate(names):
                    w.add_scalar(name, row[t], step)


def _write_share(job) -> None:
    write_scalar_runs(*job)


def generate(root: str, runs: int, tags: int, steps: int, run_path: Callable[[int], str]) -> None:
    """Write the logdir at ``root`` afresh, the runs shared among processes (one per CPU); ``root/.complete`` marks
    it done (``run_path`` must be a module-level function: it is sent to the worker processes)."""
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    t = time.perf_counter()
    procs = max(1, min(len(os.sched_getaffinity(0)), runs))
    bounds = [runs * i // procs for i in range(procs + 1)]
    with ProcessPoolExecutor(procs) as pool:
        list(pool.map(_write_share, [(root, bounds[i], bounds[i + 1], tags, steps, run_path) for i in range(procs)]))
    open(os.path.join(root, ".complete"), "w").close()
    print("generated %s in %.1f s" % (root, time.perf_counter() - t), flush=True)


def cached_logdir(name: str, runs: int, tags: int, steps: int, run_path: Callable[[int], str]) -> str:
    """``<tmp>/tfevents-<name>-<runs>x<tags>x<steps>``, generated the first time."""
    root = os.path.join(tempfile.gettempdir(), "tfevents-%s-%dx%dx%d" % (name, runs, tags, steps))
    if not os.path.exists(os.path.join(root, ".complete")):
        generate(root, runs, tags, steps, run_path)
    return root
