"""The density of a chart with many runs (DenseLines, Moritz & Fisher 2018): how many runs pass through each pixel.

The API's ``/api/v1/density`` answers with it. The optional C extension ``_density`` (``_density.c``) adds each run
in one pass over its points, ~20x sooner than the numpy code below (the fallback without a compiler, and the reference
the tests hold the extension to).

The chart is ``width`` × ``height`` pixels over ``x_range = (x0, x1)`` (steps) and ``y_range = (y0, y1)`` (values;
with ``logy``, their log10). A point ``(x, y)`` is at the continuous pixel position::

    u = (x - x0) / (x1 - x0) * width          # 0 at the left edge, width at the right
    v = (y1 - t) / (y1 - y0) * height         # t = y (or log10 y with logy; y0, y1 then log10 of the range too):
                                              # 0 at the top edge, height at the bottom

and a point is in pixel ``(row, column) = (floor(v), floor(u))``, the chart's far edges inclusive (``u == width``
is in the last column, ``v == height`` in the bottom row). Each run is its polyline (points by step, stably;
consecutive points joined). In column ``c`` a run *covers* the rows its polyline crosses there: a segment's part
inside ``c <= u <= c + 1`` (of positive length; so where a segment crosses ``u = c`` it is in both columns) is
straight, so with ``v_min``, ``v_max`` the ``v`` at its two ends it covers rows ``floor(v_min)`` to ``floor(v_max)``
(clipped to the chart: a part above the top or below the bottom covers nothing); a point covers its own pixel. With
``n_r(c)`` the number of rows run ``r`` covers in column ``c`` (the union over its segments there), run ``r`` puts
weight ``1 / n_r(c)`` on each (DenseLines' normalization: every run weighs 1 in each column it passes through, so a
steep segment does not outweigh a flat one), and::

    density[row, c] = sum over runs r covering (row, c) of 1 / n_r(c)

so ``density[:, c].sum()`` is the number of runs whose line passes (visibly) through column ``c``.

Values: NaN breaks the line (no segment to or from it). ±inf is clipped to the edge of the y range: +inf is drawn at
the top edge (``v = 0``), -inf at the bottom (``v = height``), joined to its neighbours as any point (a divergence
shows as a line up to the edge). With ``logy``, ``t = log10(y)``: 0 is -inf (bottom edge), a negative value is NaN
(a break). Points outside the x range are not drawn; segments are clipped to it.

Hovering (:attr:`Density.owner`, :func:`nearest_run`): each pixel's *owner* is, among the runs covering it, the one
of greatest weight there (the flattest line through that pixel: fewest rows in that column), the first run on ties;
-1 where no run passes. So the run named under the cursor passes through that pixel.

The extension walks each run's points in step order, with its crossings of the column edges, keeping one
connected part's span in the current column, and adds each column's union of spans as below. The numpy code computes
the same in batches of runs (``BATCH_CELLS``), vectorized over points and columns, as intervals ``(run, column,
top row, bottom row)``: a run without a break (:func:`_unbroken`) is one connected polyline, so in each column it
spans the ``v`` of its points there and of its crossings of the column's two edges (dense ``(runs, width)``
arrays); a run with breaks (:func:`_pieces`) is laid out point by point with its crossings, reduced per connected
part and column, and the parts of one run in one column are merged into the union of their row intervals
(:func:`_merged`: one stable sort of integer keys). Each interval adds ``+w`` at its top row and ``-w`` below its
bottom row of a difference raster (``np.add.at``) whose cumulative sum down the rows, once at the end, is the
density (sums below ``1e-7`` are that sum's rounding and set to 0: a real weight is at least ``1 / MAX_SIDE``), and
raises its pixels' owner keys (``np.maximum.at``).
"""
from __future__ import annotations

import os
from types import ModuleType
from typing import List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

__all__ = ["Density", "density", "data_range", "nearest_run", "MAX_SIDE", "MAX_PIXELS"]

