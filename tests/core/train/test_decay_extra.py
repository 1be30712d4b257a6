"""cosine_decay_restarts, linear_cosine_decay and noisy_linear_cosine_decay of tfevents.core against real
tf.compat.v1.train: values at many global steps (fed through a placeholder) and the op types of the schedule;
for the noisy schedule, which cannot match TF's random draws, the deterministic part (zero variance) exactly and
the noise's mean and variance statistically."""
import numpy as np
import pytest

from _oracle import tf1_and_core
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core

STEPS = [0, 1, 2, 3, 7, 9, 10, 11, 15, 19, 20, 29, 30, 31, 45, 69, 70, 71, 99, 100, 150, 1000]


def _types(graph):
    """Op types outside ``cond``: TF 2.x's compat.v1 builds a functional ``StatelessIf`` where core builds TF1's
    Switch/Merge, so the inside of the cond is compared by value only."""
    return sorted({"AddV2" if op.type == "Add" else op.type for op in graph.get_operations()
                   if "/cond/" not in op.name and op.type != "StatelessIf"})


SCHEDULES = {
    "restarts": lambda tf, gs: tf.train.cosine_decay_restarts(0.1, gs, 10),
    "restarts_tmul1": lambda tf, gs: tf.train.cosine_decay_restarts(0.1, gs, 10, t_mul=1.0, m_mul=0.8),
    "restarts_all": lambda tf, gs: tf.train.cosine_decay_restarts(0.5, gs, 7, t_mul=1.5, m_mul=0.9, alpha=0.05),
    "linear_cosine": lambda tf, gs: tf.train.linear_cosine_decay(0.1, gs, 50),
    "linear_cosine_opts": lambda tf, gs: tf.train.linear_cosine_decay(0.2, gs, 40, num_periods=2.5, alpha=0.1,
                                                                      beta=0.01),
    "noisy_zero_variance": lambda tf, gs: tf.train.noisy_linear_cosine_decay(0.2, gs, 40, initial_variance=0.0,
                                                                             num_periods=1.5, alpha=0.1),
}


def _schedule(tf, which, steps, dtype):
    gs = tf.placeholder(dtype, [], name="gs")
    lr = SCHEDULES[which](tf, gs)
    with tf.Session() as sess:
        values = [sess.run(lr, {gs: s}) for s in steps]
    return values, _types(tf.get_default_graph()), lr.op.name


@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("which", sorted(SCHEDULES))
def test_schedule_matches_tf1(tf1, which, dtype):
    (want, want_types, want_name), (got, got_types, got_name) = tf1_and_core(tf1, _schedule, which, STEPS, dtype)
    assert got_name == want_name
    assert got_types == want_types
    # float32 (tests/_tolerance.py): the period's log and the cosine, and the products, quotients and sums around
    # them, against the schedule's terms (its largest value, the initial rate)
    for step, g, w in zip(STEPS, got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype == np.float32
        assert_float32_close(g, w, n=2 * ELEMENTWISE_ULPS + 8, scale=max(want), err_msg="%s at step %d" % (which, step))
    assert len(set(np.round(got, 7))) > len(STEPS) // 2          # the schedule really varies


def test_restarts_restart():
    """Each period ends near alpha and the next one starts at m_mul**i times the rate."""
    with core.Graph().as_default():
        gs = core.placeholder(core.int64, [])
        lr = core.train.cosine_decay_restarts(1.0, gs, 10, t_mul=2.0, m_mul=0.5)
        with core.Session() as sess:
            at = {s: sess.run(lr, {gs: s}) for s in (0, 9, 10, 29, 30)}
    assert at[0] == pytest.approx(1.0) and at[10] == pytest.approx(0.5) and at[30] == pytest.approx(0.25)
    assert at[9] < 0.03 and at[29] < 0.01


def _noisy_samples(tf, step, n):
    gs = tf.constant(step, tf.int64)
    kw = dict(initial_variance=0.5, variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001)
    lr = tf.train.noisy_linear_cosine_decay(1.0, gs, 100, **kw)
    with tf.Session() as sess:
        return np.array([sess.run(lr) for _ in range(n)]), _types(tf.get_default_graph())


@pytest.mark.parametrize("step", [0, 30, 99])
def test_noisy_statistics_match_tf1(tf1, step):
    n = 1500
    (want, want_types), (got, got_types) = tf1_and_core(tf1, _noisy_samples, step, n)
    assert got_types == want_types
    cosine = 0.5 * (1 + np.cos(np.pi * step / 100))
    variance = 0.5 / (1.0 + step) ** 0.55
    mean = (100 - step) / 100 * cosine + 0.001
    sd = np.sqrt(variance) * cosine
    assert len(set(got.tolist())) > n // 2                    # fresh noise per run
    for samples in (want, got):                               # both around the deterministic part
        assert abs(samples.mean() - mean) < 5 * sd / np.sqrt(n)
        assert samples.std() == pytest.approx(sd, rel=0.1)
    assert abs(got.mean() - want.mean()) < 6 * sd / np.sqrt(n)
    assert got.std() == pytest.approx(want.std(), rel=0.15)


def test_global_step_required():
    with core.Graph().as_default():
        for fn in (core.train.cosine_decay_restarts, core.train.linear_cosine_decay,
                   core.train.noisy_linear_cosine_decay):
            with pytest.raises(ValueError, match="global_step is required"):
                fn(0.1, None, 10)
