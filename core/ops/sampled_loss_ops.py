"""Sampled losses: ``tf.nn.nce_loss`` and ``tf.nn.sampled_softmax_loss``, both TF1's ``_compute_sampled_logits``.

The logits of the true classes and of ``num_sampled`` candidate classes (a log-uniform sampler unless
``sampled_values=(sampled, true_expected_count, sampled_expected_count)`` is given) are built from one
``embedding_lookup`` of the weights and one of the biases at ``concat([labels, sampled])``, minus
``log(expected_count)``. Accidental hits (a sampled class that is also a true class of the row) get ``-FLT_MAX``
added through ``SparseToDense``. NCE sums sigmoid cross-entropies (label ``1/num_true`` for the true columns)
per row; sampled softmax takes the softmax cross-entropy over the same columns. The weight gradients are
``IndexedSlices`` of the looked-up rows. Names in ``__all__`` are exported as ``tf.nn.<name>``.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, name_scope
from ..framework.registry import apply_op, constant_shape, convert_to_tensor, register
from . import array_ops, math_ops, reduction_ops, nn_ops
from .candidate_sampling_ops import compute_accidental_hits, log_uniform_candidate_sampler
from .embedding_ops import _static_shape, embedding_lookup
from .manip_ops import gather_nd
from .slicing_ops import slice_

__all__ = ["nce_loss", "sampled_softmax_loss"]
TOP_LEVEL = ["sparse_to_dense"]


# ---- SparseToDense (TF's gen_sparse_ops.sparse_to_dense)


def _sparse_to_dense_forward(sparse_indices, output_shape, sparse_values, default_value, validate_indices=True):
    shape = tuple(int(d) for d in np.reshape(output_shape, [-1]))
    idx = np.asarray(sparse_indices, np.int64)
    if idx.ndim == 0:
        idx = idx.reshape(1, 1)
    elif idx.ndim == 1:
        idx = idx.reshape(-1, 1) if len(shape) == 1 else idx.reshape(1, -1)
    if idx.shape[1] != len(shape):
        raise InvalidArgumentError(None, "SparseToDense: sparse_indices has %d columns but output_shape has rank %d"
                                   % (idx.shape[1], len(shape)))
    bad = np.flatnonzero(np.any((idx < 0) | (idx >= np.array(shape, np.int64)), axis=1)) if idx.size else []
    if len(bad):
        raise InvalidArgumentError(None, "SparseToDense: indices[%d] = %s is out of bounds of shape %s"
                                   % (bad[0], idx[bad[0]].tolist(), list(shape)))
    out = np.full(shape, default_value, dtype=np.asarray(sparse_values).dtype)
    out[tuple(idx.T)] = sparse_values
    return out


def _sparse_to_dense_grad(op, g):
    """TF's gradient: the values' rows of the output gradient (None for indices, shape and default)."""
    sparse_indices, output_shape, sparse_values, default_value = op.inputs
    values_grad = gather_nd(g, sparse_indices)
    if sparse_values.shape.ndims == 0:
        values_grad = reduction_ops.reduce_sum(values_grad)
    default_grad = reduction_ops.reduce_sum(g) - reduction_ops.reduce_sum(values_grad)
    return [None, None, values_grad, default_grad]


register("SparseToDense", _sparse_to_dense_forward, _sparse_to_dense_grad,
         lambda op: constant_shape(op.inputs[1]), dtype=lambda op: op.inputs[2].dtype,
         type_attrs={"Tindices": 0})


def sparse_to_dense(sparse_indices: Any, output_shape: Any, sparse_values: Any, default_value: Any = 0,
                    validate_indices: bool = True, name: Optional[str] = None) -> Tensor:
    """A dense ``output_shape`` tensor of ``default_value`` with ``sparse_values`` at ``sparse_indices``."""
    sparse_indices = convert_to_tensor(sparse_indices, name="sparse_indices")
    output_shape = convert_to_tensor(output_shape, dtype=sparse_indices.dtype, name="output_shape")
    sparse_values = convert_to_tensor(sparse_values, name="sparse_values")
    default_value = convert_to_tensor(default_value, dtype=sparse_values.dtype, name="default_value")
    return apply_op("SparseToDense", [sparse_indices, output_shape, sparse_values, default_value],
                    dict(T=sparse_values.dtype, Tindices=sparse_indices.dtype,
                         validate_indices=bool(validate_indices)), name=name)


# ---- the sampled logits


def _sum_rows(x: Tensor) -> Tensor:
    """Row sums as a matmul with a ones column (TF's ``_sum_rows``: a cheaper gradient than reduce_sum)."""
    cols = _static_shape(x)[1]
    ones = array_ops.ones(array_ops.stack([cols, 1]), x.dtype)
    return array_ops.reshape(math_ops.matmul(x, ones), [-1])


def _ones_like(t: Tensor) -> Tensor:
    """TF's ``ones_like`` of a static shape: a Fill of a constant shape (else the OnesLike op)."""
    if not t.shape.is_fully_defined():
        return array_ops.ones_like(t)
    with name_scope(None, "ones_like") as scope:
        shape = convert_to_tensor(np.array(t.shape.as_list(), np.int32), name="Shape/shape_as_tensor")
        return array_ops.fill(shape, convert_to_tensor(np.array(1, t.dtype.as_numpy_dtype), name="Const"), name=scope)


def _zeros_like(t: Tensor) -> Tensor:
    """TF's ``zeros_like`` of a static shape: ``zeros(shape)`` (a Const when small), else the ZerosLike op."""
    if not t.shape.is_fully_defined():
        return array_ops.zeros_like(t)
    return array_ops.zeros(t.shape.as_list(), dtype=t.dtype, name="zeros_like")


def _check_sampled_values(sampled_values: Any) -> tuple:
    if not isinstance(sampled_values, (list, tuple)) or len(sampled_values) != 3:
        raise ValueError("sampled_values must be a (sampled_candidates, true_expected_count, "
                         "sampled_expected_count) tuple, got %r" % (sampled_values,))
    return tuple(sampled_values)


def _compute_sampled_logits(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
                            num_classes: int, num_true: int = 1, sampled_values: Any = None,
                            subtract_log_q: bool = True, remove_accidental_hits: bool = False,
                            partition_strategy: str = "mod", name: Optional[str] = None,
                            seed: Optional[int] = None) -> tuple:
    """``(out_logits [batch, num_true + num_sampled], out_labels)`` as TF1 builds them."""
    if not isinstance(weights, list):
        weights = list(weights) if isinstance(weights, tuple) else [weights]
    with name_scope(name, "compute_sampled_logits"):
        labels = convert_to_tensor(labels)
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims is not None and inputs.shape.ndims != 2:
            raise ValueError("inputs must be a [batch_size, dim] matrix, got shape %s" % inputs.shape)
        if labels.dtype is not dtypes.int64:
            labels = math_ops.cast(labels, dtypes.int64)
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(true_classes=labels, num_true=num_true,
                                                           num_sampled=num_sampled, unique=True,
                                                           range_max=num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (
            array_ops.stop_gradient(s) for s in _check_sampled_values(sampled_values))
        sampled = math_ops.cast(sampled, dtypes.int64)
        all_ids = array_ops.concat([labels_flat, sampled], 0)
        all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        if all_w.dtype is not inputs.dtype:
            all_w = math_ops.cast(all_w, inputs.dtype)
        n_true = _static_shape(labels_flat)[0]
        true_w = slice_(all_w, [0, 0], array_ops.stack([n_true, -1]))
        sampled_w = slice_(all_w, array_ops.stack([n_true, 0]), [-1, -1])
        sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True)
        all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype is not inputs.dtype:
            all_b = math_ops.cast(all_b, inputs.dtype)
        true_b = slice_(all_b, [0], _static_shape(labels_flat))
        sampled_b = slice_(all_b, _static_shape(labels_flat), [-1])
        dim = _static_shape(true_w)[1:2]
        new_true_w_shape = array_ops.concat([[-1, num_true], dim], 0)
        row_wise_dots = math_ops.multiply(array_ops.expand_dims(inputs, 1),
                                          array_ops.reshape(true_w, new_true_w_shape))
        dots_as_matrix = array_ops.reshape(row_wise_dots, array_ops.concat([[-1], dim], 0))
        true_logits = array_ops.reshape(_sum_rows(dots_as_matrix), [-1, num_true])
        true_b = array_ops.reshape(true_b, [-1, num_true])
        true_logits += true_b
        sampled_logits += sampled_b
        if remove_accidental_hits:
            acc_indices, acc_ids, acc_weights = compute_accidental_hits(labels, sampled, num_true=num_true)
            acc_indices_2d = array_ops.reshape(acc_indices, [-1, 1])
            acc_ids_2d_int32 = array_ops.reshape(math_ops.cast(acc_ids, dtypes.int32), [-1, 1])
            sparse_indices = array_ops.concat([acc_indices_2d, acc_ids_2d_int32], 1, "sparse_indices")
            sampled_logits_shape = array_ops.concat(
                [_static_shape(labels)[:1], array_ops.expand_dims(num_sampled, 0)], 0)
            if sampled_logits.dtype is not acc_weights.dtype:
                acc_weights = math_ops.cast(acc_weights, sampled_logits.dtype)
            sampled_logits += sparse_to_dense(sparse_indices, sampled_logits_shape, acc_weights,
                                              default_value=0.0, validate_indices=False)
        if subtract_log_q:
            true_logits -= math_ops.log(true_expected_count)
            sampled_logits -= math_ops.log(sampled_expected_count)
        out_logits = array_ops.concat([true_logits, sampled_logits], 1)
        out_labels = array_ops.concat([_ones_like(true_logits) / num_true, _zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
             num_true: int = 1, sampled_values: Any = None, remove_accidental_hits: bool = False,
             partition_strategy: str = "mod", name: str = "nce_loss") -> Tensor:
    """Noise-contrastive estimation loss per example (``[batch]``): logistic regression of the true classes
    against ``num_sampled`` candidates, logits corrected by ``-log(expected_count)``.
    ``weights`` ``[num_classes, dim]`` (or a list of shards), ``biases`` ``[num_classes]``, ``labels`` int
    ``[batch, num_true]``, ``inputs`` ``[batch, dim]``."""
    logits, labels = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values, subtract_log_q=True,
        remove_accidental_hits=remove_accidental_hits, partition_strategy=partition_strategy, name=name)
    sampled_losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="sampled_losses")
    return _sum_rows(sampled_losses)


def sampled_softmax_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
                         num_true: int = 1, sampled_values: Any = None, remove_accidental_hits: bool = True,
                         partition_strategy: str = "mod", name: str = "sampled_softmax_loss",
                         seed: Optional[int] = None) -> Tensor:
    """Softmax cross-entropy per example (``[batch]``) over the true classes and ``num_sampled`` candidates
    (accidental hits removed by default); arguments as ``nce_loss``."""
    logits, labels = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values, subtract_log_q=True,
        remove_accidental_hits=remove_accidental_hits, partition_strategy=partition_strategy, name=name, seed=seed)
    labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)