MAX_SIDE = 4096          # the widest and tallest raster computed
MAX_PIXELS = 1 << 22     # and the most pixels (4096 x 1024, 2048 x 2048): ~25 bytes a pixel at the peak, ~100 MB
BATCH_CELLS = 1 << 18    # a batch of runs holds about this many points + columns (bounds its memory: ~40 MB)
_ZERO = 1e-7             # below this a summed density is rounding left by the difference raster (a real weight
                         # is at least 1 / MAX_SIDE)

Series = Tuple[np.ndarray, np.ndarray]   # (step, value)


class Density(NamedTuple):
    """``density``: float32 ``(height, width)``, row 0 the top (the module docstring's formula); ``owner``: int32
    ``(height, width)``, the index (into the series given) of the run of greatest weight at each pixel, -1 where
    none passes."""

    density: np.ndarray
    owner: np.ndarray


def load_kernel() -> Optional[ModuleType]:
    """The C extension, or None (not built, or turned off by ``TFEVENTS_DENSITY_KERNEL=0``)."""
    if os.environ.get("TFEVENTS_DENSITY_KERNEL", "1") == "0":
        return None
    try:
        from . import _density  # lazy: an optional compiled extension
    except ImportError:
        return None
    return _density


_STEPS = (np.dtype(np.int64), np.dtype(np.float64))
_VALUES = (np.dtype(np.float32), np.dtype(np.float64))


def _kernel_arrays(series: Sequence[Series]) -> Tuple[List[np.ndarray], List[np.ndarray]]:
    """Each run's steps and values as the extension takes them (1-d, contiguous, int64/float64 and
    float32/float64): as they are when they already are."""
    steps, values = [], []
    for step, value in series:
        step, value = np.asarray(step), np.asarray(value)
        if step.dtype not in _STEPS or not step.flags.c_contiguous or step.ndim != 1:
            step = np.ascontiguousarray(step, dtype=np.float64).reshape(-1)
        if value.dtype not in _VALUES or not value.flags.c_contiguous or value.ndim != 1:
            value = np.ascontiguousarray(value, dtype=np.float64).reshape(-1)
        steps.append(step)
        values.append(value)
    return steps, values


def _transform(value: np.ndarray, logy: bool) -> np.ndarray:
    value = np.asarray(value, dtype=np.float64)
    if not logy:
        return value
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log10(value)   # 0 -> -inf, negative -> NaN


