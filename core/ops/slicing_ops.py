"""Tensor indexing: ``t[1:3, ..., None, 0]`` is TF's ``StridedSlice`` (begin/end/strides Const inputs and the
begin/end/shrink/ellipsis/new-axis masks); its gradient ``StridedSliceGrad`` scatters into zeros. Also ``Slice``
and its inverse ``Pad`` (``PadV2``, ``MirrorPad``); their public functions are exported as ``tf.<name>`` by
manip_ops (``slice_`` as ``tf.slice``)."""
from __future__ import annotations

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, constant_shape, constant_value, convert_to_tensor, register
from .array_ops import _i32, concat, rank, reshape, shape, stack


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
    if dims is None:
        return TensorShape(None)
    if any(c is None for c in consts):
        return _dynamic_strided_slice_shape(op, dims)
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


def _dynamic_strided_slice_shape(op, dims) -> TensorShape:
    """The static shape when begin/end/strides are computed: a shrunk axis goes, a new axis is 1, a full slice
    (both masks, stride 1 known or not) keeps its dimension, anything else is unknown."""
    n = op.inputs[1].shape.dims[0] if op.inputs[1].shape.dims else None
    attrs = op.attrs
    if n is None or attrs["ellipsis_mask"]:
        return TensorShape(None)
    strides = constant_value(op.inputs[3])
    out, used = [], 0
    for i in range(n):
        bit = 1 << i
        if attrs["new_axis_mask"] & bit:
            out.append(1)
            continue
        d = dims[used] if used < len(dims) else None
        used += 1
        if attrs["shrink_axis_mask"] & bit:
            continue
        full = attrs["begin_mask"] & bit and attrs["end_mask"] & bit
        out.append(d if full and strides is not None and int(np.reshape(strides, [-1])[i]) == 1 else None)
    return TensorShape(out + list(dims[used:]))


def _strided_slice_grad(op, g):
    """TF's ``_StridedSliceGrad``: ``StridedSliceGrad(shape(x), begin, end, strides, g)``, each of the four a
    Const of its own (``StridedSliceGrad/shape``, ``/begin``...) when its value is known as the graph is built."""
    x, b, e, s = op.inputs
    attrs = {k: op.attrs[k] for k in _MASKS}
    attrs.update(T=g.dtype, Index=b.dtype)
    x_shape = shape(x, out_type=b.dtype)
    with name_scope(None, "StridedSliceGrad") as scope:
        args = []
        for t, arg_name in zip((x_shape, b, e, s), ("shape", "begin", "end", "strides")):
            static = constant_value(t)
            args.append(t if static is None else convert_to_tensor(static, name=arg_name))
        return [apply_op("StridedSliceGrad", args + [g], attrs, name=scope), None, None, None]


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


def _is_index_tensor(k) -> bool:
    return isinstance(k, Tensor) and k.dtype.name in ("int32", "int64") and k.shape.ndims in (None, 0)


