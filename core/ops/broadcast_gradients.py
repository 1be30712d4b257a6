"""The pieces gradients of broadcasting ops are built from, as TF's math_grad.py and array_ops.py build them.

- summing a gradient back to an input's shape: ``unbroadcast`` (static axes when the shapes decide them, else
  TF's ``BroadcastGradientArgs`` op, registered here) and ``reduce_gradient_args`` (TF's
  ``_ReduceGradientArgs`` / ``SmartBroadcastGradientArgs``, for both inputs of a binary op at once);
- tensors of a tensor's shape, named as TF names them: ``shape_internal`` (``array_ops.shape``), ``filled``
  (``zeros``/``ones``: a Const when small), ``zeros_like_same_dtype``, ``ones_like_same_dtype``.

Only framework pieces below it; math_ops and the other op modules build their gradients on it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, constant, convert_to_tensor, register


def zeros_like_op(x: Tensor) -> Tensor:
    """A ``ZerosLike`` op of a tensor (TF's ``gen_array_ops.zeros_like``)."""
    return apply_op("ZerosLike", [x])


CONSTANT_IF_SMALLER = 1000   # TF's array_ops._constant_if_small: zeros/ones of fewer elements are a Const


def filled(value: Any, dims: list, dtype: Any, scope: str) -> Tensor:
    """TF's ``zeros``/``ones`` of a static shape, inside their name scope ``scope``: a Const when small, else a
    ``Fill`` of a ``shape_as_tensor`` Const (so that a GraphDef does not carry the whole array)."""
    dtype = dtypes.as_dtype(dtype)
    if int(np.prod(dims)) < CONSTANT_IF_SMALLER:
        return constant(value, dtype=dtype, shape=dims, name=scope)
    dims_t = constant(np.array(dims, np.int32), name="shape_as_tensor")
    value_t = constant(value, dtype=dtype)
    return apply_op("Fill", [dims_t, value_t], dict(T=dtype, index_type=dtypes.int32), name=scope)


def zeros_like_same_dtype(tensor: Tensor, name: Any = None, optimize: bool = True) -> Tensor:
    """TF's ``array_ops.zeros_like`` of a tensor for its own dtype, named ``zeros_like``: the constant zeros
    when ``optimize`` and the static shape is fully defined, else a ``ZerosLike`` op."""
    with name_scope(name, "zeros_like") as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        if optimize and tensor.shape.is_fully_defined():
            with name_scope(scope):
                zeros = filled(0, tensor.shape.as_list(), tensor.dtype, scope)
        else:
            zeros = apply_op("ZerosLike", [tensor], name=scope)
        zeros._is_zeros_tensor = True
        return zeros


def ones_like_same_dtype(tensor: Tensor, name: Any = None, optimize: bool = True) -> Tensor:
    """TF's ``array_ops.ones_like`` of a tensor for its own dtype, named ``ones_like``: a ``Fill`` of the
    tensor's shape (``ones_like/Shape``: an op, or a ``shape_as_tensor`` Const when static) with
    ``ones_like/Const``."""
    with name_scope(name, "ones_like") as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dims = shape_internal(tensor, out_type=None, optimize=optimize)
        one = constant(1, dtype=tensor.dtype)
        ones = apply_op("Fill", [dims, one], dict(T=tensor.dtype, index_type=dims.dtype), name=scope)
        ones.set_shape(tensor.shape)
        return ones


def unbroadcast(grad: Tensor, x: Tensor) -> Tensor:
    """Sum ``grad`` (shaped like a broadcast result) back to the shape of ``x``.

    Uses the static shapes when they decide the reduction axes; otherwise TF's dynamic
    ``BroadcastGradientArgs`` + ``Sum`` + ``Reshape``.
    """
    sx, sg = x.shape.dims, grad.shape.dims
    if sx is not None and sg is not None and len(sx) <= len(sg):
        lead = len(sg) - len(sx)
        axes, ok = list(range(lead)), True
        for i, d in enumerate(sx):
            if d == 1:
                if sg[lead + i] != 1:
                    axes.append(lead + i)
            elif d is None:
                ok = False               # x's dim might be 1 at run time: decide dynamically
        if ok:
            if not axes:
                return grad
            with name_scope(None, "Sum") as scope:        # reduce_sum(grad, axes) as reduction_ops builds it
                summed = apply_op("Sum", [grad, constant(np.array(axes, np.int32), name="reduction_indices")],
                                  dict(keep_dims=bool(sx) and lead == 0), name=scope)
            if lead == 0:
                return summed
            return apply_op("Reshape", [summed, constant(np.array(sx, np.int32), name="Shape")])
    sx_t, sg_t = (apply_op("Shape", [t], dict(out_type=dtypes.int32)) for t in (x, grad))
    rx, _ = apply_op("BroadcastGradientArgs", [sx_t, sg_t])
    return apply_op("Reshape", [apply_op("Sum", [grad, rx], dict(keep_dims=False)), sx_t])


def _bga(sx, sy):
    n = max(len(sx), len(sy))
    px = [1] * (n - len(sx)) + list(sx)
    py = [1] * (n - len(sy)) + list(sy)
    rx = [i for i in range(n) if px[i] == 1 and py[i] != 1 or i < n - len(sx)]
    ry = [i for i in range(n) if py[i] == 1 and px[i] != 1 or i < n - len(sy)]
    return np.array(rx, np.int32), np.array(ry, np.int32)


register("BroadcastGradientArgs", _bga, num_outputs=2, shape=lambda op: [TensorShape([None])] * 2)


def shape_internal(x: Any, name: Any = None, out_type: Any = dtypes.int32, optimize: bool = True) -> Tensor:
    """TF's ``array_ops.shape``: a ``Shape`` op, or a Const (named ``Shape``) when ``optimize`` and the static
    shape is fully defined; with ``out_type=None`` (TF's ``shape_internal`` default) that Const is
    ``Shape/shape_as_tensor`` (int64 if a dimension needs it) and the op int32."""
    with name_scope(name, "Shape") as scope:
        x = convert_to_tensor(x)
        if optimize and x.shape.is_fully_defined():
            dims = x.shape.as_list()
            if out_type is None:
                wide = any(d >= 2 ** 31 for d in dims)
                return constant(np.array(dims, np.int64 if wide else np.int32), name="shape_as_tensor")
            return constant(np.array(dims, dtypes.as_dtype(out_type).as_numpy_dtype), name=scope)
        out_type = dtypes.as_dtype(out_type if out_type is not None else dtypes.int32)
        return apply_op("Shape", [x], dict(out_type=out_type), name=scope)


def _reshape(tensor: Tensor, shape: Tensor) -> Tensor:
    """``Reshape`` as ``array_ops.reshape`` names it (array_ops builds on math_ops, which builds on this module)."""
    with name_scope(None, "Reshape") as scope:
        return apply_op("Reshape", [tensor, shape], name=scope)


def _reduce_sum(grad: Tensor, axes: Any, keepdims: bool) -> Tensor:
    """``reduce_sum(grad, axes)`` as reduction_ops builds it: a list of axes becomes ``Sum/reduction_indices``."""
    with name_scope(None, "Sum") as scope:
        if not isinstance(axes, Tensor):
            axes = constant(np.array(axes, np.int32), name="reduction_indices")
        return apply_op("Sum", [grad, axes], dict(keep_dims=keepdims), name=scope)


def _gradient_reduction_axes(x_shape: TensorShape, y_shape: TensorShape):
    """TF's ``_InferGradientReductionAxes``: the axes each input was broadcast along, or (None, None) when that
    is decided at run time."""
    if x_shape.ndims is None or y_shape.ndims is None:
        return None, None
    x_dims, y_dims = x_shape.as_list(), y_shape.as_list()
    rank = max(len(x_dims), len(y_dims))
    x_dims = [1] * (rank - len(x_dims)) + x_dims
    y_dims = [1] * (rank - len(y_dims)) + y_dims
    x_axes, y_axes = [], []
    for axis, (x_dim, y_dim) in enumerate(zip(x_dims, y_dims)):
        if x_dim == 1 and y_dim != 1:
            x_axes.append(axis)
        elif y_dim == 1 and x_dim != 1:
            y_axes.append(axis)
        elif x_dim is None or y_dim is None:
            return None, None
    return x_axes, y_axes


def _smart_broadcast_gradient_args(x: Tensor, y: Tensor):
    """TF's ``SmartBroadcastGradientArgs``: per input (its shape, its reduction axes, whether to reduce)."""
    x_shape, y_shape = shape_internal(x), shape_internal(y)
    x_axes, y_axes = _gradient_reduction_axes(x.shape, y.shape)
    if x_axes is None or y_axes is None:
        x_axes, y_axes = apply_op("BroadcastGradientArgs", [x_shape, y_shape])
        return (x_shape, x_axes, True), (y_shape, y_axes, True)
    x_reduce = bool(x_axes) or x.shape.ndims < y.shape.ndims
    y_reduce = bool(y_axes) or y.shape.ndims < x.shape.ndims
    return (x_shape, x_axes, x_reduce), (y_shape, y_axes, y_reduce)


def _reduce_gradient_arg(grad: Any, shape_axes_reduce: tuple) -> Any:
    shape, axes, must_reduce = shape_axes_reduce
    if grad is not None and must_reduce:
        grad = _reshape(_reduce_sum(grad, axes, keepdims=True), shape)
    return grad


def reduce_gradient_args(x: Tensor, y: Tensor, gx: Any, gy: Any) -> list:
    """TF's ``_ReduceGradientArgs``: ``[gx, gy]`` each summed back to the shape of ``x``, ``y``."""
    if gx is not None or gy is not None:
        bx, by = _smart_broadcast_gradient_args(x, y)
        gx, gy = _reduce_gradient_arg(gx, bx), _reduce_gradient_arg(gy, by)
    return [gx, gy]


def same_static_shapes(x: Tensor, y: Tensor, grad: Any) -> bool:
    """TF's ``_ShapesFullySpecifiedAndEqual`` (for a dense ``grad``)."""
    if not (isinstance(grad, Tensor) and x.shape.is_fully_defined()):
        return False
    dims = x.shape.as_list()
    return all(s.dims is not None and s.as_list() == dims for s in (y.shape, grad.shape))
