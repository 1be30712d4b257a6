"""Arithmetic and matmul: forward (numpy) + gradient + TF op name (casts, comparisons, logic and select:
``compare_ops``; the operand conversion and op wrappers: ``operands``).

Each ``register`` call is one op; its gradient (built from graph ops, so it is itself differentiable) sits
next to it. Binary ops broadcast like numpy; their gradients sum back to each input's shape (``unbroadcast``).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..framework import dtypes
from ..runtime.kernels import MATMULS as _MATMULS, load_kernels
from ..framework.graph import Tensor, control_dependencies, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import (IndexedSlices, apply_op, constant, convert_to_tensor, register, shape_broadcast,
                                  shape_same)
from .broadcast_gradients import (zeros_like_op, ones_like_same_dtype, reduce_gradient_args, same_static_shapes,
                                  unbroadcast, zeros_like_same_dtype)
from .compare_ops import (argmax, argmin, cast, equal, greater, greater_equal, less, less_equal,  # noqa: F401
                          logical_and, logical_not, logical_or, logical_xor, not_equal, to_float, to_int32, to_int64,
                          where, where_v2)   # (TF's math_ops names of the comparison ops)
from .operands import _binary, _pair, _unary


# ---- TF's gradients of broadcasting binary ops (math_grad.py): each input's gradient summed back to its shape
# (broadcast_gradients.py)

def _add_grad(op, grad):
    x, y = op.inputs
    if same_static_shapes(x, y, grad):
        return [grad, grad]
    return reduce_gradient_args(x, y, grad, grad)


def _sub_grad(op, grad):
    x, y = op.inputs
    if same_static_shapes(x, y, grad):
        return [grad, negative(grad)]
    return reduce_gradient_args(x, y, grad, negative(grad))


def _mul_grad(op, grad):
    x, y = op.inputs
    if same_static_shapes(x, y, grad) and grad.dtype in (dtypes.int32, dtypes.float32):
        return [apply_op("Mul", [grad, y]), apply_op("Mul", [grad, x])]
    return reduce_gradient_args(x, y, apply_op("Mul", [grad, y]), apply_op("Mul", [x, grad]))


def _realdiv_grad(op, grad):
    x, y = op.inputs
    gx = realdiv(grad, y)
    gy = grad * realdiv(realdiv(negative(x), y), y)
    return reduce_gradient_args(x, y, gx, gy)


def _maximum_minimum_grad(selector):
    """TF's ``_MaximumMinimumGrad``: ``grad`` where ``selector(x, y)`` holds to x, elsewhere to y."""
    def grad_fn(op, grad):
        x, y = op.inputs
        zeros = zeros_like_same_dtype(grad)
        mask = selector(x, y)
        return reduce_gradient_args(x, y, where_v2(mask, grad, zeros), where_v2(mask, zeros, grad))
    return grad_fn


# ---- elementwise binary ops
register("Add", np.add, _add_grad, shape_broadcast, inplace=True)
register("AddV2", np.add, _add_grad, shape_broadcast, inplace=True)
register("Sub", np.subtract, _sub_grad, shape_broadcast, inplace=True)
register("Mul", np.multiply, _mul_grad, shape_broadcast, inplace=True)
register("RealDiv", np.true_divide, _realdiv_grad, shape_broadcast, inplace=True)


# ---- integer division: TF floors (FloorDiv, FloorMod) or truncates (TruncateDiv, TruncateMod); an integer
# divisor of zero is an error (InvalidArgumentError from the Session), floats follow IEEE (inf, nan)


def check_int_divisor(y: np.ndarray, error: Callable[[str], Exception] = ZeroDivisionError,
                      x: Any = None) -> None:
    """Raise ``error(message)`` for an integer divisor with a zero entry, as TF's integer division kernels do
    (the Session reports an exception that is not an OpError as InvalidArgumentError); not when the quotient
    (``x`` broadcast with ``y``) is empty: no element is divided (``range(0) % 0`` of a scalar's reduced
    shape)."""
    if y.dtype.kind in "iu" and not np.all(y):
        if x is not None and np.broadcast(x, y).size == 0:
            return
        raise error("Integer division by zero")


def _floor_div_forward(x, y):
    """TF's FloorDiv: ``floor(x / y)``; for floats that is the rounded quotient floored, not Python's ``//``
    (``1.0 // 0.1 == 9`` in numpy, ``floor(1.0 / 0.1) == 10`` in TF)."""
    check_int_divisor(y, x=x)
    if x.dtype.kind in "iu":
        return np.floor_divide(x, y)
    with np.errstate(divide="ignore", invalid="ignore"):       # IEEE inf / nan, silently as in TF
        return np.floor(np.true_divide(x, y))


