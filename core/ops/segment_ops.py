"""Segment reductions, partition/stitch, counting: segment_*, unsorted_segment_*, dynamic_partition, bincount, ...

Sorted segment ops (``SegmentSum/Mean/Max``) take a 1-D, non-decreasing, non-negative ``segment_ids`` whose
length is ``data``'s first dimension and output ``segment_ids[-1] + 1`` rows (empty segments are 0). Unsorted
ones take ``segment_ids`` shaped like a prefix of ``data``, drop negative ids and output ``num_segments`` rows
(an empty segment's max is the dtype's lowest value, as TF's). Gradients follow TF's ``math_grad.py`` /
``data_flow_grad.py``. ``unsorted_segment_sum`` itself lives in ``array_ops``.

Names in ``__all__`` are exported as ``tf.<name>``."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, constant, constant_value, convert_to_tensor, register
from . import array_ops, math_ops, reduction_ops
from .array_ops import gather, gather_drop_negatives, unsorted_segment_sum
from .manip_ops import scatter_nd

__all__ = ["segment_sum", "segment_mean", "segment_max", "unsorted_segment_mean", "unsorted_segment_max",
           "dynamic_partition", "dynamic_stitch", "histogram_fixed_width", "bincount", "confusion_matrix"]


def _invalid(message: str) -> InvalidArgumentError:
    """A bad value found while running (TF's kernels raise InvalidArgumentError; the Session names the op)."""
    return InvalidArgumentError(None, message)


def _lowest(dtype: np.dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _ids_tensor(ids: Any) -> Tensor:
    return convert_to_tensor(ids, dtype=None if isinstance(ids, Tensor) else dtypes.int32, name="segment_ids")


# ---- sorted segment reductions


def _sorted_ids(data, ids):
    """Validate TF's rules for sorted segment ids; the number of output rows."""
    if ids.ndim != 1 or ids.shape[0] != data.shape[0]:
        raise _invalid("segment_ids should be the same size as dimension 0 of input, got shapes %s and %s"
                       % (ids.shape, data.shape))
    if ids.size and (ids[0] < 0 or np.any(np.diff(ids) < 0)):
        raise _invalid("segment ids are not increasing" if ids[0] >= 0 else "segment ids must be >= 0")
    return int(ids[-1]) + 1 if ids.size else 0


def _segment_sum_forward(data, ids):
    out = np.zeros((_sorted_ids(data, ids),) + data.shape[1:], dtype=data.dtype)
    np.add.at(out, ids, data)
    return out


def _segment_counts(ids, n):
    return np.bincount(ids, minlength=n)[:n] if ids.size else np.zeros(n, np.int64)


def _segment_mean_forward(data, ids):
    total = _segment_sum_forward(data, ids)
    count = np.maximum(_segment_counts(ids, total.shape[0]), 1).reshape((-1,) + (1,) * (data.ndim - 1))
    if data.dtype.kind in "iu":
        return (np.trunc(total / count)).astype(data.dtype)
    return (total / count).astype(data.dtype, copy=False)


def _segment_max_forward(data, ids):
    n = _sorted_ids(data, ids)
    out = np.full((n,) + data.shape[1:], _lowest(data.dtype), dtype=data.dtype)
    np.maximum.at(out, ids, data)
    out[_segment_counts(ids, n) == 0] = 0          # TF's sorted SegmentMax: an empty segment is 0
    return out


def _sorted_shape(op):
    dims = op.inputs[0].shape.dims
    return TensorShape(None) if dims is None else TensorShape([None] + list(dims[1:]))


def _segment_mean_grad(op, g):
    """TF: ``gather(g / segment_sum(ones, ids), ids)``."""
    data, ids = op.inputs
    rank = data.shape.ndims
    if rank is None:
        raise NotImplementedError("the gradient of segment_mean needs data of known rank")
    counts = segment_sum(array_ops.ones_like(ids, dtype=g.dtype), ids)
    counts = array_ops.reshape(counts, [-1] + [1] * (rank - 1))
    return [gather(g / counts, ids), None]


def _segment_max_grad(op, g):
    """TF: the gradient of a segment goes to its maximal entries, split evenly among ties."""
    data, ids = op.inputs
    is_selected = math_ops.equal(data, gather(op.outputs[0], ids))
    num_selected = segment_sum(math_ops.cast(is_selected, g.dtype), ids)
    return [math_ops.where(is_selected, gather(g / num_selected, ids), array_ops.zeros_like(data)), None]


_SEGMENT_ATTRS = dict(type_attrs={"Tindices": 1})
register("SegmentSum", _segment_sum_forward, lambda op, g: [gather(g, op.inputs[1]), None], _sorted_shape,
         **_SEGMENT_ATTRS)
register("SegmentMean", _segment_mean_forward, _segment_mean_grad, _sorted_shape, **_SEGMENT_ATTRS)
register("SegmentMax", _segment_max_forward, _segment_max_grad, _sorted_shape, **_SEGMENT_ATTRS)


def _sorted_segment(op_type: str, doc: str):
    def fn(data: Any, segment_ids: Any, name: Optional[str] = None) -> Tensor:
        with name_scope(name, op_type) as scope:
            data = convert_to_tensor(data, name="data")
            return apply_op(op_type, [data, _ids_tensor(segment_ids)], name=scope)
    fn.__doc__ = doc
    return fn


segment_sum = _sorted_segment("SegmentSum", "``output[i] = sum_{j: segment_ids[j] == i} data[j]`` (sorted ids).")
segment_mean = _sorted_segment("SegmentMean", "The mean of each segment of ``data`` (sorted ids); empty: 0.")
segment_max = _sorted_segment("SegmentMax", "The max of each segment of ``data`` (sorted ids); empty: 0.")


# ---- unsorted segment reductions


def _unsorted_max_forward(data, ids, num_segments):
    n = int(num_segments)
    if np.any(ids >= n):
        bad = int(np.flatnonzero(ids.reshape(-1) >= n)[0])
        raise _invalid("segment_ids[%d] = %d is out of range [0, %d)" % (bad, ids.reshape(-1)[bad], n))
    out = np.full((n,) + data.shape[ids.ndim:], _lowest(data.dtype), dtype=data.dtype)
    keep = ids >= 0
    np.maximum.at(out, ids[keep], data[keep])
    return out


_unsorted_shape = array_ops.unsorted_segment_shape


def _unsorted_max_grad(op, g):
    data, ids, num_segments = op.inputs
    is_positive = math_ops.greater_equal(ids, array_ops.zeros_like(ids))
    kept_rows = math_ops.where(is_positive, array_ops.ones_like(data), array_ops.zeros_like(data)) > 0
    is_selected = math_ops.logical_and(math_ops.equal(data, gather_drop_negatives(op.outputs[0], ids)), kept_rows)
    num_selected = unsorted_segment_sum(math_ops.cast(is_selected, g.dtype), ids, num_segments)
    gathered = gather_drop_negatives(g / num_selected, ids)
    return [math_ops.where(is_selected, gathered, array_ops.zeros_like(gathered)), None, None]


register("UnsortedSegmentMax", _unsorted_max_forward, _unsorted_max_grad, _unsorted_shape,
         type_attrs={"Tindices": 1, "Tnumsegments": 2})


def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any, name: Optional[str] = None) -> Tensor:
    """``output[i] = max_{j: segment_ids[j] == i} data[j]``; negative ids dropped, empty segments the dtype's
    lowest value; the gradient is split evenly among tied maxima (TF)."""
    with name_scope(name, "UnsortedSegmentMax") as scope:
        data = convert_to_tensor(data, name="data")
        n = convert_to_tensor(num_segments, dtype=None if isinstance(num_segments, Tensor) else dtypes.int32,
                              name="num_segments")
        return apply_op("UnsortedSegmentMax", [data, _ids_tensor(segment_ids), n], name=scope)


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any, name: Optional[str] = None) -> Tensor:
    """``unsorted_segment_sum(data) / max(count, 1)``, the counts reshaped to ``[num_segments, 1, ...]`` to
    broadcast over the trailing dims (TF's composite: empty segments are 0, negative ids dropped)."""
    with name_scope(name, "UnsortedSegmentMean"):
        data = convert_to_tensor(data, name="data")
        ids = convert_to_tensor(segment_ids, dtype=None if isinstance(segment_ids, Tensor) else dtypes.int32,
                                name="Const")
        n = convert_to_tensor(num_segments, dtype=None if isinstance(num_segments, Tensor) else dtypes.int32,
                              name="Const")
        ids_shape = array_ops.shape(ids)
        with name_scope(None, "ones") as scope:
            ones = array_ops.fill(ids_shape, constant(1, dtype=data.dtype, name="Const"), name=scope)
        counts = unsorted_segment_sum(ones, ids, n)
        extra = array_ops.rank(data) - array_ops.rank(ids)
        with name_scope(None, "ones") as scope:
            trailing = array_ops.fill(array_ops.stack([extra], name="packed"), constant(1, dtype=dtypes.int32,
                                                                                       name="Const"), name=scope)
        counts = array_ops.reshape(counts, array_ops.concat([n[None], trailing], 0))
        if data.shape.ndims is not None and ids.shape.ndims is not None:
            rows = constant_value(n)
            counts.set_shape([None if rows is None else int(rows)] + [1] * (data.shape.ndims - ids.shape.ndims))
        total = unsorted_segment_sum(data, ids, n)
        return total / math_ops.maximum(counts, 1.0)


