"""tf.losses of tfevents.core (core/losses.py) against TF1: every loss x every Reduction x every weights form
(default, Python scalar, per-example fed weights, full-shape fed weights with zeros) through tests/_op_cases.py
(values, dtypes, static shapes, gradients against TF's tf.gradients and central differences, GraphDef op types
and attrs), plus the collections (LOSSES, regularization, total loss), scopes and errors."""
import numpy as np
import pytest

from _op_cases import Case, check_case
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core

R = np.random.RandomState(77)


def rnd(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, size=shape)


def unit(*shape):
    """Rows of unit length along axis 1 (cosine_distance assumes normalized inputs)."""
    v = rnd(*shape)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def onehot(n, k):
    return np.eye(k)[R.randint(0, k, n)]


REDUCTIONS = ["none", "weighted_sum", "weighted_mean", "weighted_sum_over_batch_size",
              "weighted_sum_by_nonzero_weights"]

# name -> (call(tf, inputs..., **kwargs), inputs, shape of the per-entry losses)
LOSSES = {
    "absolute_difference": (lambda tf, p, l, **kw: tf.losses.absolute_difference(l, p, **kw),
                            [rnd(3, 4), rnd(3, 4)], (3, 4)),
    "cosine_distance": (lambda tf, p, l, **kw: tf.losses.cosine_distance(l, p, axis=1, **kw),
                        [unit(3, 4), unit(3, 4)], (3, 1)),
    "hinge_loss": (lambda tf, x, l, **kw: tf.losses.hinge_loss(l, x, **kw),
                   [rnd(3, 4), R.randint(0, 2, (3, 4)).astype(float)], (3, 4)),
    "huber_loss": (lambda tf, p, l, **kw: tf.losses.huber_loss(l, p, delta=0.7, **kw),
                   [rnd(3, 4), rnd(3, 4)], (3, 4)),
    "log_loss": (lambda tf, p, l, **kw: tf.losses.log_loss(l, p, **kw),
                 [R.uniform(0.05, 0.95, (3, 4)), R.uniform(0, 1, (3, 4))], (3, 4)),
    "mean_squared_error": (lambda tf, p, l, **kw: tf.losses.mean_squared_error(l, p, **kw),
                           [rnd(3, 4), rnd(3, 4)], (3, 4)),
    "sigmoid_cross_entropy": (lambda tf, x, l, **kw: tf.losses.sigmoid_cross_entropy(l, x, **kw),
                              [rnd(3, 4, lo=-4, hi=4), R.randint(0, 2, (3, 4)).astype(float)], (3, 4)),
    "sigmoid_cross_entropy_smoothed": (
        lambda tf, x, l, **kw: tf.losses.sigmoid_cross_entropy(l, x, label_smoothing=0.2, **kw),
        [rnd(3, 4), R.randint(0, 2, (3, 4)).astype(float)], (3, 4)),
    "softmax_cross_entropy": (lambda tf, x, l, **kw: tf.losses.softmax_cross_entropy(l, x, **kw),
                              [rnd(3, 5), onehot(3, 5)], (3,)),
    "softmax_cross_entropy_smoothed": (
        lambda tf, x, l, **kw: tf.losses.softmax_cross_entropy(l, x, label_smoothing=0.1, **kw),
        [rnd(3, 5), onehot(3, 5)], (3,)),
    "sparse_softmax_cross_entropy": (
        lambda tf, x, **kw: tf.losses.sparse_softmax_cross_entropy(tf.constant([1, 0, 3], tf.int64), x, **kw),
        [rnd(3, 4)], (3,)),
}

# core's nn.sigmoid_cross_entropy_with_logits writes a ZerosLike op where TF folds zeros_like to a Const, and
# TF 2.x's softmax_cross_entropy_with_logits_v2 flattens with Slice/ConcatV2/Reshape: the other ops are
# compared by test_composite_losses_write_tf_key_ops
_OTHER_INTERNALS = ("sigmoid_cross_entropy", "sigmoid_cross_entropy_smoothed", "softmax_cross_entropy",
                    "softmax_cross_entropy_smoothed")

# computed in float32 whatever the input dtype (as TF): float32 roundings (tests/_tolerance.py) along a loss's
# path, an entry's loss (up to two elementwise functions and eight operations: log_loss, the smoothed cross
# entropies), the weighted sum of up to 12 entries and the weights' sum it is divided by (12 each), the
# division (the gradient retraces it); and a larger difference step
_N32 = 2 * ELEMENTWISE_ULPS + 8 + 2 * 12 + 1
_TOL = dict(computes_in_float32=True, n32=_N32, eps=1e-2, num_rtol=1e-2, num_atol=1e-2)


