"""tf.nn.nce_loss / sampled_softmax_loss, the candidate samplers and compute_accidental_hits of tfevents.core
against real tf.compat.v1. Random draws cannot match TF's bit for bit, so: with ``sampled_values`` given the
losses and gradients must equal TF's; the samplers' expected counts must follow TF's formula for TF's own draws
(deterministic given the candidates and the number of tries); their draws must follow the distribution."""
import numpy as np
import pytest

from _oracle import tf1_and_core
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close, float32_rtol
from tfevents import core
from tfevents.core.ops import candidate_sampling_ops as cs

RNG = np.random.RandomState(5)
NUM_CLASSES, DIM = 12, 4
WEIGHTS = RNG.randn(NUM_CLASSES, DIM).astype(np.float32)
BIASES = RNG.randn(NUM_CLASSES).astype(np.float32)
INPUTS = RNG.randn(3, DIM).astype(np.float32)
LABELS = np.array([[2, 7], [5, 1], [11, 2]], np.int64)
SAMPLED = np.array([5, 2, 9, 0, 10], np.int64)                 # 5 and 2 are true classes of some rows
TRUE_EC = np.array([[0.3, 0.9], [0.5, 0.2], [0.05, 0.3]], np.float32)
SAMPLED_EC = np.array([0.5, 0.3, 0.1, 0.8, 0.07], np.float32)


def _loss_program(tf, kind, remove_hits, sharded):
    if sharded:
        parts = np.split(WEIGHTS, [3, 6, 8, 10])                  # "div": 12 rows, the first 2 shards one longer
        weights = [tf.Variable(p, name="w_%d" % i, use_resource=False) for i, p in enumerate(parts)]
    else:
        weights = [tf.Variable(WEIGHTS, name="w", use_resource=False)]
    biases = tf.Variable(BIASES, name="b", use_resource=False)
    inputs = tf.Variable(INPUTS, name="x", use_resource=False)
    fn = tf.nn.nce_loss if kind == "nce" else tf.nn.sampled_softmax_loss
    loss = fn(weights if sharded else weights[0], biases, tf.constant(LABELS), inputs, num_sampled=len(SAMPLED),
              num_classes=NUM_CLASSES, num_true=2, remove_accidental_hits=remove_hits, partition_strategy="div",
              sampled_values=(tf.constant(SAMPLED), tf.constant(TRUE_EC), tf.constant(SAMPLED_EC)))
    grads = tf.gradients(tf.reduce_sum(loss * tf.constant([1.0, -0.5, 2.0])), weights + [biases, inputs])
    assert all(isinstance(g, tf.IndexedSlices) for g in grads[:len(weights) + 1]), grads
    types = sorted({"AddV2" if op.type == "Add" else op.type for op in tf.get_default_graph().get_operations()
                    if not op.name.startswith("gradients")})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run([loss] + [tf.convert_to_tensor(g) for g in grads]), loss.shape.as_list(), types


@pytest.mark.parametrize("sharded", [False, True])
@pytest.mark.parametrize("remove_hits", [False, True])
@pytest.mark.parametrize("kind", ["nce", "sampled_softmax"])
def test_losses_with_fixed_candidates_match_tf1(tf1, kind, remove_hits, sharded):
    (want, want_shape, want_types), (got, got_shape, got_types) = tf1_and_core(tf1, _loss_program, kind,
                                                                               remove_hits, sharded)
    assert got_shape == want_shape == [3]
    # float32 roundings (tests/_tolerance.py): the logits' dots of 4 and bias, minus log(expected count), the
    # sigmoid or softmax (over 7) cross entropy and the sum over 2 true classes; back: the 7 logits' δ·w into x,
    # up to 3 rows added into a class's row of w
    for w, g in zip(want, got):
        assert g.shape == w.shape
        assert_float32_close(g, w, n=(4 + 1) + ELEMENTWISE_ULPS + (2 * ELEMENTWISE_ULPS + 7) + 2 + 7 + 3)
    assert np.all(np.isfinite(got[0]))
    # core adds Shape ops where TF folds shapes its static inference knows (Slice by a Pack of a StridedSlice)
    # and its sigmoid cross-entropy builds ZerosLike where TF's folds to a Const; every other op type is TF's
    assert set(got_types) - {"Shape", "ZerosLike"} == set(want_types) - {"Shape", "ZerosLike"}
    assert ("SparseToDense" in got_types) == remove_hits


def test_accidental_hits_change_the_loss():
    losses = []
    for remove in (False, True):
        with core.Graph().as_default():
            losses.append(_loss_program(core, "sampled_softmax", remove, False)[0][0])
    assert not np.allclose(losses[0], losses[1])


