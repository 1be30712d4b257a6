"""A series as a unicode sparkline, ``▁▂▃▄▅▆▇█``: the terminal's view of a curve (``tfevents inspect --values``).

The values (in order) are cut into ``width`` equal runs of points (fewer when there are fewer points); each run's
mean of its finite values gives a level ``round(7 * (m - lo) / (hi - lo))`` between the lowest and highest means,
shown as one of eight blocks. A run without finite values is a space; a flat series is all ``▄``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["BLOCKS", "sparkline"]

BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values, width: int = 24) -> str:
    values = np.asarray(values, dtype=np.float64)
    if not len(values) or width < 1:
        return ""
    chunks = np.array_split(values, min(width, len(values)))
    means = np.full(len(chunks), np.nan)
    for i, chunk in enumerate(chunks):
        finite = chunk[np.isfinite(chunk)]
        if len(finite):
            means[i] = finite.mean()
    known = ~np.isnan(means)
    if not known.any():
        return " " * len(chunks)
    lo, hi = means[known].min(), means[known].max()
    if hi == lo or not np.isfinite(hi - lo):
        levels = np.full(len(chunks), 3)
    else:
        levels = np.rint(7 * (np.where(known, means, lo) - lo) / (hi - lo)).astype(int)
    return "".join(BLOCKS[level] if ok else " " for level, ok in zip(levels, known))
