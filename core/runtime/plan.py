"""Execution plans: a Session's compiled step (see ``core/runtime/session.py``).

``schedule`` orders the needed ops (control dependencies respected; among ready ops, pure ones before ops that
mutate variables); ``generate`` turns the order into one straight-line Python function ``plan(feeds)``: constants
folded, each op's callable bound, an in-place variant where input 0 is a temporary nobody else reads, a local per
tensor deleted after its last use, dead-value checks downstream of a Switch and one unit per loop frame
(``core/runtime/frames.py``). ``TFEVENTS_DUMP_PLANS=1`` prints every generated plan, each line with the op it runs.
"""
from __future__ import annotations

import functools
import heapq
import inspect
import os
import time
from typing import Any, Optional

import numpy as np

from ..framework import errors
from . import frames
from ..framework.graph import Operation, Tensor
from ..framework.registry import constant_value
from .kernels import MATMULS

_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


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
        deps = {owner.get(t.op, t.op) for i, t in enumerate(op.inputs) if i not in op.opdef.ref_inputs}
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


def _bound_callable(op: Operation, session: Any):
    opdef = op.opdef
    if opdef.bind is not None:
        return opdef.bind(op, session)
    kwargs = {k: v for k, v in op.attrs.items() if k[:1].islower() and _accepts(opdef.forward, k)}
    if not kwargs:
        return opdef.forward
    return functools.partial(opdef.forward, **kwargs)


def _fetched(v: Any) -> Any:
    """A fetched value as TF returns it: 0-d arrays become numpy scalars, views become copies."""
    if type(v) is np.ndarray:
        if v.ndim == 0:
            return v[()]
        if v.base is not None:
            return v.copy()
    return v


