"""Reductions (``Sum``, ``Mean``, ``Max``, ``Min``, ``Prod``, ``All``, ``Any``) with TF's Const axis input, and
``Cumsum`` / ``Cumprod``. Gradients broadcast the incoming gradient back over the reduced axes."""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, constant, constant_value, convert_to_tensor, register, shape_same
from .array_ops import (broadcast_to, gather, ones, range_, rank, reshape, shape, size, squeeze, stop_gradient, tile,
                        zeros_like)
from .math_ops import cast, div_no_nan, equal, exp, floordiv, log, maximum, not_equal, truediv


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


def reduced_shape(input_shape: Tensor, axes: Tensor) -> Any:
    """TF's ``math_ops.reduced_shape``: ``input_shape`` with 1 at ``axes``; a numpy array when both are known
    when the graph is built, else ``DynamicStitch([range(rank), axes], [input_shape, ones])``."""
    shape_value, axes_value = constant_value(input_shape), constant_value(axes)
    if shape_value is not None and axes_value is not None:
        kept = np.array(shape_value, dtype=np.int32)
        kept[np.array(axes_value, dtype=np.int32)] = 1
        return kept
    axes = convert_to_tensor(axes)
    input_rank = size(input_shape, out_type=axes.dtype)
    axes = (axes + input_rank) % input_rank
    axes_shape = shape(axes)
    return apply_op("DynamicStitch", [range_(input_rank), axes, input_shape, ones(axes_shape, input_shape.dtype)],
                    dict(N=2, T=input_shape.dtype))


_REDUCED_SHAPES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()    # graph -> TF's _reduced_shape_cache


def _kept_dims_and_scaling(graph, dims: tuple, axes: np.ndarray) -> tuple:
    """The kept-dims shape and the tile multiples of a static partial reduction, cached per graph as TF's
    ``_SumGrad`` does. As TF, the first computation leaves its (unused) ``Maximum`` and ``floordiv`` ops in the
    graph: TF evaluates ``dims // maximum(kept, 1)`` through graph ops."""
    cache = _REDUCED_SHAPES.setdefault(graph, {})
    key = (dims, tuple(int(a) for a in axes))
    if key not in cache:
        kept = reduced_shape(np.array(dims, np.int32), axes)
        floordiv(dims, maximum(kept, 1))
        cache[key] = (tuple(int(d) for d in kept), tuple(int(d) for d in np.array(dims) // np.maximum(kept, 1)))
    return cache[key]


def _sum_grad(op, grad):
    """TF's ``_SumGrad``: with a known rank and constant axes, ``Reshape`` + ``Tile`` (static multiples when the
    shape is known); otherwise the kept-dims ``Reshape`` and a ``BroadcastTo`` of the input's shape."""
    x, axes = op.inputs
    dims = x.shape.dims
    if dims is not None:
        axes_value = constant_value(axes)
        if axes_value is not None:
            rank = len(dims)
            if np.array_equal(axes_value, np.arange(rank)):           # every dimension reduced
                grad = reshape(grad, [1] * rank)
                input_shape = (constant(np.array(dims, np.int32)) if None not in dims else shape(x))
                return [tile(grad, input_shape), None]
            if None not in dims:
                kept, scaling = _kept_dims_and_scaling(op.graph, tuple(dims), np.reshape(axes_value, [-1]))
                return [tile(reshape(grad, list(kept)), list(scaling)), None]
    input_shape = shape(x)
    if not op.attrs["keep_dims"]:
        grad = reshape(grad, reduced_shape(input_shape, axes))
    return [broadcast_to(grad, input_shape), None]


def _mean_grad(op, grad):
    """TF's ``_MeanGrad``: the Sum's gradient divided by the number of reduced elements (a Const when the
    shapes are static, else the product of the reduced dimensions of the input's shape)."""
    sum_grad = _sum_grad(op, grad)[0]
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        factor = x.shape.num_elements() // max(y.shape.num_elements(), 1)
        factor = constant(factor, dtype=sum_grad.dtype)
    else:
        input_shape = shape(x)
        input_rank = size(input_shape)
        axes = cast(op.inputs[1], input_rank.dtype)
        axes = (axes + input_rank) % input_rank
        factor = reduce_prod(gather(input_shape, axes))
    return [truediv(sum_grad, cast(factor, sum_grad.dtype)), None]


def _minmax_grad(op, grad):
    """TF's ``_MinOrMaxGrad``: the gradient shared among the elements equal to the extreme."""
    x, axes = op.inputs
    input_shape = shape(x)
    y = op.outputs[0]
    if not op.attrs["keep_dims"]:
        kept = reduced_shape(input_shape, axes)
        y, grad = reshape(y, kept), reshape(grad, kept)
    else:
        kept = shape(y)
    indicators = cast(equal(y, x), grad.dtype)
    num_selected = reshape(reduce_sum(indicators, axes), kept)
    return [truediv(indicators, num_selected) * grad, None]


def _prod_grad(op, g):
    # exact for inputs without zeros: d prod / dx = prod / x
    out = op.outputs[0]
    if not op.attrs["keep_dims"]:
        kept = reduced_shape(shape(op.inputs[0]), op.inputs[1])
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