def _hits(tf):
    out = tf.nn.compute_accidental_hits(tf.constant(LABELS), tf.constant(np.array([2, 5, 2, 3, 11], np.int64)),
                                        num_true=2)
    with tf.Session() as sess:
        return sess.run(out), [t.dtype.name for t in out], out[0].op.type


def test_compute_accidental_hits_matches_tf1(tf1):
    (want, want_dtypes, want_type), (got, got_dtypes, got_type) = tf1_and_core(tf1, _hits)
    assert got_type == want_type == "ComputeAccidentalHits"
    assert got_dtypes == want_dtypes == ["int32", "int64", "float32"]
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    assert got[0].size == 4                            # rows 0, 1, 2 hit (row 0: 2 at its last place, 2)


TRUE = np.array([[0, 3], [7, 1], [19, 2]], np.int64)
UNIGRAMS = [3.0, 1.0, 0.5, 4.0, 2.0, 1.0, 0.25, 6.0, 1.5, 2.5, 1.0, 0.75, 2.0, 3.0, 1.0, 0.5, 1.0, 2.0, 1.0]
SAMPLERS = {
    "uniform": (lambda tf, unique, seed: tf.nn.uniform_candidate_sampler(TRUE, 2, 6, unique, 20, seed=seed),
                lambda: cs._uniform(dict(range_max=20))[0]),
    "log_uniform": (lambda tf, unique, seed: tf.random.log_uniform_candidate_sampler(TRUE, 2, 6, unique, 20,
                                                                                     seed=seed),
                    lambda: cs._log_uniform(dict(range_max=20))[0]),
    "fixed_unigram": (lambda tf, unique, seed: tf.nn.fixed_unigram_candidate_sampler(
        TRUE, 2, 6, unique, 20, distortion=0.75, num_reserved_ids=1, unigrams=UNIGRAMS, seed=seed),
        lambda: cs._fixed_unigram(dict(range_max=20, num_shards=1, shard=0, num_reserved_ids=1, unigrams=UNIGRAMS,
                                       vocab_file="", distortion=0.75))[0]),
}


def _draw(tf, name, unique, runs=1):
    out = SAMPLERS[name][0](tf, unique, 7)
    with tf.Session() as sess:
        return [sess.run(out) for _ in range(runs)], out[0].op.type


# TF's expected counts, float32 without sums: p (a log ratio or a power, cast from float64), then p·num_sampled or
# −expm1(tries·log1p(−p)); each element within this relative bound of core's formula (tests/_tolerance.py)
EXPECTED_COUNT_RTOL = float32_rtol(2 * ELEMENTWISE_ULPS + 3)


def _num_tries(prob, sampled, true_ec, sampled_ec, n):
    """The number of tries for which TF's expected-count formula gives these counts (None if none does)."""
    for tries in range(n, 20000):
        if np.allclose(cs._expected_count(prob(sampled), n, tries), sampled_ec, rtol=EXPECTED_COUNT_RTOL, atol=0) \
                and np.allclose(cs._expected_count(prob(TRUE), n, tries), true_ec, rtol=EXPECTED_COUNT_RTOL, atol=0):
            return tries
    return None


@pytest.mark.parametrize("unique", [False, True])
@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sampler_expected_counts_follow_tf1_formula(tf1, name, unique):
    (want, want_type), (got, got_type) = tf1_and_core(tf1, _draw, name, unique, 4)
    assert got_type == want_type
    prob = SAMPLERS[name][1]()
    for (sampled, true_ec, sampled_ec), lib in [(w, "tf") for w in want] + [(g, "core") for g in got]:
        assert sampled.dtype == np.int64 and sampled.shape == (6,) and true_ec.shape == (3, 2), lib
        assert true_ec.dtype == sampled_ec.dtype == np.float32
        assert np.all((sampled >= 0) & (sampled < 20)), lib
        if name == "fixed_unigram":
            assert 0 not in sampled, lib               # a reserved id has weight 0
        if unique:
            assert len(set(sampled.tolist())) == 6, lib
            assert _num_tries(prob, sampled, true_ec, sampled_ec, 6) is not None, (lib, sampled, sampled_ec)
        else:                                          # p * num_sampled: deterministic for the true classes
            np.testing.assert_allclose(true_ec, want[0][1], rtol=EXPECTED_COUNT_RTOL)
            np.testing.assert_allclose(sampled_ec, cs._expected_count(prob(sampled), 6, 6), rtol=EXPECTED_COUNT_RTOL)


def _learned(tf):
    out = tf.nn.learned_unigram_candidate_sampler(TRUE, 2, 6, False, 20, seed=3)
    with tf.Session() as sess:
        return [sess.run(out)[1] for _ in range(3)]


def test_learned_unigram_counts_match_tf1(tf1):
    want, got = tf1_and_core(tf1, _learned)
    for w, g in zip(want, got):     # weights start at 1 and grow by the true classes; p = weight / total, × 6
        np.testing.assert_allclose(g, w, rtol=float32_rtol(3))
    assert not np.allclose(got[0], got[2])


