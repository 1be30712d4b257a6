"""Elementwise math (trigonometric, hyperbolic, special functions, predicates, integer division): tf.<name>.

Names in ``__all__`` are exported as ``tf.<name>``. Each op is TF's generated op (``tf.sin`` is the ``Sin`` op,
named ``Sin`` by default); its gradient is TF's formula from ``math_grad.py`` built with the same helper ops
(``Reciprocal``, ``Square``, ``Digamma``, ``Polygamma``...), so gradients of gradients work. The special
functions use ``scipy.special``, imported when an op first runs (``import tfevents.core`` does not load scipy).
``floormod``, ``reciprocal`` and ``squared_difference`` live in ``math_ops`` (they back Python operators) and
``cumprod`` in ``reduction_ops`` next to ``cumsum``; they are re-exported here.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..framework import dtypes, errors
from ..framework.graph import Tensor, name_scope
from ..framework.registry import apply_op, convert_to_tensor, register, shape_broadcast, shape_same
from .broadcast_gradients import unbroadcast
from .operands import _binary, _pair
from .math_ops import (check_int_divisor, exp, floor_div, floormod, negative, reciprocal, sqrt,
                       square, squared_difference)
from .nn_ops import softplus
from .reduction_ops import cumprod

__all__ = ["sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh",
           "erf", "erfc", "lgamma", "digamma", "polygamma", "expm1", "log_sigmoid", "rint", "reciprocal",
           "is_nan", "is_inf", "is_finite", "floor_div", "truncatediv", "truncatemod", "floormod",
           "squared_difference", "cumprod"]

_FLOAT_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64)


def _check_float(x: Tensor, op_type: str) -> None:
    """TF's op-def type check for ops defined on floating types only (raised when the graph is built)."""
    if x.dtype not in _FLOAT_TYPES:
        raise TypeError("Value passed to parameter 'x' has DataType %s not in list of allowed values: float16, "
                        "float32, float64 (op %s)" % (x.dtype.name, op_type))


def _unary(op_type: str, doc: str) -> Callable:
    """``tf.<name>(x, name=None)`` for a floating-point unary op; a converted ``x`` is named ``<op>/x``."""
    def fn(x: Any, name: Optional[str] = None) -> Tensor:
        with name_scope(name, op_type) as scope:
            x = convert_to_tensor(x, name="x")
            _check_float(x, op_type)
            return apply_op(op_type, [x], name=scope)
    fn.__doc__ = doc
    fn.__name__ = fn.__qualname__ = "".join("_" + c.lower() if c.isupper() else c for c in op_type).lstrip("_")
    return fn


def _special(fn_name: str) -> Callable:
    """Forward calling ``scipy.special.<fn_name>`` (imported lazily), in the input's dtype."""
    def forward(x):
        from scipy import special
        return np.asarray(getattr(special, fn_name)(x), dtype=x.dtype)
    forward.__name__ = fn_name
    return forward


# ---- trigonometric and hyperbolic functions
# gradients, with y the op's output: sin' = cos, cos' = -sin, tan' = 1/cos^2, asin' = 1/sqrt(1 - x^2),
# acos' = -1/sqrt(1 - x^2), atan' = 1/(1 + x^2), sinh' = cosh, cosh' = sinh, asinh' = 1/cosh(y),
# acosh' = 1/sinh(y), atanh' = 1/(1 - x^2)

register("Sin", np.sin, lambda op, g: [g * cos(op.inputs[0])], shape_same, inplace=True)
register("Cos", np.cos, lambda op, g: [negative(g) * sin(op.inputs[0])], shape_same, inplace=True)
register("Tan", np.tan, lambda op, g: [square(reciprocal(cos(op.inputs[0]))) * g], shape_same, inplace=True)
register("Asin", np.arcsin, lambda op, g: [g * reciprocal(sqrt(1.0 - square(op.inputs[0])))], shape_same)
register("Acos", np.arccos, lambda op, g: [negative(g) * reciprocal(sqrt(1.0 - square(op.inputs[0])))],
         shape_same)
