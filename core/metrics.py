"""``tf.metrics`` (TF 1.x streaming metrics), as ``tensorflow/python/ops/metrics_impl.py`` builds them.

Every metric returns ``(value, update_op)``: its state lives in zero-initialized local variables (collections
``LOCAL_VARIABLES`` and ``METRIC_VARIABLES``, names as TF's: ``accuracy/total``, ``accuracy/count``,
``auc/true_positives``, ``mean_iou/total_confusion_matrix``...), ``update_op`` adds one batch and returns the
metric after it, ``value`` reads the metric without changing it, and ``tf.local_variables_initializer()``
resets the stream. ``metrics_collections`` / ``updates_collections`` receive ``value`` / ``update_op``.
This module is ``tf.metrics`` itself (loaded lazily by ``tfevents.core``); ``__all__`` is its API.

Not built: TF's run-time asserts (predictions in [0, 1] for the threshold metrics, dynamic weight-shape
checks), as core has no ``Assert`` op (``mean_iou``'s ScatterNd does reject labels outside
``[0, num_classes)``). Static checks (ranks, known dims) raise ``ValueError`` as TF's do.
"""
from __future__ import annotations

import logging
from typing import Any, Optional, Sequence

from .framework import dtypes
from .framework.graph import GraphKeys, Tensor, control_dependencies, get_default_graph, name_scope
from .ops import array_ops, linalg_ops, math_ops, reduction_ops, segment_ops, state_ops
from .framework.registry import constant, constant_value, convert_to_tensor
from .variable_scope import variable_scope
from .variables import Variable

__all__ = ["accuracy", "auc", "false_negatives", "false_negatives_at_thresholds", "false_positives",
           "false_positives_at_thresholds", "mean", "mean_absolute_error", "mean_cosine_distance", "mean_iou",
           "mean_per_class_accuracy", "mean_relative_error", "mean_squared_error", "mean_tensor",
           "percentage_below", "precision", "precision_at_thresholds", "recall", "recall_at_thresholds",
           "root_mean_squared_error", "true_negatives", "true_negatives_at_thresholds", "true_positives",
           "true_positives_at_thresholds"]


# ---- helpers (metrics_impl's private ones)

def _metric_variable(shape: Any, dtype: Any, validate_shape: bool = True, name: Optional[str] = None) -> Variable:
    """A zero-initialized, non-trainable variable in LOCAL_VARIABLES and METRIC_VARIABLES (``metric_variable``)."""
    return Variable(lambda: array_ops.zeros(shape, dtype), trainable=False, name=name, dtype=dtype,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                    validate_shape=validate_shape)


def _collect(collections: Any, value: Any) -> None:
    if collections:
        get_default_graph().add_to_collections(collections, value)


def _remove_squeezable_dimensions(predictions: Any, labels: Any, weights: Any):
    """TF's rank fix-up: drop a trailing size-1 dim of ``predictions`` or ``labels`` when their ranks differ by
    one, then squeeze or expand the last dim of non-scalar ``weights`` to the rank of ``predictions``.
    Static ranks only (core tensors have them); returns ``(predictions, labels, weights)``."""
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels = convert_to_tensor(labels)
        with name_scope(None, "remove_squeezable_dimensions"):
            p_shape, l_shape = predictions.shape, labels.shape
            if p_shape.ndims is not None and l_shape.ndims is not None:
                rank_diff = p_shape.ndims - l_shape.ndims
                if rank_diff == 1 and p_shape.dims[-1] in (None, 1):
                    predictions = array_ops.squeeze(predictions, [-1])
                elif rank_diff == -1 and l_shape.dims[-1] in (None, 1):
                    labels = array_ops.squeeze(labels, [-1])
        predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    w_rank, p_rank = weights.shape.ndims, predictions.shape.ndims
    if w_rank != 0 and w_rank is not None and p_rank is not None:
        if w_rank - p_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
        elif p_rank - w_rank == 1:
            weights = array_ops.expand_dims(weights, -1)     # TF passes [-1]: core's ExpandDims wants a scalar
    return predictions, labels, weights


