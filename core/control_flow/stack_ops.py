"""TF's stacks (``StackV2``, ``StackPushV2``, ``StackPopV2``): a while loop's gradient saves each iteration's
forward values on them and pops them in reverse in the backprop loop. A stack lives for one ``Session.run``."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..framework import dtypes
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, constant, convert_to_tensor, register


class Stack(list):
    """A stack's storage (the value of its resource handle)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        super().__init__()
        self.name = name


def _pop(handle: Stack) -> Any:
    if not handle:
        raise ValueError("Stack %s is empty" % handle.name)
    return handle.pop()


def _push(handle: Stack, elem: Any) -> Any:
    handle.append(elem)
    return elem


register("StackV2", bind=lambda op, session: lambda max_size: Stack(op.name), stateful=True,
         dtype=dtypes.resource, shape=lambda op: TensorShape([2]))
register("StackPushV2", _push, None, lambda op: op.inputs[1].shape, stateful=True,
         dtype=lambda op: op.inputs[1].dtype)
register("StackPopV2", _pop, None, stateful=True, dtype=lambda op: op.attrs["elem_type"])


def stack_v2(elem_type: Any, max_size: int = -1, stack_name: str = "", name: Optional[str] = None):
    size = constant(np.int32(max_size))
    return apply_op("StackV2", [size], dict(elem_type=dtypes.as_dtype(elem_type), stack_name=stack_name),
                    name=name or "StackV2")


def stack_push_v2(handle: Any, elem: Any, swap_memory: bool = False, name: Optional[str] = None):
    elem = convert_to_tensor(elem)
    return apply_op("StackPushV2", [handle, elem], dict(T=elem.dtype, swap_memory=swap_memory),
                    name=name or "StackPushV2")


def stack_pop_v2(handle: Any, elem_type: Any, name: Optional[str] = None):
    return apply_op("StackPopV2", [handle], dict(elem_type=dtypes.as_dtype(elem_type)), name=name or "StackPopV2")
