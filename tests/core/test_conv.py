"""tf.nn convolutions of tfevents.core against TF1 (tests/_op_cases.py): conv2d (SAME/VALID/explicit padding,
strides, dilations, NCHW, 1x1, empty batch), its two backprops as ops, conv1d, conv2d_transpose, depthwise,
separable, atrous/convolution (SpaceToBatchND composites); second derivatives; bad input; the C kernels
against the numpy path."""
import numpy as np
import pytest

from _op_cases import SUM_OF_TERMS, Case, check_case, check_raises_like_tf
from _tolerance import assert_float32_close
from tfevents import core

R = np.random.RandomState(42)


def rnd(*shape):
    return R.uniform(-1.0, 1.0, size=shape)


def _nchw_in(tf, x):
    """x is fed NHWC; NCHW cases transpose it in (TF's CPU kernels run NCHW only in some configurations)."""
    return tf.transpose(x, [0, 3, 1, 2])


# float32 (tests/_tolerance.py): each output is a dot of kh·kw·cin products (depthwise: kh·kw; separable: then
# cin·multiplier; backprops: the other dots, over kh·kw·cout or the batch's positions), against Σ|terms|
CASES = {
    "conv2d_same": Case(lambda tf, x, w: tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), [rnd(2, 5, 6, 3), rnd(3, 3, 3, 4)],
                        n32=3 * 3 * 3, scale32=SUM_OF_TERMS),
    "conv2d_valid_stride": Case(lambda tf, x, w: tf.nn.conv2d(x, w, [1, 2, 3, 1], "VALID"),
                                [rnd(2, 7, 8, 2), rnd(3, 2, 2, 3)], n32=3 * 2 * 2, scale32=SUM_OF_TERMS),
    "conv2d_same_odd_stride": Case(lambda tf, x, w: tf.nn.conv2d(x, w, strides=[1, 2, 2, 1], padding="SAME"),
                                   [rnd(1, 7, 5, 2), rnd(4, 3, 2, 2)], n32=4 * 3 * 2, scale32=SUM_OF_TERMS),
    "conv2d_stride_gt_kernel": Case(lambda tf, x, w: tf.nn.conv2d(x, w, [1, 3, 3, 1], "SAME"),
                                    [rnd(2, 7, 7, 2), rnd(2, 2, 2, 3)], n32=2 * 2 * 2, scale32=SUM_OF_TERMS),
    "conv2d_int_strides": Case(lambda tf, x, w: tf.nn.conv2d(x, w, 2, "VALID"), [rnd(1, 6, 6, 1), rnd(2, 2, 1, 2)],
                               n32=2 * 2 * 1, scale32=SUM_OF_TERMS),
    "conv2d_1x1": Case(lambda tf, x, w: tf.nn.conv2d(x, w, [1, 1, 1, 1], "VALID"), [rnd(2, 3, 4, 3), rnd(1, 1, 3, 5)],
                       n32=1 * 1 * 3, scale32=SUM_OF_TERMS),
    # TF's CPU Conv2DBackpropFilter rejects dilations: gradients checked by central differences only
    "conv2d_dilated": Case(lambda tf, x, w: tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", dilations=[1, 2, 2, 1]),
                           [rnd(1, 7, 6, 2), rnd(3, 2, 2, 3)], tf_grads=False, n32=3 * 2 * 2, scale32=SUM_OF_TERMS),
    "conv2d_explicit": Case(lambda tf, x, w: tf.nn.conv2d(x, w, [1, 2, 1, 1], [[0, 0], [1, 2], [0, 1], [0, 0]]),
                            [rnd(2, 5, 5, 2), rnd(3, 3, 2, 2)], n32=3 * 3 * 2, scale32=SUM_OF_TERMS),
    "conv2d_empty_batch": Case(lambda tf, x, w: tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"),
                               [rnd(0, 4, 4, 2), rnd(3, 3, 2, 2)], n32=3 * 3 * 2, scale32=SUM_OF_TERMS),
    "conv2d_unknown_batch": Case(lambda tf, x, w: tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", name="c"),
                                 [rnd(2, 4, 5, 2), rnd(3, 3, 2, 2)], shapes=[[None, 4, None, 2], [3, 3, 2, 2]],
                                 n32=3 * 3 * 2, scale32=SUM_OF_TERMS),
    # NCHW: TF's CPU Conv2D has no NCHW kernel; compare against TF's NHWC result (same_ops off: transposes)
    "conv2d_nchw": Case(lambda tf, x, w: tf.transpose(
        tf.nn.conv2d(_nchw_in(tf, x), w, [1, 1, 2, 2], "SAME", data_format="NCHW"), [0, 2, 3, 1])
        if tf is core else tf.nn.conv2d(x, w, [1, 2, 2, 1], "SAME"),
        [rnd(2, 5, 6, 3), rnd(3, 3, 3, 2)], same_ops=False, n32=3 * 3 * 3, scale32=SUM_OF_TERMS),
    "conv2d_keywords": Case(lambda tf, x, w: tf.nn.conv2d(input=x, filters=w, strides=1, padding="SAME",
                                                           use_cudnn_on_gpu=False, name="cv"),
                            [rnd(1, 4, 3, 2), rnd(2, 2, 2, 3)], n32=2 * 2 * 2, scale32=SUM_OF_TERMS),
    "conv2d_backprop_input": Case(
        lambda tf, dy, w: tf.nn.conv2d_backprop_input([2, 5, 5, 3], w, dy, [1, 2, 2, 1], "SAME"),
        [rnd(2, 3, 3, 4), rnd(3, 3, 3, 4)], n32=3 * 3 * 4, scale32=SUM_OF_TERMS),
    "conv2d_backprop_filter": Case(
        lambda tf, x, dy: tf.nn.conv2d_backprop_filter(x, [3, 2, 3, 4], dy, [1, 1, 1, 1], "VALID"),
        [rnd(2, 5, 4, 3), rnd(2, 3, 3, 4)], n32=2 * 3 * 3, scale32=SUM_OF_TERMS),
    "conv2d_transpose": Case(lambda tf, x, w: tf.nn.conv2d_transpose(x, w, [2, 9, 9, 3], [1, 2, 2, 1], "SAME"),
                             [rnd(2, 5, 5, 4), rnd(3, 3, 3, 4)], n32=3 * 3 * 4, scale32=SUM_OF_TERMS),
    "conv2d_transpose_valid": Case(lambda tf, x, w: tf.nn.conv2d_transpose(x, w, [1, 6, 7, 2], [1, 2, 2, 1],
                                                                           "VALID", name="up"),
                                   [rnd(1, 2, 3, 3), rnd(3, 3, 2, 3)], n32=3 * 3 * 3, scale32=SUM_OF_TERMS),
    "conv2d_transpose_dynamic_shape": Case(
        lambda tf, x, w: tf.nn.conv2d_transpose(x, w, tf.stack([tf.shape(x)[0], 9, 9, 3]), [1, 2, 2, 1], "SAME"),
        [rnd(2, 5, 5, 4), rnd(3, 3, 3, 4)], shapes=[[None, 5, 5, 4], [3, 3, 3, 4]], n32=3 * 3 * 4,
        scale32=SUM_OF_TERMS),
    "conv1d": Case(lambda tf, x, w: tf.nn.conv1d(x, w, 2, "SAME"), [rnd(2, 9, 3), rnd(3, 3, 4)],
                   n32=3 * 3, scale32=SUM_OF_TERMS),
    "conv1d_valid_named": Case(lambda tf, x, w: tf.nn.conv1d(value=x, filters=w, stride=1, padding="VALID",
                                                             name="c1"), [rnd(2, 6, 2), rnd(2, 2, 3)],
                               n32=2 * 2, scale32=SUM_OF_TERMS),
    "depthwise": Case(lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"),
                      [rnd(2, 5, 5, 3), rnd(3, 3, 3, 2)], n32=3 * 3, scale32=SUM_OF_TERMS),
    "depthwise_stride_valid": Case(lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "VALID"),
                                   [rnd(1, 6, 7, 2), rnd(2, 3, 2, 3)], n32=2 * 3, scale32=SUM_OF_TERMS),
    "depthwise_rate": Case(lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID", rate=[2, 2]),
                           [rnd(2, 7, 7, 2), rnd(2, 2, 2, 2)], n32=2 * 2, scale32=SUM_OF_TERMS),
    "depthwise_native": Case(lambda tf, x, w: tf.nn.depthwise_conv2d_native(x, w, [1, 1, 1, 1], "SAME"),
                             [rnd(1, 4, 5, 2), rnd(2, 3, 2, 1)], n32=2 * 3, scale32=SUM_OF_TERMS),
    "separable": Case(lambda tf, x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "SAME"),
                      [rnd(2, 5, 5, 3), rnd(3, 3, 3, 2), rnd(1, 1, 6, 4)], n32=3 * 3 + 6, scale32=SUM_OF_TERMS),
    "separable_rate": Case(lambda tf, x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "SAME", rate=[2, 2]),
                           [rnd(1, 6, 5, 2), rnd(3, 3, 2, 1), rnd(1, 1, 2, 3)], n32=3 * 3 + 2, scale32=SUM_OF_TERMS),
    "atrous_same": Case(lambda tf, x, w: tf.nn.atrous_conv2d(x, w, 2, "SAME"), [rnd(2, 7, 6, 2), rnd(3, 3, 2, 3)],
                        n32=3 * 3 * 2, scale32=SUM_OF_TERMS),
    "atrous_valid": Case(lambda tf, x, w: tf.nn.atrous_conv2d(x, w, 3, "VALID"), [rnd(1, 8, 9, 2), rnd(2, 2, 2, 2)],
                         n32=2 * 2 * 2, scale32=SUM_OF_TERMS),
    "atrous_rate1": Case(lambda tf, x, w: tf.nn.atrous_conv2d(x, w, 1, "SAME"), [rnd(1, 4, 4, 2), rnd(2, 2, 2, 2)],
                         n32=2 * 2 * 2, scale32=SUM_OF_TERMS),
    "convolution_strided": Case(lambda tf, x, w: tf.nn.convolution(x, w, "SAME", strides=[2, 2]),
                                [rnd(2, 5, 6, 2), rnd(3, 3, 2, 3)], n32=3 * 3 * 2, scale32=SUM_OF_TERMS),
    "convolution_1d": Case(lambda tf, x, w: tf.nn.convolution(x, w, "VALID"), [rnd(2, 6, 2), rnd(3, 2, 3)],
                           n32=3 * 2, scale32=SUM_OF_TERMS),
    "convolution_dilated": Case(lambda tf, x, w: tf.nn.convolution(x, w, "SAME", dilation_rate=[2, 1]),
                                [rnd(1, 6, 5, 2), rnd(3, 2, 2, 2)], n32=3 * 2 * 2, scale32=SUM_OF_TERMS),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_case(tf1, name):
    check_case(tf1, CASES[name])


