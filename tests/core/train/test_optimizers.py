"""tf.train optimizers of tfevents.core against real tf.compat.v1.train: the same program (dense and sparse
gradients, several steps) is built with both, and variables, slots and slot names must agree."""
import numpy as np
import pytest

from _oracle import tf1_and_core
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core

STEPS = 6
TOL = {"float64": 1e-6}
# float32 roundings (tests/_tolerance.py) of a step of run_program: the gradients' path (tanh of a dot of 3, the
# difference, tanh's derivative with its ulps thrice in 1 − y², the sum over 5 rows into w; the sparse rows' 3
# repeats of index 2) and an update (up to 8 operations and two functions: Ftrl's power and square root)
STEP_N32 = (3 + ELEMENTWISE_ULPS + 2 + 2 * ELEMENTWISE_ULPS + 2 + 5 + 3) + (8 + 2 * ELEMENTWISE_ULPS)

OPTIMIZERS = {
    "GradientDescent": (lambda tf: tf.train.GradientDescentOptimizer(0.1), []),
    "Momentum": (lambda tf: tf.train.MomentumOptimizer(0.05, 0.9), ["momentum"]),
    "MomentumNesterov": (lambda tf: tf.train.MomentumOptimizer(0.05, 0.7, use_nesterov=True), ["momentum"]),
    "Adagrad": (lambda tf: tf.train.AdagradOptimizer(0.2, initial_accumulator_value=0.3), ["accumulator"]),
    "Adadelta": (lambda tf: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6), ["accum", "accum_update"]),
    "AdadeltaDefaults": (lambda tf: tf.train.AdadeltaOptimizer(), ["accum", "accum_update"]),
    "Adam": (lambda tf: tf.train.AdamOptimizer(0.05), ["m", "v"]),
    "AdamOptions": (lambda tf: tf.train.AdamOptimizer(0.1, beta1=0.5, beta2=0.9, epsilon=1e-3), ["m", "v"]),
    "Ftrl": (lambda tf: tf.train.FtrlOptimizer(0.3), ["accum", "linear"]),
    "FtrlL1L2Power": (lambda tf: tf.train.FtrlOptimizer(0.3, learning_rate_power=-0.7, initial_accumulator_value=0.5,
                                                          l1_regularization_strength=0.05,
                                                          l2_regularization_strength=0.1), ["accum", "linear"]),
    "FtrlShrinkage": (lambda tf: tf.train.FtrlOptimizer(0.3, l1_regularization_strength=0.01,
                                                          l2_shrinkage_regularization_strength=0.05),
                      ["accum", "linear"]),
    "RMSProp": (lambda tf: tf.train.RMSPropOptimizer(0.01), ["momentum", "rms"]),
    "RMSPropMomentumCentered": (lambda tf: tf.train.RMSPropOptimizer(0.02, decay=0.8, momentum=0.5, epsilon=1e-6,
                                                                     centered=True), ["mg", "momentum", "rms"]),
}


def _initial(dtype):
    rng = np.random.RandomState(7)
    return dict(w=rng.randn(3, 4).astype(dtype), emb=rng.randn(6, 4).astype(dtype),
                x=rng.randn(5, 3).astype(dtype), y=rng.randn(5, 4).astype(dtype),
                t=rng.randn(5, 4).astype(dtype))