def strided_slice(x, key, name="strided_slice"):
    """``x[key]`` for ints, slices, ``...`` and ``None`` (new axes): TF's StridedSlice with its masks. An index
    or a slice bound may be a scalar int Tensor (``x[t]`` in a loop body), as in TF: then begin/end/strides are
    ``Pack``-ed (``stack``) and ``t + 1`` is made before the op's name scope."""
    key = key if isinstance(key, tuple) else (key,)
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    for i, k in enumerate(key):
        bit = 1 << i
        if isinstance(k, slice):
            for part in (k.start, k.stop, k.step):
                if part is not None and not isinstance(part, (int, np.integer)) and not _is_index_tensor(part):
                    raise TypeError("slice indices must be integers or None or scalar int tensors, got %r"
                                    % (part,))
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
        elif isinstance(k, (int, np.integer)) or _is_index_tensor(k):
            masks["shrink_axis_mask"] |= bit
        else:
            raise TypeError("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                            "tf.int32/tf.int64 tensors are valid indices, got %r" % (k,))
        if _is_index_tensor(k):
            begin.append(k)
            end.append(k + 1)
        elif isinstance(k, (int, np.integer)):
            begin.append(int(k))
            end.append(int(k) + 1)
        else:                                   # ... and tf.newaxis: TF writes 0, 0
            begin.append(0)
            end.append(0)
        strides.append(1)
    with name_scope(name, "strided_slice") as scope:
        if any(isinstance(v, Tensor) for v in begin + end + strides):
            dtype = next(v.dtype for v in begin + end + strides if isinstance(v, Tensor))

            def pack(values, stack_name):
                return stack([v if isinstance(v, Tensor) else convert_to_tensor(np.asarray(v, dtype.as_numpy_dtype))
                              for v in values], name=stack_name)
            args = [pack(begin, "stack"), pack(end, "stack_1"), pack(strides, "stack_2")]
            index = dtype
        else:
            args = [_i32(begin, "stack"), _i32(end, "stack_1"), _i32(strides, "stack_2")]
            index = dtypes.int32
        return apply_op("StridedSlice", [x] + args, dict(masks, Index=index), name=scope)


Tensor.__getitem__ = strided_slice


# ---- Slice: begin and size (``-1``: to the end); its gradient pads with zeros (TF's _SliceGrad)


def _slice_index(shape_, begin, size):
    return tuple(slice(int(b), int(d) if int(s) == -1 else int(b) + int(s))
                 for b, s, d in zip(np.reshape(begin, [-1]), np.reshape(size, [-1]), shape_))


def _slice_forward(x, begin, size):
    index = _slice_index(x.shape, begin, size)
    if len(index) != x.ndim or any(s.start < 0 or s.stop > d or s.stop < s.start
                                   for s, d in zip(index, x.shape)):
        raise ValueError("Expected begin and size arguments to be 1-D tensors of size %d, with 0 <= begin[i] "
                         "<= begin[i] + size[i] <= input.dim_size(i); got begin %s, size %s for shape %s"
                         % (x.ndim, np.reshape(begin, [-1]).tolist(), np.reshape(size, [-1]).tolist(),
                            list(x.shape)))
    return x[index]


def _slice_shape(op):
    dims = op.inputs[0].shape.dims
    begin, size = constant_value(op.inputs[1]), constant_value(op.inputs[2])
    if size is None:
        n = op.inputs[2].shape.dims[0] if op.inputs[2].shape.dims else None
        return TensorShape(None if n is None else [None] * n)
    size = [int(s) for s in np.reshape(size, [-1])]
    if dims is not None and len(dims) != len(size):
        raise ValueError("Shape must be rank %d but is rank %d for 'Slice' (op: 'Slice') with input shapes: %s"
                         % (len(dims), len(size), op.inputs[0].shape))
    out = []
    for i, s in enumerate(size):
        if s != -1:
            out.append(s)
        elif begin is not None and dims is not None and dims[i] is not None:
            out.append(dims[i] - int(np.reshape(begin, [-1])[i]))
        else:
            out.append(None)
    return TensorShape(out)


def _slice_grad(op, g):
    """pad(grad, [[begin, shape(x) - shape(y) - begin]]) per dimension."""
    x, begin = op.inputs[0], op.inputs[1]
    column = stack([rank(x), 1])
    before = reshape(begin, column)
    after = reshape(shape(x, out_type=begin.dtype) - shape(op.outputs[0], out_type=begin.dtype) - begin, column)
    return [pad(g, concat([before, after], 1)), None, None]


register("Slice", _slice_forward, _slice_grad, _slice_shape, type_attrs={"Index": 1})


def slice_(input_, begin, size, name=None) -> Tensor:
    """``input_[begin[i] : begin[i] + size[i]]`` per dimension; ``size[i] == -1`` takes the rest."""
    with name_scope(name, "Slice") as scope:       # a list holding tensors is packed as Slice/begin, ...
        begin = convert_to_tensor(begin, dtype=None if isinstance(begin, Tensor) else dtypes.int32, name="begin")
        size = convert_to_tensor(size, dtype=None if isinstance(size, Tensor) else dtypes.int32, name="size")
        return apply_op("Slice", [input_, begin, size], name=scope)


# ---- Pad (zeros), PadV2 (constant_values), MirrorPad (REFLECT / SYMMETRIC) and MirrorPadGrad


def _check_paddings(x, paddings):
    paddings = np.asarray(paddings)
    if paddings.shape != (x.ndim, 2) or (paddings < 0).any():
        raise ValueError("The first dimension of paddings must be the rank of inputs [%d,2] and paddings must "
                         "be non-negative, got %s" % (x.ndim, paddings.tolist()))
    return [(int(a), int(b)) for a, b in paddings]


def _pad_forward(x, paddings, constant_values=None):
    widths = _check_paddings(x, paddings)
    value = 0 if constant_values is None else constant_values
    return np.pad(x, widths, mode="constant", constant_values=np.asarray(value, dtype=x.dtype))


def _pad_shape(op):
    dims, paddings = op.inputs[0].shape.dims, constant_value(op.inputs[1])
    if paddings is not None:
        paddings = np.reshape(paddings, [-1, 2])
        if (paddings < 0).any():
            raise ValueError("Paddings must be non-negative for '%s' (op: '%s'): %s"
                             % (op.name, op.type, paddings.tolist()))
        if dims is not None and len(dims) != len(paddings):
            raise ValueError("Shape must be rank %d but is rank %d for '%s' (op: '%s') with input shapes: %s, %s"
                             % (len(dims), len(paddings), op.name, op.type, op.inputs[0].shape,
                                op.inputs[1].shape))
        dims = dims if dims is not None else [None] * len(paddings)
        return TensorShape([None if d is None else d + int(a) + int(b) for d, (a, b) in zip(dims, paddings)])
    return TensorShape(None if dims is None else [None] * len(dims))


def _pad_grad(op, g):
    """slice(grad, paddings[:, 0], shape(x)) (TF's _PadGrad)."""
    x, paddings = op.inputs[0], op.inputs[1]
    begin = reshape(slice_(paddings, _i32([0, 0]), _i32([-1, 1])), _i32([-1]))
    return [slice_(g, begin, shape(x, out_type=begin.dtype)), None] + [None] * (len(op.inputs) - 2)


def _mirror_source(n, before, after, mode):
    """For each position of a padded axis, the input position it copies (``np.pad`` of the positions)."""
    return np.pad(np.arange(n), (before, after), mode="reflect" if mode == "REFLECT" else "symmetric")


def _check_mirror(shape_, widths, mode):
    offset = 1 if mode == "REFLECT" else 0
    for d, (a, b) in zip(shape_, widths):
        if a > d - offset or b > d - offset:
            raise ValueError("paddings must be less than%s the dimension size: %d, %d not less than %d"
                             % ("" if offset else " or equal to", a, b, d))


def _mirror_pad_forward(x, paddings, mode):
    widths = _check_paddings(x, paddings)
    _check_mirror(x.shape, widths, _mode(mode))
    return np.pad(x, widths, mode="reflect" if _mode(mode) == "REFLECT" else "symmetric")


def _mirror_pad_grad_forward(g, paddings, mode):
    """Fold the padded gradient back: every padded position adds into the input position it copied."""
    widths = _check_paddings(g, paddings)
    out = g
    for axis, (a, b) in enumerate(widths):
        n = out.shape[axis] - a - b
        source = _mirror_source(n, a, b, _mode(mode))
        moved = np.moveaxis(out, axis, 0)
        folded = np.zeros((n,) + moved.shape[1:], dtype=g.dtype)
        np.add.at(folded, source, moved)
        out = np.moveaxis(folded, 0, axis)
    return np.ascontiguousarray(out)


def _mode(mode):
    return mode.decode() if isinstance(mode, bytes) else mode


def _mirror_pad_grad_shape(op):
    dims, paddings = op.inputs[0].shape.dims, constant_value(op.inputs[1])
    if dims is None or paddings is None:
        return TensorShape(None if dims is None else [None] * len(dims))
    return TensorShape([None if d is None else d - int(a) - int(b)
                        for d, (a, b) in zip(dims, np.reshape(paddings, [-1, 2]))])


_PAD = dict(shape=_pad_shape, type_attrs={"Tpaddings": 1})
register("Pad", _pad_forward, _pad_grad, **_PAD)
register("PadV2", _pad_forward, _pad_grad, **_PAD)
register("MirrorPad", _mirror_pad_forward,
         lambda op, g: [apply_op("MirrorPadGrad", [g, op.inputs[1]], dict(mode=op.attrs["mode"])), None], **_PAD)
register("MirrorPadGrad", _mirror_pad_grad_forward,
         lambda op, g: [apply_op("MirrorPad", [g, op.inputs[1]], dict(mode=op.attrs["mode"])), None],
         _mirror_pad_grad_shape, type_attrs={"Tpaddings": 1})


def pad(tensor, paddings, mode: str = "CONSTANT", name=None, constant_values=0) -> Tensor:
    """Pad ``tensor`` by ``paddings[i] = [before, after]`` along dimension i.

    ``CONSTANT`` fills with ``constant_values`` (TF writes ``Pad`` when it is a Python zero, else ``PadV2``);
    ``REFLECT`` mirrors without the edge (``[1, 2, 3]`` padded by 2 is ``[3, 2, 1, 2, 3, 2, 1]``), ``SYMMETRIC``
    with it (``[2, 1, 1, 2, 3, 3, 2]``): op ``MirrorPad``.
    """
    mode = mode.upper()
    if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError("Value of argument `mode` expected to be one of \"CONSTANT\", \"REFLECT\", or "
                         "\"SYMMETRIC\". Received `mode` = %s" % mode)
    tensor = convert_to_tensor(tensor)
    if mode == "CONSTANT":
        plain = not isinstance(constant_values, Tensor) and np.ndim(constant_values) == 0 and \
            constant_values == 0
        op_type = "Pad" if plain else "PadV2"
    else:
        op_type = "MirrorPad"
    with name_scope(name, op_type) as scope:
        paddings = paddings if isinstance(paddings, Tensor) else \
            convert_to_tensor(paddings, dtype=dtypes.int32, name="paddings")
        if op_type == "Pad":
            return apply_op("Pad", [tensor, paddings], name=scope)
        if op_type == "PadV2":
            value = convert_to_tensor(constant_values, dtype=tensor.dtype, name="constant_values")
            return apply_op("PadV2", [tensor, paddings, value], name=scope)
        return apply_op("MirrorPad", [tensor, paddings], dict(mode=mode), name=scope)