def _floor_mod_forward(x, y):
    """TF's FloorMod: ``x - floor(x / y) * y`` with the sign of ``y``; floats as ``fmod`` shifted by ``y``."""
    check_int_divisor(y, x=x)
    if x.dtype.kind in "iu":
        return np.mod(x, y)
    with np.errstate(invalid="ignore"):
        r = np.fmod(x, y)
    return np.where((r != 0) & ((y < 0) != (r < 0)), r + y, r)


def _floor_mod_grad(op, g):
    """TF: ``(g, -g * floor_div(x, y))``, each summed back to its input's shape."""
    x, y = op.inputs
    return [unbroadcast(g, x), unbroadcast(g * negative(floor_div(x, y)), y)]


register("FloorDiv", _floor_div_forward, None, shape_broadcast)      # TF: not differentiable (None, None)
register("FloorMod", _floor_mod_forward, _floor_mod_grad, shape_broadcast)
register("Maximum", np.maximum, _maximum_minimum_grad(lambda x, y: greater_equal(x, y)), shape_broadcast,
         inplace=True)
register("Minimum", np.minimum, _maximum_minimum_grad(lambda x, y: less_equal(x, y)), shape_broadcast,
         inplace=True)


def _squared_difference_grad(op, g):
    """TF: ``x_grad = (2 * g) * (x - y)`` (after ``g``) and ``-x_grad`` for y, summed back to each input's
    shape."""
    x, y = op.inputs
    with control_dependencies([g]):
        x_grad = scalar_mul(2.0, g) * (x - y)
    if same_static_shapes(x, y, g):
        return [x_grad, negative(x_grad)]
    return reduce_gradient_args(x, y, x_grad, negative(x_grad))


register("SquaredDifference", lambda x, y: np.square(x - y), _squared_difference_grad, shape_broadcast, fresh=True)


def _pow_grad(op, grad):
    """TF's ``_PowGrad``: ``gx = grad * y * x^(y-1)``; ``gy = grad * z * log(x)`` where ``x > 0``, else 0 (the
    log taken of ``where(x > 0, x, 1)``), each summed back to its input's shape."""
    x, y = op.inputs
    gx = grad * y * pow(x, y - 1)
    mask = x > 0
    safe_x = where(mask, x, ones_like_same_dtype(x))
    log_x = where(mask, log(safe_x), zeros_like_same_dtype(x))
    gy = grad * op.outputs[0] * log_x
    return reduce_gradient_args(x, y, gx, gy)


register("Pow", np.power, _pow_grad, shape_broadcast, fresh=True)

def add(x, y, name=None):
    """``x + y``: TF 2.x's ``AddV2`` (``Add`` for strings), in an ``Add`` name scope."""
    with name_scope(name, "Add") as scope:
        x, y = _pair(x, y)
        return apply_op("Add" if x.dtype is dtypes.string else "AddV2", [x, y], name=scope)


subtract = _binary("Sub")
multiply = _binary("Mul")
realdiv = _binary("RealDiv")
floor_div = _binary("FloorDiv")
floormod = mod = _binary("FloorMod")


def scalar_mul(scalar, x, name=None):
    """TF's ``scalar_mul``: ``Mul(scalar, x)``, the scalar converted to x's dtype as ``scalar``."""
    if isinstance(x, IndexedSlices):
        scalar = convert_to_tensor(scalar, dtype=x.dtype, name="scalar")
        return IndexedSlices(apply_op("Mul", [scalar, x.values], name=name), x.indices, x.dense_shape)
    x = convert_to_tensor(x)
    scalar = convert_to_tensor(scalar, dtype=x.dtype, name="scalar")
    if scalar.shape.ndims != 0:
        raise ValueError("The input scalar must be a 0-D value: shape %s" % scalar.shape)
    return apply_op("Mul", [scalar, x], name=name)


def floordiv(x, y, name=None):
    """TF1 ``tf.floordiv``: ``floor(x / y)`` (the ``FloorDiv`` op in a ``floordiv`` name scope)."""
    with name_scope(name, "floordiv") as scope:
        x, y = _pair(x, y)
        return apply_op("FloorDiv", [x, y], name=scope)


maximum = _binary("Maximum")
minimum = _binary("Minimum")
squared_difference = _binary("SquaredDifference")
pow = _binary("Pow")  # noqa: A001 - TF's public name


