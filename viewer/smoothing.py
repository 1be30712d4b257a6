"""TensorBoard's scalar smoothing and min/max-preserving downsampling (numpy only, no matplotlib).

Smoothing is the debiased exponential moving average of TensorBoard's line chart
(``vz_line_chart2/line-chart.ts``, ``resmoothDataset``), with weight ``w`` in [0, 1]::

    last = 0; n = 0
    for each finite y:   last = w*last + (1-w)*y;  n += 1;  smoothed = last / (1 - w**n)
    non-finite y:        smoothed = y                       (NaN / ±inf pass through)
    constant series:     smoothed = y                       (every y == y[0]; a NaN makes it non-constant)
    w == 1:              the divisor is 1 (so every finite point smooths to 0, as in TensorBoard)

On finite data this equals pandas ``ewm(alpha=1-w, adjust=True).mean()``.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

DEFAULT_SMOOTHING = 0.6  # TensorBoard's default slider position

# Below this many points a Python loop beats building the blocked recurrence.
_BLOCK = 256


def smooth(values, weight: float = DEFAULT_SMOOTHING) -> np.ndarray:
    """TensorBoard's smoothed series for ``values`` (float64 array, same length)."""
    y = np.asarray(values, dtype=np.float64).ravel()
    weight = float(weight)
    if not 0.0 <= weight <= 1.0 or weight != weight:
        raise ValueError("smoothing weight must be in [0, 1], got %r" % weight)
    out = y.copy()
    if y.size == 0 or np.all(y == y[0]):  # TensorBoard's "isConstant" (#786)
        return out
    finite = np.isfinite(y)
    ys = y[finite]
    if ys.size == 0:
        return out
    ema = _ema(ys, weight)  # `last` after each finite point
    if weight not in (0.0, 1.0):  # w == 0: the divisor is 1 - 0**n = 1; w == 1: TensorBoard uses 1
        # 1 - w**n == 1.0 exactly once w**n < 2**-54: only the first k points need the division
        k = ys.size if weight > 1 - 1e-12 else min(ys.size, int(np.ceil(-54 * np.log(2) / np.log(weight))) + 2)
        ema[:k] /= 1.0 - weight ** np.arange(1, k + 1, dtype=np.float64)
    out[finite] = ema
    return out


def _ema(y: np.ndarray, w: float) -> np.ndarray:
    """``last_k = w*last_{k-1} + (1-w)*y_k`` with ``last_0 = 0``, evaluated in blocks.

    Inside a block of B points, ``last_{s+j} = w**j * last_s + sum_{i<=j} w**(j-i) (1-w) y_{s+i}``; the sum is a
    lower-triangular matrix product, so the Python loop runs once per block, not once per point, and
    every term is a product of powers ``w**k`` with k < B (no growing ``w**-k`` that would lose precision).
    """
    n = y.size
    if n <= _BLOCK or w == 0.0:
        if w == 0.0:
            return y.copy()
        out = np.empty(n)
        last = 0.0
        a = 1.0 - w
        for i, v in enumerate(y.tolist()):
            last = last * w + a * v
            out[i] = last
        return out
    b = _BLOCK
    powers, kernel = _block_kernel(w, b)
    pad = (-n) % b
    blocks = np.concatenate([y, np.zeros(pad)]).reshape(-1, b)
    partial = blocks @ kernel.T                              # each block's EMA started from 0
    carry_in = np.empty(blocks.shape[0])
    last = 0.0
    w_b = w ** b
    ends = partial[:, -1]
    for k in range(blocks.shape[0]):                         # thread the state between blocks
        carry_in[k] = last
        last = w_b * last + ends[k]
    out = partial + carry_in[:, None] * (w * powers)[None, :]
    return out.ravel()[:n]


@functools.lru_cache(maxsize=16)
def _block_kernel(w: float, b: int):
    """``w**j`` for j < b, and the lower-triangular ``K[j, i] = (1-w) w**(j-i)`` (i <= j)."""
    j = np.arange(b)
    powers = w ** j.astype(np.float64)
    lag = j[:, None] - j[None, :]
    kernel = np.where(lag >= 0, w ** np.clip(lag, 0, None).astype(np.float64), 0.0) * (1.0 - w)
    powers.flags.writeable = False
    kernel.flags.writeable = False
    return powers, kernel