def run_program(tf, make_opt, dtype, steps=STEPS):
    """w: dense gradient (matmul); emb: sparse gradient from gather with a repeated index."""
    init = _initial(dtype)
    w = tf.Variable(init["w"], name="w")
    emb = tf.Variable(init["emb"], name="emb")
    x = tf.constant(init["x"])
    rows = tf.gather(emb, tf.constant([0, 2, 2, 5, 2], dtype=tf.int32))
    loss = (tf.reduce_sum(tf.square(tf.tanh(tf.matmul(x, w)) - init["y"]))
            + tf.reduce_sum(tf.square(rows - init["t"]) * rows))
    opt = make_opt(tf)
    gs = tf.Variable(0, dtype=tf.int64, trainable=False, name="step")
    train_op = opt.minimize(loss, global_step=gs)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train_op)
        fetch = {"w": w, "emb": emb, "step": gs}
        for name in opt.get_slot_names():
            for v in (w, emb):
                fetch["%s/%s" % (v.op.name, name)] = opt.get_slot(v, name)
        out = sess.run(fetch)
        out.update({"name " + k: t.op.name for k, t in fetch.items()})
    out["slot_names"] = opt.get_slot_names()
    out["opt_vars"] = sorted(v.op.name for v in opt.variables())
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_matches_tf1(tf1, name, dtype):
    make_opt, slot_names = OPTIMIZERS[name]
    expected, got = tf1_and_core(tf1, run_program, make_opt, dtype)
    assert got["slot_names"] == expected["slot_names"] == slot_names
    assert got["opt_vars"] == expected["opt_vars"]
    assert got["step"] == expected["step"] == STEPS
    init = _initial(dtype)
    assert not np.allclose(got["w"], init["w"]) and not np.allclose(got["emb"], init["emb"])
    for key, want in expected.items():
        if key.startswith("name "):
            assert got[key] == want, key
        elif isinstance(want, np.ndarray):
            assert got[key].dtype == want.dtype, key
            if dtype == "float32":
                assert_float32_close(got[key], want, n=STEPS * STEP_N32, err_msg=key)
            else:
                scale = max(1.0, float(np.abs(want).max()))
                np.testing.assert_allclose(got[key], want, rtol=TOL[dtype], atol=TOL[dtype] * scale, err_msg=key)


def test_sparse_updates_touch_only_gathered_rows():
    with core.Graph().as_default():
        emb = core.Variable(np.arange(12.0).reshape(6, 2), name="emb")
        loss = core.reduce_sum(core.gather(emb, [4, 1, 4]) ** 2)
        opt = core.train.MomentumOptimizer(0.1, 0.9)
        assert isinstance(opt.compute_gradients(loss)[0][0], core.IndexedSlices)
        train = opt.minimize(loss)
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            before = sess.run(emb)
            sess.run(train)
            after = sess.run(emb)
    changed = np.where(np.any(before != after, axis=1))[0]
    assert changed.tolist() == [1, 4]
    # duplicate index 4 gradients add up: d/de sum(e^2) twice = 4e
    np.testing.assert_allclose(after[4], before[4] - 0.1 * 4 * before[4])


def _names(tf, make_train):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", [2, 1], initializer=tf.ones_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b))
    train_op = make_train(tf, loss)
    ops = {op.name for op in tf.get_default_graph().get_operations()}
    return train_op.name, ops, sorted(v.op.name for v in tf.global_variables())


@pytest.mark.parametrize("case", ["adam", "adam_in_variable_scope", "momentum_scoped", "gd_global_step"])
def test_op_and_variable_names(tf1, case):
    def make_train(tf, loss):
        if case == "adam":
            return tf.train.AdamOptimizer().minimize(loss)
        if case == "adam_in_variable_scope":
            with tf.variable_scope("vs"), tf.name_scope("train"):
                return tf.train.AdamOptimizer().minimize(loss)
        if case == "momentum_scoped":
            with tf.name_scope("train"):
                return tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
        gs = tf.train.get_or_create_global_step()
        return tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs, name="sgd")
    (tf_name, tf_ops, tf_vars), (name, ops, variables) = tf1_and_core(tf1, _names, make_train)
    assert name == tf_name
    assert variables == tf_vars
    prefixes = ("Adam", "train/Momentum", "sgd", "beta", "layer/w/", "layer/b/", "vs/")
    wanted = {n for n in tf_ops if n.startswith(prefixes)
              and n.count("/") <= 2 and not n.endswith(("ReadVariableOp", "IsInitialized/VarIsInitializedOp",
                                                          "AssignVariableOp", "/Initializer/zeros", "/Assign"))}
    # leave out what only resource variables (TF 2) create; the global step's increment of a resource variable is
    # a Const, a reference variable's AssignAdd (TF1's, core's) converts its `sgd/value`
    wanted = {n for n in wanted if not any(k in n for k in ("Resource", "AssignAdd", "VariableOp", "initial_value"))
              and n != "sgd/Const"}
    missing = wanted - ops
    assert not missing, sorted(missing)


