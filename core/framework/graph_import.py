"""``tf.import_graph_def``: rebuild the ops of a GraphDef (written by TensorFlow or by ``graph_def.py``) in the
default graph through the op registry, so they run in our Session and differentiate with ``tf.gradients``.

This is the inverse of ``graph_def.py``: each NodeDef's AttrValues are decoded (``tensor`` to a read-only numpy
array, ``type`` to a DType, ``shape`` to a TensorShape, ``s`` to str, lists to lists; attrs starting with ``_``
such as ``_output_shapes`` and ``_class`` are dropped, the former only merged into the static shapes), its
inputs (``name``, ``name:i``, ``^control``) are wired to the ops already imported or to ``input_map``, and the
op is created with ``registry.create_op`` under the prefix (``import/`` by default, made unique as a name scope).
NodeDefs may come in any order; a while loop's back edges (``NextIteration`` into ``Merge``) are closed after
the loop body is imported.

TF1 control flow: cond graphs (Switch/Merge) run, since our Session evaluates dead values from the ops alone.
A GraphDef does not carry the WhileContext of a ``while_loop`` (TF rebuilds it from the ``while_context``
collection of a MetaGraphDef, a proto we have no model of yet), so the ops of an imported loop get a
placeholder context and running them (or differentiating through them) raises a NotImplementedError naming
the loop op.
"""
from __future__ import annotations

import heapq
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import dtypes
from .graph import MANUAL_CONTROL_DEPENDENCIES, Operation, Tensor, get_default_graph
from .registry import REGISTRY, SPLAT, convert_to_tensor, create_op
from .tensor_shape import TensorShape

_LOOP_TYPES = frozenset(["Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration", "LoopCond"])

# TensorProto dtype enum -> (numpy dtype, the repeated field scalars/lists use when tensor_content is empty)
_TENSOR_FIELDS = {
    1: (np.float32, "float_val"), 2: (np.float64, "double_val"), 3: (np.int32, "int_val"),
    4: (np.uint8, "int_val"), 5: (np.int16, "int_val"), 6: (np.int8, "int_val"), 7: (object, "string_val"),
    9: (np.int64, "int64_val"), 10: (np.bool_, "bool_val"), 17: (np.uint16, "int_val"),
    19: (np.float16, "half_val"), 22: (np.uint32, "uint32_val"), 23: (np.uint64, "uint64_val"),
}


def tensor_to_ndarray(proto: Any) -> np.ndarray:
    """The numpy array of a TensorProto (the inverse of ``graph_def.tensor_proto``; TF's ``make_ndarray``)."""
    if proto.dtype not in _TENSOR_FIELDS:
        raise ValueError("Cannot import a TensorProto of dtype enum %d (supported: %s)"
                         % (proto.dtype, sorted(_TENSOR_FIELDS)))
    npd, field = _TENSOR_FIELDS[proto.dtype]
    shape = [d.size for d in proto.tensor_shape.dim]
    n = int(np.prod(shape)) if shape else 1
    if proto.tensor_content:
        return np.frombuffer(proto.tensor_content, dtype=np.dtype(npd).newbyteorder("<")).astype(npd).reshape(shape)
    values = list(getattr(proto, field))
    if npd is object:
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
    elif field == "half_val":
        arr = np.asarray(values, dtype=np.uint16).view(np.float16)
    else:
        arr = np.asarray(values, dtype=npd)
    if arr.size == n:
        return arr.reshape(shape)
    if arr.size == 0:
        out = np.zeros(shape, dtype=npd) if npd is not object else np.full(shape, b"", dtype=object)
        return out
    # TF writes a constant filled with one value as that value once (the last value repeats)
    out = np.empty(n, dtype=arr.dtype)
    out[:arr.size] = arr
    out[arr.size:] = arr[-1]
    return out.reshape(shape)


