"""``tf.train.FtrlOptimizer`` (McMahan et al. 2013, "Ad Click Prediction"), with p = -learning_rate_power::

    n = accum + grad**2;  sigma = (n**p - accum**p) / lr
    linear += grad' - sigma * var            (grad' = grad + 2 * l2_shrinkage * var)
    var = (sign(linear) * l1 - linear) / (n**p / lr + 2 * l2)  if |linear| > l1  else 0
    accum = n

Slots ``accum`` (starting at ``initial_accumulator_value``) and ``linear``.
"""
from __future__ import annotations

from typing import Any, Optional

from ...ops import array_ops, math_ops
from ...ops.training_ops import apply_update
from .optimizer import Optimizer, _call_if_callable


class FtrlOptimizer(Optimizer):
    def __init__(self, learning_rate: Any, learning_rate_power: float = -0.5,
                 initial_accumulator_value: float = 0.1, l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False, name: str = "Ftrl",
                 accum_name: Optional[str] = None, linear_name: Optional[str] = None,
                 l2_shrinkage_regularization_strength: float = 0.0, beta: Optional[float] = None):
        super().__init__(use_locking, name)
        if initial_accumulator_value < 0.0:
            raise ValueError("initial_accumulator_value %f needs to be positive or zero" % initial_accumulator_value)
        if learning_rate_power > 0.0:
            raise ValueError("learning_rate_power %f needs to be negative or zero" % learning_rate_power)
        if l1_regularization_strength < 0.0:
            raise ValueError("l1_regularization_strength %f needs to be positive or zero"
                             % l1_regularization_strength)
        if l2_regularization_strength < 0.0:
            raise ValueError("l2_regularization_strength %f needs to be positive or zero"
                             % l2_regularization_strength)
        if l2_shrinkage_regularization_strength < 0.0:
            raise ValueError("l2_shrinkage_regularization_strength %f needs to be positive or zero"
                             % l2_shrinkage_regularization_strength)
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._accum_name = accum_name
        self._linear_name = linear_name

    def _create_slots(self, var_list):
        for v in var_list:
            # TF's _accum_initializer: ones(shape) * initial_accumulator_value (Initializer/ones, .../mul)
            self._get_or_make_slot(v, lambda v=v: array_ops.ones(v.shape.as_list(), v.dtype)
                                   * self._initial_accumulator_value, "accum", self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._tensor(self._learning_rate, "learning_rate")
        self._l1_tensor = self._tensor(self._l1, "l1_regularization_strength")
        # TF's adjusted_l2_regularization_strength, built with the same ops: l2 + beta / (2 * max(lr, 1e-36))
        adjusted = self._l2 + self._beta / (2. * math_ops.maximum(_call_if_callable(self._learning_rate), 1e-36))
        self._adjusted_l2_tensor = self._tensor(adjusted, "adjusted_l2_regularization_strength")
        self._beta_tensor = self._tensor(self._beta, "beta")
        self._l2_shrinkage_tensor = self._tensor(self._l2_shrinkage, "l2_shrinkage_regularization_strength")
        self._learning_rate_power_tensor = self._tensor(self._learning_rate_power, "learning_rate_power")

    def _inputs(self, grad_parts, var):
        c = lambda t: self._cast(t, var)  # noqa: E731
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        head = [var._ref(), accum._ref(), linear._ref()] + grad_parts
        hyper = [c(self._learning_rate_tensor), c(self._l1_tensor), c(self._adjusted_l2_tensor)]
        if self._l2_shrinkage > 0.0:
            hyper.append(c(self._l2_shrinkage_tensor))
        return head + hyper + [c(self._learning_rate_power_tensor)]

    def _op(self, sparse: bool) -> str:
        return ("SparseApplyFtrl" if sparse else "ApplyFtrl") + ("V2" if self._l2_shrinkage > 0.0 else "")

    def _apply_dense(self, grad, var):
        return apply_update(self._op(False), self._inputs([grad], var), self._use_locking,
                            multiply_linear_by_lr=False).op

    def _apply_sparse(self, grad, var):
        return apply_update(self._op(True), self._inputs([grad.values, grad.indices], var), self._use_locking,
                            multiply_linear_by_lr=False).op