# ---- second derivatives: the backprops' own gradients (TF's: Conv2D and the other backprop)

SECOND = {
    "grad_wrt_filter": Case(lambda tf, x, w, dy: tf.gradients(tf.nn.conv2d(x, w, [1, 2, 1, 1], "SAME"), w,
                                                             grad_ys=dy)[0],
                            [rnd(2, 5, 4, 2), rnd(3, 2, 2, 3), rnd(2, 3, 4, 3)], same_ops=False,
                            n32=2 * 3 * 4, scale32=SUM_OF_TERMS),
    "grad_wrt_input": Case(lambda tf, x, w, dy: tf.gradients(tf.nn.conv2d(x, w, [1, 1, 1, 1], "VALID"), x,
                                                            grad_ys=dy)[0],
                           [rnd(1, 5, 5, 2), rnd(2, 3, 2, 2), rnd(1, 4, 3, 2)], same_ops=False,
                           n32=2 * 3 * 2, scale32=SUM_OF_TERMS),
    "depthwise_grad_wrt_both": Case(
        lambda tf, x, w, dy: tf.gradients(tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"), [x, w],
                                          grad_ys=dy),
        [rnd(1, 4, 4, 2), rnd(2, 2, 2, 2), rnd(1, 4, 4, 4)], same_ops=False, n32=4 * 4, scale32=SUM_OF_TERMS),
}
# (same_ops off: the graph holds gradient machinery, Shape vs TF's folded ShapeN; the op attrs are checked above)


