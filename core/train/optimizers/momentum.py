"""``tf.train.MomentumOptimizer``: ``accum = momentum * accum + grad; var -= lr * accum``
(Nesterov: ``var -= lr * grad + lr * momentum * accum``). Slot ``momentum``."""
from __future__ import annotations

from typing import Any

from ...ops.training_ops import apply_update
from .optimizer import Optimizer


class MomentumOptimizer(Optimizer):
    def __init__(self, learning_rate: Any, momentum: Any, use_locking: bool = False, name: str = "Momentum",
                 use_nesterov: bool = False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._tensor(self._learning_rate, "learning_rate")
        self._momentum_tensor = self._tensor(self._momentum, "momentum")

    def _apply_dense(self, grad, var):
        mom = self.get_slot(var, "momentum")
        return apply_update("ApplyMomentum", [var._ref(), mom._ref(), self._cast(self._learning_rate_tensor, var),
                                              grad, self._cast(self._momentum_tensor, var)],
                            self._use_locking, use_nesterov=self._use_nesterov).op

    def _apply_sparse(self, grad, var):
        mom = self.get_slot(var, "momentum")
        return apply_update("SparseApplyMomentum",
                            [var._ref(), mom._ref(), self._cast(self._learning_rate_tensor, var), grad.values,
                             grad.indices, self._cast(self._momentum_tensor, var)],
                            self._use_locking, use_nesterov=self._use_nesterov).op
