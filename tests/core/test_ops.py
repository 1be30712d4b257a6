"""Every differentiable op of tfevents.core: forward values against TF1 (tf.compat.v1 graphs), gradients
against central differences in float64, and a representative set against TF's own ``tf.gradients``.

Each case is ``(builder, inputs)``: ``builder(tf, *tensors)`` is written once against the TF1 API and run both
with ``tfevents.core`` and with real ``tf.compat.v1``.
"""
import numpy as np
import pytest

from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core

R = np.random.RandomState(1234)


def rnd(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, size=shape)


def pos(*shape):
    return R.uniform(0.5, 2.0, size=shape)


def away_from_zero(*shape):
    """Values with |x| in [0.3, 2] and distinct (no kinks or ties within a finite-difference step)."""
    v = R.uniform(0.3, 2.0, size=shape) * R.choice([-1.0, 1.0], size=shape)
    return v + np.arange(v.size).reshape(shape) * 1e-3


def logits(*shape):
    return R.uniform(-3, 3, size=shape)


def _rows_sum_to_one(p):
    return p / p.sum(axis=1, keepdims=True)


def onehot(n, k):
    return np.eye(k)[R.randint(0, k, n)]


# name -> (builder(tf, *xs), inputs, check against TF's tf.gradients too)
CASES = {
    "add_broadcast": (lambda tf, a, b: a + b, [rnd(3, 4), rnd(4)], True),
    "add_unknown_dims": (None, [rnd(3, 1), rnd(1, 4)], False),
    "subtract": (lambda tf, a, b: tf.subtract(a, b), [rnd(2, 3), rnd(2, 1)], True),
    "multiply": (lambda tf, a, b: a * b, [rnd(2, 3), rnd(3)], True),
    "divide": (lambda tf, a, b: a / b, [rnd(2, 3), pos(2, 3)], True),
    "negative": (lambda tf, a: -a, [rnd(3)], False),
    "square": (lambda tf, a: tf.square(a), [rnd(2, 2)], False),
    "sqrt": (lambda tf, a: tf.sqrt(a), [pos(4)], True),
    "rsqrt": (lambda tf, a: tf.rsqrt(a) if hasattr(tf, "rsqrt") else tf.math.rsqrt(a), [pos(4)], True),
    "exp": (lambda tf, a: tf.exp(a), [rnd(3)], False),
    "log": (lambda tf, a: tf.log(a), [pos(3, 2)], False),
    "log1p": (lambda tf, a: tf.log1p(a), [pos(3)], False),
    "pow": (lambda tf, a, b: tf.pow(a, b), [pos(2, 3), rnd(2, 3)], True),
    "abs": (lambda tf, a: tf.abs(a), [away_from_zero(2, 3)], False),
    "sign": (lambda tf, a: tf.sign(a) * a, [away_from_zero(5)], False),
    "maximum": (lambda tf, a, b: tf.maximum(a, b), [away_from_zero(3, 4), away_from_zero(4) + 0.01], True),
    "minimum": (lambda tf, a, b: tf.minimum(a, b), [away_from_zero(3, 4), away_from_zero(3, 1) + 0.01], True),
    "squared_difference": (lambda tf, a, b: tf.squared_difference(a, b), [rnd(2, 3), rnd(3)], False),
    "reciprocal": (lambda tf, a: tf.reciprocal(a), [pos(3)], False),
    "add_n": (lambda tf, a, b, c: tf.add_n([a, b, c, a]), [rnd(2, 2), rnd(2, 2), rnd(2, 2)], True),
    "matmul": (lambda tf, a, b: tf.matmul(a, b), [rnd(3, 4), rnd(4, 2)], True),
    "matmul_ta": (lambda tf, a, b: tf.matmul(a, b, transpose_a=True), [rnd(4, 3), rnd(4, 2)], False),
    "matmul_tb": (lambda tf, a, b: tf.matmul(a, b, transpose_b=True), [rnd(3, 4), rnd(2, 4)], False),
    "matmul_tab": (lambda tf, a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
                   [rnd(4, 3), rnd(2, 4)], True),
    "reduce_sum_axis": (lambda tf, a: tf.reduce_sum(a, axis=1), [rnd(3, 4)], True),
    "reduce_sum_leading": (lambda tf, a: tf.reduce_sum(a, axis=[1, 0]) + tf.reduce_sum(a, axis=[0, 1], keepdims=True),
                           [rnd(3, 2, 4)], True),
    "reduce_mean_leading": (lambda tf, a: tf.reduce_mean(a, axis=[0, 1, 2]), [rnd(2, 3, 2, 4)], True),
    "reduce_sum_keep": (lambda tf, a: tf.reduce_sum(a, axis=[0, 2], keepdims=True), [rnd(2, 3, 4)], False),
    "reduce_mean_all": (lambda tf, a: tf.reduce_mean(a), [rnd(3, 4)], True),
    "reduce_mean_dynamic": (lambda tf, a: tf.reduce_mean(a) + tf.reduce_mean(a, axis=1)[0] +
                            tf.reduce_sum(a, axis=0)[1], [rnd(3, 4)], True),
    "reduce_mean_axis": (lambda tf, a: tf.reduce_mean(a, axis=0, keepdims=True), [rnd(3, 4)], False),
    "reduce_max": (lambda tf, a: tf.reduce_max(a, axis=1), [away_from_zero(3, 4)], True),
    "reduce_min": (lambda tf, a: tf.reduce_min(a, axis=0, keepdims=True), [away_from_zero(3, 4)], False),
    "reduce_prod": (lambda tf, a: tf.reduce_prod(a, axis=1), [away_from_zero(2, 3)], True),
    "cumsum": (lambda tf, a: tf.cumsum(a, axis=1), [rnd(2, 4)], True),
    "cumsum_excl_rev": (lambda tf, a: tf.cumsum(a, axis=0, exclusive=True, reverse=True), [rnd(4, 2)], True),
    "reshape": (lambda tf, a: tf.reshape(a, [4, -1]) * tf.constant(np.arange(12.0).reshape(4, 3)),
                [rnd(2, 6)], False),
    "transpose": (lambda tf, a: tf.transpose(a, [2, 0, 1]) * tf.constant(np.arange(24.0).reshape(4, 2, 3)),
                  [rnd(2, 3, 4)], True),
    "expand_squeeze": (lambda tf, a: tf.squeeze(tf.expand_dims(a, 1) * 2.0, [1]), [rnd(3, 2)], False),
    "concat": (lambda tf, a, b: tf.concat([a, b, a], axis=1), [rnd(2, 3), rnd(2, 1)], True),
    "stack": (lambda tf, a, b: tf.stack([a, b], axis=1), [rnd(2, 3), rnd(2, 3)], False),
    "unstack": (lambda tf, a: tf.unstack(a, axis=1)[1] * 3.0 + tf.unstack(a, axis=1)[2], [rnd(2, 3)], False),
    "split": (lambda tf, a: tf.split(a, 2, axis=1)[0] * tf.split(a, 2, axis=1)[1], [rnd(3, 4)], True),
    "split_sizes": (lambda tf, a: tf.split(a, [1, 3], axis=1)[1] * 2.0, [rnd(2, 4)], False),
    "gather": (lambda tf, a: tf.gather(a, [2, 0, 2]) * tf.constant(np.arange(6.0).reshape(3, 2)),
               [rnd(4, 2)], True),
    "tile": (lambda tf, a: tf.tile(a, [2, 3]) * tf.constant(np.arange(36.0).reshape(4, 9)), [rnd(2, 3)], True),
    "fill": (lambda tf, a: tf.fill([2, 3], a) * tf.constant(np.arange(6.0).reshape(2, 3)), [rnd()], False),
    "where": (lambda tf, a, b: tf.where(a > b, a * 2.0, b * b), [away_from_zero(3, 2), away_from_zero(3, 2)],
              True),
    "strided_slice": (lambda tf, a: a[1:, ::2] * 2.0 + a[0, 1], [rnd(3, 4)], True),
    "strided_newaxis_ellipsis": (lambda tf, a: a[..., 1:, None] * 2.0 + a[None, 0] + a[:, ::-2][..., 0:1, None],
                                 [rnd(3, 4)], True),
    "broadcast_to": (lambda tf, a: tf.broadcast_to(a, [3, 2, 4]) * tf.constant(np.arange(24.0).reshape(3, 2, 4)),
                     [rnd(2, 1)], False),
    "identity_stop": (lambda tf, a, b: tf.identity(a) * tf.stop_gradient(b) + b, [rnd(3), rnd(3)], True),
    "sigmoid": (lambda tf, a: tf.sigmoid(a), [rnd(3, 2)], True),
    "tanh": (lambda tf, a: tf.tanh(a), [rnd(3, 2)], True),
    "relu": (lambda tf, a: tf.nn.relu(a), [away_from_zero(3, 4)], True),
    "softmax": (lambda tf, a: tf.nn.softmax(a) * tf.constant(np.arange(12.0).reshape(3, 4)), [logits(3, 4)], True),
    "log_softmax": (lambda tf, a: tf.nn.log_softmax(a) * tf.constant(np.arange(12.0).reshape(3, 4)),
                    [logits(3, 4)], True),
    "softmax_xent_v2": (lambda tf, a, y: tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=a),
                        [logits(4, 5), _rows_sum_to_one(np.abs(rnd(4, 5)))], True),
    "sparse_softmax_xent": (lambda tf, a: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant([1, 0, 4, 2]), logits=a), [logits(4, 5)], True),
    "sparse_softmax_xent_3d": (lambda tf, a: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant([[1, 0, 3], [2, 2, 0]]), logits=a), [logits(2, 3, 4)], True),
    "l2_loss": (lambda tf, a: tf.nn.l2_loss(a), [rnd(3, 2)], True),
    "bias_add": (lambda tf, a, b: tf.nn.bias_add(a, b), [rnd(3, 4), rnd(4)], True),
    "bias_add_nchw": (lambda tf, a, b: tf.nn.bias_add(a, b, data_format="NCHW"), [rnd(2, 3, 2, 2), rnd(3)], True),
    "moments": (lambda tf, a: tf.add_n(list(tf.nn.moments(a, axes=[0]))), [rnd(5, 3)], True),
    "batch_normalization": (lambda tf, x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 1e-3),
                            [rnd(4, 3), rnd(3), pos(3), rnd(3), rnd(3)], True),
    "fused_batch_norm": (lambda tf, x, s, o: tf.nn.fused_batch_norm(x, s, o, epsilon=1e-3)[0],
                         [rnd(2, 2, 2, 3), pos(3), rnd(3)], False),
    "cast": (lambda tf, a: tf.cast(tf.cast(a, tf.float32), tf.float64) * 3.0, [rnd(3)], False),
    "div_no_nan": (lambda tf, a, b: tf.div_no_nan(a, b), [rnd(3), pos(3)], False),
    "relu6": (lambda tf, a: tf.nn.relu6(a * 4.0), [away_from_zero(3, 4)], True),
    "elu": (lambda tf, a: tf.nn.elu(a), [away_from_zero(3, 4)], True),
    "softplus": (lambda tf, a: tf.nn.softplus(a), [rnd(3, 4)], True),
    "leaky_relu": (lambda tf, a: tf.nn.leaky_relu(a, alpha=0.1), [away_from_zero(3, 4)], True),
    "sigmoid_xent": (lambda tf, a, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=a),
                     [away_from_zero(3, 4), R.uniform(0, 1, (3, 4))], True),
    "unsorted_segment_sum": (lambda tf, a: tf.unsorted_segment_sum(a, tf.constant([0, 2, 0]), 3) *
                             tf.constant(np.arange(6.0).reshape(3, 2)), [rnd(3, 2)], True),
    "floormod": (lambda tf, a, b: tf.floormod(a, b), [pos(4) * 3.0 + 0.05, pos(4)], False),
    "reduce_logsumexp": (lambda tf, a: tf.reduce_logsumexp(a, axis=1), [rnd(3, 4)], True),
    "l2_normalize": (lambda tf, a: tf.nn.l2_normalize(a, axis=1), [rnd(3, 4)], True),
    "embedding_lookup": (lambda tf, a: tf.nn.embedding_lookup(a, [3, 1, 3]) * tf.constant(
        np.arange(6.0).reshape(3, 2)), [rnd(4, 2)], True),
    "placeholder_with_default": (lambda tf, a: tf.placeholder_with_default(a * 2.0, [3]) * a, [rnd(3)], False),
}

