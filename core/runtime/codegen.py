"""The plan generator: a scheduled order of ops -> one straight-line Python function ``plan(feeds)``.

Each tensor is a local variable (``v<k>_<j>``) or, when known at compile time, a global constant (``c<k>``):
Const nodes and pure ops on constants are folded. Each op's callable is bound once (an in-place variant where
input 0 is a fresh temporary nobody else reads); a local is deleted after its last use, so numpy reuses the
cache-warm memory; ops downstream of a Switch check for dead values (``frames.py``); in a loop body, a MatMul
whose product only adds into an accumulator the loop owns becomes one BLAS gemm into that buffer.
``TFEVENTS_DUMP_PLANS=1`` prints every generated plan, each line with the op it runs.
"""
from __future__ import annotations

import functools
import inspect
import os
import time
from typing import Any, Dict, List, Optional

import numpy as np

from ..framework import errors
from ..framework.graph import Operation, Tensor
from ..framework.registry import constant_value
from . import frames
from .kernels import MATMULS
from .plan import IndexedSlicesValue, Plan, feed_check, referenced_variable, waits_for

_DUMP_PLANS = bool(os.environ.get("TFEVENTS_DUMP_PLANS"))


def generate(session: Any, order: list, fed: list, fetch_tensors: list, parts: list, trace: bool,
             single: bool, owner: Optional[dict] = None, raw_only: bool = False,
             filename: str = "<tfevents plan>", owned=frozenset()) -> Plan:
    """The plan running ``order`` (``schedule``'s) on the ``fed`` values and returning ``fetch_tensors``.

    ``parts``: per fetch, ``("tensor", i)``, ``("slices", i, n)`` (an IndexedSlices of n values) or None (an
    Operation); ``single``: the fetch was one element, not a list; ``owner``: the loop region of each op in one
    (frames.py); ``raw_only``: a loop iteration's plan, values handed on as they are; ``owned``: fed tensors whose
    buffers the loop owns; ``trace``: record each op's start and end for RunMetadata."""
    writer = _PlanWriter(session, order, fed, fetch_tensors, trace, owner or {}, owned)
    for k, op in enumerate(order):
        writer.write_op(k, op, raw_only)
    raw = writer.compile(filename)
    plan = writer.plan
    plan.feed_checks = [feed_check(t) for t in fed]
    plan.single = single and len(parts) == 1 and parts[0] is not None and parts[0][0] == "tensor"
    plan.n_out = len(fetch_tensors)
    if raw_only:
        plan.fn = raw
        return plan
    if writer.tainted and any(not writer.names[t].startswith("c") for t in fetch_tensors):
        raw = _raising_dead_fetches(raw, fetch_tensors)
    plan.fn = _assembling(raw, parts)
    return plan