def divide(x, y, name=None):
    """``x / y``: RealDiv for floats; integers are cast first, 8-bit ones to float32, wider ones to float64
    (TF1 ``truediv``)."""
    with name_scope(name, "truediv") as scope:
        x, y = _pair(x, y)
        if x.dtype.is_integer:
            to = dtypes.float32 if x.dtype.size <= 2 else dtypes.float64
            x, y = cast(x, to), cast(y, to)
        return apply_op("RealDiv", [x, y], name=scope)


truediv = divide


def div(x, y, name=None):
    """TF1 ``tf.div``, Python 2 division: ``RealDiv`` for floats, ``FloorDiv`` (floor(x / y)) for integers."""
    with name_scope(name, "div") as scope:
        x, y = _pair(x, y)
        return apply_op("RealDiv" if x.dtype.is_floating else "FloorDiv", [x, y], name=scope)


def _div_no_nan_forward(x, y):
    return np.divide(x, y, out=np.zeros(np.broadcast_shapes(np.shape(x), np.shape(y)), np.result_type(x, y)),
                     where=np.asarray(y) != 0)


def _div_no_nan_grad(op, grad):
    """TF's ``_DivNoNanGrad``."""
    x, y = op.inputs
    gx = div_no_nan(grad, y)
    gy = grad * div_no_nan(div_no_nan(negative(x), y), y)
    return reduce_gradient_args(x, y, gx, gy)


register("DivNoNan", _div_no_nan_forward, _div_no_nan_grad, shape_broadcast)


def div_no_nan(x, y, name=None):
    """``x / y``, 0 where ``y`` is 0; TF's ``math_ops.div_no_nan``: the op in its ``div_no_nan`` scope."""
    with name_scope(name, "div_no_nan") as scope:
        x, y = _pair(x, y)
        return apply_op("DivNoNan", [x, y], name=scope)


# ---- elementwise unary ops
register("Neg", np.negative, lambda op, g: [-g], shape_same, inplace=True)
def _square_grad(op, grad):
    """TF's ``_SquareGrad``: ``grad * (x * 2)``, the ``2 * x`` after ``grad`` (a control edge)."""
    with control_dependencies([grad]):
        two = constant(2.0, dtype=op.inputs[0].dtype)
        return [multiply(grad, multiply(op.inputs[0], two))]


def _sqrt_grad_forward(y, dy):
    """TF's kernel: ``0.5 * dy / y``, 0 where ``dy`` is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.true_divide(np.multiply(np.asarray(0.5, y.dtype), dy), y)
    return np.where(dy == 0, np.zeros_like(out), out)


def _sqrt_grad_grad(op, grad):
    """TF's ``_SqrtGradGrad``: ``(-(grad / a) * y, 0.5 * (grad / a))`` after ``grad``."""
    a, y = op.inputs[0], op.outputs[0]
    with control_dependencies([grad]):
        ga = grad / a
        return [-ga * y, 0.5 * ga]


register("Square", np.square, _square_grad, shape_same, inplace=True)
register("Sqrt", np.sqrt, lambda op, g: [apply_op("SqrtGrad", [op.outputs[0], g])], shape_same, inplace=True)
register("SqrtGrad", _sqrt_grad_forward, _sqrt_grad_grad, shape_same, fresh=True)
register("Rsqrt", lambda x: 1.0 / np.sqrt(x), lambda op, g: [apply_op("RsqrtGrad", [op.outputs[0], g])],
         shape_same)


def _rsqrt_grad_forward(y, dy):
    """TF's kernel: ``-0.5 * dy * y * y * y``, 0 where ``dy`` is 0."""
    out = np.multiply(np.multiply(np.multiply(np.multiply(np.asarray(-0.5, y.dtype), dy), y), y), y)
    return np.where(dy == 0, np.zeros_like(out), out)


def _rsqrt_grad_grad(op, grad):
    """TF's ``_RsqrtGradGrad`` (``f(a, b) = -0.5 * b * a**3``): ``-1.5 * grad * b * a**2`` and
    ``RsqrtGrad(a, grad)``, after ``grad``."""
    a, b = op.inputs
    with control_dependencies([grad]):
        return [-1.5 * grad * b * square(a), apply_op("RsqrtGrad", [a, grad])]


register("RsqrtGrad", _rsqrt_grad_forward, _rsqrt_grad_grad, shape_same, fresh=True)
def _after(grad, build):
    """``build()`` inside ``control_dependencies([grad])``, as TF's unary gradients (ops there that do not
    read ``grad`` run after it)."""
    with control_dependencies([grad]):
        return [build()]


