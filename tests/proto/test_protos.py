"""The generated protos: importable, fresh, and wire-identical to TensorBoard's.

The descriptor comparison and the round trips need tensorboard; the import test runs with
protobuf alone (CI runs this file again under the oldest supported protobuf).
"""
import importlib
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "scripts"))

PROTO_DIR = os.path.join(REPO, "proto")
OURS = sorted(p[:-len(".proto")] for p in os.listdir(PROTO_DIR) if p.endswith(".proto"))
TENSORBOARD = [
    "tensorboard.compat.proto.%s_pb2" % m for m in (
        "types", "tensor_shape", "resource_handle", "tensor", "summary", "histogram", "event", "graph", "node_def",
        "attr_value", "versions", "function", "op_def", "full_type", "graph_debug_info", "step_stats",
        "tensor_description", "allocation_description", "cost_graph", "config", "debug", "meta_graph", "saver",
        "struct", "variable", "trackable_object_graph", "saved_object_graph")
] + ["tensorboard.plugins.text.plugin_data_pb2", "tensorboard.plugins.pr_curve.plugin_data_pb2",
     "tensorboard.plugins.hparams.api_pb2", "tensorboard.plugins.hparams.plugin_data_pb2",
     "tensorboard.plugins.custom_scalar.layout_pb2", "tensorboard.plugins.mesh.plugin_data_pb2",
     "tensorboard.plugins.projector.projector_config_pb2"]
# Mirrored protos TensorBoard has no copy of: compared with TensorFlow's own (the V2 checkpoint index's messages,
# the control-flow contexts of a MetaGraphDef's collections).
TENSORFLOW = ["tensorflow.core.protobuf.tensor_bundle_pb2", "tensorflow.core.framework.tensor_slice_pb2",
              "tensorflow.core.protobuf.control_flow_pb2"]
# The transitive comparison starts here: (TensorBoard module, message), and every message of the plugin modules.
ROOTS = [("tensorboard.compat.proto.event_pb2", "Event"), ("tensorboard.compat.proto.graph_pb2", "GraphDef"),
         ("tensorboard.compat.proto.meta_graph_pb2", "MetaGraphDef"),
         ("tensorboard.compat.proto.config_pb2", "RunMetadata"), ("tensorboard.compat.proto.config_pb2", "RunOptions")]
PLUGIN_MODULES = TENSORBOARD[-7:]
# TensorBoard's proto package -> ours (the plugins' own packages fold into ours; well-known types stay).
PACKAGES = {"tensorboard": "tfevents", "tensorboard.hparams": "tfevents.hparams", "tensorboard.mesh": "tfevents",
            "tensorboard.projector": "tfevents", "google.protobuf": "google.protobuf", "tensorflow": "tfevents"}


def is_repeated(field):
    """FieldDescriptor.label is gone in protobuf 7; is_repeated is missing before 5."""
    if hasattr(field, "is_repeated"):
        return field.is_repeated
    return field.label == field.LABEL_REPEATED


def our_modules():
    return [importlib.import_module("tfevents.proto.%s_pb2" % m) for m in OURS]


def our_name(descriptor):
    """The full name our counterpart of a TensorBoard message or enum descriptor has."""
    package = descriptor.file.package
    assert package in PACKAGES, "TensorBoard proto package %s has no counterpart here" % package
    return PACKAGES[package] + descriptor.full_name[len(package):]


def messages(module):
    """{full name: descriptor} for every message of a module, nested ones and map entries included."""
    out = {}

    def walk(d):
        out[d.full_name] = d
        for n in d.nested_types:
            walk(n)
    for d in module.DESCRIPTOR.message_types_by_name.values():
        walk(d)
    return out


def field_differences(theirs, ours):
    """How our message descriptor differs from TensorBoard's, field by field (empty when equal)."""
    diffs = []
    if ours.GetOptions().map_entry != theirs.GetOptions().map_entry:
        diffs.append("map entry or not")
    for t in theirs.fields:
        f = ours.fields_by_number.get(t.number)
        where = "%s field %d (%s)" % (theirs.full_name, t.number, t.name)
        if f is None:
            diffs.append("%s is missing here" % where)
            continue
        if (f.name, f.type, is_repeated(f)) != (t.name, t.type, is_repeated(t)):
            diffs.append("%s: name, type or repeated differs: ours %s" % (where, (f.name, f.type, is_repeated(f))))
        if hasattr(t, "has_presence") and f.has_presence != t.has_presence:
            diffs.append("%s: presence (proto2 / optional) differs" % where)
        oneof = [None if x.containing_oneof is None else x.containing_oneof.name for x in (f, t)]
        if oneof[0] != oneof[1]:
            diffs.append("%s: oneof differs: ours %s, theirs %s" % (where, oneof[0], oneof[1]))
        if t.message_type is not None and (f.message_type is None or
                                           f.message_type.full_name != our_name(t.message_type)):
            diffs.append("%s: message type %s is not our %s" % (where, f.message_type and f.message_type.full_name,
                                                                 our_name(t.message_type)))
        if t.enum_type is not None:
            if f.enum_type is None or f.enum_type.full_name != our_name(t.enum_type):
                diffs.append("%s: enum type is not our %s" % (where, our_name(t.enum_type)))
            elif {v.number: v.name for v in f.enum_type.values} != {v.number: v.name for v in t.enum_type.values}:
                diffs.append("%s: values of enum %s differ" % (where, t.enum_type.full_name))
    for f in ours.fields:
        if f.number not in theirs.fields_by_number:
            diffs.append("%s.%s = %d is not a TensorBoard field" % (ours.full_name, f.name, f.number))
    return diffs


