"""tf.nn pooling of tfevents.core against TF1 (tests/_op_cases.py): max_pool/avg_pool (tiling windows, overlapping
windows, SAME with odd sizes, stride larger than the window, explicit padding, NCHW, empty batch), the 1-D and
TF2-named variants, pool (incl. dilated: SpaceToBatchND), MaxPoolGrad routing ties to the first maximum, second
derivatives (MaxPoolGradGrad, AvgPoolGrad's gradient), bad input, and the C kernel against the numpy path."""
import numpy as np
import pytest

from _op_cases import SUM_OF_TERMS, Case, check_case, check_raises_like_tf
from _tolerance import assert_float32_close
from tfevents import core

R = np.random.RandomState(7)


def distinct(*shape):
    """Values at least 1e-2 apart (no ties within a finite-difference step, so max pool is differentiable)."""
    v = R.permutation(int(np.prod(shape))).reshape(shape) * 1e-2
    return v - v.mean()


def rnd(*shape):
    return R.uniform(-1.0, 1.0, size=shape)


def _maxp(tf, x, k, s, p, **kw):
    return tf.nn.max_pool(x, [1, k, k, 1], [1, s, s, 1], p, **kw)


# float32 (tests/_tolerance.py): a max, and the routing of a max pool's gradient, are exactly TF's (n32=0); an
# average sums its window (n32: the window's size, and the division) against Σ|terms|
CASES = {
    "max_tiles": Case(lambda tf, x: _maxp(tf, x, 2, 2, "SAME"), [distinct(2, 6, 4, 3)], n32=0),
    "max_same_odd": Case(lambda tf, x: _maxp(tf, x, 2, 2, "SAME"), [distinct(2, 5, 7, 2)], n32=0),
    "max_overlap_valid": Case(lambda tf, x: _maxp(tf, x, 3, 2, "VALID"), [distinct(1, 7, 6, 2)], n32=0),
    "max_overlap_same": Case(lambda tf, x: tf.nn.max_pool(x, [1, 3, 2, 1], [1, 1, 2, 1], "SAME"),
                             [distinct(2, 5, 5, 2)], n32=0),
    "max_stride_gt_window": Case(lambda tf, x: _maxp(tf, x, 2, 3, "VALID"), [distinct(1, 8, 7, 2)], n32=0),
    "max_int_ksize": Case(lambda tf, x: tf.nn.max_pool(x, 3, 2, "SAME"), [distinct(1, 6, 6, 1)], n32=0),
    "max_explicit": Case(lambda tf, x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1],
                                                      [[0, 0], [1, 0], [0, 1], [0, 0]]), [distinct(2, 5, 5, 2)], n32=0),
    "max_empty_batch": Case(lambda tf, x: _maxp(tf, x, 2, 2, "SAME"), [rnd(0, 4, 4, 2)], n32=0),
    "max_unknown_dims": Case(lambda tf, x: _maxp(tf, x, 2, 2, "VALID", name="mp"), [distinct(2, 4, 6, 2)],
                             shapes=[[None, None, 6, 2]], n32=0),
    "max_pool2d": Case(lambda tf, x: tf.nn.max_pool2d(x, 2, [1, 2, 2, 1], "VALID"), [distinct(1, 4, 5, 2)], n32=0),
    "max_pool1d": Case(lambda tf, x: tf.nn.max_pool1d(x, 3, 2, "SAME"), [distinct(2, 7, 3)], n32=0),
    # NCHW: TF's CPU MaxPool/AvgPool have no NCHW kernel; compare with TF's NHWC result (same_ops off: transposes)
    "max_nchw": Case(lambda tf, x: tf.transpose(tf.nn.max_pool(tf.transpose(x, [0, 3, 1, 2]), [1, 1, 3, 3],
                                                               [1, 1, 2, 2], "SAME", data_format="NCHW"),
                                                [0, 2, 3, 1]) if tf is core else _maxp(tf, x, 3, 2, "SAME"),
                     [distinct(2, 5, 6, 3)], same_ops=False, n32=0),
    "avg_tiles": Case(lambda tf, x: tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), [rnd(2, 4, 6, 3)],
                      n32=2 * 2 + 1, scale32=SUM_OF_TERMS),
    "avg_same_odd": Case(lambda tf, x: tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"), [rnd(2, 5, 7, 2)],
                         n32=3 * 3 + 1, scale32=SUM_OF_TERMS),
    "avg_overlap_valid": Case(lambda tf, x: tf.nn.avg_pool(x, [1, 3, 2, 1], [1, 1, 1, 1], "VALID"),
                              [rnd(1, 5, 4, 2)], n32=3 * 2 + 1, scale32=SUM_OF_TERMS),
    "avg_stride_gt_window": Case(lambda tf, x: tf.nn.avg_pool(x, [1, 1, 2, 1], [1, 3, 3, 1], "SAME"),
                                 [rnd(1, 7, 8, 1)], n32=1 * 2 + 1, scale32=SUM_OF_TERMS),
    "avg_empty_batch": Case(lambda tf, x: tf.nn.avg_pool(x, 2, 2, "SAME"), [rnd(0, 3, 3, 2)],
                            n32=2 * 2 + 1, scale32=SUM_OF_TERMS),
    "avg_pool2d": Case(lambda tf, x: tf.nn.avg_pool2d(x, 2, 2, "SAME", name="ap"), [rnd(1, 5, 5, 2)],
                       n32=2 * 2 + 1, scale32=SUM_OF_TERMS),
    "avg_pool1d": Case(lambda tf, x: tf.nn.avg_pool1d(x, 2, 1, "VALID"), [rnd(2, 5, 3)],
                       n32=2 + 1, scale32=SUM_OF_TERMS),
    "avg_nchw": Case(lambda tf, x: tf.transpose(tf.nn.avg_pool(tf.transpose(x, [0, 3, 1, 2]), [1, 1, 3, 2],
                                                               [1, 1, 2, 1], "SAME", data_format="NCHW"),
                                                [0, 2, 3, 1]) if tf is core
                     else tf.nn.avg_pool(x, [1, 3, 2, 1], [1, 2, 1, 1], "SAME"),
                     [rnd(2, 5, 4, 3)], same_ops=False, n32=3 * 2 + 1, scale32=SUM_OF_TERMS),
    "pool_max": Case(lambda tf, x: tf.nn.pool(x, [2, 2], "MAX", "SAME", strides=[2, 2]), [distinct(2, 5, 5, 2)], n32=0),
    "pool_avg_1d": Case(lambda tf, x: tf.nn.pool(x, [2], "AVG", "SAME", strides=[2]), [rnd(2, 7, 3)],
                        n32=2 + 1, scale32=SUM_OF_TERMS),
    "pool_avg_dilated": Case(lambda tf, x: tf.nn.pool(x, [2, 2], "AVG", "VALID", dilation_rate=[2, 2]),
                             [rnd(1, 7, 6, 2)], n32=2 * 2 + 1, scale32=SUM_OF_TERMS),
    "pool_max_dilated": Case(lambda tf, x: tf.nn.pool(x, [2, 3], "MAX", "VALID", dilation_rate=[2, 1], name="p"),
                             [distinct(1, 6, 7, 2)], n32=0),
    # second derivatives: the gradient of max/avg pool as a function of the output gradient (TF's
    # MaxPoolGradGrad / AvgPool); central differences see them too (linear in dy)
    "max_pool_grad_grad": Case(lambda tf, x, dy: tf.gradients(_maxp(tf, x, 3, 2, "SAME"), x, grad_ys=dy)[0],
                               [distinct(1, 5, 5, 2), rnd(1, 3, 3, 2)], same_ops=False, n32=0),
    "avg_pool_grad_grad": Case(lambda tf, x, dy: tf.gradients(tf.nn.avg_pool(x, 3, 2, "SAME"), x, grad_ys=dy)[0],
                               [rnd(1, 5, 5, 2), rnd(1, 3, 3, 2)], same_ops=False, n32=3 * 3 + 1, scale32=SUM_OF_TERMS),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pool_case(tf1, name):
    check_case(tf1, CASES[name])