_CUSTOM_SHAPES = {"add_unknown_dims": ([None, 1], [1, None]), "reduce_mean_dynamic": ([None, 4],)}
_NOT_NUMERIC = {"identity_stop"}  # finite differences cannot see stop_gradient (checked against TF only)
_NO_TF_FLOAT64 = {"fused_batch_norm"}  # TF's FusedBatchNorm has no float64 kernel (see the float32 test)
_EPS = {"cast": (1e-2, 1e-5)}    # goes through float32: a linear function, differenced with a coarse step


def _build(tf, name, dtype):
    fn, inputs, _ = CASES[name]
    if fn is None:
        fn = lambda tf_, a, b: a + b  # noqa: E731
    shapes = _CUSTOM_SHAPES.get(name, [np.shape(x) for x in inputs])
    phs = [tf.placeholder(dtype, shape=s, name="x%d" % i) for i, s in enumerate(shapes)]
    out = fn(tf, *phs)
    return phs, out


def _weights(shape):
    return np.random.RandomState(7).uniform(0.5, 1.5, size=shape)


def _core_eval(name, with_grads=True):
    """Forward value, analytic gradients of sum(w * out) and the graph pieces, all in float64."""
    _, inputs, _ = CASES[name]
    g = core.Graph()
    with g.as_default():
        phs, out = _build(core, name, core.float64)
        sess = core.Session()
        feed = dict(zip(phs, inputs))
        value = sess.run(out, feed)
        w = core.constant(_weights(value.shape))
        objective = core.reduce_sum(out * w)
        grads = core.gradients(objective, phs) if with_grads else None
        grad_values = sess.run([core.convert_to_tensor(gr) if gr is not None else core.zeros_like(p)
                                for gr, p in zip(grads, phs)], feed)
        return value, grad_values, sess, objective, phs


