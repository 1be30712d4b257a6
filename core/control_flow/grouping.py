"""Grouping and ordering: ``group``, ``no_op``, ``tuple``, ``with_dependencies``."""
from __future__ import annotations

from typing import Any, Optional

from ..framework.graph import Operation, _as_operation, control_dependencies, name_scope
from ..ops import array_ops


def no_op(name: Optional[str] = None) -> Operation:
    return array_ops.no_op(name=name)


def group(*inputs: Any, name: Optional[str] = None) -> Operation:
    """A NoOp that runs after all ``inputs`` (TF's ``tf.group``)."""
    ops = []
    for x in inputs:
        if isinstance(x, (list, tuple)):
            ops.extend(_as_operation(i) for i in x)
        elif x is not None:
            ops.append(_as_operation(x))
    with control_dependencies(ops):
        return no_op(name=name or "group_deps")


def tuple_(tensors, name: Optional[str] = None, control_inputs=None):
    """Tensors that are available only after all of ``tensors`` are computed."""
    with name_scope(name, "tuple") as scope:
        gate = group(*[t for t in tensors if t is not None] + list(control_inputs or []), name="control_dependency")
        out = []
        for t in tensors:
            if t is None:
                out.append(None)
                continue
            with control_dependencies([gate]):
                out.append(array_ops.identity(t))
        return out


def with_dependencies(dependencies, output_tensor, name: Optional[str] = None):
    with name_scope(name, "control_dependency"):
        with control_dependencies(dependencies):
            return array_ops.identity(output_tensor)