@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_derivative(tf1, name):
    check_case(tf1, SECOND[name])


# ---- bad input: the same error type as TF, when the graph is built


BAD = {
    "depth_mismatch": lambda tf: tf.nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([2, 2, 2, 4]), [1, 1, 1, 1],
                                              "SAME"),
    "bad_padding": lambda tf: tf.nn.conv2d(tf.zeros([1, 4, 4, 2]), tf.zeros([2, 2, 2, 4]), [1, 1, 1, 1], "FULL"),
    "kernel_larger_than_input": lambda tf: tf.nn.conv2d(tf.zeros([1, 2, 2, 1]), tf.zeros([3, 3, 1, 1]),
                                                        [1, 1, 1, 1], "VALID"),
    "filter_rank": lambda tf: tf.nn.conv2d(tf.zeros([1, 4, 4, 1]), tf.zeros([3, 1, 1]), [1, 1, 1, 1], "SAME"),
    "strides_length": lambda tf: tf.nn.conv2d(tf.zeros([1, 4, 4, 1]), tf.zeros([3, 3, 1, 1]), [1, 1, 1],
                                              "SAME"),
    "transpose_channels": lambda tf: tf.nn.conv2d_transpose(tf.zeros([1, 3, 3, 2]), tf.zeros([2, 2, 4, 3]),
                                                            [1, 6, 6, 4], [1, 2, 2, 1]),
    "dilated_with_strides": lambda tf: tf.nn.convolution(tf.zeros([1, 6, 6, 1]), tf.zeros([2, 2, 1, 1]), "SAME",
                                                         strides=[2, 2], dilation_rate=[2, 2]),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_raises_like_tf(tf1, name):
    check_raises_like_tf(tf1, BAD[name])


