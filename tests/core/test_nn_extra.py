"""tf.nn's everyday extras in tfevents.core (core/ops/activation_ops.py) against TF1: selu, softsign, lrn, crelu,
swish, relu_layer, xw_plus_b, weighted_cross_entropy_with_logits, log_poisson_loss, zero_fraction and the
moments helpers; each case is checked by tests/_op_cases.py (values in float64 and float32, static shapes,
gradients against TF and central differences, GraphDef op types and attrs)."""
import numpy as np
import pytest

from _op_cases import SUM_OF_TERMS, Case, check_case
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core

R = np.random.RandomState(2024)


def rnd(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, size=shape)


def pos(*shape, lo=0.3, hi=2.0):
    return R.uniform(lo, hi, size=shape)


def away_from_zero(*shape):
    """|x| in [0.2, 2]: no kink of relu/selu within a finite-difference step."""
    return R.uniform(0.2, 2.0, size=shape) * R.choice([-1.0, 1.0], size=shape)


def _lrn(**kwargs):
    """LRN takes float32 only (in TF too): the float64 runs of the harness cast around it."""
    return lambda tf, x: tf.cast(tf.nn.lrn(tf.cast(x, tf.float32), **kwargs), x.dtype)


def _lrn_tol(radius=5):
    """LRN computes in float32 whatever the harness feeds (tests/_tolerance.py): the window's sum of 2r + 1
    squares, bias + α·sum and a power, then LRNGrad's window sum and power again; differences need a larger
    step."""
    return dict(computes_in_float32=True, n32=2 * (2 * radius + 1 + 2 + ELEMENTWISE_ULPS), eps=1e-3,
                num_rtol=2e-3, num_atol=2e-4)


def _terms(x, shift=0.0):
    """The largest term of the moments' sums, |x − shift| or (x − shift)²: their float32 scale, since those sums
    cancel (a sum's scale is its length times it, a mean's is it)."""
    d = float(np.max(np.abs(np.asarray(x) - shift)))
    return max(d, d * d)


def _normalized(count):
    """scale32 of normalize_moments(count, m, v, shift): mean = m / count + shift, variance = v / count − mean²."""
    return lambda m, v, s=0.0: float(np.max(np.abs(m) / count + np.abs(s) + np.abs(v) / count + (m / count) ** 2))


