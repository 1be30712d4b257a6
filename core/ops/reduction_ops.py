"""Reductions (``Sum``, ``Mean``, ``Max``, ``Min``, ``Prod``, ``All``, ``Any``) with TF's Const axis input, and
``Cumsum`` / ``Cumprod``. Gradients broadcast the incoming gradient back over the reduced axes."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, constant, constant_value, convert_to_tensor, register, shape_same
from .array_ops import broadcast_to, range_, rank, reshape, shape, size, squeeze, stop_gradient, zeros_like
from .math_ops import cast, div_no_nan, equal, exp, log, not_equal


# ---- reductions (axis is a Const input, like TF's reduction_indices)


def _sum(x, axis=None, keepdims=False):
    """``np.add.reduce``; a float sum over the leading axes of a C-contiguous array (a bias gradient, e.g. over
    N, H, W of NHWC) is one BLAS matrix-vector product ``ones @ x.reshape(rows, -1)``, several times faster than
    numpy's row-by-row reduction of short rows."""
    if type(x) is np.ndarray and x.dtype.kind == "f" and x.ndim >= 2 and x.size and x.flags.c_contiguous \
            and isinstance(axis, tuple) and 0 < len(axis) < x.ndim \
            and tuple(sorted(a % x.ndim for a in axis)) == tuple(range(len(axis))):
        rows = x.size // int(np.prod(x.shape[len(axis):]))
        out = np.matmul(np.ones(rows, x.dtype), x.reshape(rows, -1)).reshape(x.shape[len(axis):])
        return out.reshape((1,) * len(axis) + out.shape) if keepdims else out
    return np.add.reduce(x, axis=axis, keepdims=keepdims)


def _mean(x, axis, keepdims):
    """Sum / count; integer means truncate like TF's."""
    total = _sum(x, axis=axis, keepdims=keepdims)
    count = x.size // (total.size or 1)
    if x.dtype.kind in "iu":
        return np.asarray(np.trunc(total / max(count, 1)), dtype=x.dtype)
    return total / count if count else total * np.nan


def _identity_of(ufunc):
    """``ufunc.reduce`` that gives an empty reduction the identity TF gives it: the lowest value of the dtype for
    Max, the highest for Min (numpy raises there)."""
    def extreme(dtype):
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
        elif dtype.kind == "f":
            return -np.inf if ufunc is np.maximum else np.inf
        else:
            return None
        return info.min if ufunc is np.maximum else info.max

    def reduce(x, axis=None, keepdims=False):
        if x.size == 0:
            initial = extreme(x.dtype)
            if initial is not None:
                return ufunc.reduce(x, axis=axis, keepdims=keepdims, initial=initial)
        return ufunc.reduce(x, axis=axis, keepdims=keepdims)
    return reduce


def _reduction_bind(np_fn):
    """``np_fn(x, axis, keepdims)`` (a ufunc's C-level ``reduce``) with the Const axes resolved once."""
    def bind(op, session):
        keepdims = op.attrs["keep_dims"]
        axes = constant_value(op.inputs[1])
        out_dtype = op.outputs[0].dtype.as_numpy_dtype
        if axes is not None:
            axes = tuple(int(a) for a in np.reshape(axes, [-1]))
            return lambda x, _: np.asarray(np_fn(x, axis=axes, keepdims=keepdims), dtype=out_dtype)
        return lambda x, a: np.asarray(np_fn(x, axis=tuple(np.reshape(a, [-1]).tolist()), keepdims=keepdims),
                                       dtype=out_dtype)
    return bind


def _reduction_shape(op):
    s = op.inputs[0].shape
    axes = constant_value(op.inputs[1])
    if s.dims is None or axes is None:
        return TensorShape(None)
    axes = {int(a) % len(s.dims) for a in np.reshape(axes, [-1])} if s.dims else set()
    if op.attrs["keep_dims"]:
        return TensorShape([1 if i in axes else d for i, d in enumerate(s.dims)])
    return TensorShape([d for i, d in enumerate(s.dims) if i not in axes])


def _kept_shape(op):
    """The reduced shape with size-1 dims kept, static when possible, else a tensor."""
    s = op.inputs[0].shape
    axes = constant_value(op.inputs[1])
    if s.dims is not None and axes is not None:
        axes = {int(a) % max(len(s.dims), 1) for a in np.reshape(axes, [-1])}
        kept = [1 if i in axes else d for i, d in enumerate(s.dims)]
        if all(d is not None for d in kept):
            return constant(np.array(kept, np.int32))
    return apply_op("ReducedShape", [shape(op.inputs[0]), op.inputs[1]], dict(), name=None)


