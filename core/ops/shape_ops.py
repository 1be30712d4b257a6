"""The shape ops at the bottom of TF's ``array_ops``: identity and stop_gradient, shape queries (``shape``, ``size``,
``rank``, ``range``), reshape, transpose, expand_dims and squeeze, and the ops that make a tensor of a shape (tile,
fill, zeros_like / ones_like, broadcast_to, one_hot). Their gradients need nothing above them; ``array_ops`` joins,
splits and gathers on top of them, and gives both under TF's ``array_ops`` names."""
from __future__ import annotations

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import (apply_op, constant, constant_shape, constant_value, convert_to_tensor, create_op,
                                  register, shape_same, shape_scalar)
from . import broadcast_gradients, math_ops



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