def _broadcast_weights(weights: Any, values: Tensor) -> Tensor:
    """``weights`` broadcast to ``values``' shape (``weights_broadcast_ops.broadcast_weights``): scalar, or the
    same rank with each dim 1 or equal; a static mismatch raises ValueError as TF's ``assert_broadcastable``."""
    with name_scope(None, "broadcast_weights") as scope:
        weights = convert_to_tensor(weights, dtype=values.dtype, name="weights")
        w_shape, v_shape = weights.shape, values.shape
        if w_shape.is_fully_defined() and v_shape.is_fully_defined() and w_shape.is_compatible_with(v_shape):
            return weights
        if w_shape.ndims not in (None, 0) and v_shape.ndims is not None:
            if w_shape.ndims != v_shape.ndims:
                raise ValueError("weights can not be broadcast to values. values.rank=%d. weights.rank=%d. "
                                 "values.shape=%s. weights.shape=%s." % (v_shape.ndims, w_shape.ndims, v_shape,
                                                                         w_shape))
            for i, (w, v) in enumerate(zip(w_shape.dims, v_shape.dims)):
                if w is not None and v is not None and w not in (1, v):
                    raise ValueError("weights can not be broadcast to values. Mismatch at dim %d. values.shape=%s, "
                                     "weights.shape=%s." % (i, v_shape, w_shape))
        return math_ops.multiply(weights, array_ops.ones_like(values), name=scope)


def _check_rank_in(weights: Tensor, values: Tensor) -> None:
    """TF's ``assert_rank_in(weights, (0, rank(values)))``, statically."""
    w_rank, v_rank = weights.shape.ndims, values.shape.ndims
    if w_rank is not None and v_rank is not None and w_rank not in (0, v_rank):
        raise ValueError("weights rank %d is not in (0, %d), the rank of values" % (w_rank, v_rank))


# ---- means

def _streaming_mean(values: Any, weights: Any, metrics_collections: Any, updates_collections: Any,
                    name: Optional[str], elementwise: bool):
    """``mean`` (scalar ``total``/``count``) or ``mean_tensor`` (``total_tensor``/``count_tensor`` shaped like
    ``values``): ``value = total / max(count, 0)``, 0 where ``count`` is 0."""
    with variable_scope(name, "mean"):
        values = math_ops.cast(values, dtypes.float32)
        if elementwise and not values.shape.is_fully_defined():
            raise ValueError("Cannot convert a partially known TensorShape %s to a Tensor." % values.shape)
        shape, suffix = (values.shape, "_tensor") if elementwise else ([], "")
        total = _metric_variable(shape, dtypes.float32, name="total" + suffix)
        count = _metric_variable(shape, dtypes.float32, name="count" + suffix)
        num_values = array_ops.ones_like(values) if elementwise else None
        if weights is None:
            if not elementwise:
                num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = _broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.multiply(num_values, weights) if elementwise else reduction_ops.reduce_sum(weights)
        update_total = state_ops.assign_add(total, values if elementwise else reduction_ops.reduce_sum(values))
        with control_dependencies([values]):      # TF orders the count update after ``values``
            update_count = state_ops.assign_add(count, num_values)
        value = math_ops.div_no_nan(total, math_ops.maximum(count, 0.0), name="value")
        update_op = math_ops.div_no_nan(update_total, math_ops.maximum(update_count, 0.0), name="update_op")
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def mean(values: Any, weights: Any = None, metrics_collections: Any = None, updates_collections: Any = None,
         name: Optional[str] = None):
    """Streaming (weighted) mean in float32: ``update_op`` adds ``sum(values * weights)`` to ``total`` and
    ``sum(weights)`` to ``count``; ``value = total / max(count, 0)`` (0 when ``count`` is 0)."""
    return _streaming_mean(values, weights, metrics_collections, updates_collections, name, elementwise=False)


def mean_tensor(values: Any, weights: Any = None, metrics_collections: Any = None, updates_collections: Any = None,
                name: Optional[str] = None):
    """Element-wise streaming (weighted) mean: ``mean/total_tensor`` and ``mean/count_tensor`` have the static
    (fully defined) shape of ``values``; ``value = total / max(count, 0)`` per element."""
    return _streaming_mean(values, weights, metrics_collections, updates_collections, name, elementwise=True)


def percentage_below(values: Any, threshold: float, weights: Any = None, metrics_collections: Any = None,
                     updates_collections: Any = None, name: Optional[str] = None):
    """Streaming (weighted) fraction of ``values < threshold`` (scope ``percentage_below_threshold``)."""
    is_below = math_ops.cast(math_ops.less(values, threshold), dtypes.float32)
    return mean(is_below, weights, metrics_collections, updates_collections, name or "percentage_below_threshold")


