"""A tfevents.core graph and a traced step, served by real TensorBoard's graphs plugin."""
import importlib.util

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import config_pb2 as tb_config_pb2
from tensorboard.compat.proto import graph_pb2 as tb_graph_pb2

from _tensorboard import TensorBoardServer

from tfevents import core as tf

TRAIN_PRESENT = importlib.util.find_spec("tfevents.core.train") is not None


def _write_run(logdir):
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.int32, [None], name="y")
        with tf.name_scope("dnn"):
            hidden = tf.layers.dense(x, 8, activation=tf.nn.relu, name="hidden")
            with tf.name_scope("conv"):      # a conv branch: Conv2D, MaxPool and their gradients in the graph
                kernel = tf.get_variable("conv/kernel", [2, 2, 1, 2])
                images = tf.reshape(x, [-1, 2, 2, 1])
                conv = tf.nn.relu(tf.nn.conv2d(images, kernel, strides=[1, 1, 1, 1], padding="SAME"))
                pooled = tf.reshape(tf.nn.max_pool(conv, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), [-1, 2])
            logits = tf.layers.dense(hidden, 3, name="logits") + tf.reduce_sum(pooled, axis=1, keepdims=True)
        with tf.name_scope("loss"):
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        with tf.name_scope("train"):
            if TRAIN_PRESENT:
                train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
            else:
                tvars = tf.trainable_variables()
                grads = tf.gradients(loss, tvars)
                train_op = tf.group(*[tf.assign_sub(v, 0.1 * g) for v, g in zip(tvars, grads)], name="step")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            writer = tf.summary.FileWriter(logdir, sess.graph)
            md = tf.RunMetadata()
            feed = {x: np.ones((5, 4), np.float32), y: np.arange(5) % 3}
            sess.run(train_op, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
            writer.add_run_metadata(md, "step_1", global_step=1)
            writer.close()
        executed = {n.node_name for n in md.step_stats.dev_stats[0].node_stats}
        return graph, executed


@pytest.fixture(scope="module")
def tensorboard(tmp_path_factory):
    logdir = str(tmp_path_factory.mktemp("tb_core"))
    graph, executed = _write_run(logdir)
    with TensorBoardServer(logdir, load_fast=False, timeout=90, request_timeout=10,
                           log_path=str(tmp_path_factory.mktemp("tb_core_log") / "tensorboard.log")) as server:
        server.wait_for("the run '.' with its graph and run metadata",
                        lambda: "step_1" in server.json("/data/plugin/graphs/info").get(".", {}).get("tags", {}))
        yield server, graph, executed


def test_graph_served_with_gradient_nodes_and_scopes(tensorboard):
    server, graph, _ = tensorboard
    text = server.get("/data/plugin/graphs/graph", run=".").decode()
    served = text_format.Parse(text, tb_graph_pb2.GraphDef())
    nodes = {n.name: n for n in served.node}
    assert set(nodes) == {op.name for op in graph.get_operations()}
    assert nodes["x"].op == "Placeholder"
    assert nodes["hidden/kernel"].op == "VariableV2" and nodes["hidden/kernel/read"].op == "Identity"
    assert nodes["dnn/hidden/MatMul"].op == "MatMul"
    assert nodes["dnn/hidden/MatMul"].input == ["x", "hidden/kernel/read"]
    assert any(n.startswith("train/gradients/dnn/hidden/MatMul_grad/") for n in nodes)
    assert nodes["train/gradients/dnn/hidden/MatMul_grad/MatMul_1"].op == "MatMul"
    shapes = nodes["dnn/hidden/MatMul"].attr["_output_shapes"].list.shape[0]
    assert [d.size for d in shapes.dim] == [-1, 8]
    conv = nodes["dnn/conv/Conv2D"]
    assert conv.op == "Conv2D" and conv.input == ["dnn/conv/Reshape", "conv/kernel/read"]
    assert list(conv.attr["strides"].list.i) == [1, 1, 1, 1] and conv.attr["padding"].s == b"SAME"
    assert conv.attr["data_format"].s == b"NHWC" and list(conv.attr["dilations"].list.i) == [1, 1, 1, 1]
    assert [d.size for d in conv.attr["_output_shapes"].list.shape[0].dim] == [-1, 2, 2, 2]
    assert nodes["dnn/conv/MaxPool"].op == "MaxPool"
    grad = "train/gradients/dnn/conv/Conv2D_grad/"
    assert {nodes[n].op for n in nodes if n.startswith(grad)} >= {"Conv2DBackpropInput", "Conv2DBackpropFilter"}
    assert nodes["train/gradients/dnn/conv/MaxPool_grad/MaxPoolGrad"].op == "MaxPoolGrad"


def test_run_metadata_served(tensorboard):
    server, _, executed = tensorboard
    info = server.get("/data/plugin/graphs/info").decode()
    assert "step_1" in info
    text = server.get("/data/plugin/graphs/run_metadata", run=".", tag="step_1").decode()
    md = text_format.Parse(text, tb_config_pb2.RunMetadata())
    dev = md.step_stats.dev_stats[0]
    assert dev.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    names = {n.node_name for n in dev.node_stats}
    assert names == executed
    assert "dnn/hidden/MatMul" in names and any(n.startswith("train/gradients/") for n in names)
    matmul = next(n for n in dev.node_stats if n.node_name == "dnn/hidden/MatMul")
    assert matmul.memory[0].total_bytes == 5 * 8 * 4
    assert [d.size for d in matmul.output[0].tensor_description.shape.dim] == [5, 8]
