"""A tfevents.core graph and a traced step, served by real TensorBoard's graphs plugin."""
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import config_pb2 as tb_config_pb2
from tensorboard.compat.proto import graph_pb2 as tb_graph_pb2

from tfevents import core as tf

TRAIN_PRESENT = importlib.util.find_spec("tfevents.core.train") is not None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(port, path, timeout=60.0):
    deadline = time.time() + timeout
    while True:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=10) as r:
                return r.read().decode("utf-8")
        except (urllib.error.URLError, ConnectionError, OSError):
            if time.time() > deadline:
                raise
            time.sleep(0.3)


def _write_run(logdir):
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.int32, [None], name="y")
        with tf.name_scope("dnn"):
            hidden = tf.layers.dense(x, 8, activation=tf.nn.relu, name="hidden")
            logits = tf.layers.dense(hidden, 3, name="logits")
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
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", logdir, "--host", "127.0.0.1",
                             "--port", str(port), "--load_fast=false", "--reload_interval", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    try:
        deadline = time.time() + 90
        while "." not in _get(port, "/data/runs", timeout=90):
            if time.time() > deadline or proc.poll() is not None:
                raise RuntimeError("TensorBoard did not load the run: %s" % proc.stderr.read(2000))
            time.sleep(0.5)
        yield port, graph, executed
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_graph_served_with_gradient_nodes_and_scopes(tensorboard):
    port, graph, _ = tensorboard
    text = _get(port, "/data/plugin/graphs/graph?run=.")
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


def test_run_metadata_served(tensorboard):
    port, _, executed = tensorboard
    info = _get(port, "/data/plugin/graphs/info")
    assert "step_1" in info
    text = _get(port, "/data/plugin/graphs/run_metadata?" + urllib.parse.urlencode({"run": ".", "tag": "step_1"}))
    md = text_format.Parse(text, tb_config_pb2.RunMetadata())
    dev = md.step_stats.dev_stats[0]
    assert dev.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    names = {n.node_name for n in dev.node_stats}
    assert names == executed
    assert "dnn/hidden/MatMul" in names and any(n.startswith("train/gradients/") for n in names)
    matmul = next(n for n in dev.node_stats if n.node_name == "dnn/hidden/MatMul")
    assert matmul.memory[0].total_bytes == 5 * 8 * 4
    assert [d.size for d in matmul.output[0].tensor_description.shape.dim] == [5, 8]
