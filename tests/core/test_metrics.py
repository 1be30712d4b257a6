"""tf.metrics of tfevents.core against TF1: the same stream of batches (update_op several times, then value) gives
the same numbers, the local variables have TF's names and collections, and local_variables_initializer resets
them.

The streaming harness cannot use tests/_op_cases.py (metrics are stateful and not differentiable); a case is
``Stream(build, batches)``: ``build(tf, *placeholders) -> (value, update_op)`` and each batch a tuple of arrays
fed to the placeholders (float placeholders in the run's float dtype, unless ``dtypes`` says otherwise).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np
import pytest

from _tolerance import assert_float32_close
from tfevents import core
from tfevents.core.framework import errors

R = np.random.RandomState(3)
# float32 roundings (tests/_tolerance.py) of a stream's values: a batch's reduction (at most 7·2·3 = 42 elements),
# three accumulations into the totals, the value's division, and a square root or a normalization; the AUCs
# also sum over their thresholds (Stream(n32=N32 + num_thresholds))
N32 = 64


@dataclass
class Stream:
    build: Callable
    batches: Sequence[tuple]
    shapes: Optional[Sequence[Any]] = None      # placeholder shapes; default: [None] + a batch's trailing dims
    dtypes: Optional[Sequence[str]] = None      # "float" (the run's float dtype), "int32", "int64", "bool"
    float64: bool = True     # False where the float64 run repeats the float32 one (inputs only cast to bool)
    rtol: float = 1e-6       # float64
    atol: float = 1e-7
    n32: float = N32         # float32


def _ph_dtype(tf, kind, float_dtype):
    return float_dtype if kind == "float" else getattr(tf, kind)


def run_stream(tf, case: Stream, float_dtype_name: str) -> dict:
    """Run ``case`` in ``tf`` (core or tf.compat.v1): value before, each update, value after, after a reset."""
    g = tf.Graph()
    with g.as_default():
        float_dtype = getattr(tf, float_dtype_name)
        first = case.batches[0]
        kinds = case.dtypes or ["float"] * len(first)
        shapes = case.shapes or [(None,) + np.shape(x)[1:] for x in first]
        phs = [tf.placeholder(_ph_dtype(tf, k, float_dtype), s, name="in%d" % i)
               for i, (k, s) in enumerate(zip(kinds, shapes))]
        n_before = len(g.get_operations())
        value, update_op = case.build(tf, *phs)
        types = {op.type for op in g.get_operations()[n_before:]} - VARIABLE_OPS
        init = tf.local_variables_initializer()
        with tf.Session() as sess:
            sess.run(init)
            out = dict(start=sess.run(value))
            out["updates"] = [sess.run(update_op, {p: np.asarray(x, dtype=p.dtype.as_numpy_dtype)
                                                   for p, x in zip(phs, batch)}) for batch in case.batches]
            out["end"] = sess.run(value)
            sess.run(init)
            out["reset"] = sess.run(value)
        out["local"] = [v.name for v in tf.local_variables()]
        out["metric"] = [v.name for v in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)]
        out["global"] = [v.name for v in tf.global_variables()]
        out["static"] = [tuple(value.shape.as_list()), tuple(update_op.shape.as_list())]
        out["dtype"] = [value.dtype.name, update_op.dtype.name.replace("_ref", "")]
        out["value_name"] = value.name
        out["ops"] = {"Add" if t == "AddV2" else t for t in types}
    return out


# how variables are written (TF 2.x's compat.v1 makes resource variables, core TF1's ref variables)
VARIABLE_OPS = {"VariableV2", "Assign", "AssignAdd", "VarHandleOp", "VarIsInitializedOp", "AssignVariableOp",
                "ReadVariableOp", "AssignAddVariableOp", "ScatterAdd", "ResourceScatterAdd", "Identity", "Const"}
# what TF's run-time asserts add (predictions in [0, 1], labels < num_classes, weights broadcastable, ranks);
# core has no Assert op
ASSERT_OPS = {"Assert", "If", "StatelessIf", "NoOp", "All", "GreaterEqual", "LessEqual", "Less", "Equal", "Shape"}
# streams whose metric stays 0 (the others must move, so that a metric stuck at 0 cannot pass)
STAYS_ZERO = {"mean_zero_weights", "mean_iou_empty", "precision_no_positive_predictions", "recall_no_positive_labels"}


def _batches(make, sizes=(5, 1, 7)):
    return [make(n) for n in sizes]


def _u(*shape):
    return R.uniform(0, 1, shape)


def _bits(*shape):
    return (R.uniform(0, 1, shape) > 0.5).astype(np.float64)


def _ints(hi, *shape):
    return R.randint(0, hi, shape).astype(np.float64)


def _pairs(n):          # labels in {0, 1}, predictions in [0, 1]
    return (_bits(n, 3), _u(n, 3))


def _pairs_w(n):
    return (_bits(n, 3), _u(n, 3), R.uniform(0, 2, (n, 3)))


def _bool_pairs_w(n):
    return (_bits(n, 4), _bits(n, 4), R.uniform(0, 2, (n, 1)))


def _reg_w(n):
    return (R.randn(n, 3), R.randn(n, 3), R.uniform(0, 2, (n, 3)))


def _cast_int(tf, x):
    return tf.cast(x, tf.int32)


THRESH = [0.0, 0.25, 0.5, 0.9]

STREAMS = {
    "mean": Stream(lambda tf, x: tf.metrics.mean(x), _batches(lambda n: (R.randn(n, 3),))),
    "mean_weighted": Stream(lambda tf, x, w: tf.metrics.mean(x, weights=w),
                            _batches(lambda n: (R.randn(n, 3), R.uniform(0, 2, (n, 3))))),
    "mean_weights_broadcast_column": Stream(lambda tf, x, w: tf.metrics.mean(x, weights=w),
                                            _batches(lambda n: (R.randn(n, 3), R.uniform(0, 2, (n, 1))))),
    "mean_weights_scalar": Stream(lambda tf, x: tf.metrics.mean(x, weights=0.5),
                                  _batches(lambda n: (R.randn(n, 2, 2),))),
    "mean_weights_rank_minus_one": Stream(lambda tf, x, w: tf.metrics.mean(x, weights=w),   # weights expanded
                                          _batches(lambda n: (R.randn(n, 1), R.uniform(0, 2, (n,))))),
    "mean_static_weights": Stream(lambda tf, x: tf.metrics.mean(x, weights=tf.constant([[1.0, 0.0, 2.0]])),
                                  [(R.randn(2, 3),), (R.randn(2, 3),)], shapes=[(2, 3)]),
    "mean_empty_batch_first": Stream(lambda tf, x: tf.metrics.mean(x), [(np.zeros((0, 3)),), (R.randn(2, 3),)]),
    "mean_zero_weights": Stream(lambda tf, x, w: tf.metrics.mean(x, w),           # 0/0 is 0, as div_no_nan
                                [(R.randn(2, 3), np.zeros((2, 3)))]),
    "mean_named_collections": Stream(lambda tf, x: tf.metrics.mean(x, name="loss_avg"),
                                     _batches(lambda n: (R.randn(n),))),
    "mean_tensor": Stream(lambda tf, x: tf.metrics.mean_tensor(x), _batches(lambda n: (R.randn(2, 3),)),
                          shapes=[(2, 3)]),
    "mean_tensor_weighted": Stream(lambda tf, x, w: tf.metrics.mean_tensor(x, w),
                                   _batches(lambda n: (R.randn(4, 2), R.uniform(0, 2, (4, 1)))),
                                   shapes=[(4, 2), (4, 1)]),
    "percentage_below": Stream(lambda tf, x, w: tf.metrics.percentage_below(x, 0.3, weights=w),
                               _batches(lambda n: (R.randn(n, 2), R.uniform(0, 2, (n, 2))))),
    "mean_relative_error": Stream(lambda tf, y, p, z: tf.metrics.mean_relative_error(y, p, z),
                                  _batches(lambda n: (R.randn(n, 3), R.randn(n, 3),
                                                      R.uniform(0, 2, (n, 3)) * (R.uniform(0, 1, (n, 3)) > 0.3)))),
    "mean_cosine_distance": Stream(lambda tf, y, p, w: tf.metrics.mean_cosine_distance(
        tf.nn.l2_normalize(y, 1), tf.nn.l2_normalize(p, 1), 1, weights=w),
        _batches(lambda n: (R.randn(n, 3), R.randn(n, 3), R.uniform(0, 2, (n, 1))))),
    "mean_per_class_accuracy": Stream(lambda tf, y, p: tf.metrics.mean_per_class_accuracy(y, p, 4),
                                      _batches(lambda n: (_ints(3, n, 2), _ints(3, n, 2))),
                                      dtypes=["int32", "int32"]),
    "mean_per_class_accuracy_weighted": Stream(
        lambda tf, y, p, w: tf.metrics.mean_per_class_accuracy(tf.cast(y, tf.int64), tf.cast(p, tf.int64), 3, w),
        _batches(lambda n: (_ints(3, n), _ints(3, n), R.uniform(0, 2, (n,))))),
    "accuracy": Stream(lambda tf, y, p: tf.metrics.accuracy(y, p),
                       _batches(lambda n: (_ints(3, n), _ints(3, n))), dtypes=["int32", "int32"]),
    "accuracy_int64_vs_int32": Stream(lambda tf, y, p: tf.metrics.accuracy(y, p),
                                      _batches(lambda n: (_ints(3, n), _ints(3, n))), dtypes=["int64", "int32"]),
    "accuracy_squeezed_weighted": Stream(                 # predictions [n, 1] squeezed to the labels' [n]
        lambda tf, y, p, w: tf.metrics.accuracy(y, tf.argmax(p, 1)[:, None], weights=w),
        _batches(lambda n: (_ints(3, n), R.randn(n, 3), R.uniform(0, 2, (n,)))), dtypes=["int64", "float", "float"]),
    "accuracy_float": Stream(lambda tf, y, p: tf.metrics.accuracy(y, tf.round(p)),
                             _batches(lambda n: (_ints(2, n, 2), _u(n, 2)))),
    "mean_absolute_error": Stream(lambda tf, y, p, w: tf.metrics.mean_absolute_error(y, p, w), _batches(_reg_w)),
    "mean_squared_error": Stream(lambda tf, y, p, w: tf.metrics.mean_squared_error(y, p, w), _batches(_reg_w)),
    "mean_squared_error_unweighted": Stream(lambda tf, y, p: tf.metrics.mean_squared_error(y, p),
                                            _batches(lambda n: (R.randn(n, 2, 3), R.randn(n, 2, 3)))),
    "root_mean_squared_error": Stream(lambda tf, y, p, w: tf.metrics.root_mean_squared_error(y, p, w),
                                      _batches(_reg_w)),
    "true_positives": Stream(lambda tf, y, p: tf.metrics.true_positives(y, p),
                             _batches(lambda n: (_bits(n, 4), _bits(n, 4))), float64=False),
    "true_negatives_weighted": Stream(lambda tf, y, p, w: tf.metrics.true_negatives(y, p, w),
                                      _batches(_bool_pairs_w)),
    "false_positives_weighted": Stream(lambda tf, y, p, w: tf.metrics.false_positives(y, p, w),
                                       _batches(_bool_pairs_w)),
    "false_negatives_int": Stream(lambda tf, y, p: tf.metrics.false_negatives(y, p),
                                  _batches(lambda n: (_ints(3, n), _ints(2, n))), dtypes=["int32", "int64"]),
    "true_positives_bool": Stream(lambda tf, y, p: tf.metrics.true_positives(y, p),
                                  _batches(lambda n: (_bits(n), _bits(n))), dtypes=["bool", "bool"]),
    "precision": Stream(lambda tf, y, p: tf.metrics.precision(y, p),
                        _batches(lambda n: (_bits(n, 4), _bits(n, 4))), float64=False),
    "precision_weighted": Stream(lambda tf, y, p, w: tf.metrics.precision(y, p, w), _batches(_bool_pairs_w)),
    "precision_no_positive_predictions": Stream(lambda tf, y, p: tf.metrics.precision(y, p),
                                                [(_bits(3), np.zeros(3))] * 2, float64=False),
    "recall": Stream(lambda tf, y, p: tf.metrics.recall(y, p), _batches(lambda n: (_bits(n, 4), _bits(n, 4))),
                     float64=False),
    "recall_weighted_named": Stream(lambda tf, y, p, w: tf.metrics.recall(y, p, w, name="rec"),
                                    _batches(_bool_pairs_w)),
    "recall_no_positive_labels": Stream(lambda tf, y, p: tf.metrics.recall(y, p), [(np.zeros(3), _bits(3))],
                                        float64=False),
    "true_positives_at_thresholds": Stream(
        lambda tf, y, p: tf.metrics.true_positives_at_thresholds(y, p, THRESH), _batches(_pairs)),
    "false_negatives_at_thresholds": Stream(
        lambda tf, y, p, w: tf.metrics.false_negatives_at_thresholds(y, p, THRESH, w), _batches(_pairs_w)),
    "true_negatives_at_thresholds": Stream(
        lambda tf, y, p: tf.metrics.true_negatives_at_thresholds(y, p, [0.5]), _batches(_pairs)),
    "false_positives_at_thresholds": Stream(
        lambda tf, y, p, w: tf.metrics.false_positives_at_thresholds(y, p, THRESH, w), _batches(_pairs_w)),
    "precision_at_thresholds": Stream(
        lambda tf, y, p, w: tf.metrics.precision_at_thresholds(y, p, THRESH, w), _batches(_pairs_w)),
    "recall_at_thresholds": Stream(
        lambda tf, y, p: tf.metrics.recall_at_thresholds(y, p, THRESH), _batches(_pairs)),
    "auc_roc": Stream(lambda tf, y, p: tf.metrics.auc(y, p), _batches(_pairs), n32=N32 + 200),
    "auc_roc_weighted": Stream(lambda tf, y, p, w: tf.metrics.auc(y, p, w, num_thresholds=7), _batches(_pairs_w),
                               n32=N32 + 7),
    "auc_roc_thresholds": Stream(lambda tf, y, p: tf.metrics.auc(y, p, thresholds=[0.7, 0.2, 0.5]),
                                 _batches(_pairs), n32=N32 + 3 + 2),
    "auc_roc_edges": Stream(lambda tf, y, p: tf.metrics.auc(y, p, num_thresholds=5),   # predictions exactly 0, 1
                            [(np.array([1.0, 0, 1, 0]), np.array([1.0, 0, 0, 1]))], n32=N32 + 5),
    "auc_pr": Stream(lambda tf, y, p: tf.metrics.auc(y, p, curve="PR", num_thresholds=11), _batches(_pairs),
                     n32=N32 + 11),
    "auc_pr_careful": Stream(lambda tf, y, p, w: tf.metrics.auc(y, p, w, curve="PR",
                                                                summation_method="careful_interpolation"),
                             _batches(_pairs_w), n32=N32 + 200),
    "auc_roc_careful": Stream(lambda tf, y, p: tf.metrics.auc(y, p, num_thresholds=9,
                                                              summation_method="careful_interpolation"),
                              _batches(_pairs), n32=N32 + 9),
    "auc_roc_minoring": Stream(lambda tf, y, p: tf.metrics.auc(y, p, num_thresholds=9, summation_method="minoring"),
                               _batches(_pairs), n32=N32 + 9),
    "auc_pr_majoring": Stream(lambda tf, y, p: tf.metrics.auc(y, p, curve="PR", num_thresholds=9,
                                                              summation_method="majoring"), _batches(_pairs),
                              n32=N32 + 9),
    "auc_squeezed_labels_int": Stream(lambda tf, y, p: tf.metrics.auc(y, p[:, None], num_thresholds=20),
                                      _batches(lambda n: (_ints(2, n), _u(n))), dtypes=["int64", "float"],
                                      n32=N32 + 20),
    "mean_iou": Stream(lambda tf, y, p: tf.metrics.mean_iou(y, p, 4),
                       _batches(lambda n: (_ints(3, n, 2), _ints(4, n, 2))), dtypes=["int32", "int32"]),
    "mean_iou_weighted": Stream(lambda tf, y, p, w: tf.metrics.mean_iou(tf.cast(y, tf.int64), tf.cast(p, tf.int64),
                                                                        5, weights=w),
                                _batches(lambda n: (_ints(5, n), _ints(5, n), R.uniform(0, 2, (n,))))),
    "mean_iou_empty": Stream(lambda tf, y, p: tf.metrics.mean_iou(y, p, 3), [(np.zeros(0), np.zeros(0))],
                             dtypes=["int32", "int32"]),
}


@pytest.fixture(scope="module")
def oracle(tf1):
    """TF1's results, computed once per (case, float dtype)."""
    cache = {}

    def get(name, dtype):
        if (name, dtype) not in cache:
            cache[name, dtype] = run_stream(tf1, STREAMS[name], dtype)
        return cache[name, dtype]
    return get


