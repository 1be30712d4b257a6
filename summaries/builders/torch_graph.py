"""Graphs of other frameworks for TensorBoard's Graphs dashboard: a traced ``torch.nn.Module``
(``add_graph``) and an ONNX model file (``add_onnx_graph``), built with our protos.

:func:`torch_graph` lays the graph out node for node as ``torch.utils.tensorboard`` (and so
tensorboardX, which calls it) does. The model is traced with ``torch.jit.trace`` in eval mode and
the trace inlined; then

* each graph input that is used (the module itself excepted) is a node ``input/<name>``, op
  ``IO Node``; each graph output i (from 1) a node ``output/output.<i>`` whose input is the value
  returned;
* each output value of every other JIT node (``aten::linear``, ``prim::Constant``,
  ``prim::GetAttr`` of a parameter, ...) is a node named ``<scope>/<value name>``, op the JIT kind,
  inputs the scoped names of its operands, where ``<scope>`` is the model's class name followed
  by one ``Class[attribute]`` per submodule level (``CNN/Sub[block]/Conv2d[conv]``; a parameter
  read adds ``/<parameter name>``). An operand nobody in the graph produces (a submodule object)
  is named after the scope of its last reader;
* attrs: ``attr`` is the node's JIT attributes as ``str(dict)`` with quotes made spaces
  (``{ value : 0.1}``; ``""`` for IO nodes) and ``_output_shapes`` the value's shape when the
  trace knows it (``[1]`` for a non-tensor graph input or output).

torch and onnx are imported only here, and only when given a torch object / asked for ONNX.
"""
from __future__ import annotations

import contextlib
import os
import sys
import xml.etree.ElementTree as ElementTree
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from tfevents.proto import config_pb2, graph_pb2, step_stats_pb2, tensor_shape_pb2

__all__ = ["torch_graph", "onnx_graph", "openvino_graph", "TORCH_RUN_METADATA_TAG", "TENSORBOARDX_RUN_METADATA_TAG"]

# The TaggedRunMetadata tag the RunMetadata goes under: torch.utils.tensorboard's FileWriter writes
# "step1", tensorboardX's "profiler".
TORCH_RUN_METADATA_TAG = "step1"
TENSORBOARDX_RUN_METADATA_TAG = "profiler"
_PRODUCER = 22  # GraphDef.versions.producer that torch and tensorboardX write
_GETATTR = "prim::GetAttr"
_CLASS_TYPE = "ClassType"


# ------------------------------------------------------------------------------------ NodeDef pieces

def _node_def(name: str, op: str, inputs: Sequence[str], attr_string: Optional[str],
              shape: Optional[Sequence[int]]) -> graph_pb2.NodeDef:
    node = graph_pb2.NodeDef(name=name, op=op, input=list(inputs))
    if attr_string is not None:
        node.attr["attr"].s = attr_string.encode("utf-8")
    if shape is not None:
        dims = [tensor_shape_pb2.TensorShapeProto.Dim(size=int(n)) for n in shape]
        node.attr["_output_shapes"].list.shape.add().dim.extend(dims)
    return node


def _cpu_run_metadata() -> config_pb2.RunMetadata:
    """Step stats naming one CPU device and no node stats: what torch writes (it measures nothing)."""
    return config_pb2.RunMetadata(step_stats=step_stats_pb2.StepStats(
        dev_stats=[step_stats_pb2.DeviceStepStats(device="/device:CPU:0")]))


# ------------------------------------------------------------------------------------ torch side