def _weights_forms(loss_shape: tuple) -> dict:
    """name -> (extra fed inputs, kwargs builder(tf, *fed)). Fed weights get gradients (TF gives them too);
    zeros come from a constant mask so central differences never cross the count of non-zero weights."""
    rows = (loss_shape[0],) + (1,) * (len(loss_shape) - 1)
    mask = np.ones(loss_shape)
    mask.flat[1] = 0.0
    return {
        "default": ([], lambda tf: {}),
        "scalar": ([], lambda tf: {"weights": 2.5}),
        "zero_scalar": ([], lambda tf: {"weights": 0.0}),
        "per_example": ([R.uniform(0.5, 1.5, rows)], lambda tf, w: {"weights": w}),
        "full_with_zeros": ([R.uniform(0.5, 1.5, loss_shape)],
                            lambda tf, w: {"weights": w * tf.constant(mask, w.dtype)}),
    }


def _case(loss, weights_form):
    """One graph with the loss under every Reduction: each output is compared with TF's, and the gradient of
    their weighted sum (so of each one) with TF's."""
    call, inputs, loss_shape = LOSSES[loss]
    extra, kwargs = _weights_forms(loss_shape)[weights_form]
    n = len(inputs)

    def build(tf, *xs):
        return [call(tf, *xs[:n], reduction=r, **kwargs(tf, *xs[n:])) for r in REDUCTIONS]
    # kinks of |x|, relu and the hinge: TF's tf.gradients is the reference there; the softmax losses stop the
    # gradient to the labels, which central differences do see
    numeric = not loss.startswith(("absolute_difference", "hinge_loss", "softmax_cross_entropy"))
    # (the module's time budget) central differences and float32 inputs for two weights forms: the losses
    # compute in float32 whatever the inputs' dtype, so the float64 run checks the same float32 arithmetic
    main_form = weights_form in ("default", "per_example")
    return Case(build, inputs + extra, same_ops=loss not in _OTHER_INTERNALS, numeric=numeric and main_form,
                float32=main_form, **_TOL)


CASES = {"%s-%s" % (loss, w): _case(loss, w) for loss in LOSSES for w in _weights_forms(LOSSES[loss][2])}

# pairwise: d = p − l, its row's Σd and Σd² (up to 5 terms each) squared and scaled, their difference (6), the
# weighted sum over the examples (3) and the division by their count; the two terms cancel: against their sum,
# at most 4·max(d²) per example, times the weights
_PAIRWISE_TOL = dict(_TOL, n32=1 + 2 * 5 + 6 + 3 + 1)


def _pairwise_terms(weight=1.0):
    """scale32 of mean_pairwise_squared_error(l, p[, w]) with a constant ``weight`` or fed weights ``w``."""
    return lambda p, l, w=None: 4 * float(np.max((p - l) ** 2)) * (weight if w is None else float(np.abs(w).sum()))
