"""``tf.metrics`` (TF 1.x streaming metrics): each returns ``(value, update_op)`` over local variables
``<name>/total`` and ``<name>/count``; ``local_variables_initializer()`` resets them."""
from __future__ import annotations

from typing import Any, Optional

from . import dtypes
from .graph import GraphKeys, get_default_graph
from .ops import array_ops, math_ops, state_ops
from .registry import convert_to_tensor
from .variable_scope import variable_scope
from .variables import Variable


def metric_variable(shape: Any, dtype: Any, validate_shape: bool = True, name: Optional[str] = None) -> Variable:
    """A zero-initialized local, non-trainable variable in the METRIC_VARIABLES collection."""
    return Variable(lambda: array_ops.zeros(shape, dtype), trainable=False, name=name, dtype=dtype,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                    validate_shape=validate_shape)


def _collect(collections, value) -> None:
    for key in collections or []:
        get_default_graph().add_to_collection(key, value)


def mean(values: Any, weights: Any = None, metrics_collections: Any = None, updates_collections: Any = None,
         name: Optional[str] = None):
    """Streaming (weighted) mean: ``value = total / count``; ``update_op`` adds this batch and returns it."""
    with variable_scope(name, "mean"):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            weights = math_ops.cast(weights, dtypes.float32) * array_ops.ones_like(values)
            values = values * weights
            num_values = math_ops.reduce_sum(weights)
        update_total = state_ops.assign_add(total, math_ops.reduce_sum(values))
        update_count = state_ops.assign_add(count, num_values)
        value = math_ops.div_no_nan(total._to_tensor(), count._to_tensor(), name="value")
        update_op = math_ops.div_no_nan(update_total, update_count, name="update_op")
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def accuracy(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
             updates_collections: Any = None, name: Optional[str] = None):
    """Streaming fraction of ``predictions == labels``; returns ``(accuracy, update_op)``."""
    labels = convert_to_tensor(labels)
    predictions = convert_to_tensor(predictions)
    if labels.dtype is not predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_squared_error(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                       updates_collections: Any = None, name: Optional[str] = None):
    squared = math_ops.squared_difference(math_ops.cast(predictions, dtypes.float32),
                                          math_ops.cast(labels, dtypes.float32))
    return mean(squared, weights, metrics_collections, updates_collections, name or "mean_squared_error")