register("Atan", np.arctan, lambda op, g: [g * reciprocal(1.0 + square(op.inputs[0]))], shape_same, inplace=True)
register("Sinh", np.sinh, lambda op, g: [g * cosh(op.inputs[0])], shape_same, inplace=True)
register("Cosh", np.cosh, lambda op, g: [g * sinh(op.inputs[0])], shape_same, inplace=True)
register("Asinh", np.arcsinh, lambda op, g: [g / cosh(op.outputs[0])], shape_same)
register("Acosh", np.arccosh, lambda op, g: [g / sinh(op.outputs[0])], shape_same)
register("Atanh", np.arctanh, lambda op, g: [g * reciprocal(1.0 - square(op.inputs[0]))], shape_same)


def _atan2_grad(op, g):
    """TF: with ``d = g / (y^2 + x^2)``: ``dy = x * d``, ``dx = -y * d``, summed back to each shape."""
    y, x = op.inputs
    grad_inv = g / (square(y) + square(x))
    return [unbroadcast(x * grad_inv, y), unbroadcast(negative(y) * grad_inv, x)]


register("Atan2", np.arctan2, _atan2_grad, shape_broadcast)

sin = _unary("Sin", "Sine of ``x`` elementwise.")
cos = _unary("Cos", "Cosine of ``x`` elementwise.")
tan = _unary("Tan", "Tangent of ``x`` elementwise.")
asin = _unary("Asin", "Arcsine of ``x`` elementwise, in [-pi/2, pi/2] (nan outside [-1, 1]).")
acos = _unary("Acos", "Arccosine of ``x`` elementwise, in [0, pi] (nan outside [-1, 1]).")
atan = _unary("Atan", "Arctangent of ``x`` elementwise, in (-pi/2, pi/2).")
sinh = _unary("Sinh", "Hyperbolic sine of ``x`` elementwise.")
cosh = _unary("Cosh", "Hyperbolic cosine of ``x`` elementwise.")
asinh = _unary("Asinh", "Inverse hyperbolic sine of ``x`` elementwise.")
acosh = _unary("Acosh", "Inverse hyperbolic cosine of ``x`` elementwise (nan below 1).")
atanh = _unary("Atanh", "Inverse hyperbolic tangent of ``x`` elementwise (nan outside [-1, 1]).")


def atan2(y: Any, x: Any, name: Optional[str] = None) -> Tensor:
    """``atan(y / x)`` in the quadrant of ``(x, y)``, in [-pi, pi]; broadcasts (TF's Atan2; note ``y`` first)."""
    with name_scope(name, "Atan2") as scope:
        y, x = _pair(y, x, names=("y", "x"))
        _check_float(y, "Atan2")
        return apply_op("Atan2", [y, x], name=scope)


# ---- exponentials and special functions

_TWO_OVER_ROOT_PI = 2.0 / np.sqrt(np.pi)


def _erf_grad(op, g):
    """TF: ``g * 2/sqrt(pi) * exp(-x^2)``."""
    return [g * _TWO_OVER_ROOT_PI * exp(negative(square(op.inputs[0])))]


def _erfc_grad(op, g):
    """TF: ``g * -2/sqrt(pi) * exp(-x^2)``."""
    return [g * -_TWO_OVER_ROOT_PI * exp(negative(square(op.inputs[0])))]


def _digamma_forward(x):
    """``scipy.special.psi``, with TF's nan (not scipy's -inf) at the poles 0, -1, -2, ..."""
    from scipy import special
    out = np.asarray(special.psi(x), dtype=x.dtype)
    return np.where((x <= 0) & (x == np.floor(x)), np.asarray(np.nan, x.dtype), out)


def _polygamma_forward(a, x):
    """``psi^(a)(x)``: the a-th derivative of digamma (``a`` a non-negative integer, else nan). At the poles
    x = 0, -1, ... TF (Eigen's zeta) gives +inf for odd ``a`` and nan for even ``a``."""
    from scipy import special
    valid = (a >= 0) & (a == np.floor(a))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = special.polygamma(np.where(valid, a, 0), x)
    pole = (x <= 0) & (x == np.floor(x))
    out = np.where(pole, np.where(np.fmod(a, 2) == 1, np.inf, np.nan), out)
    return np.where(valid, out, np.nan).astype(x.dtype, copy=False)


def _polygamma_grad(op, g):
    """TF: none for ``a``; ``g * polygamma(a + 1, x)`` for ``x``."""
    a, x = op.inputs
    return [None, unbroadcast(g * polygamma(a + 1.0, x), x)]


