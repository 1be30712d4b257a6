"""Symbolic reverse-mode differentiation: ``gradients(ys, xs)`` adds gradient ops to the graph.

The backward pass visits the ops between ``xs`` and ``ys`` in reverse topological order (an op is processed
once every consumer has contributed its gradient), sums the contributions per tensor (``AddN``; sparse
``IndexedSlices`` are concatenated when all contributions are sparse) and calls the op's registered gradient
inside the ``gradients/<op name>_grad`` name scope, as TF's ``gradients_util``: an output nothing downstream
depends on gets ``gradients/zeros_like``, and with ``gate_gradients`` an op's input gradients (when more than
one) come out of ``<op>_grad/tuple/...``.
"""
from __future__ import annotations

from collections import deque

import numpy as np
from typing import Any, Optional, Sequence

from .framework.graph import Operation, Tensor, get_default_graph, name_scope
from .framework.registry import constant, convert_to_tensor, IndexedSlices
from .ops import array_ops, math_ops
from .control_flow.grouping import tuple_
from .control_flow.while_grad import LoopGradients


class AggregationMethod:
    """How contributions to one gradient are summed (all three are AddN here)."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def _as_list(x: Any) -> list:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _as_x(x: Any) -> Tensor:
    ref = getattr(x, "_ref", None)
    return ref() if ref is not None else convert_to_tensor(x)


def _aggregate(grads: list, aggregation_method: Optional[int]) -> Any:
    """Sum of the gradient contributions to one tensor (None if there are none)."""
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    if all(isinstance(g, IndexedSlices) for g in grads):
        return IndexedSlices(array_ops.concat([g.values for g in grads], 0),
                             array_ops.concat([g.indices for g in grads], 0), grads[0].dense_shape)
    return math_ops.add_n([convert_to_tensor(g) for g in grads])


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients",
              colocate_gradients_with_ops: bool = False, gate_gradients: bool = False,
              aggregation_method: Optional[int] = None, stop_gradients: Any = None) -> list:
    """Symbolic ``sum(ys)``-gradients with respect to each of ``xs`` (None where ``x`` does not reach ``ys``).

    ``grad_ys`` default to ones shaped like each ``y``; ``stop_gradients`` are treated as constants.
    """
    ys = [convert_to_tensor(y) for y in _as_list(ys)]
    xs = [_as_x(x) for x in _as_list(xs)]
    grad_ys = _as_list(grad_ys) or [None] * len(ys)
    if len(grad_ys) != len(ys):
        raise ValueError("Passed %d grad_ys for %d ys" % (len(grad_ys), len(ys)))
    stop_ops = {convert_to_tensor(t).op for t in _as_list(stop_gradients)}
    graph = ys[0].graph if ys else get_default_graph()

    with graph.as_default(), name_scope(name):
        between, between_list = _ops_between(graph, [x.op for x in xs], [y.op for y in ys])
        loops = LoopGradients.for_path(between, between_list)   # adds the Exits and Enters of a loop on the path
        pending = {}
        for op in between:
            for t in op.inputs:
                if t.op in between:
                    pending[t.op] = pending.get(t.op, 0) + 1
        grads = _initial_grads(ys, grad_ys)
        ready = deque(op for op in _unique(y.op for y in ys) if pending.get(op, 0) == 0 and op in between)
        for y in loops.process_unused_exits(pending, set(ready)):
            if y.dtype.is_floating:
                grads[y] = [loops.zeros_like_for_exit(y)]
            ready.append(y.op)
        while ready:
            op = ready.popleft()
            in_grads = _backprop(op, grads, loops, between, stop_ops, aggregation_method, gate_gradients)
            for i, t in enumerate(op.inputs):
                g = in_grads[i] if in_grads is not None else None
                if g is not None and t.dtype.is_floating and t.op in between:
                    grads.setdefault(t, []).append(g)
            loops.exit(op, before=False)
            _release_inputs(op, pending, between, loops, grads, ready)
        loops.post_processing()
        return [_aggregate(grads.get(x, []), aggregation_method) for x in xs]


def _initial_grads(ys: list, grad_ys: list) -> dict:
    """``{y: [its gradient]}``: ``grad_ys``, or ones shaped like ``y`` (TF's names: ``Shape``, a Const when
    static, and ``grad_ys_<i>``)."""
    grads: dict = {}
    for i, (y, gy) in enumerate(zip(ys, grad_ys)):
        if gy is None:
            shape = (constant(np.array(y.shape.as_list(), np.int32), name="Shape")
                     if y.shape.is_fully_defined() else array_ops.shape(y))
            with name_scope("grad_ys_%d" % i) as scope:
                gy = array_ops.fill(shape, constant(1, dtype=y.dtype), name=scope)
        grads.setdefault(y, []).append(convert_to_tensor(gy, dtype=y.dtype) if not isinstance(
            gy, (Tensor, IndexedSlices)) else gy)
    return grads


def _backprop(op: Operation, grads: dict, loops: Any, between: set, stop_ops: set, aggregation_method,
              gate_gradients: bool) -> Any:
    """The gradients of ``op``'s inputs from its outputs' (summed first), by its registered gradient function in
    the ``<op name>_grad`` name scope (inside its backprop loop, if any); None when it has none to give. With
    ``gate_gradients``, an op's input gradients (when more than one) come out of a ``tuple``: none is available
    before all are computed (TF's ``<op>_grad/tuple/...``)."""
    loops.enter(op, before=True)
    out_grads = [_aggregate(grads.get(t, []), aggregation_method) for t in op.outputs]
    for t, g in zip(op.outputs, out_grads):
        if g is not None:
            grads[t] = [g]
    loops.exit(op, before=True)
    loops.enter(op, before=False)
    if (op in stop_ops or op.opdef.grad is None or all(g is None for g in out_grads)
            or not (op.type in ("Exit", "Enter") or any(t.op in between for t in op.inputs))):
        return None
    # an output nothing downstream depends on has a zero gradient (TF's ``zeros_like``, in the gradients scope)
    out_grads = [g if g is not None or not t.dtype.is_floating else loops.zeros_like(op, i)
                 for i, (t, g) in enumerate(zip(op.outputs, out_grads))]
    with name_scope(op.name + "_grad"):
        in_grads = op.opdef.grad(op, *out_grads)
        if isinstance(in_grads, (Tensor, IndexedSlices)):
            in_grads = [in_grads]
        if len(in_grads) != len(op.inputs):
            raise ValueError("Num gradients %d generated for op %s do not match num inputs %d"
                             % (len(in_grads), op.name, len(op.inputs)))
        if gate_gradients and sum(g is not None for g in in_grads) > 1:
            in_grads = tuple_(in_grads)
    for t, g in zip(op.inputs, in_grads):
        if isinstance(g, Tensor):
            g.set_shape(t.shape)
    return in_grads


def _release_inputs(op: Operation, pending: dict, between: set, loops: Any, grads: dict, ready: deque) -> None:
    """One consumer fewer for each input's op on the path: an op is ready once all its consumers are in (a loop
    Switch as soon as one is; an Exit waits for its loop's other Exits)."""
    for t in op.inputs:
        if t.op not in between:
            continue
        pending[t.op] -= 1
        if not (pending[t.op] == 0 or loops.ready_early(t.op, pending[t.op])):
            continue
        if loops.waits_for_other_exits(t.op):
            _defer_exit(loops, t.op, grads, ready)
        else:
            ready.append(t.op)


def _defer_exit(loops, exit_op, grads: dict, ready: deque) -> None:
    """An Exit whose gradients are all in waits for its loop's other Exits; then those with a gradient go, and
    the others with zeros (or all without, when none has one)."""
    state = loops.grad_state_of(exit_op, before=False)
    y = exit_op.outputs[0]
    state.deferred_exits.append(y)
    state.pending_exits_count -= 1
    if state.pending_exits_count != 0:
        return
    with_grads = False
    for d in state.deferred_exits:
        if any(g is not None for g in grads.get(d, [])):
            with_grads = True
            ready.append(d.op)
        else:
            state.unused_exits.append(d)
    for u in state.unused_exits:
        if with_grads and u.dtype.is_floating:
            grads[u] = [loops.zeros_like_for_exit(u)]
        ready.append(u.op)


def _unique(items) -> list:
    out, seen = [], set()
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


_TRAINABLE = frozenset({"float16", "float32", "float64", "complex64", "complex128", "resource", "variant"})


def _ops_between(graph, from_ops: Sequence[Operation], to_ops: Sequence[Operation]):
    """The ops on a path from ``from_ops`` to ``to_ops`` (both included) through tensors that can carry a
    gradient (float, resource), as ``(set, list)``: the list in TF's order, breadth first back from ``to_ops``."""
    consumers: dict = {}
    for op in graph._ops:
        for t in op.inputs:
            if t.dtype.name in _TRAINABLE:
                consumers.setdefault(t.op, []).append(op)
    reached, queue = set(), deque(from_ops)
    while queue:
        op = queue.popleft()
        if op in reached:
            continue
        reached.add(op)
        for t in op.outputs:
            if t.dtype.name in _TRAINABLE:
                queue.extend(c for c in consumers.get(op, ()) if t in c.inputs)
    between, order, queue = set(), [], deque(to_ops)
    while queue:
        op = queue.popleft()
        if op in reached and op not in between:
            between.add(op)
            order.append(op)
            queue.extend(t.op for t in op.inputs)
    return between, order


def hessians(ys: Any, xs: Any, name: str = "hessians", **kwargs) -> list:
    """Second derivatives of ``sum(ys)`` for each x (full Hessian of a flattened x, built row by row)."""
    out = []
    for x in _as_list(xs):
        g = gradients(ys, x, name=name)[0]
        flat = array_ops.reshape(g, [-1])
        n = flat.shape.dims[0]
        rows = [gradients(flat[i], x)[0] for i in range(n)]
        out.append(array_ops.reshape(array_ops.stack(rows), x.shape.as_list() * 2))
    return out