register("ReducedShape", lambda s, a: np.array([1 if i in set(np.reshape(a, [-1]) % max(len(s), 1)) else d
                                                  for i, d in enumerate(s)], np.int32),
         shape=lambda op: op.inputs[0].shape, dtype=dtypes.int32)


def _broadcast_back(op, g):
    """``g`` reshaped to the kept-dims shape and broadcast to the input's shape."""
    x = op.inputs[0]
    if not op.attrs["keep_dims"] and g.shape.ndims != 0:       # a scalar broadcasts as it is
        g = reshape(g, _kept_shape(op))
    if x.shape.is_fully_defined():
        return broadcast_to(g, constant(np.array(x.shape.as_list(), np.int32), name="Shape"))
    return broadcast_to(g, shape(x))


def _sum_grad(op, g):
    return [_broadcast_back(op, g), None]


def _mean_grad(op, g):
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        factor = constant(max(x.shape.num_elements() // max(y.shape.num_elements(), 1), 1), dtype=g.dtype)
    elif y.shape.is_fully_defined():               # e.g. the mean of a batch: size(x) / size(y)
        factor = cast(size(x), g.dtype)
        if y.shape.num_elements() > 1:
            factor = factor * (1.0 / y.shape.num_elements())
    else:
        factor = cast(apply_op("Maximum", [size(x) // apply_op("Maximum", [size(y), 1]), 1]), g.dtype)
    return [_broadcast_back(op, g / factor), None]


def _minmax_grad(op, g):
    y = op.outputs[0]
    if not op.attrs["keep_dims"]:
        kept = _kept_shape(op)
        y, g = reshape(y, kept), reshape(g, kept)
    indicators = cast(equal(y, op.inputs[0]), g.dtype)
    num = reduce_sum(indicators, op.inputs[1], keepdims=True)
    return [indicators / num * g, None]


def _prod_grad(op, g):
    # exact for inputs without zeros: d prod / dx = prod / x
    out = op.outputs[0]
    if not op.attrs["keep_dims"]:
        kept = _kept_shape(op)
        out, g = reshape(out, kept), reshape(g, kept)
    return [g * out / op.inputs[0], None]


for _type, _np, _grad in (("Sum", _sum, _sum_grad), ("Mean", _mean, _mean_grad),
                          ("Max", _identity_of(np.maximum), _minmax_grad), ("Min", _identity_of(np.minimum), _minmax_grad),
                          ("Prod", np.multiply.reduce, _prod_grad), ("All", np.logical_and.reduce, None),
                          ("Any", np.logical_or.reduce, None)):
    register(_type, bind=_reduction_bind(_np), grad=_grad, shape=_reduction_shape, type_attrs={"Tidx": 1})


def _axes_tensor(x: Tensor, axis: Any) -> Tensor:
    if axis is None:
        if x.shape.ndims is not None:
            return constant(np.arange(x.shape.ndims, dtype=np.int32), name="Const")
        return range_(0, rank(x), 1)
    if isinstance(axis, Tensor):
        return axis
    return constant(np.array(axis, dtype=np.int32), name="Const")


def _reducer(op_type: str, default_name: str):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        x = convert_to_tensor(input_tensor)
        if axis is None:
            axis = reduction_indices
        kd = bool(keepdims if keepdims is not None else (keep_dims or False))
        if op_type in ("All", "Any"):
            x = convert_to_tensor(x, dtype=dtypes.bool)
        if axis is None or isinstance(axis, Tensor):
            return apply_op(op_type, [x, _axes_tensor(x, axis)], dict(keep_dims=kd), name=name or default_name)
        with name_scope(name, default_name) as scope:   # TF converts a given axis inside the op's scope
            axes = constant(np.array(axis, dtype=np.int32), name="reduction_indices")
            return apply_op(op_type, [x, axes], dict(keep_dims=kd), name=scope)
    fn.__name__ = default_name
    return fn


reduce_sum = _reducer("Sum", "Sum")
reduce_mean = _reducer("Mean", "Mean")
reduce_max = _reducer("Max", "Max")
reduce_min = _reducer("Min", "Min")
reduce_prod = _reducer("Prod", "Prod")
reduce_all = _reducer("All", "All")
reduce_any = _reducer("Any", "Any")


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """``log(sum(exp(x)))`` computed stably as ``max + log(sum(exp(x - max)))``."""
    with name_scope(name, "ReduceLogSumExp"):
        x = convert_to_tensor(input_tensor)
        m = stop_gradient(reduce_max(x, axis, keepdims=True))
        out = log(reduce_sum(exp(x - m), axis, keepdims=True)) + m
        return out if keepdims else _squeeze_axes(out, x, axis)


def _squeeze_axes(out, x, axis):
    if axis is None:
        return reshape(out, [])
    return squeeze(out, [axis] if isinstance(axis, int) else list(axis))


def count_nonzero(input_tensor, axis=None, keepdims=False, dtype=dtypes.int64, name=None):
    with name_scope(name, "count_nonzero"):
        x = convert_to_tensor(input_tensor)
        nonzero = cast(not_equal(x, zeros_like(x)), dtypes.int64)
        return cast(reduce_sum(nonzero, axis, keepdims=keepdims), dtype)


# ---- cumulative sum and product (axis is an int32 input, Tidx in the GraphDef)


def _scan(accumulate, identity):
    """Forward of Cumsum / Cumprod: ``accumulate`` (``np.cumsum``, ``np.cumprod``) along ``axis`` in ``x``'s
    dtype; ``exclusive`` shifts the input by one (starting from ``identity``), ``reverse`` scans from the end."""
    def forward(x, axis, exclusive=False, reverse=False):
        axis = int(axis)
        if not -x.ndim <= axis < x.ndim:
            raise ValueError("axis %d is out of range [%d, %d)" % (axis, -x.ndim, x.ndim))
        axis %= x.ndim
        if reverse:
            x = np.flip(x, axis)
        if exclusive:
            pad = np.full(x.shape[:axis] + (1,) + x.shape[axis + 1:], identity, dtype=x.dtype)
            x = np.concatenate([pad, x], axis=axis)[(slice(None),) * axis + (slice(None, -1),)]
        out = accumulate(x, axis=axis, dtype=x.dtype)
        return np.flip(out, axis) if reverse else out
    return forward


def _cumsum_grad(op, g):
    """TF: the cumulative sum of ``g`` in the opposite direction."""
    return [cumsum(g, op.inputs[1], exclusive=op.attrs["exclusive"], reverse=not op.attrs["reverse"]), None]


def _cumprod_grad(op, g):
    """TF: ``div_no_nan(cumsum(cumprod(x) * g, reverse=not reverse), x)`` with the op's exclusive / reverse
    (``cumprod(x)`` is the op's own output; TF builds a second Cumprod for it)."""
    x, axis = op.inputs
    exclusive, reverse = op.attrs["exclusive"], op.attrs["reverse"]
    out = cumsum(op.outputs[0] * g, axis, exclusive=exclusive, reverse=not reverse)
    return [div_no_nan(out, x), None]


register("Cumsum", _scan(np.cumsum, 0), _cumsum_grad, shape_same, type_attrs={"Tidx": 1})
register("Cumprod", _scan(np.cumprod, 1), _cumprod_grad, shape_same, type_attrs={"Tidx": 1})


def _scan_op(op_type: str, x: Any, axis: Any, exclusive: bool, reverse: bool, name: Any) -> Tensor:
    with name_scope(name, op_type) as scope:
        x = convert_to_tensor(x, name="x")
        axis = axis if isinstance(axis, Tensor) else convert_to_tensor(axis, dtype=dtypes.int32, name="axis")
        return apply_op(op_type, [x, axis],
                        dict(exclusive=bool(exclusive), reverse=bool(reverse)), name=scope)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None) -> Tensor:
    """Cumulative sum along ``axis`` (TF's Cumsum): ``[a, a + b, a + b + c]``; ``exclusive`` gives
    ``[0, a, a + b]``, ``reverse`` ``[a + b + c, b + c, c]``."""
    return _scan_op("Cumsum", x, axis, exclusive, reverse, name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None) -> Tensor:
    """Cumulative product along ``axis`` (TF's Cumprod): ``[a, a * b, a * b * c]``; ``exclusive`` gives
    ``[1, a, a * b]``, ``reverse`` ``[a * b * c, b * c, c]``."""
    return _scan_op("Cumprod", x, axis, exclusive, reverse, name)
