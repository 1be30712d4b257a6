"""write_graph: the files tf.io.write_graph writes, written atomically."""
import os

import pytest

from tfevents.proto import graph_pb2
from tfevents.summaries import write_graph
from tfevents.summaries.writer import graph_io as graph_io


@pytest.fixture
def tf_graph(tf):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
        w = tf.constant([[0.5], [-1.25], [1e-7]], name="w")
        y = tf.nn.relu(tf.matmul(x, w), name="y")
        tf.reduce_mean(y, name="loss")
    return g


@pytest.mark.parametrize("as_text", [True, False])
def test_same_file_as_tensorflow(tmp_path, tf, tf_graph, as_text):
    graph_def = tf_graph.as_graph_def()
    name = "graph.pbtxt" if as_text else "graph.pb"
    theirs = tf.io.write_graph(graph_def, str(tmp_path / "tf"), name, as_text=as_text)
    ours = write_graph(graph_def, str(tmp_path / "ours"), name, as_text=as_text)
    assert ours == os.path.join(str(tmp_path / "ours"), name)
    assert open(ours, "rb").read() == open(theirs, "rb").read()

    def parse(path):
        if as_text:
            from google.protobuf import text_format
            return text_format.Parse(open(path).read(), tf.compat.v1.GraphDef())
        return tf.compat.v1.GraphDef.FromString(open(path, "rb").read())

    assert parse(ours) == parse(theirs) == graph_def


def test_accepts_graphs_our_graph_defs_and_bytes(tmp_path, tf, tf_graph):
    expected = tf_graph.as_graph_def()
    ours_def = graph_pb2.GraphDef.FromString(expected.SerializeToString())
    for i, source in enumerate([tf_graph, ours_def, expected.SerializeToString()]):
        text = open(write_graph(source, str(tmp_path), "g%d.pbtxt" % i)).read()
        from google.protobuf import text_format
        assert text_format.Parse(text, tf.compat.v1.GraphDef()) == expected
    with pytest.raises(TypeError, match="GraphDef"):
        write_graph(object(), str(tmp_path), "bad.pbtxt")
    assert not os.path.exists(tmp_path / "bad.pbtxt")


def test_replaces_atomically_and_leaves_no_temp_files(tmp_path, monkeypatch):
    graph_def = graph_pb2.GraphDef(node=[graph_pb2.NodeDef(name="a", op="NoOp")])
    path = write_graph(graph_def, str(tmp_path / "new" / "dir"), "g.pb", as_text=False)   # dirs are made
    assert graph_pb2.GraphDef.FromString(open(path, "rb").read()) == graph_def

    def failing_replace(src, dst):
        raise OSError("simulated crash before the rename")

    monkeypatch.setattr(graph_io.os, "replace", failing_replace)
    bigger = graph_pb2.GraphDef(node=[graph_pb2.NodeDef(name="b", op="NoOp")] * 3)
    with pytest.raises(OSError, match="simulated"):
        write_graph(bigger, os.path.dirname(path), "g.pb", as_text=False)
    monkeypatch.undo()
    assert graph_pb2.GraphDef.FromString(open(path, "rb").read()) == graph_def   # old file intact
    assert os.listdir(os.path.dirname(path)) == ["g.pb"]                          # no temp file left
    write_graph(bigger, os.path.dirname(path), "g.pb", as_text=False)
    assert graph_pb2.GraphDef.FromString(open(path, "rb").read()) == bigger
    assert os.listdir(os.path.dirname(path)) == ["g.pb"]


# ---- graphs TensorFlow fills with full types, stack traces, SavedModel objects -----------------

def _node_defs(graph_def):
    """Every NodeDef of a GraphDef: the graph's and its library functions'."""
    yield from graph_def.node
    for function in graph_def.library.function:
        yield from function.node_def


def _tf1_graph_def(tf):
    """A TF1 graph (placeholder, while_loop writing a TensorArray): TF types its TensorList ops."""
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
        ta = tf.TensorArray(tf.float32, size=3)
        _, ta = tf.while_loop(lambda i, ta: i < 3,
                              lambda i, ta: (i + 1, ta.write(i, tf.reduce_sum(x) * tf.cast(i, tf.float32))), (0, ta))
        tf.identity(ta.stack(), name="y")
    return g.as_graph_def(add_shapes=True)