def accuracy(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
             updates_collections: Any = None, name: Optional[str] = None):
    """Streaming (weighted) fraction of ``predictions == labels`` (predictions cast to the labels' dtype)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    if labels.dtype is not predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_absolute_error(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                        updates_collections: Any = None, name: Optional[str] = None):
    """Streaming mean of ``|predictions - labels|``."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    absolute_errors = math_ops.abs(predictions - labels)
    return mean(absolute_errors, weights, metrics_collections, updates_collections, name or "mean_absolute_error")


def mean_squared_error(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                       updates_collections: Any = None, name: Optional[str] = None):
    """Streaming mean of ``(labels - predictions)**2``."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    squared_error = math_ops.squared_difference(labels, predictions)
    return mean(squared_error, weights, metrics_collections, updates_collections, name or "mean_squared_error")


def mean_relative_error(labels: Any, predictions: Any, normalizer: Any, weights: Any = None,
                        metrics_collections: Any = None, updates_collections: Any = None, name: Optional[str] = None):
    """Streaming mean of ``|labels - predictions| / normalizer`` (0 where ``normalizer`` is 0)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    predictions, normalizer, _ = _remove_squeezable_dimensions(predictions, normalizer, None)
    relative_errors = math_ops.where(math_ops.equal(normalizer, 0.0), array_ops.zeros_like(labels),
                                     math_ops.divide(math_ops.abs(labels - predictions), normalizer))
    return mean(relative_errors, weights, metrics_collections, updates_collections, name or "mean_relative_error")


def mean_cosine_distance(labels: Any, predictions: Any, dim: int, weights: Any = None,
                         metrics_collections: Any = None, updates_collections: Any = None,
                         name: Optional[str] = None):
    """``1 -`` the streaming mean of ``sum(labels * predictions, dim)`` (both assumed unit-normalized along
    ``dim``); ``weights`` broadcast to the reduced shape (``dim`` kept as size 1)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    radial_diffs = reduction_ops.reduce_sum(math_ops.multiply(predictions, labels), axis=[dim], keepdims=True)
    mean_distance, update_op = mean(radial_diffs, weights, None, None, name or "mean_cosine_distance")
    mean_distance = math_ops.subtract(1.0, mean_distance)
    update_op = math_ops.subtract(1.0, update_op)
    _collect(metrics_collections, mean_distance)
    _collect(updates_collections, update_op)
    return mean_distance, update_op


def root_mean_squared_error(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                            updates_collections: Any = None, name: Optional[str] = None):
    """``sqrt`` of the streaming mean squared error (its variables are ``root_mean_squared_error/total``...)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None, name or "root_mean_squared_error")
    rmse = math_ops.sqrt(mse)
    update_rmse = math_ops.sqrt(update_mse)
    _collect(metrics_collections, rmse)
    _collect(updates_collections, update_rmse)
    return rmse, update_rmse


# ---- counts of a boolean condition

def _count_condition(values: Tensor, weights: Any, metrics_collections: Any, updates_collections: Any):
    """Streaming sum of ``weights`` where ``values`` is True, in a float32 ``count`` variable."""
    count = _metric_variable([], dtypes.float32, name="count")
    values = math_ops.cast(values, dtypes.float32)
    if weights is not None:
        weights = convert_to_tensor(weights)
        _check_rank_in(weights, values)
        values = math_ops.multiply(values, math_ops.cast(weights, dtypes.float32))
    value = array_ops.identity(count._to_tensor())
    update_op = state_ops.assign_add(count, reduction_ops.reduce_sum(values))
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def _count_fn(default_name: str, label_value: bool, prediction_value: bool, doc: str):
    def count(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
              updates_collections: Any = None, name: Optional[str] = None):
        with variable_scope(name, default_name):
            predictions, labels, weights = _remove_squeezable_dimensions(
                math_ops.cast(predictions, dtypes.bool), math_ops.cast(labels, dtypes.bool), weights)
            condition = math_ops.logical_and(math_ops.equal(labels, label_value),
                                              math_ops.equal(predictions, prediction_value))
            return _count_condition(condition, weights, metrics_collections, updates_collections)
    count.__name__ = count.__qualname__ = default_name
    count.__doc__ = doc + (" ``labels`` and ``predictions`` are cast to bool; returns ``(count, update_op)``, a "
                           "float32 scalar variable ``%s/count``." % default_name)
    return count


