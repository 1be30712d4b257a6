"""``tf.import_graph_def`` of tfevents.core against TF1: a GraphDef TensorFlow wrote (an MLP, its gradients and a
Momentum step) imported into ours runs to TF's numbers; input_map, return_elements, the name prefix, unknown ops,
shuffled NodeDefs, and a round trip of our own GraphDef (also read by TF)."""
import random

import numpy as np
import pytest

from _tolerance import assert_float32_close
from tfevents import core
from tfevents.proto import graph_pb2

X = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(6, 4)
Y = np.stack([np.sin(3 * X[:, 0]), X[:, 1] * X[:, 2]], axis=1).astype(np.float32)
SHAPES = [("dense", 4, 8), ("dense_1", 8, 2)]


def _mlp(tf, ref_variables=True):
    """An MLP with its gradients and a Momentum step, in ``tf`` (TF1 or core); TF1 with ref variables."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 2], name="y")
    h = x
    for i, (scope, n_in, n_out) in enumerate(SHAPES):
        kwargs = {"use_resource": False} if tf is not core and ref_variables else {}
        with tf.variable_scope(scope, **kwargs):
            init = np.random.RandomState(i).uniform(-0.5, 0.5, (n_in, n_out)).astype(np.float32)
            k = tf.get_variable("kernel", initializer=tf.constant(init))
            b = tf.get_variable("bias", [n_out], initializer=tf.constant_initializer(0.1))
        h = tf.nn.bias_add(tf.matmul(h, k), b)
        if i == 0:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.square(h - y), name="loss")
    grads = tf.gradients(loss, tf.trainable_variables())
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, name="train")
    init = tf.global_variables_initializer()
    return {"loss": loss, "grads": [g.name for g in grads], "train": train.name, "init": init.name}


def _tf_graph_def(tf1, **kwargs):
    """TF's GraphDef of the MLP and TF's loss, gradients and losses after two Momentum steps."""
    with tf1.Graph().as_default() as g:
        m = _mlp(tf1, **kwargs)
        gd = g.as_graph_def()
        with tf1.Session() as sess:
            sess.run(m["init"])
            feed = {"x:0": X, "y:0": Y}
            first = sess.run([m["loss"]] + m["grads"], feed)
            after = []
            for _ in range(2):
                sess.run(m["train"], feed)
                after.append(sess.run(m["loss"], feed))
    return gd, m, first, after


def _run_imported(graph, m, prefix="import/", feed=None):
    feed = feed if feed is not None else {prefix + "x:0": X, prefix + "y:0": Y}
    with core.Session(graph=graph) as sess:
        sess.run(graph.get_operation_by_name(prefix + m["init"]))
        first = sess.run([graph.get_tensor_by_name(prefix + n) for n in [m["loss"].name] + m["grads"]], feed)
        after = []
        for _ in range(2):
            sess.run(graph.get_operation_by_name(prefix + m["train"]), feed)
            after.append(sess.run(graph.get_tensor_by_name(prefix + "loss:0"), feed))
    return first, after


# float32 roundings (tests/_tolerance.py) of the MLP's loss and gradients: the dots of 4 and 8, biases, relu, the
# squares' mean of 12; back: the 6 rows' sums of the kernels' gradients, δ·wᵀ (2); of the losses after two
# Momentum steps (accum·0.9 + g, w − 0.1·accum), and the loss again
N_GRADIENTS = (4 + 1 + 8 + 1 + 2 + 12) + (2 + 6 + 2 + 6 + 4)
N_AFTER_STEPS = 2 * (N_GRADIENTS + 3) + N_GRADIENTS


def _assert_close(got, want, n=N_GRADIENTS):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert_float32_close(a, b, n=n)


def test_tensorflow_mlp_and_gradients_run_to_tensorflows_numbers(tf1):
    gd, m, first, after = _tf_graph_def(tf1)
    types = {n.op for n in gd.node}
    assert {"VariableV2", "ApplyMomentum", "BroadcastGradientArgs", "ReluGrad", "BiasAddGrad"} <= types
    with core.Graph().as_default() as g:
        assert core.import_graph_def(gd) is None
        assert len(g.get_operations()) == len(gd.node)
        assert all(op.name.startswith("import/") for op in g.get_operations())
        x = g.get_tensor_by_name("import/x:0")
        assert x.op.type == "Placeholder" and x.shape.as_list() == [None, 4] and x.dtype is core.float32
        kernel = g.get_tensor_by_name("import/dense/kernel:0")
        assert kernel.shape.as_list() == [4, 8]
        got_first, got_after = _run_imported(g, m)
    _assert_close(got_first, first)
    _assert_close(got_after, after, n=N_AFTER_STEPS)
    assert after[1] < after[0] < first[0]


def test_shuffled_nodes_and_our_gradients_of_the_imported_graph(tf1):
    gd, m, first, _ = _tf_graph_def(tf1)
    shuffled = graph_pb2.GraphDef.FromString(gd.SerializeToString())
    nodes = list(shuffled.node)
    random.Random(0).shuffle(nodes)
    del shuffled.node[:]
    shuffled.node.extend(nodes)
    with core.Graph().as_default() as g:
        core.import_graph_def(shuffled, name="")
        loss = g.get_tensor_by_name("loss:0")
        variables = [g.get_tensor_by_name("%s/%s:0" % (s, v)) for s, _, _ in SHAPES for v in ("kernel", "bias")]
        ours = core.gradients(loss, [g.get_tensor_by_name(t.name[:-2] + "/read:0") for t in variables])
        with core.Session() as sess:
            sess.run(m["init"])
            got = sess.run([loss] + ours, {"x:0": X, "y:0": Y})
    _assert_close(got, first)


def test_input_map_and_return_elements(tf1):
    gd, m, _, _ = _tf_graph_def(tf1)
    x2 = X[::-1] * 0.5
    with tf1.Graph().as_default():
        m1 = _mlp(tf1)
        with tf1.Session() as sess:
            sess.run(m1["init"])
            want = sess.run([m1["loss"]] + m1["grads"], {"x:0": x2, "y:0": Y})
    with core.Graph().as_default() as g:
        inp = core.constant(x2, name="my_input")
        loss, train, relu = core.import_graph_def(gd, input_map={"x:0": inp}, name="net",
                                                  return_elements=["loss:0", m["train"], "Relu:0"])
        assert loss.name == "net/loss:0" and train.name == "net/train" and isinstance(train, core.Operation)
        assert relu.op.type == "Relu" and relu.shape.as_list() == [6, 8]     # inferred from the mapped input
        matmul = g.get_operation_by_name("net/MatMul")
        assert matmul.inputs[0] is inp
        with core.Session() as sess:
            sess.run(g.get_operation_by_name("net/" + m["init"]))
            got = sess.run([loss] + [g.get_tensor_by_name("net/" + n) for n in m["grads"]], {"net/y:0": Y})
    _assert_close(got, want)
    # the same through TF's own import_graph_def
    with tf1.Graph().as_default() as tg:
        tinp = tf1.constant(x2, name="my_input")
        tloss, ttrain, trelu = tf1.import_graph_def(gd, input_map={"x:0": tinp}, name="net",
                                                    return_elements=["loss:0", m["train"], "Relu:0"])
        assert (tloss.name, ttrain.name) == (loss.name, train.name)
        assert trelu.shape.as_list() == relu.shape.as_list()
        assert tg.get_operation_by_name("net/MatMul").inputs[0].name == matmul.inputs[0].name


def test_name_prefix_follows_tensorflow(tf1):
    gd, m, _, _ = _tf_graph_def(tf1)

    def names(tf):
        with tf.Graph().as_default() as g:
            tf.import_graph_def(gd)
            tf.import_graph_def(gd)
            with tf.name_scope("outer"):
                tf.import_graph_def(gd, name="inner")
            tf.import_graph_def(gd, name="inner")
            tf.constant(1.0, name="import")
            return sorted({op.name.split("/")[0] + ("/" + op.name.split("/")[1] if op.name.startswith("outer")
                                                    else "") for op in g.get_operations()})
    ours = names(core)
    assert ours == names(tf1)
    assert ours == ["import", "import_1", "import_2", "inner", "outer/inner"]


def test_unknown_op_and_bad_input_errors(tf1):
    gd, _, _, _ = _tf_graph_def(tf1, ref_variables=False)        # resource variables: VarHandleOp...
    assert "VarHandleOp" in {n.op for n in gd.node}
    with core.Graph().as_default():
        with pytest.raises(ValueError, match=r"op type 'VarHandleOp' is not registered") as e:
            core.import_graph_def(gd)
        assert "node 'dense/kernel'" in str(e.value)
    bad = graph_pb2.GraphDef()
    bad.node.add(name="a", op="Identity").input.append("missing:0")
    with core.Graph().as_default():
        with pytest.raises(ValueError, match=r"Node 'a' has an input 'missing:0'"):
            core.import_graph_def(bad)
    gd_ok, _, _, _ = _tf_graph_def(tf1)
    with core.Graph().as_default():
        with pytest.raises(ValueError, match=r"not found in graph_def: \[nope:0\]"):
            core.import_graph_def(gd_ok, input_map={"nope:0": core.constant(1.0)})
        with pytest.raises(ValueError, match=r"return_element 'nope:0' not found"):
            core.import_graph_def(gd_ok, return_elements=["nope:0"])
        with pytest.raises(TypeError, match="GraphDef"):
            core.import_graph_def("not a graph")


def _strip_shapes(gd):
    gd = graph_pb2.GraphDef.FromString(gd.SerializeToString())
    for node in gd.node:
        if "_output_shapes" in node.attr:
            del node.attr["_output_shapes"]
    return gd


def test_round_trip_of_our_graph_def(tf1):
    with core.Graph().as_default() as g:
        m = _mlp(core)
        original = g.as_graph_def()
        with core.Session() as sess:
            sess.run(m["init"])
            want = sess.run([m["loss"]] + m["grads"], {"x:0": X, "y:0": Y})
    with core.Graph().as_default() as g2:
        core.import_graph_def(original, name="")
        again = g2.as_graph_def()
        with core.Session() as sess:
            sess.run(m["init"])
            got = sess.run([m["loss"].name] + m["grads"], {"x:0": X, "y:0": Y})
    assert again.SerializeToString(deterministic=True) == original.SerializeToString(deterministic=True)
    for a, b in zip(got, want):             # the same graph, the same kernels: the same numbers
        np.testing.assert_array_equal(a, b)
    # TensorFlow runs our GraphDef to the same numbers
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(original.SerializeToString()), name="")
        with tf1.Session() as sess:
            sess.run(m["init"])
            theirs = sess.run([m["loss"].name] + m["grads"], {"x:0": X, "y:0": Y})
    _assert_close(theirs, want)


def test_cond_imports_and_runs_while_loop_raises_clearly():
    with core.Graph().as_default() as g:
        p = core.placeholder(core.bool, [], name="p")
        v = core.placeholder(core.float32, [], name="v")
        out = core.cond(p, lambda: v * 2.0, lambda: v - 1.0, name="c")
        _, loop = core.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + v), [0, 0.0], name="w")
        gd = g.as_graph_def()
        out_name, loop_name = out.name, loop.name
    with core.Graph().as_default() as g2:
        c, w = core.import_graph_def(gd, return_elements=[out_name, loop_name])
        with core.Session() as sess:
            assert sess.run(c, {"import/p:0": True, "import/v:0": 3.0}) == 6.0
            assert sess.run(c, {"import/p:0": False, "import/v:0": 3.0}) == 2.0
            with pytest.raises(NotImplementedError, match="while_loop imported from a GraphDef"):
                sess.run(w, {"import/v:0": 1.0})
        assert {op.type for op in g2.get_operations()} >= {"Enter", "Exit", "NextIteration", "Merge", "Switch"}
