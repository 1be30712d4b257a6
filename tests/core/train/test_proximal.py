"""ProximalGradientDescent, ProximalAdagrad and AdagradDA of tfevents.core against real tf.compat.v1.train: one
program (a dense gradient through matmul, a sparse IndexedSlices gradient through gather with repeated ids) run
for several steps by both; variables, slots, slot names, optimizer variables and the op types of the training
step must agree."""
import numpy as np
import pytest

from _oracle import tf1_and_core
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core

STEPS = 7
OPTIMIZERS = {
    "ProximalGD": (lambda tf, gs: tf.train.ProximalGradientDescentOptimizer(0.1), []),
    "ProximalGDL1L2": (lambda tf, gs: tf.train.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.05, l2_regularization_strength=0.2), []),
    "ProximalAdagrad": (lambda tf, gs: tf.train.ProximalAdagradOptimizer(0.3), ["accumulator"]),
    "ProximalAdagradL1L2": (lambda tf, gs: tf.train.ProximalAdagradOptimizer(
        0.3, initial_accumulator_value=0.4, l1_regularization_strength=0.05, l2_regularization_strength=0.1),
        ["accumulator"]),
    "AdagradDA": (lambda tf, gs: tf.train.AdagradDAOptimizer(0.4, gs),
                  ["gradient_accumulator", "gradient_squared_accumulator"]),
    "AdagradDAL1L2": (lambda tf, gs: tf.train.AdagradDAOptimizer(
        0.4, gs, initial_gradient_squared_accumulator_value=0.2, l1_regularization_strength=0.03,
        l2_regularization_strength=0.1), ["gradient_accumulator", "gradient_squared_accumulator"]),
}
# float32 roundings (tests/_tolerance.py) of a step: the gradients' path (tanh of a dot of 3, the difference,
# tanh's derivative with its ulps thrice in 1 − y², the sum over 5 rows into w; the sparse rows' 3 repeats of
# index 2) and an update (up to 10 operations: the proximal step's shrinkage and quotients; a square root)
STEP_N32 = (3 + ELEMENTWISE_ULPS + 2 + 2 * ELEMENTWISE_ULPS + 2 + 5 + 3) + (10 + ELEMENTWISE_ULPS)
SPARSE_OPS = {"ProximalGD": "SparseApplyProximalGradientDescent", "ProximalAdagrad": "SparseApplyProximalAdagrad",
              "AdagradDA": "SparseApplyAdagradDA"}


def _initial():
    rng = np.random.RandomState(5)
    return dict(w=rng.randn(3, 4).astype(np.float32), emb=rng.randn(6, 4).astype(np.float32),
                x=rng.randn(5, 3).astype(np.float32), y=rng.randn(5, 4).astype(np.float32),
                t=rng.randn(5, 4).astype(np.float32))


def _types(ops):
    """Op types; core's Python ``+`` builds TF1's ``Add`` where TF 2.x's compat.v1 builds ``AddV2``."""
    return sorted({"AddV2" if op.type == "Add" else op.type for op in ops})


def _program(tf, make_opt):
    init = _initial()
    w = tf.Variable(init["w"], name="w", use_resource=False)
    emb = tf.Variable(init["emb"], name="emb", use_resource=False)
    rows = tf.gather(emb, tf.constant([0, 2, 2, 5, 2], dtype=tf.int32))
    loss = (tf.reduce_sum(tf.square(tf.tanh(tf.matmul(tf.constant(init["x"]), w)) - init["y"]))
            + tf.reduce_sum(tf.square(rows - init["t"]) * rows))
    gs = tf.Variable(0, dtype=tf.int64, trainable=False, name="step", use_resource=False)
    opt = make_opt(tf, gs)
    train_op = opt.minimize(loss, global_step=gs)
    step_types = _types(op for op in tf.get_default_graph().get_operations()
                        if op.name.startswith(opt.get_name() + "/"))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        fetch = {"w": w, "emb": emb, "step": gs}
        for name in opt.get_slot_names():
            for v in (w, emb):
                fetch["%s/%s" % (v.op.name, name)] = opt.get_slot(v, name)
        history = []
        for _ in range(STEPS):
            sess.run(train_op)
            history.append(sess.run(fetch))
    return dict(history=history, step_types=step_types, slot_names=opt.get_slot_names(),
                opt_vars=sorted(v.op.name for v in opt.variables()),
                slot_ops={k: t.op.name for k, t in fetch.items()})


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_matches_tf1_dense_and_sparse(tf1, name):
    make_opt, slot_names = OPTIMIZERS[name]
    want, got = tf1_and_core(tf1, _program, make_opt)
    assert got["slot_names"] == want["slot_names"] == slot_names
    assert got["opt_vars"] == want["opt_vars"]
    assert got["slot_ops"] == want["slot_ops"]
    assert got["step_types"] == want["step_types"]
    base = name.replace("L1L2", "")
    assert {"Apply" + SPARSE_OPS[base][len("SparseApply"):], SPARSE_OPS[base]} <= set(got["step_types"])
    init = _initial()
    for step, (w, g) in enumerate(zip(want["history"], got["history"])):
        assert sorted(g) == sorted(w)
        for key, value in w.items():
            assert np.asarray(g[key]).dtype == np.asarray(value).dtype, key
            assert_float32_close(g[key], value, n=(step + 1) * STEP_N32, err_msg="%s step %d" % (key, step))
    final = got["history"][-1]
    assert final["step"] == STEPS
    assert not np.allclose(final["w"], init["w"])
    untouched = [1, 3, 4]                             # rows not gathered never move
    np.testing.assert_array_equal(final["emb"][untouched], init["emb"][untouched])
    assert not np.allclose(final["emb"][2], init["emb"][2])


def test_l1_produces_exact_zeros_like_tf1(tf1):
    """A strong L1 pulls weights to exactly 0 (the proximal shrinkage), as in TF."""
    make = lambda tf, gs: tf.train.ProximalAdagradOptimizer(0.5, l1_regularization_strength=2.0)  # noqa: E731
    want, got = tf1_and_core(tf1, _program, make)
    w_zero = got["history"][-1]["w"] == 0
    assert w_zero.any()
    np.testing.assert_array_equal(w_zero, want["history"][-1]["w"] == 0)


def test_bad_arguments():
    with core.Graph().as_default():
        with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
            core.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0)
        gs = core.Variable(0, dtype=core.int64, trainable=False)
        with pytest.raises(ValueError, match="initial_gradient_squared_accumulator_value must be positive"):
            core.train.AdagradDAOptimizer(0.1, gs, initial_gradient_squared_accumulator_value=-1.0)
        w = core.Variable([1.0, 2.0])
        bad_step = core.Variable(0, dtype=core.int32, trainable=False)
        with pytest.raises(TypeError, match="global_step must be int64"):
            core.train.AdagradDAOptimizer(0.1, bad_step).minimize(core.reduce_sum(w * w))