register("Expm1", np.expm1, lambda op, g: [g * exp(op.inputs[0])], shape_same, inplace=True)
register("Erf", _special("erf"), _erf_grad, shape_same)
register("Erfc", _special("erfc"), _erfc_grad, shape_same)
register("Lgamma", _special("gammaln"), lambda op, g: [g * digamma(op.inputs[0])], shape_same)
register("Digamma", _digamma_forward, lambda op, g: [g * polygamma(1.0, op.inputs[0])], shape_same)
register("Polygamma", _polygamma_forward, _polygamma_grad, shape_broadcast)
register("Rint", np.rint, None, shape_same, inplace=True)       # TF: zero gradient, returned as None

expm1 = _unary("Expm1", "``exp(x) - 1``, accurate for small ``x``.")
erf = _unary("Erf", "Gauss error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``.")
erfc = _unary("Erfc", "Complementary error function ``1 - erf(x)``, accurate for large ``x``.")
lgamma = _unary("Lgamma", "``log(|Gamma(x)|)`` (inf at the poles 0, -1, -2, ...).")
digamma = _unary("Digamma", "``d/dx lgamma(x)`` (nan at the poles 0, -1, -2, ...).")
rint = _unary("Rint", "The integer closest to ``x``, halves to even (``rint(2.5) == 2``).")


def polygamma(a: Any, x: Any, name: Optional[str] = None) -> Tensor:
    """``psi^(a)(x)``, the ``a``-th derivative of digamma; ``a`` and ``x`` are floats and broadcast."""
    with name_scope(name, "Polygamma") as scope:
        a, x = _pair(a, x, names=("a", "x"))
        _check_float(x, "Polygamma")
        return apply_op("Polygamma", [a, x], name=scope)


def log_sigmoid(x: Any, name: Optional[str] = None) -> Tensor:
    """``log(1 / (1 + exp(-x)))``, computed stably as TF does: ``-softplus(-x)`` in a ``LogSigmoid`` scope."""
    with name_scope(name, "LogSigmoid") as scope:
        x = convert_to_tensor(x, name="x")
        _check_float(x, "Softplus")
        return apply_op("Neg", [softplus(negative(x))], name=scope)


# ---- predicates (bool outputs, no gradient)

for _type, _np in (("IsNan", np.isnan), ("IsInf", np.isinf), ("IsFinite", np.isfinite)):
    register(_type, _np, None, shape_same, dtype=dtypes.bool)

is_nan = _unary("IsNan", "True where ``x`` is NaN.")
is_inf = _unary("IsInf", "True where ``x`` is +inf or -inf.")
is_finite = _unary("IsFinite", "True where ``x`` is neither NaN nor infinite.")


# ---- truncating integer division (C semantics); floor_div / floormod are math_ops' FloorDiv / FloorMod


def _internal_error(message: str) -> Exception:
    return errors.InternalError(None, message)


def _truncate_div_forward(x, y):
    """TF's TruncateDiv: the quotient rounded toward zero (``-7 / 2 == -3``); floats ``trunc(x / y)``.
    An integer zero divisor is an InternalError in TF's truncating kernels (InvalidArgument in the floor ones)."""
    check_int_divisor(y, _internal_error)
    if x.dtype.kind in "iu":
        return (x - np.fmod(x, y)) // y       # exact: x - fmod(x, y) is a multiple of y
    with np.errstate(divide="ignore", invalid="ignore"):       # IEEE inf / nan, silently as in TF
        return np.trunc(np.true_divide(x, y))


def _truncate_mod_forward(x, y):
    """TF's TruncateMod: C's ``fmod``, the remainder with the sign of ``x`` (``-7 % 2 == -1``)."""
    check_int_divisor(y, _internal_error)
    with np.errstate(invalid="ignore"):
        return np.fmod(x, y)


register("TruncateDiv", _truncate_div_forward, None, shape_broadcast)     # TF: not differentiable
register("TruncateMod", _truncate_mod_forward, None, shape_broadcast)     # TF: no gradient registered

truncatediv = _binary("TruncateDiv")
truncatediv.__doc__ = "``x / y`` rounded toward zero for integers (C division), ``trunc(x / y)`` for floats."
truncatemod = _binary("TruncateMod")
truncatemod.__doc__ = "The remainder of ``truncatediv``: ``x - truncatediv(x, y) * y`` (sign of ``x``)."

