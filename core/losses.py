"""``tf.losses`` (TF 1.x): per-example losses reduced by ``compute_weighted_loss`` and added to ``LOSSES``.

Written as TF's ``losses_impl.py`` writes them: every loss computes in float32, checks statically that
``weights`` broadcast to the losses (scalar, or the same rank with each dim 1 or equal; a ``NoOp`` the reduction
depends on, as TF's ``assert_broadcastable``), and reduces with ``Reduction`` (default: the sum divided by the
number of non-zero weights). When shapes are only known at run time TF adds a run-time ``Assert`` in a ``cond``;
core checks what the static shapes tell and leaves the rest to broadcasting. The check converts the weights in
its own scope (``assert_broadcastable/weights``, with their ``shape`` and ``rank``), the casts again (``Cast_1/x``).
"""
from __future__ import annotations

from typing import Any, Optional

from .framework import dtypes
from .framework.graph import GraphKeys, Operation, Tensor, control_dependencies, get_default_graph, name_scope
from .ops import array_ops, broadcast_gradients, math_ops, reduction_ops, nn_ops
from .framework.registry import apply_op, constant, convert_to_tensor

__all__ = ["Reduction", "absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance",
           "get_losses", "get_regularization_loss", "get_regularization_losses", "get_total_loss", "hinge_loss",
           "huber_loss", "log_loss", "mean_pairwise_squared_error", "mean_squared_error", "sigmoid_cross_entropy",
           "softmax_cross_entropy", "sparse_softmax_cross_entropy"]


class Reduction:
    """How ``compute_weighted_loss`` reduces the weighted losses."""

    NONE = "none"                                            # the weighted losses, unreduced
    SUM = "weighted_sum"                                     # sum(w * l)
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"     # sum(w * l) / size(l)
    MEAN = "weighted_mean"                                   # sum(w * l) / sum(w)
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"   # sum(w * l) / count(w != 0)
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple:
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_OVER_NONZERO_WEIGHTS,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key: str) -> None:
        if key not in cls.all():
            raise ValueError("Invalid Reduction Key %s. Key should be one of %s." % (key, cls.all()))


# ---- weights: static broadcast check, broadcasting, counting


def _assert_broadcastable(weights: Any, values: Any) -> Optional[Operation]:
    """TF's ``weights_broadcast_ops.assert_broadcastable``: ``weights`` and ``values`` converted in their scopes with
    their ``shape`` and ``rank`` (Consts when static, TF's ``array_ops.shape``/``rank``), then where the shapes decide
    it when the graph is built a NoOp, or ValueError. Returns None when it depends on run-time shapes (TF's run-time
    Assert in a cond is not written)."""
    with name_scope(None, "assert_broadcastable"):
        with name_scope(None, "weights") as weights_scope:
            weights = convert_to_tensor(weights, name=weights_scope)
            broadcast_gradients.shape_internal(weights, name="shape")
            array_ops.rank(weights, name="rank")
        with name_scope(None, "values") as values_scope:
            values = convert_to_tensor(values, name=values_scope)
            broadcast_gradients.shape_internal(values, name="shape")
            array_ops.rank(values, name="rank")
        w_rank, v_rank = weights.shape.ndims, values.shape.ndims
        if w_rank is None or v_rank is None:
            return None
        if w_rank == 0:
            return array_ops.no_op(name="static_scalar_check_success")
        if w_rank != v_rank:
            raise ValueError("weights can not be broadcast to values. values.rank=%d. weights.rank=%d. "
                             "values.shape=%s. weights.shape=%s." % (v_rank, w_rank, values.shape, weights.shape))
        if not (weights.shape.is_fully_defined() and values.shape.is_fully_defined()):
            return None
        for i, (w, v) in enumerate(zip(weights.shape.as_list(), values.shape.as_list())):
            if w not in (1, v):
                raise ValueError("weights can not be broadcast to values. Mismatch at dim %d. values.shape=%s, "
                                 "weights.shape=%s." % (i, values.shape, weights.shape))
        return array_ops.no_op(name="static_dims_check_success")


def _checked(weights: Tensor, values: Tensor):
    """``control_dependencies`` on the broadcast check of ``weights`` against ``values``."""
    check = _assert_broadcastable(weights, values)
    return control_dependencies([check] if check is not None else [])


def _broadcast_weights(weights: Tensor, values: Tensor) -> Tensor:
    """``weights * ones_like(values)`` unless both have the same static shape."""
    with name_scope(None, "broadcast_weights") as scope:
        values = convert_to_tensor(values, name="values")
        weights = convert_to_tensor(weights, dtype=values.dtype, name="weights")
        if weights.shape.is_fully_defined() and values.shape.is_fully_defined() and \
                weights.shape.is_compatible_with(values.shape):
            return weights
        with _checked(weights, values):
            return math_ops.multiply(weights, array_ops.ones_like(values), name=scope)