CASES.update({
    "mean_pairwise_squared_error": Case(lambda tf, p, l: tf.losses.mean_pairwise_squared_error(l, p),
                                        [rnd(3, 4), rnd(3, 4)], scale32=_pairwise_terms(), **_PAIRWISE_TOL),
    "mean_pairwise_squared_error_scalar_weight": Case(
        lambda tf, p, l: tf.losses.mean_pairwise_squared_error(l, p, weights=3.0, scope="pairs"),
        [rnd(2, 5), rnd(2, 5)], scale32=_pairwise_terms(3.0), **_PAIRWISE_TOL),
    "mean_pairwise_squared_error_per_example": Case(
        lambda tf, p, l, w: tf.losses.mean_pairwise_squared_error(l, p, w), [rnd(3, 4), rnd(3, 4), rnd(3, 1)],
        scale32=_pairwise_terms(), **_PAIRWISE_TOL),
    "mean_pairwise_squared_error_3d_masked": Case(
        lambda tf, p, l, w: tf.losses.mean_pairwise_squared_error(
            l, p, w * tf.constant([[[1.0, 0.0, 1.0]], [[1.0, 1.0, 1.0]]], w.dtype)),
        [rnd(2, 2, 3), rnd(2, 2, 3), R.uniform(0.5, 1.5, (2, 1, 3))], scale32=_pairwise_terms(), **_PAIRWISE_TOL),
    "mean_pairwise_squared_error_zero_weights": Case(
        lambda tf, p, l: tf.losses.mean_pairwise_squared_error(l, p, weights=0.0), [rnd(2, 3), rnd(2, 3)],
        scale32=_pairwise_terms(), **_PAIRWISE_TOL),
    # ---- labels and weights with a trailing size-1 dim are squeezed (sparse)
    "sparse_softmax_cross_entropy_column_labels": Case(
        lambda tf, x, w: tf.losses.sparse_softmax_cross_entropy(tf.constant([[2], [0], [1]]), x, w),
        [rnd(3, 4), R.uniform(0.5, 1.5, (3, 1))], **_TOL),
    # ---- inputs of any dtype compute in float32; compute_weighted_loss casts back to the losses' dtype
    "compute_weighted_loss_float64": Case(
        lambda tf, x, w: tf.losses.compute_weighted_loss(x, w, reduction="weighted_mean"),
        [rnd(2, 3), R.uniform(0.5, 1.5, (1, 3))], **_TOL),
    "compute_weighted_loss_none": Case(lambda tf, x: tf.losses.compute_weighted_loss(x, 0.5, reduction="none"),
                                       [rnd(4)], **_TOL),
    "compute_weighted_loss_3d_broadcast": Case(
        lambda tf, x, w: tf.losses.compute_weighted_loss(x, w, scope="wl"),
        [rnd(2, 3, 2), R.uniform(0.5, 1.5, (2, 1, 2))], **_TOL),
    "mean_squared_error_int_labels": Case(
        lambda tf, p: tf.losses.mean_squared_error(tf.constant([[1, 0], [2, 3]]), p, reduction="weighted_sum"),
        [rnd(2, 2)], **_TOL),
    # TF checks weights against unknown dims with a run-time Assert in a functional cond (StatelessIf/If);
    # core checks what the static shapes tell
    "mean_squared_error_unknown_batch": Case(
        lambda tf, p, l, w: tf.losses.mean_squared_error(l, p, w), [rnd(3, 2), rnd(3, 2), rnd(3, 1)],
        shapes=[(None, 2), (None, 2), (None, 1)], same_ops=False, **_TOL),
    "mean_pairwise_squared_error_unknown_batch": Case(
        lambda tf, p, l: tf.losses.mean_pairwise_squared_error(l, p), [rnd(3, 4), rnd(3, 4)],
        shapes=[(None, 4), (None, 4)], same_ops=False, scale32=_pairwise_terms(), **_PAIRWISE_TOL),
    "softmax_cross_entropy_unknown_batch": Case(
        lambda tf, x, l: tf.losses.softmax_cross_entropy(l, x, label_smoothing=0.3), [rnd(3, 4), onehot(3, 4)],
        shapes=[(None, 4), (None, 4)], same_ops=False, numeric=False, **_TOL),   # labels: stop_gradient
})


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(tf1, name):
    check_case(tf1, CASES[name])


def _graph_ops(tf, build):
    with tf.Graph().as_default() as g:
        p = tf.placeholder(tf.float32, [3, 4])
        l = tf.placeholder(tf.float32, [3, 4])
        build(tf, p, l)
        return {op.type for op in g.get_operations()}


@pytest.mark.parametrize("build,key", [
    (lambda tf, p, l: tf.losses.sigmoid_cross_entropy(l, p, label_smoothing=0.1),
     {"GreaterEqual", "Select", "Log1p", "Exp", "Neg", "Equal", "DivNoNan", "NoOp", "Fill", "Range", "Sum"}),
    (lambda tf, p, l: tf.losses.softmax_cross_entropy(l, p, label_smoothing=0.1),
     {"StridedSlice", "Cast", "RealDiv", "StopGradient", "SoftmaxCrossEntropyWithLogits", "Equal", "Select",
      "DivNoNan", "NoOp", "Fill", "Range", "Sum"}),
])
def test_composite_losses_write_tf_key_ops(tf1, build, key):
    ours, theirs = _graph_ops(core, build), _graph_ops(tf1, build)
    assert key <= theirs
    assert key <= ours


def _loss_names(tf):
    with tf.Graph().as_default() as g:
        p = tf.placeholder(tf.float32, [3, 4])
        l = tf.placeholder(tf.float32, [3, 4])
        out = [tf.losses.mean_squared_error(l, p).name,
               tf.losses.absolute_difference(l, p, scope="abs", reduction=tf.losses.Reduction.SUM).name,
               tf.losses.huber_loss(l, p, reduction=tf.losses.Reduction.NONE).name,
               tf.losses.hinge_loss(l, p, weights=2.0, reduction=tf.losses.Reduction.MEAN).name,
               tf.losses.log_loss(l, p, reduction=tf.losses.Reduction.SUM_OVER_BATCH_SIZE).name,
               tf.losses.cosine_distance(l, p, dim=1).name,
               tf.losses.mean_pairwise_squared_error(l, p).name,
               tf.losses.compute_weighted_loss(p, scope="mine").name]
        return out, [t.name for t in g.get_collection(tf.GraphKeys.LOSSES)]


