"""``tf.train.AdagradDAOptimizer``: Adagrad dual averaging. Slots ``gradient_accumulator`` (starts at 0) and
``gradient_squared_accumulator`` (starts at ``initial_gradient_squared_accumulator_value``), both Consts as in
TF. With ``T = global_step + 1`` (read before this step's increment):
``g += grad; gg += grad**2; var = lr * sign(-g) * max(|g| - l1*T, 0) / (l2*T*lr + sqrt(gg))``.
Ops ``ApplyAdagradDA`` / ``SparseApplyAdagradDA``."""
from __future__ import annotations

from typing import Any

from ...framework import dtypes
from ...ops import array_ops, math_ops
from ...ops.training_ops import apply_update
from .optimizer import Optimizer
from .proximal_adagrad import const_slot_value


class AdagradDAOptimizer(Optimizer):
    """TF1's AdagradDA; ``global_step`` is the int64 step variable the training op increments."""

    def __init__(self, learning_rate: Any, global_step: Any, initial_gradient_squared_accumulator_value: float = 0.1,
                 l1_regularization_strength: float = 0.0, l2_regularization_strength: float = 0.0,
                 use_locking: bool = False, name: str = "AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError("initial_gradient_squared_accumulator_value must be positive: %s"
                             % initial_gradient_squared_accumulator_value)
        if global_step is None:
            raise ValueError("AdagradDAOptimizer needs a global_step (an int64 variable or tensor)")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_gradient_squared_accumulator_value = initial_gradient_squared_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._global_step = global_step

    def _create_slots(self, var_list):
        for v in var_list:
            g_val = const_slot_value(v, 0.0)
            gg_val = const_slot_value(v, self._initial_gradient_squared_accumulator_value)
            self._get_or_make_slot(v, lambda t=g_val: t, "gradient_accumulator", self._name)
            self._get_or_make_slot(v, lambda t=gg_val: t, "gradient_squared_accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._tensor(self._learning_rate, "learning_rate")
        step = array_ops.identity(self._global_step)
        if step.dtype != dtypes.int64:
            raise TypeError("AdagradDAOptimizer's global_step must be int64, got %s" % step.dtype.name)
        self._global_step_on_worker = step + 1

    def _inputs(self, var):
        return (self.get_slot(var, "gradient_accumulator"), self.get_slot(var, "gradient_squared_accumulator"),
                array_ops.identity(self._global_step_on_worker))

    def _hyper(self, var):
        return [self._cast(self._learning_rate_tensor, var),
                math_ops.cast(self._l1_regularization_strength, var.dtype),
                math_ops.cast(self._l2_regularization_strength, var.dtype)]

    def _apply_dense(self, grad, var):
        g_acc, gg_acc, step = self._inputs(var)
        return apply_update("ApplyAdagradDA", [var._ref(), g_acc._ref(), gg_acc._ref(), grad] + self._hyper(var)
                            + [step], self._use_locking).op

    def _apply_sparse(self, grad, var):
        g_acc, gg_acc, step = self._inputs(var)
        return apply_update("SparseApplyAdagradDA", [var._ref(), g_acc._ref(), gg_acc._ref(), grad.values,
                                                     grad.indices] + self._hyper(var) + [step],
                            self._use_locking).op