true_positives = _count_fn("true_positives", True, True, "Streaming sum of the weights where labels and "
                           "predictions are both True.")
false_positives = _count_fn("false_positives", False, True, "Streaming sum of the weights where labels are "
                            "False and predictions True.")
true_negatives = _count_fn("true_negatives", False, False, "Streaming sum of the weights where labels and "
                           "predictions are both False.")
false_negatives = _count_fn("false_negatives", True, False, "Streaming sum of the weights where labels are True "
                            "and predictions False.")


def _ratio_metric(default_name: str, other_count: Any, labels: Any, predictions: Any, weights: Any,
                  metrics_collections: Any, updates_collections: Any, name: Optional[str]):
    """``tp / (tp + other)`` (0 when the sum is 0) over streaming true positives and the counts of
    ``other_count`` (``false_positives`` or ``false_negatives``), created in ``<scope>/<their name>``."""
    with variable_scope(name, default_name):
        predictions, labels, weights = _remove_squeezable_dimensions(
            math_ops.cast(predictions, dtypes.bool), math_ops.cast(labels, dtypes.bool), weights)
        tp, tp_update = true_positives(labels, predictions, weights)
        other, other_update = other_count(labels, predictions, weights)

        def ratio(tp, other, name):
            return math_ops.where(math_ops.greater(tp + other, 0.0), math_ops.divide(tp, tp + other),
                                  constant(0.0), name=name)

        value = ratio(tp, other, "value")
        update_op = ratio(tp_update, other_update, "update_op")
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def precision(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
              updates_collections: Any = None, name: Optional[str] = None):
    """Streaming ``tp / (tp + fp)`` (0 while ``tp + fp`` is 0) over ``precision/true_positives/count`` and
    ``precision/false_positives/count``; labels and predictions are cast to bool."""
    return _ratio_metric("precision", false_positives, labels, predictions, weights, metrics_collections,
                         updates_collections, name)


def recall(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
           updates_collections: Any = None, name: Optional[str] = None):
    """Streaming ``tp / (tp + fn)`` (0 while ``tp + fn`` is 0) over ``recall/true_positives/count`` and
    ``recall/false_negatives/count``; labels and predictions are cast to bool."""
    return _ratio_metric("recall", false_negatives, labels, predictions, weights, metrics_collections,
                         updates_collections, name)


# ---- counts at thresholds, auc

_KEYS = ("tp", "fn", "tn", "fp")
_VARIABLE_NAMES = dict(tp="true_positives", fn="false_negatives", tn="true_negatives", fp="false_positives")


def _confusion_matrix_at_thresholds(labels: Any, predictions: Any, thresholds: Sequence[float],
                                    weights: Any = None, includes: Optional[Sequence[str]] = None):
    """Streaming weighted counts per threshold ``t``: ``tp[i]`` sums the weights where ``predictions > t[i]``
    and the label is True, ``fn[i]`` where ``predictions <= t[i]`` and True, ``tn``/``fp`` likewise for False.
    Returns ``(variables, update_ops)``, dicts keyed by ``includes`` (default all of tp, fn, tn, fp)."""
    includes = _KEYS if includes is None else tuple(includes)
    for key in includes:
        if key not in _KEYS:
            raise ValueError("Invalid key: %s" % key)
    predictions, labels, weights = _remove_squeezable_dimensions(
        math_ops.cast(predictions, dtypes.float32), math_ops.cast(labels, dtypes.bool), weights)
    num_thresholds = len(thresholds)
    predictions_2d = array_ops.reshape(predictions, [-1, 1])
    labels_2d = array_ops.reshape(labels, [1, -1])
    num_predictions = predictions_2d.shape.dims[0]
    if num_predictions is None:
        num_predictions = array_ops.shape(predictions_2d)[0]
    thresh_tiled = array_ops.tile(array_ops.expand_dims(constant(list(thresholds), dtypes.float32), 1),
                                  array_ops.stack([1, num_predictions]))
    pred_is_pos = math_ops.greater(
        array_ops.tile(array_ops.transpose(predictions_2d), [num_thresholds, 1]), thresh_tiled)
    pred_is_neg = math_ops.logical_not(pred_is_pos) if {"fn", "tn"} & set(includes) else None
    label_is_pos = array_ops.tile(labels_2d, [num_thresholds, 1])
    label_is_neg = math_ops.logical_not(label_is_pos) if {"fp", "tn"} & set(includes) else None
    weights_tiled = None
    if weights is not None:
        weights = _broadcast_weights(math_ops.cast(weights, dtypes.float32), predictions)
        weights_tiled = array_ops.tile(array_ops.reshape(weights, [1, -1]), [num_thresholds, 1])
    conditions = dict(tp=(label_is_pos, pred_is_pos), fn=(label_is_pos, pred_is_neg),
                      tn=(label_is_neg, pred_is_neg), fp=(label_is_neg, pred_is_pos))
    variables, update_ops = {}, {}
    for key in _KEYS:          # TF's creation order, whatever the order of includes
        if key not in includes:
            continue
        var = _metric_variable([num_thresholds], dtypes.float32, name=_VARIABLE_NAMES[key])
        hits = math_ops.cast(math_ops.logical_and(*conditions[key]), dtypes.float32)
        if weights_tiled is not None:
            hits = hits * weights_tiled
        update_ops[key] = state_ops.assign_add(var, reduction_ops.reduce_sum(hits, 1))
        variables[key] = var
    return variables, update_ops


