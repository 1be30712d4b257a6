"""Sparse optimizer updates against real tf.compat.v1: embedding gradients (IndexedSlices, repeated ids, a sharded
table) applied by every TF1 optimizer through TF's sparse ops (ScatterSub, SparseApply*, Adam's
Assign + ScatterAdd), compared value by value after several steps and by the op types of the training step; and
the state ops tf.scatter_* / tf.scatter_nd_*."""
import numpy as np
import pytest

from _oracle import tf1_and_core
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core

STEPS = 5
OPTIMIZERS = {
    "GradientDescent": (lambda tf: tf.train.GradientDescentOptimizer(0.1), {"ScatterSub"}),
    "Momentum": (lambda tf: tf.train.MomentumOptimizer(0.05, 0.9), {"SparseApplyMomentum"}),
    "MomentumNesterov": (lambda tf: tf.train.MomentumOptimizer(0.05, 0.7, use_nesterov=True),
                         {"SparseApplyMomentum"}),
    "Adagrad": (lambda tf: tf.train.AdagradOptimizer(0.2, initial_accumulator_value=0.3), {"SparseApplyAdagrad"}),
    "Adadelta": (lambda tf: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6), {"SparseApplyAdadelta"}),
    "Adam": (lambda tf: tf.train.AdamOptimizer(0.05), {"ScatterAdd", "Assign", "AssignSub"}),
    "Ftrl": (lambda tf: tf.train.FtrlOptimizer(0.3, l1_regularization_strength=0.01), {"SparseApplyFtrl"}),
    "FtrlShrinkage": (lambda tf: tf.train.FtrlOptimizer(0.3, l2_shrinkage_regularization_strength=0.05),
                      {"SparseApplyFtrlV2"}),
    "RMSProp": (lambda tf: tf.train.RMSPropOptimizer(0.01, momentum=0.3), {"SparseApplyRMSProp"}),
    "RMSPropCentered": (lambda tf: tf.train.RMSPropOptimizer(0.02, decay=0.8, momentum=0.5, centered=True),
                        {"SparseApplyCenteredRMSProp"}),
}
# float32 roundings (tests/_tolerance.py) of the program's STEPS steps: each step's gradient ((rows − t)²·rows'
# derivative, 3 roundings; up to 3 repeats of an id added; sin's derivative) and update (up to 8 operations and
# two functions: square roots, Ftrl's power)
N32 = STEPS * ((3 + 3 + ELEMENTWISE_ULPS) + (8 + 2 * ELEMENTWISE_ULPS))
RNG = np.random.RandomState(11)
TABLE = RNG.randn(8, 3).astype(np.float32)
SHARDS = [RNG.randn(3, 3).astype(np.float32), RNG.randn(2, 3).astype(np.float32)]
IDS = np.array([[1, 6, 1], [4, 1, 0]], np.int32)
TARGET = RNG.randn(2, 3, 3).astype(np.float32)


def _types(ops):
    """Op types; core's Python ``+`` builds TF1's ``Add`` where TF 2.x's compat.v1 builds ``AddV2``."""
    return sorted({"AddV2" if op.type == "Add" else op.type for op in ops})


def _program(tf, make_opt):
    emb = tf.Variable(TABLE, name="emb", use_resource=False)
    shards = [tf.Variable(s, name="shard_%d" % i, use_resource=False) for i, s in enumerate(SHARDS)]
    rows = tf.nn.embedding_lookup(emb, IDS)
    sharded_rows = tf.nn.embedding_lookup(shards, tf.constant([[4, 0, 4]]), partition_strategy="mod")
    loss = tf.reduce_sum(tf.square(rows - TARGET) * rows) + tf.reduce_sum(tf.sin(sharded_rows))
    opt = make_opt(tf)
    grads = opt.compute_gradients(loss)
    assert all(isinstance(g, tf.IndexedSlices) for g, _ in grads)
    train_op = opt.apply_gradients(grads)
    ops = tf.get_default_graph().get_operations()
    step_types = _types(op for op in ops if op.name.startswith(opt.get_name() + "/"))
    all_types = _types(op for op in ops if not op.name.startswith("gradients"))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(STEPS):
            sess.run(train_op)
        fetch = {v.op.name: v for v in tf.global_variables()}
        return sess.run(fetch), step_types, all_types


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_sparse_updates_match_tf1(tf1, name):
    make_opt, sparse_ops = OPTIMIZERS[name]
    (want, want_step, want_all), (got, got_step, got_all) = tf1_and_core(tf1, _program, make_opt)
    assert sorted(got) == sorted(want)
    for key, w in want.items():
        assert_float32_close(got[key], w, n=N32, err_msg=key)
    assert sparse_ops <= set(got_step)
    assert got_step == want_step
    assert got_all == want_all
    untouched = [r for r in range(TABLE.shape[0]) if r not in IDS]
    np.testing.assert_array_equal(got["emb"][untouched], TABLE[untouched])      # only looked-up rows move
    assert not np.allclose(got["emb"][1], TABLE[1])
    # ids 4 and 0 are both in shard 0 ("mod"): shard 1 gets an empty IndexedSlices
    np.testing.assert_array_equal(got["shard_1"], SHARDS[1])
    assert not np.allclose(got["shard_0"][0], SHARDS[0][0])


