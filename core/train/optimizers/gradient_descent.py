"""``tf.train.GradientDescentOptimizer``: ``var -= learning_rate * grad``."""
from __future__ import annotations

from typing import Any

from ...framework.registry import IndexedSlices
from ...ops.training_ops import apply_update
from .optimizer import Optimizer


class GradientDescentOptimizer(Optimizer):
    """Plain SGD. Sparse gradients update only their rows (``ScatterSub`` of ``lr * values``; duplicate
    indices add up)."""

    def __init__(self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self) -> None:
        self._learning_rate_tensor = self._tensor(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return apply_update("ApplyGradientDescent", [var._ref(), self._cast(self._learning_rate_tensor, var), grad],
                            self._use_locking).op

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var):
        delta = IndexedSlices(grad.values * self._cast(self._learning_rate_tensor, var), grad.indices,
                              grad.dense_shape)
        return var.scatter_sub(delta, use_locking=self._use_locking)