def reachable(roots):
    """Every message descriptor reachable from `roots` through message fields (map entries included)."""
    found, stack = {}, list(roots)
    while stack:
        d = stack.pop()
        if d.full_name not in found:
            found[d.full_name] = d
            stack.extend(f.message_type for f in d.fields if f.message_type is not None)
    return found


def test_every_module_imports_and_round_trips_an_event():
    from tfevents.proto import event_pb2, summary_pb2
    our_modules()
    event = event_pb2.Event(wall_time=1.5, step=-3)
    event.summary.value.add(tag="loss", simple_value=0.0)
    event.summary.value.add(tag="h").histo.bucket.extend([1.0, 2.0])
    parsed = event_pb2.Event.FromString(event.SerializeToString())
    assert parsed == event
    assert parsed.summary.value[0].WhichOneof("value") == "simple_value"  # a oneof member is kept even at 0
    assert isinstance(parsed.summary, summary_pb2.Summary)


@pytest.fixture(scope="module")
def tensorboard_messages():
    """{our full name: TensorBoard's descriptor} for every message of TensorBoard's modules we mirror."""
    pytest.importorskip("tensorboard")
    found = {}
    for name in TENSORBOARD + TENSORFLOW:
        module = pytest.importorskip(name) if name in TENSORFLOW else importlib.import_module(name)
        found.update({our_name(d): d for d in messages(module).values()})
    return found


def test_our_messages_match_tensorboard(tensorboard_messages):
    for module in our_modules():
        for name, ours in messages(module).items():
            theirs = tensorboard_messages.get(name)
            assert theirs is not None, "%s has no TensorBoard counterpart" % name
            diffs = field_differences(theirs, ours)
            assert not diffs, "\n".join(diffs)


def test_every_message_reachable_in_tensorboard_is_here_field_by_field():
    """Walk TensorBoard's messages from Event, GraphDef, MetaGraphDef, RunMetadata, RunOptions and the plugins'."""
    pytest.importorskip("tensorboard")
    from google.protobuf import descriptor_pool
    our_modules()
    roots = [getattr(importlib.import_module(m), n).DESCRIPTOR for m, n in ROOTS]
    for m in PLUGIN_MODULES:
        roots.extend(importlib.import_module(m).DESCRIPTOR.message_types_by_name.values())
    theirs = reachable(roots)
    # the walk really goes down to the leaves of the trees this issue is about
    for deep in ("tensorboard.FullTypeDef", "tensorboard.GraphDebugInfo.FileLineCol", "tensorboard.DebugTensorWatch",
                 "tensorboard.TypeSpecProto", "tensorboard.SavedVariable", "tensorboard.hparams.ColParams",
                 "tensorboard.TrackableObjectGraph.TrackableObject.SlotVariableReference",
                 "tensorboard.projector.SpriteMetadata", "tensorboard.mesh.MeshPluginData"):
        assert deep in theirs, deep
    pool = descriptor_pool.Default()
    missing, diffs = [], []
    for name, d in sorted(theirs.items()):
        try:
            ours = pool.FindMessageTypeByName(our_name(d))
        except KeyError:
            missing.append(name)
            continue
        diffs.extend(field_differences(d, ours))
    assert missing == [], "TensorBoard messages with no counterpart here: %s" % ", ".join(missing)
    assert not diffs, "\n".join(diffs)


def _protoc_available():
    return shutil.which("protoc") or importlib.util.find_spec("grpc_tools") is not None


def _strip_json_names(messages_):
    for m in messages_:
        for f in m.field:
            f.ClearField("json_name")
        _strip_json_names(m.nested_type)


@pytest.mark.skipif(not _protoc_available(), reason="needs protoc (apt protobuf-compiler) or grpcio-tools")
def test_committed_modules_match_proto_sources():
    """Fails when a .proto changed and scripts/gen_protos.py was not run."""
    from google.protobuf import descriptor_pb2
    import gen_protos
    compiled = descriptor_pb2.FileDescriptorSet.FromString(gen_protos.descriptor_set())
    names = set()
    for fdp in compiled.file:
        name = os.path.basename(fdp.name)[:-len(".proto")]
        names.add(name)
        module = importlib.import_module("tfevents.proto.%s_pb2" % name)
        committed = descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
        _strip_json_names(fdp.message_type)
        _strip_json_names(committed.message_type)
        assert committed == fdp, "proto/%s_pb2.py is stale: run scripts/gen_protos.py" % name
    modules = {p[:-len("_pb2.py")] for p in os.listdir(PROTO_DIR) if p.endswith("_pb2.py")}
    assert names == set(OURS) == modules, "a .proto without its module, or the reverse"


