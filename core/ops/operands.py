"""Operands converted the way TF converts them (a Python number takes the other operand's dtype; a converted operand
is named after its input), and the wrappers of TF's binary and unary ops built on that."""
from __future__ import annotations

from typing import Any

from ..framework.graph import Tensor, name_scope
from ..framework.registry import apply_op, convert_to_tensor


def _pair(x: Any, y: Any, names: tuple = ("x", "y")):
    """Convert two operands, giving a Python number the dtype of the other operand (TF's rule); a converted
    operand is named after its argument (``names``: the op's input names, ``("y", "x")`` for Atan2)."""
    nx, ny = names
    if isinstance(x, Tensor) or hasattr(x, "_to_tensor"):
        x = convert_to_tensor(x)
        y = convert_to_tensor(y, dtype=None if isinstance(y, Tensor) else x.dtype, name=ny)
    elif isinstance(y, Tensor) or hasattr(y, "_to_tensor"):
        y = convert_to_tensor(y)
        x = convert_to_tensor(x, dtype=y.dtype, name=nx)
    else:
        x = convert_to_tensor(x, name=nx)
        y = convert_to_tensor(y, dtype=x.dtype, name=ny)
    if x.dtype is not y.dtype:
        raise TypeError("Input '%s' has type %s that does not match type %s of argument '%s'."
                        % (ny, y.dtype.name, x.dtype.name, nx))
    return x, y


def _binary(op_type: str):
    def fn(x, y, name=None):
        with name_scope(name, op_type) as scope:      # a converted operand is named <op>/y, like TF
            x, y = _pair(x, y)
            return apply_op(op_type, [x, y], name=scope)
    fn.__name__ = op_type.lower()
    return fn


def _unary(op_type: str):
    def fn(x, name=None):
        with name_scope(name, op_type) as scope:      # a converted operand is named <op>/x, like TF
            return apply_op(op_type, [convert_to_tensor(x, name="x")], name=scope)
    fn.__name__ = op_type.lower()
    return fn