def test_batch_stride_fails_when_run_like_tf(tf1):
    """TF builds a Conv2D striding the batch dimension and raises UnimplementedError when it runs."""
    for tf in (tf1, core):
        with tf.Graph().as_default():
            y = tf.nn.conv2d(tf.zeros([1, 4, 4, 2]), tf.zeros([2, 2, 2, 4]), [2, 1, 1, 1], "SAME")
            assert y.shape.as_list() == [1, 4, 4, 4]
            with tf.Session() as sess, pytest.raises(tf.errors.UnimplementedError):
                sess.run(y)


# ---- the C kernels (core/runtime/_kernels.c) against the numpy fallback: the same numbers, bit for bit

window_ops = pytest.importorskip("tfevents.core.ops.window_ops")

GEOMETRIES = [  # (x shape NHWC, kh, kw, strides, dilations, padding, explicit)
    ((2, 7, 6, 3), 3, 3, (1, 1), (1, 1), "SAME", ((0, 0), (0, 0))),
    ((2, 9, 8, 1), 5, 5, (1, 1), (1, 1), "SAME", ((0, 0), (0, 0))),
    ((1, 8, 9, 2), 3, 2, (2, 3), (1, 1), "VALID", ((0, 0), (0, 0))),
    ((1, 7, 7, 4), 2, 2, (3, 3), (1, 1), "SAME", ((0, 0), (0, 0))),
    ((2, 9, 8, 2), 3, 2, (1, 2), (2, 3), "SAME", ((0, 0), (0, 0))),
    ((1, 5, 6, 3), 3, 3, (2, 1), (1, 1), "EXPLICIT", ((1, 2), (0, 3))),
]


def _both_paths(monkeypatch, fn):
    fast = fn()
    with monkeypatch.context() as m:
        m.setattr(window_ops, "_c_im2col", None)
        m.setattr(window_ops, "_c_col2im", None)
        slow = fn()
    return fast, slow


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("geometry", range(len(GEOMETRIES)))
def test_im2col_col2im_kernels_equal_numpy(monkeypatch, geometry, dtype):
    if window_ops._c_im2col is None:
        pytest.skip("C extension not built")
    shape, kh, kw, strides, dilations, padding, explicit = GEOMETRIES[geometry]
    g = window_ops.Geometry(shape[1], shape[2], kh, kw, strides, dilations, padding, explicit)
    x = R.randn(*shape).astype(dtype)
    cols_fast, cols_slow = _both_paths(monkeypatch, lambda: window_ops.im2col(x, g))
    np.testing.assert_array_equal(cols_fast, cols_slow)
    dcols = R.randn(*cols_fast.shape).astype(dtype)
    dx_fast, dx_slow = _both_paths(monkeypatch, lambda: window_ops.col2im(dcols, g, shape))
    assert dx_fast.dtype == dtype
    np.testing.assert_array_equal(dx_fast, dx_slow)
    # col2im is im2col's adjoint: <im2col(x), d> == <x, col2im(d)>, the same products summed in two orders (col2im
    # first adds up to kh·kw of them into one x), against Σ|terms| (the float32 bound holds for float64 too)
    assert_float32_close(np.vdot(cols_fast, dcols), np.vdot(x, dx_fast), n=dcols.size + kh * kw,
                         scale=np.vdot(np.abs(cols_fast), np.abs(dcols)))


