"""Execution plans: a Session's compiled step (see ``core/runtime/session.py``).

``Plan`` is what a step runs (``fn(feed values)``, the feed checks, the generated lines' ops for error messages
and traces); ``schedule`` orders the needed ops (control dependencies respected; among ready ops, pure ones before
ops that mutate variables; ``waits_for``: the inputs an op waits for); ``codegen.generate`` turns the order into
the plan's function; ``fill_step_stats`` turns a traced step into RunMetadata's StepStats.
"""
from __future__ import annotations

import heapq
from typing import Any, Optional

import numpy as np

from ..framework.graph import Tensor

_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
# the ops a reference input is the variable itself at (a ref input does not make its variable run)
_VARIABLE_TYPES = frozenset({"VariableV2", "VarHandleOp"})


def waits_for(op: Any, i: int, t: Tensor) -> bool:
    """Whether ``op`` waits for its input ``i`` (``t``): every input but a variable taken by reference. A
    reference forwarded by a cond's ``RefSwitch`` is waited for: ``op`` runs only on the side the Switch took."""
    return i not in op.opdef.ref_inputs or t.op.type not in _VARIABLE_TYPES


def referenced_variable(t: Tensor) -> Any:
    """The variable op a reference input ``t`` stands for (through the ``RefSwitch``es forwarding it)."""
    op = t.op
    while op.type not in _VARIABLE_TYPES and op.inputs:
        op = op.inputs[0].op
    return op


class IndexedSlicesValue(tuple):
    """The value of a fetched IndexedSlices: (values, indices, dense_shape)."""

    __slots__ = ()

    def __new__(cls, values, indices, dense_shape):
        return tuple.__new__(cls, (values, indices, dense_shape))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])
    dense_shape = property(lambda self: self[2])


class Plan:
    __slots__ = ("fn", "feed_checks", "single", "fetch_struct", "line_ops", "records", "trace_ops", "n_out")


def feed_check(tensor: Tensor):
    """A converter for one fed tensor: dtype conversion and a static shape check naming the tensor."""
    npd = tensor.dtype.as_numpy_dtype
    dims = tensor.shape.dims
    known = None if dims is None else tuple((i, d) for i, d in enumerate(dims) if d is not None)
    ndim = None if dims is None else len(dims)

    def check(value):
        try:
            arr = np.asarray(value, dtype=npd)
        except (TypeError, ValueError) as e:
            raise TypeError("Cannot feed value %r of type %s for Tensor '%s' of dtype %s: %s"
                            % (_short(value), type(value).__name__, tensor.name, tensor.dtype.name, e)) from None
        if ndim is not None:
            shape = arr.shape
            if len(shape) != ndim or any(shape[i] != d for i, d in known):
                raise ValueError("Cannot feed value of shape %r for Tensor '%s', which has shape '%s'"
                                 % (shape, tensor.name, tensor.shape))
        return arr
    return check


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


def schedule(needed, owner: Optional[dict] = None) -> list:
    """Topological order of ``needed`` (data and control edges); pure ops before mutating ones when ready.
    ``owner`` maps the ops inside a loop region to the region (frames.py)."""
    needed = set(needed)
    owner = owner or {}
    indegree, consumers = {}, {}
    for op in needed:
        deps = {owner.get(t.op, t.op) for i, t in enumerate(op.inputs) if waits_for(op, i, t)}
        deps.update(owner.get(c, c) for c in op.control_inputs)
        deps &= needed
        deps.discard(op)
        indegree[op] = len(deps)
        for d in deps:
            consumers.setdefault(d, []).append(op)
    heap = [(op.opdef.mutates, op._id, op) for op in needed if indegree[op] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        _, _, op = heapq.heappop(heap)
        order.append(op)
        for c in consumers.get(op, ()):
            indegree[c] -= 1
            if indegree[c] == 0:
                heapq.heappush(heap, (c.opdef.mutates, c._id, c))
    if len(order) != len(needed):
        raise ValueError("The graph has a cycle through control dependencies")
    return order


def fill_step_stats(run_metadata: Any, plan: Plan) -> None:
    """One NodeExecStats per executed node (times in microseconds, output shapes and bytes)."""
    from tfevents.proto import step_stats_pb2  # lazy: loaded on the first traced step, not with core
    step_stats = step_stats_pb2.StepStats()
    dev = step_stats.dev_stats.add(device=_DEVICE)
    for index, t0, t1, outs in plan.records:
        op = plan.trace_ops[index]
        ns = dev.node_stats.add(node_name=op.name, all_start_micros=int(t0 * 1e6),
                                op_start_rel_micros=0, op_end_rel_micros=max(int((t1 - t0) * 1e6), 0),
                                all_end_rel_micros=max(int((t1 - t0) * 1e6), 0), thread_id=0,
                                timeline_label="%s = %s(%s)" % (op.name, op.type,
                                                                ", ".join(t.op.name for t in op.inputs)))
        ns.all_start_nanos = int(t0 * 1e9)
        ns.all_end_rel_nanos = int((t1 - t0) * 1e9)
        total = 0
        for slot, (tensor, value) in enumerate(zip(op.outputs, outs)):
            out = ns.output.add(slot=slot)
            desc = out.tensor_description
            desc.dtype = tensor.dtype.as_datatype_enum
            if isinstance(value, np.ndarray):
                for d in value.shape:
                    desc.shape.dim.add(size=d)
                nbytes = int(value.nbytes) if value.dtype != object else 0
                total += nbytes
                desc.allocation_description.requested_bytes = nbytes
                desc.allocation_description.allocated_bytes = nbytes
                desc.allocation_description.allocator_name = "cpu"
        mem = ns.memory.add(allocator_name="cpu", total_bytes=total, peak_bytes=total, live_bytes=total)
        del mem
    run_metadata.step_stats.CopyFrom(step_stats)


