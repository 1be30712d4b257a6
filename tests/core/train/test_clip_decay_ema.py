"""Clipping, learning-rate schedules and ExponentialMovingAverage of tfevents.core against tf.compat.v1 on grids
that include zero and infinite norms, step 0 and cycle/staircase boundaries."""
import numpy as np
import pytest

from _oracle import tf1_and_core
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core

# inf / NaN norms are part of the grid: numpy's "invalid value" warnings are expected there
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INF = np.inf
TENSORS = [
    np.array([[3.0, -4.0], [0.5, 2.0]]),
    np.zeros((2, 3)),
    np.array([[INF, 1.0], [2.0, -3.0]]),
    np.array([1e-30, -2e-30, 0.0]),
    np.array([[-7.0, 0.0, 2.5]]),
]


def _clip_program(tf, t, dtype):
    x = tf.constant(t.astype(dtype))
    out = [tf.clip_by_value(x, -1.5, 2.0), tf.clip_by_norm(x, 2.0), tf.clip_by_norm(x, 0.5, axes=[0]),
           tf.clip_by_average_norm(x, 0.3) if dtype == "float32" else x, tf.global_norm([x, None, x * 2.0])]
    clipped, norm = tf.clip_by_global_norm([x, None, x * 0.5], 1.25)
    assert clipped[1] is None
    out += [clipped[0], clipped[2], norm]
    # gradients: finite even at a zero norm (clip_by_norm's where trick)
    v = tf.Variable(t.astype(dtype), name="v")
    out += tf.gradients(tf.reduce_sum(tf.clip_by_norm(v * 1.0, 1.0) * 3.0), [v])
    out += tf.gradients(tf.reduce_sum(tf.clip_by_value(v * 2.0, -1.0, 1.0)), [v])
    out += tf.gradients(tf.reduce_sum(tf.clip_by_global_norm([v * 1.0], 1.0)[0][0]), [v])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(out)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clipping_matches_tf1(tf1, dtype):
    for t in TENSORS:
        want, got = tf1_and_core(tf1, _clip_program, t, dtype)
        for i, (g, w) in enumerate(zip(got, want)):
            if dtype == "float32":
                # the global norm's sum of 2·6 squares, its square root, the clip's quotient and product; back
                # through them (tests/_tolerance.py); nan and inf where TF has them
                assert_float32_close(g, w, n=2 * (2 * 6 + 4), err_msg="output %d for %r" % (i, t))
            else:
                np.testing.assert_allclose(g, w, rtol=1e-6, atol=0, equal_nan=True,
                                           err_msg="output %d for %r" % (i, t))
            assert g.dtype == w.dtype


def test_clip_by_global_norm_infinite_norm_gives_nan_and_keeps_sparse():
    with core.Graph().as_default():
        emb = core.Variable(np.ones((4, 2)), name="emb")
        grad = core.gradients(core.reduce_sum(core.gather(emb, [1, 3]) * 2.0), [emb])[0]
        assert isinstance(grad, core.IndexedSlices)
        (clipped,), norm = core.clip_by_global_norm([grad], 1.0)
        assert isinstance(clipped, core.IndexedSlices)
        by_norm = core.clip_by_norm(grad, 1.0)
        assert isinstance(by_norm, core.IndexedSlices)
        (bad, _), bad_norm = core.clip_by_global_norm([core.constant([np.inf, 1.0]), core.constant([2.0])], 1.0)
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            values, n = sess.run([clipped.values, norm])
            assert n == pytest.approx(4.0)
            np.testing.assert_allclose(values, np.full((2, 2), 0.5))
            assert np.isnan(sess.run(bad)).all() and np.isinf(sess.run(bad_norm))
    with pytest.raises(TypeError, match="sequence"):
        core.clip_by_global_norm(zip([1.0]), 1.0)


STEPS = [0, 1, 5, 9, 10, 11, 20, 25, 30, 31, 100]


def _schedules(tf, step):
    gs = tf.placeholder(tf.int64, [], name="gs")
    out = [tf.train.exponential_decay(0.1, gs, 10, 0.5),
           tf.train.exponential_decay(0.1, gs, 10, 0.5, staircase=True),
           tf.train.natural_exp_decay(0.2, gs, 10, 0.3),
           tf.train.natural_exp_decay(0.2, gs, 10, 0.3, staircase=True),
           tf.train.inverse_time_decay(0.2, gs, 10, 0.7),
           tf.train.inverse_time_decay(0.2, gs, 10, 0.7, staircase=True),
           tf.train.polynomial_decay(0.1, gs, 10),
           tf.train.polynomial_decay(0.1, gs, 10, end_learning_rate=0.01, power=2.0, cycle=True),
           tf.train.polynomial_decay(0.1, gs, 10, end_learning_rate=0.02, power=0.5),
           tf.train.cosine_decay(0.1, gs, 20),
           tf.train.cosine_decay(0.1, gs, 20, alpha=0.1),
           tf.train.piecewise_constant(gs, [5, 10, 30], [1.0, 0.5, 0.1, 0.01]),
           tf.train.piecewise_constant(tf.cast(gs, tf.int32), [10], [3, 4])]
    with tf.Session() as sess:
        return [sess.run(out, {gs: s}) for s in step]


