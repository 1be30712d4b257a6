"""Array manipulation: pad, slice, reverse, gather_nd/scatter_nd, masks, sort/top_k, unique, meshgrid, linspace,
space/depth, random_shuffle/multinomial.

Names in ``__all__`` are exported as ``tf.<name>``. ``top_k`` is ``tf.nn.top_k`` / ``tf.math.top_k`` (not in
``__all__``). ``Slice``/``Pad``/``MirrorPad`` live in slicing_ops and
``RandomShuffle``/``Multinomial`` in random_ops; they are re-exported here.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..framework import dtypes, errors
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import (IndexedSlices, apply_op, constant, constant_shape, constant_value,
                                  convert_to_tensor, register)
from . import math_ops, reduction_ops
from .array_ops import _i32, concat, expand_dims, fill, gather, rank, reshape, shape, size, squeeze, stack, transpose
from .random_ops import multinomial, random_shuffle
from .slicing_ops import _strided_index, pad, slice_ as slice  # noqa: A004

__all__ = ["argsort", "boolean_mask", "depth_to_space", "gather_nd", "lin_space", "linspace", "meshgrid",
           "multinomial", "pad", "random_shuffle", "reverse", "reverse_v2", "scatter_nd", "sequence_mask", "slice",
           "sort", "space_to_depth", "unique"]


def _static_value(t: Tensor) -> Optional[np.ndarray]:
    """``constant_value``, also through a StridedSlice of a known value (``shape(x)[axis]`` of a static shape)."""
    value = constant_value(t)
    if value is None and isinstance(t, Tensor) and t.op.type == "StridedSlice":
        base, *consts = [_static_value(i) for i in t.op.inputs]
        if base is not None and all(c is not None for c in consts):
            value = np.asarray(base[_strided_index(*consts, t.op.attrs)])
    return value


# ---- reverse (ReverseV2: the axes are an input)


def _reverse_forward(x, axis):
    axes = [int(a) % max(x.ndim, 1) for a in np.reshape(axis, [-1])]
    if len(set(axes)) != len(axes):
        raise ValueError("axis %s specified more than once" % np.reshape(axis, [-1]).tolist())
    return np.flip(x, axis=tuple(axes)) if axes else x


def _reverse_shape(op):
    dims, axis = op.inputs[0].shape.dims, constant_value(op.inputs[1])
    if dims is not None and axis is not None:
        axes = [int(a) for a in np.reshape(axis, [-1])]
        if len({a % max(len(dims), 1) for a in axes}) != len(axes):
            raise ValueError("axis %s specified more than once for 'ReverseV2' (op: 'ReverseV2')" % axes)
        for a in axes:
            if not -len(dims) <= int(a) < len(dims):
                raise ValueError("'axis'[0] = %d is out of valid range [0, %d) for 'ReverseV2' (op: 'ReverseV2') "
                                 "with input shapes: %s" % (int(a), len(dims), op.inputs[0].shape))
    return op.inputs[0].shape


register("ReverseV2", _reverse_forward, lambda op, g: [reverse(g, op.inputs[1]), None], _reverse_shape,
         type_attrs={"Tidx": 1})


def reverse(tensor, axis, name=None) -> Tensor:
    """``tensor`` reversed along each dimension in ``axis`` (negative axes count from the end); op ReverseV2."""
    with name_scope(name, "ReverseV2") as scope:
        axis = axis if isinstance(axis, Tensor) else convert_to_tensor(np.asarray(axis, dtype=np.int32),
                                                                       name="axis")
        return apply_op("ReverseV2", [tensor, axis], name=scope)


reverse_v2 = reverse


# ---- GatherNd / ScatterNd: the last axis of ``indices`` indexes the leading dimensions
# (segment_ops also registers these two op types; manip_ops is imported after it, so these registrations hold)


def _nd_index(indices, shape_, what):
    """The numpy index of ``indices[..., k]`` into ``shape_``; out-of-range indices are errors, as in TF."""
    indices = np.asarray(indices)
    k = indices.shape[-1]
    bound = np.asarray(shape_[:k]).reshape((1,) * (indices.ndim - 1) + (k,))
    bad = (indices < 0) | (indices >= bound)
    if bad.any():
        at = np.argwhere(bad.any(axis=-1))[0]
        raise errors.InvalidArgumentError(None, "indices%s = %s does not index into %s shape %s"
                                          % (list(at), indices[tuple(at)].tolist(), what, list(shape_)))
    return tuple(np.moveaxis(indices, -1, 0))


def _gather_nd_forward(params, indices):
    return np.asarray(params[_nd_index(indices, params.shape, "param")])


def _gather_nd_shape(op):
    p, i = op.inputs[0].shape.dims, op.inputs[1].shape.dims
    if p is None or i is None or i[-1] is None:
        return TensorShape(None)
    if i[-1] > len(p):
        raise ValueError("indices.shape[-1] must be <= params.rank, but saw indices shape: %s and params "
                         "shape: %s for 'GatherNd'" % (op.inputs[1].shape, op.inputs[0].shape))
    return TensorShape(list(i[:-1]) + list(p[i[-1]:]))


def _gather_nd_grad(op, g):
    """Rows of a sparse gradient when indices is [n, 1], else scatter_nd(indices, grad, shape(params))."""
    params, indices = op.inputs
    params_shape = shape(params, out_type=indices.dtype)
    if indices.shape.ndims == 2 and indices.shape.dims[-1] == 1:
        return [IndexedSlices(g, squeeze(indices, axis=-1), params_shape), None]
    return [scatter_nd(indices, g, params_shape), None]


def _scatter_nd_forward(indices, updates, shape_):
    out = np.zeros(tuple(int(d) for d in shape_), dtype=updates.dtype)
    np.add.at(out, _nd_index(indices, out.shape, "output"), updates)
    return out


register("GatherNd", _gather_nd_forward, _gather_nd_grad, _gather_nd_shape, dtype=lambda op: op.inputs[0].dtype,
         type_attrs={"Tparams": 0, "Tindices": 1})
register("ScatterNd", _scatter_nd_forward, lambda op, g: [None, gather_nd(g, op.inputs[0]), None],
         lambda op: constant_shape(op.inputs[2]), dtype=lambda op: op.inputs[1].dtype,
         type_attrs={"T": 1, "Tindices": 0})


def gather_nd(params, indices, name=None, batch_dims: int = 0) -> Tensor:
    """``out[i0, ..., i(n-1)] = params[indices[i0, ..., i(n-1), :]]`` (a slice of params when
    ``indices.shape[-1] < params.rank``); op ``GatherNd``, gradient ``ScatterNd``."""
    if batch_dims != 0:
        raise NotImplementedError("gather_nd with batch_dims != 0")
    with name_scope(name, "GatherNd") as scope:
        params = convert_to_tensor(params, name="params")
        indices = _index_tensor(indices)
        return apply_op("GatherNd", [params, indices], name=scope)


def scatter_nd(indices, updates, shape, name=None) -> Tensor:  # noqa: F811 - TF's argument name
    """Zeros of ``shape`` with ``updates`` added at ``indices`` (duplicates add up); op ``ScatterNd``."""
    with name_scope(name, "ScatterNd") as scope:
        indices = _index_tensor(indices)
        updates = convert_to_tensor(updates, name="updates")
        shape = shape if isinstance(shape, Tensor) else convert_to_tensor(shape, dtype=indices.dtype, name="shape")
        return apply_op("ScatterNd", [indices, updates, shape], name=scope)


def _index_tensor(indices):
    if isinstance(indices, Tensor):
        return indices
    return convert_to_tensor(indices, dtype=dtypes.int32 if np.asarray(indices).dtype != np.int64 else None,
                             name="indices")


# ---- boolean_mask and sequence_mask (composites, as TF builds them)


def boolean_mask(tensor, mask, name: str = "boolean_mask", axis: Any = None) -> Tensor:
    """``tensor[mask]`` for a K-D boolean ``mask`` matching dimensions ``axis .. axis + K - 1``: those dimensions
    are flattened into one and gathered where the mask is true (the result's size there is unknown)."""
    with name_scope(name, "boolean_mask"):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, dtype=dtypes.bool, name="mask")
        ndims_mask = mask.shape.ndims
        if ndims_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if ndims_mask is None:
            raise ValueError("Number of mask dimensions must be specified, even if some dimensions are None.  "
                             "E.g. shape=[None] is ok, but shape=None is not.")
        axis = 0 if axis is None else int(axis)
        static = tensor.shape
        if static.dims is not None:
            static[axis:axis + ndims_mask].assert_is_compatible_with(mask.shape)
        leading_size = reduction_ops.reduce_prod(shape(tensor)[axis:axis + ndims_mask], [0], name="Prod")
        flat = reshape(tensor, concat([shape(tensor)[:axis], [leading_size], shape(tensor)[axis + ndims_mask:]], 0))
        if static.dims is not None:
            flat.set_shape(list(static.dims[:axis]) + [static[axis:axis + ndims_mask].num_elements()]
                           + list(static.dims[axis + ndims_mask:]))
        mask = reshape(mask, [-1])
        indices = squeeze(math_ops.where(mask), axis=[1])
        return gather(flat, indices, axis=axis)


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None) -> Tensor:
    """``mask[i..., j] = j < lengths[i...]`` for ``j < maxlen`` (default ``max(lengths)``)."""
    with name_scope(name, "SequenceMask"):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            maxlen = reduction_ops.reduce_max(lengths, name="Max")
            maxlen = math_ops.maximum(constant(0, dtype=maxlen.dtype), maxlen)
        else:
            maxlen = convert_to_tensor(maxlen)
        if maxlen.shape.ndims is not None and maxlen.shape.ndims != 0:
            raise ValueError("Argument `maxlen` must be scalar for sequence_mask, received `maxlen` = %s with "
                             "shape '%s' instead" % (maxlen, maxlen.shape))
        known_lengths = constant_value(lengths)
        row = apply_op("Range", [constant(0, dtype=maxlen.dtype), maxlen, constant(1, dtype=maxlen.dtype)],
                       dict(Tidx=maxlen.dtype))
        if known_lengths is not None and known_lengths.size and maxlen.op.type == "Maximum":
            row.set_shape([max(0, int(known_lengths.max()))])     # TF's shape inference folds max(lengths)
        lengths = expand_dims(lengths, -1)
        matrix = apply_op("Cast", [lengths], dict(SrcT=lengths.dtype, DstT=maxlen.dtype, Truncate=False))
        result = math_ops.less(row, matrix)
        dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.bool
        return result if dtype is dtypes.bool else math_ops.cast(result, dtype)


