"""`tfevents watch` on the 100-run logdir of benchmarks/serve.py: time to the first full screen, and memory as runs grow.

The logdir is serve.py's (benchmarks/_serve_logdir.py: RUNS runs x TAGS scalar tags x STEPS steps, plus histograms
and images; kept in ``--dir`` for reuse). ``tfevents watch`` runs in a real terminal (tmux, 120x40):

- **first full screen**: seconds from typing the command until the captured screen shows every run, every tag
  and the charts' tables (the status line reads "RUNS runs  TAGS tags" after a completed pass and run000's row
  is drawn), polled every 20 ms with ``capture-pane``; the offline reader's ``load_logdir(kinds=("scalars",))``
  of the same logdir is printed beside it, as the cost of reading every scalar once;
- **memory**: the watch process's RSS (``/proc/PID/status`` VmRSS) after the first screen, then after a writer
  appended GROW more steps of every tag to GROW_RUNS runs (the screen's pass counter moved past them): the series
  are reservoirs of ``--samples`` points, as in ``serve``, so RSS stays about flat while the logged points grow.

    .venv/bin/python benchmarks/watch.py [--runs 100 --tags 50 --steps 5000] [--grow 5000 --grow-runs 10] [--dir /tmp]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
from _serve_logdir import make_logdir  # noqa: E402
from _terminal import Terminal  # noqa: E402

GROW = r"""
import sys
import numpy as np
from tfevents.summaries import SummaryWriter
root, runs, tags, start, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
names = ["group%d/metric%02d" % (t % 5, t) for t in range(tags)]
for r in range(runs):
    with SummaryWriter("%s/run%03d" % (root, r), max_queue=10000, flush_secs=600, filename_suffix=".grow") as w:
        for step in range(start, start + steps):
            for name in names:
                w.add_scalar(name, float(np.sin(step * 1e-3)), step)
"""


def rss_mb(pid: int) -> float:
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024


def watch_pid(term: Terminal) -> int:
    shell = int(term.tmux("display", "-p", "-t", "w", "#{pane_pid}").strip())
    for _ in range(200):
        children = subprocess.run(["pgrep", "-P", str(shell)], capture_output=True, text=True).stdout.split()
        if children:
            return int(children[0])
        time.sleep(0.02)
    raise RuntimeError("no watch process under the shell")


def passes(screen: str) -> int:
    m = re.search(r"pass (\d+)", screen)
    return int(m.group(1)) if m else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--tags", type=int, default=50)
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--grow", type=int, default=5000, help="steps appended to each growing run")
    ap.add_argument("--grow-runs", type=int, default=10)
    ap.add_argument("--interval", type=float, default=2.0)
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the logdir is written (kept for reuse)")
    args = ap.parse_args()
    logdir = make_logdir(args.dir, args.runs, args.tags, args.steps)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(logdir) for f in fs)
    print("logdir %s: %d runs x %d tags x %d steps, %.0f MB; load average %.2f %.2f %.2f"
          % (logdir, args.runs, args.tags, args.steps, size / 1e6, *os.getloadavg()), flush=True)

    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "from tfevents.summaries import load_logdir; "
                    "load_logdir(%r, kinds=('scalars',))" % logdir], check=True)
    print("offline reader, load_logdir(kinds=scalars) in a fresh process: %.2f s" % (time.perf_counter() - t),
          flush=True)

    term = Terminal(120, 40)
    try:
        full = "%d runs  %d tags" % (args.runs, args.tags)
        t = time.perf_counter()
        term.keys("%s -m tfevents.viewer.cli watch %s --interval %s; echo EXIT=$?"
                  % (sys.executable, logdir, args.interval), "Enter")
        screen = term.wait_for(lambda s: full in s and passes(s) >= 1 and re.search(r"■ run000 +\d+", s),
                               timeout=600, what="the first full screen")
        first = time.perf_counter() - t
        pid = watch_pid(term)
        print("tfevents watch: first full screen %.2f s (%d runs, %d tags)" % (first, args.runs, args.tags),
              flush=True)
        before = rss_mb(pid)
        at = passes(screen)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", GROW, logdir, str(args.grow_runs), str(args.tags), str(args.steps),
                        str(args.grow)], check=True)
        written = time.perf_counter() - t
        grown = args.grow_runs * args.tags * args.grow
        term.wait_for(lambda s: passes(s) >= at + 3, timeout=600, what="three passes after the growth")
        after = rss_mb(pid)
        print("memory: RSS %.1f MB after the first screen, %.1f MB after %d runs grew by %d steps each "
              "(%.1fM more scalars, written in %.0f s): %+.1f MB" % (before, after, args.grow_runs, args.grow,
                                                                     grown / 1e6, written, after - before), flush=True)
        term.keys("q")
        term.wait_for(lambda s: "EXIT=0" in s, timeout=20, what="EXIT=0")
    finally:
        term.close()
        for d in os.listdir(logdir):
            for f in os.listdir(os.path.join(logdir, d)) if os.path.isdir(os.path.join(logdir, d)) else ():
                if f.endswith(".grow"):
                    os.remove(os.path.join(logdir, d, f))   # the kept logdir stays serve.py's


if __name__ == "__main__":
    main()
