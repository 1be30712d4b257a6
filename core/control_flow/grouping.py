"""Grouping and ordering: ``group``, ``no_op``, ``tuple``, ``with_dependencies``, with TF's graphs and names
(``group_deps``, ``tuple/group_deps``, ``tuple/control_dependency[_N]``)."""
from __future__ import annotations

from typing import Any, Optional

from ..framework.graph import Operation, _as_operation, control_dependencies, name_scope
from ..framework.registry import IndexedSlices, convert_to_tensor
from ..ops import array_ops


def no_op(name: Optional[str] = None) -> Operation:
    return array_ops.no_op(name=name)


def group(*inputs: Any, name: Optional[str] = None) -> Operation:
    """A NoOp that runs after all ``inputs`` (TF's ``tf.group``: named ``group_deps`` by default)."""
    ops = []
    for x in inputs:
        if isinstance(x, (list, tuple)):
            ops.extend(_as_operation(i) for i in x)
        elif x is not None:
            ops.append(_as_operation(x))
    with name_scope(name, "group_deps") as scope:
        with control_dependencies(ops):
            return no_op(name=scope)


def tuple_(tensors, name: Optional[str] = None, control_inputs=None):
    """Tensors that are available only after all of ``tensors`` are computed (TF's ``tf.tuple``): a
    ``tuple/group_deps`` NoOp after the ops of ``tensors`` and ``control_inputs`` (ordered by creation), and one
    ``tuple/control_dependency[_N]`` Identity per tensor behind it; None stays None."""
    with name_scope(name, "tuple"):
        gating = [t if isinstance(t, Operation) else t.op for t in tensors if t is not None]
        gating += [_as_operation(c) for c in control_inputs or []]
        gating = sorted(set(gating), key=lambda op: op._id)
        if not gating:
            raise ValueError("'tensors' must have at least one Tensor. Received: %s." % (tensors,))
        gate = group(*gating)
        out = []
        for t in tensors:
            if t is None:
                out.append(None)
            elif isinstance(t, Operation):
                with control_dependencies([gate]):
                    out.append(group(t))
            else:
                out.append(with_dependencies([gate], t))
        return out


def with_dependencies(dependencies, output_tensor, name: Optional[str] = None):
    """``output_tensor`` through an Identity (``control_dependency``) that runs after ``dependencies``; an
    ``IndexedSlices`` keeps its indices, its values go through the Identity."""
    with name_scope(name, "control_dependency") as scope:
        with control_dependencies(dependencies):
            if isinstance(output_tensor, IndexedSlices):
                return IndexedSlices(array_ops.identity(output_tensor.values, name=scope), output_tensor.indices,
                                     output_tensor.dense_shape)
            return array_ops.identity(convert_to_tensor(output_tensor), name=scope)