# ---- top_k, sort, argsort


def _top_k_forward(x, k, sorted=True):  # noqa: A002 - the op's attr
    """The k largest entries of each last-axis row, ties in index order (``sorted`` or not, as TF's CPU)."""
    k, n = int(k), x.shape[-1]
    if k < 0 or k > n:
        raise ValueError("input must have at least k columns. Had %d, needed %d" % (n, k))
    # a stable descending argsort: sort the reversed row ascending (stable), reverse the order back
    order = n - 1 - np.flip(np.argsort(np.flip(x, -1), axis=-1, kind="stable"), -1)[..., :k]
    return np.take_along_axis(x, order, -1), order.astype(np.int32)


def _top_k_shape(op):
    dims, k = op.inputs[0].shape.dims, _static_value(op.inputs[1])
    if dims is None:
        return [TensorShape(None)] * 2
    if not dims:
        raise ValueError("Shape must be at least rank 1 but is rank 0 for 'TopKV2'")
    if k is not None and int(k) < 0:
        raise ValueError("Dimension size, given by scalar input 1, must be non-negative but is %d for 'TopKV2'"
                         % int(k))
    if k is not None and dims[-1] is not None and int(k) > dims[-1]:
        raise ValueError("input must have last dimension >= k = %d but is %d for 'TopKV2' with input shapes: %s"
                         % (int(k), dims[-1], op.inputs[0].shape))
    out = TensorShape(list(dims[:-1]) + [None if k is None else int(k)])
    return [out, out]