# float32 (tests/_tolerance.py): one elementwise function by default (selu: scale·α·(exp(x) − 1), two products
# more); crelu, zero_fraction exact (a concat of
# relus; integer counts and one division); matmuls their length against Σ|terms|; the moments their sums' lengths
# against their largest terms (_terms)
CASES = {
    # ---- kernels with gradient kernels
    "selu": Case(lambda tf, x: tf.nn.selu(x), [away_from_zero(3, 4)], n32=ELEMENTWISE_ULPS + 2),
    "selu_1d_odd": Case(lambda tf, x: tf.nn.selu(x, name="act"), [away_from_zero(7)], n32=ELEMENTWISE_ULPS + 2),
    "selu_empty": Case(lambda tf, x: tf.nn.selu(x), [np.zeros((0, 3))], n32=ELEMENTWISE_ULPS + 2),
    "selu_unknown_dims": Case(lambda tf, x: tf.nn.selu(x), [away_from_zero(2, 3)], shapes=[(None, 3)],
                              n32=ELEMENTWISE_ULPS + 2),
    "softsign": Case(lambda tf, x: tf.nn.softsign(x), [rnd(3, 4)]),
    "softsign_3d": Case(lambda tf, x: tf.nn.softsign(x), [rnd(2, 1, 5)]),
    "softsign_empty": Case(lambda tf, x: tf.nn.softsign(x), [np.zeros((2, 0))]),
    "lrn_defaults": Case(_lrn(), [rnd(2, 3, 3, 4)], **_lrn_tol()),
    "lrn_params": Case(_lrn(depth_radius=2, bias=1.5, alpha=0.3, beta=0.75), [rnd(1, 2, 3, 7)], **_lrn_tol(2)),
    "lrn_beta1_radius0": Case(_lrn(depth_radius=0, bias=2.0, alpha=0.5, beta=1.0), [rnd(2, 2, 2, 3)], **_lrn_tol(0)),
    "local_response_normalization": Case(
        lambda tf, x: tf.cast(tf.nn.local_response_normalization(tf.cast(x, tf.float32), 1, 0.5, 0.25, 0.6),
                              x.dtype), [rnd(1, 3, 2, 5)], **_lrn_tol(1)),
    "lrn_unknown_batch": Case(_lrn(depth_radius=1), [rnd(2, 2, 2, 3)], shapes=[(None, 2, 2, 3)], **_lrn_tol(1)),
    # ---- composites
    "crelu": Case(lambda tf, x: tf.nn.crelu(x), [away_from_zero(3, 4)], n32=0),
    "crelu_axis0": Case(lambda tf, x: tf.nn.crelu(x, axis=0, name="cr"), [away_from_zero(2, 3)], n32=0),
    "crelu_neg_axis": Case(lambda tf, x: tf.nn.crelu(x, axis=-2), [away_from_zero(2, 3, 2)], n32=0),
    # TF wraps swish in a custom_gradient (IdentityN + Identity) only to recompute sigmoid in the backward
    # pass; core writes the plain Mul/Sigmoid/Mul and autodiff gives TF's gradient formula
    "swish": Case(lambda tf, x: tf.nn.swish(x), [rnd(3, 4)], same_ops=False, n32=ELEMENTWISE_ULPS + 2),
    "swish_beta": Case(lambda tf, x: tf.nn.swish(x, beta=0.5), [rnd(5)], same_ops=False, n32=ELEMENTWISE_ULPS + 2),
    "swish_beta_tensor": Case(lambda tf, x, b: tf.nn.swish(x, b), [rnd(2, 3), np.array(1.3)], same_ops=False,
                              n32=ELEMENTWISE_ULPS + 2),
    "relu_layer": Case(lambda tf, x, w, b: tf.nn.relu_layer(x, w, b), [rnd(3, 4), rnd(4, 2), rnd(2)],
                       numeric=False,   # relu kinks: TF's tf.gradients is the reference
                       n32=4 + 1, scale32=SUM_OF_TERMS),
    "relu_layer_named": Case(lambda tf, x, w, b: tf.nn.relu_layer(x, w, b, name="hidden") * 2.0,
                             [rnd(2, 3), rnd(3, 5), rnd(5)], numeric=False, n32=3 + 1, scale32=SUM_OF_TERMS),
    "xw_plus_b": Case(lambda tf, x, w, b: tf.nn.xw_plus_b(x, w, b), [rnd(3, 4), rnd(4, 2), rnd(2)],
                      n32=4 + 1, scale32=SUM_OF_TERMS),
    "xw_plus_b_unknown_batch": Case(lambda tf, x, w, b: tf.nn.xw_plus_b(x, w, b, name="logits"),
                                    [rnd(5, 3), rnd(3, 1), rnd(1)], shapes=[(None, 3), (3, 1), (1,)],
                                    n32=3 + 1, scale32=SUM_OF_TERMS),
    # ---- losses
    "weighted_ce": Case(lambda tf, x, z: tf.nn.weighted_cross_entropy_with_logits(z, x, 2.0),
                        [rnd(3, 4, lo=-4, hi=4), R.uniform(0, 1, (3, 4))], n32=2 * ELEMENTWISE_ULPS + 6),
    "weighted_ce_targets_alias": Case(lambda tf, x, z: tf.nn.weighted_cross_entropy_with_logits(
        targets=z, logits=x, pos_weight=0.3, name="wce"), [rnd(5), R.randint(0, 2, 5).astype(float)],
                                      n32=2 * ELEMENTWISE_ULPS + 6),
    "weighted_ce_tensor_weight": Case(lambda tf, x, z, w: tf.nn.weighted_cross_entropy_with_logits(
        labels=z, logits=x, pos_weight=w), [rnd(2, 3), R.uniform(0, 1, (2, 3)), pos(3)], n32=2 * ELEMENTWISE_ULPS + 6),
    "log_poisson": Case(lambda tf, x, t: tf.nn.log_poisson_loss(t, x), [rnd(3, 4), pos(3, 4, lo=0, hi=4)],
                        n32=ELEMENTWISE_ULPS + 2),
    "log_poisson_full": Case(lambda tf, x, t: tf.nn.log_poisson_loss(t, x, compute_full_loss=True),
                             [rnd(3, 4), np.concatenate([pos(3, 2, lo=0.1, hi=0.9), pos(3, 2, lo=1.2, hi=5)], 1)],
                             n32=3 * ELEMENTWISE_ULPS + 6),
    "log_poisson_full_dynamic": Case(lambda tf, x, t: tf.nn.log_poisson_loss(t, x, True, name="poisson"),
                                     [rnd(2, 3), pos(2, 3, lo=1.1, hi=3)], shapes=[(None, 3), (None, 3)],
                                     n32=3 * ELEMENTWISE_ULPS + 6),
    # ---- statistics
    # TF 2.x writes the int32/int64 choice of zero_fraction as a functional cond (StatelessIf); core counts in
    # int32. The fraction is piecewise constant: no gradient (TF's is None too)
    "zero_fraction": Case(lambda tf, x: tf.nn.zero_fraction(tf.nn.relu(x)), [rnd(4, 5)], same_ops=False,
                          numeric=False, n32=0),
    "zero_fraction_named": Case(lambda tf, x: tf.cast(tf.nn.zero_fraction(x * 0.0, name="zf"), x.dtype) + x[0, 0],
                                [rnd(2, 2)], same_ops=False, n32=0),
    "sufficient_statistics": Case(lambda tf, x: tf.nn.sufficient_statistics(x, [0])[:3], [rnd(3, 4)],
                                  n32=3, scale32=SUM_OF_TERMS),
    "sufficient_statistics_shift_keep": Case(
        lambda tf, x: tf.nn.sufficient_statistics(x, [0, -1], shift=tf.constant(0.5, x.dtype),
                                                  keep_dims=True)[:3], [rnd(2, 3, 4)],
                                             n32=2 * 4 + 1, scale32=lambda x: 2 * 4 * _terms(x, 0.5)),
    "sufficient_statistics_dynamic": Case(
        lambda tf, x, s: tf.nn.sufficient_statistics(x, [0, -1], shift=s, keepdims=False), [rnd(3, 4), rnd()],
        shapes=[(None, 4), ()], n32=3 * 4 + 1, scale32=lambda x, s: 3 * 4 * _terms(x, s)),
    "normalize_moments": Case(lambda tf, m, v: tf.nn.normalize_moments(tf.constant(3.0, m.dtype), m, v, None),
                              [rnd(4), pos(4)], n32=3, scale32=_normalized(3.0)),
    "normalize_moments_shift": Case(lambda tf, m, v, s: tf.nn.normalize_moments(tf.constant(5.0, m.dtype), m, v, s,
                                                                                name="norm"),
                                    [rnd(2, 3), pos(2, 3), rnd(3)], n32=3, scale32=_normalized(5.0)),
    "moments_from_sufficient_statistics": Case(
        lambda tf, x: tf.nn.normalize_moments(*tf.nn.sufficient_statistics(x, [0, 2], shift=x[0, 0, 0])),
        [rnd(3, 2, 4)], n32=3 * 4 + 4, scale32=lambda x: 2 * _terms(x, x[0, 0, 0]) + abs(x[0, 0, 0])),
    "weighted_moments": Case(lambda tf, x, w: tf.nn.weighted_moments(x, [1], w), [rnd(3, 4), pos(3, 1)],
                             n32=2 * 4 + 4, scale32=lambda x, w: 4 * _terms(x)),
    "weighted_moments_keep_zero_weights": Case(
        lambda tf, x, w: tf.nn.weighted_moments(x, [0, 2], w * tf.constant([[[1.0]], [[0.0]]], w.dtype),
                                                keep_dims=True, name="wm"), [rnd(2, 3, 2), pos(2, 1, 1)],
                                               n32=2 * 4 + 4, scale32=lambda x, w: 4 * _terms(x)),
    "weighted_moments_all_zero_weights": Case(
        lambda tf, x, w: tf.nn.weighted_moments(x, [0], w * 0.0, keepdims=False), [rnd(3, 2), pos(3, 2)], n32=0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(tf1, name):
    check_case(tf1, CASES[name])


def _second_derivative(tf, fn, x, dtype):
    g = tf.Graph()
    with g.as_default():
        ph = tf.placeholder(dtype, x.shape)
        out = fn(tf, ph)
        w_out = tf.constant(np.linspace(0.5, 1.5, out.shape.num_elements()).reshape(out.shape.as_list()), dtype)
        w = tf.constant(np.linspace(0.5, 1.5, x.size).reshape(x.shape), dtype)
        (dx,) = tf.gradients(tf.reduce_sum(out * w_out), ph)
        (ddx,) = tf.gradients(tf.reduce_sum(dx * w), ph)
        with tf.Session() as sess:
            return sess.run([dx, ddx], {ph: x})


def test_selu_second_derivative_matches_tensorflow(tf1):
    x = away_from_zero(3, 5)
    fn = lambda tf, t: tf.nn.selu(t)  # noqa: E731
    ours = _second_derivative(core, fn, x, core.float64)
    theirs = _second_derivative(tf1, fn, x, tf1.float64)
    for got, want in zip(ours, theirs):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda tf, t: tf.nn.swish(t, 0.8),
    lambda tf, t: tf.nn.weighted_cross_entropy_with_logits(tf.sigmoid(t), t, 1.7),
    lambda tf, t: tf.nn.log_poisson_loss(tf.exp(t), t, compute_full_loss=True),
    lambda tf, t: tf.nn.weighted_moments(t, [1], tf.exp(t))[1],
    lambda tf, t: tf.nn.normalize_moments(*tf.nn.sufficient_statistics(t, [0], shift=t[0, 0]))[1],
], ids=["swish", "weighted_ce", "log_poisson", "weighted_moments", "normalize_moments"])
def test_composite_second_derivatives_match_tensorflow(tf1, fn):
    x = rnd(3, 4)
    ours = _second_derivative(core, fn, x, core.float64)
    theirs = _second_derivative(tf1, fn, x, tf1.float64)
    for got, want in zip(ours, theirs):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_softsign_second_derivative_is_exact():
    """TF has no gradient for SoftsignGrad; core's is ``-2 sign(x) / (1 + |x|)^3`` times the weights."""
    x = rnd(4, 3)
    w = np.linspace(0.5, 1.5, x.size).reshape(x.shape)
    dx, ddx = _second_derivative(core, lambda tf, t: tf.nn.softsign(t), x, core.float64)
    np.testing.assert_allclose(dx, w / (1 + np.abs(x)) ** 2, rtol=1e-12)     # the same weights on both
    np.testing.assert_allclose(ddx, w * w * -2 * np.sign(x) / (1 + np.abs(x)) ** 3, rtol=1e-12)