def _count_at_thresholds_fn(key: str):
    default_name = _VARIABLE_NAMES[key]

    def count(labels: Any, predictions: Any, thresholds: Sequence[float], weights: Any = None,
              metrics_collections: Any = None, updates_collections: Any = None, name: Optional[str] = None):
        with variable_scope(name, default_name):
            variables, update_ops = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights,
                                                                    includes=(key,))
            value = array_ops.identity(variables[key]._to_tensor())
        _collect(metrics_collections, value)
        _collect(updates_collections, update_ops[key])
        return value, update_ops[key]
    count.__name__ = count.__qualname__ = default_name + "_at_thresholds"
    count.__doc__ = ("Streaming %s per threshold: a float32 ``[len(thresholds)]`` variable ``%s/%s`` (a prediction "
                     "is positive when ``> threshold``); returns ``(value, update_op)``."
                     % (default_name.replace("_", " "), default_name, default_name))
    return count


true_positives_at_thresholds = _count_at_thresholds_fn("tp")
false_negatives_at_thresholds = _count_at_thresholds_fn("fn")
true_negatives_at_thresholds = _count_at_thresholds_fn("tn")
false_positives_at_thresholds = _count_at_thresholds_fn("fp")


def _ratio_at_thresholds(default_name: str, other: str, labels: Any, predictions: Any, thresholds: Sequence[float],
                         weights: Any, metrics_collections: Any, updates_collections: Any, name: Optional[str]):
    """``tp / (1e-7 + tp + <other>)`` per threshold, ops named ``<prefix>_value`` / ``<prefix>_update_op``."""
    prefix = default_name.split("_at_")[0]
    with variable_scope(name, default_name):
        variables, update_ops = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights,
                                                                includes=("tp", other))
        epsilon = 1e-7

        def ratio(tp, rest, name):
            return math_ops.divide(tp, epsilon + tp + rest, name=prefix + "_" + name)

        value = ratio(variables["tp"]._to_tensor(), variables[other]._to_tensor(), "value")
        update_op = ratio(update_ops["tp"], update_ops[other], "update_op")
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def precision_at_thresholds(labels: Any, predictions: Any, thresholds: Sequence[float], weights: Any = None,
                            metrics_collections: Any = None, updates_collections: Any = None,
                            name: Optional[str] = None):
    """Streaming precision ``tp / (1e-7 + tp + fp)`` for each threshold (positive when ``predictions > t``)."""
    return _ratio_at_thresholds("precision_at_thresholds", "fp", labels, predictions, thresholds, weights,
                                metrics_collections, updates_collections, name)


def recall_at_thresholds(labels: Any, predictions: Any, thresholds: Sequence[float], weights: Any = None,
                         metrics_collections: Any = None, updates_collections: Any = None,
                         name: Optional[str] = None):
    """Streaming recall ``tp / (1e-7 + tp + fn)`` for each threshold (positive when ``predictions > t``)."""
    return _ratio_at_thresholds("recall_at_thresholds", "fn", labels, predictions, thresholds, weights,
                                metrics_collections, updates_collections, name)


