"""Learning-rate schedules over the global step (TF1 ``tf.train.*_decay``), built as graph ops with TF's
formulas (the step and the rate are cast to the learning rate's dtype; p = step / decay_steps, floored when
``staircase``):

- exponential_decay: ``lr * rate**p``;  natural_exp_decay: ``lr * exp(-rate)**p``;
  inverse_time_decay: ``lr / (1 + rate * p)``
- polynomial_decay: ``(lr - end) * (1 - step / ds)**power + end`` with ``step = min(step, ds)``, or with
  ``cycle`` ``ds *= max(1, ceil(step / ds))``
- cosine_decay: ``lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, ds) / ds)) + alpha)``
- cosine_decay_restarts (SGDR): ``p = step / first_decay_steps``; restart ``i = floor(p)`` (or, with
  ``t_mul != 1``, ``floor(log(1 - p (1 - t_mul)) / log(t_mul))``) chosen by a ``cond`` on ``t_mul == 1``,
  ``lr * ((1 - alpha) * 0.5 * m_mul**i * (1 + cos(pi * frac)) + alpha)``
- linear_cosine_decay: ``lr * ((alpha + (ds - s) / ds) * 0.5 * (1 + cos(2 pi num_periods s / ds)) + beta)``
  with ``s = min(step, ds)``; noisy_linear_cosine_decay adds ``N(0, initial_variance / (1 + s)**variance_decay)``
  noise to the linear part
- piecewise_constant: ``values[i]`` where ``boundaries[i-1] < x <= boundaries[i]``
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from ..framework.graph import Tensor, name_scope
from ..ops import array_ops, math_ops
from ..framework.registry import constant, convert_to_tensor
from ..ops.elementwise_ops import cos
from ..control_flow import cond
from ..ops.random_ops import random_normal


def _start(learning_rate: Any, global_step: Any, what: str):
    if global_step is None:
        raise ValueError("global_step is required for %s." % what)
    lr = convert_to_tensor(learning_rate, name="initial_learning_rate")   # TF's (Keras-based) schedules' name
    return lr, lr.dtype, math_ops.cast(global_step, lr.dtype)


def _p(step: Tensor, decay_steps: Any, dtype, staircase: bool) -> Tensor:
    p = step / math_ops.cast(decay_steps, dtype)
    return math_ops.floor(p) if staircase else p


def exponential_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False, name: Optional[str] = None) -> Tensor:
    """``learning_rate * decay_rate ** (global_step / decay_steps)`` (TF's ops in TF's order)."""
    if global_step is None:
        raise ValueError("global_step is required for exponential_decay.")
    with name_scope(name, "ExponentialDecay") as scope:
        lr, dtype, rate, p = _decay_start(learning_rate, global_step, decay_steps, decay_rate, staircase)
        return math_ops.multiply(lr, math_ops.pow(rate, p), name=scope)


def _decay_start(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any, staircase: bool):
    """The head TF's ExponentialDecay and InverseTimeDecay share: ``(lr, dtype, rate, p)``."""
    lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
    decay_steps = math_ops.cast(decay_steps, lr.dtype)
    rate = math_ops.cast(decay_rate, lr.dtype)
    p = math_ops.cast(global_step, lr.dtype) / decay_steps
    return lr, lr.dtype, rate, math_ops.floor(p) if staircase else p


def natural_exp_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False, name: Optional[str] = None) -> Tensor:
    """``learning_rate * exp(-decay_rate) ** (global_step / decay_steps)``: as TF, ``exp(-decay_rate)`` first,
    then an ExponentialDecay of that rate."""
    if global_step is None:
        raise ValueError("global_step is required for natural_exp_decay.")
    rate = math_ops.exp(math_ops.negative(decay_rate))
    return exponential_decay(learning_rate, global_step, decay_steps, rate, staircase=staircase, name=name)


def inverse_time_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                       staircase: bool = False, name: Optional[str] = None) -> Tensor:
    """``learning_rate / (1 + decay_rate * global_step / decay_steps)``."""
    if global_step is None:
        raise ValueError("global_step is required for inverse_time_decay.")
    with name_scope(name, "InverseTimeDecay") as scope:
        lr, dtype, rate, p = _decay_start(learning_rate, global_step, decay_steps, decay_rate, staircase)
        one = math_ops.cast(constant(1), dtype)
        return math_ops.divide(lr, math_ops.add(one, math_ops.multiply(rate, p)), name=scope)


def polynomial_decay(learning_rate: Any, global_step: Any, decay_steps: Any, end_learning_rate: Any = 0.0001,
                     power: Any = 1.0, cycle: bool = False, name: Optional[str] = None) -> Tensor:
    """``(lr - end) * (1 - step / decay_steps) ** power + end`` (see the module docstring for ``cycle``)."""
    if global_step is None:
        raise ValueError("global_step is required for polynomial_decay.")
    with name_scope(name, "PolynomialDecay") as scope:
        lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = lr.dtype
        end = math_ops.cast(end_learning_rate, dtype)
        power = math_ops.cast(power, dtype)
        step = math_ops.cast(global_step, dtype)
        ds = math_ops.cast(decay_steps, dtype)
        if cycle:
            multiplier = math_ops.where_v2(math_ops.equal(step, 0), 1.0, math_ops.ceil(step / decay_steps))
            ds = math_ops.multiply(ds, multiplier)
        else:
            step = math_ops.minimum(step, ds)
        p = math_ops.divide(step, ds)
        return math_ops.add(math_ops.multiply(lr - end, math_ops.pow(1 - p, power)), end, name=scope)


def cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any, alpha: float = 0.0,
                 name: Optional[str] = None) -> Tensor:
    """``lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, ds) / ds)) + alpha)`` (Loshchilov & Hutter)."""
    with name_scope(name, "CosineDecay") as scope:
        lr, dtype, step = _start(learning_rate, global_step, "cosine_decay")
        ds = math_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(step, ds)
        fraction = step / ds
        cosine = 0.5 * (1.0 + cos(constant(math.pi, dtype=dtype) * fraction))
        decayed = (1 - alpha) * cosine + alpha
        return math_ops.multiply(lr, decayed, name=scope)


def cosine_decay_restarts(learning_rate: Any, global_step: Any, first_decay_steps: Any, t_mul: float = 2.0,
                          m_mul: float = 1.0, alpha: float = 0.0, name: Optional[str] = None) -> Tensor:
    """Cosine decay with warm restarts (SGDR, Loshchilov & Hutter): period ``i`` lasts
    ``first_decay_steps * t_mul**i`` steps and starts from ``lr * m_mul**i``."""
    with name_scope(name, "SGDRDecay") as scope:
        lr, dtype, step = _start(learning_rate, global_step, "cosine_decay_restarts")
        first = math_ops.cast(first_decay_steps, dtype)
        alpha_t = math_ops.cast(alpha, dtype)
        t_mul_t = math_ops.cast(t_mul, dtype)
        m_mul_t = math_ops.cast(m_mul, dtype)
        completed = step / first

        def compute(geometric: bool):
            if geometric:
                i_restart = math_ops.floor(math_ops.log(1.0 - completed * (1.0 - t_mul_t)) /
                                           math_ops.log(t_mul_t))
                sum_r = (1.0 - t_mul_t ** i_restart) / (1.0 - t_mul_t)
                return i_restart, (completed - sum_r) / t_mul_t ** i_restart
            i_restart = math_ops.floor(completed)
            return i_restart, completed - i_restart

        i_restart, fraction = cond(math_ops.equal(t_mul_t, 1.0), lambda: compute(False), lambda: compute(True))
        m_fac = m_mul_t ** i_restart
        cosine = 0.5 * m_fac * (1.0 + cos(constant(math.pi, dtype=dtype) * fraction))
        decayed = (1 - alpha_t) * cosine + alpha_t
        return math_ops.multiply(lr, decayed, name=scope)


def _linear_cosine(learning_rate: Any, global_step: Any, decay_steps: Any, num_periods: Any, alpha: Any,
                   beta: Any, name: Optional[str], default: str, noise: Optional[tuple]) -> Tensor:
    with name_scope(name, default) as scope:
        lr, dtype, step = _start(learning_rate, global_step, default)
        ds = math_ops.cast(decay_steps, dtype)
        if noise is not None:
            initial_variance, variance_decay = (math_ops.cast(v, dtype) for v in noise)
        periods = math_ops.cast(num_periods, dtype)
        alpha_t = math_ops.cast(alpha, dtype)
        beta_t = math_ops.cast(beta, dtype)
        step = math_ops.minimum(step, ds)
        linear = (ds - step) / ds
        if noise is not None:
            std = math_ops.sqrt(initial_variance / math_ops.pow(1.0 + step, variance_decay))
            linear = linear + random_normal([], stddev=std, dtype=dtype)
        fraction = 2.0 * periods * (step / ds)
        cosine = 0.5 * (1.0 + cos(constant(math.pi, dtype=dtype) * fraction))
        return math_ops.multiply(lr, (alpha_t + linear) * cosine + beta_t, name=scope)


def linear_cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any, num_periods: float = 0.5,
                        alpha: float = 0.0, beta: float = 0.001, name: Optional[str] = None) -> Tensor:
    """``lr * ((alpha + linear) * cosine + beta)``: a linear decay times a cosine of ``num_periods`` periods
    over ``decay_steps`` (Bello et al., Neural Optimizer Search)."""
    return _linear_cosine(learning_rate, global_step, decay_steps, num_periods, alpha, beta, name,
                          "LinearCosineDecay", None)


def noisy_linear_cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any,
                              initial_variance: float = 1.0, variance_decay: float = 0.55,
                              num_periods: float = 0.5, alpha: float = 0.0, beta: float = 0.001,
                              name: Optional[str] = None) -> Tensor:
    """``linear_cosine_decay`` whose linear part gets Gaussian noise of variance
    ``initial_variance / (1 + step)**variance_decay`` (a fresh draw per run)."""
    return _linear_cosine(learning_rate, global_step, decay_steps, num_periods, alpha, beta, name,
                          "NoisyLinearCosineDecay", (initial_variance, variance_decay))


def piecewise_constant(x: Any, boundaries: Sequence, values: Sequence, name: Optional[str] = None) -> Tensor:
    """``values[0]`` for ``x <= boundaries[0]``, ``values[i]`` for ``boundaries[i-1] < x <= boundaries[i]``,
    ``values[-1]`` for ``x > boundaries[-1]``."""
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with name_scope(name, "PiecewiseConstant") as scope:
        x = convert_to_tensor(x)
        bounds = [math_ops.cast(convert_to_tensor(b), x.dtype) for b in boundaries]
        vals = [convert_to_tensor(v) for v in values]
        if any(v.dtype is not vals[0].dtype for v in vals):
            raise ValueError("Values must have elements all with the same dtype (%s)."
                             % ", ".join(v.dtype.name for v in vals))
        result = vals[0]
        for b, v in zip(bounds, vals[1:]):
            result = math_ops.where(math_ops.greater(x, b), v, result)
        return array_ops.identity(result, name=scope)