class _PlanWriter:
    """The source of one plan, op by op, and the namespace it runs in."""

    def __init__(self, session: Any, order: list, fed: list, fetch_tensors: list, trace: bool, owner: dict,
                 owned) -> None:
        self.session, self.trace, self.owner, self.owned = session, trace, owner, owned
        self.plan = Plan()
        self.plan.records, self.plan.trace_ops, self.plan.line_ops = [], [], {}
        self.names: Dict[Tensor, str] = {}      # tensor -> expression (local variable or global constant)
        self.ns: Dict[str, Any] = {"_copy": np.array, "_D": frames.DEAD, "_D2": (frames.DEAD, frames.DEAD),
                                   "_switch": frames.switch, "_ref_switch": frames.ref_switch,
                                   "_merge": frames.merge}
        if trace:
            self.ns["_now"], self.ns["_plan"] = time.time, self.plan
        self.fetch_tensors, self.fetched, self.fed = fetch_tensors, set(fetch_tensors), set(fed)
        self.tainted = _tainted(order, owner)
        self.readers = _readers(order)
        # the tensors some op reads as a value (a reference input reads its variable's slot instead)
        self.values_read = {t for op in order for i, t in enumerate(op.inputs) if i not in op.opdef.ref_inputs}
        # an owned accumulator plus a MatMul read only there: one gemm adding into the accumulator's buffer
        self.fused = {} if trace else _gemm_accumulations(order, self.readers, self.fetched, owned, self.tainted)
        self.skipped = {m: a for a, m in self.fused.items()}
        self.dying = _dying(order, self.fused, self.skipped)
        self.lines = ["def plan(feeds):"]
        for i, t in enumerate(fed):
            self.names[t] = "v_feed%d" % i
            self.lines.append("    v_feed%d = feeds[%d]" % (i, i))

    def write_op(self, k: int, op: Any, raw_only: bool) -> None:
        if op in self.skipped:                 # computed by its accumulating Add
            return
        if op in self.fused:
            self._write_gemm_accumulation(k, op)
        elif op.type == "Const" and op not in self.tainted:
            name = "c%d" % k
            self.ns[name] = op.attrs["value"]
            self.names.setdefault(op.outputs[0], name)
        elif not self._folded(k, op):
            self._write_call(k, op, raw_only)

    def _folded(self, k: int, op: Any) -> bool:
        """Constant folding: a pure op whose inputs are all constants (or a static shape query)."""
        folded = _fold(op, self.names, self.ns, self.fed) if op not in self.tainted else None
        if folded is None:
            return False
        for t, value in zip(op.outputs, folded):
            name = "c%d_%d" % (k, t.value_index)
            self.ns[name] = value
            self.names[t] = name
        return True

    def _write_gemm_accumulation(self, k: int, op: Any) -> None:
        matmul, names = self.fused[op], self.names
        out = "v%d_0" % k
        names[op.outputs[0]] = out
        self.ns["_gemm_acc"] = gemm_accumulate
        self.lines.append("    %s = _gemm_acc(%s, %s, %s, %s, %s)" % (
            out, names[op.inputs[0]], names[matmul.inputs[0]], names[matmul.inputs[1]],
            bool(matmul.attrs["transpose_a"]), bool(matmul.attrs["transpose_b"])))
        self.plan.line_ops[len(self.lines)] = op
        self._free(op)

    def _write_call(self, k: int, op: Any, raw_only: bool) -> None:
        """``outs = f<k>(args)``: the op's bound callable (or its in-place variant) on its inputs."""
        opdef, names, ns = op.opdef, self.names, self.ns
        args = []
        for i, t in enumerate(op.inputs):
            if i in opdef.ref_inputs:
                ns["s%d_%d" % (k, i)] = self.session.variable_slot(referenced_variable(t))
                args.append("s%d_%d" % (k, i))
            else:
                args.append(names[t])
        fn_name = "f%d" % k
        ns[fn_name] = _bound_callable(op, self.session)
        if opdef.inplace is not None and op.inputs and _reusable(op.inputs[0], op, names, self.fetched,
                                                                 self.readers, self.owned):
            ns[fn_name] = opdef.inplace
        outs = []
        for j, t in enumerate(op.outputs):
            if t in self.fed:
                outs.append("_")
            else:
                names[t] = "v%d_%d" % (k, j)
                outs.append(names[t])
        if op.type in frames.SWITCH_TYPES and opdef.ref_inputs:    # which sides of a variable's RefSwitch are read
            ns["n%d" % k] = tuple(t in self.values_read or t in self.fetched for t in op.outputs)
        self._write_call_lines(k, op, "%s(%s)" % (fn_name, ", ".join(args)), args, outs)
        if opdef.aliases and not raw_only:    # (a loop iteration hands its values on, never to the user)
            for t in op.outputs:
                if t in self.fetched and t in names and names[t].startswith("v"):
                    self.lines.append("    %s = _copy(%s)" % (names[t], names[t]))
        if not self.trace:
            self._free(op)

    def _write_call_lines(self, k: int, op: Any, call: str, args: list, outs: list) -> None:
        lines = self.lines
        if self.trace:
            lines.append("    _t0 = _now()")
            self.plan.trace_ops.append(op)
        if op in self.tainted:
            _dead_aware_lines(lines, op, k, call, args, outs, self.tainted, self.owner, self.names, self.ns)
        elif not outs:
            lines.append("    " + call)
        else:
            lines.append("    %s = %s" % (", ".join(outs), call))
        self.plan.line_ops[len(lines)] = op
        if self.trace:
            recorded = ", ".join(o if o != "_" else "None" for o in outs) + ("," if outs else "")
            lines.append("    _plan.records.append((%d, _t0, _now(), (%s)))"
                         % (len(self.plan.trace_ops) - 1, recorded))

    def _free(self, op: Any) -> None:
        """Delete the temporaries whose last reader is ``op``, so numpy can reuse the (cache-warm) memory."""
        dead = [self.names[t] for t in self.dying.get(op, ())
                if self.names.get(t, "").startswith("v") and t not in self.fetched]
        if dead:
            self.lines.append("    del %s" % ", ".join(dead))

    def compile(self, filename: str):
        """The plan function, compiled under ``filename`` (so a traceback's lines name their ops)."""
        results = []
        for t in self.fetch_tensors:
            expr = self.names.get(t)
            if expr is None:
                raise ValueError("Tensor %s is not computed by this plan" % t.name)
            results.append(expr)
        self.lines.append("    return (%s)" % "".join(r + ", " for r in results))
        line_ops = self.plan.line_ops
        if _DUMP_PLANS:
            print("\n".join(line + ("    # %s (%s)" % (line_ops[i + 1].name, line_ops[i + 1].type)
                                     if i + 1 in line_ops else "") for i, line in enumerate(self.lines)))
        code = compile("\n".join(self.lines), filename, "exec")
        exec(code, self.ns)  # noqa: S102 - our own generated straight-line code
        return self.ns["plan"]


