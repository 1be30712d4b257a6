"""Folding the per-rank runs of a distributed job into one series per statistic across ranks.

``SummaryWriter(logdir, ranks="all")`` makes rank N write the run ``<logdir>/rank_<N>``. For each
group of runs ``<run>/rank_<N>`` (or ``rank_<N>`` at the top, whose group is ``.``) and each tag,
:func:`fold_ranks` makes one series per statistic, as the run ``<run>/ranks_<statistic>``:

    at each step s logged by at least one rank of the group, with R(s) the ranks that logged s
    (a rank's last value at s if it logged s twice) and v_r(s) their values:

        mean(s) = sum_{r in R(s)} v_r(s) / |R(s)|,   min(s) = min_{r in R(s)} v_r(s),
        max(s) = max_{r in R(s)} v_r(s),             count(s) = |R(s)|,
        wall_time(s) = max_{r in R(s)} wall_time_r(s)   (when the last rank got there)

A NaN logged by a rank makes that step's mean, min and max NaN (as it would be on any one rank).
Runs not named ``rank_<N>`` pass through unchanged.
"""
from __future__ import annotations

import posixpath
import re
from typing import Dict, List, Sequence, Tuple

import numpy as np

from .types import ScalarSeries

__all__ = ["fold_ranks", "rank_of_run", "STATISTICS"]

Scalars = Dict[Tuple[str, str], ScalarSeries]
STATISTICS = ("mean", "min", "max", "count")
_RANK_RUN = re.compile(r"^(?:(.*)/)?rank_(\d+)$")


def rank_of_run(run: str) -> Tuple[str, int]:
    """``("<run>", N)`` for a run named ``<run>/rank_<N>`` (``(".", N)`` for ``rank_<N>``); ValueError otherwise."""
    match = _RANK_RUN.match(run.replace("\\", "/"))
    if match is None:
        raise ValueError("run %r is not named rank_<N>" % run)
    return match.group(1) or ".", int(match.group(2))


def _last_per_step(series: ScalarSeries) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(steps increasing and unique, values, wall times): a step logged twice keeps its last value."""
    step = np.asarray(series.step, np.int64)
    order = np.argsort(step, kind="stable")
    step = step[order]
    last = np.append(step[1:] != step[:-1], True)
    kept = order[last]
    return step[last], np.asarray(series.value, np.float64)[kept], np.asarray(series.wall_time, np.float64)[kept]


def _fold_one(series: List[ScalarSeries], statistics: Sequence[str]) -> Dict[str, ScalarSeries]:
    """One tag of one group: the ranks' series -> {statistic: series} over the union of their steps."""
    columns = [_last_per_step(s) for s in series]
    steps = np.unique(np.concatenate([step for step, _, _ in columns]))
    values = np.zeros((len(series), steps.size))
    walls = np.full((len(series), steps.size), -np.inf)
    present = np.zeros((len(series), steps.size), bool)
    for row, (step, value, wall) in enumerate(columns):
        at = np.searchsorted(steps, step)
        values[row, at], walls[row, at], present[row, at] = value, wall, True
    count = present.sum(axis=0)
    wall = walls.max(axis=0)
    computed = {
        "mean": np.where(present, values, 0.0).sum(axis=0) / count,
        "min": np.where(present, values, np.inf).min(axis=0),
        "max": np.where(present, values, -np.inf).max(axis=0),
        "count": count.astype(np.float64),
    }
    return {name: ScalarSeries(step=steps.copy(), wall_time=wall.copy(), value=computed[name])
            for name in statistics}


def fold_ranks(scalars: Scalars, statistics: Sequence[str] = ("mean", "min", "max")) -> Scalars:
    """``{(run, tag): ScalarSeries}`` with each group of ``<run>/rank_<N>`` runs replaced by the runs
    ``<run>/ranks_<statistic>`` (see the module docstring for the formulas); other runs are kept as they are.

    ``scalars``: what ``read_scalars`` or ``load_logdir(...).scalars`` return. ``statistics``: any of
    ``mean``, ``min``, ``max``, ``count`` (how many ranks logged each step).
    """
    statistics = tuple(statistics)
    unknown = [s for s in statistics if s not in STATISTICS]
    if unknown or not statistics:
        raise ValueError("statistics must be among %s, got %r" % (", ".join(STATISTICS), statistics))
    folded: Scalars = {}
    groups: Dict[Tuple[str, str], Dict[int, ScalarSeries]] = {}
    for (run, tag), series in scalars.items():
        try:
            group, rank = rank_of_run(run)
        except ValueError:
            folded[(run, tag)] = series
            continue
        groups.setdefault((group, tag), {})[rank] = series
    for (group, tag), by_rank in sorted(groups.items()):
        members = [by_rank[r] for r in sorted(by_rank) if len(by_rank[r])]
        if not members:
            continue
        for name, series in _fold_one(members, statistics).items():
            run = "ranks_" + name if group == "." else posixpath.join(group, "ranks_" + name)
            folded[(run, tag)] = series
    return folded
