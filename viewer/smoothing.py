"""The scalar smoothings and min/max-preserving downsampling (numpy only, no matplotlib).

``smooth(x, y, kind, param)`` is the one entry point; each kind has one definition here (and one in the
interactive page's ``smoothing.js``, which the browser tests hold to these numbers):

``ema`` (the default): the debiased exponential moving average of TensorBoard's line chart
(``vz_line_chart2/line-chart.ts``, ``resmoothDataset``), with weight ``w`` in [0, 1], x ignored::

    last = 0; n = 0
    for each finite y:   last = w*last + (1-w)*y;  n += 1;  smoothed = last / (1 - w**n)
    non-finite y:        smoothed = y                       (NaN / ±inf pass through)
    constant series:     smoothed = y                       (every y == y[0]; a NaN makes it non-constant)
    w == 1:              the divisor is 1 (so every finite point smooths to 0, as in TensorBoard)

  On finite data this equals pandas ``ewm(alpha=1-w, adjust=True).mean()``.

``twema``: W&B's time-weighted EMA, its default, as W&B publishes it ("Smooth line plots",
https://docs.wandb.ai/guides/app/features/panels/line-plot/smoothing/), with parameter ``p`` in [0, 1]::

    s = min(sqrt(p), 0.999);  lastY = 0;  debias = 0
    for each point k:   dx = (x[k] - x[k-1]) / rangeOfX * VIEWPORT_SCALE      (dx = 0 for the first)
                        a = s**dx;  lastY = lastY*a + y[k];  debias = debias*a + 1;  smoothed = lastY / debias

  so each output is the average of the points so far weighted ``s**(1000 (x[k] - x[i]) / rangeOfX)``: the decay
  follows x, and lines of different densities smooth alike. The published sample leaves two constants open;
  here ``rangeOfX`` is the series' own x range (max minus min of its finite points; a zero range makes
  every dx 0) and ``VIEWPORT_SCALE`` is ``TWEMA_VIEWPORT_SCALE`` = 1000. x is taken in the order
  given (a series' steps ascend).

``window``: the trailing running average over ``m`` points (an integer >= 1), ``mean(y[k-m+1 .. k])`` over the
points that exist, as pandas ``Series.rolling(m, min_periods=1).mean()``; ``window-centred``: the window
``y[k - m//2 .. k + (m-1) - m//2]``, as ``rolling(m, center=True, min_periods=1)``. Both are sums of a running
total, ``(c[hi] - c[lo]) / (hi - lo)`` with ``c`` the cumulative sum of ``y - y[0]`` plus ``y[0]`` (rounding
grows as the total's magnitude, not the window's: well below 1e-9 relative on training curves).

``gaussian``: a Gaussian kernel average with standard deviation ``sigma`` in x units (uneven x too)::

    smoothed[k] = sum_i g(x[i] - x[k]) y[i] / sum_i g(x[i] - x[k]),   g(d) = exp(-(d / sigma)**2 / 2)

  over the points with ``|x[i] - x[k]| <= 4 sigma`` (``GAUSSIAN_TRUNCATE``; the weights left out are below
  exp(-8) = 3.4e-4 of the centre's). On x evenly spaced by ``h`` this is scipy's
  ``gaussian_filter1d(y, sigma/h, mode="constant", truncate=t) / gaussian_filter1d(ones, ...)`` with ``t`` such
  that ``int(t*sigma/h + 0.5) == floor(4 sigma/h)`` (the same points; scipy rounds its radius, we cut at 4 sigma).
  ``sigma == 0`` gives the points unchanged.

Every kind: NaN and ±inf values (and points whose x is not finite, for the kinds that read x) pass through
unchanged and are left out of the other points' averages, as the EMA always did: the averages run over the
finite points only (a window of ``m`` points is ``m`` finite points).
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple, Optional

import numpy as np

DEFAULT_SMOOTHING = 0.6  # TensorBoard's default slider position
KINDS = ("ema", "twema", "window", "window-centred", "gaussian")
TWEMA_VIEWPORT_SCALE = 1000.0  # W&B's VIEWPORT_SCALE, which its published sample leaves open
GAUSSIAN_TRUNCATE = 4.0        # the Gaussian's points: |x[i] - x[k]| <= 4 sigma
_WHAT = {"ema": "a weight in [0, 1]", "twema": "a weight in [0, 1]",
         "window": "a window length in points, an integer >= 1",
         "window-centred": "a window length in points, an integer >= 1",
         "gaussian": "sigma in x units, a number >= 0"}
_DEFAULT_PARAM = {"ema": DEFAULT_SMOOTHING, "twema": DEFAULT_SMOOTHING}

# Below this many points a Python loop beats building the blocked recurrence.
_BLOCK = 256


def ema(values, weight: float = DEFAULT_SMOOTHING) -> np.ndarray:
    """TensorBoard's smoothed series for ``values`` (float64 array, same length): kind ``ema`` above."""
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