register("Exp", np.exp, lambda op, g: _after(g, lambda: g * op.outputs[0]), shape_same, inplace=True)
register("Log", np.log, lambda op, g: _after(g, lambda: g * reciprocal(op.inputs[0])), shape_same, inplace=True)
register("Log1p", np.log1p, lambda op, g: [g / (1.0 + op.inputs[0])], shape_same)
register("Abs", np.abs, lambda op, g: [g * sign(op.inputs[0])], shape_same, inplace=True)
register("Sign", np.sign, lambda op, g: [zeros_like_op(op.inputs[0])], shape_same)
register("Reciprocal", np.reciprocal, lambda op, g: [apply_op("ReciprocalGrad", [op.outputs[0], g])], shape_same,
         inplace=True)
# ReciprocalGrad(y, dy) = -dy * y^2; its own gradient (TF's _ReciprocalGradGrad) makes second derivatives work
register("ReciprocalGrad", lambda y, dy: -dy * np.square(y),
         lambda op, gg: [gg * -2.0 * op.inputs[1] * op.inputs[0],
                         apply_op("ReciprocalGrad", [op.inputs[0], gg])], shape_same)
register("Floor", np.floor, lambda op, g: [None], shape_same)
register("Ceil", np.ceil, lambda op, g: [None], shape_same)
register("Round", np.round, lambda op, g: [None], shape_same)
_kernels = load_kernels()


def _sigmoid(x):
    """``0.5 * (tanh(0.5 x) + 1)`` in one buffer (the same numbers as the expression)."""
    out = np.multiply(x, 0.5)
    if type(out) is not np.ndarray:
        return 0.5 * (np.tanh(out) + 1.0)
    np.tanh(out, out=out)
    out += 1.0
    out *= 0.5
    return out


def _fused_grad(kernel_name: str, numpy_forward):
    """``numpy_forward(y, g)`` as one C pass when the optional kernels are built (same numbers)."""
    def forward(y, g):
        kernel = getattr(_kernels, kernel_name, None) if _kernels is not None else None
        if kernel is not None and type(g) is np.ndarray and type(y) is np.ndarray and g.shape == y.shape:
            out = np.empty_like(g)
            if kernel(y, g, out):
                return out
        return numpy_forward(y, g)
    return forward


register("Sigmoid", _sigmoid, lambda op, g: _after(g, lambda: apply_op("SigmoidGrad", [op.outputs[0], g])),
         shape_same, fresh=True)
register("SigmoidGrad", _fused_grad("sigmoid_grad", lambda y, g: g * y * (1.0 - y)),
         lambda op, gg: [gg * op.inputs[1] * (1.0 - 2.0 * op.inputs[0]),
                         apply_op("SigmoidGrad", [op.inputs[0], gg])], shape_same, fresh=True)
register("Tanh", np.tanh, lambda op, g: _after(g, lambda: apply_op("TanhGrad", [op.outputs[0], g])), shape_same,
         inplace=True)
register("TanhGrad", _fused_grad("tanh_grad", lambda y, g: g * (1.0 - y * y)),
         lambda op, gg: [gg * op.inputs[1] * -2.0 * op.inputs[0],
                         apply_op("TanhGrad", [op.inputs[0], gg])], shape_same, fresh=True)

negative = neg = _unary("Neg")
square = _unary("Square")
sqrt = _unary("Sqrt")
rsqrt = _unary("Rsqrt")
exp = _unary("Exp")
log = _unary("Log")
log1p = _unary("Log1p")
abs = _unary("Abs")  # noqa: A001
sign = _unary("Sign")
reciprocal = _unary("Reciprocal")
floor = _unary("Floor")
ceil = _unary("Ceil")
round = _unary("Round")  # noqa: A001
sigmoid = _unary("Sigmoid")
tanh = _unary("Tanh")


def add_n(inputs, name=None):
    """Sum of a list of tensors of one shape (IndexedSlices are densified)."""
    inputs = [convert_to_tensor(x) for x in inputs]
    if len(inputs) == 1:          # TF: the input itself, or an Identity when a name is given
        return apply_op("Identity", [inputs[0]], name=name) if name else inputs[0]
    return apply_op("AddN", inputs, dict(N=len(inputs)), name=name)


def _add_n_forward(*xs):
    out = xs[0] + xs[1] if len(xs) > 1 else xs[0].copy()
    for x in xs[2:]:
        out += x
    return out


