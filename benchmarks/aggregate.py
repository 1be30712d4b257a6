"""Aggregating seeds: ``tfevents.summaries.aggregate`` against tensorboard-reducer, in one run.

A logdir of G groups × S seeds (runs ``cfg-<g>/seed-<s>``), each run logging T tags at the same N steps (so both
tools align the same way), is generated once and cached in ``$TMPDIR/tfevents-aggregate-<runs>x<tags>x<steps>``.
Each tool then runs in a fresh process, from the logdir on disk to every group's mean, std, min, max, median and
count per tag and step in memory: ours with ``aggregate_columns(logdir, by=r"/seed-\\d+$")`` (one call for all
groups; ``aggregate`` adds a pandas DataFrame on top, timed too), tensorboard-reducer with ``load_tb_events`` and
``reduce_events`` once per group (as its CLI is run, one glob per group). The results are checked equal (mean,
count) on a sample. Printed: seconds, points/s, peak RSS (VmHWM) and the ratio.

    python benchmarks/aggregate.py                  # 20 runs x 20 tags x 2,000 steps (800k points), ~1 min
    python benchmarks/aggregate.py --full           # 100 runs x 20 tags x 10,000 steps (20M points), ~15 min

tensorboard-reducer keeps at most 10,000 points per tag (its reservoir), hence at most 10,000 steps.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _logdirs import cached_logdir  # noqa: E402 - benchmarks/ is not a package

SEEDS_PER_GROUP = 10
STATS = ("mean", "std", "min", "max", "median", "count")


def _run_path(r: int) -> str:
    return os.path.join("cfg-%02d" % (r // SEEDS_PER_GROUP), "seed-%02d" % (r % SEEDS_PER_GROUP))


def make_logdir(runs: int, tags: int, steps: int) -> str:
    """The cached logdir: groups of SEEDS_PER_GROUP seeds (generated in parallel processes the first time)."""
    return cached_logdir("aggregate", runs, tags, steps, _run_path)


def _peak_rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024


def _group_dirs(logdir: str) -> dict:
    return {g: sorted(os.path.join(logdir, g, r) for r in os.listdir(os.path.join(logdir, g)))
            for g in sorted(os.listdir(logdir)) if os.path.isdir(os.path.join(logdir, g))}


# -- the tools, each run as `python aggregate.py --child NAME LOGDIR`; prints JSON

def _child_ours(logdir):
    from tfevents.summaries.compare import aggregate_columns
    t = time.perf_counter()
    table = aggregate_columns(logdir, by=r"/seed-\d+$", stats=STATS)
    seconds = time.perf_counter() - t
    sample = {}
    for group in list(table.groups)[:2]:
        s = table.series(group, "metric_00")
        sample[group] = [s["mean"][:50].tolist(), s["count"][:50].tolist()]
    return seconds, len(table), sample


def _child_ours_pandas(logdir):
    import pandas  # noqa: F401  (imports are not timed: tensorboard-reducer's import pandas too)
    from tfevents.summaries import aggregate
    t = time.perf_counter()
    df = aggregate(logdir, by=r"/seed-\d+$", stats=STATS)
    return time.perf_counter() - t, len(df), {}


def _child_reducer(logdir):
    import warnings
    warnings.simplefilter("ignore")
    from tensorboard_reducer.load import load_tb_events
    from tensorboard_reducer.reduce import reduce_events
    t = time.perf_counter()
    rows, sample = 0, {}
    for i, (group, dirs) in enumerate(_group_dirs(logdir).items()):
        reduced = reduce_events(load_tb_events(dirs), list(STATS))
        rows += sum(len(series) for series in reduced["mean"].values())
        if i < 2:
            sample[group] = [reduced["mean"]["metric_00"].to_numpy()[:50].tolist(),
                             reduced["count"]["metric_00"].to_numpy()[:50].tolist()]
    return time.perf_counter() - t, rows, sample


CHILDREN = {"ours": _child_ours, "ours_pandas": _child_ours_pandas, "tensorboard_reducer": _child_reducer}


def _child(name: str, logdir: str) -> int:
    seconds, rows, sample = CHILDREN[name](logdir)
    print(json.dumps({"seconds": seconds, "rows": rows, "rss_mb": _peak_rss_mb(), "sample": sample}))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="runs, in groups of %d seeds" % SEEDS_PER_GROUP)
    ap.add_argument("--tags", type=int, default=20)
    ap.add_argument("--steps", type=int, default=2000, help="at most 10,000 (tensorboard-reducer's reservoir)")
    ap.add_argument("--full", action="store_true", help="the issue's size: 100 runs x 20 tags x 10,000 steps")
    ap.add_argument("--only", default=",".join(CHILDREN), help="comma-separated: %s" % ",".join(CHILDREN))
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(*args.child)
    if args.full:
        args.runs, args.tags, args.steps = 100, 20, 10000
    if args.steps > 10000:
        ap.error("tensorboard-reducer keeps at most 10,000 points per tag: --steps <= 10000")
    if hasattr(os, "getloadavg"):
        print("load average: %.2f %.2f %.2f on %d CPUs" % (os.getloadavg() + (os.cpu_count(),)))
    logdir = make_logdir(args.runs, args.tags, args.steps)
    points = args.runs * args.tags * args.steps
    print("%d runs (%d groups of %d seeds) x %d tags x %d steps = %s points"
          % (args.runs, -(-args.runs // SEEDS_PER_GROUP), SEEDS_PER_GROUP, args.tags, args.steps, format(points, ",")))
    results = {}
    for name in args.only.split(","):
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, logdir],
                           capture_output=True, text=True)
        if p.returncode:
            print("%s failed:\n%s" % (name, p.stderr[-3000:]))
            continue
        results[name] = json.loads(p.stdout.strip().splitlines()[-1])
    base = results.get("ours")
    print("| tool | seconds | points/s | rows | peak RSS | vs ours |")
    print("|---|---|---|---|---|---|")
    for name, r in results.items():
        ratio = "%.1f×" % (r["seconds"] / base["seconds"]) if base and name != "ours" else "–"
        print("| %s | %.2f | %s | %d | %.0f MB | %s |" % (name, r["seconds"], format(int(points / r["seconds"]), ","),
                                                         r["rows"], r["rss_mb"], ratio))
    theirs = results.get("tensorboard_reducer")
    if base and theirs:
        import numpy as np
        for group, (mean, count) in theirs["sample"].items():
            ours_mean, ours_count = base["sample"][group]
            assert ours_count == count and np.allclose(ours_mean, mean, rtol=1e-12), group
        print("results agree (mean and count of metric_00, first 50 steps of %d groups); tensorboard-reducer takes "
              "%.1f× our time" % (len(theirs["sample"]), theirs["seconds"] / base["seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
