"""TF1's control-flow primitives, as TF writes them into a GraphDef: ``Switch``, ``Merge``, ``Enter``, ``Exit``,
``NextIteration``, ``LoopCond``, ``ControlTrigger``. This module builds them; each is registered (forward, gradient,
shape) beside its gradient: ``Switch``, ``RefSwitch`` and ``Merge`` in ``cond_grad.py``, the loop ops in
``while_grad.py``.

Their forwards are what they compute on live values; deadness (the branch a ``Switch`` did not take, and
everything downstream of it until a ``Merge``) and loop frames are the Session's business
(``core/runtime/frames.py``):

- ``Switch(data, pred) -> (output_false, output_true)``: ``data`` on the taken side, a dead value on the other.
- ``Merge(inputs) -> (output, value_index)``: the first live input and its position.
- ``Enter(data)`` makes a value known inside a loop frame (``is_constant``: the same value every iteration);
  ``Exit`` hands a loop variable's final value out; ``NextIteration`` carries a value to the next iteration's
  ``Merge``; ``LoopCond`` is the frame's predicate.
"""
from __future__ import annotations

import copy
from typing import Any, List, Optional

from ..framework.graph import Tensor
from ..framework.registry import OpDef, apply_op, create_op, get_opdef
from ..framework.tensor_shape import as_shape


CONTROL_FLOW_TYPES = frozenset({"Switch", "RefSwitch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond",
                                "ControlTrigger"})


# ops whose output 0 is a reference (TF's ref dtypes): a variable and what forwards it unread
_REF_PRODUCERS = frozenset({"VariableV2", "RefSwitch", "RefIdentity", "RefEnter", "RefMerge"})


def switch(data: Any, pred: Any, name: Optional[str] = None) -> List[Any]:
    """``[output_false, output_true]``: ``data`` forwarded to the side ``pred`` selects; a variable's reference
    goes through a ``RefSwitch``, as TF's ``_SwitchRefOrTensor``. A RefSwitch of the variable itself takes it as
    a ref input (its variable does not run: the Session reads it only on a side that is read)."""
    is_ref = isinstance(data, Tensor) and data.op.type in _REF_PRODUCERS and data.value_index == 0
    op = create_op("RefSwitch" if is_ref else "Switch", [data, pred], name=name or "Switch")
    if is_ref and data.op.type == "VariableV2":
        op.opdef = _ref_switch_of_variable()
    return list(op.outputs)


_VARIANTS: dict = {}


def _ref_switch_of_variable() -> OpDef:
    """RefSwitch's OpDef with its input 0 a ref input (the same op type, gradient and shapes)."""
    if "RefSwitch" not in _VARIANTS:
        variant = copy.copy(get_opdef("RefSwitch"))
        variant.ref_inputs = (0,)
        _VARIANTS["RefSwitch"] = variant
    return _VARIANTS["RefSwitch"]


def merge(inputs: List[Any], name: Optional[str] = None) -> List[Any]:
    """``[output, value_index]``: the first of ``inputs`` that is live."""
    op = create_op("Merge", list(inputs), dict(N=len(inputs)), name=name or "Merge")
    return list(op.outputs)


def enter(data: Any, frame_name: str, is_constant: bool = False, parallel_iterations: int = 10,
          use_input_shape: bool = True, name: Optional[str] = None):
    op = create_op("Enter", [data], dict(frame_name=frame_name, is_constant=bool(is_constant),
                                         parallel_iterations=int(parallel_iterations),
                                         _use_input_shape=use_input_shape), name=name or "Enter")
    return op.outputs[0]


def exit_(data: Any, name: Optional[str] = None):
    return apply_op("Exit", [data], name=name or "Exit")


def next_iteration(data: Any, name: Optional[str] = None):
    return apply_op("NextIteration", [data], name=name or "NextIteration")


def loop_cond(pred: Any, name: Optional[str] = None):
    return apply_op("LoopCond", [pred], name=name or "LoopCond")


def control_trigger(name: Optional[str] = None):
    return create_op("ControlTrigger", [], name=name or "ControlTrigger")


def set_shape_invariant(enter_tensor: Any, shape: Any) -> None:
    """Relax an Enter's (and so the loop variable's) static shape to ``shape``."""
    enter_tensor._shape = as_shape(shape)
