"""``tf.train.ProximalGradientDescentOptimizer``: gradient descent followed by the proximal step of L1/L2
regularization (FOBOS): ``prox = var - lr * grad``;
``var = sign(prox) * max(|prox| - lr * l1, 0) / (1 + lr * l2)``. No slots. Ops ``ApplyProximalGradientDescent`` /
``SparseApplyProximalGradientDescent``."""
from __future__ import annotations

from typing import Any

from ...ops.training_ops import apply_update
from .optimizer import Optimizer


class ProximalGradientDescentOptimizer(Optimizer):
    """TF1's proximal gradient descent (``l1_regularization_strength`` / ``l2_regularization_strength`` >= 0)."""

    def __init__(self, learning_rate: Any, l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False,
                 name: str = "ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength

    def _prepare(self):
        self._learning_rate_tensor = self._tensor(self._learning_rate, "learning_rate")
        self._l1_tensor = self._tensor(self._l1_regularization_strength, "l1_regularization_strength")
        self._l2_tensor = self._tensor(self._l2_regularization_strength, "l2_regularization_strength")

    def _apply_dense(self, grad, var):
        return apply_update("ApplyProximalGradientDescent",
                            [var._ref(), self._learning_rate_tensor, self._l1_tensor, self._l2_tensor, grad],
                            self._use_locking).op

    def _apply_sparse(self, grad, var):
        return apply_update("SparseApplyProximalGradientDescent",
                            [var._ref(), self._learning_rate_tensor, self._l1_tensor, self._l2_tensor, grad.values,
                             grad.indices], self._use_locking).op