def test_apply_gradients_contract():
    with core.Graph().as_default():
        a = core.Variable([1.0, 2.0], name="a")
        b = core.Variable([3.0], name="b")
        gs = core.train.create_global_step()
        opt = core.train.GradientDescentOptimizer(0.5)
        loss = core.reduce_sum(a * a)
        gv = opt.compute_gradients(loss, [a, b])
        assert gv[1][0] is None and gv[0][1] is a
        train = opt.apply_gradients(gv, global_step=gs)        # None gradient skipped
        assert train in core.get_collection(core.GraphKeys.TRAIN_OP)
        with pytest.raises(ValueError, match="No gradients provided for any variable.*b:0"):
            opt.apply_gradients([(None, b)])
        with pytest.raises(ValueError, match="No gradients provided for any variable"):
            opt.minimize(core.reduce_sum(core.stop_gradient(a)), var_list=[a])
        with pytest.raises(TypeError, match="unsupported type"):
            opt.compute_gradients(loss, var_list=[a, core.constant(1.0)])
        with pytest.raises(ValueError, match="gate_gradients"):
            opt.compute_gradients(loss, gate_gradients=7)
        graph_gated = opt.compute_gradients(loss, [a], gate_gradients=opt.GATE_GRAPH)
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            sess.run(train)
            sess.run(train)
            np.testing.assert_allclose(sess.run(a), [0.0, 0.0])
            assert sess.run(b).tolist() == [3.0]
            assert core.train.global_step(sess, gs) == 2
            assert core.train.global_step(sess, "global_step:0") == 2
            np.testing.assert_allclose(sess.run(graph_gated[0][0]), [0.0, 0.0])


@pytest.mark.parametrize("make", [
    lambda tf: tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0),
    lambda tf: tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5),
    lambda tf: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=-1.0),
    lambda tf: tf.train.FtrlOptimizer(0.1, l2_regularization_strength=-1.0),
    lambda tf: tf.train.FtrlOptimizer(0.1, initial_accumulator_value=-0.1),
])
def test_argument_checks_like_tf1(tf1, make):
    with pytest.raises(ValueError):
        make(tf1)
    with pytest.raises(ValueError):
        make(core)


def test_hyperparameters_as_tensors_and_callables(tf1):
    def program(tf):
        lr = tf.placeholder(tf.float32, [], name="lr")
        v = tf.Variable([1.0, -2.0], name="v")
        loss = tf.reduce_sum(v * v)
        opt = tf.train.MomentumOptimizer(lr, lambda: 0.5)
        train = opt.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for value in (0.1, 0.2, 0.05):
                sess.run(train, {lr: value})
            return sess.run(v)
    want, got = tf1_and_core(tf1, program)
    assert_float32_close(got, want, n=3 * 4)      # three steps of 2v, accum·0.5 + g, v − lr·accum (tests/_tolerance.py)


def test_graphdef_with_every_optimizer_runs_in_tf1(tf1):
    """The GraphDef we export (ApplyAdam, SparseApplyFtrl, Unique, ScatterAdd, FIFOQueueV2 ...) imports into
    TF and, run there, gives exactly our values."""
    graph = core.Graph()
    with graph.as_default():
        w = core.Variable(np.linspace(-1, 1, 6).reshape(3, 2).astype(np.float32), name="w")
        emb = core.Variable(np.linspace(0.5, 2, 10).reshape(5, 2).astype(np.float32), name="emb")
        loss = core.reduce_sum(core.square(w)) + core.reduce_sum(core.gather(emb, [1, 1, 3]) ** 2)
        gs = core.train.get_or_create_global_step()
        train_ops = [core.train.AdamOptimizer(0.1).minimize(loss, global_step=gs)]
        train_ops += [make(core).minimize(loss) for make, _ in OPTIMIZERS.values()]
        queue = core.FIFOQueue(3, [core.float32], shapes=[[2]])
        enqueue, dequeue = queue.enqueue([[1.0, 2.0]]), queue.dequeue()
        init = core.global_variables_initializer()
        graph_def = graph.as_graph_def()
        with core.Session() as sess:
            sess.run(init)
            for _ in range(3):
                for op in train_ops:
                    sess.run(op)
            want = sess.run([w, emb, gs])
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(graph_def.SerializeToString()), name="")
        with tf1.Session() as sess:
            sess.run(init.name)
            for _ in range(3):
                for op in train_ops:
                    sess.run(op.name)
            got = sess.run(["w:0", "emb:0", "global_step:0"])
            sess.run(enqueue.name)
            assert sess.run(dequeue.name).tolist() == [1.0, 2.0]
    # the same graph, so only the kernels differ: three rounds of 15 updates of w and emb in a row (tests/
    # _tolerance.py), each a gradient (2 roundings) and an update (up to 8 operations and two functions)
    for g, wv in zip(got, want):
        assert_float32_close(g, wv, n=3 * 15 * (2 + 8 + 2 * ELEMENTWISE_ULPS))
