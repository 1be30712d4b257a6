"""``Switch``, ``RefSwitch`` and ``Merge``: registered here with their gradients, as TF1 builds them
(``control_flow_grad.py``):

- ``Merge`` (of a cond): the output's gradient goes back through ``Switch(grad, pred)`` named ``cond_grad``,
  so each branch gets it only when that branch ran.
- ``Switch`` (an outside value entering a branch): ``Merge([grad_false, grad_true])`` named ``cond_grad``; the
  untaken side's gradient is zeros made under a Switch of the value (``zeros_like_outside_loop``), so they too
  exist only when that side ran.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..framework import dtypes
from ..framework.tensor_shape import TensorShape
from ..framework.registry import register
from .contexts import CondContext, WhileContext, output_context
from .flow_ops import merge, switch
from ..ops import math_ops
from .while_grad import cond_pred_in_loop, loop_merge_grad, loop_switch_grad

def _switch_grad(op: Any, *grads: Any) -> list:
    ctx = op._control_flow_context
    if isinstance(ctx, WhileContext):
        return loop_switch_grad(op, *grads)
    if isinstance(ctx, CondContext):
        if grads[1 - ctx.branch] is None:
            return [None, None]
        return [merge(list(grads), name="cond_grad")[0], None]
    false_grad = switch(grads[0], op.inputs[1])[0]
    true_grad = switch(grads[1], op.inputs[1])[1]
    return [merge([false_grad, true_grad])[0], None]

def _merge_grad(op: Any, grad: Any, _index_grad: Any = None) -> list:
    ctx = output_context(op.inputs[0].op)
    if isinstance(ctx, WhileContext):
        return loop_merge_grad(op, grad)
    if isinstance(ctx, CondContext):
        pred = cond_pred_in_loop(ctx.pred)
        return switch(grad, pred, name="cond_grad")
    return [switch(grad, math_ops.equal(op.outputs[1], i))[1] for i in range(len(op.inputs))]


def _merged_shape(op) -> list:
    """The most specific shape all of Merge's inputs agree on, and a scalar for ``value_index``."""
    shape = op.inputs[0].shape
    for t in op.inputs[1:]:
        other = t.shape
        if shape.dims is None or other.dims is None or len(shape.dims) != len(other.dims):
            shape = TensorShape(None)
            break
        shape = TensorShape([a if a == b else None for a, b in zip(shape.dims, other.dims)])
    return [shape, TensorShape([])]


def _merge_forward(*inputs):
    return inputs[0], np.int32(0)


register("Switch", lambda data, pred: (data, data), _switch_grad, lambda op: [op.inputs[0].shape] * 2,
         num_outputs=2, aliases=True)
register("RefSwitch", lambda data, pred: (data, data), _switch_grad, lambda op: [op.inputs[0].shape] * 2,
         num_outputs=2, aliases=True)
register("Merge", _merge_forward, _merge_grad, _merged_shape, num_outputs=2,
         dtype=lambda op: [op.inputs[0].dtype, dtypes.int32], aliases=True)