def _compare(ours, theirs, case, dtype):
    for key in ("local", "metric", "global", "static", "dtype", "value_name"):
        assert ours[key] == theirs[key], key
    # float32: the sums' terms are the inputs (weights below 2 times values) or, where larger, the value itself
    terms = max((float(np.abs(np.asarray(x, np.float64)).max()) for batch in case.batches for x in batch
                 if np.size(x)), default=0.0)
    pairs = [(ours[key], theirs[key], key) for key in ("start", "end", "reset")]
    pairs += [(a, b, "update %d" % i) for i, (a, b) in enumerate(zip(ours["updates"], theirs["updates"]))]
    for a, b, what in pairs:
        assert np.asarray(a).dtype == np.asarray(b).dtype, what
        if dtype == "float32":
            scale = max(terms, float(np.abs(b).max())) if np.size(b) else None
            assert_float32_close(a, b, n=case.n32, scale=scale, err_msg=what)
        else:
            np.testing.assert_allclose(a, b, rtol=case.rtol, atol=case.atol, err_msg=what)
    # same op types but for TF's asserts, and OnesLike where TF's ones_like writes Fill (core/ops/array_ops.py)
    assert ours["ops"] - theirs["ops"] <= {"OnesLike"}, ours["ops"] - theirs["ops"]
    assert theirs["ops"] - ours["ops"] <= ASSERT_OPS | {"Fill"}, theirs["ops"] - ours["ops"]
    if np.shape(ours["end"]) == np.shape(ours["updates"][-1]):               # (mean_iou's update is its matrix)
        np.testing.assert_allclose(ours["end"], ours["updates"][-1], rtol=1e-6)   # value reads the last update
    np.testing.assert_array_equal(ours["reset"], ours["start"])                # the initializer resets


