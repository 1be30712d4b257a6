"""Gradients of a cond's Switch and Merge, as TF1 builds them (``control_flow_grad.py``):

- ``Merge`` (of a cond): the output's gradient goes back through ``Switch(grad, pred)`` named ``cond_grad``,
  so each branch gets it only when that branch ran.
- ``Switch`` (an outside value entering a branch): ``Merge([grad_false, grad_true])`` named ``cond_grad``; the
  untaken side's gradient is zeros made under a Switch of the value (``zeros_like_outside_loop``), so they too
  exist only when that side ran.
"""
from __future__ import annotations

from typing import Any

from ..framework.registry import REGISTRY
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

REGISTRY["Switch"].grad = _switch_grad
REGISTRY["RefSwitch"].grad = _switch_grad
REGISTRY["Merge"].grad = _merge_grad
