"""Time spent on the calling (training) thread by add_image, add_histogram and add_video, and by close():
tfevents, tensorboardX and torch.utils.tensorboard side by side in one run.

    python benchmarks/caller_thread.py [--calls 30] [--step-ms 50] [--only image,histogram,video]

For each kind and each writer (in turn, each with a new writer in a new directory), the loop a training
program runs: a training step (``--step-ms`` of sleep, which releases the GIL as a GPU step or a C++ op
does), then the timed call; after ``--calls`` such steps, the timed ``close()`` (which writes what is
still queued). The inputs are torch tensors, as in a torch training loop:

* image: ``add_image`` of a 3x256x256 float32 tensor in [0, 1] (PNG);
* histogram: ``add_histogram`` of 1,000,000 float32 normal values (default bins of each writer);
* video: ``add_video`` of a 1x16x3x64x64 float32 clip in [0, 1] (animated GIF; torch and tensorboardX need
  ``moviepy<2``).

Prints per writer the median and p90 wall time of one call on the calling thread, the median CPU time of
the calling thread in the call (``time.thread_time``), the ``close()`` time, and torch's and tensorboardX's
median over tfevents'. The events are counted back from the files, so a writer that drops them cannot win.
``--step-ms 0`` logs back to back: tfevents' thread then competes with the caller for the GIL.
"""
from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import torch

from tfevents.summaries import SummaryWriter as TfeventsWriter
from tfevents.summaries import record

KINDS = ("image", "histogram", "video")


def _writers():
    from tensorboardX import SummaryWriter as TbxWriter
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    return {"tfevents": TfeventsWriter, "tensorboardX": TbxWriter, "torch": TorchWriter}


def _inputs(kind: str):
    g = torch.Generator().manual_seed(0)
    if kind == "image":
        return torch.rand(3, 256, 256, generator=g)
    if kind == "histogram":
        return torch.randn(1_000_000, generator=g)
    return torch.rand(1, 16, 3, 64, 64, generator=g)


def _call(writer, kind: str, value, step: int) -> None:
    if kind == "image":
        writer.add_image("image", value, step)
    elif kind == "histogram":
        writer.add_histogram("histogram", value, step)
    else:
        writer.add_video("video", value, step, fps=8)


def _count_events(logdir: str) -> int:
    return sum(1 for f in glob.glob(os.path.join(logdir, "**", "*tfevents*"), recursive=True)
               for _ in record.iter_records(f)) - len(glob.glob(os.path.join(logdir, "**", "*tfevents*"),
                                                                   recursive=True))


def measure(make_writer, kind: str, calls: int, step_s: float, root: str) -> dict:
    logdir = tempfile.mkdtemp(dir=root)
    writer = make_writer(logdir)
    value = _inputs(kind)
    _call(writer, kind, value, 0)           # warm-up: imports, first encoder
    writer.flush()
    walls, cpus = [], []
    for step in range(1, calls + 1):
        time.sleep(step_s)                  # the training step
        value.add_(0.0)                     # the caller owns its tensor again at once
        w0, c0 = time.perf_counter(), time.thread_time()
        _call(writer, kind, value, step)
        cpus.append(time.thread_time() - c0)
        walls.append(time.perf_counter() - w0)
    t0 = time.perf_counter()
    writer.close()
    close_s = time.perf_counter() - t0
    return {"median": statistics.median(walls), "p90": sorted(walls)[int(0.9 * (len(walls) - 1))],
            "cpu": statistics.median(cpus), "close": close_s, "events": _count_events(logdir)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--step-ms", type=float, default=50.0)
    parser.add_argument("--only", default=",".join(KINDS))
    args = parser.parse_args()
    writers = _writers()
    print("load average %s; torch %s, %d intra-op threads; step %.0f ms, %d calls per writer"
          % (" ".join("%.2f" % x for x in os.getloadavg()), torch.__version__, torch.get_num_threads(),
             args.step_ms, args.calls))
    with tempfile.TemporaryDirectory() as root:
        for kind in args.only.split(","):
            results = {name: measure(make, kind, args.calls, args.step_ms / 1000, root)
                       for name, make in writers.items()}
            ours = results["tfevents"]["median"]
            print("\n%s" % kind)
            print("%-13s %12s %12s %12s %12s %7s %9s" % ("writer", "median call", "p90 call", "caller CPU",
                                                       "close()", "events", "vs ours"))
            for name, r in results.items():
                print("%-13s %9.3f ms %9.3f ms %9.3f ms %9.3f ms %7d %8.1fx" % (
                    name, r["median"] * 1e3, r["p90"] * 1e3, r["cpu"] * 1e3, r["close"] * 1e3, r["events"],
                    r["median"] / ours))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