def _runs():
    """(case, float dtype) pairs; float64 only where an input is float and the case does not opt out."""
    for name in sorted(STREAMS):
        case = STREAMS[name]
        yield name, "float32"
        if case.float64 and "float" in (case.dtypes or ["float"]):
            yield name, "float64"


@pytest.mark.parametrize("name, dtype", list(_runs()))
def test_stream_matches_tf1(oracle, name, dtype):
    case = STREAMS[name]
    ours = run_stream(core, case, dtype)
    _compare(ours, oracle(name, dtype), case, dtype)
    assert np.any(ours["end"]) != (name in STAYS_ZERO)


def _all_metrics(tf):
    """Every metric once, on shared inputs; returns (placeholders, [(value, update_op)])."""
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    p = tf.placeholder(tf.float32, [None, 3], name="p")
    w = tf.placeholder(tf.float32, [None, 3], name="w")
    yi, pi = tf.cast(y * 2, tf.int32), tf.cast(p * 3, tf.int32)
    m = tf.metrics
    pairs = [m.accuracy(yi, pi), m.mean(p, w), m.auc(y, p, w, num_thresholds=10),
             m.auc(y, p, curve="PR", summation_method="careful_interpolation", num_thresholds=10),
             m.precision(y, p), m.recall(y, p, w), m.true_positives(y, p), m.true_negatives(y, p, w),
             m.false_positives(y, p), m.false_negatives(y, p), m.mean_iou(yi, pi, 3, w),
             m.root_mean_squared_error(y, p, w), m.mean_absolute_error(y, p), m.mean_squared_error(y, p),
             m.precision_at_thresholds(y, p, [0.3, 0.6]), m.recall_at_thresholds(y, p, [0.3, 0.6], w),
             m.mean_per_class_accuracy(yi, pi, 3, w), m.mean_relative_error(y, p, w), m.percentage_below(p, 0.5),
             m.mean_cosine_distance(y, p, 1), m.mean_tensor(tf.reduce_sum(p, 0))]
    return (y, p, w), pairs


