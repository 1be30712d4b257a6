"""Processes of a real ``torch.distributed`` job (gloo on 127.0.0.1) that log through tfevents.

``run_job(logdir)`` starts ``WORLD`` processes with ``torch.multiprocessing.spawn``; each joins the
process group through ``tcp://127.0.0.1:<free port>`` (so no launcher variable is set: the writer must
find its rank in torch.distributed), logs the same tags into ``<logdir>/default`` (``ranks="zero"``)
and ``<logdir>/all`` (``ranks="all"``), and reduces its values with ``all_reduce`` (SUM, MIN, MAX).
Rank 0 saves torch's reductions to ``<logdir>/reduced.npy``, ``[3, steps]`` (mean, min, max): the
oracle for ``fold_ranks``.
"""
import os
import socket
import subprocess
import sys

import numpy as np

WORLD = 2
STEPS = np.arange(0, 50, 5)


def values_of(rank: int) -> np.ndarray:
    """What rank ``rank`` logs at ``STEPS``: float32-exact quarters that differ between ranks."""
    return ((STEPS * (rank + 1)) % 7 - 3 * rank) / 4.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _process(rank: int, world: int, port: int, logdir: str) -> None:
    import torch
    import torch.distributed as dist

    from tfevents.summaries import SummaryWriter

    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world)
    try:
        mine = values_of(rank)
        with SummaryWriter(os.path.join(logdir, "default")) as zero, \
                SummaryWriter(os.path.join(logdir, "all"), ranks="all") as every:
            for step, value in zip(STEPS, mine):
                zero.add_scalar("loss", float(value), int(step))
                every.add_scalar("loss", float(value), int(step))
        reduced = []
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.MIN, dist.ReduceOp.MAX):
            t = torch.tensor(mine, dtype=torch.float64)
            dist.all_reduce(t, op=op)
            reduced.append(t.numpy())
        reduced[0] = reduced[0] / world
        if rank == 0:
            np.save(os.path.join(logdir, "reduced.npy"), np.stack(reduced))
        dist.barrier()
    finally:
        dist.destroy_process_group()


def run_job(logdir: str) -> None:
    import torch.multiprocessing as mp

    for name in ("RANK", "WORLD_SIZE", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        assert name not in os.environ, "%s is set: the job would not test torch.distributed's rank" % name
    mp.spawn(_process, args=(WORLD, _free_port(), logdir), nprocs=WORLD, join=True)


def run_job_in_subprocess(logdir: str, timeout: float = 300) -> str:
    """``run_job(logdir)`` from a process of its own (conftest's background job ``ranks_job``); returns logdir."""
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), logdir], capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, "the torch.distributed job failed:\n%s" % (proc.stdout + proc.stderr)[-3000:]
    return logdir


if __name__ == "__main__":
    run_job(sys.argv[1])
