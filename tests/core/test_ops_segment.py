"""Segment and counting ops of tfevents.core (core/ops/segment_ops.py, and array_ops' unsorted_segment_sum)
against TF1: segment_sum/mean/max, unsorted_segment_sum/mean/max, dynamic_partition, dynamic_stitch,
histogram_fixed_width, bincount, confusion_matrix.

Cases run through tests/_op_cases.check_case; focused tests cover run-time errors (InvalidArgumentError as TF),
the dtype's lowest value for empty unsorted max segments, unsorted_segment_sum's static shape and negative ids.
"""
import numpy as np
import pytest

from _op_cases import SUM_OF_TERMS, Case, check_case
from tfevents import core

R = np.random.RandomState(7)


def rnd(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


def distinct(*shape):
    """Distinct values at least 0.05 apart: segment maxima without ties within a finite-difference step."""
    return R.permutation(np.arange(int(np.prod(shape)))).reshape(shape) * 0.05 - 1.0


def with_ties(*shape):
    """Values on a coarse grid: segment maxima tie (TF splits the gradient evenly among them)."""
    return R.randint(0, 3, size=shape).astype(np.float64)


def _i32(tf, x):
    return tf.cast(x, tf.int32)


# float32 (tests/_tolerance.py): maxima, partitions, stitches and integers exactly TF's (n32=0); a segment's sum
# counts its length (and a mean its division) against Σ|terms|
CASES = {
    # ---- sorted segments (ids are Const, as in TF1 programs); segment 2 is empty
    "segment_sum": Case(lambda tf, x: tf.segment_sum(x, [0, 0, 1, 3, 3]), [rnd(5, 3)], n32=2, scale32=SUM_OF_TERMS),
    "segment_sum_1d": Case(lambda tf, x: tf.segment_sum(x, tf.constant([0, 1, 1, 1], tf.int64)), [rnd(4)],
                           n32=3, scale32=SUM_OF_TERMS),
    "segment_sum_empty": Case(lambda tf, x: tf.segment_sum(x, tf.zeros([0], tf.int32)), [rnd(0, 2)]),
    "segment_sum_int": Case(lambda tf, x: tf.segment_sum(_i32(tf, x * 10), [0, 1, 1]), [rnd(3, 2)], n32=0),
    "segment_mean": Case(lambda tf, x: tf.segment_mean(x, [0, 0, 1, 3, 3]), [rnd(5, 3)],
                         n32=2 + 1, scale32=SUM_OF_TERMS),
    "segment_mean_3d": Case(lambda tf, x: tf.segment_mean(x, [0, 0, 0, 1]), [rnd(4, 2, 3)],
                            n32=3 + 1, scale32=SUM_OF_TERMS),
    "segment_mean_int_truncates": Case(lambda tf, x: tf.segment_mean(_i32(tf, x), [0, 0, 1, 1]),
                                       [np.array([1.0, 2.0, -4.0, 3.0])], n32=0),
    "segment_max": Case(lambda tf, x: tf.segment_max(x, [0, 0, 1, 3, 3]), [distinct(5, 3)], n32=0),
    # ties: the gradient splits among equal maxima; finite differences cannot see through the kink
    "segment_max_ties": Case(lambda tf, x: tf.segment_max(x, [0, 0, 0, 1, 1, 1]), [with_ties(6, 2)],
                             numeric=False, n32=0),
    "segment_max_int": Case(lambda tf, x: tf.segment_max(_i32(tf, x * 10), [0, 0, 2]), [rnd(3, 2)], n32=0),
    "segment_unknown_rows": Case(lambda tf, x: tf.segment_mean(x, [0, 1, 1]), [rnd(3, 2)], shapes=[[None, 2]],
                                 n32=2 + 1, scale32=SUM_OF_TERMS),
    # ---- unsorted segments: unordered ids, 2-D ids, empty segments
    "unsorted_segment_mean": Case(lambda tf, x: tf.unsorted_segment_mean(x, [3, 0, 3, 1], 5), [rnd(4, 2)],
                                  n32=2 + 1, scale32=SUM_OF_TERMS),
    "unsorted_segment_mean_2d_ids": Case(lambda tf, x: tf.unsorted_segment_mean(x, [[0, 2, 0], [2, 2, 1]], 4),
                                         [rnd(2, 3, 2)], n32=3 + 1, scale32=SUM_OF_TERMS),
    # empty segments are the dtype's lowest value; tf.maximum keeps the objective finite for the gradient checks
    "unsorted_segment_max": Case(lambda tf, x: tf.maximum(tf.unsorted_segment_max(x, [2, 0, 2, 2, -1], 4), -50.0),
                                 [distinct(5, 3)], n32=0),
    "unsorted_segment_max_2d_ids": Case(lambda tf, x: tf.maximum(
        tf.unsorted_segment_max(x, [[1, 0], [1, 1]], 3), -50.0), [distinct(2, 2, 3)], n32=0),
    # ties: gradient split among equal maxima (a kink for finite differences)
    "unsorted_segment_max_ties": Case(lambda tf, x: tf.unsorted_segment_max(x, [1, 0, 1, 0, 1], 2),
                                      [with_ties(5, 2)], numeric=False, n32=0),
    "unsorted_segment_max_int": Case(lambda tf, x: tf.unsorted_segment_max(_i32(tf, x * 10), [0, 0, 2], 3),
                                     [rnd(3, 2)], n32=0),
    # ---- dynamic partition / stitch
    "dynamic_partition": Case(lambda tf, x: tf.dynamic_partition(x, [1, 0, 2, 1, 1], 4), [rnd(5, 2)], n32=0),
    "dynamic_partition_2d": Case(lambda tf, x: tf.dynamic_partition(x, [[0, 1], [1, 1]], 2), [rnd(2, 2, 3)], n32=0),
    "dynamic_partition_vector": Case(lambda tf, x: tf.dynamic_partition(x * 2.0, [1, 0, 0], 2), [rnd(3)], n32=0),
    "dynamic_stitch": Case(lambda tf, a, b: tf.dynamic_stitch([[0, 3], [[1], [4]]], [a, b]),
                           [rnd(2, 3), rnd(2, 1, 3)], n32=0),
    # a repeated index: the later data wins; TF's gradient still gathers into the overwritten entry (its formula),
    # which finite differences do not see
    "dynamic_stitch_overwrite": Case(lambda tf, a, b: tf.dynamic_stitch([[0, 2], [2]], [a, b]),
                                     [rnd(2, 2), rnd(1, 2)], numeric=False, n32=0),
    "dynamic_stitch_round_trip": Case(lambda tf, x: tf.dynamic_stitch(
        [tf.constant([1, 3]), tf.constant([0, 2])], tf.dynamic_partition(x, [1, 0, 1, 0], 2)), [rnd(4, 2)], n32=0),
    # ---- counting (integer outputs: no gradients)
    "histogram_fixed_width": Case(lambda tf, x: tf.histogram_fixed_width(x, [-1.0, 1.0], nbins=5),
                                  [np.array([-3.0, -1.0, -0.5, 0.0, 0.1, 0.39, 0.4, 0.99, 1.0, 7.0])]),
    "histogram_fixed_width_int64": Case(lambda tf, x: tf.histogram_fixed_width(x, [0.0, 4.0], nbins=3,
                                                                               dtype=tf.int64), [rnd(4, 5) * 3]),
    "bincount": Case(lambda tf, x: tf.bincount(x), [np.array([0.0, 1.0, 3.0, 3.0, 3.0, 1.0])]),
    "bincount_2d": Case(lambda tf, x: tf.bincount(_i32(tf, x), minlength=7), [np.array([[0.0, 4.0], [4.0, 2.0]])]),
    # DenseBincount has no gradient in TF (tf.gradients raises LookupError); core's weights get None
    "bincount_weights": Case(lambda tf, x, w: tf.bincount(_i32(tf, x), weights=w, minlength=3, maxlength=5),
                             [np.array([0.0, 1.0, 6.0, 1.0, 4.0]), rnd(5)], tf_grads=False, numeric=False,
                             n32=2, scale32=SUM_OF_TERMS),
    # TF validates labels and predictions with Assert ops (If/AssertGuard functions); core checks in ScatterNd
    "confusion_matrix": Case(lambda tf, x, y: tf.confusion_matrix(_i32(tf, x), _i32(tf, y)),
                             [np.array([0.0, 1.0, 2.0, 2.0, 1.0]), np.array([0.0, 2.0, 2.0, 1.0, 1.0])],
                             same_ops=False),
    "confusion_matrix_weighted": Case(lambda tf, x, y, w: tf.confusion_matrix(
        _i32(tf, x), _i32(tf, y), num_classes=4, weights=w, dtype=w.dtype),
        [np.array([0.5, 1.5, 3.5, 1.5]), np.array([0.5, 2.5, 2.5, 2.5]), rnd(4)], same_ops=False, n32=2,
        scale32=SUM_OF_TERMS),
    "math_confusion_matrix": Case(lambda tf, x, y: tf.math.confusion_matrix(_i32(tf, x), _i32(tf, y), 3,
                                                                          name="cm"),
                                  [np.array([0.0, 1.0]), np.array([2.0, 1.0])], same_ops=False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_segment_op(tf1, name):
    check_case(tf1, CASES[name])


# ---- unsorted_segment_sum (array_ops): values, gradients, static shape, negative ids


def _values_and_grads(lib, build, x):
    """``build(lib, x)`` (4 segments of rows of 2) and the gradient of a weighted sum of it."""
    with lib.Graph().as_default():
        p = lib.placeholder(lib.float64, x.shape)
        out = build(lib, p)
        grad = lib.gradients(lib.reduce_sum(out * lib.constant(np.arange(1.0, 9.0).reshape(4, 2))), p)[0]
        return lib.Session().run([out, lib.convert_to_tensor(grad)], {p: x})


def test_unsorted_segment_sum_values_and_gradients(tf1):
    build = lambda tf, x: tf.unsorted_segment_sum(x, [3, 0, 3, 1, 0], 4)  # noqa: E731
    x = rnd(5, 2)
    value, grad = _values_and_grads(core, build, x)
    want, want_grad = _values_and_grads(tf1, build, x)
    np.testing.assert_allclose(value, want, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)


def test_unsorted_segment_sum_static_shape(tf1):
    check_case(tf1, Case(lambda tf, x: tf.unsorted_segment_sum(x, [2, 0, 2], 3), [rnd(3, 2)]))


def test_unsorted_segment_sum_drops_negative_ids(tf1):
    build = lambda tf, x: tf.unsorted_segment_sum(x, [3, -1, 3, 1, 0], 4)  # noqa: E731
    x = rnd(5, 2)
    value, grad = _values_and_grads(core, build, x)
    want, want_grad = _values_and_grads(tf1, build, x)
    np.testing.assert_allclose(value, want, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)


# ---- focused tests


def test_bincount_of_empty_input(tf1):
    check_case(tf1, Case(lambda tf, x: tf.bincount(_i32(tf, x), dtype=tf.int64), [np.zeros(0)]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_empty_unsorted_max_segment_is_lowest_value(tf1, dtype):
    def run(lib):
        with lib.Graph().as_default():
            x = lib.constant(np.array([[1, 2], [3, 4]]), getattr(lib, dtype))
            return lib.Session().run(lib.unsorted_segment_max(x, [0, 0], 2))
    got, want = run(core), run(tf1)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert got[1, 0] == (np.finfo(dtype).min if "float" in dtype else np.iinfo(dtype).min)


@pytest.mark.parametrize("build", [
    lambda tf, x: tf.segment_sum(x, [1, 0, 0]),
    lambda tf, x: tf.segment_max(x, [-1, 0, 0]),
    lambda tf, x: tf.segment_mean(x, [0, 0]),
    lambda tf, x: tf.unsorted_segment_max(x, [0, 5, 1], 3),
    lambda tf, x: tf.dynamic_partition(x, [0, 2, 1], 2),
    lambda tf, x: tf.bincount(tf.constant([1, -1, 2])),
    lambda tf, x: tf.confusion_matrix([0, 1, 3], [0, 1, 1], num_classes=3),
    lambda tf, x: tf.confusion_matrix([0, -1, 1], [0, 1, 1]),
    lambda tf, x: tf.histogram_fixed_width(x[:, 0] / 0.0 * 0.0, [0.0, 1.0]),
], ids=["segment_ids_unsorted", "segment_ids_negative", "segment_ids_wrong_length", "unsorted_id_out_of_range",
        "partition_out_of_range", "bincount_negative", "confusion_out_of_range", "confusion_negative",
        "histogram_nan"])
def test_bad_runtime_input_is_invalid_argument_like_tf(tf1, build):
    x = rnd(3, 2)
    for lib in (tf1, core):
        with lib.Graph().as_default():
            p = lib.placeholder(lib.float32, [3, 2])
            with pytest.raises(lib.errors.InvalidArgumentError):    # TF checks constant labels when building
                lib.Session().run(build(lib, p), {p: x})


def test_name_scopes_follow_tf(tf1):
    def names(lib):
        with lib.Graph().as_default():
            x = lib.placeholder(lib.float32, [3, 2])
            return [lib.segment_sum(x, [0, 0, 1], name="s").name, lib.unsorted_segment_mean(x, [0, 1, 1], 2).name,
                    lib.unsorted_segment_max(x, [0, 1, 1], 2, name="m").name,
                    [t.name for t in lib.dynamic_partition(x, [0, 1, 1], 2, name="p")],
                    lib.dynamic_stitch([[0], [1, 2]], [x[:1], x[1:]], name="st").name,
                    lib.histogram_fixed_width(x, [0.0, 1.0], name="h").name, lib.bincount([1, 2]).name,
                    lib.confusion_matrix([0, 1], [1, 1], name="c").name]
    assert names(core) == names(tf1)


def test_segment_max_second_derivative_matches_tf(tf1):
    """Segment max's gradient is built from graph ops: its derivative (zero, piecewise linear) exists and
    matches TF's; segment_mean composed with a square has a non-zero one."""
    x = distinct(4, 2)

    def run(lib):
        with lib.Graph().as_default():
            p = lib.placeholder(lib.float64, x.shape)
            y = lib.reduce_sum(lib.square(lib.segment_max(p, [0, 0, 1, 1])) +
                               lib.square(lib.segment_mean(p, [0, 1, 1, 1])))
            g = lib.gradients(y, p)[0]
            return lib.Session().run(lib.gradients(lib.reduce_sum(g * g), p)[0], {p: x})
    np.testing.assert_allclose(run(core), run(tf1), rtol=1e-10)
