"""``runs_table(path)`` against ``load_logdir(path, kinds=("scalars",))`` on one logdir, side by side (issue 35).

The logdir: 10,000 runs × 5 tags × 200 steps written by our SummaryWriter (``run_<r>``, tags
``metric_00``..``metric_04``), at ``<cache>/runs_10000x5x200`` (``--cache``, default the temp dir), generated the
first time in parallel processes and reused while complete (``benchmarks/runs_ls.py`` reads the same one through
:func:`make_logdir`). Both calls read every scalar of every run with the default workers; ``runs_table`` also reads
the HParams events, reduces each run to its row in the read job, looks for the side files in the walk's listing and
builds the DataFrame. Each repeat runs both in one process, alternating which goes first; printed: best and median
seconds of each and the ratio ``runs_table`` ÷ ``load_logdir`` (the target: at most 1.2×).

    python benchmarks/runs_table.py [--cache DIR] [--runs 10000 --tags 5 --steps 200] [--repeat 5]
"""
from __future__ import annotations

import argparse
import fcntl
import gc
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _logdirs import generate  # noqa: E402 - benchmarks/ is not a package

from tfevents.summaries import load_logdir, runs_table  # noqa: E402


def _run_path(r: int) -> str:
    return "run_%05d" % r


def make_logdir(runs: int, tags: int, steps: int, cache: str = None) -> str:
    """``<cache>/runs_<runs>x<tags>x<steps>`` (cache: the temp dir), written the first time; a lock file beside it
    makes a second process (runs_ls.py started at once) wait for the first's logdir rather than write its own."""
    cache = cache or tempfile.gettempdir()
    os.makedirs(cache, exist_ok=True)
    root = os.path.join(cache, "runs_%dx%dx%d" % (runs, tags, steps))
    with open(root + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(root, ".complete")):
            generate(root, runs, tags, steps, _run_path)
    return root


def _timed(call) -> float:
    gc.collect()
    t = time.perf_counter()
    result = call()
    elapsed = time.perf_counter() - t
    del result
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=None, help="folder of the cached logdir (default: the temp dir)")
    parser.add_argument("--runs", type=int, default=10000)
    parser.add_argument("--tags", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    logdir = make_logdir(args.runs, args.tags, args.steps, args.cache)
    print("logdir %s: %d runs x %d tags x %d steps" % (logdir, args.runs, args.tags, args.steps))
    print("load average %.2f %.2f %.2f; %d CPUs" % (os.getloadavg() + (len(os.sched_getaffinity(0)),)), flush=True)
    table = runs_table(logdir)   # a first pass of each: the page cache warm for both, the imports made
    assert len(table) == args.runs and "metric_00.max" in table.columns, table.columns[:20]
    load_logdir(logdir, kinds=("scalars",))
    calls = {"runs_table": lambda: runs_table(logdir),
             "load_logdir(kinds=scalars)": lambda: load_logdir(logdir, kinds=("scalars",))}
    times = {name: [] for name in calls}
    for i in range(args.repeat):
        for name, call in (calls.items() if i % 2 == 0 else reversed(list(calls.items()))):
            times[name].append(_timed(call))
        print("repeat %d: %s" % (i + 1, ", ".join("%s %.2f s" % (n, t[-1]) for n, t in times.items())), flush=True)
    width = max(map(len, calls))
    print("%-*s  %8s  %8s" % (width, "", "best", "median"))
    for name, t in times.items():
        print("%-*s  %7.2fs  %7.2fs" % (width, name, min(t), statistics.median(t)))
    table_t, load_t = times["runs_table"], times["load_logdir(kinds=scalars)"]
    print("ratio runs_table / load_logdir: best %.2fx, median %.2fx (target <= 1.2x)"
          % (min(table_t) / min(load_t), statistics.median(table_t) / statistics.median(load_t)))


if __name__ == "__main__":
    main()
