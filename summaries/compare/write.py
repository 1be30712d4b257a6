"""An aggregation as event files TensorBoard shows: one run per group and statistic, as tensorboard-reducer writes
them: ``<out>/<group>-<stat>`` (``<out>/<stat>`` for the group ``.``); when both mean and std were computed, std is
written as ``<group>-mean+std`` and ``<group>-mean-std`` (mean ± std, the band's edges) instead of a run of its own. Each run holds every tag of the group
at the aggregated steps; values are float32 scalars (``simple_value``), as every scalar TensorBoard reads.
"""
from __future__ import annotations

import os
import time
from typing import Dict, Iterator, List, Tuple

import numpy as np

from ..writer.summary_writer import SummaryWriter

__all__ = ["write_aggregate", "output_runs"]

# events queued before the writer thread takes them: large, so it wakes rarely (the files are closed at the end)
_QUEUE = 1 << 16


def _run_dir(group: str, stat: str) -> str:
    return stat if group == "." else "%s-%s" % (group, stat)


def _check_group(group: str) -> None:
    parts = group.split("/")
    if not group or group.startswith("/") or ".." in parts or "\\" in group or "\x00" in group:
        raise ValueError("group name %r cannot name a run directory (empty, absolute, '..' or a backslash)" % group)


def output_runs(stats) -> List[Tuple[str, object]]:
    """``[(suffix, f(columns) -> values)]``: the runs written per group, in tensorboard-reducer's order."""
    out: List[Tuple[str, object]] = []
    band = "mean" in stats and "std" in stats
    if band:
        out.append(("mean+std", lambda c: c["mean"] + c["std"]))
        out.append(("mean-std", lambda c: c["mean"] - c["std"]))
    out.extend((stat, (lambda c, s=stat: c[s])) for stat in stats if not (band and stat == "std"))
    return out


def _clear(directory: str, overwrite: bool) -> None:
    """Refuse (FileExistsError) or, with ``overwrite``, remove the event files already in ``directory``."""
    if not os.path.isdir(directory):
        return
    old = sorted(name for name in os.listdir(directory) if "tfevents" in name)
    if old and not overwrite:
        raise FileExistsError("%s already holds event files (%s); pass overwrite=True to replace them"
                              % (directory, old[0]))
    for name in old:
        os.remove(os.path.join(directory, name))


def _groups(table) -> Iterator[Tuple[str, List[Tuple[str, Dict[str, np.ndarray]]]]]:
    """``(group, [(tag, {step, stat...}), ...])`` from the table's (group, tag, step)-ordered columns."""
    cols = table.columns
    n = len(cols["step"])
    if not n:
        return
    keys = list(zip(cols["group"].tolist(), cols["tag"].tolist()))
    starts = [0] + [i for i in range(1, n) if keys[i] != keys[i - 1]] + [n]
    current, series = None, []
    for a, b in zip(starts[:-1], starts[1:]):
        group, tag = keys[a]
        if group != current:
            if current is not None:
                yield current, series
            current, series = group, []
        series.append((tag, {name: col[a:b] for name, col in cols.items() if name not in ("group", "tag")}))
    yield current, series


def write_aggregate(table, out, *, overwrite: bool = False) -> List[str]:
    """Write ``table`` (an :class:`~.aggregate.AggregateTable`) under the directory ``out``; the run directories
    written. A run directory that already holds event files is an error unless ``overwrite``."""
    out = os.fspath(out)
    if "://" in out:
        raise ValueError("write= is a local directory (the event-file writer writes local files), got %r" % out)
    runs = output_runs(table.stats)
    plan = []
    for group, series in _groups(table):
        _check_group(group)
        for suffix, values in runs:
            plan.append((os.path.join(out, *_run_dir(group, suffix).split("/")), series, values))
    for directory, _, _ in plan:
        _clear(directory, overwrite)
    written = []
    wall = time.time()
    for directory, series, values in plan:
        with SummaryWriter(directory, max_queue=_QUEUE, flush_secs=3600) as writer:
            add = writer.add_scalar
            for tag, columns in series:
                for step, value in zip(columns["step"].tolist(), values(columns).astype(np.float64).tolist()):
                    add(tag, value, step, wall)
        written.append(directory)
    return written
