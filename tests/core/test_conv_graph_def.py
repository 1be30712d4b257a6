"""A convolutional model's GraphDef, as tfevents.core writes it, imported into real TensorFlow
(``tf.import_graph_def``): TF runs it (initializers, forward, gradients, an Adam step) and computes the same
values as core; the op types are TF's."""
import numpy as np
import pytest

from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core


def _deep_mnist_graph(tf, weights):
    """The Deep MNIST network on ``tf`` (core), with variables initialized from ``weights``; returns the names of
    the tensors and ops to run."""
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    keep_prob = tf.placeholder_with_default(1.0, [], name="keep_prob")
    w1, b1, w2, b2, w3, b3, w4, b4 = [tf.Variable(w, name="v%d" % i) for i, w in enumerate(weights)]
    h = tf.reshape(x, [-1, 28, 28, 1])
    with tf.name_scope("conv1"):
        h = tf.nn.relu(tf.nn.conv2d(h, w1, strides=[1, 1, 1, 1], padding="SAME") + b1)
        h = tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    with tf.name_scope("conv2"):
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w2, strides=[1, 1, 1, 1], padding="SAME"), b2))
        h = tf.nn.avg_pool(h, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME")
    h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 7 * 7 * 8]), w3) + b3)
    logits = tf.identity(tf.matmul(tf.nn.dropout(h, keep_prob), w4) + b4, name="logits")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
    grads = tf.gradients(loss, [w1, w2])
    grad_names = [tf.identity(g, name="grad%d" % i).name for i, g in enumerate(grads)]
    # every gradient before any update: TF's VariableV2 reads alias the buffers ApplyAdam updates in place, so
    # without this edge TF's executor may update w2 before the backprop through conv2 has read it (TF1's race)
    opt = tf.train.AdamOptimizer(1e-3)
    grads_and_vars = opt.compute_gradients(loss)
    with tf.control_dependencies([g for g, _ in grads_and_vars]):
        train = opt.apply_gradients(grads_and_vars, name="train")
    init = tf.global_variables_initializer()
    return dict(logits="logits:0", loss="loss:0", grads=grad_names, train=train.name, init=init.name,
                w1=w1.op.name + ":0")


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(5)
    weights = [rng.normal(0, 0.1, s).astype(np.float32) for s in
               [(5, 5, 1, 4), (4,), (3, 3, 4, 8), (8,), (7 * 7 * 8, 16), (16,), (16, 10), (10,)]]
    x = rng.rand(6, 784).astype(np.float32)
    y = rng.randint(0, 10, 6).astype(np.int64)
    return weights, x, y


def _run(sess, names, x, y):
    feed = {"x:0": x, "y:0": y}
    sess.run(names["init"])
    logits, loss, grads = sess.run([names["logits"], names["loss"], names["grads"]], feed)
    for _ in range(3):
        sess.run(names["train"], feed)
    return logits, loss, grads, sess.run(names["w1"]), sess.run(names["loss"], feed)


def test_conv_graph_def_imports_into_tensorflow_and_computes_the_same(tf1, data):
    weights, x, y = data
    with core.Graph().as_default() as graph:
        names = _deep_mnist_graph(core, weights)
        ours = _run(core.Session(), names, x, y)
        graph_def = graph.as_graph_def()
    op_types = {n.op for n in graph_def.node}
    assert {"Conv2D", "MaxPool", "AvgPool", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPoolGrad",
            "AvgPoolGrad", "BiasAdd", "ApplyAdam"} <= op_types, sorted(op_types)
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(graph_def.SerializeToString()), name="")
        with tf1.Session() as sess:
            theirs = _run(sess, names, x, y)
    # float32 roundings (tests/_tolerance.py) along the longest path: forward, the convs' dots (5·5·1, 3·3·4) and
    # biases, the average pool's 9, the dense layers' dots (392, 16), the cross entropy and the mean of 6 rows;
    # back through the dense layers (10, 16), the pools and conv2 (3·3·8) to conv1's filter gradient, a sum over
    # the batch's 6·28·28 positions
    n_forward = (25 + 1) + (36 + 1) + (9 + 1) + (392 + 1) + (16 + 1) + (2 * ELEMENTWISE_ULPS + 10) + 6
    n_gradients = n_forward + 10 + 16 + 4 + 3 * 3 * 8 + 6 * 28 * 28
    logits, loss, grads, w1, loss_after = theirs
    assert_float32_close(ours[0], logits, n=n_forward, err_msg="logits")
    assert_float32_close(ours[1], loss, n=n_forward, err_msg="loss")
    for g, w in zip(ours[2], grads):
        assert_float32_close(g, w, n=n_gradients, err_msg="gradients")
    # Adam's step lr·m̂/√v̂ turns a gradient's difference δ into lr·δ/√v̂, and √v̂ ≥ |g₀|/√t at step t: three steps
    # amplify the gradients' bound by Σ 2·lr·√t / min|g₀|
    amplification = sum(2 * 1e-3 * np.sqrt(t) for t in (1, 2, 3)) / np.abs(grads[0]).min()
    assert_float32_close(ours[3], w1, n=n_gradients, scale=np.abs(grads[0]).max(), amplification=amplification,
                         err_msg="conv1 kernel after 3 Adam steps")
    # each step's roundings carried into the next, then the forward pass again
    assert_float32_close(ours[4], loss_after, n=3 * n_gradients + n_forward, err_msg="loss after 3 Adam steps")


def test_conv_ops_match_tensorflow_graph_def(tf1, data):
    """Conv2D, MaxPool and their gradient ops carry TF's attrs (strides, padding, data_format, dilations, ...)."""
    from google.protobuf.json_format import MessageToDict
    weights, _, _ = data

    def nodes(tf):
        with tf.Graph().as_default() as g:
            _deep_mnist_graph(tf, weights)
            return {n.op: n for n in g.as_graph_def().node}

    ours = nodes(core)
    theirs = nodes(tf1)
    for op in ("Conv2D", "MaxPool", "AvgPool", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPoolGrad",
               "AvgPoolGrad"):
        got = {k: MessageToDict(v) for k, v in ours[op].attr.items() if not k.startswith("_")}
        want = {k: MessageToDict(v) for k, v in theirs[op].attr.items() if not k.startswith("_")}
        assert got == want, op