def test_scopes_names_and_loss_collection_match_tensorflow(tf1):
    ours, theirs = _loss_names(core), _loss_names(tf1)
    assert ours == theirs
    assert ours[1] == ours[0]          # every loss is in LOSSES, in order


def _collections(tf):
    with tf.Graph().as_default() as g:
        p = tf.placeholder(tf.float32, [2, 2])
        a = tf.losses.mean_squared_error(p, p * 2.0, loss_collection=None)
        b = tf.losses.absolute_difference(p, p * 3.0, loss_collection="my_losses")
        c = tf.losses.huber_loss(p, p * 0.5, scope="tower_1/huber")
        tf.losses.add_loss(tf.reduce_sum(p, name="extra"))
        tf.losses.add_loss(tf.reduce_mean(p, name="ignored"), loss_collection=None)
        no_reg = tf.losses.get_regularization_loss()
        g.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.reduce_sum(tf.square(p), name="tower_1/l2"))
        g.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.reduce_sum(tf.abs(p), name="l1"))
        names = dict(
            losses=[t.name for t in tf.losses.get_losses()],
            mine=[t.name for t in tf.losses.get_losses(loss_collection="my_losses")],
            tower=[t.name for t in tf.losses.get_losses(scope="tower_1")],
            regs=[t.name for t in tf.losses.get_regularization_losses()],
            tower_regs=[t.name for t in tf.losses.get_regularization_losses("tower_1")],
            unused=[a.name, b.name, c.name])
        reg = tf.losses.get_regularization_loss()
        tower_reg = tf.losses.get_regularization_loss(scope="tower_1", name="tower_reg")
        total = tf.losses.get_total_loss()
        data_only = tf.losses.get_total_loss(add_regularization_losses=False, name="data_loss")
        tower_total = tf.losses.get_total_loss(scope="tower_1")
        names["ops"] = [(t.name, t.op.type) for t in (reg, tower_reg, total, data_only, tower_total)]
        with tf.Session() as sess:
            values = sess.run([no_reg, reg, tower_reg, total, data_only, tower_total],
                              {p: [[1.0, -2.0], [0.5, 3.0]]})
        return names, values


def test_collections_total_and_regularization_losses_match_tensorflow(tf1):
    ours, theirs = _collections(core), _collections(tf1)
    assert ours[0] == theirs[0]
    # the four entries' losses (up to 2 roundings each), their sum or mean (4 + 1), the add_n of up to 5 losses
    assert_float32_close(ours[1], theirs[1], n=2 + 4 + 1 + 5)


def test_float64_losses_become_float32_and_compute_weighted_loss_keeps_dtype():
    with core.Graph().as_default():
        p = core.placeholder(core.float64, [2, 3])
        assert core.losses.mean_squared_error(p, p * 2.0).dtype == core.float32
        assert core.losses.compute_weighted_loss(p).dtype == core.float64
        assert core.losses.compute_weighted_loss(p, reduction="none").dtype == core.float64


@pytest.mark.parametrize("build", [
    lambda tf, p: tf.losses.mean_squared_error(p, p, weights=tf.ones([3])),           # rank differs
    lambda tf, p: tf.losses.mean_squared_error(p, p, weights=tf.ones([3, 3])),        # dim neither 1 nor 4
    lambda tf, p: tf.losses.mean_squared_error(p, tf.ones([3, 5])),                   # shapes differ
    lambda tf, p: tf.losses.absolute_difference(None, p),
    lambda tf, p: tf.losses.mean_squared_error(p, p, reduction="mean"),               # not a Reduction key
    lambda tf, p: tf.losses.cosine_distance(p, p),                                     # axis is required
    lambda tf, p: tf.losses.cosine_distance(p, p, axis=1, dim=1),
    lambda tf, p: tf.losses.mean_pairwise_squared_error(p, p, weights=tf.ones([4])),
    lambda tf, p: tf.losses.softmax_cross_entropy(p, tf.ones([3, 5])),
    lambda tf, p: tf.losses.get_total_loss(),                                          # nothing to add
])
def test_bad_input_is_a_value_error_like_tensorflow(tf1, build):
    for tf in (core, tf1):
        with tf.Graph().as_default():
            p = tf.placeholder(tf.float32, [3, 4])
            with pytest.raises(ValueError):
                build(tf, p)


