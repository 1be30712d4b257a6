"""Casts, comparisons, logic, select (``where``) and argmax / argmin: the ops whose gradients are none or a select,
below the arithmetic of ``math_ops`` (which gives them under TF's ``math_ops`` names too)."""
from __future__ import annotations

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import (apply_op, broadcast_shapes, constant_value, convert_to_tensor, register,
                                  shape_broadcast, shape_same)
from .broadcast_gradients import filled, reduce_gradient_args, zeros_like_op
from .operands import _binary, _pair, _unary


def _cast_bind(op, session):
    npd = op.attrs["DstT"].as_numpy_dtype
    return lambda x: np.asarray(x).astype(npd, copy=False)


def _cast_grad(op, g):
    src = op.inputs[0].dtype
    if src.is_floating and op.outputs[0].dtype.is_floating:
        return [cast(g, src)]
    return [None]


register("Cast", bind=_cast_bind, grad=_cast_grad, shape=shape_same, dtype=lambda op: op.attrs["DstT"])


def cast(x, dtype, name=None):
    """Convert ``x`` to ``dtype`` (TF's Cast; a tensor of that dtype is returned as it is). As TF: a Python
    value becomes ``Cast/x`` (of its own dtype: 100 an int32, 0.5 a float32) and is cast when that differs."""
    dtype = dtypes.as_dtype(dtype)
    if isinstance(x, Tensor) and x.dtype is dtype:
        return x
    with name_scope(name, "Cast") as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype is dtype:
            return x
        return apply_op("Cast", [x], dict(SrcT=x.dtype, DstT=dtype, Truncate=False), name=scope)


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, dtypes.int64, name=name)


for _type, _np in (("Less", np.less), ("LessEqual", np.less_equal), ("Greater", np.greater),
                   ("GreaterEqual", np.greater_equal), ("Equal", np.equal), ("NotEqual", np.not_equal),
                   ("LogicalAnd", np.logical_and), ("LogicalOr", np.logical_or)):
    register(_type, _np, None, shape_broadcast, dtype=dtypes.bool)
register("LogicalNot", np.logical_not, None, shape_same, dtype=dtypes.bool)

less = _binary("Less")
less_equal = _binary("LessEqual")
greater = _binary("Greater")
greater_equal = _binary("GreaterEqual")
def _comparison_with_shape_check(op_type: str):
    """Equal / NotEqual: TF 2.x's ops carry ``incompatible_shape_error`` (True: mismatched shapes are an
    error, not False)."""
    def fn(x, y, name=None):
        with name_scope(name, op_type) as scope:
            x, y = _pair(x, y)
            return apply_op(op_type, [x, y], dict(incompatible_shape_error=True), name=scope)
    fn.__name__ = op_type.lower()
    return fn


equal = _comparison_with_shape_check("Equal")
not_equal = _comparison_with_shape_check("NotEqual")
logical_and = _binary("LogicalAnd")
logical_or = _binary("LogicalOr")
logical_not = _unary("LogicalNot")


def logical_xor(x, y, name="LogicalXor"):
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


def _select_grad(op, g):
    c = op.inputs[0]
    zeros = zeros_like_op(g)
    return [None, where(c, g, zeros), where(c, zeros, g)]


def _select_shape(op):
    return broadcast_shapes(op.inputs[1].shape, op.inputs[2].shape)


register("Select", lambda c, x, y: np.where(c if c.ndim == x.ndim or c.ndim == 0 else
                                             c.reshape(c.shape + (1,) * (x.ndim - c.ndim)), x, y),
         _select_grad, _select_shape, dtype=lambda op: op.inputs[1].dtype)
register("Where", lambda c: np.argwhere(c).astype(np.int64), None,
         lambda op: TensorShape([None, op.inputs[0].shape.ndims]), dtype=dtypes.int64)


def _select_v2_grad(op, grad):
    """TF's ``_SelectGradV2``: ``grad`` where the condition holds to ``t``, elsewhere to ``e``, each summed back
    to its input's shape."""
    c, x, y = op.inputs
    z = op.outputs[0]
    with name_scope(None, "zeros") as scope:
        zeros = filled(0, [], grad.dtype, scope)
    gx = where_v2(c, grad, zeros)
    gy = where_v2(c, zeros, grad)
    return [None, reduce_gradient_args(x, z, gx, None)[0], reduce_gradient_args(y, z, gy, None)[0]]


def _select_v2_shape(op):
    return broadcast_shapes(broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape), op.inputs[2].shape)


register("SelectV2", np.where, _select_v2_grad, _select_v2_shape, dtype=lambda op: op.inputs[1].dtype)


def where_v2(condition, x, y, name=None):
    """TF's ``where_v2``: ``SelectV2(condition, x, y)``, the three broadcast together."""
    with name_scope(name, "SelectV2") as scope:
        condition = convert_to_tensor(condition, dtype=dtypes.bool, name="condition")
        x, y = _pair(x, y, names=("t", "e"))
        return apply_op("SelectV2", [condition, x, y], dict(T=x.dtype), name=scope)


def where(condition, x=None, y=None, name=None):
    """``Select(condition, x, y)``; with only ``condition``, the int64 coordinates of its true entries."""
    condition = convert_to_tensor(condition, dtype=dtypes.bool)
    if x is None and y is None:
        return apply_op("Where", [condition], name=name)
    with name_scope(name, "Select") as scope:
        x, y = _pair(x, y)
        return apply_op("Select", [condition, x, y], dict(T=x.dtype), name=scope)


def _arg_bind(np_fn):
    def bind(op, session):
        npd = op.attrs["output_type"].as_numpy_dtype
        return lambda x, axis: np_fn(x, axis=int(axis)).astype(npd)
    return bind


def _arg_shape(op):
    s, axis = op.inputs[0].shape, constant_value(op.inputs[1])
    if s.dims is None or axis is None:
        return TensorShape(None)
    axis = int(axis) % len(s.dims)
    return TensorShape([d for i, d in enumerate(s.dims) if i != axis])


register("ArgMax", bind=_arg_bind(np.argmax), shape=_arg_shape, dtype=lambda op: op.attrs["output_type"],
         type_attrs={"Tidx": 1})
register("ArgMin", bind=_arg_bind(np.argmin), shape=_arg_shape, dtype=lambda op: op.attrs["output_type"],
         type_attrs={"Tidx": 1})


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    axis = 0 if axis is None and dimension is None else (axis if axis is not None else dimension)
    with name_scope(name, "ArgMax") as scope:
        return apply_op("ArgMax", [input, convert_to_tensor(axis, dtype=dtypes.int32, name="dimension")],
                        dict(output_type=dtypes.as_dtype(output_type)), name=scope)


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    axis = 0 if axis is None and dimension is None else (axis if axis is not None else dimension)
    with name_scope(name, "ArgMin") as scope:
        return apply_op("ArgMin", [input, convert_to_tensor(axis, dtype=dtypes.int32, name="dimension")],
                        dict(output_type=dtypes.as_dtype(output_type)), name=scope)