def _torch_module(model: Any) -> Any:
    """The torch package, if ``model`` is a ``torch.nn.Module``; TypeError otherwise (torch is not
    imported for anything that cannot be one)."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(model, torch.nn.Module):
        raise TypeError("model must be a torch.nn.Module (a traced or scripted one too), got %s"
                        % type(model).__name__)
    return torch


def _example_inputs(torch: Any, input_to_model: Any) -> Any:
    """What ``torch.jit.trace`` gets: None is no argument; numpy arrays (alone or in a list/tuple)
    become tensors; a list is a tuple of positional arguments, as torch.jit.trace reads it."""
    import numpy as np

    def convert(item: Any) -> Any:
        return torch.from_numpy(np.ascontiguousarray(item)) if isinstance(item, np.ndarray) else item

    if input_to_model is None:
        return ()
    if isinstance(input_to_model, (list, tuple)):
        return tuple(convert(item) for item in input_to_model)
    return convert(input_to_model)


@contextlib.contextmanager
def _eval_mode(model: Any) -> Iterator[None]:
    training = model.training
    model.train(False)
    try:
        yield
    finally:
        model.train(training)


def _trace(torch: Any, model: Any, args: Any, strict: bool) -> Tuple[Any, Any]:
    """(traced module, its forward graph with every submodule call inlined)."""
    name = type(model).__name__
    with _eval_mode(model):
        try:
            traced = torch.jit.trace(model, args, strict=strict)
        except TypeError as err:
            raise TypeError("input_to_model does not fit %s.forward: %s" % (name, err)) from err
        except RuntimeError as err:
            raise RuntimeError("torch.jit.trace could not trace %s with input_to_model: %s" % (name, err)) from err
    # Inlined in place, as torch does: a copy would renumber the unnamed values (and so the node
    # names). The trace is new, except for a scripted model, which trace returns as it is: its
    # forward graph is left inlined (same behaviour, submodule calls expanded).
    graph = traced.graph
    torch._C._jit_pass_inline(graph)
    return traced, graph


def _value_shape(value: Any) -> Optional[List[int]]:
    """Shape of a graph input/output: the tensor's sizes (None if the trace left them open), ``[1]``
    for a value that is no tensor (a tuple, an int)."""
    try:
        return value.type().sizes()
    except RuntimeError:
        return [1]


def _node_attr_string(node: Any) -> str:
    """``str({name: value})`` of a JIT node's attributes, single quotes made spaces (TensorBoard's
    graph view stumbles on them)."""
    attrs = {key: getattr(node, node.kindOf(key))(key) for key in node.attributeNames()}
    return str(attrs).replace("'", " ")


class _Item:
    """One NodeDef to be: a graph input/output (``io`` = "input"/"output") or one output value of a
    JIT node (``scope`` set)."""

    __slots__ = ("name", "op", "inputs", "shape", "attr", "io", "scope")

    def __init__(self, name: str, op: str, inputs: List[str], shape: Optional[List[int]], attr: str,
                 io: Optional[str] = None, scope: Optional[str] = None) -> None:
        self.name, self.op, self.inputs, self.shape, self.attr = name, op, inputs, shape, attr
        self.io, self.scope = io, scope


def _module_names(torch: Any, traced: Any) -> Tuple[str, Dict[str, str]]:
    """(the model's class name, ``{'__module.a.b': 'Class[b]'}`` for every submodule)."""
    def class_name(module: Any) -> str:
        if isinstance(module, torch.jit.TracedModule):
            return module._name
        return getattr(module, "original_name", "Module")

    aliases = {path: "%s[%s]" % (class_name(module), path.split(".")[-1])
               for path, module in traced.named_modules(prefix="__module")}
    return class_name(traced), aliases


def _graph_items(torch: Any, graph: Any, traced: Any) -> List[_Item]:
    items: Dict[str, _Item] = {}  # by JIT value name, in NodeDef order
    for value in graph.inputs():
        if value.uses() and value.type().kind() != _CLASS_TYPE:
            items[value.debugName()] = _Item(value.debugName(), "IO Node", [], _value_shape(value), "", io="input")

    # JIT nodes: (kind, operand names, [(output name, shape)], attr string, raw scope)
    ops: List[Tuple[str, List[str], List[Tuple[str, Optional[List[int]]]], str, str]] = []
    getattr_scope: Dict[str, str] = {}  # output of a prim::GetAttr -> "__module.a/__module.a.b"
    for node in graph.nodes():
        scope = node.scopeName()
        if node.kind() == _GETATTR:
            out, parent = node.output(), node.input().node()
            if parent.kind() == _GETATTR:
                parent_scope = getattr_scope[parent.output().debugName()]
                scope = "%s/%s.%s" % (parent_scope, parent_scope.split("/")[-1], node.s("name"))
            else:
                scope = "__module." + node.s("name")
            getattr_scope[out.debugName()] = scope
            if out.type().kind() == _CLASS_TYPE:
                continue  # a submodule object: its scope names what is read from it
        outputs = [(v.debugName(), v.type().sizes() if v.isCompleteTensor() else None) for v in node.outputs()]
        ops.append((node.kind(), [v.debugName() for v in node.inputs()], outputs, _node_attr_string(node), scope))

    for i, value in enumerate(graph.outputs()):
        name = "output.%d" % (i + 1)
        items[name] = _Item(name, "IO Node", [value.debugName()], _value_shape(value), "", io="output")

    # Raw scopes "__module.a/__module.a.b/..." become "Model/ClassA[a]/ClassB[b]/...".
    model_name, aliases = _module_names(torch, traced)
    scoped_ops = []
    for kind, inputs, outputs, attr, raw_scope in ops:
        parts = [aliases.get(part, part.split(".")[-1]) for part in raw_scope.split("/")]
        scope = model_name + ("/" + "/".join(parts) if any(parts) else "")
        scoped_ops.append((inputs, scope))
        for name, shape in outputs:
            items[name] = _Item(name, kind, inputs, shape, attr, scope=scope)

    full: Dict[str, str] = {}
    for inputs, scope in scoped_ops:  # operands: under their (last) reader's scope...
        full.update((name, scope + "/" + name) for name in inputs)
    for key, item in items.items():  # ...unless something in the graph produces them
        full[key] = (item.io if item.io is not None else item.scope) + "/" + item.name
    for item in items.values():
        item.inputs = [full.get(name, name) for name in item.inputs]
        item.name = full.get(item.name, item.name)
    return list(items.values())


def torch_graph(model: Any, input_to_model: Any = None, verbose: bool = False,
                use_strict_trace: bool = True) -> Tuple[graph_pb2.GraphDef, config_pb2.RunMetadata]:
    """(GraphDef, RunMetadata) of a ``torch.nn.Module`` for the Graphs dashboard, laid out as
    ``torch.utils.tensorboard`` / tensorboardX ``add_graph`` write it (see the module docstring).

    ``input_to_model``: the example input the model is traced with: a tensor, a tuple or list of
    positional arguments (numpy arrays are turned into tensors), None for a forward that takes
    none. The model is traced in eval mode and its training flag restored. ``verbose`` prints the
    inlined JIT graph. ``use_strict_trace`` is ``torch.jit.trace``'s ``strict`` (False lets the
    model return lists and dicts). The RunMetadata holds step stats naming ``/device:CPU:0`` only
    (as torch's); the writer puts it under tag :data:`TORCH_RUN_METADATA_TAG`.

    Errors: TypeError for a model that is no ``torch.nn.Module``, non-bool flags, or an input the
    model's forward does not accept; RuntimeError when ``torch.jit.trace`` fails.
    """
    torch = _torch_module(model)
    for flag, name in ((verbose, "verbose"), (use_strict_trace, "use_strict_trace")):
        if not isinstance(flag, bool):
            raise TypeError("%s must be a bool, got %s" % (name, type(flag).__name__))
    traced, graph = _trace(torch, model, _example_inputs(torch, input_to_model), use_strict_trace)
    if verbose:
        print(graph)
    nodes = [_node_def(i.name, i.op, i.inputs, i.attr, i.shape) for i in _graph_items(torch, graph, traced)]
    return graph_pb2.GraphDef(node=nodes, versions=graph_pb2.VersionDef(producer=_PRODUCER)), _cpu_run_metadata()


# ------------------------------------------------------------------------------------------- ONNX

def _onnx_model(model: Any) -> Any:
    if type(model).__name__ == "ModelProto" and hasattr(model, "graph"):
        return model
    if not isinstance(model, (str, bytes, os.PathLike)):
        raise TypeError("onnx_graph needs the path of an .onnx file (or an onnx.ModelProto), got %s"
                        % type(model).__name__)
    try:
        import onnx
    except ImportError:
        raise ImportError("onnx_graph needs the 'onnx' package to read %r: pip install onnx" % (model,)) from None
    path = os.fsdecode(model)
    if not os.path.isfile(path):
        raise FileNotFoundError("ONNX model file not found: %r" % path)
    return onnx.load(path)


def onnx_graph(model: Union[str, os.PathLike, Any]) -> graph_pb2.GraphDef:
    """GraphDef of an ONNX model for the Graphs dashboard, laid out as tensorboardX's
    ``add_onnx_graph`` writes it.

    ``model``: the path of an ``.onnx`` file (read with ``onnx.load``; the ``onnx`` package is
    imported only here) or a loaded ``onnx.ModelProto``. Nodes, in order:

    * each graph input, then each graph output: op ``Variable``, no inputs, attrs ``dtype`` (the
      ONNX ``elem_type`` number stored as is in ``AttrValue.type``, as tensorboardX does: the
      numbers agree with TensorFlow's DataType for float only) and ``shape`` (each dim's
      ``dim_value``; a symbolic dim is 0);
    * each ONNX node, named after its first output: op its ``op_type``, inputs as in ONNX,
      attr ``parameters``: its attributes as ``"<name> = <value>[ = ...], ..."`` (every set field of
      each AttributeProto, ``str()``-ed, joined with `` = ``).

    Initializers get no node. Errors: TypeError for another argument type, ImportError naming
    the package when ``onnx`` is missing, FileNotFoundError, ValueError for a node without outputs.
    """
    graph = _onnx_model(model).graph
    nodes = []
    for value in list(graph.input) + list(graph.output):
        tensor_type = value.type.tensor_type
        node = graph_pb2.NodeDef(name=value.name, op="Variable")
        node.attr["dtype"].type = tensor_type.elem_type
        node.attr["shape"].shape.dim.extend(
            tensor_shape_pb2.TensorShapeProto.Dim(size=d.dim_value) for d in tensor_type.shape.dim)
        nodes.append(node)
    for index, onnx_node in enumerate(graph.node):
        if not onnx_node.output:
            raise ValueError("ONNX node %d (%s %r) has no outputs to name it by"
                             % (index, onnx_node.op_type, onnx_node.name))
        params = ", ".join(" = ".join(str(value) for _, value in attribute.ListFields())
                           for attribute in onnx_node.attribute)
        node = graph_pb2.NodeDef(name=onnx_node.output[0], op=onnx_node.op_type, input=list(onnx_node.input))
        node.attr["parameters"].s = params.encode("utf-8")
        nodes.append(node)
    return graph_pb2.GraphDef(node=nodes, versions=graph_pb2.VersionDef(producer=_PRODUCER))


def openvino_graph(xml_path: Union[str, os.PathLike]) -> graph_pb2.GraphDef:
    """GraphDef of an OpenVINO IR model (its ``.xml``) for the Graphs dashboard, as tensorboardX's
    ``add_openvino_graph`` writes it: one node per edge of ``<edges>``, named after the edge's ``to-layer``'s
    ``name``, op ``op``, its one input the ``from-layer``'s name, an empty ``parameters`` attr. (A layer with
    several inputs so appears once per input, and a layer no edge enters not at all, as in tensorboardX.)
    Read with the standard library's ElementTree; FileNotFoundError, or ValueError for XML without
    ``<layers>``/``<edges>`` or an edge naming an unknown layer."""
    root = ElementTree.parse(os.fspath(xml_path)).getroot()
    layers, edges = root.find("layers"), root.find("edges")
    if layers is None or edges is None:
        raise ValueError("%s is not an OpenVINO IR model: no <layers> or <edges>" % os.fspath(xml_path))
    names = {layer.attrib["id"]: layer.attrib["name"] for layer in layers}
    nodes = []
    for edge in edges:
        source, target = edge.attrib["from-layer"], edge.attrib["to-layer"]
        if source not in names or target not in names:
            raise ValueError("%s: edge %s -> %s names a layer not in <layers>" % (os.fspath(xml_path), source, target))
        node = graph_pb2.NodeDef(name=names[target], op="op", input=[names[source]])
        node.attr["parameters"].s = b""
        nodes.append(node)
    return graph_pb2.GraphDef(node=nodes, versions=graph_pb2.VersionDef(producer=_PRODUCER))
