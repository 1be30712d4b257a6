"""``tf.train.RMSPropOptimizer``::

    ms += (grad**2 - ms) * (1 - decay)                      (ms starts at 1)
    mom = momentum * mom + lr * grad / sqrt(ms + epsilon)
    var -= mom

Centered: ``mg += (grad - mg) * (1 - decay)`` and the denominator is ``sqrt(ms - mg**2 + epsilon)``.
Slots ``rms``, ``momentum`` (and ``mg`` when centered), created in TF's order rms, mg, momentum.
"""
from __future__ import annotations

from typing import Any

from ...ops.training_ops import apply_update
from .optimizer import Optimizer


class RMSPropOptimizer(Optimizer):
    def __init__(self, learning_rate: Any, decay: Any = 0.9, momentum: Any = 0.0, epsilon: Any = 1e-10,
                 use_locking: bool = False, centered: bool = False, name: str = "RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate, self._decay, self._momentum, self._epsilon = learning_rate, decay, momentum, epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot_with_value(v, 1.0, "rms", self._name, initializer="ones")
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._tensor(self._learning_rate, "learning_rate")
        self._decay_tensor = self._tensor(self._decay, "decay")
        self._momentum_tensor = self._tensor(self._momentum, "momentum")
        self._epsilon_tensor = self._tensor(self._epsilon, "epsilon")

    def _inputs(self, var, grad_parts):
        c = lambda t: self._cast(t, var)  # noqa: E731
        slots = [self.get_slot(var, "rms")._ref(), self.get_slot(var, "momentum")._ref()]
        if self._centered:
            slots.insert(0, self.get_slot(var, "mg")._ref())
        return ([var._ref()] + slots + [c(self._learning_rate_tensor), c(self._decay_tensor),
                                        c(self._momentum_tensor), c(self._epsilon_tensor)] + grad_parts)

    def _op(self, sparse):
        return ("Sparse" if sparse else "") + ("ApplyCenteredRMSProp" if self._centered else "ApplyRMSProp")

    def _apply_dense(self, grad, var):
        return apply_update(self._op(False), self._inputs(var, [grad]), self._use_locking).op

    def _apply_sparse(self, grad, var):
        return apply_update(self._op(True), self._inputs(var, [grad.values, grad.indices]), self._use_locking).op