def _feed(seed):
    r = np.random.RandomState(seed)
    return [(r.uniform(0, 1, (4, 3)) > 0.5).astype(np.float32), r.uniform(0, 1, (4, 3)).astype(np.float32),
            r.uniform(0, 2, (4, 3)).astype(np.float32)]


def test_graph_def_imports_and_runs_in_tensorflow(tf1):
    """Every metric's GraphDef is valid for TF: imported, TF runs core's update ops and values and gets the
    numbers core gets; repeated metrics get TF's uniquified scopes (accuracy_1 ...)."""
    with core.Graph().as_default() as g:
        phs, pairs = _all_metrics(core)
        again = core.metrics.accuracy(core.constant([1, 2]), core.constant([1, 1]))
        assert again[0].name == "accuracy_1/value:0"
        assert "accuracy_1/total:0" in [v.name for v in core.local_variables()]
        init = core.local_variables_initializer()
        updates, values = [u for _, u in pairs], [v for v, _ in pairs]
        with core.Session() as sess:    # values in their own run: TF reads them racing with the updates
            sess.run(init)
            ours = [sess.run(updates, dict(zip(phs, _feed(seed)))) for seed in range(3)] + [sess.run(values)]
        gd = g.as_graph_def()
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(gd.SerializeToString()), name="")
        with tf1.Session() as sess:
            sess.run(init.name)
            theirs = [sess.run([t.name for t in updates], dict(zip([p.name for p in phs], _feed(seed))))
                      for seed in range(3)] + [sess.run([t.name for t in values])]
    # float32 (tests/_tolerance.py): the streams' roundings and the AUCs' 10 thresholds, against the inputs' terms
    # (weights below 2 times values up to 1) or the value where larger
    for t, a, b in zip((updates * 3) + values, sum(ours, []), sum(theirs, [])):
        assert_float32_close(a, b, n=N32 + 10, scale=max(2.0, float(np.abs(b).max())), err_msg=t.name)