def test_activation_gradients_are_tf_gradient_ops():
    g = core.Graph()
    with g.as_default():
        x = core.placeholder(core.float32, [2, 2, 2, 3])
        ys = [core.nn.selu(x), core.nn.softsign(x), core.nn.lrn(x, 1)]
        core.gradients(core.add_n(ys), x)
    types = {op.type for op in g.get_operations()}
    assert {"SeluGrad", "SoftsignGrad", "LRNGrad"} <= types


def test_lrn_rejects_float64_and_non_4d_input(tf1):
    with core.Graph().as_default():
        with pytest.raises(TypeError):
            core.nn.lrn(core.placeholder(core.float64, [1, 2, 2, 3]))
        with pytest.raises(ValueError):
            core.nn.lrn(core.placeholder(core.float32, [2, 3]))
    with tf1.Graph().as_default():       # the same errors as TF's
        with pytest.raises(TypeError):
            tf1.nn.lrn(tf1.placeholder(tf1.float64, [1, 2, 2, 3]))
        with pytest.raises(ValueError):
            tf1.nn.lrn(tf1.placeholder(tf1.float32, [2, 3]))


@pytest.mark.parametrize("call", [
    lambda tf, a, b: tf.nn.weighted_cross_entropy_with_logits(a, b, 2.0),
    lambda tf, a, b: tf.nn.log_poisson_loss(a, b),
])
def test_loss_shape_mismatch_is_a_value_error(tf1, call):
    for tf in (core, tf1):
        with tf.Graph().as_default():
            with pytest.raises(ValueError):
                call(tf, tf.placeholder(tf.float32, [3, 4]), tf.placeholder(tf.float32, [4, 3]))