@pytest.mark.parametrize("name", sorted(set(CASES) - _NOT_NUMERIC))
def test_gradient_matches_central_differences(name):
    _, inputs, _ = CASES[name]
    value, grads, sess, objective, phs = _core_eval(name)
    eps, rtol = _EPS.get(name, (1e-6, 1e-5))
    for i, x in enumerate(inputs):
        x = np.asarray(x, np.float64)
        numeric = np.zeros_like(x)
        for idx in np.ndindex(x.shape if x.shape else ()):
            feed = dict(zip(phs, inputs))
            xp, xm = x.copy(), x.copy()
            xp[idx] += eps
            xm[idx] -= eps
            feed[phs[i]] = xp
            fp = sess.run(objective, feed)
            feed[phs[i]] = xm
            fm = sess.run(objective, feed)
            numeric[idx] = (fp - fm) / (2 * eps)
        np.testing.assert_allclose(grads[i], numeric, rtol=rtol, atol=1e-6,
                                   err_msg="d/dx%d of %s" % (i, name))


@pytest.mark.parametrize("name", sorted(set(CASES) - _NO_TF_FLOAT64))
def test_forward_and_gradients_match_tensorflow(tf1, name):
    fn, inputs, check_grads = CASES[name]
    value, grads, _, _, _ = _core_eval(name)
    with tf1.Graph().as_default():
        phs, out = _build(tf1, name, tf1.float64)
        objective = tf1.reduce_sum(out * tf1.constant(_weights(value.shape)))
        tf_grads = tf1.gradients(objective, phs)
        with tf1.Session() as sess:
            feed = dict(zip(phs, inputs))
            tf_value = sess.run(out, feed)
            tf_grad_values = sess.run([tf1.convert_to_tensor(g) if g is not None else tf1.zeros_like(p)
                                       for g, p in zip(tf_grads, phs)], feed) if check_grads else None
    assert value.shape == tf_value.shape
    assert value.dtype == tf_value.dtype
    np.testing.assert_allclose(value, tf_value, rtol=1e-10, atol=1e-12)
    if check_grads:
        for ours, theirs in zip(grads, tf_grad_values):
            np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


