"""Tensor indexing: ``t[1:3, ..., None, 0]`` is TF's ``StridedSlice`` (begin/end/strides Const inputs and the
begin/end/shrink/ellipsis/new-axis masks); its gradient ``StridedSliceGrad`` scatters into zeros."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..graph import Tensor, TensorShape, name_scope
from ..registry import apply_op, constant_shape, constant_value, register
from .array_ops import _i32, _static_or_dynamic_shape


_MASKS = ("begin_mask", "end_mask", "shrink_axis_mask", "ellipsis_mask", "new_axis_mask")


def _strided_index(begin, end, strides, attrs):
    """The numpy index of a StridedSlice: slices, ints (shrink), Ellipsis and None (new axis) per the masks."""
    index = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if attrs["ellipsis_mask"] & bit:
            index.append(Ellipsis)
        elif attrs["new_axis_mask"] & bit:
            index.append(None)
        elif attrs["shrink_axis_mask"] & bit:
            index.append(int(b))
        else:
            index.append(slice(None if attrs["begin_mask"] & bit else int(b),
                               None if attrs["end_mask"] & bit else int(e), int(s)))
    return tuple(index)


def _strided_slice_bind(op, session):
    attrs = op.attrs
    consts = [constant_value(t) for t in op.inputs[1:]]
    if all(c is not None for c in consts):
        index = _strided_index(*consts, attrs)
        return lambda x, b, e, s: np.asarray(x[index])
    return lambda x, b, e, s: np.asarray(x[_strided_index(b, e, s, attrs)])


def _strided_slice_shape(op):
    dims = op.inputs[0].shape.dims
    consts = [constant_value(t) for t in op.inputs[1:]]
    if dims is None or any(c is None for c in consts):
        return TensorShape(None)
    index = list(_strided_index(*consts, op.attrs))
    if Ellipsis in index:
        at = index.index(Ellipsis)
        used = sum(1 for k in index if k is not None and k is not Ellipsis)
        index[at:at + 1] = [slice(None)] * (len(dims) - used)
    out, dim_iter = [], iter(dims)
    for k in index:
        if k is None:
            out.append(1)
            continue
        d = next(dim_iter, None)
        if not isinstance(k, slice):
            continue
        if d is not None:
            out.append(len(range(d)[k]))
        elif k.start is not None and k.stop is not None and k.start >= 0 and k.stop >= 0 and k.step > 0:
            out.append(max(0, -(-(k.stop - k.start) // k.step)))
        else:
            out.append(None)
    return TensorShape(out + list(dim_iter))


def _strided_slice_grad(op, g):
    x, b, e, s = op.inputs
    attrs = {k: op.attrs[k] for k in _MASKS}
    attrs.update(T=g.dtype, Index=dtypes.int32)
    return [apply_op("StridedSliceGrad", [_static_or_dynamic_shape(x), b, e, s, g], attrs), None, None, None]


def _strided_slice_grad_bind(op, session):
    attrs = op.attrs

    def forward(shape_, b, e, s, dy):
        out = np.zeros(tuple(shape_), dtype=dy.dtype)
        out[_strided_index(b, e, s, attrs)] = dy
        return out
    return forward


register("StridedSlice", bind=_strided_slice_bind, grad=_strided_slice_grad, shape=_strided_slice_shape,
         aliases=True)
register("StridedSliceGrad", bind=_strided_slice_grad_bind,
         grad=lambda op, gg: [None, None, None, None, apply_op("StridedSlice", [gg] + op.inputs[1:4], {
             k: op.attrs[k] for k in ("begin_mask", "end_mask", "shrink_axis_mask", "ellipsis_mask",
                                      "new_axis_mask")})],
         shape=lambda op: constant_shape(op.inputs[0]), dtype=lambda op: op.inputs[4].dtype)


def strided_slice(x, key, name="strided_slice"):
    """``x[key]`` for ints, slices, ``...`` and ``None`` (new axes): TF's StridedSlice with its masks."""
    key = key if isinstance(key, tuple) else (key,)
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    for i, k in enumerate(key):
        bit = 1 << i
        if isinstance(k, slice):
            begin.append(0 if k.start is None else k.start)
            end.append(0 if k.stop is None else k.stop)
            strides.append(1 if k.step is None else k.step)
            masks["begin_mask"] |= bit if k.start is None else 0
            masks["end_mask"] |= bit if k.stop is None else 0
            continue
        if k is Ellipsis:
            masks["ellipsis_mask"] |= bit
        elif k is None:
            masks["new_axis_mask"] |= bit
        elif isinstance(k, (int, np.integer)):
            masks["shrink_axis_mask"] |= bit
        else:
            raise TypeError("Only integers, slices, Ellipsis and None are supported as tensor indices, got %r"
                            % (k,))
        b = int(k) if isinstance(k, (int, np.integer)) else 0
        begin.append(b)
        end.append(b + 1)
        strides.append(1)
    with name_scope(name, "strided_slice") as scope:
        return apply_op("StridedSlice", [x, _i32(begin, "stack"), _i32(end, "stack_1"),
                                         _i32(strides, "stack_2")], dict(masks, Index=dtypes.int32), name=scope)


Tensor.__getitem__ = strided_slice