def test_deprecated_alias_together_with_its_new_name_is_rejected(tf1):
    for tf in (core, tf1):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [2, 3])
            with pytest.raises(ValueError):
                tf.nn.weighted_moments(x, [0], x, keep_dims=True, keepdims=True)
            with pytest.raises(ValueError):
                tf.nn.sufficient_statistics(x, [0], keep_dims=True, keepdims=False)
            with pytest.raises(ValueError):
                tf.nn.weighted_cross_entropy_with_logits(x, x, 2.0, targets=x)


def test_names_follow_tf_scopes(tf1):
    def names(tf):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [2, 3])
            w = tf.placeholder(tf.float32, [3, 4])
            b = tf.placeholder(tf.float32, [4])
            return [tf.nn.crelu(x).name, tf.nn.relu_layer(x, w, b).name, tf.nn.xw_plus_b(x, w, b).name,
                    tf.nn.weighted_cross_entropy_with_logits(x, x, 2.0).name, tf.nn.zero_fraction(x).name,
                    [t.name for t in tf.nn.sufficient_statistics(x, [0])[:3]],
                    [t.name for t in tf.nn.weighted_moments(x, [1], x)], tf.nn.selu(x, name="s").name]
    assert names(core) == names(tf1)


def test_graph_def_imports_into_tensorflow_with_the_same_values(tf1):
    xv, tv = rnd(2, 2, 2, 6).astype(np.float32), pos(2, 2, 2, 6).astype(np.float32)
    with core.Graph().as_default() as g:
        x = core.placeholder(core.float32, [None, 2, 2, 6], name="x")
        t = core.placeholder(core.float32, [None, 2, 2, 6], name="t")
        flat = core.reshape(x, [-1, 6])
        outs = [core.nn.selu(x), core.nn.softsign(x), core.nn.lrn(x, 2, 0.5, 0.3, 0.7), core.nn.crelu(x),
                core.nn.swish(x, 0.7), core.nn.relu_layer(flat, flat[:6, :3], flat[0, :3]),
                core.nn.xw_plus_b(flat, flat[:6, :3], flat[0, :3]),
                core.nn.weighted_cross_entropy_with_logits(t / 3.0, x, 1.5),
                core.nn.log_poisson_loss(t, x, compute_full_loss=True), core.nn.zero_fraction(core.nn.relu(x)),
                *core.nn.sufficient_statistics(x, [0, -1], shift=0.1)[:3],
                *core.nn.normalize_moments(*core.nn.sufficient_statistics(x, [1, 2], shift=x[0, 0, 0, 0])),
                *core.nn.weighted_moments(x, [0, 3], t)]
        outs += core.gradients(core.add_n([core.reduce_sum(o) for o in outs[:3]]), x)
        with core.Session() as sess:
            ours = sess.run(outs, {x: xv, t: tv})
        gd = g.as_graph_def()
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(gd.SerializeToString()), name="")
        with tf1.Session() as sess:
            theirs = sess.run([o.name for o in outs], {"x:0": xv, "t:0": tv})
    # float32 (tests/_tolerance.py): each output's roundings as its case above counts them, and the scale of the
    # sums that cancel: relu_layer's and xw_plus_b's products, the moments' terms
    e, flat_v = ELEMENTWISE_ULPS, xv.reshape(-1, 6).astype(np.float64)
    dense = float((np.abs(flat_v) @ np.abs(flat_v[:6, :3]) + np.abs(flat_v[0, :3])).max())
    shifted, weighted = 2 * 6 * _terms(xv, 0.1), 4 * _terms(xv)
    normalized = 2 * _terms(xv, xv.flat[0]) + abs(xv.flat[0])
    bounds = [(e + 2, None), (2, None), (2 * 2 + 1 + 2 + e, None), (0, None), (e + 2, None), (6 + 1, dense),
              (6 + 1, dense), (2 * e + 6, None), (3 * e + 6, None), (0, None),
              (0, None), (2 * 6 + 1, shifted), (2 * 6 + 1, shifted), (2 * 2 + 4, normalized), (2 * 2 + 4, normalized),
              (2 * 12 + 4, weighted), (2 * 12 + 4, weighted),
              (2 * (2 * 2 + 1 + 2 + e) + e + 2, None)]           # the gradient of selu, softsign and lrn (LRNGrad)
    assert len(bounds) == len(outs)
    for got, want, (n, scale), out in zip(ours, theirs, bounds, outs):
        assert_float32_close(got, want, n=n, scale=scale, err_msg=out.name)