register("AddN", _add_n_forward, lambda op, g: [g] * len(op.inputs),
         lambda op: TensorShape(_merge_shapes([t.shape for t in op.inputs])))


def _merge_shapes(shapes):
    out = shapes[0]
    for s in shapes[1:]:
        out = out.merge_with(s)
    return out.dims




# ---- matmul


def _matmul_bind(op, session):
    """``a @ b`` with the transposes chosen once per plan (BLAS reads transposed views without copies)."""
    return _MATMULS[bool(op.attrs["transpose_a"]), bool(op.attrs["transpose_b"])]


def _matmul_shape(op):
    a, b = (t.shape for t in op.inputs)
    if a.dims is None or b.dims is None:
        return TensorShape([None, None])
    m = a.dims[1] if op.attrs["transpose_a"] else a.dims[0]
    k1 = a.dims[0] if op.attrs["transpose_a"] else a.dims[1]
    k2 = b.dims[1] if op.attrs["transpose_b"] else b.dims[0]
    n = b.dims[0] if op.attrs["transpose_b"] else b.dims[1]
    if k1 is not None and k2 is not None and k1 != k2:
        raise ValueError("Dimensions must be equal, but are %d and %d for '%s' (op: 'MatMul') with input "
                         "shapes: %s, %s." % (k1, k2, op.name, a, b))
    return TensorShape([m, n])


def _mat_mul(a, b, transpose_a=False, transpose_b=False, grad_a=False, grad_b=False):
    """TF's ``gen_math_ops.mat_mul`` (named ``MatMul``), as the gradient builds it."""
    return apply_op("MatMul", [a, b], dict(transpose_a=transpose_a, transpose_b=transpose_b, grad_a=grad_a,
                                           grad_b=grad_b))


def _matmul_grad(op, g):
    """TF's ``_MatMulGrad``: two MatMuls marked ``grad_a`` and ``grad_b``."""
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        return [_mat_mul(g, b, transpose_b=True, grad_a=True), _mat_mul(a, g, transpose_a=True, grad_b=True)]
    if not ta and tb:
        return [_mat_mul(g, b, grad_a=True), _mat_mul(g, a, transpose_a=True, grad_b=True)]
    if ta and not tb:
        return [_mat_mul(b, g, transpose_b=True, grad_a=True), _mat_mul(a, g, grad_b=True)]
    return [_mat_mul(b, g, transpose_a=True, transpose_b=True, grad_a=True),
            _mat_mul(g, a, transpose_a=True, transpose_b=True, grad_b=True)]


register("MatMul", bind=_matmul_bind, grad=_matmul_grad, shape=_matmul_shape, fresh=True)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, name=None):
    """``a @ b`` for 2-D tensors, optionally transposing either (TF's MatMul)."""
    with name_scope(name, "MatMul") as scope:
        a, b = _pair(a, b)
        return apply_op("MatMul", [a, b], dict(transpose_a=bool(transpose_a or adjoint_a),
                                               transpose_b=bool(transpose_b or adjoint_b), grad_a=False,
                                               grad_b=False), name=scope)


# ---- Python operators on Tensor (TF's _OverrideBinaryOperatorHelper)


def _op(fn, name, reverse=False):
    """A Python operator; TF1 names these ops in lower case (``add``, ``sub``, ``mul``, ``truediv``...)."""
    if reverse:
        return lambda self, other: fn(other, self, name=name)
    return lambda self, other: fn(self, other, name=name)


for _dunder, _fn, _name in (("add", add, "add"), ("sub", subtract, "sub"), ("mul", multiply, "mul"),
                            ("truediv", divide, "truediv"), ("floordiv", floordiv, "floordiv"),
                            ("mod", floormod, "mod"), ("pow", pow, "pow"), ("matmul", matmul, "MatMul"),
                            ("and", logical_and, "LogicalAnd"), ("or", logical_or, "LogicalOr")):
    setattr(Tensor, "__%s__" % _dunder, _op(_fn, _name))
    setattr(Tensor, "__r%s__" % _dunder, _op(_fn, _name, reverse=True))
Tensor.__neg__ = lambda self: negative(self)
Tensor.__abs__ = lambda self: abs(self)
Tensor.__lt__ = lambda self, other: less(self, other)
Tensor.__le__ = lambda self, other: less_equal(self, other)
Tensor.__gt__ = lambda self, other: greater(self, other)
Tensor.__ge__ = lambda self, other: greater_equal(self, other)
Tensor.__invert__ = lambda self: logical_not(self)
Tensor.__hash__ = object.__hash__
Tensor.__eq__ = object.__eq__

