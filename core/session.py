"""``tf.Session``: runs the part of the graph a set of fetches needs.

``run`` looks up an execution plan cached per (fetches, feed keys, trace flag). A plan is compiled once:
prune to the ops the fetches need (stopping at fed tensors; ref inputs do not pull in their variable), order
them topologically (control dependencies respected; among ready ops, pure ones before ops that mutate
variables, so reads in one step see the values from before its updates), fold what is constant, bind each
op's callable (an in-place variant when its first input is a temporary nobody else reads), then generate one
straight-line Python function ``plan(feeds)`` with a local per tensor, deleted after its last use. Running a
step is one call of that function: no per-run sorting, dict building or dispatch. As in TF, denormals are
flushed to zero while a step runs (when the optional ``_kernels`` extension is built).
"""
from __future__ import annotations

import functools
import heapq
import inspect
import threading
import time
from typing import Any, Optional

import numpy as np

from . import errors, frames
from .graph import Operation, Tensor, get_default_graph
from .ops import load_kernels
from .ops.state_ops import VariableSlot
from .registry import IndexedSlices, constant_value

_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"

# TF runs its kernels with denormals flushed to zero (FTZ/DAZ); so does a step here when the optional C
# kernels are built: the same numbers as TF where values underflow, and no 10-100x slow denormal arithmetic
# once a model's gradients get tiny. The mode is the calling thread's and is restored after each run.
_kernels = load_kernels()
_flush_denormals = _kernels.flush_denormals if _kernels is not None else None
_restore_denormals = _kernels.restore_denormals if _kernels is not None else None


class IndexedSlicesValue(tuple):
    """The value of a fetched IndexedSlices: (values, indices, dense_shape)."""

    __slots__ = ()

    def __new__(cls, values, indices, dense_shape):
        return tuple.__new__(cls, (values, indices, dense_shape))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])
    dense_shape = property(lambda self: self[2])


# ---------------------------------------------------------------------------------------------------------
# fetch structures: flatten to graph elements, rebuild with values


def _fetch_key(f: Any) -> Any:
    if type(f) is list and not any(isinstance(x, _NESTED) for x in f):
        return (list, tuple(f))                 # the common case: a flat list of tensors and ops
    if isinstance(f, (list, tuple)):
        return (type(f), tuple(_fetch_key(x) for x in f))
    if isinstance(f, dict):
        return (type(f), tuple((k, _fetch_key(v)) for k, v in f.items()))
    return f


_NESTED = (list, tuple, dict)


def _flatten(f: Any, out: list) -> None:
    if isinstance(f, (list, tuple)):
        for x in f:
            _flatten(x, out)
    elif isinstance(f, dict):
        for x in f.values():
            _flatten(x, out)
    else:
        out.append(f)


def _rebuild(f: Any, it) -> Any:
    if isinstance(f, list):
        return [_rebuild(x, it) for x in f]
    if isinstance(f, tuple):
        values = [_rebuild(x, it) for x in f]
        return type(f)(*values) if hasattr(f, "_fields") else type(f)(values)
    if isinstance(f, dict):
        return type(f)((k, _rebuild(v, it)) for k, v in f.items())
    return next(it)


def _flatten_feeds(feed_dict: dict) -> dict:
    """TF1 allows a nested tuple of tensors (an LSTMStateTuple, a tuple of them) as one feed key, with a value of
    the same structure: one entry per tensor."""
    out = {}
    for key, value in feed_dict.items():
        if not isinstance(key, tuple):
            out[key] = value
            continue
        keys: list = []
        _flatten(key, keys)
        values: list = []
        try:
            _flatten_like(key, value, values)
        except (TypeError, ValueError) as e:
            raise ValueError("The value fed for the tuple key %r does not have its structure: %s" % (key, e)) \
                from None
        out.update(zip(keys, values))
    return out