def test_collections_and_variable_kinds():
    with core.Graph().as_default():
        x = core.placeholder(core.float32, [None])
        value, update = core.metrics.mean(x, metrics_collections=["m"], updates_collections=["u"], name="avg")
        rmse, rmse_update = core.metrics.root_mean_squared_error(x, x * 2, metrics_collections="m2",
                                                                 updates_collections=("u2",))
        tp, tp_update = core.metrics.true_positives(x > 0, x > 1, metrics_collections=["m"])
        assert core.get_collection("m") == [value, tp] and core.get_collection("u") == [update]
        assert core.get_collection("m2") == [rmse] and core.get_collection("u2") == [rmse_update]
        assert core.trainable_variables() == [] and core.global_variables() == []
        names = [v.name for v in core.local_variables()]
        assert names == [v.name for v in core.get_collection(core.GraphKeys.METRIC_VARIABLES)]
        assert names == ["avg/total:0", "avg/count:0", "root_mean_squared_error/total:0",
                         "root_mean_squared_error/count:0", "true_positives/count:0"]
        assert value.op.type == "DivNoNan" and update.name == "avg/update_op:0"
        assert rmse.op.type == "Sqrt" and tp_update.op.type == "AssignAdd"


def test_local_variables_initializer_resets_midstream(tf1):
    """Two streams separated by a reset give TF's numbers, the second independent of the first."""
    def run(tf):
        with tf.Graph().as_default():
            y = tf.placeholder(tf.float32, [None])
            p = tf.placeholder(tf.float32, [None])
            auc, auc_update = tf.metrics.auc(y, p, num_thresholds=50)
            acc, acc_update = tf.metrics.accuracy(y, tf.round(p))
            init = tf.local_variables_initializer()
            out = []
            with tf.Session() as sess:
                for stream in (0, 1):
                    sess.run(init)
                    r = np.random.RandomState(stream)
                    for _ in range(3):
                        sess.run([auc_update, acc_update], {y: r.randint(0, 2, 8), p: r.uniform(0, 1, 8)})
                    out.append(sess.run([auc, acc]))
            return out
    ours, theirs = run(core), run(tf1)
    assert_float32_close(ours, theirs, n=N32 + 50, scale=1.0)    # an AUC over 50 thresholds and an accuracy
    assert not np.allclose(ours[0], ours[1])


