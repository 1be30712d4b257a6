"""tf.map_fn, tf.scan, tf.foldl, tf.foldr against TF1 (graph mode, control flow v1): values and gradients from the
same feeds, and the loops' and TensorArrays' nodes of the GraphDef (names, inputs, frames, attrs)."""
import numpy as np
import pytest

from _tolerance import ELEMENTWISE_ULPS
from test_tensor_array import check


@pytest.fixture(autouse=True, scope="module")
def tf1_control_flow_v1(tf):
    tf.compat.v1.disable_control_flow_v2()
    yield
    tf.compat.v1.enable_control_flow_v2()


X = np.array([[1.5, -2.0, 0.5], [0.25, 3.0, -1.0], [2.0, 0.5, 1.25], [-0.75, 1.0, 2.5]], np.float32)
W = np.array([0.5, -1.0, 2.0], np.float32)
E = ELEMENTWISE_ULPS     # float32 roundings of each program's longest path, forward and back (tests/_tolerance.py)


def _map_simple(tf):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    w = tf.placeholder(tf.float32, [3], name="w")
    y = tf.map_fn(lambda r: tf.tanh(r * w), x)
    loss = tf.reduce_sum(tf.square(y))
    return [y] + tf.gradients(loss, [x, w]), {"x": x, "w": w}


def test_map_fn_values_gradients_and_graph(tf1):
    # tanh(r·w) and its square; the gradient's 1 − y² (tanh's ulps count four times next to 1: |y| near 1 makes
    # it small), dL/dw's sum of the 4 rows' 2y·(1 − y²)·r
    check(tf1, _map_simple, [{"x": X, "w": W}, {"x": -X, "w": W * 0.5}], n=4 * E + 2 + 4 + 4)


def _map_nested(tf):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    k = tf.placeholder(tf.int32, [None], name="k")

    def fn(elem):
        row, (n, scale) = elem["row"], elem["pair"]
        return tf.reduce_sum(row * scale), tf.cast(n, tf.float32) * tf.exp(row)
    total, rows = tf.map_fn(fn, {"row": x, "pair": (k, x * 2.0)}, dtype=(tf.float32, tf.float32),
                            parallel_iterations=3, name="mapper")
    loss = tf.reduce_sum(total) + tf.reduce_sum(rows)
    return [total, rows, tf.gradients(loss, x)[0]], {"x": x, "k": k}


def test_map_fn_nested_elems_dtype_and_an_unknown_length(tf1):
    feeds = [{"x": X, "k": np.array([1, 2, 3, 4], np.int32)}, {"x": X[:2], "k": np.array([5, -1], np.int32)}]
    check(tf1, _map_nested, feeds, n=E + 3 + 4)      # a sum of 3, n·exp(row), the loss's sums


def _map_int(tf):
    x = tf.placeholder(tf.int32, [3, 2], name="x")
    return [tf.map_fn(lambda r: r * 3 + 1, x, back_prop=False, infer_shape=False, swap_memory=True)], {"x": x}


def test_map_fn_on_integers_without_back_prop(tf1):
    check(tf1, _map_int, [{"x": np.arange(6, dtype=np.int32).reshape(3, 2)}], n=0)


def _scan(tf):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    w = tf.placeholder(tf.float32, [3], name="w")
    s = tf.scan(lambda a, r: tf.tanh(a * w + r), x)
    r = tf.scan(lambda a, r: a + r, x, reverse=True)
    init = tf.scan(lambda acc, r: (acc[0] + tf.reduce_sum(r), acc[1] * tf.sin(r)), x,
                   initializer=(tf.constant(0.0), tf.ones([3])))
    # one tf.gradients through all three loops: their backprop loops are made in TF's order
    grads = tf.gradients(tf.reduce_sum(s * s) + tf.reduce_sum(r * w) + tf.reduce_sum(init[0])
                         + tf.reduce_sum(init[1]), [x, w])
    return [s, r, init[0], init[1]] + grads, {"x": x, "w": w}


