"""``tf.train.AdadeltaOptimizer`` (Zeiler 2012)::

    accum = rho * accum + (1 - rho) * grad**2
    update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad
    var -= lr * update
    accum_update = rho * accum_update + (1 - rho) * update**2

Slots ``accum``, ``accum_update``."""
from __future__ import annotations

from typing import Any

from ...ops.training_ops import apply_update
from .optimizer import Optimizer


class AdadeltaOptimizer(Optimizer):
    def __init__(self, learning_rate: Any = 0.001, rho: Any = 0.95, epsilon: Any = 1e-8,
                 use_locking: bool = False, name: str = "Adadelta"):
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self):
        self._lr_t = self._tensor(self._lr, "lr")
        self._rho_t = self._tensor(self._rho, "rho")
        self._epsilon_t = self._tensor(self._epsilon, "epsilon")

    def _hyper(self, var):
        return [self._cast(self._lr_t, var), self._cast(self._rho_t, var), self._cast(self._epsilon_t, var)]

    def _apply_dense(self, grad, var):
        accum, accum_update = self.get_slot(var, "accum"), self.get_slot(var, "accum_update")
        return apply_update("ApplyAdadelta", [var._ref(), accum._ref(), accum_update._ref()] + self._hyper(var)
                            + [grad], self._use_locking).op

    def _apply_sparse(self, grad, var):
        accum, accum_update = self.get_slot(var, "accum"), self.get_slot(var, "accum_update")
        return apply_update("SparseApplyAdadelta", [var._ref(), accum._ref(), accum_update._ref()]
                            + self._hyper(var) + [grad.values, grad.indices], self._use_locking).op