SECOND_ORDER = {
    "tanh": lambda tf, a: tf.tanh(a),
    "sigmoid": lambda tf, a: tf.sigmoid(a),
    "matmul_square": lambda tf, a: tf.matmul(a, a * a),
    "softmax_xent": lambda tf, a: tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=tf.constant(np.eye(3)[[0, 2]]), logits=a),
    "relu_square": lambda tf, a: tf.square(tf.nn.relu(a)),
    "log_div": lambda tf, a: tf.log(a * a + 1.0) / (a + 3.0),
    "bias_add": lambda tf, a: tf.square(tf.nn.bias_add(a * a, tf.reduce_sum(a, axis=0))),
    "tile_slice": lambda tf, a: tf.square(tf.tile(a, [2, 1])[1:, ::2]),
    "gather_concat": lambda tf, a: tf.square(tf.concat([tf.gather(a * a, [1, 0, 1]), a], 0)),
    "split_mean": lambda tf, a: tf.square(tf.split(a * a, 3, axis=1)[1]) + tf.reduce_mean(a * a, axis=0),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_gradients_of_gradients_match_tensorflow(tf1, name):
    x = R.uniform(0.2, 1.0, size=(2, 3)) * np.array([1, -1, 1])
    if name == "matmul_square":
        x = R.uniform(-1, 1, size=(3, 3))

    def second(tf, dtype):
        a = tf.placeholder(dtype, x.shape)
        g = tf.gradients(tf.reduce_sum(SECOND_ORDER[name](tf, a)), a)[0]
        h = tf.gradients(tf.reduce_sum(g * g), a)[0]
        return a, h

    with core.Graph().as_default():
        a, h = second(core, core.float64)
        ours = core.Session().run(h, {a: x})
        assert any(op.name.startswith("gradients_1/gradients/") for op in core.get_default_graph().get_operations())
    with tf1.Graph().as_default():
        a, h = second(tf1, tf1.float64)
        with tf1.Session() as sess:
            theirs = sess.run(h, {a: x})
    np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10)