def _interpolate_pr_auc(tp: Tensor, fp: Tensor, fn: Tensor, n: int) -> Tensor:
    """PR-AUC with TP and P = TP + FP linear between thresholds (Davis & Goadrich 2006): per interval
    ``slope * (dTP + intercept * log(P_A / P_B)) / (TP_B + FN_B)``, ``slope = dTP / dP``."""
    dtp = tp[:n - 1] - tp[1:]
    p = tp + fp
    prec_slope = math_ops.div_no_nan(dtp, math_ops.maximum(p[:n - 1] - p[1:], 0.0), name="prec_slope")
    intercept = tp[1:] - math_ops.multiply(prec_slope, p[1:])
    safe_p_ratio = math_ops.where(
        math_ops.logical_and(p[:n - 1] > 0, p[1:] > 0),
        math_ops.div_no_nan(p[:n - 1], math_ops.maximum(p[1:], 0.0), name="recall_relative_ratio"),
        array_ops.ones_like(p[1:]))
    return reduction_ops.reduce_sum(
        math_ops.div_no_nan(prec_slope * (dtp + intercept * math_ops.log(safe_p_ratio)),
                            math_ops.maximum(tp[1:] + fn[1:], 0.0), name="pr_auc_increment"),
        name="interpolate_pr_auc")


def _compute_auc(tp: Tensor, fn: Tensor, tn: Tensor, fp: Tensor, n: int, curve: str, summation_method: str,
                 name: str) -> Tensor:
    """Riemann sum of the ROC curve (recall over false positive rate) or the PR curve (precision over recall)
    across the ``n`` thresholds, with ``1e-6`` added where TF adds it to avoid 0/0."""
    if curve == "PR":
        if summation_method == "trapezoidal":
            logging.warning("Trapezoidal rule is known to produce incorrect PR-AUCs; please switch to "
                            "\"careful_interpolation\" instead.")
        elif summation_method == "careful_interpolation":
            return _interpolate_pr_auc(tp, fp, fn, n)
    epsilon = 1.0e-6
    rec = math_ops.divide(tp + epsilon, tp + fn + epsilon)
    if curve == "ROC":
        x, y = math_ops.divide(fp, fp + tn + epsilon), rec
    else:
        x, y = rec, math_ops.divide(tp + epsilon, tp + fp + epsilon)
    if summation_method in ("trapezoidal", "careful_interpolation"):
        heights = (y[:n - 1] + y[1:]) / 2.0
    elif summation_method == "minoring":
        heights = math_ops.minimum(y[:n - 1], y[1:])
    elif summation_method == "majoring":
        heights = math_ops.maximum(y[:n - 1], y[1:])
    else:
        raise ValueError("Invalid summation_method: %s summation_method should be 'trapezoidal', "
                         "'careful_interpolation', 'minoring', or 'majoring'." % summation_method)
    return reduction_ops.reduce_sum(math_ops.multiply(x[:n - 1] - x[1:], heights), name=name)


def auc(labels: Any, predictions: Any, weights: Any = None, num_thresholds: int = 200,
        metrics_collections: Any = None, updates_collections: Any = None, curve: str = "ROC",
        name: Optional[str] = None, summation_method: str = "trapezoidal", thresholds: Any = None):
    """Approximate streaming AUC of the ROC (``curve='ROC'``) or precision-recall (``'PR'``) curve from the
    counts at ``num_thresholds`` thresholds ``-1e-7, 1/(n-1), ..., (n-2)/(n-1), 1 + 1e-7`` (or the sorted
    ``thresholds`` plus those two endpoints); ``predictions`` in [0, 1], labels cast to bool.
    ``summation_method``: 'trapezoidal', 'careful_interpolation' (TF's interpolated PR-AUC), 'minoring' /
    'majoring' (lower / upper Riemann bounds)."""
    with variable_scope(name, "auc"):
        if curve not in ("ROC", "PR"):
            raise ValueError("Curve must be either ROC or PR. Curve %s is unknown." % curve)
        kepsilon = 1e-7
        if thresholds is not None:
            thresholds = sorted(thresholds)
            num_thresholds = len(thresholds) + 2
        else:
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        thresholds = [0.0 - kepsilon] + list(thresholds) + [1.0 + kepsilon]
        variables, update_ops = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights)
        values = {k: v._to_tensor() for k, v in variables.items()}
        value = _compute_auc(values["tp"], values["fn"], values["tn"], values["fp"], num_thresholds, curve,
                             summation_method, "value")
        update_op = _compute_auc(update_ops["tp"], update_ops["fn"], update_ops["tn"], update_ops["fp"],
                                 num_thresholds, curve, summation_method, "update_op")
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


# ---- mean_iou

