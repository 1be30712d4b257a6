"""Write N scalars through tfevents, tensorboardX and torch side by side; time the imports.

    /work/venv/bin/python benchmarks/write_scalars.py [--n 200000] [--repeat 3]

Each measurement runs in a fresh subprocess: construct a writer, ``add_scalar(tag, float, step)``
N times (one tag, steps 0..N-1), ``close()``; the time covers all of it, so events/s is end to end
including the last write. Prints the median events/s per writer (wall clock, and per CPU-second of
all the process's threads, which a machine busy with other work disturbs less) and tfevents'
ratio to each peer,
then the time of ``import tfevents.summaries`` and ``from tfevents.summaries import SummaryWriter``
in a fresh interpreter (median of 7). The files are read back and counted, so a writer that drops
events cannot win.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

WRITERS = {
    "tfevents": "from tfevents.summaries import SummaryWriter",
    "tensorboardX": "from tensorboardX import SummaryWriter",
    "torch": "from torch.utils.tensorboard import SummaryWriter",
}

_ONE_RUN = r"""
import sys, time, glob
{import_line}
from tfevents.summaries import record
logdir, n = sys.argv[1], int(sys.argv[2])
values = [i * 0.001 for i in range(n)]
t0, c0 = time.perf_counter(), time.process_time()
w = SummaryWriter(logdir)
add = w.add_scalar
for i in range(n):
    add("train/loss", values[i], i)
w.close()
elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
count = sum(1 for f in glob.glob(logdir + "/*tfevents*") for _ in record.iter_records(f))
print(elapsed, cpu, count)
"""

_IMPORT = r"""
import time
t = time.perf_counter()
{stmt}
print(time.perf_counter() - t)
"""


def _env() -> dict:
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return env


def time_writer(name: str, n: int) -> tuple:
    """(wall seconds, CPU seconds of all threads) of one fresh-process run of n add_scalar + close()."""
    with tempfile.TemporaryDirectory() as logdir:
        out = subprocess.run([sys.executable, "-c", _ONE_RUN.format(import_line=WRITERS[name]), logdir, str(n)],
                             check=True, capture_output=True, text=True, env=_env()).stdout.split()
    elapsed, cpu, count = float(out[0]), float(out[1]), int(out[2])
    if count != n + 1:   # + the file_version event
        raise SystemExit("%s wrote %d events, expected %d" % (name, count, n + 1))
    return elapsed, cpu


def time_import(stmt: str, repeat: int = 7) -> float:
    times = [float(subprocess.run([sys.executable, "-c", _IMPORT.format(stmt=stmt)], check=True,
                                  capture_output=True, text=True, env=_env()).stdout) for _ in range(repeat)]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=list(WRITERS), choices=list(WRITERS))
    args = parser.parse_args()

    rates, cpu_rates = {}, {}
    print("add_scalar x %d + close(), median of %d fresh processes (load average %.1f)"
          % (args.n, args.repeat, os.getloadavg()[0]))
    for name in args.only:
        try:
            runs = [time_writer(name, args.n) for _ in range(args.repeat)]
        except subprocess.CalledProcessError as e:
            print("  %-13s failed: %s" % (name, e.stderr.strip().splitlines()[-1:]))
            continue
        seconds = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        rates[name], cpu_rates[name] = args.n / seconds, args.n / cpu
        print("  %-13s %8.3f s wall %10.0f events/s   %8.3f s CPU %10.0f events/CPU-s"
              % (name, seconds, rates[name], cpu, cpu_rates[name]))
    if "tfevents" in rates:
        for name in rates:
            if name != "tfevents":
                print("  tfevents / %-13s %6.1fx wall  %6.1fx CPU"
                      % (name, rates["tfevents"] / rates[name], cpu_rates["tfevents"] / cpu_rates[name]))

    print("import time in a fresh interpreter (median of 7)")
    for stmt in ("import tfevents.summaries", "from tfevents.summaries import SummaryWriter"):
        print("  %-48s %6.1f ms" % (stmt, 1000 * time_import(stmt)))


if __name__ == "__main__":
    main()
