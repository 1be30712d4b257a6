"""The best value of every run: per (run, scalar tag), the last, minimum and maximum values with their steps.

For one series (points in the reader's order: the last one is the last TensorBoard shows):

- ``count`` points, ``first_step`` and ``last_step`` (the smallest and largest steps);
- ``last`` = ``value[-1]`` at ``last_value_step`` = ``step[-1]``;
- ``min`` = ``nanmin(value)`` at ``min_step`` = ``step[nanargmin(value)]`` (the first such point), ``max`` likewise;
  NaN values are skipped.

A series of NaN only (a run that diverged) has a last value, NaN at its last step (a point TensorBoard shows), but
no minimum or maximum: ``min`` and ``max`` are NaN at step :data:`NO_STEP` (-1: the step columns are integers).
``tfevents export --summary`` writes that as it is (``nan`` and ``-1``); ``tfevents inspect --values`` prints a
NaN value as ``nan`` and no step as ``-``; its ``--json`` has ``null`` for NaN and -1 for no step.

``Logdir.summary()`` returns this as a DataFrame; ``tfevents inspect --values`` prints it with a sparkline and
``tfevents export --summary`` writes it.
"""
from __future__ import annotations

from typing import Dict, Mapping, Tuple

import numpy as np

from .types import ScalarSeries

__all__ = ["SUMMARY_COLUMNS", "NO_STEP", "summary_columns", "series_summary"]

SUMMARY_COLUMNS = ("run", "tag", "count", "first_step", "last_step", "last", "last_value_step", "min", "min_step",
                   "max", "max_step")
NO_STEP = -1   # the step of a value there is none of (an all-NaN series' min and max; every step of an empty series)


def series_summary(step: np.ndarray, value: np.ndarray) -> Dict[str, float]:
    """The facts of one series (module docstring) as a dict of Python numbers."""
    out = {"count": int(len(step))}
    if not len(step):
        return dict(out, first_step=NO_STEP, last_step=NO_STEP, last=float("nan"), last_value_step=NO_STEP,
                    min=float("nan"), min_step=NO_STEP, max=float("nan"), max_step=NO_STEP)
    value = np.asarray(value, dtype=np.float64)
    out.update(first_step=int(step.min()), last_step=int(step.max()), last=float(value[-1]),
               last_value_step=int(step[-1]))
    known = ~np.isnan(value)
    if not known.any():
        return dict(out, min=float("nan"), min_step=NO_STEP, max=float("nan"), max_step=NO_STEP)
    lo, hi = (int(np.nanargmin(value)), int(np.nanargmax(value))) if not known.all() else \
        (int(value.argmin()), int(value.argmax()))
    out.update(min=float(value[lo]), min_step=int(step[lo]), max=float(value[hi]), max_step=int(step[hi]))
    return out


def summary_columns(scalars: Mapping[Tuple[str, str], ScalarSeries]) -> Dict[str, np.ndarray]:
    """``{column: array}`` for :data:`SUMMARY_COLUMNS`, one row per (run, tag) in sorted order."""
    rows = [dict(series_summary(s.step, s.value), run=run, tag=tag) for (run, tag), s in sorted(scalars.items())]
    columns = {}
    for name in SUMMARY_COLUMNS:
        if name in ("run", "tag"):
            columns[name] = np.array([r[name] for r in rows], dtype=object)
        elif name in ("last", "min", "max"):
            columns[name] = np.array([r[name] for r in rows], dtype=np.float64)
        else:
            columns[name] = np.array([r[name] for r in rows], dtype=np.int64)
    return columns