def _top_k_grad(op, g, _):
    """Scatter the gradient of the values back to where they came from (TF's _TopKGrad, int32 indices)."""
    x, indices = op.inputs[0], op.outputs[1]
    in_shape = shape(x)
    ind_lastdim = gather(shape(indices), size(shape(indices)) - 1)
    ind_2d = reshape(indices, stack([-1, ind_lastdim]))
    in_lastdim = gather(in_shape, size(in_shape) - 1)
    outerdim = shape(ind_2d)[0]
    offsets = apply_op("Range", [_i32(0), outerdim * in_lastdim, in_lastdim], dict(Tidx=dtypes.int32))
    ind = reshape(ind_2d + expand_dims(offsets, -1), [-1])
    flat = scatter_nd(expand_dims(ind, -1), reshape(g, [-1]),
                      stack([reduction_ops.reduce_prod(in_shape, name="Prod")]))
    return [reshape(flat, in_shape), None]


register("TopKV2", _top_k_forward, _top_k_grad, _top_k_shape, num_outputs=2,
         dtype=lambda op: [op.inputs[0].dtype, dtypes.int32])


def top_k(input, k=1, sorted: bool = True, name=None):  # noqa: A002
    """``(values, indices)``: the ``k`` largest entries along the last axis and their int32 positions, largest
    first, equal values in index order (op ``TopKV2``). ``tf.nn.top_k`` / ``tf.math.top_k``."""
    with name_scope(name, "TopKV2") as scope:
        k = k if isinstance(k, Tensor) else convert_to_tensor(k, dtype=dtypes.int32, name="k")
        return apply_op("TopKV2", [input, k], dict(sorted=bool(sorted)), name=scope)


