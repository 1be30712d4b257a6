"""TF's ``array_ops``: the ops that join, split and gather tensors (concat, stack, unstack, split; gather and its
sparse gradient, unsorted_segment_sum, what an ``IndexedSlices`` densifies to; a list of tensors auto-packed), on
top of ``shape_ops`` (reshape, transpose, shape queries, fill, tile...), whose ops this module gives under TF's
``array_ops`` names too. Concat's gradient gathers and gather's gradient concatenates, so the two stay together."""
from __future__ import annotations

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import (IndexedSlices, apply_op, constant, constant_value, convert_to_tensor, register,
                                  register_tensor_conversion)
from ..framework.errors import InvalidArgumentError
from . import math_ops
from .shape_ops import (_i32, broadcast_to, expand_dims, fill, identity, no_op, one_hot, ones,  # noqa: F401
                        ones_like, range_, rank, reshape, shape, size, squeeze, stop_gradient, tile, transpose,
                        zeros, zeros_like)   # (TF's array_ops names of the shape ops)


# ---- concat, stack, unstack, split


def _concat_shape(op):
    *values, axis = op.inputs
    axis = constant_value(axis)
    shapes = [v.shape.dims for v in values]
    if axis is None or any(s is None for s in shapes):
        return TensorShape(None)
    axis = int(axis) % len(shapes[0])
    out = list(shapes[0])
    sizes = [s[axis] for s in shapes]
    out[axis] = None if None in sizes else sum(sizes)
    return TensorShape(out)


def _concat_grad(op, g):
    *values, axis = op.inputs
    static = [v.shape.dims for v in values]
    ax = constant_value(axis)
    if ax is not None and all(s is not None and s[int(ax) % len(s)] is not None for s in static):
        sizes = _i32([s[int(ax) % len(s)] for s in static])
    else:
        sizes = stack([gather(shape(v), axis) for v in values])
    return split(g, sizes, axis=axis, num=len(values)) + [None]


register("ConcatV2", lambda *xs: np.concatenate(xs[:-1], axis=int(xs[-1])), _concat_grad, _concat_shape,
         type_attrs={"Tidx": -1})