def _columns(series: Sequence[Series], logy: bool) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x, t, lengths)``: every run's steps (float64) and values (``_transform``-ed) one run after the other, and
    each run's point count. Concatenated once, so that the ranges are two reductions and a batch of runs a slice,
    in array operations that release the GIL (two densities asked at once then share the CPUs)."""
    lengths = np.array([len(step) for step, _ in series], dtype=np.int64)
    if not lengths.sum():
        return np.zeros(0), np.zeros(0), lengths
    x = np.concatenate([np.asarray(step) for step, _ in series]).astype(np.float64)
    t = _transform(np.concatenate([np.asarray(value) for _, value in series]), logy)
    return x, t, lengths


def data_range(series: Sequence[Series], logy: bool = False) -> Tuple[Tuple[float, float], Tuple[float, float]]:
    """The x range (least and greatest step) and y range (least and greatest finite value; with ``logy`` of the
    positive ones) of ``series``, each widened to a span of 1 (x) or to ``y ± 0.5`` (y; with ``logy``, ``y / 10`` to
    ``y * 10``) when it is a single number, and ``(0, 1)`` (``(0.1, 10)`` with logy) when there is none."""
    kernel = load_kernel()
    if kernel is not None:
        x0, x1, v0, v1 = kernel.finite_ranges(*_kernel_arrays(series), logy)
        if np.isnan(x0):
            x0, x1 = 0.0, 1.0
        if np.isnan(v0):
            y0 = y1 = 0.0
        else:   # (log10 is monotonic: the least log is the log of the least value)
            y0, y1 = (float(np.log10(v0)), float(np.log10(v1))) if logy else (v0, v1)
    else:
        x, t, _ = _columns(series, logy)
        x0, x1 = (float(x.min()), float(x.max())) if x.size else (0.0, 1.0)
        t = t[np.isfinite(t)]
        y0, y1 = (float(t.min()), float(t.max())) if t.size else (0.0, 0.0)
    if x1 <= x0:
        x1 = x0 + 1.0
    if y1 <= y0:
        y0, y1 = (y0 - 1.0, y1 + 1.0) if logy else (y0 - 0.5, y1 + 0.5)
    return (x0, x1), ((10.0 ** y0, 10.0 ** y1) if logy else (y0, y1))


def _check(width: int, height: int, x_range, y_range, logy: bool) -> None:
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE and width * height <= MAX_PIXELS):
        raise ValueError("width and height must be 1 to %d, at most %d pixels in all, got %d x %d"
                         % (MAX_SIDE, MAX_PIXELS, width, height))
    (x0, x1), (y0, y1) = x_range, y_range
    if not (np.isfinite([x0, x1, y0, y1]).all() and x1 > x0 and y1 > y0):
        raise ValueError("the ranges must be finite and increasing, got x %r, y %r" % (x_range, y_range))
    if logy and y0 <= 0:
        raise ValueError("a log y range must be positive, got %r" % (y_range,))


def _pieces(u: np.ndarray, v: np.ndarray, run: np.ndarray, width: int, height: int):
    """(run, column, top row, bottom row) of each piece: the rows a connected part of a run's polyline covers in one
    column. ``u``, ``v`` are pixel positions (``v`` NaN at a break, ±inf already at the edges), ``run`` the
    batch-local run of each point, a run's points consecutive and by step.

    A part of the polyline inside one column ``c`` is connected, so it covers ``floor(min)`` to ``floor(max)`` of
    the ``v`` of its points in ``c`` and of where it crosses the column's edges ``u = c`` and ``u = c + 1`` (a
    crossing of the edge ``u = b`` by the segment from ``a`` to ``a + 1``: ``v = v_a + (v_{a+1} - v_a) (b - u_a) /
    (u_{a+1} - u_a)``). Laid out in x order (each point, then its segment's crossings, a crossing of ``u = b`` in
    column ``b``), the columns never decrease within a part, so each (part, column) is a contiguous block: one
    ``reduceat`` each for its min and max, then joined with the next block's first value (the crossing of its
    right edge) when the part goes on into the next column."""
    n = u.size
    ok = ~np.isnan(v)
    drawn = np.zeros(n, dtype=bool)   # drawn[i]: the segment from point i to point i + 1
    drawn[:-1] = ok[:-1] & ok[1:] & (run[1:] == run[:-1])
    part = np.cumsum(np.r_[False, ~drawn[:-1]])   # the connected part of each point
    # the crossings of each drawn segment: the column edges b in (u_i, u_{i+1}], from 0 to width
    fu = np.floor(u)
    b_first = np.maximum(fu + 1, 0)
    b_last = np.minimum(np.r_[fu[1:], -1.0], width)
    k = np.where(drawn, np.maximum(b_last - b_first + 1, 0), 0).astype(np.int64)
    seg = np.repeat(np.arange(n), k)
    first_of = np.cumsum(k) - k
    nth = np.arange(seg.size) - first_of[seg]
    b = b_first[seg] + nth
    u_a, v_a = u[seg], v[seg]
    v_b = v_a + (v[seg + 1] - v_a) * ((b - u_a) / (u[seg + 1] - u_a))   # a segment with a crossing is not vertical
    # the layout: point i at i + (crossings before it), its segment's crossings right after it
    point_at = np.arange(n) + first_of
    total = n + seg.size
    col = np.empty(total, dtype=np.int64)
    y = np.empty(total, dtype=np.float64)
    of_part = np.empty(total, dtype=np.int64)
    keep = np.ones(total, dtype=bool)
    col[point_at] = fu
    y[point_at] = v
    of_part[point_at] = part
    keep[point_at] = ok & (fu >= 0) & (fu < width)
    cross_at = point_at[seg] + 1 + nth
    col[cross_at] = b
    y[cross_at] = v_b
    of_part[cross_at] = part[seg]
    col, y, of_part = col[keep], y[keep], of_part[keep]
    if not col.size:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    starts = np.flatnonzero(np.r_[True, (col[1:] != col[:-1]) | (of_part[1:] != of_part[:-1])])
    top = np.minimum.reduceat(y, starts)
    bottom = np.maximum.reduceat(y, starts)
    g_col, g_part = col[starts], of_part[starts]
    goes_on = np.flatnonzero((g_part[1:] == g_part[:-1]) & (g_col[1:] == g_col[:-1] + 1))
    right_edge = y[starts[goes_on + 1]]
    top[goes_on] = np.minimum(top[goes_on], right_edge)
    bottom[goes_on] = np.maximum(bottom[goes_on], right_edge)
    seen = (g_col < width) & (bottom >= 0) & (top <= height)   # column `width`: only its left edge, done
    lo = np.clip(np.floor(top[seen]), 0, height - 1).astype(np.int64)
    hi = np.clip(np.floor(bottom[seen]), 0, height - 1).astype(np.int64)
    part_run = run[np.r_[0, np.flatnonzero(np.diff(part)) + 1]]   # the run of each part
    return part_run[g_part[seen]], g_col[seen], lo, hi


def _unbroken(u: np.ndarray, v: np.ndarray, lengths: np.ndarray, width: int, height: int):
    """(run, column, top row, bottom row) of each column that runs without a break cover (as :func:`_pieces`, the
    same floats): ``u``, ``v`` the runs' points one after the other (``lengths``, each at least 1), by step. Each run
    is one part, so column ``c`` spans the ``v`` of its points there and of its crossings of ``u = c`` and
    ``u = c + 1``; the crossing of ``u = b`` is on the segment ending at the first point with ``u >= b``
    (counted for every run at once), if that is not the first point. Dense ``(runs, width + 1)`` arrays."""
    runs = lengths.size
    first = np.cumsum(lengths) - lengths
    edges = np.arange(width + 1, dtype=np.float64)
    # idx[r, b]: how many points of run r have u < b, i.e. floor(u) < b (b an integer): counted per (run, floor)
    # and summed along the columns, for every run at once (floors clipped to -1 .. width + 1 keep the counts)
    floor = np.clip(np.floor(u), -1, width + 1).astype(np.int64) + 1
    owner_run = np.repeat(np.arange(runs), lengths)
    counts = np.bincount(owner_run * (width + 3) + floor, minlength=runs * (width + 3)).reshape(runs, width + 3)
    idx = np.cumsum(counts, axis=1)[:, :width + 1]
    inside = (idx > 0) & (idx < lengths[:, None])
    at = np.where(inside, idx + first[:, None], 1) if u.size > 1 else np.zeros_like(idx)
    u_a, u_b, v_a = u[at - 1], u[at], v[at - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        crossing = v_a + (v[at] - v_a) * ((edges - u_a) / (u_b - u_a))
    crossing[~inside] = np.nan
    top = np.fmin(crossing[:, :-1], crossing[:, 1:])
    bottom = np.fmax(crossing[:, :-1], crossing[:, 1:])
    col = np.floor(u).astype(np.int64)
    mine = (col >= 0) & (col < width)
    flat = (owner_run * width + col)[mine]
    np.fmin.at(top.reshape(-1), flat, v[mine])
    np.fmax.at(bottom.reshape(-1), flat, v[mine])
    seen = (bottom >= 0) & (top <= height)   # (NaN: not covered)
    run, col = np.nonzero(seen)
    lo = np.clip(np.floor(top[seen]), 0, height - 1).astype(np.int64)
    hi = np.clip(np.floor(bottom[seen]), 0, height - 1).astype(np.int64)
    return run, col, lo, hi


def _merged(run: np.ndarray, col: np.ndarray, lo: np.ndarray, hi: np.ndarray, width: int, height: int):
    """The union of the pieces' row intervals per (run, column): (run, column, top, bottom, rows of that run in
    that column) of each disjoint interval. Keys ``k = (run * width + col) * (height + 1) + row`` keep the groups
    apart; sorted by the top key, an interval starts anew where its top is below every bottom before it + 1."""
    group = run * width + col
    k_lo = group * (height + 1) + lo
    k_hi = group * (height + 1) + hi
    order = np.argsort(k_lo, kind="stable")   # already sorted by run and column: nearly sorted
    k_lo, k_hi = k_lo[order], k_hi[order]
    reach = np.maximum.accumulate(k_hi)
    starts = np.flatnonzero(np.r_[True, k_lo[1:] > reach[:-1] + 1])
    m_lo = k_lo[starts]
    m_hi = np.maximum.reduceat(k_hi, starts)
    group = m_lo // (height + 1)
    lo = m_lo - group * (height + 1)
    hi = m_hi - group * (height + 1)
    first = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    rows = np.repeat(np.add.reduceat(hi - lo + 1, first), np.diff(np.r_[first, group.size]))
    return group // width, group % width, lo, hi, rows


def density(series: Sequence[Series], x_range: Tuple[float, float], y_range: Tuple[float, float], width: int,
            height: int, logy: bool = False) -> Density:
    """The density of ``series`` (each a run's ``(step, value)`` arrays) on a ``width`` × ``height`` raster over
    ``x_range`` and ``y_range``, and each pixel's owner (the module docstring). ValueError for sides outside 1 to
    ``MAX_SIDE`` or more than ``MAX_PIXELS`` pixels, ranges not finite and increasing, or a log y range not
    positive."""
    _check(width, height, x_range, y_range, logy)
    (x0, x1), (y0, y1) = x_range, y_range
    if logy:
        y0, y1 = np.log10(y0), np.log10(y1)
    sx, sy = width / (x1 - x0), height / (y1 - y0)
    runs = len(series)
    kernel = load_kernel()
    if kernel is not None:
        steps, values = _kernel_arrays(series)
        diff_t, owner_t = np.zeros((width, height + 1)), np.full((width, height), -1, dtype=np.int64)
        for i in kernel.add_runs(steps, values, 0, diff_t, owner_t, x0, sx, y1, sy, width, height, runs, logy):
            order = np.argsort(steps[i], kind="stable")   # a run not by step: sorted, stably, as below
            kernel.add_runs([steps[i][order]], [values[i][order]], i, diff_t, owner_t, x0, sx, y1, sy, width,
                            height, runs, logy)
        return _finish(diff_t.T.ravel(), owner_t.T.ravel(), runs, width, height)
    diff = np.zeros((height + 1) * width, dtype=np.float64)
    owner_key = np.full(height * width, -1, dtype=np.int64)
    x, t, lengths = _columns(series, logy)
    first, point, held, cells = 0, 0, 0, 0   # the batch's first run and point, its points and cells so far
    for index, n in enumerate(lengths.tolist()):
        held += n
        cells += n + width
        if cells >= BATCH_CELLS or index == runs - 1:
            _add_batch(x[point:point + held], t[point:point + held], lengths[first:index + 1], first, diff,
                       owner_key, x0, sx, y1, sy, width, height, runs)
            first, point, held, cells = index + 1, point + held, 0, 0
    return _finish(diff, owner_key, runs, width, height)


def _finish(diff: np.ndarray, owner_key: np.ndarray, runs: int, width: int, height: int) -> Density:
    """The density (the difference raster summed down the rows) and each pixel's owner (from its key)."""
    dens = diff.reshape(height + 1, width)
    np.cumsum(dens, axis=0, out=dens)   # (in place, as below: the peak memory)
    dens = dens[:height]
    dens[dens < _ZERO] = 0.0
    none = owner_key < 0
    owner_key %= max(runs, 1)
    np.subtract(runs - 1, owner_key, out=owner_key)
    owner_key[none] = -1
    return Density(dens.astype(np.float32), owner_key.astype(np.int32).reshape(height, width))


def _add_batch(x, t, lengths, first, diff, owner_key, x0, sx, y1, sy, width, height, runs) -> None:
    """Runs ``first`` to ``first + len(lengths) - 1``: their steps ``x`` and transformed values ``t`` (slices of
    ``_columns``' arrays, not written to) added to the difference raster and the owner keys."""
    if not lengths.sum():
        return
    batch = np.arange(first, first + len(lengths), dtype=np.int64)
    run = np.repeat(batch, lengths)
    if (np.diff(x)[run[1:] == run[:-1]] < 0).any():   # some run not by step: sort each by step, stably
        order = np.lexsort((x, run))
        x, t = x[order], t[order]
    u = (x - x0) * sx
    with np.errstate(invalid="ignore"):
        v = (y1 - t) * sy
    v[t == np.inf] = 0.0
    v[t == -np.inf] = height
    u[u == width] = np.nextafter(float(width), 0.0)   # the right edge is in the last column
    local = run - first
    broken = np.bincount(local[np.isnan(v)], minlength=len(batch)) > 0
    found = []
    whole = ~broken & (lengths > 0)
    if whole.any():   # runs without a break: one part each, dense arrays
        points = np.repeat(whole, lengths)
        w_run, w_col, w_lo, w_hi = _unbroken(u[points], v[points], lengths[whole], width, height)
        found.append((np.flatnonzero(whole)[w_run], w_col, w_lo, w_hi, w_hi - w_lo + 1))
    if broken.any():
        points = np.repeat(broken, lengths)
        p_run, col, lo, hi = _pieces(u[points], v[points], local[points], width, height)
        if p_run.size:
            found.append(_merged(p_run, col, lo, hi, width, height))
    if not found:
        return
    m_run, m_col, m_lo, m_hi, rows = (np.concatenate(c) for c in zip(*found))
    w = 1.0 / rows
    diff += np.bincount(m_lo * width + m_col, weights=w, minlength=diff.size)   # (bincount: many times sooner
    diff -= np.bincount((m_hi + 1) * width + m_col, weights=w, minlength=diff.size)   # than np.add.at)
    # owner: greatest weight (fewest rows), then the first run: the greatest key (height - rows) * runs + (runs-1-r)
    length = m_hi - m_lo + 1
    key = (height - rows) * runs + (runs - 1 - (m_run + first))
    pixel = np.repeat(m_lo * width + m_col - width * (np.cumsum(length) - length), length)
    pixel += width * np.arange(pixel.size)   # row m_lo + j of the interval's j-th pixel
    np.maximum.at(owner_key, pixel, np.repeat(key, length))


def nearest_run(owner: np.ndarray, px: int, py: int, radius: int = 0) -> Optional[int]:
    """The run (index into the series) that passes through pixel column ``px``, row ``py`` (``owner[py, px]``);
    where none does, the owner of the nearest owned pixel within ``radius`` pixels (Euclidean; the first in row
    order on ties); None if there is none."""
    height, width = owner.shape
    if not (0 <= px < width and 0 <= py < height):
        return None
    if owner[py, px] >= 0:
        return int(owner[py, px])
    r0, r1 = max(0, py - radius), min(height, py + radius + 1)
    c0, c1 = max(0, px - radius), min(width, px + radius + 1)
    window = owner[r0:r1, c0:c1]
    rows, cols = np.nonzero(window >= 0)
    if not rows.size:
        return None
    d2 = (rows + r0 - py) ** 2 + (cols + c0 - px) ** 2
    best = np.argmin(d2)
    if d2[best] > radius * radius:
        return None
    return int(window[rows[best], cols[best]])