# ---- dynamic partition / stitch


def _check_range(values, n, what):
    bad = np.flatnonzero((values.reshape(-1) < 0) | (values.reshape(-1) >= n))
    if bad.size:
        raise _invalid("%s[%d] = %d is not in [0, %d)" % (what, bad[0], values.reshape(-1)[bad[0]], n))


def _partition_forward(data, partitions, num_partitions):
    _check_range(partitions, num_partitions, "partitions")
    if data.shape[:partitions.ndim] != partitions.shape:
        raise _invalid("data.shape must start with partitions.shape, got data.shape = %s, partitions.shape = %s"
                       % (data.shape, partitions.shape))
    return tuple(data[partitions == p] for p in range(num_partitions))


def _partition_shape(op):
    dims, rank = op.inputs[0].shape.dims, op.inputs[1].shape.ndims
    shape = TensorShape(None) if dims is None or rank is None else TensorShape([None] + list(dims[rank:]))
    return [shape] * op.attrs["num_partitions"]


def _partition_grad(op, *grads):
    """TF: stitch the output gradients back at the positions each row came from."""
    data, partitions = op.inputs
    grads = [g if g is not None else array_ops.zeros_like(o) for g, o in zip(grads, op.outputs)]
    prefix = array_ops.shape(partitions)
    original = array_ops.reshape(array_ops.range_(0, reduction_ops.reduce_prod(prefix), 1), prefix)
    positions = dynamic_partition(original, partitions, op.attrs["num_partitions"])
    stitched = dynamic_stitch(positions, grads)
    return [array_ops.reshape(stitched, array_ops.shape(data)), None]