def _tainted(order: list, owner: dict) -> dict:
    """The units that may see dead values (downstream of a Switch, frames.py), each with its index k: their
    flag ``d<k>`` is true when they did not run."""
    tainted: dict = {}
    for k, op in enumerate(order):
        if (op.type in frames.SWITCH_TYPES
                or any(owner.get(t.op, t.op) in tainted for i, t in enumerate(op.inputs) if waits_for(op, i, t))
                or any(owner.get(c, c) in tainted for c in op.control_inputs)):
            tainted[op] = k
    return tainted


def _readers(order: list) -> dict:
    """tensor -> the number of plan ops reading it."""
    readers: dict = {}
    for op in order:
        for t in set(op.inputs):
            readers[t] = readers.get(t, 0) + 1
    return readers


def _dying(order: list, fused: dict, skipped: dict) -> Dict[Any, List[Tensor]]:
    """op -> the tensors it reads last (outputs nobody reads die right after their op)."""
    last_use: dict = {}
    for op in order:
        for i, t in enumerate(op.inputs):
            if waits_for(op, i, t):
                last_use[t] = skipped.get(op, op)      # a fused MatMul's inputs are read by its Add
        if op in fused:
            for t in fused[op].inputs:
                last_use[t] = op
    for op in order:
        for t in op.outputs:
            last_use.setdefault(t, op)
    dying: dict = {}
    for t, op in last_use.items():
        dying.setdefault(op, []).append(t)
    return dying


def _raising_dead_fetches(raw, fetch_tensors: list):
    """``raw`` raising TF's error when a fetched value is dead (on a branch that was not taken)."""
    def raw_fn(feeds, _raw=raw):
        values = _raw(feeds)
        for i, v in enumerate(values):
            if v is frames.DEAD:
                raise errors.InvalidArgumentError(
                    None, "Retval[%d] does not have value: %s is on a branch that was not taken"
                    % (i, fetch_tensors[i].name))
        return values
    return raw_fn


def _assembling(raw, parts: list):
    """``raw``'s values as the user fetched them: numpy scalars for 0-d arrays, copies of views, None for an
    Operation, an ``IndexedSlicesValue`` for an IndexedSlices."""
    if not any(p is None or p[0] == "slices" for p in parts):
        def run(feeds, _raw=raw):
            return [_fetched(v) for v in _raw(feeds)]
        return run

    def run_parts(feeds, _raw=raw, _parts=tuple(parts)):
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
    return run_parts


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
    # a reference forwarded by a RefSwitch is dead on the side it did not take (its slot is passed, its name
    # holds the Switch's output)
    dead_inputs = ["%s is _D" % (a if i not in refs else names[t]) for i, (a, t) in enumerate(zip(args, op.inputs))
                   if waits_for(op, i, t) and owner.get(t.op, t.op) in tainted]
    dead_controls = ["d%d" % tainted[owner.get(c, c)] for c in op.control_inputs if owner.get(c, c) in tainted]
    if op.type == "Merge":
        lines.append("    %s = _D2 if (%s) else _merge(%s)" % (", ".join(outs), " or ".join(dead_controls) or "False",
                                                              ", ".join(args)))
        lines.append("    d%d = %s is _D" % (k, outs[0] if outs[0] != "_" else "_"))
        return
    if op.type == "ControlTrigger":      # as TF's executor: a trigger fires even after dead inputs
        dead_inputs = dead_controls = []
    lines.append("    d%d = %s" % (k, " or ".join(dead_inputs + dead_controls) or "False"))
    if op.type in frames.SWITCH_TYPES and refs:
        lines.append("    %s = _D2 if d%d else _ref_switch(%s, *n%d)" % (", ".join(outs), k, ", ".join(args), k))
    elif op.type in frames.SWITCH_TYPES:
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
