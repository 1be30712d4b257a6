"""Two runs of one model at batch sizes 32 and 64 that log ``loss`` and ``samples_seen`` (= batch size x step) at
every step up to 3200 samples, so on ``samples_seen`` they span the same x range (``loss`` a function of the samples
seen, 0.5 higher at batch size 64 so the curves stay apart); and a run whose ``samples_seen`` is logged every 10
steps only."""
import numpy as np

from tfevents.summaries import SummaryWriter

BATCHES = {"bs32": 32, "bs64": 64}
OFFSET = {"bs32": 0.0, "bs64": 0.5}
SAMPLES = 3200


def loss_of(samples):
    return 1.0 / (1.0 + np.asarray(samples, dtype=np.float64) / 500.0)


def write_batch_runs(root) -> None:
    for run, bs in BATCHES.items():
        with SummaryWriter("%s/%s" % (root, run)) as w:
            for step in range(SAMPLES // bs + 1):
                w.add_scalar("loss", float(loss_of(step * bs)) + OFFSET[run], step)
                w.add_scalar("samples_seen", step * bs, step)


def write_sparse_run(root, run: str = "sparse") -> None:
    """``loss`` at steps 0..59, ``samples_seen`` = 8 x step at steps 5, 15, ..., 45 only."""
    with SummaryWriter("%s/%s" % (root, run)) as w:
        for step in range(60):
            w.add_scalar("loss", float(step), step)
            if step % 10 == 5 and step <= 45:
                w.add_scalar("samples_seen", 8 * step, step)