def concat(values, axis, name="concat"):
    """TF's ``tf.concat``: ``ConcatV2`` with its Python values converted as ``concat/values_<i>`` (in the
    tensors' dtype) and ``concat/axis``; one value is an Identity ``concat/concat`` (beside TF's throwaway
    ``concat/concat_dim``)."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        with name_scope(name):
            convert_to_tensor(axis, dtype=dtypes.int32, name="concat_dim")
            return identity(convert_to_tensor(values[0]), name=name)
    with name_scope(name, "concat") as scope:
        dtype = next((convert_to_tensor(v).dtype for v in values if isinstance(v, Tensor) or hasattr(v, "_to_tensor")),
                     None)
        values = [convert_to_tensor(v) if isinstance(v, Tensor) or hasattr(v, "_to_tensor")
                  else convert_to_tensor(v, dtype=dtype, name="values_%d" % i) for i, v in enumerate(values)]
        return apply_op("ConcatV2", values + [convert_to_tensor(axis, dtype=dtypes.int32, name="axis")],
                        dict(N=len(values)), name=scope)


def _pack_shape(op):
    dims = [t.shape.dims for t in op.inputs]
    if any(d is None for d in dims):
        return TensorShape(None)
    base = list(dims[0])
    axis = op.attrs["axis"] % (len(base) + 1)
    return TensorShape(base[:axis] + [len(dims)] + base[axis:])


register("Pack", lambda *xs, axis=0: np.stack(xs, axis=axis),
         lambda op, g: unstack(g, num=len(op.inputs), axis=op.attrs["axis"]), _pack_shape)


def stack(values, axis=0, name="stack"):
    values = [convert_to_tensor(v) for v in values]
    return apply_op("Pack", values, dict(N=len(values), axis=int(axis)), name=name)


def _unpack_shape(op):
    dims = op.inputs[0].shape.dims
    if dims is None:
        return [TensorShape(None)] * op.attrs["num"]
    axis = op.attrs["axis"] % len(dims)
    return [TensorShape(dims[:axis] + dims[axis + 1:])] * op.attrs["num"]


def _unpack_grad(op, *grads):
    grads = [g if g is not None else zeros_like(o) for g, o in zip(grads, op.outputs)]
    return [stack(grads, axis=op.attrs["axis"])]


register("Unpack", lambda x, num, axis=0: tuple(np.moveaxis(x, axis, 0)), _unpack_grad, _unpack_shape,
         num_outputs=lambda attrs: attrs["num"])


def unstack(value, num=None, axis=0, name="unstack"):
    value = convert_to_tensor(value)
    if num is None:
        dims = value.shape.dims
        num = None if dims is None else dims[axis]
        if num is None:
            raise ValueError("Cannot infer num from shape %s" % value.shape)
    return apply_op("Unpack", [value], dict(num=int(num), axis=int(axis)), name=name)


def _pieces(x, sizes, axis):
    """Views of ``x`` cut along ``axis`` into ``sizes`` (what np.split returns, by plain slicing: 5x faster on
    the small arrays of an RNN step)."""
    lead = (slice(None),) * (axis % x.ndim)
    out, start = [], 0
    for size in sizes:
        out.append(x[lead + (slice(start, start + size),)])
        start += size
    return tuple(out)


def _splitv_forward(x, sizes, axis, num_split=1):
    axis = int(axis)
    sizes = [int(v) for v in np.reshape(sizes, [-1])]
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[axis] - (sum(sizes) + 1)
    if sum(sizes) != x.shape[axis] or min(sizes, default=0) < 0:
        raise ValueError("Determined shape must either match input shape along split_dim exactly if fully "
                         "specified, or be less than the size of the input along split_dim if not fully "
                         "specified. Got: %d; sizes %s" % (x.shape[axis], sizes))
    return _pieces(x, sizes, axis)


def _split_forward(axis, x, num_split):
    axis = int(axis)
    n = x.shape[axis]
    if n % num_split:
        raise ValueError("Number of ways to split should evenly divide the split dimension, but got split_dim "
                         "%d (size = %d) and num_split %d" % (axis, n, num_split))
    return _pieces(x, [n // num_split] * num_split, axis)


def _splitv_shape(op):
    x, sizes, axis = op.inputs
    dims, sizes, axis = x.shape.dims, constant_value(sizes), constant_value(axis)
    n = op.attrs["num_split"]
    if dims is None or axis is None:
        return [TensorShape(None)] * n
    axis = int(axis) % len(dims)
    out = []
    for i in range(n):
        d = list(dims)
        d[axis] = int(sizes[i]) if sizes is not None and sizes[i] >= 0 else None
        out.append(TensorShape(d))
    return out


def _split_grads(op, grads, axis):
    grads = [g if g is not None else zeros_like(o) for g, o in zip(grads, op.outputs)]
    return concat(grads, axis)


register("SplitV", _splitv_forward, lambda op, *gs: [_split_grads(op, gs, op.inputs[2]), None, None],
         _splitv_shape, num_outputs=lambda attrs: attrs["num_split"])
register("Split", _split_forward,
         lambda op, *gs: [None, _split_grads(op, gs, op.inputs[0])],
         lambda op: _split_even_shape(op), num_outputs=lambda attrs: attrs["num_split"],
         dtype=lambda op: op.inputs[1].dtype)


def _split_even_shape(op):
    axis, x = op.inputs
    dims, axis, n = x.shape.dims, constant_value(axis), op.attrs["num_split"]
    if dims is None or axis is None:
        return [TensorShape(None)] * n
    d = list(dims)
    axis = int(axis) % len(d)
    d[axis] = None if d[axis] is None else d[axis] // n
    return [TensorShape(d)] * n


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    value = convert_to_tensor(value)
    with name_scope(name, "split") as scope:
        if isinstance(num_or_size_splits, int):
            axis_t = convert_to_tensor(axis, dtype=dtypes.int32, name="split_dim")
            out = apply_op("Split", [axis_t, value], dict(num_split=num_or_size_splits, T=value.dtype), name=scope)
        else:
            sizes = num_or_size_splits if isinstance(num_or_size_splits, Tensor) else \
                _i32(num_or_size_splits, name="size_splits")
            axis_t = convert_to_tensor(axis, dtype=dtypes.int32, name="split_dim")
            if num is None:
                num = sizes.shape.dims[0] if sizes.shape.dims else None
            out = apply_op("SplitV", [value, sizes, axis_t], dict(num_split=int(num), Tlen=dtypes.int32), name=scope)
    return out if isinstance(out, list) else [out]


# ---- gather and its sparse gradient


def _gather_forward(params, indices, axis, batch_dims=0):
    return np.take(params, indices, axis=int(axis))


def _gather_shape(op):
    p, i, axis = op.inputs[0].shape.dims, op.inputs[1].shape.dims, constant_value(op.inputs[2])
    if p is None or i is None or axis is None:
        return TensorShape(None)
    axis = int(axis) % len(p)
    return TensorShape(list(p[:axis]) + list(i) + list(p[axis + 1:]))


def _gather_grad(op, g):
    params, indices, axis = op.inputs
    if constant_value(axis) is None or params.shape.ndims is None:
        raise NotImplementedError("the gradient of gather needs a constant axis and params of known rank")
    if int(constant_value(axis)) % params.shape.ndims != 0:
        return [_gather_axis_grad(params, indices, int(constant_value(axis)) % params.shape.ndims, g), None, None]
    dense_shape = shape(params)
    flat_indices = reshape(indices, _i32([-1]))
    inner = params.shape.dims[1:] if params.shape.dims is not None else None
    if inner is not None and None not in inner:
        values = reshape(g, _i32([-1] + list(inner)))
    else:
        values = reshape(g, concat([_i32([-1]), apply_op("StridedSlice", [dense_shape, _i32([1]), _i32([0]),
                                                                           _i32([1])],
                                                         dict(begin_mask=0, end_mask=1, shrink_axis_mask=0,
                                                              ellipsis_mask=0, new_axis_mask=0))], 0))
    return [IndexedSlices(values, flat_indices, dense_shape), None, None]


def _gather_axis_grad(params, indices, axis, g):
    """Dense gradient of a gather along ``axis > 0``: the gathered axis moved first, summed into its rows by
    ``UnsortedSegmentSum``, moved back (TF's _GatherV2Grad with batch_dims=0)."""
    rank_ = params.shape.ndims
    params_shape = shape(params)
    outer = apply_op("StridedSlice", [params_shape, _i32([0]), _i32([axis]), _i32([1])],
                     dict(begin_mask=0, end_mask=0, shrink_axis_mask=0, ellipsis_mask=0, new_axis_mask=0))
    inner = apply_op("StridedSlice", [params_shape, _i32([axis + 1]), _i32([0]), _i32([1])],
                     dict(begin_mask=0, end_mask=1, shrink_axis_mask=0, ellipsis_mask=0, new_axis_mask=0))
    values = reshape(g, concat([outer, _i32([-1]), inner], 0))
    perm = [axis] + list(range(axis)) + list(range(axis + 1, rank_))
    rows = gather(params_shape, axis)
    summed = unsorted_segment_sum(transpose(values, perm), reshape(indices, _i32([-1])), rows)
    return transpose(summed, list(np.argsort(perm)))


register("GatherV2", _gather_forward, _gather_grad, _gather_shape, dtype=lambda op: op.inputs[0].dtype)


def gather(params, indices, axis=0, name=None, validate_indices=None):
    params = convert_to_tensor(params)
    with name_scope(name, "GatherV2") as scope:
        indices = convert_to_tensor(indices, dtype=None if isinstance(indices, Tensor) else dtypes.int32,
                                    name="indices")
        axis = convert_to_tensor(axis, dtype=dtypes.int32, name="axis")
        return apply_op("GatherV2", [params, indices, axis],
                        dict(Tparams=params.dtype, Tindices=indices.dtype, Taxis=axis.dtype, batch_dims=0),
                        name=scope)


def _segment_sum(data, ids, num_segments):
    n = int(num_segments)
    if np.any(ids >= n):
        bad = int(np.flatnonzero(ids.reshape(-1) >= n)[0])
        raise InvalidArgumentError(None, None, "segment_ids[%d] = %d is out of range [0, %d)"
                                   % (bad, ids.reshape(-1)[bad], n))
    out = np.zeros((n,) + data.shape[ids.ndim:], dtype=data.dtype)
    keep = ids >= 0                      # negative ids are dropped, as TF does
    np.add.at(out, ids[keep], data[keep])
    return out


def unsorted_segment_shape(op):
    """``[num_segments] + data.shape[rank(segment_ids):]`` (num_segments unknown unless a constant)."""
    dims, ids, n = op.inputs[0].shape.dims, op.inputs[1].shape.ndims, constant_value(op.inputs[2])
    if dims is None or ids is None:
        return TensorShape(None)
    return TensorShape([None if n is None else int(n)] + list(dims[ids:]))


def gather_drop_negatives(params: Tensor, ids: Tensor) -> Tensor:
    """``params[ids]`` with the rows of negative ids zero (TF's _GatherDropNegatives)."""
    is_positive = math_ops.greater_equal(ids, zeros_like(ids))
    gathered = gather(params, math_ops.maximum(ids, zeros_like(ids)))
    return math_ops.where(is_positive, gathered, zeros_like(gathered))


def _segment_sum_grad(op, g):
    return [gather_drop_negatives(g, op.inputs[1]), None, None]


register("UnsortedSegmentSum", _segment_sum, _segment_sum_grad, unsorted_segment_shape,
         dtype=lambda op: op.inputs[0].dtype)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """``output[i] = sum_{j: segment_ids[j] == i} data[j]``; negative ids are dropped, empty segments are 0."""
    with name_scope(name, "UnsortedSegmentSum") as scope:
        data = convert_to_tensor(data, name="data")
        segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
        num_segments = convert_to_tensor(num_segments, name="num_segments")
        return apply_op("UnsortedSegmentSum", [data, segment_ids, num_segments],
                        dict(T=data.dtype, Tindices=segment_ids.dtype, Tnumsegments=num_segments.dtype), name=scope)


def indexed_slices_to_dense(s: IndexedSlices) -> Tensor:
    """Densify a sparse gradient: ``UnsortedSegmentSum(values, indices, dense_shape[0])`` (duplicates add)."""
    rows = apply_op("StridedSlice", [s.dense_shape, _i32([0]), _i32([1]), _i32([1])],
                    dict(begin_mask=0, end_mask=0, shrink_axis_mask=1, ellipsis_mask=0, new_axis_mask=0))
    out = unsorted_segment_sum(s.values, s.indices, rows)
    static = s.get_shape()
    if static.dims is not None:
        out.set_shape(static)
    return out


register_tensor_conversion(lambda value: isinstance(value, IndexedSlices),
                           lambda value, dtype, name: convert_to_tensor(indexed_slices_to_dense(value), dtype=dtype))
def autopack(values, dtype=None, name=None) -> Tensor:
    """TF's auto-packing of a list holding tensors: a ``Pack`` named after the conversion (``packed`` by
    default), its other elements Consts named by their position (``packed/0``)."""
    with name_scope(name or "packed") as scope:
        parts = []
        for i, v in enumerate(values):
            if isinstance(v, Tensor) or hasattr(v, "_to_tensor"):
                parts.append(convert_to_tensor(v, dtype=dtype))
            else:
                parts.append(constant(v, dtype=dtype, name=str(i)))
        return apply_op("Pack", parts, dict(N=len(parts), axis=0), name=scope)


register_tensor_conversion(
    lambda value: isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) or hasattr(v, "_to_tensor")
                                                           for v in value),
    lambda value, dtype, name: autopack(value, dtype, name))


def _iterate(tensor: Tensor):
    """``iter(tensor)``: its rows, by ``unstack`` (only when the first dimension is known)."""
    dims = tensor.shape.dims
    if dims is None or not dims or dims[0] is None:
        raise TypeError("Tensor objects are only iterable when the first dimension is known.")
    return iter(unstack(tensor, num=dims[0]))


Tensor.__iter__ = _iterate