def test_gather_gradient_is_indexed_slices_and_densifies():
    with core.Graph().as_default():
        params = core.placeholder(core.float64, [5, 2])
        out = core.gather(params, [1, 3, 1])
        g = core.gradients(core.reduce_sum(out * 2.0), params)[0]
        assert isinstance(g, core.IndexedSlices)
        both = core.gradients(core.reduce_sum(out) + core.reduce_sum(params * 3.0), params)[0]
        assert isinstance(both, core.Tensor)       # mixed sparse + dense contributions are summed densely
        sess = core.Session()
        value = sess.run(g, {params: np.ones((5, 2))})
        assert value.indices.tolist() == [1, 3, 1]
        np.testing.assert_array_equal(value.values, np.full((3, 2), 2.0))
        assert value.dense_shape.tolist() == [5, 2]
        dense = sess.run(core.convert_to_tensor(g), {params: np.ones((5, 2))})
        np.testing.assert_array_equal(dense, [[0, 0], [4, 4], [0, 0], [2, 2], [0, 0]])
        np.testing.assert_array_equal(sess.run(both, {params: np.ones((5, 2))}),
                                      [[3, 3], [5, 5], [3, 3], [4, 4], [3, 3]])
        two = core.gradients(core.reduce_sum(out) + core.reduce_sum(core.gather(params, [0])), params)[0]
        assert isinstance(two, core.IndexedSlices)  # all-sparse contributions stay sparse (concatenated)
        assert sess.run(two, {params: np.ones((5, 2))}).indices.tolist() == [1, 3, 1, 0]


NON_DIFFERENTIABLE = [
    ("argmax", lambda tf, a: tf.argmax(a, axis=1)),
    ("argmin", lambda tf, a: tf.argmin(a, axis=0)),
    ("comparisons", lambda tf, a: tf.stack([tf.cast(a > 0.1, tf.int32), tf.cast(a <= 0.1, tf.int32),
                                            tf.cast(tf.equal(a, a), tf.int32), tf.cast(tf.not_equal(a, 0.5),
                                                                                       tf.int32)])),
    ("logical", lambda tf, a: tf.logical_or(tf.logical_and(a > 0, a < 1), tf.logical_not(a > -1))),
    ("shape_size", lambda tf, a: tf.stack([tf.size(a), tf.rank(a)])),
    ("shape", lambda tf, a: tf.shape(a)),
    ("zeros_ones_like", lambda tf, a: tf.zeros_like(a) + tf.ones_like(a) * 2.0),
    ("in_top_k", lambda tf, a: tf.nn.in_top_k(tf.cast(a, tf.float32), [0, 3, 1], 2)),
    ("one_hot", lambda tf, a: tf.one_hot([0, 2, 1], 4)),
    ("where_coords", lambda tf, a: tf.where(a > 0.0)),
    ("floor_mod_div", lambda tf, a: tf.stack([tf.floormod(a * 10.0, 3.0), tf.floordiv(a * 10.0, 3.0)])),
    ("cast_int", lambda tf, a: tf.cast(a * 10.0, tf.int32)),
]