def test_reduction_keys_match_tensorflow(tf1):
    for key in ("NONE", "SUM", "SUM_OVER_BATCH_SIZE", "MEAN", "SUM_BY_NONZERO_WEIGHTS", "SUM_OVER_NONZERO_WEIGHTS"):
        assert getattr(core.losses.Reduction, key) == getattr(tf1.losses.Reduction, key)
    assert core.losses.Reduction.all() == tf1.losses.Reduction.all()


def test_graph_def_of_every_loss_imports_into_tensorflow_with_the_same_values(tf1):
    """Every node (NoOp checks with control inputs, Equal, Fill, Range, DivNoNan, Select...) is valid for TF."""
    pv, lv, wv = R.uniform(0.1, 0.9, (3, 4)), R.randint(0, 2, (3, 4)).astype(np.float32), R.uniform(0, 1, (3, 1))
    with core.Graph().as_default() as g:
        p = core.placeholder(core.float32, [None, 4], name="p")
        l = core.placeholder(core.float32, [None, 4], name="l")
        w = core.placeholder(core.float32, [3, 1], name="w")
        L = core.losses
        outs = [L.absolute_difference(l, p, w), L.cosine_distance(l, p, axis=1, weights=2.0),
                L.hinge_loss(l, p, reduction=L.Reduction.MEAN), L.huber_loss(l, p, w),
                L.log_loss(l, p, reduction=L.Reduction.SUM_OVER_BATCH_SIZE),
                L.mean_pairwise_squared_error(l, p, w),
                L.mean_squared_error(l, p, reduction=L.Reduction.NONE, loss_collection=None),
                L.sigmoid_cross_entropy(l, p, label_smoothing=0.1), L.softmax_cross_entropy(l, p, w[:, 0]),
                L.sparse_softmax_cross_entropy([1, 0, 3], p, w), L.get_total_loss()]
        feed = {p: pv, l: lv, w: wv}
        with core.Session() as sess:
            ours = sess.run(outs, feed)
        gd = g.as_graph_def()
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(gd.SerializeToString()), name="")
        with tf1.Session() as sess:
            theirs = sess.run([t.name for t in outs], {"p:0": pv, "l:0": lv, "w:0": wv})
    for got, want, out in zip(ours, theirs, outs):     # _N32 per loss; the total adds up 10 of them
        assert_float32_close(got, want, n=_N32 + 10, err_msg=out.name)


@pytest.mark.parametrize("build", [
    lambda tf, p, l, w: tf.losses.huber_loss(l, p, w, delta=0.5),
    lambda tf, p, l, w: tf.losses.log_loss(l, tf.sigmoid(p), w, reduction=tf.losses.Reduction.MEAN),
    lambda tf, p, l, w: tf.losses.sigmoid_cross_entropy(l, p, w, label_smoothing=0.1),
    lambda tf, p, l, w: tf.losses.softmax_cross_entropy(l, p, w[:, 0]),
    lambda tf, p, l, w: tf.losses.mean_pairwise_squared_error(l, p, w),
], ids=["huber", "log_loss", "sigmoid", "softmax", "pairwise"])
def test_second_derivatives_match_tensorflow(tf1, build):
    pv, lv, wv = rnd(3, 4), R.uniform(0, 1, (3, 4)), R.uniform(0.5, 1.5, (3, 1))

    def run(tf):
        with tf.Graph().as_default():
            p, l, w = (tf.placeholder(tf.float32, v.shape) for v in (pv, lv, wv))
            (dp,) = tf.gradients(build(tf, p, l, w), p)
            (ddp,) = tf.gradients(tf.reduce_sum(dp * tf.constant(wv * np.ones((3, 4)), tf.float32)), p)
            with tf.Session() as sess:
                return sess.run([dp, ddp], {p: pv, l: lv, w: wv})
    # a loss's path (_N32), and back twice; ddp's terms are the curvature (at most 1 for these losses) times the
    # weights (wv twice): softmax's cancel to 0 along each row (its row's weights are constant)
    (dp, ddp), (want_dp, want_ddp) = run(core), run(tf1)
    assert_float32_close(dp, want_dp, n=2 * _N32, err_msg="dp")
    assert_float32_close(ddp, want_ddp, n=2 * _N32, scale=max(np.abs(want_ddp).max(), wv.max() ** 2), err_msg="ddp")