def _build(fn):
    with core.Graph().as_default():
        return fn(core)


@pytest.mark.parametrize("fn, exc", [
    (lambda tf: tf.metrics.auc(tf.constant([1.0, 0.0]), tf.constant([0.5, 0.2]), curve="XY"), ValueError),
    (lambda tf: tf.metrics.auc(tf.constant([1.0, 0.0]), tf.constant([0.5, 0.2]), summation_method="simpson"),
     ValueError),
    (lambda tf: tf.metrics.accuracy([1, 2, 3], [1, 2]), ValueError),                  # shapes differ
    (lambda tf: tf.metrics.mean(tf.zeros([2, 3]), weights=tf.ones([2, 2])), ValueError),  # not broadcastable
    (lambda tf: tf.metrics.mean(tf.zeros([2, 3]), weights=tf.ones([2, 3, 4, 5])), ValueError),  # rank
    (lambda tf: tf.metrics.precision(tf.zeros([2, 3]), tf.zeros([2, 3]), weights=tf.ones([2, 3, 1, 1])),
     ValueError),
    (lambda tf: tf.metrics.mean_iou(tf.zeros([2], tf.int32), tf.zeros([3], tf.int32), 2), ValueError),
    (lambda tf: tf.metrics.mean_squared_error(tf.zeros([2], tf.int32), tf.zeros([2])), TypeError),
    (lambda tf: tf.metrics.mean_tensor(tf.placeholder(tf.float32, [None, 3])), ValueError),   # variable shape
])
def test_bad_input_raises_like_tf1(tf1, fn, exc):
    with tf1.Graph().as_default():
        with pytest.raises(exc):
            fn(tf1)
    with pytest.raises(exc):
        _build(fn)


def test_value_before_any_update_and_uninitialized_variables():
    with core.Graph().as_default():
        value, update = core.metrics.precision([True, False], [True, True])
        with core.Session() as sess:
            with pytest.raises(errors.FailedPreconditionError):
                sess.run(value)
            sess.run(core.local_variables_initializer())
            assert sess.run(value) == 0.0
            assert sess.run(update) == 0.5 and sess.run(update) == 0.5 and sess.run(value) == 0.5


def test_mean_iou_rejects_labels_out_of_range(tf1):
    def run(tf):
        with tf.Graph().as_default():
            y = tf.placeholder(tf.int32, [None])
            _, update = tf.metrics.mean_iou(y, tf.zeros_like(y), 3)
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                sess.run(update, {y: [0, 2, 1]})
                with pytest.raises(tf.errors.InvalidArgumentError):
                    sess.run(update, {y: [0, 3]})
    run(tf1)
    run(core)