register("DynamicPartition", _partition_forward, _partition_grad, _partition_shape,
         num_outputs=lambda attrs: attrs["num_partitions"])


def dynamic_partition(data: Any, partitions: Any, num_partitions: int, name: Optional[str] = None) -> list:
    """``outputs[i] = data[partitions == i]`` for i in ``range(num_partitions)`` (rows in order)."""
    with name_scope(name, "DynamicPartition") as scope:
        data = convert_to_tensor(data, name="data")
        partitions = convert_to_tensor(partitions, dtype=None if isinstance(partitions, Tensor) else dtypes.int32,
                                       name="partitions")
        out = apply_op("DynamicPartition", [data, partitions], dict(num_partitions=int(num_partitions)),
                       name=scope)
        return out if isinstance(out, list) else [out]


def _stitch_forward(*args):
    n = len(args) // 2
    indices, data = args[:n], args[n:]
    flat_idx = np.concatenate([np.reshape(i, [-1]) for i in indices]).astype(np.int64)
    rest = data[0].shape[np.ndim(indices[0]):]
    flat_data = np.concatenate([np.reshape(d, (-1,) + rest) for d in data])
    if np.any(flat_idx < 0):
        raise _invalid("indices must be non-negative, got %d" % flat_idx.min())
    out = np.zeros(((int(flat_idx.max()) + 1) if flat_idx.size else 0,) + rest, dtype=data[0].dtype)
    out[flat_idx] = flat_data                      # a later index wins, as TF's
    return out


