"""``tf.train.import_meta_graph`` and ``tf.train.init_from_checkpoint`` of tfevents.core against TF1: a MetaGraphDef
and checkpoint TensorFlow wrote import into ours, restore and train on to TF's numbers (GradientDescent and
Momentum); ours import into TF the same way; init_from_checkpoint's scope mappings load what TF's load."""
import os

import numpy as np
import pytest

from _graph_compare import meta_graph_differences
from _oracle import as_tf1_built_graphs, tf1_and_core
from _tolerance import assert_float32_close
from tfevents import core

X = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(6, 4)
Y = np.stack([np.sin(3 * X[:, 0]), X[:, 1] * X[:, 2]], axis=1).astype(np.float32)
SHAPES = [("dense", 4, 8), ("dense_1", 8, 2)]
OPTIMIZERS = {"sgd": lambda tf: tf.train.GradientDescentOptimizer(0.2),
              "momentum": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9)}


def _mlp(tf, optimizer, scope=""):
    """A small TF1 MLP (ref variables) with a train_op in the ``train_op`` collection and a global step."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 2], name="y")
    h = x
    for i, (name, n_in, n_out) in enumerate(SHAPES):
        kwargs = {} if tf is core else {"use_resource": False}
        with tf.variable_scope(scope + name, **kwargs):
            init = np.random.RandomState(i).uniform(-0.5, 0.5, (n_in, n_out)).astype(np.float32)
            k = tf.get_variable("kernel", initializer=tf.constant(init))
            b = tf.get_variable("bias", [n_out], initializer=tf.constant_initializer(0.05))
        h = tf.matmul(h, k) + b
        if i == 0:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.square(h - y), name="loss")
    step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step",
                       collections=[tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.GLOBAL_STEP],
                       **({} if tf is core else {"use_resource": False}))
    # our tf.gradients does not add TF's per-op gates (gate_gradients=True): TF running our graph could apply an
    # update before the backward pass read that variable, so our graphs gate the whole graph (as TF can too)
    gate = tf.train.Optimizer.GATE_GRAPH if tf is core else tf.train.Optimizer.GATE_OP
    train = OPTIMIZERS[optimizer](tf).minimize(loss, global_step=step, name="train", gate_gradients=gate)
    tf.add_to_collection("train_op", train)
    tf.add_to_collection("loss", loss)
    return train


def _values(tf, sess):
    return {v.op.name: sess.run(v) for v in tf.global_variables()}


def _save(tf, optimizer, directory):
    """Train two steps in ``tf`` and save (checkpoint and .meta); returns the prefix and the values."""
    with tf.Graph().as_default():
        train = _mlp(tf, optimizer)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                sess.run(train, {"x:0": X, "y:0": Y})
            prefix = saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=2)
            return prefix, _values(tf, sess)


def _import_restore_step(tf, prefix):
    """``import_meta_graph`` + restore + one train step in ``tf``: (restored values, values after, loss)."""
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        train = tf.get_collection("train_op")
        if not train:                                   # our .meta carries only the variable collections
            train = [g.get_operation_by_name("train")]
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            restored = _values(tf, sess)
            loss = sess.run("loss:0", {"x:0": X, "y:0": Y})
            sess.run(train[0], {"x:0": X, "y:0": Y})
            return restored, _values(tf, sess), loss, g


# float32 roundings (tests/_tolerance.py): the MLP's loss (dots of 4 and 8, biases, relu, the squares' mean of
# 12), its gradients (the 6 rows' sums into the kernels', δ·wᵀ) and a step's update (Momentum's 3)
N_LOSS = 4 + 1 + 8 + 1 + 2 + 12
N_STEP = N_LOSS + (2 + 6 + 2 + 6 + 4) + 3


def _assert_close(got, want, exact=False):
    assert sorted(got) == sorted(want)
    for name in want:
        if exact:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        else:
            assert_float32_close(got[name], want[name], n=N_STEP, err_msg=name)


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_tensorflows_meta_graph_imports_restores_and_trains_on(tf1, tmp_path, optimizer):
    prefix, saved = _save(tf1, optimizer, str(tmp_path))
    want_restored, want_after, want_loss, _ = _import_restore_step(tf1, prefix)
    got_restored, got_after, got_loss, g = _import_restore_step(core, prefix)
    _assert_close(got_restored, saved, exact=True)
    _assert_close(want_restored, saved, exact=True)
    assert_float32_close(got_loss, want_loss, n=N_LOSS)
    _assert_close(got_after, want_after)
    assert got_after["global_step"] == want_after["global_step"] == 3
    # the collections came back as TF's import_meta_graph rebuilds them
    with g.as_default():
        trainable = core.trainable_variables()
        assert [v.op.name for v in trainable] == ["%s/%s" % (s, v) for s, _, _ in SHAPES for v in ("kernel", "bias")]
        assert all(isinstance(v, core.Variable) for v in trainable)
        assert trainable[0] is core.global_variables()[0]            # one object per variable
        assert trainable[0].value().name == "dense/kernel/read:0"
        assert [v.op.name for v in core.get_collection("global_step")] == ["global_step"]
        assert core.get_collection("train_op")[0].name == "train"
        assert core.get_collection("loss")[0].name == "loss:0"
        assert not [op for op in g.get_operations() if op.name.startswith("save/")]
        # the imported initializers work too
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(trainable[1]), np.full([8], 0.05, np.float32))


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_our_meta_graph_imports_into_tensorflow_and_ours(tf1, tmp_path, optimizer):
    prefix, saved = _save(core, optimizer, str(tmp_path))
    want_restored, want_after, want_loss, _ = _import_restore_step(tf1, prefix)
    got_restored, got_after, got_loss, _ = _import_restore_step(core, prefix)
    _assert_close(want_restored, saved, exact=True)
    _assert_close(got_restored, saved, exact=True)
    assert_float32_close(got_loss, want_loss, n=N_LOSS)
    _assert_close(got_after, want_after)


def test_import_scope_and_errors(tf1, tmp_path):
    prefix, saved = _save(tf1, "sgd", str(tmp_path))
    with core.Graph().as_default() as g:
        saver = core.train.import_meta_graph(prefix + ".meta", import_scope="net", clear_devices=True)
        assert [v.op.name for v in core.trainable_variables()][0] == "net/dense/kernel"
        with core.Session() as sess:
            saver.restore(sess, prefix)              # checkpoint names are the unscoped ones
            np.testing.assert_array_equal(sess.run("net/dense/kernel:0"), saved["dense/kernel"])
        assert g.get_operation_by_name("net/train").type == "AssignAdd"
    with core.Graph().as_default() as g:
        inp = core.constant(X, name="inp")
        saver = core.train.import_meta_graph(prefix + ".meta", input_map={"x:0": inp},
                                             restore_collections_predicate=lambda key: key != "loss")
        assert g.get_operation_by_name("MatMul").inputs[0] is inp
        assert core.get_collection("loss") == [] and {op.name for op in core.get_collection("train_op")} == {"train"}
        with core.Session() as sess:
            saver.restore(sess, prefix)
            sess.run("train", {"y:0": Y})
            assert sess.run("global_step:0") == 3
        with pytest.raises(TypeError, match="unsupported arguments: bogus"):
            core.train.import_meta_graph(prefix + ".meta", bogus=1)
    with core.Graph().as_default():
        with pytest.raises(IOError, match="does not exist"):
            core.train.import_meta_graph(str(tmp_path / "missing.meta"))


def _init_from_checkpoint(tf, prefix, assignment_map_fn):
    """A graph with differently scoped variables initialized from ``prefix``; their values after init."""
    with tf.Graph().as_default():
        kwargs = {} if tf is core else {"use_resource": False}
        with tf.variable_scope("new", **kwargs):
            for name, n_in, n_out in SHAPES:
                with tf.variable_scope(name):
                    tf.get_variable("kernel", [n_in, n_out], initializer=tf.zeros_initializer())
                    tf.get_variable("bias", [n_out], initializer=tf.zeros_initializer())
        with tf.variable_scope("other", **kwargs):
            lone = tf.get_variable("lone", [4, 8], initializer=tf.ones_initializer())
            tf.get_variable("untouched", [2], initializer=tf.ones_initializer())
        tf.train.init_from_checkpoint(prefix, assignment_map_fn(lone))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return _values(tf, sess)


def test_init_from_checkpoint_matches_tensorflow(tf1, tmp_path):
    prefix, saved = _save(tf1, "momentum", str(tmp_path))

    def mapping(lone):
        return {"dense/": "new/dense/", "dense_1/bias": "new/dense_1/bias", "dense_1/kernel": "new/dense_1/kernel",
                "dense/kernel/Momentum": lone}
    want = _init_from_checkpoint(tf1, prefix, mapping)
    got = _init_from_checkpoint(core, str(tmp_path), mapping)          # a directory: its latest checkpoint
    _assert_close(got, want, exact=True)
    np.testing.assert_array_equal(got["new/dense/kernel"], saved["dense/kernel"])
    np.testing.assert_array_equal(got["other/lone"], saved["dense/kernel/Momentum"])
    np.testing.assert_array_equal(got["other/untouched"], np.ones(2, np.float32))
    # the root mapping '/': 'scope/' (every variable under new/ from the checkpoint's root)
    want = _init_from_checkpoint(tf1, prefix, lambda lone: {"/": "new/"})
    got = _init_from_checkpoint(core, prefix, lambda lone: {"/": "new/"})
    _assert_close(got, want, exact=True)
    np.testing.assert_array_equal(got["new/dense_1/bias"], saved["dense_1/bias"])
    for bad, match in [({"dense/": "new/dense/kernel"}, "Tensor dense/ is not found"),
                       ({"/": "other/"}, r"Tensor lone \(lone in /\) is not found"),
                       ({"dense": "new/dense/"}, "should map to scope only"),
                       ({"dense_1/kernel": "new/dense/kernel"}, "doesn't match with shape")]:
        with pytest.raises(ValueError, match=match):
            _init_from_checkpoint(core, prefix, lambda lone, bad=bad: bad)
        with pytest.raises(ValueError, match=match):
            _init_from_checkpoint(tf1, prefix, lambda lone, bad=bad: bad)


def test_checkpoint_initializer_graph_runs_in_tensorflow(tf1, tmp_path):
    """Our init_from_checkpoint initializer is a RestoreV2 + Assign that TensorFlow runs from our GraphDef."""
    prefix, saved = _save(core, "sgd", str(tmp_path))
    with core.Graph().as_default() as g:
        w = core.get_variable("w", [4, 8], initializer=core.zeros_initializer())
        core.train.init_from_checkpoint(prefix, {"dense/kernel": "w"})
        assert w.initial_value.op.type == "RestoreV2" and w.initial_value.shape.as_list() == [4, 8]
        graph_def = g.as_graph_def()
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(graph_def.SerializeToString()), name="")
        with tf1.Session() as sess:
            sess.run(w.initializer.name)
            np.testing.assert_array_equal(sess.run("w:0"), saved["dense/kernel"])


def test_control_flow_contexts_are_tf1s(tf1):
    """The ``while_context`` and ``cond_context`` collections of an exported meta graph (a while loop with a cond
    in its body, its gradient loop, a cond outside) are TF1's: names, pivots, Enter/Exit tensors, values, external
    values and nested contexts, along with the graph node for node."""
    def program(tf):
        x = tf.Variable(np.float32(1.5), name="x")
        _, y = tf.while_loop(lambda i, v: i < 3,
                             lambda i, v: (i + 1, tf.cond(v > 2.0, lambda: v * 0.5, lambda: v * x)), [0, x])
        z = tf.cond(y > 1.0, lambda: tf.square(y), lambda: y + x)
        tf.gradients(z, [x])
        return tf.train.export_meta_graph()
    with as_tf1_built_graphs(tf1):
        want, got = tf1_and_core(tf1, program)
    assert {"while_context", "cond_context"} <= set(want.collection_def)
    assert meta_graph_differences(want, got) == {}
