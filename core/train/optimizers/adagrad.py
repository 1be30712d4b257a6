"""``tf.train.AdagradOptimizer``: ``accum += grad**2; var -= lr * grad / sqrt(accum)``. Slot ``accumulator``
starts at ``initial_accumulator_value`` (> 0)."""
from __future__ import annotations

from typing import Any

from ...ops.training_ops import apply_update
from .optimizer import Optimizer


class AdagradOptimizer(Optimizer):
    def __init__(self, learning_rate: Any, initial_accumulator_value: float = 0.1, use_locking: bool = False,
                 name: str = "Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s" % initial_accumulator_value)
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot_with_value(v, self._initial_accumulator_value, "accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._tensor(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        acc = self.get_slot(var, "accumulator")
        return apply_update("ApplyAdagrad", [var._ref(), acc._ref(), self._cast(self._learning_rate_tensor, var),
                                             grad], self._use_locking, update_slots=True).op

    def _apply_sparse(self, grad, var):
        acc = self.get_slot(var, "accumulator")
        return apply_update("SparseApplyAdagrad", [var._ref(), acc._ref(),
                                                   self._cast(self._learning_rate_tensor, var), grad.values,
                                                   grad.indices], self._use_locking, update_slots=True).op
