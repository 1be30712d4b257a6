"""``tfevents runs ls LOGDIR --where QUERY`` against ``tfevents inspect LOGDIR``, as a user runs them (issue 35).

Both commands run as fresh subprocesses (``python -m tfevents.viewer.cli ...``, their output captured), alternating
which goes first, ``--repeat`` times each, on the logdir of ``benchmarks/runs_table.py``: 10,000 runs × 5 tags × 200
steps written by our SummaryWriter (``run_<r>``, tags ``metric_00``..``metric_04``), at ``<cache>/runs_10000x5x200``
(its ``make_logdir``: ``--cache``, default the temp dir), generated the first time. Both read every scalar of every
run (default workers); ``runs ls`` (its default table on stdout) also reduces them to the run table
(last/min/max/steps per tag, hparams, the ``.runinfo`` sidecars) and applies the query. Printed: each command's
median wall time and its CPU time (user + system of the child), the ratio ``runs ls`` ÷ ``inspect`` (the target: at
most 1.2×) and how many runs the query chose.

    python benchmarks/runs_ls.py [--cache DIR] [--runs 10000 --tags 5 --steps 200] [--repeat 3]
        [--where 'metric_00.last < 0.5 and metric_01.min > 0.001']
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runs_table import make_logdir  # noqa: E402 - benchmarks/runs_table.py: the same logdir, the same cache

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_WHERE = "metric_00.last < 0.5 and metric_01.min > 0.001"


def timed(argv) -> tuple:
    """(wall seconds, CPU seconds of the child, its stdout) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "tfevents.viewer.cli"] + argv, cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit("%s failed (%d): %s" % (" ".join(argv), proc.returncode, proc.stderr.decode()[-2000:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=None, help="where the logdir is kept (default: the temp dir)")
    parser.add_argument("--runs", type=int, default=10000)
    parser.add_argument("--tags", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--where", default=DEFAULT_WHERE)
    args = parser.parse_args()
    logdir = make_logdir(args.runs, args.tags, args.steps, args.cache)
    print("logdir %s: %d runs x %d tags x %d steps" % (logdir, args.runs, args.tags, args.steps))
    print("load average %.2f %.2f %.2f; %d CPUs" % (os.getloadavg() + (os.cpu_count(),)), flush=True)
    commands = {"runs ls --where": ["runs", "ls", logdir, "--where", args.where],
                "inspect": ["inspect", logdir]}
    walls = {name: [] for name in commands}
    cpus = {name: [] for name in commands}
    chosen = None
    for i in range(args.repeat):
        for name, argv in (commands.items() if i % 2 == 0 else reversed(list(commands.items()))):
            wall, cpu, out = timed(argv)
            walls[name].append(wall)
            cpus[name].append(cpu)
            if name.startswith("runs"):
                chosen = len(out.splitlines()) - 1  # the table's rows under its header
            print("  round %d  %-16s %7.2f s wall  %7.2f s CPU" % (i + 1, name, wall, cpu), flush=True)
    print("\n%-16s %12s %12s" % ("command", "median wall", "median CPU"))
    for name in commands:
        print("%-16s %10.2f s %10.2f s" % (name, statistics.median(walls[name]), statistics.median(cpus[name])))
    ratio_wall = statistics.median(walls["runs ls --where"]) / statistics.median(walls["inspect"])
    ratio_cpu = statistics.median(cpus["runs ls --where"]) / statistics.median(cpus["inspect"])
    print("runs ls / inspect: %.2fx wall, %.2fx CPU (target <= 1.2x); the query %r chose %d of %d runs"
          % (ratio_wall, ratio_cpu, args.where, chosen, args.runs))
    print("load average %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