def _protoc_321():
    exe = shutil.which("protoc")
    if not exe:
        return None
    out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    return exe if re.search(r"\b3\.21\.", out) else None


@pytest.mark.skipif(not _protoc_321(), reason="byte-exact check needs protoc 3.21 (Debian protobuf-compiler)")
def test_committed_modules_are_what_the_script_generates(tmp_path):
    import gen_protos
    for path in gen_protos.generate(str(tmp_path), _protoc_321()):
        name = os.path.basename(path)
        with open(path, "rb") as a, open(os.path.join(REPO, "proto", name), "rb") as b:
            assert a.read() == b.read(), "proto/%s is stale: run scripts/gen_protos.py" % name


# ---- round trips with filled messages ----------------------------------------------------------

def fill(message, depth=0, choice=0):
    """Set every field of a message (one member per oneof, chosen by `choice`), recursing a few levels."""
    from google.protobuf.descriptor import FieldDescriptor as F
    samples = {F.TYPE_DOUBLE: -2.5, F.TYPE_FLOAT: 0.25, F.TYPE_INT64: -(1 << 40), F.TYPE_UINT64: 1 << 63,
               F.TYPE_INT32: -7, F.TYPE_UINT32: 7, F.TYPE_SINT64: -9, F.TYPE_SINT32: -5, F.TYPE_FIXED64: 11,
               F.TYPE_FIXED32: 13, F.TYPE_BOOL: True, F.TYPE_STRING: "s\u00e9", F.TYPE_BYTES: b"\x00\xff"}
    d = message.DESCRIPTOR
    for i, f in enumerate(d.fields):
        if f.containing_oneof is not None:
            members = f.containing_oneof.fields
            if f is not members[choice % len(members)]:
                continue
        repeated = is_repeated(f)
        if f.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
            if depth >= 3:
                continue
            if f.message_type.GetOptions().map_entry:
                key_f, val_f = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
                key = "k" if key_f.type == F.TYPE_STRING else 3
                field = getattr(message, f.name)
                if val_f.type == F.TYPE_MESSAGE:
                    fill(field[key], depth + 1, choice)
                elif val_f.type == F.TYPE_ENUM:
                    field[key] = val_f.enum_type.values[-1].number
                else:
                    field[key] = samples[val_f.type]
            elif repeated:
                fill(getattr(message, f.name).add(), depth + 1, choice)
                fill(getattr(message, f.name).add(), depth + 1, choice + 1)
            else:
                fill(getattr(message, f.name), depth + 1, choice)
        else:
            value = f.enum_type.values[-1].number if f.type == F.TYPE_ENUM else samples[f.type]
            if repeated:
                getattr(message, f.name).extend([value, value])
            else:
                setattr(message, f.name, value)
    return message


def _class(descriptor):
    from google.protobuf import message_factory
    return message_factory.GetMessageClass(descriptor)


def _top_level_pairs():
    return [(m, name) for m in OURS for name in
            importlib.import_module("tfevents.proto.%s_pb2" % m).DESCRIPTOR.message_types_by_name]


@pytest.mark.parametrize("module,name", _top_level_pairs())
@pytest.mark.parametrize("choice", [0, 1, 2])
def test_our_message_parses_with_tensorboard(tensorboard_messages, module, name, choice):
    from google.protobuf import text_format
    ours = fill(getattr(importlib.import_module("tfevents.proto.%s_pb2" % module), name)(), choice=choice)
    wire = ours.SerializeToString(deterministic=True)
    theirs = _class(tensorboard_messages[ours.DESCRIPTOR.full_name]).FromString(wire)
    assert text_format.MessageToString(theirs) == text_format.MessageToString(ours)
    assert theirs.SerializeToString(deterministic=True) == wire


@pytest.mark.parametrize("module,name", _top_level_pairs())
@pytest.mark.parametrize("choice", [0, 1, 2])
def test_tensorboard_message_parses_with_ours(tensorboard_messages, module, name, choice):
    from google.protobuf import text_format
    our_class = getattr(importlib.import_module("tfevents.proto.%s_pb2" % module), name)
    # fill TensorBoard's message through ours' shape (same field names), then compare
    theirs = _class(tensorboard_messages[our_class.DESCRIPTOR.full_name]).FromString(
        fill(our_class(), choice=choice).SerializeToString())
    ours = our_class.FromString(theirs.SerializeToString(deterministic=True))
    assert text_format.MessageToString(ours) == text_format.MessageToString(theirs)
    assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)
