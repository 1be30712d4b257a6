"""Histogram summaries as TensorBoard's two dashboards show them.

Distributions: each step's histogram is compressed to the values at the basis points
``(0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000)`` (min, -3σ… +3σ of a normal, max) exactly as
TensorBoard's distribution plugin does (``data_compat._migrate_histogram_value`` then
``compressor.compress_histogram``), and the bands between symmetric basis points are shaded over steps.

Histograms: the "offset" ridge plot: each step's bucket counts re-binned onto one common grid (counts spread
uniformly inside a bucket) and drawn as stacked filled curves, older steps behind.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from .. import logdir_data
from ..colors import run_colors
from . import matplotlib_figures
from .matplotlib_figures import literal

BASIS_POINTS = (0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000)


def tensorboard_buckets(hmin: float, hmax: float, limits, counts) -> np.ndarray:
    """``[k, 3]`` float32 (left, right, count) as TensorBoard migrates a HistogramProto.

    Empty buckets at both ends are dropped; the first left edge becomes ``min`` and the last right edge
    ``max`` (so the ±DBL_MAX outer limits never show).
    """
    counts = np.asarray(counts, dtype=np.float64)
    limits = np.asarray(limits, dtype=np.float64)
    nz = np.flatnonzero(counts > 0)
    if nz.size == 0:
        return np.zeros((0, 3), dtype=np.float32)
    start, end = nz[0], nz[-1]
    inner = limits[start:end]
    lefts = np.r_[hmin, inner]
    rights = np.r_[inner, hmax]
    return np.array([lefts, rights, counts[start:end + 1]], dtype=np.float32).T


def compress(buckets: np.ndarray, bps=BASIS_POINTS) -> np.ndarray:
    """Values at the basis points of one ``[k, 3]`` histogram (TensorBoard's ``compress_histogram``).

    With cumulative weights ``W_i = 10000 * cumsum(count)_i / sum(count)``, basis point b lies in the first
    bucket i with ``W_i > b`` and non-zero weight; its value is the linear interpolation
    ``lhs + (b - W_{i-1}) * (rhs - lhs) / (W_i - W_{i-1})`` with ``lhs = max(right_{i-1}, min)``
    (``min`` for the first bucket or when nothing lies before it) and ``rhs = min(right_i, max)``.
    Basis points past the last bucket take ``max``; an empty histogram gives zeros.
    """
    buckets = np.asarray(buckets)
    if buckets.size == 0:
        return np.zeros(len(bps))
    lo, hi = buckets[0][0], buckets[-1][1]
    counts = buckets[:, 2]
    rights = buckets[:, 1]
    weights = (counts * bps[-1] / (counts.sum() or 1.0)).cumsum()
    out = []
    j = 0
    while j < len(bps):
        i = int(np.searchsorted(weights, bps[j], side="right"))
        while i < len(weights):
            cum, prev = weights[i], (weights[i - 1] if i > 0 else 0.0)
            if cum == prev:
                i += 1
                continue
            lhs = lo if (not i or not prev) else max(rights[i - 1], lo)
            rhs = min(rights[i], hi)
            out.append(lhs + (bps[j] - prev) * float(rhs - lhs) / (cum - prev))
            j += 1
            break
        else:
            break
    out += [hi] * (len(bps) - j)
    return np.asarray(out, dtype=np.float64)


def distribution(series) -> np.ndarray:
    """``[steps, 9]``: the basis-point values of every step of a HistogramSeries."""
    rows = [compress(tensorboard_buckets(series.min[i], series.max[i], series.bucket_limits[i],
                                         series.bucket_counts[i]))
            for i in range(len(series.step))]
    return np.array(rows).reshape(len(rows), len(BASIS_POINTS))


def rebin(series, edges: np.ndarray) -> np.ndarray:
    """``[steps, len(edges)-1]`` counts on common ``edges``, spreading each bucket's count uniformly."""
    out = np.zeros((len(series.step), len(edges) - 1))
    for i in range(len(series.step)):
        b = tensorboard_buckets(series.min[i], series.max[i], series.bucket_limits[i],
                                series.bucket_counts[i]).astype(np.float64)
        if not b.size:
            continue
        left, right, count = b[:, 0], b[:, 1], b[:, 2]
        # the cumulative count is piecewise linear in x; sample it at the common edges
        xs = np.r_[left[0], right]
        cdf = np.r_[0.0, np.cumsum(count)]
        xs, keep = _strictly_increasing(xs)
        out[i] = np.diff(np.interp(edges, xs, cdf[keep]))
    return out


def _strictly_increasing(xs: np.ndarray):
    """Drop points that do not advance x (a zero-width bucket's mass lands at its edge)."""
    # keep the last of a run of equal x (it carries the highest cumulative count)
    keep = np.r_[np.diff(xs) > 0, True]
    return xs[keep], keep


def _selected(source, tags, runs):
    if not isinstance(source, Mapping):
        source = logdir_data.load(source, tags=tags, runs=runs, kinds=["histograms"])
    mapping = logdir_data.kind(source, "histograms")
    colors = run_colors(logdir_data.all_runs(source, mapping))
    return logdir_data.select(mapping, tags, runs), colors


def plot_distributions(source: Any, tags: Optional[str] = None, runs: Optional[str] = None, *,
                       ncols: Optional[int] = None):
    """A Figure with TensorBoard's distribution chart for each (run, tag): percentile bands over steps."""
    chosen, colors = _selected(source, tags, runs)
    fig, axes = matplotlib_figures.grid(len(chosen), ncols, cell=(6.0, 3.6))
    if not chosen:
        matplotlib_figures.empty(axes[0], "no histograms match")
    for ax, ((run, tag), s) in zip(axes, chosen.items()):
        draw_distribution(ax, s, colors[run], title="%s (%s)" % (tag, run))
    return fig


def draw_distribution(ax, series, color: str, title: str = "") -> None:
    steps = np.asarray(series.step)
    d = distribution(series)
    for k in range(4):  # outermost band first, each inner band darker
        ax.fill_between(steps, d[:, k], d[:, -1 - k], color=color, alpha=0.18 + 0.12 * k, lw=0,
                        step=None if steps.size > 1 else "mid")
    ax.plot(steps, d[:, 4], color=color, lw=1.2)
    if steps.size == 1:  # a single step: show the bands as a vertical bar
        ax.vlines(steps, d[:, 0], d[:, -1], color=color, lw=6, alpha=0.4)
    ax.set_title(literal(title), fontsize=10)
    ax.set_xlabel("step")
    ax.grid(True, alpha=0.3)


def plot_histograms(source: Any, tags: Optional[str] = None, runs: Optional[str] = None, *,
                    max_steps: int = 30, bins: int = 30, ncols: Optional[int] = None):
    """A Figure with an offset (ridge) histogram plot for each (run, tag), at most ``max_steps`` steps."""
    chosen, colors = _selected(source, tags, runs)
    fig, axes = matplotlib_figures.grid(len(chosen), ncols, cell=(6.0, 4.5))
    if not chosen:
        matplotlib_figures.empty(axes[0], "no histograms match")
    for ax, ((run, tag), s) in zip(axes, chosen.items()):
        draw_ridge(ax, s, colors[run], title="%s (%s)" % (tag, run), max_steps=max_steps, bins=bins)
    return fig


def draw_ridge(ax, series, color: str, title: str = "", max_steps: int = 30, bins: int = 30) -> None:
    n = len(series.step)
    if n == 0:
        matplotlib_figures.empty(ax, "no data")
        return
    pick = np.unique(np.linspace(0, n - 1, min(n, max_steps)).round().astype(int))
    lo = float(np.min(np.asarray(series.min)[pick]))
    hi = float(np.max(np.asarray(series.max)[pick]))
    if not np.isfinite(lo) or not np.isfinite(hi):
        lo, hi = -1.0, 1.0
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, bins + 1)
    sub = _Subset(series, pick)
    counts = rebin(sub, edges)
    centers = np.repeat(edges, 2)[1:-1]
    peak = counts.max() or 1.0
    spacing = 0.35  # a curve's full height spans this many rows: ridges overlap, as in TensorBoard
    import matplotlib.colors as mcolors
    base = np.array(mcolors.to_rgb(color))
    steps = np.asarray(series.step)[pick]
    m = len(pick)
    for row in range(m):  # oldest at the top, drawn first (behind)
        y0 = (m - 1 - row) * spacing / 1.0
        h = np.repeat(counts[row], 2) / peak * spacing * 2.5
        shade = base * (0.45 + 0.55 * row / max(m - 1, 1)) + (1 - (0.45 + 0.55 * row / max(m - 1, 1)))
        ax.fill_between(centers, y0, y0 + h, color=np.clip(shade, 0, 1), ec=color, lw=0.6, zorder=row)
    ticks = [(m - 1 - r) * spacing for r in range(m)]
    every = max(1, m // 8)
    ax.set_yticks(ticks[::every], [str(int(s)) for s in steps[::every]])
    ax.set_ylabel("step")
    ax.set_title(literal(title), fontsize=10)
    ax.set_xlim(lo, hi)


class _Subset:
    """A view of some steps of a HistogramSeries."""

    def __init__(self, series, pick):
        self.step = np.asarray(series.step)[pick]
        self.min = np.asarray(series.min)[pick]
        self.max = np.asarray(series.max)[pick]
        self.bucket_limits = [series.bucket_limits[i] for i in pick]
        self.bucket_counts = [series.bucket_counts[i] for i in pick]