def _flatten_like(structure: Any, value: Any, out: list) -> None:
    if isinstance(structure, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(structure):
            raise ValueError("expected a sequence of %d, got %r" % (len(structure), _short(value)))
        for s, v in zip(structure, value):
            _flatten_like(s, v, out)
    else:
        out.append(value)


# ---------------------------------------------------------------------------------------------------------
# plans


class _Plan:
    __slots__ = ("fn", "feed_checks", "single", "fetch_struct", "line_ops", "records", "trace_ops", "n_out")


def _feed_check(tensor: Tensor):
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


class Session:
    """Owns the variable values and per-op state of one run of a graph (TF 1.x ``tf.Session``)."""

    def __init__(self, target: str = "", graph: Any = None, config: Any = None):
        self._graph = graph if graph is not None else get_default_graph()
        self._slots: dict = {}
        self._op_state: dict = {}
        self._plans: dict = {}
        self._closed = False
        self._default_cm = None
        self.config = config
        self.sess_str = target

    # ---- state
    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    def variable_slot(self, op: Operation) -> VariableSlot:
        """The storage of variable ``op`` (a VariableV2 Operation) in this session."""
        slot = self._slots.get(op)
        if slot is None:
            slot = self._slots[op] = VariableSlot(op)
        return slot

    def op_state(self, op: Operation, factory):
        """Per-session state of ``op`` (e.g. a random generator), created by ``factory()`` on first use."""
        state = self._op_state.get(op)
        if state is None:
            state = self._op_state[op] = factory()
        return state

    # ---- context management
    def as_default(self):
        return _default_session_stack.get_controller(self)

    def __enter__(self):
        self._default_cm = self.as_default()
        self._default_cm.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        cm, self._default_cm = self._default_cm, None
        if cm is not None:
            cm.__exit__(exc_type, exc, tb)
        self.close()

    def close(self) -> None:
        self._closed = True
        self._plans.clear()

    def list_devices(self):
        return [_DEVICE]

    # ---- running
    def run(self, fetches: Any, feed_dict: Optional[dict] = None, options: Any = None,
            run_metadata: Any = None) -> Any:
        """Values of ``fetches`` (nested lists/tuples/dicts/namedtuples of Tensors, Operations, Variables,
        names) after feeding ``feed_dict``; Operations fetch as None."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        trace = options is not None and run_metadata is not None and getattr(options, "trace_level", 0) >= 1
        if feed_dict and any(isinstance(k, tuple) for k in feed_dict):
            feed_dict = _flatten_feeds(feed_dict)
        feed_keys = tuple(feed_dict) if feed_dict else ()
        key = (_fetch_key(fetches), feed_keys, trace, self._graph._edges_version)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._compile(fetches, feed_keys, trace)
            self._plans[key] = plan
        checks = plan.feed_checks
        feeds = [checks[i](feed_dict[k]) for i, k in enumerate(feed_keys)] if feed_keys else ()
        if trace:
            plan.records = []
        old_mode = _flush_denormals() if _flush_denormals is not None else None
        old_err = np.seterr(all="ignore")        # as TF: x / 0 is inf or nan, silently
        try:
            values = plan.fn(feeds)
        except Exception as e:  # noqa: BLE001 - re-raised with the failing node named
            raise self._op_error(plan, e) from e
        finally:
            np.seterr(**old_err)
            if old_mode is not None:
                _restore_denormals(old_mode)
        if trace:
            _fill_step_stats(run_metadata, plan)
        if plan.single:
            return values[0]
        return _rebuild(fetches, iter(values))

    def _op_error(self, plan: _Plan, e: Exception, filename: str = "<tfevents plan>") -> Exception:
        if isinstance(e, errors.OpError):
            return e
        op = None
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                op = plan.line_ops.get(tb.tb_lineno, op)
            tb = tb.tb_next
        if op is None:
            return e
        return errors.InvalidArgumentError(op, "%s: %s\n\t [[node %s (%s)]]" % (type(e).__name__, e, op.name,
                                                                               op.type))

    def make_callable(self, fetches: Any, feed_list: Any = None, accept_options: bool = False):
        """A function running ``fetches`` with positional feeds in ``feed_list`` order."""
        feed_list = list(feed_list or [])

        def call(*args, **kwargs):
            return self.run(fetches, dict(zip(feed_list, args)), **kwargs)
        return call

    # ---- compiling a plan
    def _element(self, f: Any):
        g = self._graph
        if isinstance(f, (Tensor, Operation)):
            if f.graph is not g:
                raise ValueError("Fetch argument %r is not an element of this graph." % (f,))
            return f
        if isinstance(f, IndexedSlices):
            return f
        if f is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        try:
            return g.as_graph_element(f)
        except (TypeError, KeyError, ValueError) as e:
            raise TypeError("Fetch argument %r has invalid type %s, must be a string or Tensor. (%s)"
                            % (f, type(f).__name__, e)) from None

    def _compile(self, fetches: Any, feed_keys: tuple, trace: bool) -> _Plan:
        flat: list = []
        _flatten(fetches, flat)
        elements = [self._element(f) for f in flat]
        for e in elements:
            if isinstance(e, (Tensor, Operation)) and not self._graph.is_fetchable(e):
                raise ValueError("Operation %r has been marked as not fetchable." % (e if isinstance(e, Operation)
                                                                                     else e.op).name)
        fed = []
        for k in feed_keys:
            t = self._element(k)
            if isinstance(t, Operation):
                raise TypeError("Cannot feed an Operation (%s); feed one of its output tensors" % t.name)
            if isinstance(t, IndexedSlices):
                raise TypeError("Feeding IndexedSlices is not supported")
            fed.append(t)
        fed_set = set(fed)

        # what each fetch needs: tensors, or None for Operations, or IndexedSlices parts
        fetch_tensors, targets, parts = [], [], []
        for e in elements:
            if isinstance(e, Operation):
                targets.append(e)
                parts.append(None)
            elif isinstance(e, IndexedSlices):
                ts = [e.values, e.indices] + ([e.dense_shape] if e.dense_shape is not None else [])
                parts.append(("slices", len(fetch_tensors), len(ts)))
                fetch_tensors.extend(ts)
            else:
                parts.append(("tensor", len(fetch_tensors)))
                fetch_tensors.append(e)

        units, owner = frames.group_frames(self._needed_ops(fetch_tensors, targets, fed_set), None, self)
        order = _schedule(units, owner)
        for op in order:
            if op.type == "Placeholder":
                op.opdef.bind(op, self)()          # raises: the placeholder is needed but not fed

        return _generate(self, order, fed, fetch_tensors, parts, trace, single=not isinstance(
            fetches, (list, tuple, dict)), owner=owner)

    def _compile_level(self, fed: list, fetch_tensors: list, frame: Any, allow_dead: bool, owned=frozenset()):
        """The raw plan ``fn(feed values) -> fetched values`` of one loop frame's iteration (frames.py);
        ``owned``: fed tensors whose buffers the loop owns, so an op reading them last may overwrite them."""
        units, owner = frames.group_frames(self._needed_ops(fetch_tensors, [], set(fed)), frame, self)
        return _generate(self, _schedule(units, owner), fed, fetch_tensors,
                         [("tensor", i) for i in range(len(fetch_tensors))], False, single=False, owner=owner,
                         raw_only=True, filename="<tfevents loop %s>" % frame.name, owned=owned)

    def _needed_ops(self, fetch_tensors: list, targets: list, fed: set) -> list:
        needed, stack = set(), [t.op for t in fetch_tensors if t not in fed] + list(targets)
        while stack:
            op = stack.pop()
            if op in needed:
                continue
            needed.add(op)
            refs = op.opdef.ref_inputs
            for i, t in enumerate(op.inputs):
                if i not in refs and t not in fed:
                    stack.append(t.op)
            # a control input whose outputs are all fed counts as done (TF: a fed placeholder is satisfied)
            stack.extend(c for c in op.control_inputs if not c.outputs or not all(o in fed for o in c.outputs))
        return needed


def _schedule(needed, owner: Optional[dict] = None) -> list:
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


def _bound_callable(op: Operation, session: Session):
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


def _generate(session: Session, order: list, fed: list, fetch_tensors: list, parts: list, trace: bool,
              single: bool, owner: Optional[dict] = None, raw_only: bool = False,
              filename: str = "<tfevents plan>", owned=frozenset()) -> _Plan:
    plan = _Plan()
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
    last_use: dict = {}
    for op in order:
        for i, t in enumerate(op.inputs):
            if i not in op.opdef.ref_inputs:
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
    plan.feed_checks = [_feed_check(t) for t in fed]
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


_DUMP_PLANS = bool(__import__("os").environ.get("TFEVENTS_DUMP_PLANS"))
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


def _fill_step_stats(run_metadata: Any, plan: _Plan) -> None:
    """One NodeExecStats per executed node (times in microseconds, output shapes and bytes)."""
    from tfevents.proto import step_stats_pb2
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


# ---------------------------------------------------------------------------------------------------------
# default session


class _DefaultSessionStack(threading.local):
    def __init__(self):
        self.stack: list = []

    def get_default(self) -> Optional[Session]:
        return self.stack[-1] if self.stack else None

    def get_controller(self, session: Session):
        stack = self.stack

        class _Controller:
            def __enter__(self_inner):
                stack.append(session)
                return session

            def __exit__(self_inner, *exc):
                if stack and stack[-1] is session:
                    stack.pop()
                elif session in stack:
                    stack.remove(session)
                return False
        return _Controller()


_default_session_stack = _DefaultSessionStack()


def get_default_session() -> Optional[Session]:
    return _default_session_stack.get_default()


class InteractiveSession(Session):
    """A Session that installs itself as the default session on construction."""

    def __init__(self, target: str = "", graph: Any = None, config: Any = None):
        super().__init__(target, graph, config)
        self._interactive_cm = self.as_default()
        self._interactive_cm.__enter__()

    def close(self) -> None:
        super().close()
        cm, self._interactive_cm = getattr(self, "_interactive_cm", None), None
        if cm is not None:
            cm.__exit__(None, None, None)


def _eval_using_default_session(fetch: Any, feed_dict: Optional[dict], session: Optional[Session]) -> Any:
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate tensor using `eval()`: No default session is registered. Use "
                             "`with sess.as_default()` or pass an explicit session to `eval(session=sess)`")
    graph = fetch.graph
    if session.graph is not graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's graph is different "
                         "from the session's graph.")
    return session.run(fetch, feed_dict)
