"""A ``(runs x steps)`` matrix (NaN = no value) -> one array per statistic over its columns.

Missing values are skipped, as pandas skips them (``skipna``), so ``count`` is the number of runs a column's
statistics cover:

- ``count`` = n, the values present; ``mean`` = sum(x) / n; ``std`` = sqrt(sum((x - mean)^2) / (n - 1)), the sample
  standard deviation (``ddof=1``, pandas' and tensorboard-reducer's), NaN when n < 2;
- ``min``, ``max``, ``median`` of the values present; all statistics but count are NaN when n = 0.
"""
from __future__ import annotations

import warnings
from typing import Dict, Sequence

import numpy as np

__all__ = ["STATS", "check_stats", "reduce_columns"]

STATS = ("mean", "std", "min", "max", "median", "count")


def check_stats(stats: Sequence[str]) -> tuple:
    """``stats`` as a tuple, or ValueError naming what is not a statistic."""
    stats = (stats,) if isinstance(stats, str) else tuple(stats)
    unknown = [s for s in stats if s not in STATS]
    if unknown or not stats:
        raise ValueError("unknown statistic(s) %s; statistics are %s" % (unknown, ", ".join(STATS)))
    return stats


def reduce_columns(matrix: np.ndarray, stats: Sequence[str]) -> Dict[str, np.ndarray]:
    """``{stat: array over matrix's columns}`` (module docstring); count is int64, the rest float64."""
    out: Dict[str, np.ndarray] = {}
    present = ~np.isnan(matrix)
    full = bool(present.all())
    count = np.full(matrix.shape[1], matrix.shape[0], np.int64) if full else present.sum(axis=0)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)   # all-NaN columns: NaN is the answer
        mean = None
        if "mean" in stats or "std" in stats:
            mean = matrix.mean(axis=0) if full else np.nansum(matrix, axis=0) / count
        for stat in stats:
            if stat == "count":
                out[stat] = count
            elif stat == "mean":
                out[stat] = np.where(count > 0, mean, np.nan)
            elif stat == "std":
                dev = np.where(present, matrix - mean, 0.0)
                var = np.einsum("ij,ij->j", dev, dev) / (count - 1)
                out[stat] = np.where(count > 1, np.sqrt(var), np.nan)
            elif stat == "min":
                out[stat] = matrix.min(axis=0) if full else np.nanmin(matrix, axis=0)
            elif stat == "max":
                out[stat] = matrix.max(axis=0) if full else np.nanmax(matrix, axis=0)
            elif stat == "median":
                out[stat] = np.median(matrix, axis=0) if full else np.nanmedian(matrix, axis=0)
    return out
