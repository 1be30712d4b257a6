"""``tf.train.AdamOptimizer`` (Kingma & Ba), TF1's form with epsilon outside the bias correction::

    alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
    m += (grad - m) * (1 - beta1);  v += (grad**2 - v) * (1 - beta2)
    var -= alpha * m / (sqrt(v) + epsilon)

``beta1_power`` / ``beta2_power`` are non-slot variables (starting at beta1, beta2) multiplied by beta1, beta2
after every update of a step. Slots ``m``, ``v``. Sparse gradients decay all of ``m``/``v`` and move every row
of ``var`` (TF's ``_apply_sparse_shared``: ``Assign`` + ``ScatterAdd`` + ``AssignSub``).
"""
from __future__ import annotations

from typing import Any

from ...control_flow import group
from ...framework.graph import control_dependencies
from ...ops import math_ops, state_ops
from ...ops.training_ops import apply_update
from .optimizer import Optimizer


class AdamOptimizer(Optimizer):
    def __init__(self, learning_rate: Any = 0.001, beta1: Any = 0.9, beta2: Any = 0.999, epsilon: Any = 1e-8,
                 use_locking: bool = False, name: str = "Adam"):
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon

    def _get_beta_accumulators(self):
        graph = self._first_var_graph
        return (self._get_non_slot_variable("beta1_power", graph),
                self._get_non_slot_variable("beta2_power", graph))

    def _create_slots(self, var_list):
        first_var = min(var_list, key=lambda x: x.name)
        self._first_var_graph = first_var.graph
        self._create_non_slot_variable(self._beta1, "beta1_power", first_var)
        self._create_non_slot_variable(self._beta2, "beta2_power", first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self):
        self._lr_t = self._tensor(self._lr, "learning_rate")
        self._beta1_t = self._tensor(self._beta1, "beta1")
        self._beta2_t = self._tensor(self._beta2, "beta2")
        self._epsilon_t = self._tensor(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        beta1_power, beta2_power = self._get_beta_accumulators()
        c = lambda t: self._cast(t, var)  # noqa: E731
        return apply_update("ApplyAdam", [var._ref(), m._ref(), v._ref(), c(beta1_power), c(beta2_power),
                                          c(self._lr_t), c(self._beta1_t), c(self._beta2_t), c(self._epsilon_t),
                                          grad], self._use_locking, use_nesterov=False).op

    def _apply_sparse(self, grad, var):
        beta1_power, beta2_power = self._get_beta_accumulators()
        c = lambda t: self._cast(t, var)  # noqa: E731
        beta1_power, beta2_power = c(beta1_power), c(beta2_power)
        lr_t, beta1_t, beta2_t, epsilon_t = c(self._lr_t), c(self._beta1_t), c(self._beta2_t), c(self._epsilon_t)
        lr = lr_t * math_ops.sqrt(1 - beta2_power) / (1 - beta1_power)
        m = self.get_slot(var, "m")
        m_scaled_g_values = grad.values * (1 - beta1_t)
        m_t = state_ops.assign(m, m * beta1_t, use_locking=self._use_locking)
        with control_dependencies([m_t]):
            m_t = state_ops.scatter_add(m, grad.indices, m_scaled_g_values, use_locking=self._use_locking)
        v = self.get_slot(var, "v")
        v_scaled_g_values = (grad.values * grad.values) * (1 - beta2_t)
        v_t = state_ops.assign(v, v * beta2_t, use_locking=self._use_locking)
        with control_dependencies([v_t]):
            v_t = state_ops.scatter_add(v, grad.indices, v_scaled_g_values, use_locking=self._use_locking)
        v_sqrt = math_ops.sqrt(v_t)
        var_update = state_ops.assign_sub(var, lr * m_t / (v_sqrt + epsilon_t), use_locking=self._use_locking)
        return group(var_update, m_t, v_t)

    def _finish(self, update_ops, name_scope):
        with control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            update_beta1 = beta1_power.assign(beta1_power * self._beta1_t, use_locking=self._use_locking)
            update_beta2 = beta2_power.assign(beta2_power * self._beta2_t, use_locking=self._use_locking)
        return group(*update_ops + [update_beta1, update_beta2], name=name_scope)
