"""Embeddings: ``tf.nn.embedding_lookup`` (one tensor or a list of shards, TF's "mod" and "div" partition
strategies, ``max_norm`` clipping), ``tf.nn.embedding_lookup_sparse`` (a ``SparseTensor`` of ids, optional
weights, combiners sum / mean / sqrtn) and the sparse segment reductions it uses (``tf.sparse_segment_sum``,
``_mean``, ``_sqrt_n``).

Names in ``__all__`` are exported as ``tf.nn.<name>``; the ``sparse_segment_*`` functions are ``tf.<name>``.
The graphs are TF1's: one shard is a ``GatherV2`` named like the lookup's scope followed by an ``Identity``;
several shards are ``DynamicPartition`` of the ids, one ``GatherV2`` per shard and a ``ParallelDynamicStitch``.
The gradient with respect to ``params`` is an ``IndexedSlices`` (GatherV2's gradient), so optimizers update only
the looked-up rows (``SparseApply*`` / ``ScatterSub``). The unweighted ``embedding_lookup_sparse`` is a single
``SparseSegment{Sum,Mean,SqrtN}`` on the table with ``sparse_gradient=True``: its gradient is the
``SparseSegment*GradV2`` op, an ``IndexedSlices`` over the sorted unique ids.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import IndexedSlices, apply_op, constant_value, convert_to_tensor, register
from . import array_ops, math_ops, reduction_ops, segment_ops
from .manip_ops import unique
from .clip_ops import clip_by_norm
from ..framework.sparse_tensor import SparseTensor

__all__ = ["embedding_lookup", "embedding_lookup_sparse"]
TOP_LEVEL = ["sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n"]


# ---- ParallelDynamicStitch: DynamicStitch's math (TF's merge of the shards' rows)

register("ParallelDynamicStitch", segment_ops._stitch_forward, segment_ops._stitch_grad, segment_ops._stitch_shape,
         dtype=lambda op: op.inputs[-1].dtype)


def _parallel_dynamic_stitch(indices: list, data: list, name: Optional[str] = None) -> Tensor:
    return apply_op("ParallelDynamicStitch", list(indices) + list(data), dict(N=len(data), T=data[0].dtype),
                    name=name)


# ---- embedding_lookup


def _static_shape(t: Tensor) -> Tensor:
    """``shape(t)``, a Const named ``Shape`` when static (TF's ``array_ops.shape`` with optimize=True)."""
    if t.shape.is_fully_defined():
        return convert_to_tensor(np.array(t.shape.as_list(), np.int32), name="Shape")
    return array_ops.shape(t)


def _range(limit: Tensor) -> Tensor:
    with name_scope(None, "range") as scope:
        start = convert_to_tensor(np.int32(0), name="start")
        delta = convert_to_tensor(np.int32(1), name="delta")
        return apply_op("Range", [start, limit, delta], dict(Tidx=dtypes.int32), name=scope)


def _concat(values: list) -> Tensor:
    """ConcatV2 on axis 0 with TF's names for constant parts (``concat/values_1``)."""
    with name_scope(None, "concat") as scope:
        values = [v if isinstance(v, Tensor) else convert_to_tensor(v, name="values_%d" % i)
                  for i, v in enumerate(values)]
        axis = convert_to_tensor(np.int32(0), name="axis")
        return apply_op("ConcatV2", values + [axis], dict(N=len(values)), name=scope)


def _add(x: Tensor, y: Any) -> Tensor:
    """``x + y`` as TF2's Python operator builds it (an ``AddV2`` named ``add``)."""
    with name_scope(None, "add") as scope:
        return apply_op("AddV2", [x, convert_to_tensor(y, dtype=x.dtype, name="y")], name=scope)


def _static_size(t: Tensor) -> Tensor:
    if t.shape.is_fully_defined():
        return convert_to_tensor(np.array(t.shape.num_elements(), np.int32), name="Size")
    return array_ops.size(t)


def _clip(params: Tensor, ids: Tensor, max_norm: Any) -> Tensor:
    """Rows of ``params`` (the axes after ``ids``' rank) scaled to an l2-norm of at most ``max_norm``."""
    if max_norm is None:
        return params
    ids_rank, params_rank = ids.shape.ndims, params.shape.ndims
    if ids_rank and params_rank:
        axes = list(range(ids_rank, params_rank))
    else:
        axes = array_ops.range_(array_ops.rank(ids), array_ops.rank(params))
    return clip_by_norm(params, max_norm, axes=axes)


def _as_param_list(params: Any) -> list:
    if params is None:
        raise ValueError("params must be specified")
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("Length of params is currently 0. Need at least one param.")
        return list(params)
    return [params]


def _ids_tensor(ids: Any) -> Tensor:
    if isinstance(ids, Tensor):
        if not ids.dtype.is_integer:
            raise TypeError("embedding_lookup ids must be int32 or int64, got %s (%r)" % (ids.dtype.name, ids))
        return ids
    arr = np.asarray(ids)
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError("embedding_lookup ids must be integers, got %r" % (ids,))
    return convert_to_tensor(ids if arr.size else np.zeros(arr.shape, np.int32), name="ids")


def embedding_lookup(params: Any, ids: Any, partition_strategy: str = "mod", name: Optional[str] = None,
                     validate_indices: bool = True, max_norm: Any = None) -> Tensor:
    """Rows ``ids`` of ``params``: one tensor/Variable, or a list of shards holding the rows in turn
    (``"mod"``: row ``i`` is row ``i // n`` of shard ``i % n``; ``"div"``: contiguous blocks, the first
    ``rows % n`` shards one row longer). ``max_norm`` clips each looked-up row to that l2-norm. The result has
    shape ``ids.shape + params.shape[1:]``; its gradient is an ``IndexedSlices`` per shard."""
    params = _as_param_list(params)
    if partition_strategy not in ("mod", "div"):
        raise ValueError("Unrecognized partition strategy: %s.Must be one of either `mod` or `div`."
                         % partition_strategy)
    with name_scope(name, "embedding_lookup") as scope:
        n = len(params)
        params = [convert_to_tensor(p, name="params") for p in params]
        ids = _ids_tensor(ids)
        if n == 1:
            result = _clip(array_ops.gather(params[0], ids, name=scope), ids, max_norm)
            return array_ops.identity(result)
        flat_ids = array_ops.reshape(ids, [-1])
        original_indices = _range(_static_size(flat_ids))
        if partition_strategy == "mod":
            p_assignments = flat_ids % n
            new_ids = flat_ids // n
        else:
            p_assignments, new_ids = _div_assignments(params, flat_ids, n)
        p_assignments = math_ops.cast(p_assignments, dtypes.int32)
        gather_ids = segment_ops.dynamic_partition(new_ids, p_assignments, n, name="DynamicPartition")
        pindices = segment_ops.dynamic_partition(original_indices, p_assignments, n, name="DynamicPartition")
        partitioned = [array_ops.gather(params[p], gather_ids[p]) for p in range(n)]
        ret = _parallel_dynamic_stitch(pindices, partitioned, name=scope)
        element_shape = params[0].shape[1:] if params[0].shape.dims is not None else TensorShape(None)
        for p in params[1:]:
            element_shape = element_shape.merge_with(p.shape[1:] if p.shape.dims is not None else TensorShape(None))
        if element_shape.is_fully_defined():
            element_t = np.array(element_shape.as_list(), dtype=np.int32)
        else:
            element_t = array_ops.shape(params[0])[1:]
        ret = array_ops.reshape(ret, _concat([_static_shape(ids), element_t]))
        if ids.shape.dims is not None and element_shape.dims is not None:
            ret.set_shape(TensorShape(list(ids.shape.dims) + list(element_shape.dims)))
        return _clip(ret, ids, max_norm)


def _div_assignments(params: list, flat_ids: Tensor, n: int):
    """TF's "div" strategy: shard and row of each id when the first ``extras`` shards hold one more row."""
    sizes = [p.shape.dims[0] if p.shape.dims is not None else None for p in params]
    if all(s is not None for s in sizes):
        total = convert_to_tensor(np.array(sum(sizes), dtype=flat_ids.dtype.as_numpy_dtype))
    else:
        dims = [s if s is not None else array_ops.shape(p)[0] for s, p in zip(sizes, params)]
        total = reduction_ops.reduce_sum(math_ops.cast(array_ops.stack(dims), flat_ids.dtype))
    ids_per_partition = total // n
    extras = total % n
    p_assignments = math_ops.maximum(flat_ids // _add(ids_per_partition, 1),
                                     (flat_ids - extras) // ids_per_partition)
    new_ids = math_ops.where(p_assignments < extras, flat_ids % _add(ids_per_partition, 1),
                             (flat_ids - extras) % ids_per_partition)
    return p_assignments, new_ids


# ---- sparse segment reductions (SparseSegmentSum / Mean / SqrtN) and their gradients

_SCALE = {"sum": lambda counts: np.ones_like(counts),
          "mean": lambda counts: 1.0 / np.maximum(counts, 1),
          "sqrtn": lambda counts: 1.0 / np.sqrt(np.maximum(counts, 1))}


def _check_sparse_segment(n_rows, indices, segment_ids, what):
    if indices.shape != segment_ids.shape or indices.ndim != 1:
        raise InvalidArgumentError(None, "%s: indices and segment_ids must be vectors of the same length, got "
                                         "shapes %s and %s" % (what, indices.shape, segment_ids.shape))
    bad = np.flatnonzero((indices < 0) | (indices >= n_rows))
    if bad.size:
        raise InvalidArgumentError(None, "%s: indices[%d] = %d is out of range [0, %d)"
                                   % (what, bad[0], indices[bad[0]], n_rows))
    if segment_ids.size and (segment_ids[0] < 0 or np.any(np.diff(segment_ids) < 0)):
        raise InvalidArgumentError(None, "%s: segment ids must be non-negative and sorted, got %s"
                                   % (what, segment_ids.tolist()))


def _segment_scale(kind, segment_ids, rows, dtype):
    counts = np.bincount(segment_ids, minlength=rows)[:rows].astype(np.float64)
    return _SCALE[kind](counts).astype(dtype)


def _sparse_segment_forward(kind):
    def forward(data, indices, segment_ids, sparse_gradient=False):
        _check_sparse_segment(data.shape[0], indices, segment_ids, "SparseSegmentReduction")
        rows = int(segment_ids[-1]) + 1 if segment_ids.size else 0
        out = np.zeros((rows,) + data.shape[1:], dtype=data.dtype)
        np.add.at(out, segment_ids, data[indices])
        if kind != "sum":
            out *= _segment_scale(kind, segment_ids, rows, data.dtype).reshape((-1,) + (1,) * (data.ndim - 1))
        return out
    return forward


def _sparse_segment_grad_forward(kind):
    """SparseSegment*Grad: the dense ``[dim0, ...]`` gradient (rows of ``grad`` scaled, added at ``indices``)."""
    def forward(grad, indices, segment_ids, dense_output_dim0):
        rows = grad.shape[0]
        scale = _segment_scale(kind, segment_ids, rows, grad.dtype).reshape((-1,) + (1,) * (grad.ndim - 1))
        out = np.zeros((int(dense_output_dim0),) + grad.shape[1:], dtype=grad.dtype)
        np.add.at(out, indices, (grad * scale)[segment_ids])
        return out
    return forward


def _sparse_segment_grad_v2_forward(kind):
    """SparseSegment*GradV2: the same rows, only at the sorted unique ``indices``: ``(values, unique)``."""
    dense = _sparse_segment_grad_forward(kind)

    def forward(grad, indices, segment_ids, dense_output_dim0):
        uniq, pos = np.unique(indices, return_inverse=True)
        out = dense(grad, pos.reshape(-1), segment_ids, uniq.size)
        return out, uniq.astype(indices.dtype)
    return forward


def _sparse_segment_shape(op):
    data = op.inputs[0].shape
    return TensorShape(None) if data.dims is None else TensorShape([None] + list(data.dims[1:]))


def _grad_shape(op):
    g = op.inputs[0].shape
    dim0 = constant_value(op.inputs[3])
    rest = list(g.dims[1:]) if g.dims is not None else None
    return TensorShape(None) if rest is None else TensorShape([None if dim0 is None else int(dim0)] + rest)


def _grad_v2_shape(op):
    g = op.inputs[0].shape
    return [TensorShape(None) if g.dims is None else TensorShape([None] + list(g.dims[1:])),
            TensorShape([None])]


_KINDS = {"sum": "SparseSegmentSum", "mean": "SparseSegmentMean", "sqrtn": "SparseSegmentSqrtN"}


def _make_grad(kind):
    op_type = _KINDS[kind]

    def grad(op, g):
        data, indices, segment_ids = op.inputs
        data_shape = array_ops.shape(data)
        dim0 = data_shape[0]
        if op.attrs.get("sparse_gradient"):
            values, unique_indices = apply_op(op_type + "GradV2", [g, indices, segment_ids, dim0],
                                              dict(Tidx=indices.dtype, Tsegmentids=segment_ids.dtype))
            return [IndexedSlices(values, unique_indices, data_shape), None, None]
        dense = apply_op(op_type + "Grad", [g, indices, segment_ids, dim0],
                         dict(Tidx=indices.dtype, Tsegmentids=segment_ids.dtype))
        return [dense, None, None]
    return grad


for _kind, _type in _KINDS.items():
    register(_type, _sparse_segment_forward(_kind), _make_grad(_kind), _sparse_segment_shape,
             dtype=lambda op: op.inputs[0].dtype)
    register(_type + "Grad", _sparse_segment_grad_forward(_kind), None, _grad_shape)
    register(_type + "GradV2", _sparse_segment_grad_v2_forward(_kind), None, _grad_v2_shape, num_outputs=2,
             dtype=lambda op: [op.inputs[0].dtype, op.inputs[1].dtype])


def _sparse_segment(kind: str, data: Any, indices: Any, segment_ids: Any, name: Optional[str],
                    sparse_gradient: bool = False) -> Tensor:
    data = convert_to_tensor(data, name="data")
    indices = convert_to_tensor(indices, dtype=None if isinstance(indices, Tensor) else dtypes.int32,
                                name="indices")
    segment_ids = convert_to_tensor(segment_ids, dtype=None if isinstance(segment_ids, Tensor) else dtypes.int32,
                                    name="segment_ids")
    for t, what in ((indices, "indices"), (segment_ids, "segment_ids")):
        if t.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("%s of a sparse segment reduction must be int32 or int64, got %s"
                            % (what, t.dtype.name))
    return apply_op(_KINDS[kind], [data, indices, segment_ids],
                    dict(Tidx=indices.dtype, Tsegmentids=segment_ids.dtype, sparse_gradient=bool(sparse_gradient)),
                    name=name)


def sparse_segment_sum(data: Any, indices: Any, segment_ids: Any, name: Optional[str] = None,
                       num_segments: Any = None, sparse_gradient: bool = False) -> Tensor:
    """``out[s] = sum(data[indices[k]] for k with segment_ids[k] == s)`` (sorted segment ids)."""
    _no_num_segments(num_segments)
    return _sparse_segment("sum", data, indices, segment_ids, name, sparse_gradient)


def sparse_segment_mean(data: Any, indices: Any, segment_ids: Any, name: Optional[str] = None,
                        num_segments: Any = None, sparse_gradient: bool = False) -> Tensor:
    """As ``sparse_segment_sum`` divided by each segment's number of entries."""
    _no_num_segments(num_segments)
    return _sparse_segment("mean", data, indices, segment_ids, name, sparse_gradient)


def sparse_segment_sqrt_n(data: Any, indices: Any, segment_ids: Any, name: Optional[str] = None,
                          num_segments: Any = None, sparse_gradient: bool = False) -> Tensor:
    """As ``sparse_segment_sum`` divided by the square root of each segment's number of entries."""
    _no_num_segments(num_segments)
    return _sparse_segment("sqrtn", data, indices, segment_ids, name, sparse_gradient)


def _no_num_segments(num_segments):
    if num_segments is not None:
        raise NotImplementedError("num_segments (SparseSegment*WithNumSegments) is not supported")


# ---- embedding_lookup_sparse


def embedding_lookup_sparse(params: Any, sp_ids: Any, sp_weights: Any, partition_strategy: str = "mod",
                            name: Optional[str] = None, combiner: Optional[str] = None, max_norm: Any = None,
                            allow_fast_lookup: bool = False) -> Tensor:
    """One combined embedding per row of the ``SparseTensor`` ``sp_ids`` (``[batch, ...]`` ids): the rows' (optionally
    ``sp_weights``-weighted) embeddings reduced by ``combiner`` ("sum", "mean" (default) or "sqrtn":
    sum / sqrt(sum of squared weights)). Result ``[rows, dim]``; rows without ids are zero (within the last row
    that has ids, as TF's segment ops)."""
    combiner = "mean" if combiner is None else combiner
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum', got %s" % combiner)
    params = _as_param_list(params)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError("sp_ids must be SparseTensor, got %s" % type(sp_ids))
    ignore_weights = sp_weights is None
    if not ignore_weights:
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError("sp_weights must be either None or SparseTensor,got %s" % type(sp_weights))
        if not sp_ids.values.shape.is_compatible_with(sp_weights.values.shape):
            raise ValueError("sp_ids values %s and sp_weights values %s have incompatible shapes"
                             % (sp_ids.values.shape, sp_weights.values.shape))
    with name_scope(name, "embedding_lookup_sparse") as scope:
        segment_ids = sp_ids.indices[:, 0]
        ids = sp_ids.values
        if len(params) == 1 and max_norm is None and (allow_fast_lookup or ignore_weights):
            embeddings, idx = convert_to_tensor(params[0], name="params"), ids
            sparse_gradient = not allow_fast_lookup
        else:
            ids, idx = unique(ids)
            embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy, max_norm=max_norm)
            sparse_gradient = False
        if ignore_weights:
            if segment_ids.dtype not in (dtypes.int32, dtypes.int64):
                segment_ids = math_ops.cast(segment_ids, dtypes.int32)
            return _sparse_segment(combiner, embeddings, idx, segment_ids, scope, sparse_gradient)
        return _weighted_combine(embeddings, idx, segment_ids, sp_weights.values, combiner, scope)


def _weighted_combine(embeddings, idx, segment_ids, weights, combiner, scope):
    """TF's weighted path: gather, multiply by the weights broadcast over the embedding axes, segment sums."""
    if segment_ids.dtype is not dtypes.int32:
        segment_ids = math_ops.cast(segment_ids, dtypes.int32)
    embeddings = array_ops.gather(embeddings, idx)
    original_dtype = embeddings.dtype
    if embeddings.dtype is dtypes.float16:
        embeddings = math_ops.cast(embeddings, dtypes.float32)
    if weights.dtype is not embeddings.dtype:
        weights = math_ops.cast(weights, embeddings.dtype)
    rank = embeddings.shape.ndims
    rank = convert_to_tensor(np.int32(rank), name="Rank") if rank is not None else array_ops.rank(embeddings)
    ones_shape = array_ops.expand_dims(rank - 1, 0)
    weights_shape = _static_shape(weights)
    ones = array_ops.ones(ones_shape, dtype=weights_shape.dtype)
    bcast_weights_shape = array_ops.concat([weights_shape, ones], 0)
    orig_weights_shape = weights.shape
    weights = array_ops.reshape(weights, bcast_weights_shape)
    if embeddings.shape.ndims is not None and orig_weights_shape.dims is not None:
        weights.set_shape(TensorShape(list(orig_weights_shape.dims) + [1] * (embeddings.shape.ndims - 1)))
    embeddings = embeddings * weights
    if combiner == "sum":
        embeddings = segment_ops.segment_sum(embeddings, segment_ids, name=scope)
    else:
        embeddings = segment_ops.segment_sum(embeddings, segment_ids)
        if combiner == "mean":
            weight_sum = segment_ops.segment_sum(weights, segment_ids)
        else:
            weight_sum = math_ops.sqrt(segment_ops.segment_sum(math_ops.pow(weights, 2), segment_ids))
        embeddings = math_ops.div_no_nan(embeddings, weight_sum, name=scope)
    if embeddings.dtype is not original_dtype:
        embeddings = math_ops.cast(embeddings, original_dtype)
    return embeddings
