"""Elementwise math of tfevents.core (core/ops/elementwise_ops.py, plus math_ops' FloorDiv / FloorMod /
Reciprocal / SquaredDifference and reduction_ops' Cumprod) against TF1: trigonometric and hyperbolic functions,
special functions, predicates, floor and truncating division, cumprod. Each case is checked by
tests/_op_cases.py (values in float64 and float32, static shapes, gradients against TF and central differences,
GraphDef op types and attrs); the focused tests below cover second derivatives, the gradient graphs' op types,
node names, errors and what has no gradient."""
import subprocess
import sys

import numpy as np
import pytest

from _op_cases import SAME_OP, Case, check_case
from _tolerance import ELEMENTWISE_ULPS
from tfevents import core

R = np.random.RandomState(77)


def rnd(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, size=shape)


def pos(*shape, lo=0.5, hi=2.0):
    return R.uniform(lo, hi, size=shape)


def signed(*shape, lo=0.3, hi=2.0):
    """|x| in [lo, hi] with random signs."""
    return R.uniform(lo, hi, size=shape) * R.choice([-1.0, 1.0], size=shape)


def int_case(build, inputs, dtype="int32"):
    """``build`` on integer casts of the (integer-valued float) inputs, the result cast back to float. The
    casts have no gradient (zeros in both) and finite differences would see the truncation's jumps."""
    def cast_build(tf, *xs):
        return tf.cast(build(tf, *[tf.cast(x, getattr(tf, dtype)) for x in xs]), xs[0].dtype)
    return Case(cast_build, inputs, numeric=False, n32=0)    # integer arithmetic: exact


# float32 roundings (tests/_tolerance.py) of TF's special functions, Cephes-style series of their own (lgamma: a
# rational approximation, a log and a reflection; polygamma: a zeta series): eight elementwise functions' worth
SPECIAL_FUNCTION = 8 * ELEMENTWISE_ULPS
# a first derivative: the function's gradient formula, up to four elementwise functions and their products
SECOND_ORDER_N32 = 4 * ELEMENTWISE_ULPS

# operands for the division family: every sign combination, quotients away from integers (no jumps within a
# finite-difference step)
DIV_X = np.array([7.3, -7.3, 7.3, -7.3, 5.9, -0.4, 0.7, -2.9])
DIV_Y = np.array([2.0, 2.0, -2.0, -2.0, 1.3, 3.0, 0.3, 0.7])
INT_X = np.array([7.0, -7.0, 7.0, -7.0, 0.0, 5.0, -9.0, 1.0])
INT_Y = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 5.0, 4.0, -3.0])

