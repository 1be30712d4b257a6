"""The least and greatest value of a whole scalar series, kept beside its reservoir (which holds a sample).

A series' extremes are ``(min, min_step, max, max_step)`` over every point logged (NaN values left out; of equal
values the first; NaN and step -1 while there is none), as ``Logdir.summary()`` / ``inspect --values`` compute them
from the whole series. The scanner counts the rows it drops as it reads (``FileRows.reduced_extremes``); the loader
folds each scan's extremes into the series'. A restart (a step not above the one before) preempts points the
extremes may have come from: the series' extremes are then taken again from the points its reservoir keeps, and
go on from there, so after a restart they can miss an extreme that only a dropped sample point held.
"""
from __future__ import annotations

import math
from typing import List, Tuple

import numpy as np

__all__ = ["Extremes", "NO_EXTREMES", "of_points", "of_rows", "merge"]

Extremes = Tuple[float, int, float, int]   # min, its step, max, its step
NO_EXTREMES: Extremes = (math.nan, -1, math.nan, -1)


def of_points(steps: np.ndarray, walls: np.ndarray, values: np.ndarray) -> Tuple[Extremes, bool]:
    """The extremes of the points with a finite wall time (what a reservoir keeps), and whether a step was not above
    the one before (a restart)."""
    finite = np.isfinite(walls)
    if not finite.all():
        steps, values = steps[finite], values[finite]
    stepped_back = bool(len(steps) > 1 and np.count_nonzero(steps[1:] <= steps[:-1]))
    known = ~np.isnan(values)
    if not known.any():
        return NO_EXTREMES, stepped_back
    if not known.all():
        steps, values = steps[known], values[known]
    lo, hi = int(values.argmin()), int(values.argmax())
    return (float(np.float32(values[lo])), int(steps[lo]), float(np.float32(values[hi])), int(steps[hi])), stepped_back


def of_rows(steps: np.ndarray, walls: np.ndarray, values: np.ndarray) -> List[Tuple[Extremes, bool]]:
    """:func:`of_points` of each row of ``walls`` and ``values`` (2-D, float32 values) at the shared ``steps``: in a
    few array operations for all rows when every wall time is finite and no value is NaN (a run's first read,
    its tags logged at the same steps), else row by row."""
    if not len(steps) or not np.isfinite(walls).all() or np.isnan(values).any():
        return [of_points(steps, w, v) for w, v in zip(walls, values)]
    stepped_back = bool(len(steps) > 1 and np.count_nonzero(steps[1:] <= steps[:-1]))
    rows = np.arange(len(values))
    lo, hi = values.argmin(axis=1), values.argmax(axis=1)   # (the first of equal values, as argmin/argmax)
    return [((lo_value, lo_step, hi_value, hi_step), stepped_back) for lo_value, lo_step, hi_value, hi_step in
            zip(values[rows, lo].tolist(), steps[lo].tolist(), values[rows, hi].tolist(), steps[hi].tolist())]


def merge(earlier: Extremes, later: Extremes) -> Extremes:
    """The extremes of two runs of points, ``earlier`` logged first (of equal values, its own is kept)."""
    lo, lo_step, hi, hi_step = earlier
    if later[1] >= 0 and (lo_step < 0 or later[0] < lo):
        lo, lo_step = later[0], later[1]
    if later[3] >= 0 and (hi_step < 0 or later[2] > hi):
        hi, hi_step = later[2], later[3]
    return lo, lo_step, hi, hi_step
