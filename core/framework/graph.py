"""The graph model: Graph, Operation, Tensor, name scopes, control dependencies, collections, the default graph
and session (static shapes: ``tensor_shape.py``).

Naming follows TF 1.x exactly: ``Graph.unique_name`` hands out ``add``, ``add_1``, ... per lower-cased full
name, and a name scope is itself a unique name (so ``name_scope('loss')`` twice gives ``loss/`` then ``loss_1/``).
"""
from __future__ import annotations

import contextlib
import re
import threading
from typing import Any, Iterable, Iterator, Optional

from . import dtypes as _dtypes
from .tensor_shape import TensorShape

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")
# the attr TF 2.x sets on an op named in ``control_dependencies`` (written to the GraphDef; no kernel reads it)
MANUAL_CONTROL_DEPENDENCIES = "_has_manual_control_dependencies"


class GraphKeys:
    """Standard collection names (same strings as TF 1.x)."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    LOSSES = "losses"
    UPDATE_OPS = "update_ops"
    TRAIN_OP = "train_op"
    GLOBAL_STEP = "global_step"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    TABLE_INITIALIZERS = "table_initializer"
    SAVERS = "savers"
    METRIC_VARIABLES = "metric_variables"
    ACTIVATIONS = "activations"
    WEIGHTS = "weights"
    BIASES = "biases"
    VARIABLES = GLOBAL_VARIABLES


class Tensor:
    """One output of an Operation: ``op``, ``value_index``, ``dtype`` and a static ``shape``."""

    __slots__ = ("op", "value_index", "dtype", "_shape", "_is_zeros_tensor", "__weakref__")
    __array_priority__ = 100

    def __init__(self, op: "Operation", value_index: int, dtype: _dtypes.DType, shape: TensorShape):
        self.op = op
        self.value_index = value_index
        self.dtype = dtype
        self._shape = shape
        self._is_zeros_tensor = False    # made by zeros_like (TF's tag: gradients may skip terms of zeros)

    @property
    def name(self) -> str:
        return "%s:%d" % (self.op.name, self.value_index)

    @property
    def graph(self) -> "Graph":
        return self.op.graph

    @property
    def device(self) -> str:
        return self.op.device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape: Any) -> None:
        self._shape = self._shape.merge_with(shape)

    def consumers(self) -> list:
        return [op for op in self.graph._ops if any(t is self for t in op.inputs)]

    def eval(self, feed_dict: Optional[dict] = None, session: Any = None) -> Any:
        return _eval_using_default_session(self, feed_dict, session)

    def __bool__(self):
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. "
                        "Use `if t is not None:` instead of `if t:`.")

    def __len__(self):
        raise TypeError("len is not well defined for symbolic Tensors (%s)." % self.name)

    def __repr__(self) -> str:
        return "<tf.Tensor '%s' shape=%s dtype=%s>" % (self.name, self._shape, self.dtype.name)

    # arithmetic operators are attached by ops/math_ops.py, indexing by ops/array_ops.py


class Operation:
    """A node: ``type`` (the TF op name), ``inputs``, ``control_inputs``, ``outputs``, ``attrs``, ``device``."""

    __slots__ = ("graph", "name", "type", "inputs", "control_inputs", "outputs", "attrs", "device",
                 "opdef", "_id", "_control_flow_context", "__weakref__")

    def __init__(self, graph, name, op_type, inputs, attrs, opdef, control_inputs, device):
        self.graph = graph
        self.name = name
        self.type = op_type
        self.inputs = list(inputs)
        self.attrs = attrs
        self.opdef = opdef
        self.control_inputs = list(control_inputs)
        self.device = device or ""
        self.outputs: list = []
        self._id = len(graph._ops)
        self._control_flow_context = graph._control_flow_context   # the cond/while context it was made in

    @property
    def node_def(self):
        from .graph_def import node_def  # lazy: graph_def loads the GraphDef protos, not needed to import core
        return node_def(self)

    def get_attr(self, name: str) -> Any:
        try:
            return self.attrs[name]
        except KeyError:
            raise ValueError("Operation %r has no attr named %r." % (self.name, name)) from None

    def _add_control_input(self, op: "Operation") -> None:
        if op not in self.control_inputs:
            self.control_inputs.append(op)
            self.graph._version += 1
            self.graph._edges_version += 1    # invalidates the Sessions' cached execution plans

    def _add_control_inputs(self, ops: Iterable["Operation"]) -> None:
        for op in ops:
            self._add_control_input(op)

    def _remove_all_control_inputs(self) -> None:
        self.control_inputs = []
        self.graph._edges_version += 1

    def _update_input(self, index: int, tensor: "Tensor") -> None:
        """Replace input ``index`` (control flow rewires inputs through Switch/Enter, and loops close their
        back edges this way)."""
        self.inputs[index] = tensor
        self.graph._version += 1
        self.graph._edges_version += 1

    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, ctx) -> None:
        self._control_flow_context = ctx

    def values(self) -> tuple:
        return tuple(self.outputs)

    def run(self, feed_dict: Optional[dict] = None, session: Any = None) -> None:
        _eval_using_default_session(self, feed_dict, session)

    def __repr__(self) -> str:
        return "<tf.Operation '%s' type=%s>" % (self.name, self.type)


class Graph:
    """A dataflow graph; ops are appended in creation order (always a topological order of data edges)."""

    def __init__(self):
        self._ops: list = []
        self._by_name: dict = {}
        self._names_in_use: dict = {}
        self._name_stack = ""
        self._control_stack: list = []   # (control input ops, ops created in the block) per open block
        self._device_stack: list = []
        self._collections: dict = {}
        self._finalized = False
        self._version = 0
        self._edges_version = 0
        self.seed: Optional[int] = None
        self._op_seed_count = 0          # op seeds handed out under the graph seed (random_ops.get_seed)
        self._var_store = None           # variable_scope's store, created lazily
        self._var_scope = None
        self._control_flow_context = None   # the innermost cond/while context being built
        self._unfetchable: set = set()      # ops inside a cond branch or loop frame
        self._unfeedable: set = set()

    # ---- control flow contexts
    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, ctx) -> None:
        self._control_flow_context = ctx

    def prevent_fetching(self, op: "Operation") -> None:
        self._unfetchable.add(op)

    def prevent_feeding(self, tensor: "Tensor") -> None:
        self._unfeedable.add(tensor)

    def is_fetchable(self, tensor_or_op: Any) -> bool:
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable

    def is_feedable(self, tensor: "Tensor") -> bool:
        return tensor not in self._unfeedable

    # ---- naming
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        if self._name_stack:
            name = self._name_stack + "/" + name
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = name
            while key in self._names_in_use:
                name = "%s_%d" % (base, i)
                key = name.lower()
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
        return name

    def get_name_scope(self) -> str:
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name: Optional[str]) -> Iterator[str]:
        if name and not (_VALID_SCOPE_NAME if self._name_stack else _VALID_OP_NAME).match(name.rstrip("/") or "x"):
            raise ValueError("'%s' is not a valid scope name" % name)
        old = self._name_stack
        if not name:
            new, scope = "", ""
        elif name.endswith("/"):
            new, scope = name[:-1], name
        else:
            new = self.unique_name(name)
            scope = new + "/"
        self._name_stack = new
        try:
            yield scope
        finally:
            self._name_stack = old

    # ---- control dependencies and devices
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs: Optional[Iterable[Any]]) -> Iterator[None]:
        if control_inputs is None:       # as TF: also leaves any cond/while context
            saved, self._control_stack = self._control_stack, []
            saved_context, self._control_flow_context = self._control_flow_context, None
            try:
                yield
            finally:
                self._control_stack = saved
                self._control_flow_context = saved_context
            return
        ops = []
        current = {op for block, _ in self._control_stack for op in block}
        for c in control_inputs:
            c = _as_operation(c)
            if c is not None and c not in current:
                ops.append(c)
                current.add(c)
                c.attrs[MANUAL_CONTROL_DEPENDENCIES] = True     # TF 2.x marks each op used as a control input
        self._control_stack.append((ops, set()))     # (control inputs, ops created in this block)
        try:
            yield
        finally:
            self._control_stack.pop()

    def _control_inputs_for(self, input_ops: set) -> list:
        """TF's rule: a block's control inputs are added unless an input was created inside that block
        (the new op is then already dominated) or is itself one of them."""
        out: list = []
        for ops, seen in self._control_stack:
            if any(op in seen for op in input_ops):
                continue
            out.extend(c for c in ops if c not in input_ops and c not in out)
        return out

    @contextlib.contextmanager
    def device(self, device_name: Any) -> Iterator[None]:
        if callable(device_name):
            raise NotImplementedError("device functions are not supported; pass a device string")
        self._device_stack.append(device_name or "")
        try:
            yield
        finally:
            self._device_stack.pop()

    @contextlib.contextmanager
    def colocate_with(self, op: Any, ignore_existing: bool = False) -> Iterator[None]:
        yield

    # ---- ops
    def _create_op(self, op_type: str, inputs: list, attrs: dict, opdef: Any, name: Optional[str]) -> Operation:
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        if name and name.endswith("/"):
            name = name[:-1]
        else:
            name = self.unique_name(name or op_type)
        if name in self._by_name:
            raise ValueError("Duplicate node name in graph: %r" % name)
        control = self._control_inputs_for({t.op for t in inputs}) if self._control_stack else []
        device = self._device_stack[-1] if self._device_stack else ""
        op = Operation(self, name, op_type, inputs, attrs, opdef, control, device)
        self._ops.append(op)
        for _, seen in self._control_stack:
            seen.add(op)
        self._by_name[name] = op
        self._version += 1
        return op

    def _remove_last_op(self, op: Operation) -> None:
        if self._ops and self._ops[-1] is op:
            self._ops.pop()
            self._by_name.pop(op.name, None)
            for _, seen in self._control_stack:
                seen.discard(op)

    def get_operations(self) -> list:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError("The name %r refers to an Operation not in the graph." % name) from None

    def get_tensor_by_name(self, name: str) -> Tensor:
        op_name, _, index = name.rpartition(":")
        if not op_name or not index.isdigit():
            raise ValueError("The name %r looks like an (invalid) Operation name, not a Tensor." % name)
        op = self.get_operation_by_name(op_name)
        if int(index) >= len(op.outputs):
            raise KeyError("The name %r refers to a Tensor which does not exist." % name)
        return op.outputs[int(index)]

    def as_graph_element(self, obj: Any, allow_tensor: bool = True, allow_operation: bool = True) -> Any:
        if isinstance(obj, str):
            return self.get_tensor_by_name(obj) if ":" in obj else self.get_operation_by_name(obj)
        conv = getattr(obj, "_as_graph_element", None)
        if conv is not None:
            obj = conv()
        if isinstance(obj, (Tensor, Operation)):
            if obj.graph is not self:
                raise ValueError("%s is not an element of this graph." % obj)
            return obj
        raise TypeError("Can not convert a %s into a Tensor or Operation." % type(obj).__name__)

    # ---- collections
    def add_to_collection(self, name: str, value: Any) -> None:
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names: Any, value: Any) -> None:
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name: str) -> list:
        return self._collections.setdefault(name, [])

    def get_collection(self, name: str, scope: Optional[str] = None) -> list:
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        return [item for item in items if pattern.match(getattr(item, "name", "") or "")]

    def get_all_collection_keys(self) -> list:
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    # ---- misc
    def finalize(self) -> None:
        self._finalized = True

    @property
    def finalized(self) -> bool:
        return self._finalized

    @property
    def version(self) -> int:
        return self._version

    @property
    def graph_def_versions(self):
        from .graph_def import versions  # lazy: the GraphDef protos (see node_def)
        return versions()

    def as_graph_def(self, from_version: Optional[int] = None, add_shapes: bool = True):
        from .graph_def import graph_to_graph_def  # lazy: the GraphDef protos (see node_def)
        return graph_to_graph_def(self, add_shapes=add_shapes)

    def as_default(self):
        return _default_graph_stack.get_controller(self)

    def __enter__(self):  # pragma: no cover - TF allows `with g.as_default()` only
        raise AttributeError("use `with graph.as_default():`")


def _as_operation(x: Any) -> Optional[Operation]:
    if x is None:
        return None
    if isinstance(x, Operation):
        return x
    if isinstance(x, Tensor):
        return x.op
    op = getattr(x, "op", None)
    if isinstance(op, Operation):
        return op
    raise TypeError("Can not convert a %s into an Operation." % type(x).__name__)


class _DefaultGraphStack(threading.local):
    def __init__(self):
        self.stack: list = []
        self.global_default: Optional[Graph] = None

    def get_default(self) -> Graph:
        if self.stack:
            return self.stack[-1]
        if self.global_default is None:
            self.global_default = Graph()
        return self.global_default

    def reset(self) -> None:
        if self.stack:
            raise AssertionError("Do not use tf.reset_default_graph() inside a graph's as_default() block.")
        self.global_default = None

    @contextlib.contextmanager
    def get_controller(self, graph: Graph) -> Iterator[Graph]:
        self.stack.append(graph)
        try:
            yield graph
        finally:
            self.stack.pop()


_default_graph_stack = _DefaultGraphStack()


def get_default_graph() -> Graph:
    return _default_graph_stack.get_default()


def reset_default_graph() -> None:
    _default_graph_stack.reset()


def set_random_seed(seed: Optional[int]) -> None:
    get_default_graph().seed = seed


def name_scope(name: Optional[str], default_name: Optional[str] = None, values: Any = None):
    """TF1 ``tf.name_scope(name, default_name=None, values=None)``; yields the scope string ``'a/b/'``."""
    return get_default_graph().name_scope(name if name is not None else default_name)


def control_dependencies(control_inputs: Optional[Iterable[Any]]):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name: Any):
    return get_default_graph().device(device_name)


def colocate_with(op: Any, ignore_existing: bool = False):
    return get_default_graph().colocate_with(op, ignore_existing)


def add_to_collection(name: str, value: Any) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names: Any, value: Any) -> None:
    get_default_graph().add_to_collections(names, value)


def get_collection(key: str, scope: Optional[str] = None) -> list:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list:
    return get_default_graph().get_collection_ref(key)


# ---- the default session (a Session pushes itself here in ``as_default``; ``Tensor.eval`` and
# ``Operation.run`` use it)


class _DefaultSessionStack(threading.local):
    def __init__(self):
        self.stack: list = []

    def get_default(self) -> Any:
        return self.stack[-1] if self.stack else None

    def get_controller(self, session: Any):
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


def get_default_session() -> Any:
    return _default_session_stack.get_default()


def _eval_using_default_session(fetch: Any, feed_dict: Optional[dict], session: Any) -> Any:
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
