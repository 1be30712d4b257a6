"""Shape-manipulating ops: reshape, transpose, concat/stack/split, gather, tile, fill, slicing, shape queries."""
from __future__ import annotations

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import (IndexedSlices, apply_op, constant, constant_shape, constant_value,
                                  convert_to_tensor, register, register_tensor_conversion, shape_same, shape_scalar)
from . import broadcast_gradients, math_ops
from ..framework.registry import create_op
from ..framework.errors import InvalidArgumentError


def _i32(value, name="Const"):
    return constant(np.asarray(value, dtype=np.int32), name=name)


def _static_or_dynamic_shape(x: Tensor) -> Tensor:
    return _i32(x.shape.as_list(), name="Shape") if x.shape.is_fully_defined() else shape(x)


# ---- identity, stop_gradient
register("Identity", lambda x: x, lambda op, g: [g], shape_same, aliases=True)
register("StopGradient", lambda x: x, None, shape_same, aliases=True)
register("NoOp", lambda: None, None, num_outputs=0)


def identity(x, name=None):
    return apply_op("Identity", [x], name=name)


def stop_gradient(x, name=None):
    return apply_op("StopGradient", [x], name=name)


def no_op(name=None):
    return create_op("NoOp", [], name=name)


# ---- shape queries
def _out_type(op):
    return op.attrs.get("out_type", dtypes.int32)


register("Shape", lambda x, out_type=dtypes.int32: np.array(np.shape(x), out_type.as_numpy_dtype), None,
         lambda op: TensorShape([op.inputs[0].shape.ndims]), dtype=_out_type)
register("Size", lambda x, out_type=dtypes.int32: np.array(np.size(x), out_type.as_numpy_dtype), None, shape_scalar,
         dtype=_out_type)
register("Rank", lambda x: np.array(np.ndim(x), np.int32), None, shape_scalar, dtype=dtypes.int32)


shape = broadcast_gradients.shape_internal   # TF's array_ops.shape (a Const when static); gradients use it


def size(x, name=None, out_type=dtypes.int32, optimize=True):
    """TF's ``array_ops.size``: a ``Size`` op, or a Const (named ``Size``) when ``optimize`` and the static
    shape is fully defined."""
    out_type = dtypes.as_dtype(out_type)
    with name_scope(name, "Size") as scope:
        x = convert_to_tensor(x)
        if optimize and x.shape.is_fully_defined():
            return constant(np.array(x.shape.num_elements(), out_type.as_numpy_dtype), name=scope)
        return apply_op("Size", [x], dict(out_type=out_type), name=scope)


def rank(x, name=None, optimize=True):
    """TF's ``tf.rank``: a Const (named ``Rank``) when the rank is static and ``optimize``, else a Rank op."""
    with name_scope(name, "Rank") as scope:
        x = convert_to_tensor(x)
        if optimize and x.shape.ndims is not None:
            return constant(x.shape.ndims, dtype=dtypes.int32, name=scope)
        return apply_op("Rank", [x], name=scope)


def _range_shape(op):
    start, limit, delta = (constant_value(t) for t in op.inputs)
    if start is None or limit is None or delta is None:
        return TensorShape([None])
    return TensorShape([len(np.arange(start, limit, delta))])


register("Range", lambda start, limit, delta: np.arange(start, limit, delta).astype(np.asarray(start).dtype),
         None, _range_shape)


_RANGE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32, dtypes.float64)


def range_(start, limit=None, delta=1, dtype=None, name="range"):
    """TF's ``tf.range``: ``start``, ``limit``, ``delta`` converted in the ``range`` scope (``range/start``...),
    cast to the widest of their dtypes (or ``dtype``)."""
    if limit is None:
        start, limit = 0, start
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    with name_scope(name, "Range") as scope:
        args = [x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=dtype, name=arg)
                for x, arg in ((start, "start"), (limit, "limit"), (delta, "delta"))]
        if dtype is None:
            dtype = max((a.dtype for a in args), key=_RANGE_DTYPES.index)
        start, limit, delta = (math_ops.cast(a, dtype) for a in args)
        return apply_op("Range", [start, limit, delta], dict(Tidx=dtype), name=scope)