def ties(*shape):
    """Few distinct values (as after a relu): windows hold several equal maxima."""
    return np.maximum(R.randint(-2, 3, size=shape), 0).astype(np.float64)


TIES = {  # the gradient goes to the first maximum of each window, as TF's CPU kernel routes it
    # (numeric off: at a tie the function has a kink)
    "tiles": Case(lambda tf, x: _maxp(tf, x, 2, 2, "SAME"), [ties(2, 6, 6, 3)], numeric=False, n32=0),
    "overlap_same": Case(lambda tf, x: _maxp(tf, x, 3, 1, "SAME"), [ties(1, 5, 6, 2)], numeric=False, n32=0),
    "padded_odd": Case(lambda tf, x: _maxp(tf, x, 2, 2, "SAME"), [ties(2, 5, 5, 2)], numeric=False, n32=0),
    "grad_grad": Case(lambda tf, x, dy: tf.gradients(_maxp(tf, x, 3, 2, "SAME"), x, grad_ys=dy)[0],
                      [ties(1, 5, 5, 2), rnd(1, 3, 3, 2)], numeric=False, same_ops=False, n32=0),
}


@pytest.mark.parametrize("name", sorted(TIES))
def test_max_pool_ties_route_like_tf(tf1, name):
    check_case(tf1, TIES[name])