def _is_splat(proto: Any) -> bool:
    """A TensorProto that holds one value for a shape of more elements (TF's ``constant(v, shape=...)``)."""
    n = int(np.prod([d.size for d in proto.tensor_shape.dim])) if proto.tensor_shape.dim else 1
    if proto.tensor_content or n <= 1 or proto.dtype not in _TENSOR_FIELDS:
        return False
    return len(getattr(proto, _TENSOR_FIELDS[proto.dtype][1])) == 1


def shape_from_proto(proto: Any) -> TensorShape:
    """TensorShape of a TensorShapeProto (``unknown_rank`` -> unknown shape, size -1 -> unknown dimension)."""
    if proto.unknown_rank:
        return TensorShape(None)
    return TensorShape([None if d.size < 0 else d.size for d in proto.dim])


def _dtype(enum: int, where: str) -> dtypes.DType:
    try:
        return dtypes.as_dtype(enum)
    except TypeError:
        raise ValueError("%s: dtype enum %d has no tfevents.core DType" % (where, enum)) from None


def attr_from_proto(value: Any, where: str = "attr") -> Any:
    """The Python value of an AttrValue (the inverse of ``graph_def.attr_value``)."""
    kind = value.WhichOneof("value")
    if kind == "s":
        try:
            return value.s.decode("utf-8")
        except UnicodeDecodeError:
            return value.s
    if kind in ("i", "f", "b"):
        return getattr(value, kind)
    if kind == "type":
        return _dtype(value.type, where)
    if kind == "shape":
        return shape_from_proto(value.shape)
    if kind == "tensor":
        arr = tensor_to_ndarray(value.tensor)
        arr.setflags(write=False)
        return arr
    if kind == "list":
        lst = value.list
        for field in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
            items = list(getattr(lst, field))
            if not items:
                continue
            if field == "s":
                return [s.decode("utf-8", "replace") for s in items]
            if field == "type":
                return [_dtype(t, where) for t in items]
            if field == "shape":
                return [shape_from_proto(s) for s in items]
            if field == "tensor":
                return [tensor_to_ndarray(t) for t in items]
            if field == "func":
                raise ValueError("%s: function-valued attrs (functional control flow, tf.function) cannot be "
                                 "imported" % where)
            return items
        return []
    if kind is None:
        return None
    raise ValueError("%s: AttrValue of kind %r cannot be imported (function attrs and placeholders are not "
                     "supported)" % (where, kind))


class _ImportedLoopContext:
    """The context of ops of an imported TF1 ``while_loop``: its WhileContext is not rebuilt (see the module
    docstring), so anything that needs it (a Session running the loop, gradients) fails clearly here."""

    def __init__(self, op_name: str):
        self._op_name = op_name

    def __getattr__(self, item: str):
        raise NotImplementedError(
            "Op %r belongs to a TF1 while_loop imported from a GraphDef: tfevents.core does not rebuild the "
            "loop's WhileContext on import, so imported while loops cannot be run or differentiated. Build the "
            "loop with tf.while_loop instead." % self._op_name)


def _parse_input(name: str):
    """``('op', index, is_control)`` of a NodeDef input string."""
    if name.startswith("^"):
        return name[1:], -1, True
    op_name, sep, index = name.rpartition(":")
    if sep and index.isdigit():
        return op_name, int(index), False
    return name, 0, False


def _topological(nodes: list) -> list:
    """NodeDefs in an order where every input comes first, except NextIteration -> Merge back edges."""
    by_name = {n.name: n for n in nodes}
    pending: Dict[str, int] = {}
    users: Dict[str, list] = {}
    for n in nodes:
        deps = set()
        for inp in n.input:
            src, _, _ = _parse_input(inp)
            if src not in by_name:
                continue          # from input_map, or an error reported when the node is created
            if n.op in ("Merge", "RefMerge") and by_name[src].op in ("NextIteration", "RefNextIteration"):
                continue          # a loop's back edge, closed afterwards
            deps.add(src)
        pending[n.name] = len(deps)
        for d in deps:
            users.setdefault(d, []).append(n.name)
    position = {n.name: i for i, n in enumerate(nodes)}
    ready = [i for i, n in enumerate(nodes) if pending[n.name] == 0]     # a heap: keep the GraphDef's order
    order = []
    while ready:
        node = nodes[heapq.heappop(ready)]
        order.append(node)
        for u in users.get(node.name, ()):
            pending[u] -= 1
            if pending[u] == 0:
                heapq.heappush(ready, position[u])
    if len(order) != len(nodes):
        stuck = sorted(n for n, c in pending.items() if c > 0)
        raise ValueError("GraphDef has a cycle (not a while loop's back edge) among nodes: %s"
                         % ", ".join(stuck[:10]))
    return order