@pytest.fixture(scope="module")
def saved_model(tf, tmp_path_factory):
    """(MetaGraphDef, GraphDebugInfo) of a real SavedModel: a tf.Module with a variable, a while_loop and a
    RaggedTensor signature, saved with its stack traces (TensorFlow's own protos)."""
    from tensorflow.core.framework import graph_debug_info_pb2
    from tensorflow.core.protobuf import saved_model_pb2

    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable([1.0, 2.0], name="v")

        @tf.function(input_signature=[tf.RaggedTensorSpec([None, None], tf.float32)])
        def f(self, r):
            ta = tf.TensorArray(tf.float32, size=3)
            _, ta = tf.while_loop(lambda i, ta: i < 3,
                                  lambda i, ta: (i + 1, ta.write(i, tf.reduce_sum(r) * tf.cast(i, tf.float32))),
                                  (0, ta))
            return {"scaled": r * 2.0, "stack": ta.stack() + tf.reduce_sum(self.v)}

    path = str(tmp_path_factory.mktemp("saved_model"))
    model = Model()
    tf.saved_model.save(model, path, signatures={"serving_default": model.f},
                        options=tf.saved_model.SaveOptions(save_debug_info=True))
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        meta_graph = saved_model_pb2.SavedModel.FromString(f.read()).meta_graphs[0]
    with open(os.path.join(path, "debug", "saved_model_debug_info.pb"), "rb") as f:
        debug_info = graph_debug_info_pb2.GraphDebugInfo.FromString(f.read())
    return meta_graph, debug_info


@pytest.fixture(params=["tf1_while_loop", "saved_model_with_debug_info"])
def typed_graph_def(request, tf):
    """A GraphDef written by TensorFlow with NodeDef.experimental_type set (and, for the SavedModel's graph,
    GraphDef.debug_info holding TensorFlow's stack traces)."""
    if request.param == "tf1_while_loop":
        graph_def = _tf1_graph_def(tf)
    else:
        meta_graph, debug_info = request.getfixturevalue("saved_model")
        graph_def = tf.compat.v1.GraphDef()
        graph_def.CopyFrom(meta_graph.graph_def)
        graph_def.debug_info.CopyFrom(debug_info)
        assert len(graph_def.debug_info.traces_by_id) > 0 and len(graph_def.debug_info.frames_by_id) > 0
        assert len(graph_def.debug_info.files) > 0
    typed = [n for n in _node_defs(graph_def) if n.HasField("experimental_type")]
    assert typed and any(len(n.experimental_type.args) > 0 for n in typed)
    return graph_def


@pytest.mark.parametrize("as_text", [True, False])
@pytest.mark.parametrize("source", ["tensorflow_proto", "bytes", "our_proto"])
def test_tensorflow_graph_with_full_types_round_trips(tmp_path, tf, typed_graph_def, as_text, source):
    """Written through our protos (bytes, ours) or TF's, the file is tf.io.write_graph's and parses back equal."""
    from google.protobuf import text_format

    wire = typed_graph_def.SerializeToString(deterministic=True)
    given = {"tensorflow_proto": typed_graph_def, "bytes": wire, "our_proto": graph_pb2.GraphDef.FromString(wire)}
    name = "graph.pbtxt" if as_text else "graph.pb"
    ours = write_graph(given[source], str(tmp_path / "ours"), name, as_text=as_text)
    theirs = tf.io.write_graph(typed_graph_def, str(tmp_path / "tf"), name, as_text=as_text)
    with open(ours, "rb") as f:
        data = f.read()
    if as_text:
        parsed = text_format.Parse(data.decode("utf-8"), tf.compat.v1.GraphDef())
        assert b"experimental_type {" in data and b"type_id: TFT_" in data
    else:
        parsed = tf.compat.v1.GraphDef.FromString(data)
    assert parsed == typed_graph_def
    with open(theirs, "rb") as f:
        assert data == f.read()


def test_saved_model_meta_graph_keeps_objects_and_composite_tensors(tf, saved_model):
    """A SavedModel's MetaGraphDef (object graph, ragged TensorInfo, typed op defs) through our protos."""
    from google.protobuf import text_format
    from tfevents.proto import meta_graph_pb2

    theirs, _ = saved_model
    assert len(theirs.object_graph_def.nodes) > 0 and len(theirs.object_graph_def.concrete_functions) > 0
    outputs = theirs.signature_def["serving_default"].outputs
    composite = [t for t in outputs.values() if t.WhichOneof("encoding") == "composite_tensor"]
    assert composite and composite[0].composite_tensor.type_spec.type_spec_class_name == "RaggedTensorSpec"
    assert any(a.HasField("experimental_full_type") for op in theirs.meta_info_def.stripped_op_list.op
               for a in list(op.input_arg) + list(op.output_arg))

    wire = theirs.SerializeToString(deterministic=True)
    ours = meta_graph_pb2.MetaGraphDef.FromString(wire)
    assert ours.SerializeToString(deterministic=True) == wire
    text = text_format.MessageToString(ours)
    assert text == text_format.MessageToString(theirs)   # nothing left as unknown fields (text omits those)
    assert "composite_tensor {" in text and "object_graph_def {" in text and "experimental_full_type {" in text
    assert text_format.Parse(text, tf.compat.v1.MetaGraphDef()) == theirs
    assert text_format.Parse(text, meta_graph_pb2.MetaGraphDef()) == ours