def mean_iou(labels: Any, predictions: Any, num_classes: int, weights: Any = None, metrics_collections: Any = None,
             updates_collections: Any = None, name: Optional[str] = None):
    """Streaming mean intersection-over-union over the classes present: a float64 confusion matrix variable
    ``mean_iou/total_confusion_matrix`` (rows labels, columns predictions); per class
    ``IoU = cm[c, c] / (row_c + col_c - cm[c, c])``, averaged over classes whose denominator is not 0 (0 when
    none is). ``update_op`` returns the updated confusion matrix, as TF's does."""
    with variable_scope(name, "mean_iou"):
        labels, predictions = convert_to_tensor(labels), convert_to_tensor(predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
        num_classes = int(constant_value(num_classes)) if isinstance(num_classes, Tensor) else int(num_classes)
        total_cm = _metric_variable([num_classes, num_classes], dtypes.float64, name="total_confusion_matrix")
        predictions = math_ops.cast(predictions, dtypes.int64)
        labels = math_ops.cast(labels, dtypes.int64)
        if predictions.shape.ndims > 1:
            predictions = array_ops.reshape(predictions, [-1])
        if labels.shape.ndims > 1:
            labels = array_ops.reshape(labels, [-1])
        if weights is not None:
            weights = convert_to_tensor(weights)
            if weights.shape.ndims > 1:
                weights = array_ops.reshape(weights, [-1])
        current_cm = segment_ops.confusion_matrix(labels, predictions, num_classes, weights=weights,
                                                  dtype=dtypes.float64)
        update_op = state_ops.assign_add(total_cm, current_cm)

        cm = total_cm._to_tensor()
        sum_over_row = math_ops.cast(reduction_ops.reduce_sum(cm, 0), dtypes.float32)
        sum_over_col = math_ops.cast(reduction_ops.reduce_sum(cm, 1), dtypes.float32)
        cm_diag = math_ops.cast(linalg_ops.diag_part(cm), dtypes.float32)
        denominator = sum_over_row + sum_over_col - cm_diag
        num_valid_entries = reduction_ops.reduce_sum(
            math_ops.cast(math_ops.not_equal(denominator, 0.0), dtypes.float32))
        denominator = math_ops.where(math_ops.greater(denominator, 0.0), denominator,
                                     array_ops.ones_like(denominator))
        iou = math_ops.divide(cm_diag, denominator)
        value = math_ops.where(math_ops.greater(num_valid_entries, 0.0),
                               reduction_ops.reduce_sum(iou, name="mean_iou") / num_valid_entries, constant(0.0))
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def mean_per_class_accuracy(labels: Any, predictions: Any, num_classes: int, weights: Any = None,
                            metrics_collections: Any = None, updates_collections: Any = None,
                            name: Optional[str] = None):
    """Streaming accuracy per label class, averaged over the ``num_classes`` classes (a class never seen counts
    0): ``mean_accuracy/total[c]`` sums the weights of the entries labelled c, ``mean_accuracy/count[c]``
    those correctly predicted; ``update_op`` returns the per-class accuracies."""
    with variable_scope(name, "mean_accuracy"):
        labels, predictions = math_ops.cast(labels, dtypes.int64), convert_to_tensor(predictions)
        if labels.shape.ndims > 1:
            labels = array_ops.reshape(labels, [-1])
        if predictions.shape.ndims > 1:
            predictions = array_ops.reshape(predictions, [-1])
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = _metric_variable([num_classes], dtypes.float32, name="total")
        count = _metric_variable([num_classes], dtypes.float32, name="count")
        ones = array_ops.ones(array_ops.stack([array_ops.size(labels)]), dtypes.float32)
        if labels.dtype is not predictions.dtype:
            predictions = math_ops.cast(predictions, labels.dtype)
        is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is not None:
            weights = convert_to_tensor(weights)
            if weights.shape.ndims > 1:
                weights = array_ops.reshape(weights, [-1])
            weights = math_ops.cast(weights, dtypes.float32)
            is_correct *= weights
            ones *= weights
        update_total = state_ops.scatter_add(total, labels, ones)
        update_count = state_ops.scatter_add(count, labels, is_correct)
        per_class = math_ops.div_no_nan(count, math_ops.maximum(total, 0.0))
        value = reduction_ops.reduce_mean(per_class, name="mean_accuracy")
        update_op = math_ops.div_no_nan(update_count, math_ops.maximum(update_total, 0.0), name="update_op")
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op