# ---- reshape, transpose, expand_dims, squeeze


def _reshape_shape(op):
    target = constant_shape(op.inputs[1])
    if target.dims is None:
        return target
    dims = list(target.dims)
    if -1 in [d if d is not None else 0 for d in dims] or None in dims:
        n = op.inputs[0].shape.num_elements()
        known = [d for d in dims if d is not None and d != -1]
        if n is not None and dims.count(None) + dims.count(-1) == 1 and all(known):
            rest = int(np.prod(known)) if known else 1
            dims = [n // rest if d is None or d == -1 else d for d in dims]
    return TensorShape([None if d == -1 else d for d in dims])


def _reshape_bind(op, session):
    target = constant_value(op.inputs[1])
    if target is not None:
        target = tuple(int(d) for d in target)
        return lambda x, _: np.asarray(x).reshape(target)
    return lambda x, s: np.asarray(x).reshape(tuple(s))


def _reshape_grad(op, grad):
    """TF's ``_ReshapeGrad``: back to the input's shape, a static list with one -1 wildcard when a single
    dimension is unknown (no data dependency on the input), else its (static or dynamic) ``Shape``."""
    dims = op.inputs[0].shape.dims
    if dims is not None and None in dims:
        unknown = [i for i, d in enumerate(dims) if d is None]
        if len(unknown) == 1 and 0 not in dims:
            return [reshape(grad, [-1 if d is None else d for d in dims]), None]
    return [reshape(grad, shape(op.inputs[0])), None]


register("Reshape", bind=_reshape_bind, grad=_reshape_grad, shape=_reshape_shape, type_attrs={"Tshape": 1})


def reshape(tensor, shape, name=None):  # noqa: F811 - TF's argument name
    with name_scope(name, "Reshape") as scope:
        if not isinstance(shape, Tensor):
            if isinstance(shape, (list, tuple)) and not shape:
                # as TF's op helper: [] is first converted as float32 (left unused), then as int32 (``shape_1``)
                constant(np.zeros([0], np.float32), name="shape")
            shape = _i32(shape, name="shape")
        return apply_op("Reshape", [tensor, shape], name=scope)


def _perm(op):
    perm = constant_value(op.inputs[1])
    return None if perm is None else tuple(int(p) for p in perm)


register("Transpose", bind=lambda op, s: (lambda x, p, _perm=_perm(op): np.transpose(x, _perm or tuple(p))),
         grad=lambda op, g: [transpose(g, apply_op("InvertPermutation", [op.inputs[1]])), None],
         shape=lambda op: TensorShape(None) if _perm(op) is None or op.inputs[0].shape.dims is None
         else TensorShape([op.inputs[0].shape.dims[p] for p in _perm(op)]), type_attrs={"Tperm": 1})
register("InvertPermutation", lambda p: np.argsort(p).astype(p.dtype), None, shape_same)


def transpose(a, perm=None, name="transpose"):
    a = convert_to_tensor(a)
    if perm is None:
        if a.shape.ndims is None:
            raise ValueError("transpose without perm needs a known rank")
        perm = list(range(a.shape.ndims))[::-1]
    with name_scope(name, "transpose") as scope:
        return apply_op("Transpose", [a, perm if isinstance(perm, Tensor) else _i32(perm, name="perm")], name=scope)


def _expand_shape(op):
    dims, axis = op.inputs[0].shape.dims, constant_value(op.inputs[1])
    if dims is None or axis is None:
        return TensorShape(None)
    axis = int(np.reshape(axis, [-1])[0])          # a scalar or a one-element list, as TF takes
    axis = axis if axis >= 0 else len(dims) + 1 + axis
    return TensorShape(list(dims[:axis]) + [1] + list(dims[axis:]))


def _expand_dims_bind(op, session):
    axis = constant_value(op.inputs[1])
    if axis is not None and op.inputs[0].shape.ndims is not None:
        axis = int(np.reshape(axis, [-1])[0]) % (op.inputs[0].shape.ndims + 1)
        index = (slice(None),) * axis + (None,)
        return lambda x, _: np.asarray(x)[index]            # a view, as np.expand_dims
    return lambda x, a: np.expand_dims(x, int(np.reshape(a, [-1])[0]))


register("ExpandDims", bind=_expand_dims_bind,
         grad=lambda op, g: [reshape(g, _static_or_dynamic_shape(op.inputs[0])), None], shape=_expand_shape,
         aliases=True, type_attrs={"Tdim": 1})


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    axis = dim if axis is None else axis
    with name_scope(name, "ExpandDims") as scope:
        return apply_op("ExpandDims", [input, convert_to_tensor(axis, dtype=dtypes.int32, name="dim")], name=scope)


def _squeeze_forward(x, squeeze_dims=()):
    return np.squeeze(x, axis=tuple(squeeze_dims) if squeeze_dims else None)


def _squeeze_shape(op):
    dims, axes = op.inputs[0].shape.dims, op.attrs["squeeze_dims"]
    if dims is None:
        return TensorShape(None)
    if not axes:
        return TensorShape([d for d in dims if d != 1]) if None not in dims else TensorShape(None)
    axes = {a % len(dims) for a in axes}
    return TensorShape([d for i, d in enumerate(dims) if i not in axes])


register("Squeeze", _squeeze_forward, lambda op, g: [reshape(g, _static_or_dynamic_shape(op.inputs[0]))],
         _squeeze_shape)


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    axis = squeeze_dims if axis is None else axis
    axis = [] if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    return apply_op("Squeeze", [input], dict(squeeze_dims=axis), name=name)


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


# ---- tile, fill, zeros_like / ones_like, broadcast_to, one_hot


def _tile_shape(op):
    dims, mult = op.inputs[0].shape.dims, constant_value(op.inputs[1])
    if dims is None or mult is None:
        return TensorShape(None if dims is None else [None] * len(dims))
    return TensorShape([None if d is None else d * int(m) for d, m in zip(dims, mult)])


def _tile_grad_forward(g, multiples):
    split_shape = []
    for d, m in zip(g.shape, multiples):
        split_shape += [int(m), d // int(m)]
    return g.reshape(split_shape).sum(axis=tuple(range(0, len(split_shape), 2)))


register("Tile", lambda x, m: np.tile(x, tuple(m)),
         lambda op, g: [apply_op("TileGrad", [g, op.inputs[1]]), None], _tile_shape,
         type_attrs={"Tmultiples": 1})
register("TileGrad", _tile_grad_forward, lambda op, g: [tile(g, op.inputs[1]), None],
         lambda op: TensorShape(None))


def tile(input, multiples, name=None):  # noqa: A002
    with name_scope(name, "Tile") as scope:
        return apply_op("Tile", [input, multiples if isinstance(multiples, Tensor) else
                                 _i32(multiples, name="multiples")], name=scope)


def _fill_grad(op, g):
    """TF's ``[None, reduce_sum(g)]``, the ``Sum`` over every axis built as reduction_ops builds it (reduction_ops
    builds on this module)."""
    axes = (constant(np.arange(g.shape.ndims, dtype=np.int32), name="Const") if g.shape.ndims is not None
            else range_(0, rank(g), 1))
    return [None, apply_op("Sum", [g, axes], dict(keep_dims=False), name="Sum")]


register("Fill", lambda dims, value: np.full(tuple(dims), value, dtype=np.asarray(value).dtype), _fill_grad,
         lambda op: constant_shape(op.inputs[0]), dtype=lambda op: op.inputs[1].dtype)


def fill(dims, value, name=None):
    with name_scope(name, "Fill") as scope:
        dims = dims if isinstance(dims, Tensor) else _i32(dims, name="dims")
        value = convert_to_tensor(value, name="value")
        return apply_op("Fill", [dims, value], dict(T=value.dtype, index_type=dims.dtype), name=scope)


register("ZerosLike", np.zeros_like, None, shape_same)
register("OnesLike", np.ones_like, None, shape_same)


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """TF's ``zeros_like``, in its ``zeros_like`` scope: a constant when ``optimize`` and the static shape is
    fully defined, else a ``ZerosLike`` op (``zeros`` of its shape for another dtype)."""
    with name_scope(name, "zeros_like") as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        if dtype is None or dtype is tensor.dtype:
            return broadcast_gradients.zeros_like_same_dtype(tensor, name=scope, optimize=optimize)
        if optimize and tensor.shape.is_fully_defined():
            return zeros(tensor.shape.as_list(), dtype, name=scope)
        return zeros(shape(tensor, optimize=optimize), dtype, name=scope)


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """TF's ``ones_like``: ``ones`` of the tensor's shape (a Fill of ``ones_like/Shape``: an op, or a
    ``shape_as_tensor`` Const when static), in its ``ones_like`` scope."""
    with name_scope(name, "ones_like") as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        if dtype is None or dtypes.as_dtype(dtype) is tensor.dtype:
            return broadcast_gradients.ones_like_same_dtype(tensor, name=scope, optimize=optimize)
        ones_shape = shape(tensor, out_type=None, optimize=optimize)
        out = ones(ones_shape, dtype, name=scope)
        out.set_shape(tensor.shape)
        return out


def _filled(value):
    def fn(shape, dtype=dtypes.float32, name=None):
        dtype = dtypes.as_dtype(dtype)
        default_name = "zeros" if value == 0 else "ones"
        if isinstance(shape, Tensor):
            with name_scope(name, default_name) as scope:
                return fill(shape, constant(value, dtype=dtype), name=scope)
        shape = [int(d) for d in (shape if isinstance(shape, (list, tuple)) else TensorShape(shape).as_list())]
        with name_scope(name, default_name) as scope:
            return broadcast_gradients.filled(value, shape, dtype, scope)
    return fn


zeros = _filled(0)
ones = _filled(1)


def _broadcast_to(x, shape):
    """Materialized like TF's BroadcastTo (and cheaper to call than ``np.broadcast_to``)."""
    out = np.empty(tuple(shape), dtype=np.asarray(x).dtype)
    out[...] = x
    return out


register("BroadcastTo", _broadcast_to,
         lambda op, g: [broadcast_gradients.unbroadcast(g, op.inputs[0]), None],
         lambda op: constant_shape(op.inputs[1]), type_attrs={"Tidx": 1})


def broadcast_to(input, shape, name=None):  # noqa: A002
    with name_scope(name, "BroadcastTo") as scope:
        return apply_op("BroadcastTo", [input, shape if isinstance(shape, Tensor) else _i32(shape, name="shape")],
                        name=scope)


def _one_hot_bind(op, session):
    axis = op.attrs["axis"]

    def forward(indices, depth, on, off):
        idx = np.asarray(indices)
        out = np.where(np.expand_dims(idx, -1) == np.arange(int(depth)), on, off).astype(np.asarray(on).dtype)
        return out if axis == -1 else np.moveaxis(out, -1, axis)
    return forward


register("OneHot", bind=_one_hot_bind, shape=lambda op: TensorShape(
    None if op.inputs[0].shape.dims is None else list(op.inputs[0].shape.dims) + [
        None if constant_value(op.inputs[1]) is None else int(constant_value(op.inputs[1]))]),
    dtype=lambda op: op.inputs[2].dtype)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
    with name_scope(name, "one_hot") as scope:
        on = constant(1 if on_value is None else on_value, dtype=dtype, name="on_value")
        off = constant(0 if off_value is None else off_value, dtype=dtype, name="off_value")
        indices = convert_to_tensor(indices, dtype=None if isinstance(indices, Tensor) else dtypes.int32,
                                    name="indices")
        return apply_op("OneHot", [indices, convert_to_tensor(depth, dtype=dtypes.int32, name="depth"), on, off],
                        dict(axis=-1 if axis is None else int(axis), T=dtype, TI=indices.dtype), name=scope)


# slicing (t[1:3, ..., None]) lives in slicing_ops; imported last, it builds on the ops above


def _iterate(tensor: Tensor):
    """``iter(tensor)``: its rows, by ``unstack`` (only when the first dimension is known)."""
    dims = tensor.shape.dims
    if dims is None or not dims or dims[0] is None:
        raise TypeError("Tensor objects are only iterable when the first dimension is known.")
    return iter(unstack(tensor, num=dims[0]))


Tensor.__iter__ = _iterate