@pytest.mark.parametrize("name,fn", NON_DIFFERENTIABLE, ids=[n for n, _ in NON_DIFFERENTIABLE])
def test_non_differentiable_ops_match_tensorflow(tf1, name, fn):
    x = away_from_zero(3, 4)
    with core.Graph().as_default():
        a = core.placeholder(core.float64, [3, 4])
        ours = core.Session().run(fn(core, a), {a: x})
    with tf1.Graph().as_default():
        a = tf1.placeholder(tf1.float64, [3, 4])
        with tf1.Session() as sess:
            theirs = sess.run(fn(tf1, a), {a: x})
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype, (np.asarray(ours).dtype, np.asarray(theirs).dtype)
    np.testing.assert_array_equal(ours, theirs)


def test_float32_stays_float32():
    with core.Graph().as_default():
        a = core.placeholder(core.float32, [None, 3])
        out = core.reduce_mean(core.nn.softmax(a * 2.0 + 1) / 3)
        g = core.gradients(out, a)[0]
        v, gv = core.Session().run([out, g], {a: np.ones((2, 3))})
        assert v.dtype == np.float32 and gv.dtype == np.float32
        assert out.dtype is core.float32 and g.dtype is core.float32


def test_static_shapes_match_tensorflow(tf1):
    def build(tf):
        a = tf.placeholder(tf.float32, [None, 4, 3])
        b = tf.placeholder(tf.float32, [None, 3])
        return [tf.reduce_sum(a, axis=1), tf.matmul(tf.reshape(a, [-1, 3]), b, transpose_b=True),
                tf.transpose(a, [2, 0, 1]), tf.expand_dims(b, 0), tf.concat([b, b], 1), tf.stack([b, b]),
                tf.reduce_mean(a, axis=[1, 2], keepdims=True), tf.tile(b, [2, 1]), tf.argmax(a, axis=2),
                tf.gather(b, [0, 1]), a[:, 1:3, 0], tf.cumsum(a, 1), tf.nn.softmax(b), a * 2.0, a[..., 1], b[:, None, 1:], a[None, ..., ::2], tf.squeeze(tf.expand_dims(b, 1), [1])]
    with core.Graph().as_default():
        ours = [t.shape.as_list() if t.shape.ndims is not None else None for t in build(core)]
    with tf1.Graph().as_default():
        theirs = [t.shape.as_list() if t.shape.ndims is not None else None for t in build(tf1)]
    assert ours == theirs


def test_fused_batch_norm_matches_tensorflow_float32(tf1):
    x, scale, offset = rnd(4, 2, 2, 3).astype(np.float32), pos(3).astype(np.float32), rnd(3).astype(np.float32)

    def build(tf):
        xs = [tf.constant(v) for v in (x, scale, offset)]
        y, mean, var = tf.nn.fused_batch_norm(*xs, epsilon=1e-3)
        grads = tf.gradients(tf.reduce_sum(y * tf.constant(_weights(x.shape).astype(np.float32))), xs)
        return [y, mean, var] + grads

    with core.Graph().as_default():
        ours = core.Session().run(build(core))
    with tf1.Graph().as_default():
        with tf1.Session() as sess:
            theirs = sess.run(build(tf1))
    # float32 roundings (tests/_tolerance.py): the moments over 4·2·2 values, the normalization (a square root,
    # products and sums), then the gradients' two sums over the same 16 values
    for a, b, what in zip(ours, theirs, ["y", "mean", "variance", "dx", "dscale", "doffset"]):
        assert_float32_close(a, b, n=2 * 16 + ELEMENTWISE_ULPS + 4 + 2 * 16, err_msg=what)
