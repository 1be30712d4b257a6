"""A series reduced to what ``columns`` pixel columns draw (M4: the first, last, least and greatest point of each).

Pure numpy; the API's ``/api/v1/scalars?...&points=N`` answers with it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["pixel_columns", "m4_indices"]


def pixel_columns(step: np.ndarray, columns: int) -> np.ndarray:
    """The pixel column of each step, ``columns`` equal columns over the step range::

        column = floor((step - first) * columns / (last - first + 1))

    with ``first`` and ``last`` the least and greatest step; so ``0 <= column < columns``, and a column spans
    ``(last - first + 1) / columns`` steps. (In float64, the product before the division: exact while
    ``columns * (last - first + 1) < 2**53``.)"""
    step = np.asarray(step)
    if step.size == 0:
        return np.zeros(0, dtype=np.int64)
    first, last = float(step.min()), float(step.max())
    column = np.floor((step.astype(np.float64) - first) * columns / (last - first + 1)).astype(np.int64)
    return np.minimum(column, columns - 1)   # (a rounding at the top edge of a huge range)


def m4_indices(step: np.ndarray, value: np.ndarray, columns: int) -> np.ndarray:
    """Indices of the points that keep how ``columns`` pixel columns look: in each column (:func:`pixel_columns`)
    its first and last point by step, and the point with its least and with its greatest value (NaN is neither; the
    first of equal values; a column of NaN only keeps its first and last). The indices come in step order (ties in
    input order), each once, so a spike or a dip of a single point stays visible however long the series.

    ``columns`` must be positive."""
    if columns <= 0:
        raise ValueError("columns must be positive, got %d" % columns)
    step = np.asarray(step)
    value = np.asarray(value, dtype=np.float64)
    if step.size == 0:
        return np.zeros(0, dtype=np.int64)
    in_order = bool((step[1:] >= step[:-1]).all())   # as a series is kept: no sort then
    by_step = np.arange(step.size) if in_order else np.argsort(step, kind="stable")
    column = pixel_columns(step if in_order else step[by_step], columns)
    starts = np.flatnonzero(np.r_[True, column[1:] != column[:-1]])   # where each column begins, in step order
    ends = np.r_[starts[1:], column.size] - 1
    if (ends - starts).max() < 2:   # no column of more than 2 points: its first and last are all of them
        return by_step
    v = value[by_step]
    nan = np.isnan(v)
    # within each column (primary key), the non-NaN values first, ascending / descending; lexsort is stable
    least = np.lexsort((v, nan, column))[starts]
    greatest = np.lexsort((-v, nan, column))[starts]
    return by_step[np.unique(np.concatenate([starts, ends, least, greatest]))]
