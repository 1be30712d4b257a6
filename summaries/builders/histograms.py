"""Histogram summaries (``Summary.Value.histo``), bucketed as tensorboardX and TensorFlow do.

A ``HistogramProto`` stores ``min, max, num, sum, sum_squares`` of the values and, for bucket i,
``bucket[i]`` = number of values v with ``bucket_limit[i-1] < v <= bucket_limit[i]`` (TensorBoard
reads ``bucket_limit[i]`` as the right edge of bucket i; the left edge of the first bucket is the
previous limit, so an empty leading bucket carries it).
"""
from __future__ import annotations

import functools
import sys
from typing import Any, Optional, Sequence, Union

import numpy as np

from tfevents.proto import summary_pb2

from .common import as_numeric_array, check_int, clean_tag, require_finite, single_value

__all__ = ["histogram", "histogram_raw", "default_bucket_edges", "make_histogram_proto", "counts_in_edges"]

Bins = Union[str, int, Sequence[float], np.ndarray]

_DBL_MAX = sys.float_info.max
_CHUNK = 1 << 16        # values bucketed at a time


@functools.lru_cache(maxsize=1)
def default_bucket_edges() -> np.ndarray:
    """TensorFlow's default histogram bucket edges (``histogram.cc``, tensorboardX's default_bins).

    ``e_k = 1e-12 * 1.1**k`` for every k with ``e_k < 1e20``, mirrored to the negatives and with
    0 in the middle: ``[-e_K, ..., -e_0, 0, e_0, ..., e_K]`` (1549 edges). The edges are built by
    repeated multiplication, as TensorFlow and tensorboardX build them, so they agree bit for bit.
    """
    positive = []
    edge = 1e-12
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    edges = np.array([-e for e in reversed(positive)] + [0.0] + positive)
    edges.setflags(write=False)
    return edges


