"""Graph -> GraphDef, the way TF 1.x writes it: NodeDefs with TF op names, ``x:1`` and ``^ctrl`` inputs,
typed attrs (``T``, ``dtype``, ``shape``, ``value``, ``transpose_a`` ...) and ``_output_shapes``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tfevents.proto import graph_pb2, tensor_pb2, tensor_shape_pb2

from . import dtypes
from .graph import MANUAL_CONTROL_DEPENDENCIES
from .registry import SPLAT
from .tensor_shape import TensorShape

PRODUCER_VERSION = 27   # the GraphDef version TF 1.x graphs of that era carry

# ops whose inputs do not determine a "T" attr (they carry dtype/SrcT/... or nothing)
_NO_T = {"Const", "Placeholder", "PlaceholderWithDefault", "VariableV2", "NoOp", "Cast", "IsVariableInitialized",
         "GatherV2", "Range", "LogicalAnd", "LogicalOr", "LogicalNot", "All", "Any", "MergeSummary",
         "AudioSummaryV2", "GatherNd", "LoopCond", "ControlTrigger", "StackV2", "StackPopV2",
         "UniformCandidateSampler", "LogUniformCandidateSampler", "FixedUnigramCandidateSampler",
         "LearnedUnigramCandidateSampler", "ComputeAccidentalHits",
         "TensorArrayV3", "TensorArrayGradV3", "TensorArrayReadV3", "TensorArrayGatherV3", "TensorArrayConcatV3",
         "TensorArraySizeV3", "TensorArrayCloseV3", "RestoreV2", "SaveV2", "MergeV2Checkpoints", "ShardedFilename",
         "StaticRegexFullMatch", "StringJoin"}


def versions() -> graph_pb2.VersionDef:
    return graph_pb2.VersionDef(producer=PRODUCER_VERSION)


def shape_proto(shape: TensorShape) -> tensor_shape_pb2.TensorShapeProto:
    proto = tensor_shape_pb2.TensorShapeProto()
    if shape.dims is None:
        proto.unknown_rank = True
    else:
        for d in shape.dims:
            proto.dim.add(size=-1 if d is None else d)
    return proto


def tensor_proto(value: np.ndarray, splat: bool = False) -> tensor_pb2.TensorProto:
    """TensorProto of a numpy array (numbers in ``tensor_content``, strings in ``string_val``); a scalar, or with
    ``splat`` an array of one repeated value (TF's ``constant(v, shape=...)``), as that value once in the typed
    field."""
    value = np.asarray(value)
    dtype = dtypes.numpy_dtype_to_tf(value.dtype)
    proto = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum,
                                   tensor_shape=shape_proto(TensorShape(list(value.shape))))
    if splat and value.size > 1:
        value = value.reshape(-1)[:1]
    if dtype is dtypes.string:
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode("utf-8") for v in value.reshape(-1))
    elif value.size == 1:
        # scalars the way TF writes them: in the typed repeated field
        item = value.reshape(-1)[0]
        if dtype is dtypes.float32:
            proto.float_val.append(float(item))
        elif dtype is dtypes.float64:
            proto.double_val.append(float(item))
        elif dtype in (dtypes.int32, dtypes.uint8):
            proto.int_val.append(int(item))
        elif dtype is dtypes.int64:
            proto.int64_val.append(int(item))
        elif dtype is dtypes.bool:
            proto.bool_val.append(bool(item))
        elif dtype is dtypes.float16:
            proto.half_val.append(int(np.asarray(item, np.float16).view(np.uint16)))
    else:
        proto.tensor_content = np.ascontiguousarray(value).astype(value.dtype.newbyteorder("<")).tobytes()
    return proto


def attr_value(value: Any) -> graph_pb2.AttrValue:
    """AttrValue of a Python attr (bool, int, float, str, DType, TensorShape, ndarray or a list of those)."""
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return graph_pb2.AttrValue(b=bool(value))
    if isinstance(value, (int, np.integer)):
        return graph_pb2.AttrValue(i=int(value))
    if isinstance(value, (float, np.floating)):
        return graph_pb2.AttrValue(f=float(value))
    if isinstance(value, str):
        return graph_pb2.AttrValue(s=value.encode("utf-8"))
    if isinstance(value, bytes):
        return graph_pb2.AttrValue(s=value)
    if isinstance(value, dtypes.DType):
        return graph_pb2.AttrValue(type=value.as_datatype_enum)
    if isinstance(value, TensorShape):
        return graph_pb2.AttrValue(shape=shape_proto(value))
    if isinstance(value, np.ndarray):
        return graph_pb2.AttrValue(tensor=tensor_proto(value))
    if isinstance(value, (list, tuple)):
        lst = graph_pb2.AttrValue.ListValue()
        for v in value:
            if isinstance(v, bool):
                lst.b.append(v)
            elif isinstance(v, (int, np.integer)):
                lst.i.append(int(v))
            elif isinstance(v, float):
                lst.f.append(v)
            elif isinstance(v, str):
                lst.s.append(v.encode("utf-8"))
            elif isinstance(v, dtypes.DType):
                lst.type.append(v.as_datatype_enum)
            elif isinstance(v, TensorShape):
                lst.shape.add().CopyFrom(shape_proto(v))
        return graph_pb2.AttrValue(list=lst)
    raise TypeError("Cannot encode attr value %r" % (value,))


def node_def(op, add_shapes: bool = True) -> graph_pb2.NodeDef:
    node = graph_pb2.NodeDef(name=op.name, op=op.type, device=op.device)
    for t in op.inputs:
        node.input.append(t.op.name if t.value_index == 0 else "%s:%d" % (t.op.name, t.value_index))
    for c in op.control_inputs:
        node.input.append("^" + c.name)
    attrs = node.attr
    for key, value in op.attrs.items():
        if key.startswith("_") and key != MANUAL_CONTROL_DEPENDENCIES:
            continue
        try:
            if key == "value" and op.attrs.get(SPLAT):
                attrs[key].CopyFrom(graph_pb2.AttrValue(tensor=tensor_proto(value, splat=True)))
            else:
                attrs[key].CopyFrom(attr_value(value))
        except TypeError:
            continue
    if op.inputs and "T" not in op.attrs and op.type not in _NO_T:
        attrs["T"].CopyFrom(graph_pb2.AttrValue(type=op.inputs[0].dtype.as_datatype_enum))
    type_attrs = op.opdef.type_attrs if op.opdef is not None else {}
    for key, position in type_attrs.items():
        if key not in op.attrs and op.inputs:
            attrs[key].CopyFrom(graph_pb2.AttrValue(type=op.inputs[position].dtype.as_datatype_enum))
    if add_shapes and op.outputs:
        lst = graph_pb2.AttrValue.ListValue()
        for t in op.outputs:
            lst.shape.add().CopyFrom(shape_proto(t.shape))
        attrs["_output_shapes"].CopyFrom(graph_pb2.AttrValue(list=lst))
    return node


def graph_to_graph_def(graph, add_shapes: bool = True) -> graph_pb2.GraphDef:
    """The GraphDef of ``graph`` (nodes in creation order, versions.producer = 27)."""
    gd = graph_pb2.GraphDef(versions=versions())
    gd.node.extend(node_def(op, add_shapes) for op in graph._ops)
    return gd