BAD = {
    "zero_ksize": lambda tf: tf.nn.max_pool(tf.zeros([1, 4, 4, 1]), [1, 0, 2, 1], [1, 1, 1, 1], "SAME"),
    "window_larger_than_input": lambda tf: tf.nn.avg_pool(tf.zeros([1, 2, 2, 1]), 3, 1, "VALID"),
    "input_rank": lambda tf: tf.nn.max_pool(tf.zeros([4, 4, 1]), 2, 2, "VALID"),
    "pool_same_dilated": lambda tf: tf.nn.pool(tf.zeros([1, 6, 6, 1]), [2, 2], "MAX", "SAME",
                                               dilation_rate=[2, 2]),
    "pool_type": lambda tf: tf.nn.pool(tf.zeros([1, 6, 6, 1]), [2, 2], "MIN", "SAME"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_raises_like_tf(tf1, name):
    check_raises_like_tf(tf1, BAD[name])


# ---- the C max-pool gradient (core/runtime/_kernels.c) against the numpy fallback: the same numbers, bit for bit

pool_ops = pytest.importorskip("tfevents.core.ops.pool_ops")

POOL_GEOMETRIES = [  # (x shape NHWC, ksize, strides, padding)
    ((2, 6, 8, 3), (2, 2), (2, 2), "VALID"),      # tiles
    ((2, 7, 5, 2), (2, 2), (2, 2), "SAME"),       # padded
    ((1, 7, 6, 3), (3, 3), (1, 2), "SAME"),       # overlapping, gradients add up
    ((1, 8, 7, 2), (2, 1), (3, 3), "VALID"),      # stride larger than the window
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("geometry", range(len(POOL_GEOMETRIES)))
def test_max_pool_grad_kernel_equals_numpy(monkeypatch, geometry, dtype):
    if pool_ops._c_max_pool_grad is None:
        pytest.skip("C extension not built")
    shape, (kh, kw), (sh, sw), padding = POOL_GEOMETRIES[geometry]
    attrs = dict(ksize=[1, kh, kw, 1], strides=[1, sh, sw, 1], padding=padding)
    x = ties(*shape).astype(dtype) + R.randint(0, 2, size=shape) * 0.5
    y = pool_ops._max_pool_forward(x, **attrs)
    dy = R.randn(*y.shape).astype(dtype)
    fast = pool_ops._max_pool_grad_forward(x, y, dy, **attrs)
    with monkeypatch.context() as m:
        m.setattr(pool_ops, "_c_max_pool_grad", None)
        slow = pool_ops._max_pool_grad_forward(x, y, dy, **attrs)
    assert fast.dtype == slow.dtype == dtype
    np.testing.assert_array_equal(fast, slow)
    # every window's gradient lands once: the same terms summed in two orders (dy's, and up to kh·kw of them into
    # one x first), against Σ|terms| (the float32 bound holds for float64 too)
    assert_float32_close(fast.sum(), dy.sum(), n=dy.size + kh * kw, scale=np.abs(dy).sum())


def test_max_pool_grad_kernel_refuses_what_it_does_not_handle():
    if pool_ops._c_max_pool_grad is None:
        pytest.skip("C extension not built")
    k = pool_ops._kernels
    x, dy = np.ones((1, 4, 4, 2), np.float32), np.ones((1, 2, 2, 2), np.float32)
    geometry = (2, 2, 2, 2, 0, 0, 2, 2)
    assert k.max_pool_grad(x, dy, np.empty_like(x), *geometry) is True
    assert k.max_pool_grad(x, dy.astype(np.float64), np.empty_like(x), *geometry) is False
    assert k.max_pool_grad(x, dy[:, :1], np.empty_like(x), *geometry) is False
    assert k.max_pool_grad(x, dy, x, *geometry) is False                      # out overlaps an input
    assert k.max_pool_grad(x, dy, np.empty((1, 4, 4, 2), np.float32)[:, ::-1], *geometry) is False
    with pytest.raises(TypeError):
        k.max_pool_grad(x, dy)
