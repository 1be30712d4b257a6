"""``tf.losses`` (TF 1.x): per-example losses reduced by ``compute_weighted_loss`` and added to ``LOSSES``."""
from __future__ import annotations

from typing import Any, Optional

from . import dtypes
from .graph import GraphKeys, get_default_graph, name_scope
from .ops import array_ops, math_ops, nn_ops
from .registry import convert_to_tensor


class Reduction:
    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_BY_NONZERO_WEIGHTS)


def _num_present(losses, weights):
    """How many losses have a non-zero weight (all of them for a non-zero Python scalar weight)."""
    if isinstance(weights, (int, float)):
        n = math_ops.cast(array_ops.size(losses), losses.dtype)
        return n if weights != 0 else n * 0.0
    weights = math_ops.cast(weights, losses.dtype)
    present = math_ops.where(math_ops.equal(weights, 0.0), array_ops.zeros_like(weights),
                             array_ops.ones_like(weights))
    present = present * array_ops.ones_like(losses)
    return math_ops.reduce_sum(present)


def compute_weighted_loss(losses: Any, weights: Any = 1.0, scope: Optional[str] = None,
                          loss_collection: str = GraphKeys.LOSSES, reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``sum(losses * weights)`` divided per ``reduction`` (default: by the number of non-zero weights)."""
    with name_scope(scope, "weighted_loss"):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype
        losses = math_ops.cast(losses, dtypes.float32)
        weighted = losses if isinstance(weights, (int, float)) and weights == 1.0 else \
            math_ops.multiply(losses, math_ops.cast(weights, dtypes.float32))
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = math_ops.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                w = math_ops.cast(weights, dtypes.float32) * array_ops.ones_like(losses)
                loss = math_ops.div_no_nan(loss, math_ops.reduce_sum(w), name="value")
            elif reduction in (Reduction.SUM_BY_NONZERO_WEIGHTS, Reduction.SUM_OVER_BATCH_SIZE):
                denom = _num_present(losses, weights) if reduction == Reduction.SUM_BY_NONZERO_WEIGHTS \
                    else math_ops.cast(array_ops.size(losses), dtypes.float32)
                loss = math_ops.div_no_nan(loss, denom, name="value")
        loss = math_ops.cast(loss, input_dtype)
        if loss_collection:
            get_default_graph().add_to_collection(loss_collection, loss)
        return loss


def softmax_cross_entropy(onehot_labels: Any, logits: Any, weights: Any = 1.0, label_smoothing: float = 0,
                          scope: Optional[str] = None, loss_collection: str = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Mean (by default) softmax cross-entropy of ``logits`` against one-hot labels (cast to logits' dtype)."""
    with name_scope(scope, "softmax_cross_entropy_loss") as scope_name:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(onehot_labels, logits.dtype)
        if label_smoothing > 0:
            n = math_ops.cast(array_ops.shape(labels)[-1], logits.dtype)
            labels = labels * (1.0 - label_smoothing) + label_smoothing / n
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope_name, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels: Any, logits: Any, weights: Any = 1.0, scope: Optional[str] = None,
                                 loss_collection: str = GraphKeys.LOSSES,
                                 reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS):
    with name_scope(scope, "sparse_softmax_cross_entropy_loss") as scope_name:
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope_name, loss_collection, reduction)


def mean_squared_error(labels: Any, predictions: Any, weights: Any = 1.0, scope: Optional[str] = None,
                       loss_collection: str = GraphKeys.LOSSES, reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS):
    with name_scope(scope, "mean_squared_error") as scope_name:
        predictions = math_ops.cast(predictions, dtypes.float32)
        labels = math_ops.cast(labels, dtypes.float32)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope_name, loss_collection, reduction)


def absolute_difference(labels: Any, predictions: Any, weights: Any = 1.0, scope: Optional[str] = None,
                        loss_collection: str = GraphKeys.LOSSES, reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS):
    with name_scope(scope, "absolute_difference") as scope_name:
        losses = math_ops.abs(math_ops.subtract(math_ops.cast(predictions, dtypes.float32),
                                                math_ops.cast(labels, dtypes.float32)))
        return compute_weighted_loss(losses, weights, scope_name, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels: Any, logits: Any, weights: Any = 1.0, label_smoothing: float = 0,
                          scope: Optional[str] = None, loss_collection: str = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS):
    with name_scope(scope, "sigmoid_cross_entropy_loss") as scope_name:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(multi_class_labels, logits.dtype)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope_name, loss_collection, reduction)


def add_loss(loss: Any, loss_collection: str = GraphKeys.LOSSES) -> None:
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope: Optional[str] = None, loss_collection: str = GraphKeys.LOSSES) -> list:
    return get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope: Optional[str] = None) -> list:
    return get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope: Optional[str] = None, name: str = "total_regularization_loss"):
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    from .registry import constant
    return constant(0.0)


def get_total_loss(add_regularization_losses: bool = True, name: str = "total_loss", scope: Optional[str] = None):
    losses = get_losses(scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope)
    return math_ops.add_n(losses, name=name)
