"""``tf.train.ProximalAdagradOptimizer``: Adagrad's per-coordinate rate with the proximal L1/L2 step:
``accum += grad**2; a = lr / sqrt(accum); prox = var - a * grad;
var = sign(prox) * max(|prox| - a * l1, 0) / (1 + a * l2)``. Slot ``accumulator`` (a Const of
``initial_accumulator_value``). Ops ``ApplyProximalAdagrad`` / ``SparseApplyProximalAdagrad``."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...framework.registry import convert_to_tensor
from ...ops.training_ops import apply_update
from .optimizer import Optimizer


def const_slot_value(var: Any, value: float):
    """TF's ``constant_op.constant(value, shape=var.shape, dtype=var.dtype)``: one ``Const`` named ``Const``."""
    return convert_to_tensor(np.full(var.shape.as_list(), value, dtype=var.dtype.as_numpy_dtype), name="Const")


class ProximalAdagradOptimizer(Optimizer):
    """TF1's proximal Adagrad (``initial_accumulator_value`` > 0)."""

    def __init__(self, learning_rate: Any, initial_accumulator_value: float = 0.1,
                 l1_regularization_strength: float = 0.0, l2_regularization_strength: float = 0.0,
                 use_locking: bool = False, name: str = "ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s" % initial_accumulator_value)
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength

    def _create_slots(self, var_list):
        for v in var_list:
            value = const_slot_value(v, self._initial_accumulator_value)
            self._get_or_make_slot(v, lambda t=value: t, "accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._tensor(self._learning_rate, "learning_rate")
        self._l1_tensor = self._tensor(self._l1_regularization_strength, "l1_regularization_strength")
        self._l2_tensor = self._tensor(self._l2_regularization_strength, "l2_regularization_strength")

    def _apply_dense(self, grad, var):
        acc = self.get_slot(var, "accumulator")
        return apply_update("ApplyProximalAdagrad", [var._ref(), acc._ref(), self._learning_rate_tensor,
                                                     self._l1_tensor, self._l2_tensor, grad], self._use_locking).op

    def _apply_sparse(self, grad, var):
        acc = self.get_slot(var, "accumulator")
        return apply_update("SparseApplyProximalAdagrad",
                            [var._ref(), acc._ref(), self._learning_rate_tensor, self._l1_tensor, self._l2_tensor,
                             grad.values, grad.indices], self._use_locking).op