def _stitch_shape(op):
    n = len(op.inputs) // 2
    indices, data = op.inputs[:n], op.inputs[n:]
    if data[0].shape.dims is None or indices[0].shape.ndims is None:
        return TensorShape(None)
    values = [constant_value(i) for i in indices]
    rows = None
    if all(v is not None for v in values):
        rows = max((int(np.max(v)) + 1 for v in values if np.size(v)), default=0)
    return TensorShape([rows] + list(data[0].shape.dims[indices[0].shape.ndims:]))


def _stitch_grad(op, g):
    n = len(op.inputs) // 2
    return [None] * n + [gather(g, math_ops.cast(i, dtypes.int32)) for i in op.inputs[:n]]


register("DynamicStitch", _stitch_forward, _stitch_grad, _stitch_shape, dtype=lambda op: op.inputs[-1].dtype)


def dynamic_stitch(indices: list, data: list, name: Optional[str] = None) -> Tensor:
    """``merged[indices[m][i]] = data[m][i]`` (later entries win for repeated indices; rows no index names are
    zero)."""
    with name_scope(name, "DynamicStitch") as scope:
        indices = [convert_to_tensor(i, dtype=None if isinstance(i, Tensor) else dtypes.int32, name="indices_%d" % k)
                   for k, i in enumerate(indices)]
        data = [convert_to_tensor(d, name="data_%d" % k) for k, d in enumerate(data)]
        return apply_op("DynamicStitch", indices + data, dict(N=len(data), T=data[0].dtype), name=scope)


# ---- counting: histogram_fixed_width, bincount, confusion_matrix


def _histogram_forward(values, value_range, nbins, dtype):
    if np.isnan(values).any():
        raise _invalid("Histogram values must not contain NaN")
    lo, hi = value_range
    n = int(nbins)
    if n <= 0 or not hi > lo:
        raise _invalid("nbins should be a positive number and value_range[0] < value_range[1], but got nbins %d, "
                       "value_range %s" % (n, value_range))
    step = (np.float64(hi) - np.float64(lo)) / n
    shifted = (np.maximum(values, lo) - lo).astype(np.float64)
    bins = np.minimum((shifted / step).astype(np.int64), n - 1)
    return np.bincount(bins.reshape(-1), minlength=n).astype(dtype.as_numpy_dtype)


register("HistogramFixedWidth", _histogram_forward, None,
         lambda op: TensorShape([None if constant_value(op.inputs[2]) is None else int(constant_value(op.inputs[2]))]),
         dtype=lambda op: op.attrs["dtype"])


