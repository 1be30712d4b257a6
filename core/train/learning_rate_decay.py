"""Learning-rate schedules over the global step (TF1 ``tf.train.*_decay``), built as graph ops with TF's
formulas (the step and the rate are cast to the learning rate's dtype; p = step / decay_steps, floored when
``staircase``):

- exponential_decay: ``lr * rate**p``;  natural_exp_decay: ``lr * exp(-rate)**p``;
  inverse_time_decay: ``lr / (1 + rate * p)``
- polynomial_decay: ``(lr - end) * (1 - step / ds)**power + end`` with ``step = min(step, ds)``, or with
  ``cycle`` ``ds *= max(1, ceil(step / ds))``
- cosine_decay: ``lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, ds) / ds)) + alpha)``
- piecewise_constant: ``values[i]`` where ``boundaries[i-1] < x <= boundaries[i]``
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from ..graph import Tensor, name_scope
from ..ops import array_ops, math_ops
from ..registry import constant, convert_to_tensor
from ..ops.elementwise_ops import cos


def _start(learning_rate: Any, global_step: Any, what: str):
    if global_step is None:
        raise ValueError("global_step is required for %s." % what)
    lr = convert_to_tensor(learning_rate, name="learning_rate")
    return lr, lr.dtype, math_ops.cast(global_step, lr.dtype)


def _p(step: Tensor, decay_steps: Any, dtype, staircase: bool) -> Tensor:
    p = step / math_ops.cast(decay_steps, dtype)
    return math_ops.floor(p) if staircase else p


def exponential_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False, name: Optional[str] = None) -> Tensor:
    """``learning_rate * decay_rate ** (global_step / decay_steps)``."""
    with name_scope(name, "ExponentialDecay") as scope:
        lr, dtype, step = _start(learning_rate, global_step, "exponential_decay")
        rate = math_ops.cast(decay_rate, dtype)
        return math_ops.multiply(lr, math_ops.pow(rate, _p(step, decay_steps, dtype, staircase)), name=scope)


def natural_exp_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False, name: Optional[str] = None) -> Tensor:
    """``learning_rate * exp(-decay_rate) ** (global_step / decay_steps)``."""
    with name_scope(name, "NaturalExpDecay") as scope:
        lr, dtype, step = _start(learning_rate, global_step, "natural_exp_decay")
        rate = math_ops.exp(math_ops.negative(math_ops.cast(decay_rate, dtype)))
        return math_ops.multiply(lr, math_ops.pow(rate, _p(step, decay_steps, dtype, staircase)), name=scope)


def inverse_time_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                       staircase: bool = False, name: Optional[str] = None) -> Tensor:
    """``learning_rate / (1 + decay_rate * global_step / decay_steps)``."""
    with name_scope(name, "InverseTimeDecay") as scope:
        lr, dtype, step = _start(learning_rate, global_step, "inverse_time_decay")
        rate = math_ops.cast(decay_rate, dtype)
        denom = math_ops.add(1.0, math_ops.multiply(rate, _p(step, decay_steps, dtype, staircase)))
        return math_ops.divide(lr, denom, name=scope)


def polynomial_decay(learning_rate: Any, global_step: Any, decay_steps: Any, end_learning_rate: Any = 0.0001,
                     power: Any = 1.0, cycle: bool = False, name: Optional[str] = None) -> Tensor:
    """``(lr - end) * (1 - step / decay_steps) ** power + end`` (see the module docstring for ``cycle``)."""
    with name_scope(name, "PolynomialDecay") as scope:
        lr, dtype, step = _start(learning_rate, global_step, "polynomial_decay")
        end = math_ops.cast(end_learning_rate, dtype)
        power = math_ops.cast(power, dtype)
        ds = math_ops.cast(decay_steps, dtype)
        if cycle:
            multiplier = math_ops.where(math_ops.equal(step, 0), constant(1.0, dtype=dtype),
                                        math_ops.ceil(step / ds))
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
