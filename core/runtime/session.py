"""``tf.Session``: runs the part of the graph a set of fetches needs.

``run`` looks up an execution plan cached per (fetches, feed keys, trace flag). A plan is compiled once:
prune to the ops the fetches need (stopping at fed tensors; ref inputs do not pull in their variable), order
them topologically (control dependencies respected; among ready ops, pure ones before ops that mutate
variables, so reads in one step see the values from before its updates), fold what is constant, bind each
op's callable (an in-place variant when its first input is a temporary nobody else reads), then generate one
straight-line Python function ``plan(feeds)`` with a local per tensor, deleted after its last use
(``compiler.py``, ``plan.py``, ``codegen.py``). Running a step is one call of that function: no per-run sorting,
dict building or dispatch.
As in TF, denormals are flushed to zero while a step runs (when the optional ``_kernels`` extension is built).
"""
from __future__ import annotations

import threading
from typing import Any, Optional

import numpy as np

from ..framework import errors
from ..framework.graph import Operation, Tensor, _default_session_stack, get_default_graph
from ..framework.registry import IndexedSlices
from .compiler import PlanCompiler
from .kernels import load_kernels
from .plan import _DEVICE as DEVICE, Plan, _short, fill_step_stats

# TF runs its kernels with denormals flushed to zero (FTZ/DAZ); so does a step here when the optional C
# kernels are built: the same numbers as TF where values underflow, and no 10-100x slow denormal arithmetic
# once a model's gradients get tiny. The mode is the calling thread's and is restored after each run.
_kernels = load_kernels()
_flush_denormals = _kernels.flush_denormals if _kernels is not None else None
_restore_denormals = _kernels.restore_denormals if _kernels is not None else None

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


_malloc_tuned = False


def _tune_malloc() -> None:
    """Keep freed arrays in the heap (glibc ``mallopt``): no mmap for arrays under 32 MiB and no trimming under
    512 MiB, so a step's large temporaries reuse warm memory instead of page-faulting fresh pages every step (what
    TF's and torch's caching allocators do; 4-7% of a PTB step). Once per process, at the first Session; off with
    ``TFEVENTS_CORE_MALLOC=0``, and a no-op where glibc's mallopt is missing."""
    global _malloc_tuned
    if _malloc_tuned:
        return
    _malloc_tuned = True
    import os
    if os.environ.get("TFEVENTS_CORE_MALLOC", "1") == "0":
        return
    try:
        import ctypes
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(-3, 32 << 20)     # M_MMAP_THRESHOLD
    mallopt(-1, 512 << 20)    # M_TRIM_THRESHOLD


class Session:
    """Owns the variable values and per-op state of one run of a graph (TF 1.x ``tf.Session``)."""

    def __init__(self, target: str = "", graph: Any = None, config: Any = None):
        _tune_malloc()
        self._graph = graph if graph is not None else get_default_graph()
        self._slots: dict = {}
        self._op_state: dict = {}
        self._state_lock = threading.Lock()
        self._plans: dict = {}
        self._compiler = PlanCompiler(self)
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
        """Per-session state of ``op`` (e.g. a random generator, a queue), created by ``factory()`` on first use,
        once even when queue-runner threads ask for it together."""
        state = self._op_state.get(op)
        if state is None:
            with self._state_lock:
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
        return [DEVICE]

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
            raise self._compiler.op_error(plan, e) from e
        finally:
            np.seterr(**old_err)
            if old_mode is not None:
                _restore_denormals(old_mode)
        if trace:
            fill_step_stats(run_metadata, plan)
        if plan.single:
            return values[0]
        return _rebuild(fetches, iter(values))

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

    def _compile(self, fetches: Any, feed_keys: tuple, trace: bool) -> Plan:
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

        return self._compiler.compile_step(fed, fetch_tensors, targets, parts, trace,
                                           single=not isinstance(fetches, (list, tuple, dict)))


class VariableSlot:
    """One variable's storage in one Session: ``value`` is the numpy array (None until initialized)."""

    __slots__ = ("value", "name", "op")

    def __init__(self, op):
        self.value = None
        self.name = op.name
        self.op = op

    def read(self) -> np.ndarray:
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                self.op, "Attempting to use uninitialized value %s\n\t [[node %s]]" % (self.name, self.name))
        return value

    def __repr__(self) -> str:
        return "<VariableSlot %s=%r>" % (self.name, self.value)


# ---------------------------------------------------------------------------------------------------------
# the default session lives with the default graph (framework/graph.py)


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