class Smoothing(NamedTuple):
    """A smoothing: ``kind`` (one of ``KINDS``) and its ``param``, checked (``Smoothing.of``)."""
    kind: str
    param: float

    @classmethod
    def of(cls, kind: str, param: Optional[float] = None) -> "Smoothing":
        """``kind`` with ``param`` checked against its range (ema, twema: a weight in [0, 1]; window,
        window-centred: an integer >= 1; gaussian: sigma >= 0); ``param`` may be left out for ema and twema
        (0.6). ValueError names the problem."""
        if kind not in KINDS:
            raise ValueError("unknown smoothing kind %r (kinds: %s)" % (kind, ", ".join(KINDS)))
        if param is None:
            if kind not in _DEFAULT_PARAM:
                raise ValueError("smoothing %s needs its parameter, %s: %s:N" % (kind, _WHAT[kind], kind))
            param = _DEFAULT_PARAM[kind]
        try:
            value = float(param)
        except (TypeError, ValueError):
            value = float("nan")
        ok = math.isfinite(value)
        if kind in ("ema", "twema"):
            ok = ok and 0.0 <= value <= 1.0
        elif kind == "gaussian":
            ok = ok and value >= 0.0
        else:
            ok = ok and value >= 1.0 and value.is_integer()
            value = int(value) if ok else value
        if not ok:
            raise ValueError("smoothing %s's parameter is %s, got %r" % (kind, _WHAT[kind], param))
        return cls(kind, value)

    @property
    def raw(self) -> bool:
        """True when the smoothing leaves the points as they are (weight 0, a window of 1, sigma 0)."""
        return self.param == (1 if self.kind in ("window", "window-centred") else 0)

    def __str__(self) -> str:
        return "%s:%s" % (self.kind, "%g" % self.param if isinstance(self.param, float) else self.param)


def parse_smoothing(text: str) -> Smoothing:
    """``"KIND:PARAM"`` (``twema:0.6``, ``window:25``, ``window-centred:9``, ``gaussian:2.5``, ``ema:0.6``; ``ema``
    and ``twema`` alone take 0.6) as a checked ``Smoothing``; ValueError names the problem (a bad kind lists
    the kinds, a bad parameter says its range)."""
    kind, sep, param = str(text).strip().partition(":")
    kind = kind.strip().lower()
    if sep and not param.strip():
        raise ValueError("smoothing %r has no parameter after ':' (KIND:PARAM, e.g. twema:0.6)" % text)
    return Smoothing.of(kind, param.strip() if sep else None)


def smoothing_of(weight: float = DEFAULT_SMOOTHING, smooth: "Optional[str | Smoothing]" = None) -> Smoothing:
    """The smoothing a view draws: ``smooth`` (``"KIND:PARAM"`` or a Smoothing) when given, else TensorBoard's
    EMA with ``weight`` (the views' ``smoothing`` option)."""
    if smooth is None:
        return Smoothing.of("ema", weight)
    return smooth if isinstance(smooth, Smoothing) else parse_smoothing(smooth)