def _num_elements(losses: Tensor) -> Tensor:
    with name_scope(None, "num_elements") as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), losses.dtype)


def _num_present(losses: Tensor, weights: Any, per_batch: bool = False) -> Tensor:
    """How many entries of ``losses`` have a non-zero (broadcast) weight; per batch row (kept dims) if asked."""
    if isinstance(weights, float) and weights != 0.0:
        return _num_elements(losses)
    with name_scope(None, "num_present") as scope:
        weights = math_ops.cast(weights, dtypes.float32)
        with name_scope(None, "Equal") as equal_scope:     # TF's Equal carries incompatible_shape_error
            is_zero = apply_op("Equal", [weights, constant(0.0, dtype=weights.dtype, name="y")],
                               dict(incompatible_shape_error=True), name=equal_scope)
        present = math_ops.where(is_zero, array_ops.zeros_like(weights), array_ops.ones_like(weights))
        present = _broadcast_weights(present, losses)
        if per_batch:
            return reduction_ops.reduce_sum(present, axis=array_ops.range_(1, array_ops.rank(present)), keepdims=True,
                                       name=scope)
        return reduction_ops.reduce_sum(present, name=scope)


def _reduce_sum_all(x: Tensor) -> Tensor:
    """``reduce_sum(x)`` as TF writes it: a Const axis list, or ``Range(0, Rank)`` for a scalar or unknown rank."""
    if x.shape.ndims:
        return reduction_ops.reduce_sum(x)
    total = reduction_ops.reduce_sum(x, axis=array_ops.range_(0, array_ops.rank(x)))
    total.set_shape([])          # reducing every axis gives a scalar (TF's _may_reduce_to_scalar)
    return total


def _safe_mean(losses: Tensor, num_present: Tensor) -> Tensor:
    """``sum(losses) / num_present``, 0 when ``num_present`` is 0."""
    return math_ops.div_no_nan(_reduce_sum_all(losses), num_present, name="value")