def _descending(values: Tensor, axis: int, return_argsort: bool) -> Tensor:
    ndims = values.shape.ndims
    k = shape(values)[axis]
    rank(values)                                   # as TF (folded away there), unused
    transposition = None
    if not (axis == -1 or axis + 1 == ndims):
        if ndims is None:
            raise ValueError("sort along an axis other than the last needs a known rank")
        axis = axis % ndims
        perm = list(range(ndims))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        transposition = constant(np.array(perm, np.int64), name="transposition")   # TF's np.r_: int64
        values = transpose(values, transposition)
    out = top_k(values, k)[1 if return_argsort else 0]
    return out if transposition is None else transpose(out, transposition)


def _sort_or_argsort(values, axis, direction, return_argsort):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError("Argument `direction` should be one of ASCENDING, DESCENDING. Received: direction=%s"
                         % direction)
    axis_t = axis if isinstance(axis, Tensor) else convert_to_tensor(axis, name="axis")
    axis = constant_value(axis_t)
    if axis_t.shape.ndims not in (None, 0) or axis is None:
        raise ValueError("Argument `axis` must be a constant scalar. Received: axis=%s." % axis_t)
    values = convert_to_tensor(values, name="values")
    axis = int(axis)
    if direction == "DESCENDING":
        return _descending(values, axis, return_argsort)
    if values.dtype.is_integer:                    # -x - 1 maps the minimum to the maximum
        out = _descending(-values - 1, axis, return_argsort)
        return out if return_argsort else -out - 1
    out = _descending(-values, axis, return_argsort)
    return out if return_argsort else -out


