"""The 10,000-run logdir and its report that ``test_run_list.py`` reads, written in a subprocess (``write_in_subprocess``)
so the session's background thread (``conftest.SLOW_JOBS``) makes it on the core the test run leaves idle.

``python tests/_run_list_logdir.py ROOT`` writes ``ROOT/logs`` (10,000 tiny runs by tfevents' SummaryWriter: 9 in
10 log ``loss`` at steps 0 and 1, the others ``acc``; 6 in 7 the hparam ``lr``, 40 values, so ties; plus two runs
with hostile names and neither), ``ROOT/report.html`` and ``ROOT/expected.json`` ({name: lr}, {name: loss min})."""
import json
import os
import subprocess
import sys

import numpy as np

N_RUNS = 10_000
HOSTILE = ['<img src=x onerror="window.__pwned = 1">', "\u202eevil\u200f 'run\""]   # sort first and last by name


def run_name(i: int) -> str:
    return "run_%05d" % i


def write(root: str) -> None:
    from tfevents.summaries import SummaryWriter
    from tfevents.viewer.cli import main
    logs = os.path.join(root, "logs")
    rng = np.random.default_rng(3)
    lr_values = np.round(np.geomspace(1e-4, 1e-1, 40), 8)
    lrs, loss_min = {}, {}
    for i in range(N_RUNS):
        with SummaryWriter(os.path.join(logs, run_name(i))) as w:
            if i % 10 != 3:
                values = rng.random(2).astype(np.float32)
                for step, v in enumerate(values):
                    w.add_scalar("loss", float(v), step)
                loss_min[run_name(i)] = float(values.min())
            else:
                w.add_scalar("acc", float(rng.random()), 0)
            if i % 7 != 2:
                lrs[run_name(i)] = float(rng.choice(lr_values))
                w.add_hparams({"lr": lrs[run_name(i)]}, {})
    for name in HOSTILE:
        with SummaryWriter(os.path.join(logs, name)) as w:
            w.add_text("note", "hi", 0)
    assert main(["report", logs, "-o", os.path.join(root, "report.html")]) == 0
    with open(os.path.join(root, "expected.json"), "w") as f:
        json.dump({"lrs": lrs, "loss_min": loss_min}, f)


def write_in_subprocess(root: str):
    """Writes it in a child process; returns (report path, names by name, {name: lr}, {name: loss min})."""
    proc = subprocess.run([sys.executable, __file__, root], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(os.path.join(root, "expected.json")) as f:
        expected = json.load(f)
    names = sorted([run_name(i) for i in range(N_RUNS)] + HOSTILE)
    return os.path.join(root, "report.html"), names, expected["lrs"], expected["loss_min"]


if __name__ == "__main__":
    write(sys.argv[1])