def _group_bins(counts: np.ndarray, limits: np.ndarray, max_bins: int):
    """Merge runs of ``k = ceil(len(counts) / max_bins)`` adjacent bins so at most max_bins remain
    (the last group is padded with empty bins). Same grouping as tensorboardX when
    ``len(counts)`` is a multiple of ``max_bins``; tensorboardX can exceed max_bins otherwise."""
    k = -(-counts.size // max_bins)
    pad = (-counts.size) % k
    if pad:
        counts = np.concatenate([counts, np.zeros(pad, counts.dtype)])
    grouped = counts.reshape(-1, k).sum(axis=1)
    new_limits = np.empty(grouped.size + 1, limits.dtype)
    new_limits[:-1] = limits[:-1:k]
    new_limits[-1] = limits[-1]
    return grouped, new_limits


def _trim_to_support(counts: np.ndarray, limits: np.ndarray):
    """Keep the buckets from the first to the last non-empty one, plus one empty bucket in front
    whose right limit is the left edge of the first non-empty bucket (tensorboardX's compaction).
    ``limits`` has ``len(counts) + 1`` edges; returns (bucket counts, bucket right limits)."""
    nonzero = np.flatnonzero(counts)
    first, last = int(nonzero[0]), int(nonzero[-1])
    if first == 0:
        kept = np.concatenate([[0], counts[: last + 1]])
    else:
        kept = counts[first - 1: last + 1]
    return kept, limits[first: last + 2]


def _tensorflow_edge_index(values: np.ndarray) -> np.ndarray:
    """``#{edges <= x}`` for TensorFlow's default edges ``[-p_{K-1}..-p_0, 0, p_0..p_{K-1}]``, from logarithms.

    With ``a = |x|`` and ``g`` such that ``p_g <= a < p_{g+1}`` (``p_{-1} = 0``, ``p_K = inf``):
    ``#{p_j <= a} = g + 1``, ``#{p_j < a} = g + 1 - [a == p_g]``, so the index is ``K + 1 + g + 1`` for
    ``x >= 0`` and ``K - #{p_j < a}`` for ``x < 0``. ``g`` is first guessed as
    ``floor(log(a / 1e-12) / log(1.1))``, then moved until the inequality holds against the edges themselves
    (the guess is off by at most one: the edges are ``1e-12 * 1.1**k`` to a few ulps), so the buckets are
    exactly numpy's. Elementwise numpy work that releases the GIL, unlike a binary search per value.
    """
    edges = default_bucket_edges()
    k = edges.size // 2
    positive = edges[k + 1:]
    bounds = np.concatenate([[0.0], positive, [np.inf]])     # bounds[g + 1] = p_g, bounds[g + 2] = p_{g+1}
    a = np.abs(values)
    with np.errstate(divide="ignore"):
        guess = np.floor((np.log(a) - np.log(positive[0])) / np.log(1.1))
    g = np.clip(guess, -1, k - 1).astype(np.intp)
    for _ in range(4):
        lower, upper = bounds[g + 1], bounds[g + 2]
        too_high, too_low = a < lower, a >= upper
        if not (too_high.any() or too_low.any()):
            break
        g -= too_high
        g += too_low
    else:
        raise AssertionError("histogram bucketing did not settle")   # never: the guess is within one bucket
    at_edge = (g >= 0) & (a == bounds[g + 1])
    return np.where(values >= 0, k + 2 + g, k - 1 - g + at_edge)


def counts_in_edges(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """``np.histogram(values, bins=edges)[0]`` for increasing ``edges``, without sorting ``values``:

        i(x) = #{edges <= x},  x == edges[-1] counted in the last bucket,
        counts[k] = #{x : i(x) = k + 1},  k = 0 .. m-2

    i.e. bucket k holds ``edges[k] <= x < edges[k+1]``, the last one also ``x == edges[-1]``, as numpy's.
    ``i`` comes from logarithms for TensorFlow's default edges (``_tensorflow_edge_index``), else from
    ``searchsorted``. numpy sorts the values for uneven edges; this is several times faster on 1M values.
    """
    edge_index = _tensorflow_edge_index if edges is default_bucket_edges() else (
        lambda chunk: np.searchsorted(edges, chunk, side="right"))
    counts = np.zeros(edges.size + 1, np.int64)
    for start in range(0, values.size, _CHUNK):      # chunks stay in cache and let other threads take the GIL
        chunk = values[start:start + _CHUNK]
        index = edge_index(chunk)
        index[chunk == edges[-1]] = edges.size - 1
        counts += np.bincount(index, minlength=edges.size + 1)
    return counts[1:edges.size]


def make_histogram_proto(values: np.ndarray, bins: Bins = "tensorflow",
                         max_bins: Optional[int] = None, name: str = "values") -> summary_pb2.HistogramProto:
    """HistogramProto of finite float64 ``values`` (any shape; flattened)."""
    flat = values.reshape(-1)
    if isinstance(bins, str) and bins == "tensorflow":
        limits = default_bucket_edges()
        counts = counts_in_edges(flat, limits)
    elif isinstance(bins, str):  # numpy's estimators: 'auto', 'fd', 'sturges', ...
        try:
            counts, limits = np.histogram(flat, bins=bins)
        except ValueError as err:
            raise ValueError("bins=%r: %s" % (bins, err)) from None
    elif isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_)):
        counts, limits = np.histogram(flat, bins=check_int(bins, "bins", minimum=1))
    else:
        edges = as_numeric_array(bins, "bins").astype(np.float64)
        if edges.ndim != 1 or edges.size < 2:
            raise ValueError("bins must be 'tensorflow', an int or a 1-D sequence of at least 2 edges, "
                             "got shape %s" % (edges.shape,))
        require_finite(edges, "bins")
        if np.any(np.diff(edges) <= 0):
            raise ValueError("bins edges must be strictly increasing")
        counts, limits = counts_in_edges(flat, edges), edges
    if max_bins is not None:
        max_bins = check_int(max_bins, "max_bins", minimum=1)
        if counts.size > max_bins:
            counts, limits = _group_bins(counts, limits, max_bins)
    if isinstance(bins, str) and bins == "tensorflow":
        # TensorFlow's bucket list ends in +-DBL_MAX, so values beyond +-1e20 still land in a bucket.
        below = np.count_nonzero(flat < limits[0])
        above = np.count_nonzero(flat > limits[-1])
        counts = np.concatenate([[below], counts, [above]])
        limits = np.concatenate([[-_DBL_MAX], limits, [_DBL_MAX]])
    if not np.any(counts):
        raise ValueError("%s: no value falls inside the bucket edges [%r, %r]"
                         % (name, float(limits[0]), float(limits[-1])))
    counts, limits = _trim_to_support(counts, limits)
    return summary_pb2.HistogramProto(
        min=flat.min(), max=flat.max(), num=flat.size, sum=flat.sum(), sum_squares=flat.dot(flat),
        bucket_limit=limits.tolist(), bucket=counts.tolist())