def _as_graph_def(graph_def: Any):
    from tfevents.proto import graph_pb2  # lazy: protobuf's GraphDef loads when a graph is imported, not with core
    if isinstance(graph_def, bytes):
        return graph_pb2.GraphDef.FromString(graph_def)
    if isinstance(graph_def, graph_pb2.GraphDef):
        return graph_def
    if hasattr(graph_def, "SerializeToString") and hasattr(graph_def, "node"):   # TF's own GraphDef class
        return graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
    raise TypeError("graph_def must be a GraphDef proto, got %s" % type(graph_def).__name__)


def _normalize_input_map(input_map: Optional[dict]) -> dict:
    out = {}
    for key, value in (input_map or {}).items():
        if not isinstance(key, str):
            raise TypeError("input_map keys must be strings (tensor names such as 'x:0'), got %r" % (key,))
        src, index, control = _parse_input(key)
        if control:
            if not isinstance(value, Operation):
                value = getattr(value, "op", None)
            if not isinstance(value, Operation):
                raise TypeError("input_map[%r] must be an Operation" % key)
            out[(src, -1)] = value
        else:
            out[(src, index)] = convert_to_tensor(value)
    return out


def import_graph_def(graph_def: Any, input_map: Optional[dict] = None,
                     return_elements: Optional[Sequence[str]] = None, name: Optional[str] = None,
                     op_dict: Any = None, producer_op_list: Any = None,
                     _skip: Optional[set] = None) -> Optional[List[Union[Tensor, Operation]]]:
    """TF1 ``tf.import_graph_def``: add the nodes of ``graph_def`` to the default graph under the prefix
    ``name`` (default ``import``, made unique like a name scope; ``""`` imports the names unchanged).

    ``input_map`` maps names in ``graph_def`` (``'x:0'``, ``'x'`` = ``'x:0'``, ``'^op'``) to Tensors (or
    Operations for ``^``) of the current graph that replace them; ``return_elements`` names the imported
    Tensors (``'op:0'``) or Operations (``'op'``) to return. ``op_dict`` and ``producer_op_list`` are accepted
    for compatibility and ignored (ops come from the registry). Raises ValueError on a node whose op type is
    not registered, an input that does not exist, or input_map keys that name nothing in ``graph_def``."""
    graph_def = _as_graph_def(graph_def)
    graph = get_default_graph()
    mapped = _normalize_input_map(input_map)
    _load_op_modules()
    nodes = [n for n in graph_def.node if not (_skip and n.name in _skip)]
    unknown = [n for n in nodes if n.op not in REGISTRY]
    if unknown:
        n = unknown[0]
        raise ValueError("Cannot import node %r: op type %r is not registered in tfevents.core%s"
                         % (n.name, n.op, "" if len(unknown) == 1 else " (nor are: %s)" % ", ".join(
                             sorted({"%s (%s)" % (u.op, u.name) for u in unknown[1:]})[:8])))
    names_in_def = {n.name for n in nodes}
    used_keys = set()
    with graph.name_scope(None if name == "" else (name or "import")) as scope:
        pass
    prefix = scope
    created: Dict[str, Operation] = {}
    back_edges = []
    loop_ops = []

    def source(inp: str, node) -> Any:
        src, index, control = _parse_input(inp)
        key = (src, -1 if control else index)
        if key in mapped:
            used_keys.add(key)
            return mapped[key]
        if src not in names_in_def:
            raise ValueError("Node %r has an input %r that is neither in the GraphDef nor in input_map"
                             % (node.name, inp))
        op = created[src]
        if control:
            return op
        if index >= len(op.outputs):
            raise ValueError("Node %r: input %r names output %d of %r, which has %d outputs"
                             % (node.name, inp, index, src, len(op.outputs)))
        return op.outputs[index]

    with graph.control_dependencies(None):
        for node in _topological(nodes):
            where = "node %r (%s)" % (node.name, node.op)
            attrs = {}
            for key, value in node.attr.items():
                if not key.startswith("_") or key == MANUAL_CONTROL_DEPENDENCIES:
                    attrs[key] = attr_from_proto(value, "%s attr %r" % (where, key))
            if node.op == "Const" and _is_splat(node.attr["value"].tensor):
                attrs[SPLAT] = True
            inputs, controls = [], []
            for i, inp in enumerate(node.input):
                src, _, control = _parse_input(inp)
                if control:
                    controls.append(source(inp, node))
                elif (node.op in ("Merge", "RefMerge") and src in names_in_def and src not in created
                      and (src, _parse_input(inp)[1]) not in mapped):
                    back_edges.append((node, i, inp))
                    inputs.append(None)
                else:
                    inputs.append(source(inp, node))
            if any(t is None for t in inputs):       # a loop Merge: stand in its entry value for the back edge
                entry = next((t for t in inputs if t is not None), None)
                if entry is None:
                    raise ValueError("%s: every input is a back edge" % where)
                inputs = [entry if t is None else t for t in inputs]
            try:
                op = create_op(node.op, inputs, attrs, name=prefix + node.name + "/", graph=graph)
            except ValueError as e:
                raise ValueError("Cannot import %s: %s" % (where, e)) from e
            op._add_control_inputs(controls)
            op.device = node.device
            _merge_output_shapes(op, node)
            _mark_name_used(graph, op.name)
            created[node.name] = op
            if node.op in _LOOP_TYPES:
                loop_ops.append(op)
        for node, i, inp in back_edges:
            created[node.name]._update_input(i, source(inp, node))
    for op in loop_ops:
        op._set_control_flow_context(_ImportedLoopContext(op.name))
    unused = sorted(k for k in mapped if k not in used_keys)
    if unused:
        raise ValueError("Attempted to map inputs that were not found in graph_def: [%s]"
                         % ", ".join(("^" + s) if i < 0 else "%s:%d" % (s, i) for s, i in unused))
    if return_elements is None:
        return None
    out = []
    for element in return_elements:
        src, index, control = _parse_input(element)
        if src not in created:
            raise ValueError("Requested return_element %r not found in graph_def." % element)
        op = created[src]
        if ":" in element and not control:
            if index >= len(op.outputs):
                raise ValueError("Requested return_element %r: %r has %d outputs" % (element, src,
                                                                                       len(op.outputs)))
            out.append(op.outputs[index])
        else:
            out.append(op)
    return out


def _load_op_modules() -> None:
    """Import the lazily loaded modules that register ops (optimizer updates, nn, summaries, RestoreV2)."""
    import importlib
    for module in ("..train", "..train.checkpoints.checkpoint_utils", "..nn", "..summary", "..losses"):
        importlib.import_module(module, __package__)


def _merge_output_shapes(op: Operation, node: Any) -> None:
    """Refine the inferred static shapes with the GraphDef's ``_output_shapes`` where they agree."""
    shapes = node.attr.get("_output_shapes") if "_output_shapes" in node.attr else None
    if shapes is None:
        return
    for t, proto in zip(op.outputs, shapes.list.shape):
        try:
            t.set_shape(shape_from_proto(proto))
        except ValueError:
            pass


def _mark_name_used(graph: Any, name: str) -> None:
    """Reserve an imported op's name (and its scopes) so later ops and scopes get fresh names, as in TF."""
    parts = name.split("/")
    for k in range(1, len(parts) + 1):
        key = "/".join(parts[:k]).lower()
        if key not in graph._names_in_use:
            graph._names_in_use[key] = 1