def test_kernels_refuse_what_they_do_not_handle():
    if window_ops._c_im2col is None:
        pytest.skip("C extension not built")
    k = window_ops._kernels
    x = np.ones((1, 4, 4, 2), np.float32)
    geometry = (2, 2, 1, 1, 1, 1, 0, 0, 3, 3)
    assert k.im2col(x, np.empty((1, 3, 3, 2, 2, 2), np.float32), *geometry) is True
    assert k.im2col(x, np.empty((1, 3, 3, 2, 2, 2), np.float64), *geometry) is False        # dtypes differ
    assert k.im2col(x, np.empty((1, 3, 3, 2, 2, 3), np.float32), *geometry) is False        # wrong shape
    assert k.im2col(x[:, :, ::2], np.empty((1, 3, 1, 2, 2, 2), np.float32),
                    2, 2, 1, 1, 1, 1, 0, 0, 3, 1) is False                                   # not contiguous
    assert k.im2col(x.astype(np.int32), np.empty((1, 3, 3, 2, 2, 2), np.int32), *geometry) is False
    cols = np.ones((1, 3, 3, 2, 2, 2), np.float32)
    assert k.col2im(cols, np.empty((1, 4, 4, 2), np.float32), *geometry) is True
    assert k.col2im(cols, np.empty((1, 4, 4, 2), np.float32)[:, ::-1], *geometry) is False  # not contiguous
    with pytest.raises(TypeError):
        k.im2col(x)


def test_conv_graph_same_numbers_with_and_without_kernels(monkeypatch):
    """A conv net's forward and gradients through Session.run: C path == numpy path, bit for bit."""
    x, w = R.randn(2, 9, 7, 3).astype(np.float32), R.randn(3, 3, 3, 4).astype(np.float32)

    def run():
        with core.Graph().as_default():
            xt, wt = core.constant(x), core.constant(w)
            y = core.nn.conv2d(xt, wt, [1, 2, 1, 1], "SAME")
            loss = core.reduce_sum(y * y)
            with core.Session() as sess:
                return sess.run([y] + core.gradients(loss, [xt, wt]))
    fast, slow = _both_paths(monkeypatch, run)
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)


NCHW_GRAPHS = {  # TF's CPU kernels cannot run these, but TF builds them: same ops, attrs and static shapes
    "conv2d": lambda tf, x, w: tf.nn.conv2d(x, w, [1, 1, 2, 2], "SAME", data_format="NCHW"),
    "conv2d_explicit": lambda tf, x, w: tf.nn.conv2d(x, w, [1, 1, 1, 2], [[0, 0], [0, 0], [1, 2], [0, 1]],
                                                     data_format="NCHW", dilations=[1, 1, 2, 1]),
    "conv2d_transpose": lambda tf, x, w: tf.nn.conv2d_transpose(x, w[:, :, :, :3], [2, 3, 10, 12],
                                                                [1, 1, 2, 2], "SAME", data_format="NCHW"),
    "depthwise": lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 2, 2], "VALID", data_format="NCHW"),
    "conv1d_ncw": lambda tf, x, w: tf.nn.conv1d(x[:, :, 0], w[0], 2, "SAME", data_format="NCW"),
}


@pytest.mark.parametrize("name", sorted(NCHW_GRAPHS))
def test_nchw_graph_def_like_tf(tf1, name):
    from _op_cases import _attr_dict
    built = {}
    for tf in (tf1, core):
        with tf.Graph().as_default() as graph:
            x = tf.placeholder(tf.float32, [2, 3, 5, 6], name="x")
            w = tf.placeholder(tf.float32, [3, 3, 3, 4], name="w")
            y = NCHW_GRAPHS[name](tf, x, w)
            nodes = {n.op: n for n in graph.as_graph_def().node
                     if n.op not in ("Const", "Placeholder", "Shape", "StridedSlice")}
            built[tf is core] = (y.shape.as_list(), {k: _attr_dict(v, ()) for k, v in nodes.items()})
    assert built[True] == built[False]