def histogram_fixed_width(values: Any, value_range: Any, nbins: Any = 100, dtype: Any = dtypes.int32,
                          name: Optional[str] = None) -> Tensor:
    """Counts of ``values`` in ``nbins`` equal bins over ``value_range``; values below / above fall in the first /
    last bin: ``bin = clip(floor((v - lo) / ((hi - lo) / nbins)), 0, nbins - 1)``."""
    with name_scope(name, "histogram_fixed_width") as scope:
        values = convert_to_tensor(values, name="values")
        value_range = convert_to_tensor(value_range, dtype=values.dtype, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        return apply_op("HistogramFixedWidth", [values, value_range, nbins], dict(dtype=dtypes.as_dtype(dtype)),
                        name=scope)


def _dense_bincount_forward(arr, size, weights, binary_output=False):
    if np.any(arr < 0):
        raise _invalid("Input arr must be non-negative!")
    n = int(size)
    keep = arr < n
    out = np.zeros(n, dtype=weights.dtype)
    np.add.at(out, arr[keep], weights[keep] if weights.size else 1)
    return out


register("DenseBincount", _dense_bincount_forward, None,
         lambda op: TensorShape([None if constant_value(op.inputs[1]) is None else int(constant_value(op.inputs[1]))]),
         dtype=lambda op: op.inputs[2].dtype)


def bincount(arr: Any, weights: Any = None, minlength: Any = None, maxlength: Any = None,
             dtype: Any = dtypes.int32) -> Tensor:
    """``out[i]`` = number of times (or total weight with which) ``i`` occurs in ``arr``, for ``i`` below
    ``max(arr) + 1`` clipped to ``[minlength, maxlength]`` (TF1 ``tf.bincount``)."""
    with name_scope("bincount"):
        arr = convert_to_tensor(arr, name="arr")
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
        if not arr.dtype.is_integer:
            arr = math_ops.cast(arr, dtypes.int32)
        nonempty = math_ops.greater(array_ops.size(arr), 0)
        size = math_ops.cast(nonempty, arr.dtype) * (reduction_ops.reduce_max(arr) + 1)
        if minlength is not None:
            size = math_ops.maximum(convert_to_tensor(minlength, dtype=arr.dtype, name="minlength"), size)
        if maxlength is not None:
            size = math_ops.minimum(convert_to_tensor(maxlength, dtype=arr.dtype, name="maxlength"), size)
        if weights is None:
            weights = constant(np.zeros(0, dtypes.as_dtype(dtype).as_numpy_dtype), name="Const")
        else:
            weights = array_ops.reshape(weights, [-1])
        arr = array_ops.reshape(arr, [-1])
        return apply_op("DenseBincount", [arr, size, weights],
                        dict(T=weights.dtype, Tidx=arr.dtype, binary_output=False), name="DenseBincount")


def confusion_matrix(labels: Any, predictions: Any, num_classes: Any = None, dtype: Any = dtypes.int32,
                     name: Optional[str] = None, weights: Any = None) -> Tensor:
    """``cm[labels[i], predictions[i]] += weights[i]`` (1 without weights), ``num_classes`` by default
    ``max(max(labels), max(predictions)) + 1``; negative or out-of-range labels/predictions are an error."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "confusion_matrix"):
        predictions = math_ops.cast(convert_to_tensor(predictions, name="predictions"), dtypes.int64)
        labels = math_ops.cast(convert_to_tensor(labels, name="labels"), dtypes.int64)
        if num_classes is None:
            n = math_ops.maximum(reduction_ops.reduce_max(predictions), reduction_ops.reduce_max(labels)) + 1
            shape = array_ops.stack([n, n])
        else:
            n = math_ops.cast(num_classes, dtypes.int64) if isinstance(num_classes, Tensor) else int(num_classes)
            shape = array_ops.stack([n, n]) if isinstance(n, Tensor) else \
                constant([n, n], dtype=dtypes.int64, name="stack")
        indices = array_ops.stack([labels, predictions], axis=1)
        values = array_ops.ones_like(predictions, dtype=dtype) if weights is None else \
            math_ops.cast(convert_to_tensor(weights, name="weights"), dtype)
        return scatter_nd(indices, values, shape)