def sort(values, axis=-1, direction: str = "ASCENDING", name=None) -> Tensor:
    """``values`` sorted along ``axis`` (a constant); built from ``TopKV2`` of the negated values, as TF."""
    with name_scope(name, "sort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=False)


def argsort(values, axis=-1, direction: str = "ASCENDING", stable: bool = False, name=None) -> Tensor:
    """int32 indices that sort ``values`` along ``axis``; equal values keep their order (``stable`` always)."""
    with name_scope(name, "argsort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=True)


# ---- unique


def _unique_forward(x, out_idx):
    """Distinct values in order of first appearance, and each entry's position among them."""
    values, first, inverse = np.unique(x, return_index=True, return_inverse=True, equal_nan=False)
    order = np.argsort(first, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    return values[order], position[inverse.reshape(-1)].astype(out_idx.as_numpy_dtype)


def _unique_shape(op):
    s = op.inputs[0].shape
    if s.ndims is not None and s.ndims != 1:
        raise ValueError("Shape must be rank 1 but is rank %d for 'Unique' (op: 'Unique') with input shapes: %s."
                         % (s.ndims, s))
    return [TensorShape([None]), TensorShape([None]) if s.dims is None else s]


register("Unique", _unique_forward, None, _unique_shape, num_outputs=2,
         dtype=lambda op: [op.inputs[0].dtype, op.attrs["out_idx"]])


def unique(x, out_idx=dtypes.int32, name=None):
    """``(y, idx)``: the distinct entries of 1-D ``x`` in order of appearance and ``x == gather(y, idx)``."""
    return apply_op("Unique", [x], dict(out_idx=dtypes.as_dtype(out_idx)), name=name)


# ---- meshgrid, linspace


def meshgrid(*args, **kwargs) -> list:
    """N-D coordinate grids from N 1-D tensors; ``indexing='xy'`` (default) swaps the first two axes.
    Each output is ``reshape(x_i) * ones(shape)``, as TF builds it."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError("'%s' is an invalid keyword argument for this function" % list(kwargs)[0])
    if indexing not in ("xy", "ij"):
        raise ValueError("Argument `indexing` parameter must be either 'xy' or 'ij', got '%s'" % indexing)
    with name_scope(name, "meshgrid"):
        ndim = len(args)
        if not ndim:
            return []
        args = [convert_to_tensor(x) for x in args]
        ones_shape = (1,) * ndim
        output = [reshape(x, ones_shape[:i] + (-1,) + ones_shape[i + 1:]) for i, x in enumerate(args)]
        sizes = [size(x) for x in args]
        if indexing == "xy" and ndim > 1:
            output[0] = reshape(output[0], (1, -1) + (1,) * (ndim - 2))
            output[1] = reshape(output[1], (-1, 1) + (1,) * (ndim - 2))
            sizes[0], sizes[1] = sizes[1], sizes[0]
        with name_scope(None, "ones") as scope:
            ones = fill(stack(sizes, name="packed"), constant(1, dtype=args[0].dtype), name=scope)
        return [x * ones for x in output]


def _lin_space_forward(start, stop, num):
    """TF's kernel: ``start + i * step`` with ``step = (stop - start) / (num - 1)``, the last value ``stop``."""
    n = int(num)
    if n <= 0:
        raise ValueError("Requires num > 0: %d" % n)
    step = (stop - start) / (n - 1) if n > 1 else stop - start
    out = start + np.arange(n, dtype=start.dtype) * step
    out[-1] = stop if n > 1 else start
    return out.astype(start.dtype, copy=False)


def _lin_space_grad(op, g):
    """d out[i] / d start = 1 - i / (num - 1) and d out[i] / d stop = i / (num - 1)."""
    start, stop, num = op.inputs
    weight = apply_op("LinSpace", [constant(0, dtype=start.dtype), constant(1, dtype=start.dtype), num])
    to_stop = reduction_ops.reduce_sum(g * weight)
    return [reduction_ops.reduce_sum(g) - to_stop, to_stop, None]


def _lin_space_shape(op):
    for t, what in zip(op.inputs, ("start", "stop", "num")):
        if t.shape.ndims not in (None, 0):
            raise ValueError("Shape must be rank 0 but is rank %d for 'LinSpace' (%s)" % (t.shape.ndims, what))
    num = constant_value(op.inputs[2])
    return TensorShape([None if num is None else int(num)])


register("LinSpace", _lin_space_forward, _lin_space_grad, _lin_space_shape, type_attrs={"Tidx": 2})


def linspace(start, stop, num, name=None, axis: int = 0) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive (scalars): TF 1.x's ``LinSpace`` op."""
    if axis != 0:
        raise NotImplementedError("linspace of scalars has only axis 0")
    with name_scope(name, "LinSpace") as scope:
        start = convert_to_tensor(start, name="start", preferred_dtype=None if isinstance(start, Tensor)
                                  else dtypes.float32)
        stop = convert_to_tensor(stop, dtype=start.dtype, name="stop")
        num = num if isinstance(num, Tensor) else convert_to_tensor(num, dtype=dtypes.int32, name="num")
        return apply_op("LinSpace", [start, stop, num], name=scope)


lin_space = linspace


# ---- space_to_depth / depth_to_space (NHWC; NCHW transposed around)


def _s2d(x, block_size, data_format="NHWC"):
    if data_format == "NCHW":
        return np.ascontiguousarray(np.transpose(_s2d(np.transpose(x, (0, 2, 3, 1)), block_size), (0, 3, 1, 2)))
    n, h, w, c = x.shape
    b = block_size
    y = x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
    return y.reshape(n, h // b, w // b, b * b * c)


def _d2s(x, block_size, data_format="NHWC"):
    if data_format == "NCHW":
        return np.ascontiguousarray(np.transpose(_d2s(np.transpose(x, (0, 2, 3, 1)), block_size), (0, 3, 1, 2)))
    n, h, w, c = x.shape
    b = block_size
    y = x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5)
    return y.reshape(n, h * b, w * b, c // (b * b))


def _space_depth_shape(to_depth: bool):
    def shape_fn(op):
        dims, b = op.inputs[0].shape.dims, op.attrs["block_size"]
        if dims is None:
            return TensorShape([None] * 4)
        if len(dims) != 4:
            raise ValueError("Shape must be rank 4 but is rank %d for '%s' (op: '%s')"
                             % (len(dims), op.name, op.type))
        nchw = op.attrs["data_format"] == "NCHW"
        n, h, w, c = (dims[0], dims[2], dims[3], dims[1]) if nchw else dims
        checked = (h, w) if to_depth else (c,)
        multiple = b if to_depth else b * b
        for d in checked:
            if d is not None and d % multiple:
                raise ValueError("Dimension size must be evenly divisible by %d but is %d for '%s' (op: '%s')"
                                 % (multiple, d, op.name, op.type))
        if to_depth:
            h, w, c = (None if h is None else h // b), (None if w is None else w // b), \
                (None if c is None else c * b * b)
        else:
            h, w, c = (None if h is None else h * b), (None if w is None else w * b), \
                (None if c is None else c // (b * b))
        return TensorShape([n, c, h, w] if nchw else [n, h, w, c])
    return shape_fn


register("SpaceToDepth", _s2d, lambda op, g: [depth_to_space(g, op.attrs["block_size"],
                                                              data_format=op.attrs["data_format"])],
         _space_depth_shape(True))
register("DepthToSpace", _d2s, lambda op, g: [space_to_depth(g, op.attrs["block_size"],
                                                              data_format=op.attrs["data_format"])],
         _space_depth_shape(False))


def _space_depth(op_type, input, block_size, name, data_format):  # noqa: A002
    if int(block_size) < 2:
        raise ValueError("Value for attr 'block_size' of %d must be at least minimum 2" % int(block_size))
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format must be NHWC or NCHW, got %r" % (data_format,))
    return apply_op(op_type, [input], dict(block_size=int(block_size), data_format=data_format), name=name)


def space_to_depth(input, block_size: int, name=None, data_format: str = "NHWC") -> Tensor:  # noqa: A002
    """Blocks of ``block_size x block_size`` pixels moved into the channels: [n, h, w, c] ->
    [n, h/b, w/b, b*b*c], channel ``(i*b + j)*c + k`` of the block's pixel (i, j)."""
    return _space_depth("SpaceToDepth", input, block_size, name, data_format)


def depth_to_space(input, block_size: int, name=None, data_format: str = "NHWC") -> Tensor:  # noqa: A002
    """The inverse of space_to_depth: [n, h, w, b*b*c] -> [n, h*b, w*b, c]."""
    return _space_depth("DepthToSpace", input, block_size, name, data_format)
