"""write_graph: the files tf.io.write_graph writes, written atomically."""
import os

import pytest

from tfevents.proto import graph_pb2
from tfevents.summaries import graph_io, write_graph


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