def histogram(tag: str, values: Any, bins: Bins = "tensorflow",
              max_bins: Optional[int] = None) -> summary_pb2.Summary:
    """Summary with the histogram of ``values`` (any shape, real numbers; flattened).

    ``bins``: ``'tensorflow'`` (default) = TensorFlow's exponential buckets
    (:func:`default_bucket_edges`, extended by +-DBL_MAX as TF's ``histogram.cc``); an int n = n
    equal-width buckets over ``[min, max]``; a 1-D increasing sequence = the bucket edges (values
    outside them count in min/max/num/sum but in no bucket); or one of numpy's estimator names
    (``'auto'``, ``'fd'``, ...). ``max_bins`` merges adjacent buckets so at most that many remain.
    Only the buckets from the first to the last non-empty one are kept, plus one empty bucket in
    front (carrying the left edge), as tensorboardX writes them: for the same input the proto
    equals tensorboardX's ``histogram(tag, values, bins)``.

    NaN and +-Inf are refused with a ValueError (TensorFlow's histogram op fails on them too;
    tensorboardX would write NaN min/max/sum or fail inside numpy). Empty ``values`` raise
    ValueError, non-numeric ones TypeError.
    """
    tag = clean_tag(tag)
    array = as_numeric_array(values, "values")
    if array.size == 0:
        raise ValueError("histogram %r: values is empty (shape %s)" % (tag, array.shape))
    array = array.astype(np.float64)
    require_finite(array, "histogram %r: values" % tag)
    return single_value(tag, histo=make_histogram_proto(array, bins, max_bins, name="histogram %r: values" % tag))


def histogram_raw(tag: str, min: float, max: float, num: float, sum: float, sum_squares: float,
                  bucket_limits: Sequence[float], bucket_counts: Sequence[float]) -> summary_pb2.Summary:
    """Summary with a histogram given by its statistics and buckets (tensorboardX's
    ``add_histogram_raw``): ``bucket_counts[i]`` values fall in ``(bucket_limits[i-1], bucket_limits[i]]``.

    Checks: the two bucket arrays are 1-D, non-empty, of equal length; limits increase; counts
    are >= 0; ``num`` >= 0; ``min <= max`` when num > 0; nothing is NaN (infinities are kept: a
    sum of squares may overflow, TensorFlow's outer limits may be given as +-inf).
    """
    tag = clean_tag(tag)
    stats = {}
    for name, value in (("min", min), ("max", max), ("num", num), ("sum", sum), ("sum_squares", sum_squares)):
        array = as_numeric_array(value, name)
        if array.size != 1:
            raise ValueError("%s must be a single number, got shape %s" % (name, array.shape))
        stats[name] = float(array.reshape(()))
        if stats[name] != stats[name]:
            raise ValueError("histogram_raw %r: %s is NaN" % (tag, name))
    limits = as_numeric_array(bucket_limits, "bucket_limits").astype(np.float64)
    counts = as_numeric_array(bucket_counts, "bucket_counts").astype(np.float64)
    for name, array in (("bucket_limits", limits), ("bucket_counts", counts)):
        if np.isnan(array).any():
            raise ValueError("histogram_raw %r: %s contains NaN" % (tag, name))
    if limits.ndim != 1 or counts.ndim != 1:
        raise ValueError("bucket_limits and bucket_counts must be 1-D, got shapes %s and %s"
                         % (limits.shape, counts.shape))
    if limits.size == 0 or limits.size != counts.size:
        raise ValueError("bucket_limits and bucket_counts must be non-empty and of equal length, got %d and %d"
                         % (limits.size, counts.size))
    if np.any(np.diff(limits) <= 0):
        raise ValueError("bucket_limits must be strictly increasing")
    if np.any(counts < 0) or stats["num"] < 0:
        raise ValueError("bucket_counts and num must be >= 0")
    if stats["num"] > 0 and stats["min"] > stats["max"]:
        raise ValueError("min (%r) must be <= max (%r)" % (stats["min"], stats["max"]))
    histo = summary_pb2.HistogramProto(bucket_limit=limits.tolist(), bucket=counts.tolist(), **stats)
    return single_value(tag, histo=histo)