SCATTER = ["scatter_update", "scatter_add", "scatter_sub", "scatter_mul", "scatter_div", "scatter_max",
           "scatter_min"]


def _scatter(tf, fn, dtype, duplicates):
    base = (np.arange(24).reshape(6, 4) % 7 + 1).astype(dtype)
    v = tf.Variable(base, name="v", use_resource=False)
    idx = [4, 1, 4] if duplicates else [4, 1, 0]
    updates = (np.arange(12).reshape(3, 4) % 5 - 2).astype(dtype)
    updates[updates == 0] = 3
    out = getattr(tf, fn)(v, idx, updates)
    op = out.op
    locking = op.get_attr("use_locking") if hasattr(op, "get_attr") else op.attrs["use_locking"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(out), op.type, locking


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("fn", SCATTER)
def test_scatter_ops_match_tf1(tf1, fn, dtype):
    duplicates = fn != "scatter_update"           # TF leaves the order of repeated updates unspecified
    (want, want_type, want_lock), (got, got_type, got_lock) = tf1_and_core(tf1, _scatter, fn, dtype, duplicates)
    assert got_type == want_type and got_lock == want_lock
    assert got.dtype == want.dtype
    # small integers, added, multiplied or compared exactly; a repeated index's two quotients in either order
    # (float32: 2 roundings, tests/_tolerance.py)
    assert_float32_close(got, want, n=2)


def _scatter_nd(tf, fn):
    v = tf.Variable(np.arange(24, dtype=np.float32).reshape(2, 3, 4), name="v", use_resource=False)
    dup = fn != "scatter_nd_update"
    idx = [[1, 2], [0, 0], [1, 2]] if dup else [[1, 2], [0, 0], [0, 1]]
    out = getattr(tf, fn)(v, idx, np.arange(12, dtype=np.float32).reshape(3, 4) - 5)
    op_type = out.op.type
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(out), op_type


@pytest.mark.parametrize("fn", ["scatter_nd_update", "scatter_nd_add", "scatter_nd_sub"])
def test_scatter_nd_ops_match_tf1(tf1, fn):
    (want, want_type), (got, got_type) = tf1_and_core(tf1, _scatter_nd, fn)
    assert got_type == want_type
    np.testing.assert_array_equal(got, want)      # sums of small integers: exact in any order


def test_scatter_bad_indices_and_shapes_are_named():
    with core.Graph().as_default():
        v = core.Variable(np.zeros((3, 2), np.float32), name="table")
        bad_index = core.scatter_add(v, [0, 3], np.ones((2, 2), np.float32))
        bad_shape = core.scatter_add(v, [0, 1], np.ones((2, 3), np.float32))
        bad_nd = core.scatter_nd_add(v, [[0, 5]], [1.0])
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            with pytest.raises(core.errors.InvalidArgumentError, match=r"indices\[1\] = 3 is not in \[0, 3\).*table"):
                sess.run(bad_index)
            with pytest.raises(core.errors.InvalidArgumentError, match="updates must have shape"):
                sess.run(bad_shape)
            with pytest.raises(core.errors.InvalidArgumentError, match="does not index into shape"):
                sess.run(bad_nd)


@pytest.mark.parametrize("name", ["Adam", "Momentum", "Ftrl", "GradientDescent"])
def test_core_graph_def_trains_in_tf1(tf1, name):
    """The GraphDef core writes for a sharded, sparse training step is one TF imports and runs to core's values."""
    make_opt, _ = OPTIMIZERS[name]
    with core.Graph().as_default() as graph:
        got, _, _ = _program(core, make_opt)
        train_name = [op.name for op in graph.get_operations() if op.name == make_opt(core).get_name()][0]
        init_name = core.global_variables_initializer().name
        names = sorted(v.op.name for v in core.global_variables())
        graph_def = graph.as_graph_def()
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(graph_def.SerializeToString()), name="")
        with tf1.Session() as sess:
            sess.run(init_name)
            for _ in range(STEPS):
                sess.run(train_name)
            want = dict(zip(names, sess.run([n + ":0" for n in names])))
    for key in names:
        assert_float32_close(got[key], want[key], n=N32, err_msg=key)