@pytest.mark.parametrize("name", ["uniform", "log_uniform", "fixed_unigram"])
def test_sampler_frequencies_follow_the_distribution(tf1, name):
    prob = SAMPLERS[name][1]()(np.arange(20))
    assert_float32_close(prob.sum(), 1.0, n=20 + ELEMENTWISE_ULPS + 2)     # 20 probabilities, each a function

    def program(tf):
        out = SAMPLERS[name][0](tf, False, None)
        with tf.Session() as sess:
            return np.concatenate([sess.run(out[0]) for _ in range(1500)])
    want, got = tf1_and_core(tf1, program)
    for draws in (want, got):
        freq = np.bincount(draws, minlength=20) / draws.size
        bound = 5 * np.sqrt(prob * (1 - prob) / draws.size) + 1e-9
        assert np.all(np.abs(freq - prob) <= bound), (freq, prob)


def test_seeded_samplers_repeat_per_session_and_differ_per_op():
    with core.Graph().as_default():
        core.set_random_seed(1)
        a = core.nn.log_uniform_candidate_sampler(TRUE, 2, 8, True, 1000)
        b = core.nn.log_uniform_candidate_sampler(TRUE, 2, 8, True, 1000)
        runs = []
        for _ in range(2):
            with core.Session() as sess:
                runs.append(sess.run([a[0], b[0]]))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    assert not np.array_equal(runs[0][0], runs[0][1])


def _default_sampler(tf):
    w = tf.Variable(WEIGHTS, name="w", use_resource=False)
    b = tf.Variable(BIASES, name="b", use_resource=False)
    loss = tf.nn.nce_loss(w, b, tf.constant(LABELS), tf.constant(INPUTS), 4, NUM_CLASSES, num_true=2)
    types = sorted({"AddV2" if op.type == "Add" else op.type for op in tf.get_default_graph().get_operations()})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(loss), types


def test_default_log_uniform_sampling_builds_tf1_graph(tf1):
    (want, want_types), (got, got_types) = tf1_and_core(tf1, _default_sampler)
    assert got.shape == want.shape == (3,) and np.all(np.isfinite(got)) and np.all(got > 0)
    assert "LogUniformCandidateSampler" in got_types
    assert set(got_types) - {"Shape", "ZerosLike"} == set(want_types) - {"Shape", "ZerosLike"}   # as above


def test_bad_input_is_named():
    with core.Graph().as_default():
        with pytest.raises(TypeError, match="true_classes must be an int64"):
            core.nn.uniform_candidate_sampler(core.constant([[1]]), 1, 2, True, 5)
        with pytest.raises(ValueError, match="must not exceed range_max"):
            core.nn.uniform_candidate_sampler([[1]], 1, 6, True, 5)
        with pytest.raises(ValueError, match=r"num_true=2"):
            core.nn.log_uniform_candidate_sampler([[1]], 2, 2, True, 5)
        with pytest.raises(ValueError, match="sampled_values must be"):
            core.nn.nce_loss(WEIGHTS, BIASES, LABELS[:, :1], INPUTS, 2, NUM_CLASSES, sampled_values=[1, 2])
        with pytest.raises(ValueError, match="exactly one of vocab_file and unigrams"):
            core.nn.fixed_unigram_candidate_sampler([[1]], 1, 2, True, 5)


def test_core_graph_def_with_sampling_runs_in_tf1(tf1):
    """A sampled-softmax training step written by core (sampler, accidental hits, SparseToDense, sparse update)
    is a GraphDef TF imports and runs."""
    with core.Graph().as_default() as graph:
        core.set_random_seed(3)                   # the sampler's seed attrs make TF's run repeatable
        w = core.Variable(WEIGHTS, name="w")
        b = core.Variable(BIASES, name="b")
        loss = core.reduce_mean(core.nn.sampled_softmax_loss(w, b, LABELS, INPUTS, 4, NUM_CLASSES, num_true=2))
        train = core.train.GradientDescentOptimizer(0.5).minimize(loss)
        init = core.global_variables_initializer()
        types = {op.type for op in graph.get_operations()}
        graph_def = graph.as_graph_def()
    assert {"LogUniformCandidateSampler", "ComputeAccidentalHits", "SparseToDense", "ScatterSub"} <= types
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(graph_def.SerializeToString()), name="")
        with tf1.Session() as sess:
            sess.run(init.name)
            before = sess.run(loss.name)
            for _ in range(20):
                sess.run(train.name)
            after, weights = sess.run([loss.name, "w:0"])
    assert np.isfinite(before) and after < before
    assert not np.allclose(weights, WEIGHTS)