def test_scan_forward_reverse_and_with_an_initializer(tf1):
    # four steps of tanh(a·w + r) (or a·sin(r)), forward and back; the initializer's running sum of 4·3 terms
    check(tf1, _scan, [{"x": X, "w": W}], n=2 * 4 * (E + 3) + 4 * 3)


def _scan_reverse_init(tf):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    y = tf.scan(lambda a, r: a * 0.5 + tf.square(r), x, initializer=tf.zeros([3]), reverse=True, infer_shape=False)
    return [y, tf.gradients(tf.reduce_sum(y), x)[0]], {"x": x}


def test_scan_reverse_with_an_initializer(tf1):
    check(tf1, _scan_reverse_init, [{"x": X}], n=2 * 4 * 2)    # four steps of a/2 + r², forward and back


def _folds(tf):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    w = tf.placeholder(tf.float32, [3], name="w")
    left = tf.foldl(lambda a, r: tf.tanh(a * w) + r, x)
    right = tf.foldr(lambda a, r: tf.tanh(a * w) + r, x)
    with_init = tf.foldl(lambda a, r: a + tf.reduce_sum(r * w), x, initializer=tf.constant(1.0))
    pair = tf.foldr(lambda a, e: (a[0] * e[0], a[1] + e[1]), (x, x * 2.0), initializer=(tf.ones([3]), tf.zeros([3])))
    grads = (tf.gradients(tf.reduce_sum(left), [x, w]) + tf.gradients(tf.reduce_sum(right * right), [x, w])
             + tf.gradients(with_init, [x, w]) + tf.gradients(tf.reduce_sum(pair[0] + pair[1]), x))
    return [left, right, with_init, pair] + grads, {"x": x, "w": w}


def test_foldl_and_foldr(tf1):
    # four steps of tanh(a·w) + r forward and back (TF's tanh is Eigen's rational approximation), dL/dw's sum of
    # their terms of both signs (4), with_init's 4·3 products
    check(tf1, _folds, [{"x": X, "w": W}, {"x": X * 0.5, "w": -W}], n=2 * 4 * (E + 3) + 4 + 4 * 3)


def test_functional_ops_check_their_arguments():
    from tfevents import core as tf
    with tf.Graph().as_default():
        x = tf.constant(X)
        with pytest.raises(TypeError, match="not callable"):
            tf.map_fn(3, x)
        with pytest.raises(ValueError, match="1\\+ dimensional"):
            tf.map_fn(lambda v: v, tf.constant(1.0))
        with pytest.raises(ValueError, match="does not match"):
            tf.map_fn(lambda v: (v, v), x)
        with pytest.raises(ValueError, match="fn_output_signature"):
            tf.map_fn(lambda v: v, x, dtype=tf.int32)
        with pytest.raises(ValueError, match="not compatible"):
            tf.map_fn(lambda e: e[0], (x, tf.zeros([5])))
        with pytest.raises(ValueError, match="does not match"):
            tf.scan(lambda a, r: (a, r), x)


def _nested_maps(tf):
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    w = tf.placeholder(tf.float32, [3], name="w")
    y = tf.map_fn(lambda row: tf.map_fn(lambda v: tf.sin(v) * 2.0, row * w), x)
    s = tf.foldl(lambda a, row: a + tf.reduce_sum(tf.scan(lambda b, v: b * v, row)), x, initializer=tf.constant(0.0))
    grads = tf.gradients(tf.reduce_sum(y * y), [x, w]) + tf.gradients(s, x)
    return [y, s] + grads, {"x": x, "w": w}


def test_nested_loops_with_tensor_arrays_made_inside_the_outer_body(tf1):
    # sin(v·w)·2 forward and back, dL/dw's sum over 4 rows; the fold's sum of 4 rows' 3 running products
    check(tf1, _nested_maps, [{"x": X, "w": W}], n=2 * (E + 2) + 4 + 4 * 3)