def smooth(x, y, kind: str = "ema", param: Optional[float] = None) -> np.ndarray:
    """``y`` smoothed by ``kind`` with ``param`` (see the module's docstring for each formula), as float64 of
    ``y``'s length. ``x``: the points' x values (read by twema and gaussian; ``None`` means 0, 1, 2, ...).
    Non-finite values (and points of non-finite x, for twema and gaussian) pass through unchanged."""
    kind, param = Smoothing.of(kind, param)
    y = np.asarray(y, dtype=np.float64).ravel()
    if kind == "ema":
        return ema(y, param)
    out = y.copy()
    ok = np.isfinite(y)
    if kind in ("twema", "gaussian"):
        x = np.arange(y.size, dtype=np.float64) if x is None else np.asarray(x, dtype=np.float64).ravel()
        if x.shape != y.shape:
            raise ValueError("x and y differ in length: %d and %d" % (x.size, y.size))
        ok &= np.isfinite(x)
        xs = x[ok]
    ys = y[ok]
    if ys.size == 0:
        return out
    if kind == "twema":
        out[ok] = _twema(xs, ys, param)
    elif kind == "gaussian":
        out[ok] = _gaussian(xs, ys, param) if param > 0 else ys
    else:
        out[ok] = _window(ys, param, centred=kind == "window-centred")
    return out


def _twema(x: np.ndarray, y: np.ndarray, p: float) -> np.ndarray:
    """W&B's time-weighted EMA of finite points (the loop of its published sample, decays precomputed)."""
    s = min(math.sqrt(p), 0.999)
    span = float(x.max() - x.min())
    dx = np.diff(x, prepend=x[0])
    if span > 0 and math.isfinite(span):
        dx = dx / span * TWEMA_VIEWPORT_SCALE
    else:
        dx = np.zeros_like(dx)
    decay = (s ** dx).tolist()
    out = np.empty(y.size)
    last = debias = 0.0
    for k, (a, v) in enumerate(zip(decay, y.tolist())):
        last = last * a + v
        debias = debias * a + 1.0
        out[k] = last / debias
    return out


def _window(y: np.ndarray, m: int, centred: bool) -> np.ndarray:
    """Mean of each point's window of ``m`` points (trailing or centred), from a running total."""
    n = y.size
    base = y[0]
    total = np.concatenate([[0.0], np.cumsum(y - base)])
    k = np.arange(n)
    if centred:
        lo, hi = np.maximum(k - m // 2, 0), np.minimum(k + (m - 1) - m // 2 + 1, n)
    else:
        lo, hi = np.maximum(k + 1 - m, 0), k + 1
    return (total[hi] - total[lo]) / (hi - lo) + base


def _gaussian(x: np.ndarray, y: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian-weighted mean over the points within ``GAUSSIAN_TRUNCATE`` sigma of each point's x; each
    point's sums run over its neighbours in ascending x, as smoothing.js sums them (on evenly spaced x, as steps
    are, the same sums by ``np.convolve`` with one kernel: O(n·window) in C, equal but for rounding)."""
    order = None if np.all(x[1:] >= x[:-1]) else np.argsort(x, kind="stable")
    xs, ys = (x, y) if order is None else (x[order], y[order])
    reach = GAUSSIAN_TRUNCATE * sigma
    step = xs[1] - xs[0] if xs.size > 1 else 0.0
    if step > 0 and np.all(xs[1:] - xs[:-1] == step):   # evenly spaced (steps): one kernel, np.convolve
        r = int(reach // step)
        while (r + 1) * step <= reach:
            r += 1
        while r > 0 and r * step > reach:
            r -= 1
        d = (np.arange(-r, r + 1) * step) / sigma
        kernel = np.exp(-0.5 * d * d)
        out = (np.convolve(ys, kernel)[r:r + xs.size] / np.convolve(np.ones(xs.size), kernel)[r:r + xs.size])
        return out if order is None else out[np.argsort(order)]
    lo = np.searchsorted(xs, xs - reach, "left")
    hi = np.searchsorted(xs, xs + reach, "right")
    num = np.zeros(xs.size)
    den = np.zeros(xs.size)
    last = xs.size - 1
    for j in range(int((hi - lo).max())):
        i = lo + j
        inside = i < hi
        i = np.minimum(i, last)
        d = (xs[i] - xs) / sigma
        w = np.where(inside, np.exp(-0.5 * d * d), 0.0)
        num += w * ys[i]
        den += w
    out = num / den
    if order is not None:
        out[order] = out.copy()
    return out


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