def _accepts(fn, name: str) -> bool:
    """Whether ``fn`` takes keyword ``name`` (forwards need not declare attrs they ignore)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def generate(session: Any, order: list, fed: list, fetch_tensors: list, parts: list, trace: bool,
              single: bool, owner: Optional[dict] = None, raw_only: bool = False,
              filename: str = "<tfevents plan>", owned=frozenset()) -> Plan:
    plan = Plan()
    names: dict = {}           # Tensor -> expression (local variable or global constant)
    ns: dict = {"_copy": np.array, "_D": frames.DEAD, "_D2": (frames.DEAD, frames.DEAD),
                "_switch": frames.switch, "_merge": frames.merge}
    owner = owner or {}
    # ops downstream of a Switch may see dead values (frames.py): they check their inputs before running
    tainted: dict = {}         # unit -> its index k (its flag d<k> is true when it did not run)
    for k, op in enumerate(order):
        refs = op.opdef.ref_inputs
        if (op.type in frames.SWITCH_TYPES
                or any(owner.get(t.op, t.op) in tainted for i, t in enumerate(op.inputs) if i not in refs)
                or any(owner.get(c, c) in tainted for c in op.control_inputs)):
            tainted[op] = k
    lines = ["def plan(feeds):"]
    line_ops: dict = {}
    fetched = set(fetch_tensors)
    fed_set = set(fed)
    for i, t in enumerate(fed):
        names[t] = "v_feed%d" % i
        lines.append("    v_feed%d = feeds[%d]" % (i, i))
    readers: dict = {}                   # tensor -> number of plan ops reading it
    for op in order:
        for t in set(op.inputs):
            readers[t] = readers.get(t, 0) + 1
    # an owned accumulator plus a MatMul read only there: one gemm adding into the accumulator's buffer
    fused = {} if trace else _gemm_accumulations(order, readers, fetched, owned, tainted)
    skipped = {m: a for a, m in fused.items()}
    last_use: dict = {}
    for op in order:
        for i, t in enumerate(op.inputs):
            if i not in op.opdef.ref_inputs:
                last_use[t] = skipped.get(op, op)      # a fused MatMul's inputs are read by its Add
        if op in fused:
            for t in fused[op].inputs:
                last_use[t] = op
    for op in order:                      # outputs nobody reads die right after their op
        for t in op.outputs:
            last_use.setdefault(t, op)
    dying: dict = {}
    for t, op in last_use.items():
        dying.setdefault(op, []).append(t)
    trace_ops = []
    if trace:
        ns["_now"] = time.time
        ns["_plan"] = plan
    for k, op in enumerate(order):
        opdef = op.opdef
        if op in skipped:                 # computed by its accumulating Add
            continue
        if op in fused:
            matmul = fused[op]
            out = "v%d_0" % k
            names[op.outputs[0]] = out
            ns["_gemm_acc"] = gemm_accumulate
            lines.append("    %s = _gemm_acc(%s, %s, %s, %s, %s)" % (
                out, names[op.inputs[0]], names[matmul.inputs[0]], names[matmul.inputs[1]],
                bool(matmul.attrs["transpose_a"]), bool(matmul.attrs["transpose_b"])))
            line_ops[len(lines)] = op
            dead = [names[t] for t in dying.get(op, ()) if names.get(t, "").startswith("v") and t not in fetched]
            if dead:
                lines.append("    del %s" % ", ".join(dead))
            continue
        # constant folding: Const nodes, and pure ops whose inputs are all constants
        if op.type == "Const" and op not in tainted:
            name = "c%d" % k
            ns[name] = op.attrs["value"]
            names.setdefault(op.outputs[0], name)
            continue
        folded = _fold(op, names, ns, fed_set) if op not in tainted else None
        if folded is not None:
            for t, value in zip(op.outputs, folded):
                name = "c%d_%d" % (k, t.value_index)
                ns[name] = value
                names[t] = name
            continue
        args = []
        for i, t in enumerate(op.inputs):
            if i in opdef.ref_inputs:
                name = "s%d_%d" % (k, i)
                ns[name] = session.variable_slot(t.op)
                args.append(name)
            else:
                args.append(names[t])
        fn_name = "f%d" % k
        ns[fn_name] = _bound_callable(op, session)
        if opdef.inplace is not None and op.inputs and _reusable(op.inputs[0], op, names, fetched, readers, owned):
            ns[fn_name] = opdef.inplace
        outs = []
        for j, t in enumerate(op.outputs):
            if t in fed_set:
                outs.append("_")
            else:
                var = "v%d_%d" % (k, j)
                names[t] = var
                outs.append(var)
        call = "%s(%s)" % (fn_name, ", ".join(args))
        if trace:
            lines.append("    _t0 = _now()")
            trace_ops.append(op)
        if op in tainted:
            _dead_aware_lines(lines, op, k, call, args, outs, tainted, owner, names, ns)
        elif not outs:
            lines.append("    " + call)
        elif len(outs) == 1:
            lines.append("    %s = %s" % (outs[0], call))
        else:
            lines.append("    %s = %s" % (", ".join(outs), call))
        line_ops[len(lines)] = op
        if trace:
            lines.append("    _plan.records.append((%d, _t0, _now(), (%s)))" % (
                len(trace_ops) - 1, ", ".join(o if o != "_" else "None" for o in outs) + ("," if outs else "")))
        if opdef.aliases and not raw_only:    # (a loop iteration hands its values on, never to the user)
            for t in op.outputs:
                if t in fetched and t in names and names[t].startswith("v"):
                    lines.append("    %s = _copy(%s)" % (names[t], names[t]))
        # free temporaries after their last use, so numpy can reuse the (cache-warm) memory
        dead = [names[t] for t in dying.get(op, ()) if names.get(t, "").startswith("v") and t not in fetched]
        if dead and not trace:
            lines.append("    del %s" % ", ".join(dead))
    results = []
    for t in fetch_tensors:
        expr = names.get(t)
        if expr is None:
            raise ValueError("Tensor %s is not computed by this plan" % t.name)
        results.append(expr)
    lines.append("    return (%s)" % "".join(r + ", " for r in results))
    source = "\n".join(lines)
    if _DUMP_PLANS:
        print("\n".join(line + ("    # %s (%s)" % (line_ops[i + 1].name, line_ops[i + 1].type)
                                 if i + 1 in line_ops else "") for i, line in enumerate(lines)))
    code = compile(source, filename, "exec")
    exec(code, ns)  # noqa: S102 - our own generated straight-line code
    raw = ns["plan"]
    plan.line_ops = line_ops
    plan.trace_ops = trace_ops
    plan.records = []
    plan.feed_checks = [feed_check(t) for t in fed]
    plan.single = single and len(parts) == 1 and parts[0] is not None and parts[0][0] == "tensor"
    plan.n_out = len(results)
    if raw_only:
        plan.fn = raw
        return plan
    if tainted and any(not names[t].startswith("c") for t in fetch_tensors):
        def raw_fn(feeds, _raw=raw):
            values = _raw(feeds)
            for i, v in enumerate(values):
                if v is frames.DEAD:
                    raise errors.InvalidArgumentError(
                        None, "Retval[%d] does not have value: %s is on a branch that was not taken"
                        % (i, fetch_tensors[i].name))
            return values
        raw = raw_fn

    needs_assembly = any(p is None or p[0] == "slices" for p in parts)
    if not needs_assembly:
        def run(feeds, _raw=raw):
            return [_fetched(v) for v in _raw(feeds)]
    else:
        def run(feeds, _raw=raw, _parts=tuple(parts)):
            values = _raw(feeds)
            out = []
            for p in _parts:
                if p is None:
                    out.append(None)
                elif p[0] == "tensor":
                    out.append(_fetched(values[p[1]]))
                else:
                    out.append(IndexedSlicesValue(*values[p[1]:p[1] + p[2]]) if p[2] == 3 else
                               IndexedSlicesValue(values[p[1]], values[p[1] + 1], None))
            return out
    plan.fn = run
    return plan


def _gemm_accumulations(order: list, readers: dict, fetched: set, owned, tainted: dict) -> dict:
    """``{Add op: MatMul op}`` where the Add's input 0 is an accumulator the loop owns, read only there, and its
    input 1 a 2-D float MatMul's output read only by it (the gradient of a weight summed over a loop's
    iterations: ``b_acc += x.T @ dz``)."""
    in_plan = set(order)
    out = {}
    for op in order:
        if op.type not in ("Add", "AddV2") or op in tainted or len(op.inputs) != 2:
            continue
        acc, product = op.inputs
        m = product.op
        if (acc in owned and readers.get(acc) == 1 and acc not in fetched and m.type == "MatMul"
                and m in in_plan and m not in tainted and readers.get(product) == 1 and product not in fetched
                and product.dtype.name in ("float32", "float64") and acc.dtype is product.dtype
                and acc.shape.is_fully_defined() and acc.shape == product.shape):
            out[op] = m
    return out


def gemm_accumulate(acc: np.ndarray, a: np.ndarray, b: np.ndarray, transpose_a: bool, transpose_b: bool):
    """``acc + op(a) @ op(b)``, written into ``acc`` by one BLAS gemm with beta=1 (scipy.linalg.blas) when it is
    a writeable C-contiguous 2-D array and ``a``, ``b`` are C-contiguous 2-D arrays of its dtype; else a new array.
    (In column-major terms ``acc.T = op(b).T @ op(a).T``: the transposed views are Fortran-ordered, so no copies.)"""
    if (type(acc) is np.ndarray and type(a) is np.ndarray and type(b) is np.ndarray and acc.ndim == 2
            and a.ndim == 2 and b.ndim == 2 and acc.flags.c_contiguous and acc.flags.writeable
            and a.flags.c_contiguous and b.flags.c_contiguous and a.dtype == b.dtype == acc.dtype
            and acc.dtype.char in "fd"):
        m = a.shape[1] if transpose_a else a.shape[0]
        n = b.shape[0] if transpose_b else b.shape[1]
        if acc.shape == (m, n):
            from scipy.linalg import blas
            gemm = blas.sgemm if acc.dtype.char == "f" else blas.dgemm
            return gemm(1.0, b.T, a.T, beta=1.0, c=acc.T, trans_a=transpose_b, trans_b=transpose_a,
                        overwrite_c=True).T
    return acc + MATMULS[bool(transpose_a), bool(transpose_b)](a, b)


def _dead_aware_lines(lines: list, op: Any, k: int, call: str, args: list, outs: list, tainted: dict,
                      owner: dict, names: dict, ns: dict) -> None:
    """The lines running ``op`` only when no input and no control input is dead (``d<k>``: it did not run);
    a Switch forwards to one side, a Merge its first live input."""
    refs = op.opdef.ref_inputs
    dead_inputs = ["%s is _D" % a for i, (a, t) in enumerate(zip(args, op.inputs))
                   if i not in refs and owner.get(t.op, t.op) in tainted]
    dead_controls = ["d%d" % tainted[owner.get(c, c)] for c in op.control_inputs if owner.get(c, c) in tainted]
    if op.type == "Merge":
        lines.append("    %s = _D2 if (%s) else _merge(%s)" % (", ".join(outs), " or ".join(dead_controls) or "False",
                                                              ", ".join(args)))
        lines.append("    d%d = %s is _D" % (k, outs[0] if outs[0] != "_" else "_"))
        return
    if op.type == "ControlTrigger":      # as TF's executor: a trigger fires even after dead inputs
        dead_inputs = dead_controls = []
    lines.append("    d%d = %s" % (k, " or ".join(dead_inputs + dead_controls) or "False"))
    if op.type in frames.SWITCH_TYPES:
        lines.append("    %s = _D2 if d%d else _switch(%s)" % (", ".join(outs), k, ", ".join(args)))
    elif op.type == "Const" and not op.inputs:
        name = "c%d" % k
        ns[name] = op.attrs["value"]
        lines.append("    %s = _D if d%d else %s" % (outs[0], k, name))
    elif not outs:
        lines.append("    if not d%d: %s" % (k, call))
    elif len(outs) == 1:
        lines.append("    %s = _D if d%d else %s" % (outs[0], k, call))
    else:
        lines.append("    %s = (_D,) * %d if d%d else %s" % (", ".join(outs), len(outs), k, call))


def _reusable(t: Tensor, op: Operation, names: dict, fetched: set, readers: dict, owned=frozenset()) -> bool:
    """Whether ``op`` may overwrite ``t``'s buffer: a fresh temporary of this step (not fed, folded or fetched),
    or a loop variable the loop owns (``owned``), that no other op reads (so no view of it can be alive either)."""
    if readers.get(t) != 1 or t in fetched or 0 in op.opdef.ref_inputs:
        return False
    if t in owned:
        return True
    name = names.get(t, "")
    return name.startswith("v") and not name.startswith("v_feed") and t.op.opdef.fresh


_DUMP_PLANS = bool(os.environ.get("TFEVENTS_DUMP_PLANS"))
_NEVER_FOLD = {"Placeholder", "PlaceholderWithDefault", "Switch", "RefSwitch", "Merge", "Enter", "Exit",
               "NextIteration", "LoopCond", "ControlTrigger"}


def _fold(op, names: dict, ns: dict, fed: set):
    """Outputs of a pure op computed at compile time (all inputs constant, or a static Shape/Size), else None."""
    opdef = op.opdef
    if opdef.stateful or opdef.ref_inputs or op.type in _NEVER_FOLD or any(t in fed for t in op.outputs):
        return None
    if op.type in ("Shape", "Size", "Rank") and op.inputs[0].shape.is_fully_defined():
        value = np.asarray(constant_value(op.outputs[0]) if op.type != "Rank" else op.inputs[0].shape.ndims,
                           dtype=np.int32)
        return [_readonly(value)]
    if not op.inputs or not all(names.get(t, "").startswith("c") for t in op.inputs):
        return None
    value = _bound_callable(op, None)(*[ns[names[t]] for t in op.inputs])
    values = list(value) if len(op.outputs) > 1 else [value]
    return [_readonly(v) for v in values]


def _readonly(value):
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    return value


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