def test_schedules_match_tf1(tf1):
    want, got = tf1_and_core(tf1, _schedules, STEPS)
    # float32 (tests/_tolerance.py): a power, exp or cosine and the products, quotients and sums around it, against
    # the schedule's terms (its rates: at most 1); piecewise_constant's integers exactly
    for step, g_row, w_row in zip(STEPS, got, want):
        for i, (g, w) in enumerate(zip(g_row, w_row)):
            assert np.asarray(g).dtype == np.asarray(w).dtype, (i, step)
            assert_float32_close(g, w, n=ELEMENTWISE_ULPS + 4, scale=max(abs(float(w)), 1.0),
                                 err_msg="schedule %d at step %d" % (i, step))


def test_schedule_argument_errors():
    with core.Graph().as_default():
        with pytest.raises(ValueError, match="global_step is required"):
            core.train.exponential_decay(0.1, None, 10, 0.5)
        with pytest.raises(ValueError, match="1 less than"):
            core.train.piecewise_constant(core.constant(1), [1, 2], [0.1, 0.2])


def test_global_step_helpers(tf1):
    with core.Graph().as_default():
        assert core.train.get_global_step() is None
        gs = core.train.get_or_create_global_step()
        assert gs.op.name == "global_step" and gs.dtype == core.int64 and not gs.trainable
        assert core.train.get_or_create_global_step() is gs
        assert core.train.get_global_step() is gs
        with pytest.raises(ValueError, match="already exists"):
            core.train.create_global_step()
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            assert core.train.global_step(sess, gs) == 0
    with tf1.Graph().as_default():
        tgs = tf1.train.get_or_create_global_step()
        assert tgs.op.name == "global_step" and tgs.dtype == tf1.int64


def _ema_program(tf, num_updates, dtype):
    w = tf.Variable(np.array([1.0, -2.0, 3.0], dtype), name="w")
    b = tf.Variable(np.array(0.5, dtype), name="b")
    gs = tf.Variable(0, dtype=tf.int64, trainable=False, name="gs")
    x = tf.placeholder(dtype, [3], name="x")
    step = tf.group(tf.assign(w, w * 0.5 + x), tf.assign_add(b, 1.0), tf.assign_add(gs, 1))
    ema = tf.train.ExponentialMovingAverage(0.9, num_updates=gs if num_updates else None)
    with tf.control_dependencies([step]):
        train = ema.apply([w, b])
    tensor_ema = tf.train.ExponentialMovingAverage(0.8, zero_debias=True, name="tensor_avg")
    update_tensor = tensor_ema.apply([tf.reduce_sum(x * x)]) if dtype == "float32" else tf.no_op()
    names = [ema.average_name(w), ema.average(w).op.name, ema.average_name(b)]
    restore_names = sorted(ema.variables_to_restore())
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(7):
            sess.run([train, update_tensor], {x: np.array([i, 1.0 - i, 0.5 * i], dtype)})
            out.append(sess.run([ema.average(w), ema.average(b)]))
    return out, names, restore_names, tf.moving_average_variables()


@pytest.mark.parametrize("num_updates", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ema_matches_tf1(tf1, num_updates, dtype):
    (want, want_names, want_restore, want_mavs), (got, names, restore, mavs) = tf1_and_core(
        tf1, _ema_program, num_updates, dtype)
    assert names == want_names == ["w/ExponentialMovingAverage"] * 2 + ["b/ExponentialMovingAverage"]
    assert restore == want_restore
    assert [v.op.name for v in mavs] == [v.op.name for v in want_mavs] == ["w", "b"]
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            if dtype == "float32":
                # seven steps (tests/_tolerance.py) of w·0.5 + x and the average's shadow − (1 − decay)·(shadow −
                # value), decay = min(0.9, (1 + n)/(10 + n))
                assert_float32_close(a, b, n=7 * (2 + 3 + 2))
            else:
                np.testing.assert_allclose(a, b, rtol=1e-6)


def test_ema_of_tensor_zero_debias_matches_tf1(tf1):
    def program(tf):
        x = tf.placeholder(tf.float32, [2], name="x")
        value = x * 2.0
        ema = tf.train.ExponentialMovingAverage(0.7, zero_debias=True)
        update = ema.apply([value])
        out = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(5):
                sess.run(update, {x: [i + 1.0, -i]})
                out.append(sess.run(ema.average(value)))
        return out
    want, got = tf1_and_core(tf1, program)
    # float32 (tests/_tolerance.py): a step's x·2, the biased average's update (3), the debiasing's power and
    # quotient; five steps
    step = 1 + 3 + ELEMENTWISE_ULPS + 2
    assert_float32_close(got, want, n=5 * step)
    assert_float32_close(got[0], [2.0, 0.0], n=step)     # debiased: the first value itself