class Downsampled(NamedTuple):
    """Indices to draw: ``line`` (finite points, in order) and ``markers`` (non-finite points)."""
    line: np.ndarray
    markers: np.ndarray


def minmax_indices(x, y, buckets: int) -> Downsampled:
    """Indices of the points to draw so that ``buckets`` pixel columns look as with every point.

    Finite points are cut into ``buckets`` equal-width x buckets; per bucket the first, last, minimum and
    maximum points are kept (the M4 rule), so no spike or dip disappears. Non-finite points are kept as
    markers, at most one per bucket and kind (NaN, +inf, -inf). Returned indices are in input order.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    idx = np.arange(y.size)
    x_ok = np.isfinite(x)
    finite = np.isfinite(y) & x_ok
    if y.size <= 4 * buckets:
        return Downsampled(idx[finite], idx[~finite & x_ok])
    bucket = _bucket_of(x, buckets)
    if x_ok.all() and np.all(bucket[1:] >= bucket[:-1]):
        line = _m4_sorted(y, finite, bucket)
    else:
        line = _m4_any(y, finite, bucket)
    bad = idx[~np.isfinite(y) & x_ok]
    if bad.size:
        yb = y[bad]
        kind = np.where(np.isnan(yb), 0, np.where(yb > 0, 1, 2))
        _, first = np.unique(bucket[bad] * 3 + kind, return_index=True)
        bad = np.sort(bad[first])
    return Downsampled(line, bad)


def _first_per_group(positions: np.ndarray, group: np.ndarray, last: bool = False) -> np.ndarray:
    """From ``positions`` (ascending) keep the first (or last) of each run of equal ``group[positions]``."""
    if positions.size == 0:
        return positions
    g = group[positions]
    if last:
        return positions[np.r_[g[1:] != g[:-1], True]]
    return positions[np.r_[True, g[1:] != g[:-1]]]


def _m4_sorted(y: np.ndarray, finite: np.ndarray, bucket: np.ndarray) -> np.ndarray:
    """M4 for non-decreasing buckets (x sorted, the usual case): O(n) with reduceat, no sort."""
    starts = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])
    seg = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, y.size]))
    hi = np.where(finite, y, -np.inf)
    lo = np.where(finite, y, np.inf)
    seg_max = np.maximum.reduceat(hi, starts)[seg]
    seg_min = np.minimum.reduceat(lo, starts)[seg]
    fin = np.flatnonzero(finite)
    keep = [_first_per_group(fin, seg), _first_per_group(fin, seg, last=True),
            _first_per_group(np.flatnonzero(finite & (hi == seg_max)), seg),
            _first_per_group(np.flatnonzero(finite & (lo == seg_min)), seg)]
    return np.unique(np.concatenate(keep))


def _m4_any(y: np.ndarray, finite: np.ndarray, bucket: np.ndarray) -> np.ndarray:
    """M4 for x in any order: sort by (bucket, y) for extremes and by (bucket, index) for first/last."""
    fi = np.flatnonzero(finite)
    if fi.size == 0:
        return fi
    fb = bucket[fi]
    keep = [fi[:1], fi[-1:]]
    for order in (fi[np.lexsort((y[fi], fb))], fi[np.argsort(fb, kind="stable")]):
        ob = bucket[order]
        starts = np.flatnonzero(np.r_[True, ob[1:] != ob[:-1]])
        ends = np.r_[starts[1:], ob.size] - 1
        keep += [order[starts], order[ends]]
    return np.unique(np.concatenate(keep))


def _bucket_of(x: np.ndarray, buckets: int) -> np.ndarray:
    """Equal-width bucket number in [0, buckets) of each x (non-finite x go to bucket 0)."""
    ok = np.isfinite(x)
    all_ok = bool(ok.all())
    fx = x if all_ok else x[ok]
    lo, hi = (float(fx.min()), float(fx.max())) if fx.size else (0.0, 1.0)
    span = hi - lo or 1.0
    b = ((x if all_ok else np.where(ok, x, lo)) - lo) * (buckets / span)
    b = b.astype(np.int64)  # values are >= 0, so truncation is floor
    np.minimum(b, buckets - 1, out=b)
    return b