def compute_weighted_loss(losses: Any, weights: Any = 1.0, scope: Optional[str] = None,
                          loss_collection: Optional[str] = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """``losses * weights`` (in float32) reduced per ``reduction``, cast back to the dtype of ``losses`` and added
    to ``loss_collection``. ``weights`` is a scalar or has the rank of ``losses`` with each dim 1 or equal."""
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss"):
        get_default_graph()._last_loss_reduction = reduction
        # as TF: the check sees the weights as given (a float becomes its own Const there) and the casts below
        # convert them again (``Cast_1/x``)
        with _checked(weights, losses):
            losses = convert_to_tensor(losses)
            input_dtype = losses.dtype
            losses = math_ops.cast(losses, dtypes.float32)
            weights = math_ops.cast(weights, dtypes.float32)
            weighted_losses = math_ops.multiply(losses, weights)
            if reduction == Reduction.NONE:
                loss = weighted_losses
            else:
                loss = _reduce_sum_all(weighted_losses)
                if reduction == Reduction.MEAN:
                    loss = _safe_mean(loss, _reduce_sum_all(array_ops.ones_like(losses) * weights))
                elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                    loss = _safe_mean(loss, _num_present(losses, weights))
                elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                    loss = _safe_mean(loss, _num_elements(losses))
            loss = math_ops.cast(loss, input_dtype)
            add_loss(loss, loss_collection)
            return loss


# ---- the losses


def _not_none(**args: Any) -> None:
    for name, value in args.items():
        if value is None:
            raise ValueError("Argument `%s` must not be None." % name)


def _as_float32_pair(predictions: Any, labels: Any) -> tuple:
    """Both cast to float32, with compatible static shapes (ValueError otherwise)."""
    predictions = math_ops.cast(predictions, dtypes.float32)
    labels = math_ops.cast(labels, dtypes.float32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return predictions, labels


def absolute_difference(labels: Any, predictions: Any, weights: Any = 1.0, scope: Optional[str] = None,
                        loss_collection: Optional[str] = GraphKeys.LOSSES,
                        reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted ``|predictions - labels|``."""
    _not_none(labels=labels, predictions=predictions)
    with name_scope(scope, "absolute_difference") as scope:
        predictions, labels = _as_float32_pair(predictions, labels)
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def cosine_distance(labels: Any, predictions: Any, axis: Optional[int] = None, weights: Any = 1.0,
                    scope: Optional[str] = None, loss_collection: Optional[str] = GraphKeys.LOSSES,
                    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS, dim: Optional[int] = None) -> Tensor:
    """Weighted ``1 - sum(predictions * labels, axis, keepdims=True)`` (inputs assumed unit-normalized)."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    _not_none(labels=labels, predictions=predictions)
    with name_scope(scope, "cosine_distance_loss") as scope:
        predictions, labels = _as_float32_pair(predictions, labels)
        radial_diffs = math_ops.multiply(predictions, labels)
        losses = 1 - reduction_ops.reduce_sum(radial_diffs, axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def hinge_loss(labels: Any, logits: Any, weights: Any = 1.0, scope: Optional[str] = None,
               loss_collection: Optional[str] = GraphKeys.LOSSES,
               reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted ``max(0, 1 - (2 labels - 1) * logits)`` for labels in {0, 1}."""
    _not_none(labels=labels, logits=logits)
    with name_scope(scope, "hinge_loss") as scope:
        logits, labels = _as_float32_pair(logits, labels)
        all_ones = array_ops.ones_like(labels)
        labels = math_ops.subtract(2 * labels, all_ones)
        losses = nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(labels, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def huber_loss(labels: Any, predictions: Any, weights: Any = 1.0, delta: float = 1.0, scope: Optional[str] = None,
               loss_collection: Optional[str] = GraphKeys.LOSSES,
               reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted Huber loss of ``x = predictions - labels``: ``0.5 x^2`` if ``|x| <= delta``, else
    ``0.5 delta^2 + delta (|x| - delta)``."""
    _not_none(labels=labels, predictions=predictions)
    with name_scope(scope, "huber_loss") as scope:
        predictions, labels = _as_float32_pair(predictions, labels)
        abs_error = math_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        losses = math_ops.add(
            math_ops.multiply(convert_to_tensor(0.5, dtype=quadratic.dtype), math_ops.multiply(quadratic, quadratic)),
            math_ops.multiply(delta, linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def log_loss(labels: Any, predictions: Any, weights: Any = 1.0, epsilon: float = 1e-7, scope: Optional[str] = None,
             loss_collection: Optional[str] = GraphKeys.LOSSES,
             reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted ``-labels log(p + eps) - (1 - labels) log(1 - p + eps)`` of probabilities ``p``."""
    _not_none(labels=labels, predictions=predictions)
    with name_scope(scope, "log_loss") as scope:
        predictions, labels = _as_float32_pair(predictions, labels)
        losses = -math_ops.multiply(labels, math_ops.log(predictions + epsilon)) - math_ops.multiply(
            (1 - labels), math_ops.log(1 - predictions + epsilon))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_pairwise_squared_error(labels: Any, predictions: Any, weights: Any = 1.0, scope: Optional[str] = None,
                                loss_collection: Optional[str] = GraphKeys.LOSSES) -> Tensor:
    """Weighted mean over each batch row of ``((l_i - l_j) - (p_i - p_j))^2`` over its pairs, summed over the
    batch: with ``d = p - l`` and ``n`` present entries per row, ``2 sum(d^2) / (n - 1) - 2 sum(d)^2 / (n (n - 1))``.
    """
    _not_none(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_pairwise_squared_error"):
        weights = math_ops.cast(weights, dtypes.float32)
        labels = math_ops.cast(labels, dtypes.float32)
        with _checked(weights, labels):
            predictions = math_ops.cast(predictions, dtypes.float32)
            predictions.shape.assert_is_compatible_with(labels.shape)
            diffs = math_ops.subtract(predictions, labels)
            axis = array_ops.range_(1, array_ops.rank(diffs))
            sum_squares_diff_per_batch = reduction_ops.reduce_sum(math_ops.square(diffs), axis=axis, keepdims=True)
            num_present_per_batch = _num_present(diffs, weights, per_batch=True)
            term1 = 2.0 * math_ops.div_no_nan(sum_squares_diff_per_batch,
                                              math_ops.maximum(num_present_per_batch - 1, 0), name="value")
            sum_diff = reduction_ops.reduce_sum(diffs, axis=axis, keepdims=True)
            term2 = 2.0 * math_ops.div_no_nan(
                math_ops.square(sum_diff),
                math_ops.maximum(math_ops.multiply(num_present_per_batch, num_present_per_batch - 1), 0),
                name="value")
            weighted_losses = math_ops.multiply(term1 - term2, weights)
            loss = _reduce_sum_all(weighted_losses)
            mean_loss = math_ops.where(_reduce_sum_all(num_present_per_batch) > 0, loss, array_ops.zeros_like(loss),
                                       name="value")
            add_loss(mean_loss, loss_collection)
            return mean_loss


def mean_squared_error(labels: Any, predictions: Any, weights: Any = 1.0, scope: Optional[str] = None,
                       loss_collection: Optional[str] = GraphKeys.LOSSES,
                       reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted ``(predictions - labels)^2``."""
    _not_none(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_squared_error") as scope:
        predictions, labels = _as_float32_pair(predictions, labels)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def sigmoid_cross_entropy(multi_class_labels: Any, logits: Any, weights: Any = 1.0, label_smoothing: float = 0,
                          scope: Optional[str] = None, loss_collection: Optional[str] = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted ``sigmoid_cross_entropy_with_logits``; labels smoothed towards 1/2:
    ``labels * (1 - label_smoothing) + 0.5 * label_smoothing``."""
    _not_none(multi_class_labels=multi_class_labels, logits=logits)
    with name_scope(scope, "sigmoid_cross_entropy_loss") as scope:
        logits = convert_to_tensor(logits)
        multi_class_labels = math_ops.cast(multi_class_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(multi_class_labels.shape)
        if label_smoothing > 0:
            multi_class_labels = multi_class_labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=multi_class_labels, logits=logits,
                                                          name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def softmax_cross_entropy(onehot_labels: Any, logits: Any, weights: Any = 1.0, label_smoothing: float = 0,
                          scope: Optional[str] = None, loss_collection: Optional[str] = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted softmax cross-entropy against one-hot labels (no gradient to the labels); labels smoothed
    towards ``1 / num_classes``: ``labels * (1 - label_smoothing) + label_smoothing / num_classes``."""
    _not_none(onehot_labels=onehot_labels, logits=logits)
    with name_scope(scope, "softmax_cross_entropy_loss") as scope:
        logits = convert_to_tensor(logits)
        onehot_labels = math_ops.cast(onehot_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(onehot_labels.shape)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(onehot_labels)[-1], logits.dtype)
            onehot_labels = onehot_labels * (1.0 - label_smoothing) + label_smoothing / num_classes
        onehot_labels = array_ops.stop_gradient(onehot_labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(labels=onehot_labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def _remove_squeezable_dimensions(labels: Any, predictions: Any, weights: Any) -> tuple:
    """TF's, with ``expected_rank_diff=1`` (class ids against logits), for static ranks: squeeze a trailing
    size-1 dim of ``labels`` (or ``predictions``) whose rank is one off, then of ``weights`` if it has one rank
    more than ``labels``. (With unknown ranks TF decides in a ``cond``; core leaves the tensors as they are.)"""
    with name_scope(None, "remove_squeezable_dimensions"):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        p_rank, l_rank = predictions.shape.ndims, labels.shape.ndims
        if p_rank is not None and l_rank is not None:
            if p_rank - l_rank == 2 and predictions.shape.dims[-1] in (1, None):
                predictions = array_ops.squeeze(predictions, [-1])
            elif p_rank - l_rank == 0 and labels.shape.dims[-1] in (1, None):
                labels = array_ops.squeeze(labels, [-1])
    weights = convert_to_tensor(weights)
    l_rank, w_rank = labels.shape.ndims, weights.shape.ndims
    if l_rank is not None and w_rank is not None and w_rank - l_rank == 1:
        weights = array_ops.squeeze(weights, [-1])
    return labels, predictions, weights


def sparse_softmax_cross_entropy(labels: Any, logits: Any, weights: Any = 1.0, scope: Optional[str] = None,
                                 loss_collection: Optional[str] = GraphKeys.LOSSES,
                                 reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted softmax cross-entropy against int32/int64 class ids ``labels`` (a trailing size-1 dim of
    ``labels`` or ``weights`` is squeezed away)."""
    _not_none(labels=labels, logits=logits)
    with name_scope(scope, "sparse_softmax_cross_entropy_loss") as scope:
        labels, logits, weights = _remove_squeezable_dimensions(labels, logits, weights)
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


# ---- the loss collections


def add_loss(loss: Any, loss_collection: Optional[str] = GraphKeys.LOSSES) -> None:
    """Add ``loss`` to ``loss_collection`` (nothing when it is None or empty)."""
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope: Optional[str] = None, loss_collection: str = GraphKeys.LOSSES) -> list:
    """The losses of ``loss_collection`` whose names match ``scope`` (a regex, from the start)."""
    return get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope: Optional[str] = None) -> list:
    """The ``REGULARIZATION_LOSSES`` collection (filtered by ``scope``)."""
    return get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope: Optional[str] = None, name: str = "total_regularization_loss") -> Tensor:
    """The sum (an AddN) of the regularization losses, or a Const 0.0 when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return _add_n(losses, name)
    return constant(0.0)


def get_total_loss(add_regularization_losses: bool = True, name: str = "total_loss",
                   scope: Optional[str] = None) -> Tensor:
    """The sum (an AddN) of the ``LOSSES`` collection and, by default, the regularization losses."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    return _add_n(losses, name)


def _add_n(losses: list, name: str) -> Tensor:
    """TF's ``add_n``: an Identity for a single tensor, else an AddN (ValueError for none)."""
    if not losses:
        raise ValueError("inputs must be an iterable of at least one Tensor/IndexedSlices with the same dtype "
                         "and shape.")
    if len(losses) == 1:
        return array_ops.identity(losses[0], name=name)
    return math_ops.add_n(losses, name=name)
