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

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))

PROTO_DIR = os.path.join(REPO, "proto")
OURS = sorted(p[:-len(".proto")] for p in os.listdir(PROTO_DIR) if p.endswith(".proto"))
TENSORBOARD = [
    "tensorboard.compat.proto.%s_pb2" % m for m in (
        "types", "tensor_shape", "resource_handle", "tensor", "summary", "histogram", "event", "graph", "node_def",
        "attr_value", "versions", "function", "op_def", "step_stats", "tensor_description",
        "allocation_description", "cost_graph", "config", "meta_graph", "saver")
] + ["tensorboard.plugins.text.plugin_data_pb2", "tensorboard.plugins.pr_curve.plugin_data_pb2",
     "tensorboard.plugins.hparams.api_pb2", "tensorboard.plugins.hparams.plugin_data_pb2",
     "tensorboard.plugins.custom_scalar.layout_pb2", "tensorboard.plugins.mesh.plugin_data_pb2",
     "tensorboard.plugins.projector.projector_config_pb2"]
# TensorBoard fields we leave out on purpose (they need large message trees we never write);
# parsing keeps them as unknown fields, so nothing is lost on a round trip.
OMITTED = {("GraphDef", "debug_info"), ("NodeDef", "experimental_type"), ("OpDef.ArgDef", "experimental_full_type"),
           ("RunOptions", "debug_options"), ("MetaGraphDef", "object_graph_def"), ("TensorInfo", "composite_tensor")}


def is_repeated(field):
    """FieldDescriptor.label is gone in protobuf 7; is_repeated is missing before 5."""
    if hasattr(field, "is_repeated"):
        return field.is_repeated
    return field.label == field.LABEL_REPEATED


def our_modules():
    return [importlib.import_module("tfevents.proto.%s_pb2" % m) for m in OURS]


def messages(module):
    """{name without package: descriptor} for every message of a module, nested ones included."""
    out = {}

    def walk(d, prefix):
        if d.GetOptions().map_entry:
            return
        out[prefix + d.name] = d
        for n in d.nested_types:
            walk(n, prefix + d.name + ".")
    for d in module.DESCRIPTOR.message_types_by_name.values():
        walk(d, "")
    return out


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
    pytest.importorskip("tensorboard")
    found = {}
    for name in TENSORBOARD:
        found.update(messages(importlib.import_module(name)))
    return found


def test_descriptors_match_tensorboard(tensorboard_messages):
    for module in our_modules():
        for name, ours in messages(module).items():
            theirs = tensorboard_messages.get(name)
            assert theirs is not None, "%s has no TensorBoard counterpart" % name
            for f in ours.fields:
                t = theirs.fields_by_number.get(f.number)
                assert t is not None, "%s.%s = %d is not a TensorBoard field" % (name, f.name, f.number)
                assert (t.name, t.type) == (f.name, f.type), "%s field %d differs" % (name, f.number)
                assert is_repeated(t) == is_repeated(f), "%s field %d: repeated or not" % (name, f.number)
                if f.enum_type is not None:
                    assert {v.number: v.name for v in f.enum_type.values} == \
                        {v.number: v.name for v in t.enum_type.values}, "enum of %s.%s" % (name, f.name)
            missing = {(name, t.name) for t in theirs.fields if t.number not in ours.fields_by_number}
            assert missing <= OMITTED, "fields of TensorBoard's %s missing here: %s" % (name, missing - OMITTED)


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
    theirs = _class(tensorboard_messages[name]).FromString(wire)
    assert text_format.MessageToString(theirs) == text_format.MessageToString(ours)
    assert theirs.SerializeToString(deterministic=True) == wire


@pytest.mark.parametrize("module,name", _top_level_pairs())
@pytest.mark.parametrize("choice", [0, 1, 2])
def test_tensorboard_message_parses_with_ours(tensorboard_messages, module, name, choice):
    from google.protobuf import text_format
    our_class = getattr(importlib.import_module("tfevents.proto.%s_pb2" % module), name)
    # fill TensorBoard's message through ours' shape (same field names), then compare
    theirs = _class(tensorboard_messages[name]).FromString(
        fill(our_class(), choice=choice).SerializeToString())
    ours = our_class.FromString(theirs.SerializeToString(deterministic=True))
    assert text_format.MessageToString(ours) == text_format.MessageToString(theirs)
    assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)
