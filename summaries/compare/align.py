"""One (group, tag): the runs' series -> ``(steps, matrix)``, ``matrix[r, j]`` run r's value at ``steps[j]``
(NaN where run r has none), for :mod:`.stats` to reduce column by column.

Each series is first put in step order with one point per step (the last one logged for a step, as
``Logdir.to_pandas(pivot=True)`` keeps it). Then, by ``align``:

- ``"exact"``: the union of the runs' steps; a run has a value at the steps it logged. When every run logged the
  same steps this is ``tensorboard-reducer``'s alignment (``pd.concat(axis=1)`` of the runs);
- ``"interp"``: the union of the runs' steps; run r's value at step s is the linear interpolation of its points,
  ``v[i] + (s - x[i]) * (v[i+1] - v[i]) / (x[i+1] - x[i])`` for ``x[i] <= s <= x[i+1]`` (``np.interp``), only inside
  its range ``[x[0], x[-1]]``: nothing is extrapolated;
- ``"bins"``: ``bins`` equal bins of the group's step range, ``edges = linspace(min step, max step, bins + 1)``,
  bin i holding ``edges[i] <= s < edges[i+1]`` (the last one also ``s = max step``); run r's value in a bin is the
  mean of its points there. A bin's step is the first integer step it can hold, ``ceil(edges[i])``; bins where no
  run logged a point are dropped;
- ``"auto"``: ``"exact"`` when every run logged the same steps, else ``"interp"``.

On another x axis (``aggregate(x="samples_seen")``) the same rules apply to each run's points in x order
(:func:`one_per_x`) instead of steps: the union of the runs' x values, interpolation in x, bins of the x range (a
bin's x its left edge).

NaN values carry no information: they are dropped before interpolating and binning, and are missing values in
``"exact"`` (a step where every run logged NaN keeps its column, all missing).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

__all__ = ["ALIGNS", "one_per_step", "one_per_x", "align_series", "resolve_align"]

ALIGNS = ("auto", "exact", "interp", "bins")
Series = Tuple[np.ndarray, np.ndarray]   # (int64 steps, float64 values)


def one_per_step(step: np.ndarray, value: np.ndarray) -> Series:
    """``(steps, values)`` in step order, one point per step: the last logged (file order) for a repeated step."""
    step = np.asarray(step, dtype=np.int64)
    value = np.asarray(value, dtype=np.float64)
    if len(step) < 2 or bool(np.all(step[1:] > step[:-1])):
        return step, value
    order = np.argsort(step, kind="stable")
    step, value = step[order], value[order]
    last = np.append(step[1:] != step[:-1], True)
    return step[last], value[last]


def one_per_x(x: np.ndarray, value: np.ndarray) -> Series:
    """``(x float64, values)`` in x order, one point per x (the last in input order for a repeated x), the points
    whose x is NaN dropped."""
    x = np.asarray(x, dtype=np.float64)
    value = np.asarray(value, dtype=np.float64)
    known = ~np.isnan(x)
    if not known.all():
        x, value = x[known], value[known]
    if len(x) < 2 or bool(np.all(x[1:] > x[:-1])):
        return x, value
    order = np.argsort(x, kind="stable")
    x, value = x[order], value[order]
    last = np.append(x[1:] != x[:-1], True)
    return x[last], value[last]


def resolve_align(series: List[Series], align: str) -> str:
    """``align`` with ``"auto"`` decided for these series: ``"exact"`` when their steps are equal, else ``"interp"``."""
    if align != "auto":
        return align
    first = series[0][0]
    return "exact" if all(np.array_equal(s, first) for s, _ in series[1:]) else "interp"


def _union(series: List[Series]) -> np.ndarray:
    first = series[0][0]
    if all(np.array_equal(s, first) for s, _ in series[1:]):
        return first
    return np.unique(np.concatenate([s for s, _ in series]))


def _exact(series: List[Series]) -> Tuple[np.ndarray, np.ndarray]:
    steps = _union(series)
    matrix = np.full((len(series), len(steps)), np.nan)
    for r, (s, v) in enumerate(series):
        if len(s) == len(steps):     # the union of sorted unique steps: equal length means equal steps
            matrix[r] = v
        else:
            matrix[r, np.searchsorted(steps, s)] = v
    return steps, matrix


def _interp(series: List[Series]) -> Tuple[np.ndarray, np.ndarray]:
    steps = _union(series)
    matrix = np.full((len(series), len(steps)), np.nan)
    for r, (s, v) in enumerate(series):
        known = ~np.isnan(v)
        if not known.all():
            s, v = s[known], v[known]
        if not len(s):
            continue
        lo, hi = np.searchsorted(steps, s[0], "left"), np.searchsorted(steps, s[-1], "right")
        if len(s) == hi - lo:        # this run logged every step of the union inside its range
            matrix[r, lo:hi] = v
        else:
            matrix[r, lo:hi] = np.interp(steps[lo:hi], s, v)
    return steps, matrix


def _bins(series: List[Series], bins: int) -> Tuple[np.ndarray, np.ndarray]:
    lo = min(s[0] for s, _ in series if len(s))
    hi = max(s[-1] for s, _ in series if len(s))
    edges = np.linspace(lo, hi, bins + 1)
    matrix = np.full((len(series), bins), np.nan)
    logged = np.zeros(bins, dtype=bool)
    for r, (s, v) in enumerate(series):
        where = np.clip(np.searchsorted(edges, s, "right") - 1, 0, bins - 1)
        logged[where] = True
        known = ~np.isnan(v)
        n = np.bincount(where[known], minlength=bins)
        total = np.bincount(where[known], weights=v[known], minlength=bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            matrix[r] = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    if series[0][0].dtype.kind == "f":     # another x axis: a bin's x is its left edge
        return edges[:-1][logged], matrix[:, logged]
    steps = np.ceil(edges[:-1]).astype(np.int64)
    return steps[logged], matrix[:, logged]


def align_series(series: List[Series], align: str = "auto", bins: Optional[int] = None
                 ) -> Tuple[np.ndarray, np.ndarray]:
    """``(steps int64, matrix float64 [runs, steps])`` for series already :func:`one_per_step` (module docstring);
    ``(x float64, matrix)`` for series already :func:`one_per_x`."""
    kind = np.float64 if any(s[0].dtype.kind == "f" for s in series) else np.int64
    series = [s for s in series if len(s[0])]
    if not series:
        return np.zeros(0, kind), np.zeros((0, 0))
    mode = resolve_align(series, align)
    if mode == "exact":
        return _exact(series)
    if mode == "interp":
        return _interp(series)
    if mode == "bins":
        return _bins(series, bins)
    raise ValueError("align must be one of %s, got %r" % (", ".join(ALIGNS), align))