CASES = {
    # ---- trigonometric
    "sin": Case(lambda tf, x: tf.sin(x), [rnd(3, 4)]),
    "sin_empty": Case(lambda tf, x: tf.sin(x), [np.zeros((0, 3))]),
    "sin_unknown_dims": Case(lambda tf, x: tf.sin(x, name="s"), [rnd(2, 3)], shapes=[(None, 3)]),
    "cos": Case(lambda tf, x: tf.cos(x), [rnd(5)]),
    "tan": Case(lambda tf, x: tf.tan(x), [rnd(2, 3, lo=-1.2, hi=1.2)]),
    "asin": Case(lambda tf, x: tf.asin(x), [rnd(3, 2, lo=-0.9, hi=0.9)]),
    "acos": Case(lambda tf, x: tf.acos(x), [rnd(7, lo=-0.9, hi=0.9)]),
    "atan": Case(lambda tf, x: tf.atan(x), [rnd(2, 3, lo=-4, hi=4)]),
    "atan2": Case(lambda tf, y, x: tf.atan2(y, x), [rnd(3, 4), signed(3, 4)]),
    "atan2_broadcast": Case(lambda tf, y, x: tf.atan2(y, x), [rnd(3, 1), signed(4)]),
    "atan2_unknown_dims": Case(lambda tf, y, x: tf.atan2(y, x), [rnd(2, 3), signed(2, 1)],
                               shapes=[(None, 3), (2, None)]),
    "atan2_scalar_x": Case(lambda tf, y: tf.atan2(y, -1.5), [rnd(2, 3)]),
    # ---- hyperbolic
    "sinh": Case(lambda tf, x: tf.sinh(x), [rnd(3, 2)]),
    "cosh": Case(lambda tf, x: tf.cosh(x), [rnd(2, 1, 3)]),
    "asinh": Case(lambda tf, x: tf.asinh(x), [rnd(5, lo=-3, hi=3)]),
    "acosh": Case(lambda tf, x: tf.acosh(x), [pos(2, 3, lo=1.2, hi=3.0)]),
    "atanh": Case(lambda tf, x: tf.atanh(x), [rnd(4, lo=-0.9, hi=0.9)]),
    # ---- special functions
    "erf": Case(lambda tf, x: tf.erf(x), [rnd(3, 4)]),
    "erfc": Case(lambda tf, x: tf.erfc(x), [rnd(3, 4, lo=-3, hi=3)]),
    # negative non-integers too (log|Gamma|); TF's float32 lgamma is its own approximation
    "lgamma": Case(lambda tf, x: tf.lgamma(x), [np.concatenate([pos(5, lo=0.2, hi=6.0), [-0.5, -1.3, -2.7]])],
                   n32=SPECIAL_FUNCTION),
    "digamma": Case(lambda tf, x: tf.digamma(x), [np.concatenate([pos(5, lo=0.3, hi=6.0), [-0.5, -1.3]])],
                    n32=SPECIAL_FUNCTION),
    "polygamma": Case(lambda tf, x: tf.polygamma(tf.constant([0.0, 1.0, 2.0, 3.0], x.dtype), x),
                      [pos(2, 4, lo=0.5, hi=4.0)], n32=SPECIAL_FUNCTION),
    # orders that are not non-negative integers, and the poles (inf for odd orders, nan for even ones)
    "polygamma_edges": Case(lambda tf, a, x: tf.polygamma(a, x),
                            [np.array([-1.0, 0.5, 1.0, 2.0, 0.0, 1.0, 3.0, 2.0]),
                             np.array([1.5, 1.5, -2.0, 0.0, -3.0, -1.5, 0.0, -0.5])],
                            tf_grads=False, numeric=False),   # nan / inf values: no gradient to compare
    "digamma_poles": Case(lambda tf, x: tf.digamma(x) + tf.lgamma(x), [np.array([0.0, -1.0, -4.0])],
                          tf_grads=False, numeric=False),     # nan at the poles
    "expm1": Case(lambda tf, x: tf.expm1(x), [np.concatenate([rnd(4), [1e-9, -3e-8]])]),
    "log_sigmoid": Case(lambda tf, x: tf.log_sigmoid(x), [np.concatenate([rnd(5, lo=-5, hi=5), [-40.0, 35.0]])]),
    "log_sigmoid_named": Case(lambda tf, x: tf.log_sigmoid(x, name="ls"), [rnd(2, 3)]),
    # away from the .5 jumps; the gradient is None (zeros) in both
    "rint": Case(lambda tf, x: tf.rint(x) * x, [np.array([0.2, 1.7, -2.2, -0.8, 3.1, 2.6])]),
    "rint_halves_to_even": Case(lambda tf, x: tf.rint(x), [np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5])],
                                numeric=False),   # at the jumps themselves: no derivative to difference
    "reciprocal": Case(lambda tf, x: tf.reciprocal(x), [signed(3, 4)]),
    # ---- predicates (bool outputs: no objective, so forward and static shape only)
    "is_nan": Case(lambda tf, x: tf.is_nan(x), [np.array([[1.0, np.nan], [np.inf, -np.inf]])]),
    "is_inf": Case(lambda tf, x: tf.is_inf(x), [np.array([1.0, np.nan, np.inf, -np.inf, 0.0])]),
    "is_finite": Case(lambda tf, x: tf.is_finite(x), [np.array([1.0, np.nan, np.inf, -np.inf])],
                      shapes=[(None,)]),
    "predicates_select": Case(lambda tf, x: tf.where(tf.is_finite(x), x * 2.0, -x),
                              [np.array([1.0, np.nan, -3.0, np.inf])], numeric=False),   # nan inputs
    # ---- floor and truncating division: floats (both operands differentiable in FloorMod only)
    "floor_div": Case(lambda tf, x, y: tf.floor_div(x, y) * x, [DIV_X, DIV_Y]),
    # floor(1.0 / 0.1) == 10 where numpy's float // gives 9; the quotients sit on the jumps: no differences
    "floor_div_rounded_quotient": Case(lambda tf, x, y: tf.stack([tf.floor_div(x, y), tf.floordiv(x, y),
                                                                  tf.truncatediv(x, y), tf.floormod(x, y)]),
                                       [np.array([1.0, -1.0, 0.3, -0.6]), np.array([0.1, 0.1, 0.1, 0.2])],
                                       numeric=False),
    "floordiv": Case(lambda tf, x, y: tf.floordiv(x, y, name="fd") + x // y, [DIV_X, DIV_Y]),
    "truncatediv": Case(lambda tf, x, y: tf.truncatediv(x, y) * x, [DIV_X, DIV_Y]),
    # TF registers no gradient for TruncateMod (tf.gradients raises LookupError; core returns None, see
    # test_ops_without_gradient): forward, shapes and GraphDef only
    "truncatemod": Case(lambda tf, x, y: tf.truncatemod(x, y) * x, [DIV_X, DIV_Y], tf_grads=False, numeric=False),
    "floormod": Case(lambda tf, x, y: tf.floormod(x, y), [DIV_X, DIV_Y]),
    "floormod_broadcast": Case(lambda tf, x, y: tf.floormod(x, y), [rnd(3, 4, lo=-5, hi=5), signed(4)]),
    "mod_scalar_and_operator": Case(lambda tf, x: tf.mod(x, 2.5) + x % -1.5, [rnd(2, 3, lo=-5, hi=5)]),
    "truncatemod_broadcast": Case(lambda tf, x, y: tf.truncatemod(x, y), [rnd(3, 1, lo=-5, hi=5), signed(2)],
                                  tf_grads=False, numeric=False),   # no gradient in TF (above)
    "div_unknown_dims": Case(lambda tf, x, y: tf.truncatediv(x, y) + tf.floor_div(x, y), [DIV_X[:4], DIV_Y[:4]],
                             shapes=[(None,), (4,)]),
    # ---- integers: C truncation against floor for every sign combination
    "floor_div_int": int_case(lambda tf, x, y: tf.floor_div(x, y), [INT_X, INT_Y]),
    "floordiv_int_operator": int_case(lambda tf, x, y: x // y, [INT_X, INT_Y]),
    "truncatediv_int": int_case(lambda tf, x, y: tf.truncatediv(x, y), [INT_X, INT_Y]),
    "truncatemod_int": int_case(lambda tf, x, y: tf.truncatemod(x, y), [INT_X, INT_Y]),
    "floormod_int": int_case(lambda tf, x, y: tf.floormod(x, y), [INT_X, INT_Y]),
    "floormod_int64_scalar": int_case(lambda tf, x: tf.floormod(x, -3), [INT_X], "int64"),
    "div_int_is_floor": int_case(lambda tf, x, y: tf.div(x, y), [INT_X, INT_Y]),
    "truediv_int": int_case(lambda tf, x, y: tf.truediv(x, y), [INT_X, INT_Y]),
    # the quotient is float32 (8-bit integers divide in float32), and TF's float32 division is 1 ulp off IEEE
    "truediv_uint8": Case(int_case(lambda tf, x: tf.truediv(x, tf.constant(3, tf.uint8)),
                                   [np.array([7.0, 3.0, 250.0])], "uint8").build, [np.array([7.0, 3.0, 250.0])],
                          numeric=False, rtol=3e-7),
    # ---- squared difference
    "squared_difference": Case(lambda tf, x, y: tf.squared_difference(x, y), [rnd(3, 4), rnd(3, 4)]),
    "squared_difference_broadcast": Case(lambda tf, x, y: tf.squared_difference(x, y), [rnd(2, 3), rnd(3)]),
    "squared_difference_int": int_case(lambda tf, x, y: tf.squared_difference(x, y), [INT_X, INT_Y]),
    # ---- cumprod
    "cumprod": Case(lambda tf, x: tf.cumprod(x), [signed(4, 3)]),
    "cumprod_axis_neg": Case(lambda tf, x: tf.cumprod(x, axis=-1), [signed(2, 5)]),
    "cumprod_exclusive": Case(lambda tf, x: tf.cumprod(x, axis=1, exclusive=True), [signed(3, 4)]),
    "cumprod_reverse": Case(lambda tf, x: tf.cumprod(x, axis=0, reverse=True, name="cp"), [signed(3, 2, 2)]),
    "cumprod_exclusive_reverse": Case(lambda tf, x: tf.cumprod(x, 1, True, True), [signed(2, 5)]),
    "cumprod_axis_int64": Case(lambda tf, x: tf.cumprod(x, axis=tf.constant(-1, tf.int64)), [signed(2, 3)]),
    "cumprod_unknown_dims": Case(lambda tf, x: tf.cumprod(x, axis=1), [signed(3, 4)], shapes=[(None, None)]),
    "cumprod_empty": Case(lambda tf, x: tf.cumprod(x, axis=1, exclusive=True), [np.zeros((2, 0))]),
    "cumprod_int": int_case(lambda tf, x: tf.cumprod(x, axis=0, exclusive=True), [INT_X]),
    # TF's gradient divides by x (div_no_nan): at a zero it is TF's number, not the true derivative
    "cumprod_with_zero": Case(lambda tf, x: tf.cumprod(x), [np.array([1.5, 0.0, -2.0, 0.7])], numeric=False),
    "cumsum_exclusive_reverse": Case(lambda tf, x: tf.cumsum(x, axis=-2, exclusive=True, reverse=True),
                                     [rnd(3, 2)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(tf1, name):
    check_case(tf1, CASES[name])


# ---- second derivatives: a case's build is the first derivative, so the harness checks the second one against
# TF's tf.gradients and central differences. The gradient graphs hold bookkeeping ops (Shape, Fill,
# BroadcastGradientArgs, control dependencies) that differ from TF's: op types are compared in
# test_gradient_graph_ops_match_tensorflow instead.

def _grad_of(fn):
    def build(tf, *xs):
        return tf.gradients(tf.reduce_sum(fn(tf, *xs)), xs)
    return build


SECOND_ORDER = {
    "sin": (lambda tf, x: tf.sin(x), [rnd(4)]),
    "cos": (lambda tf, x: tf.cos(x), [rnd(4)]),
    "tan": (lambda tf, x: tf.tan(x), [rnd(4, lo=-1.0, hi=1.0)]),
    "asin": (lambda tf, x: tf.asin(x), [rnd(4, lo=-0.8, hi=0.8)]),
    "acos": (lambda tf, x: tf.acos(x), [rnd(4, lo=-0.8, hi=0.8)]),
    "atan": (lambda tf, x: tf.atan(x), [rnd(4)]),
    "atan2": (lambda tf, y, x: tf.atan2(y, x), [rnd(2, 3), signed(3)]),
    "sinh_cosh": (lambda tf, x: tf.sinh(x) * tf.cosh(x), [rnd(4)]),
    "asinh": (lambda tf, x: tf.asinh(x), [rnd(4)]),
    "acosh": (lambda tf, x: tf.acosh(x), [pos(4, lo=1.3, hi=3.0)]),
    "atanh": (lambda tf, x: tf.atanh(x), [rnd(4, lo=-0.8, hi=0.8)]),
    "erf_erfc": (lambda tf, x: tf.erf(x) + tf.erfc(x * 0.5), [rnd(4)]),
    "lgamma": (lambda tf, x: tf.lgamma(x), [pos(4, lo=0.5, hi=4.0)]),           # Digamma, then Polygamma
    "digamma": (lambda tf, x: tf.digamma(x), [pos(4, lo=0.5, hi=4.0)]),
    "expm1": (lambda tf, x: tf.expm1(x), [rnd(4)]),
    "log_sigmoid": (lambda tf, x: tf.log_sigmoid(x), [rnd(4, lo=-4, hi=4)]),
    "reciprocal": (lambda tf, x: tf.reciprocal(x), [signed(4)]),                 # ReciprocalGrad's gradient
    "squared_difference": (lambda tf, x, y: tf.squared_difference(x, y) * x, [rnd(2, 3), rnd(3)]),
    "floormod": (lambda tf, x, y: tf.floormod(x, y) * y, [DIV_X[:6], DIV_Y[:6]]),
    "cumprod": (lambda tf, x: tf.cumprod(x, axis=1, exclusive=True, reverse=True), [signed(2, 4)]),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_derivatives_match_tensorflow(tf1, name):
    fn, inputs = SECOND_ORDER[name]
    n32 = SPECIAL_FUNCTION if name in ("lgamma", "digamma") else SECOND_ORDER_N32   # digamma, polygamma
    check_case(tf1, Case(_grad_of(fn), inputs, same_ops=False, n32=n32, num_rtol=1e-4, num_atol=1e-5))


# ---- the gradient graph: the ops TF's gradient function builds (ReciprocalGrad, Polygamma, FloorDiv...)

_BOOKKEEPING = {"Const", "Placeholder", "Shape", "Fill", "Reshape", "Sum", "BroadcastGradientArgs", "Identity",
                "NoOp", "Size", "Rank", "Tile", "BroadcastTo"}


def _gradient_op_types(tf, fn, n_inputs):
    with tf.Graph().as_default() as g:
        xs = [tf.placeholder(tf.float64, [3], name="x%d" % i) for i in range(n_inputs)]
        y = tf.reduce_sum(fn(tf, *xs))
        before = {op.name for op in g.get_operations()}
        tf.gradients(y, xs)
        return {SAME_OP.get(op.type, op.type) for op in g.get_operations() if op.name not in before} - _BOOKKEEPING


GRAPHS = {"sin": (lambda tf, x: tf.sin(x), 1), "cos": (lambda tf, x: tf.cos(x), 1),
          "tan": (lambda tf, x: tf.tan(x), 1), "asin": (lambda tf, x: tf.asin(x), 1),
          "acos": (lambda tf, x: tf.acos(x), 1), "atan": (lambda tf, x: tf.atan(x), 1),
          "atan2": (lambda tf, y, x: tf.atan2(y, x), 2), "sinh": (lambda tf, x: tf.sinh(x), 1),
          "cosh": (lambda tf, x: tf.cosh(x), 1), "asinh": (lambda tf, x: tf.asinh(x), 1),
          "acosh": (lambda tf, x: tf.acosh(x), 1), "atanh": (lambda tf, x: tf.atanh(x), 1),
          "erf": (lambda tf, x: tf.erf(x), 1), "erfc": (lambda tf, x: tf.erfc(x), 1),
          "lgamma": (lambda tf, x: tf.lgamma(x), 1), "digamma": (lambda tf, x: tf.digamma(x), 1),
          "expm1": (lambda tf, x: tf.expm1(x), 1), "reciprocal": (lambda tf, x: tf.reciprocal(x), 1),
          "floormod": (lambda tf, x, y: tf.floormod(x, y), 2),
          "squared_difference": (lambda tf, x, y: tf.squared_difference(x, y), 2)}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_gradient_graph_ops_match_tensorflow(tf1, name):
    fn, n = GRAPHS[name]
    assert _gradient_op_types(core, fn, n) == _gradient_op_types(tf1, fn, n)


def test_cumprod_gradient_uses_the_forward_cumprod(tf1):
    """TF builds a second Cumprod in the gradient; core reuses the forward's output (same value): the rest of
    the gradient graph is TF's (Cumsum in the opposite direction, DivNoNan)."""
    fn = lambda tf, x: tf.cumprod(x, exclusive=True)  # noqa: E731
    assert _gradient_op_types(core, fn, 1) == _gradient_op_types(tf1, fn, 1) - {"Cumprod"} == {
        "Mul", "Cumsum", "DivNoNan"}


# ---- node names: default names, name=, and the names of converted Python operands, as TF writes them

NAMED = {
    "unary": lambda tf, x: [tf.sin(x), tf.cos(x, name="c"), tf.erf([1.0, 2.0]), tf.is_nan(x, name="nan"),
                            tf.rint(x), tf.digamma(x)],
    "binary": lambda tf, x: [tf.atan2(x, 2.0), tf.atan2(1.0, x, name="a2"), tf.truncatediv(x, 3.0),
                             tf.truncatemod(x, 3.0, name="tm"), tf.floor_div(x, 2.0), tf.floormod(x, 2.0),
                             tf.squared_difference(x, 1.0), tf.polygamma(1.0, x)],
    "composite": lambda tf, x: [tf.log_sigmoid(x), tf.log_sigmoid(x, name="ls"), tf.cumprod(x),
                                tf.cumprod(x, axis=0, name="cp"), tf.floordiv(x, 2.0, name="fd"), tf.div(x, x)],
}


def _node_names(tf, build):
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [3], name="x")
        build(tf, x)
        return [(n.name, SAME_OP.get(n.op, n.op)) for n in g.as_graph_def().node]


@pytest.mark.parametrize("name", sorted(NAMED))
def test_node_names_match_tensorflow(tf1, name):
    assert _node_names(core, NAMED[name]) == _node_names(tf1, NAMED[name])


# ---- errors on bad input, and what has no gradient

@pytest.mark.parametrize("fn", ["floor_div", "floormod", "truncatediv", "truncatemod"])
def test_integer_division_by_zero_raises_like_tensorflow(tf1, fn):
    def error(tf):
        with tf.Graph().as_default(), tf.Session() as sess:
            x = tf.placeholder(tf.int32, [3])
            out = getattr(tf, fn)(x, tf.constant([1, 0, 2]))
            with pytest.raises(Exception) as info:
                sess.run(out, {x: np.array([1, 2, 3], np.int32)})
            return info.value

    ours, theirs = error(core), error(tf1)
    assert type(ours).__name__ == type(theirs).__name__     # TF: InvalidArgument for floor, Internal for trunc
    assert isinstance(ours, core.errors.OpError)
    assert "Integer division by zero" in str(ours)


def test_float_division_by_zero_follows_ieee():
    with core.Graph().as_default(), core.Session() as sess:
        x = core.constant([1.0, -1.0, 0.0], core.float32)
        out = sess.run([core.floor_div(x, 0.0), core.truncatediv(x, 0.0), core.floormod(x, 0.0),
                        core.truncatemod(x, 0.0)])
    np.testing.assert_array_equal(out[0], [np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(out[1], [np.inf, -np.inf, np.nan])
    assert np.isnan(out[2]).all() and np.isnan(out[3]).all()


@pytest.mark.parametrize("fn", ["sin", "atanh", "erf", "lgamma", "digamma", "expm1", "rint", "is_nan", "is_inf",
                                "is_finite", "log_sigmoid"])
def test_float_only_ops_reject_integers_like_tensorflow(tf1, fn):
    for tf in (tf1, core):
        with tf.Graph().as_default():
            with pytest.raises((TypeError, ValueError)):
                getattr(tf, fn)(tf.constant([1, 2]))
    with core.Graph().as_default():
        with pytest.raises(TypeError):
            getattr(core, fn)(core.constant([1, 2]))


@pytest.mark.parametrize("fn", ["atan2", "truncatediv", "truncatemod", "floor_div", "floormod",
                                "squared_difference"])
def test_binary_ops_reject_mixed_dtypes(tf1, fn):
    for tf in (tf1, core):
        with tf.Graph().as_default():
            with pytest.raises(TypeError):
                getattr(tf, fn)(tf.constant([1.0, 2.0]), tf.constant([1, 2]))


def test_atan2_and_polygamma_reject_integers(tf1):
    for tf in (tf1, core):
        with tf.Graph().as_default():
            with pytest.raises(TypeError):
                tf.atan2(tf.constant([1, 2]), tf.constant([3, 4]))
            with pytest.raises(TypeError):
                tf.polygamma(tf.constant([1, 2]), tf.constant([3, 4]))


def test_cumprod_axis_out_of_range_raises():
    with core.Graph().as_default(), core.Session() as sess:
        x = core.placeholder(core.float32, [1, 2])
        for axis in (2, -3):
            with pytest.raises(core.errors.InvalidArgumentError):
                sess.run(core.cumprod(x, axis=axis), {x: [[1.0, 2.0]]})


@pytest.mark.parametrize("fn", ["is_nan", "is_inf", "is_finite", "rint", "floor_div", "truncatediv",
                                "truncatemod"])
def test_ops_without_gradient(tf1, fn):
    """No gradient reaches ``x``: None in core; TF says None too, except TruncateMod, which has no gradient
    registered at all (TF raises LookupError; core returns None as for NotDifferentiable ops)."""
    def grads(tf):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [3])
            out = getattr(tf, fn)(x) if fn in ("is_nan", "is_inf", "is_finite", "rint") else getattr(tf, fn)(x, 2.0)
            return tf.gradients(tf.reduce_sum(tf.cast(out, tf.float32)), x)

    assert grads(core) == [None]
    if fn == "truncatemod":
        with pytest.raises(LookupError):
            grads(tf1)
    else:
        assert grads(tf1) == [None]


def test_floormod_has_gradients_for_both_operands(tf1):
    with core.Graph().as_default(), core.Session() as sess:
        x, y = core.constant([7.3, -7.3], core.float64), core.constant([2.0, 2.0], core.float64)
        gx, gy = sess.run(core.gradients(core.reduce_sum(core.floormod(x, y)), [x, y]))
    np.testing.assert_array_equal(gx, [1.0, 1.0])
    np.testing.assert_array_equal(gy, [-3.0, 4.0])     # -floor(x / y)


def test_float32_stays_float32():
    with core.Graph().as_default(), core.Session() as sess:
        x = core.constant(np.linspace(0.1, 0.9, 4, dtype=np.float32))
        outs = [core.sin(x), core.atan2(x, x), core.erf(x), core.lgamma(x), core.digamma(x),
                core.polygamma(1.0, x), core.log_sigmoid(x), core.cumprod(x), core.floor_div(x, 0.3),
                core.truncatemod(x, 0.3), core.floormod(x, 0.3), core.reciprocal(x), core.squared_difference(x, 1.0)]
        outs += core.gradients(core.add_n([core.reduce_sum(o) for o in outs]), [x])
        for value in sess.run(outs):
            assert value.dtype == np.float32


def test_importing_core_does_not_load_scipy():
    code = "import sys, tfevents.core; assert 'scipy' not in sys.modules, 'scipy imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_exported_names():
    from tfevents.core.ops import elementwise_ops
    for name in elementwise_ops.__all__:
        assert callable(getattr(core, name)), name
    assert {"floormod", "reciprocal", "squared_difference", "cumprod", "floor_div"} <= set(elementwise_ops.__all__)
