"""More tf.nn: selu, softsign, crelu, swish, lrn, relu_layer, xw_plus_b, moments helpers, weighted/poisson losses.

Names in ``__all__`` are exported as ``tf.nn.<name>``. ``Selu``, ``Softsign`` and ``LRN`` are kernels with their
TF gradient ops (``SeluGrad``, ``SoftsignGrad``, ``LRNGrad``); the rest are composites written with the ops TF's
python (``nn_impl.py``, ``nn_ops.py``) writes, in the same name scopes.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, constant, convert_to_tensor, register, shape_same
from . import array_ops, math_ops, reduction_ops, nn_ops

__all__ = ["selu", "softsign", "lrn", "local_response_normalization", "crelu", "swish", "relu_layer", "xw_plus_b",
           "weighted_cross_entropy_with_logits", "zero_fraction", "normalize_moments", "sufficient_statistics",
           "weighted_moments", "log_poisson_loss"]


# ---- TF's zeros_like / ones_like graphs (a Const or Fill when the shape is static, as tf1 writes them)


def _zeros_like(x: Tensor) -> Tensor:
    """TF's ``zeros_like``: ``zeros(static shape)`` (a Const, or a Fill when large), else a ``ZerosLike`` op."""
    if x.shape.is_fully_defined():
        return array_ops.zeros(x.shape.as_list(), x.dtype, name="zeros_like")
    return array_ops.zeros_like(x, name="zeros_like")


def _ones_like(x: Tensor) -> Tensor:
    """TF's ``ones_like``: ``Fill(shape, 1)`` with a Const shape when it is static, else ``Shape`` of ``x``."""
    with name_scope(None, "ones_like") as scope:
        dims = constant(np.array(x.shape.as_list(), np.int32), name="Shape") if x.shape.is_fully_defined() \
            else array_ops.shape(x)
        out = array_ops.fill(dims, constant(1, dtype=x.dtype), name=scope)
        out.set_shape(x.shape)
        return out


# ---- selu, softsign (kernels + gradient kernels)

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _selu_forward(x):
    """``scale * (x if x > 0 else alpha * (exp(x) - 1))``."""
    scale = x.dtype.type(_SELU_SCALE)
    neg = np.expm1(np.minimum(x, 0)) * x.dtype.type(_SELU_SCALE * _SELU_ALPHA)
    return np.where(x > 0, x * scale, neg)


def _selu_grad_forward(g, y):
    """SeluGrad(gradients, outputs): ``g * scale`` where ``y > 0``, else ``g * (y + scale * alpha)``."""
    scale = y.dtype.type(_SELU_SCALE)
    return np.where(y > 0, g * scale, g * (y + y.dtype.type(_SELU_SCALE * _SELU_ALPHA)))


def _selu_grad_grad(op, gg):
    """As TF's ``_SeluGradGrad``: d/dg is SeluGrad again, d/dy is ``gg * g`` where ``y < 0``."""
    g, y = op.inputs
    return [apply_op("SeluGrad", [gg, y]),
            math_ops.where(y < 0.0, gg * g, array_ops.zeros_like(y))]


register("Selu", _selu_forward, lambda op, g: [apply_op("SeluGrad", [g, op.outputs[0]])], shape_same, fresh=True)
register("SeluGrad", _selu_grad_forward, _selu_grad_grad, shape_same, fresh=True)


def _softsign_grad_grad(op, gg):
    """d/dg of ``g / (1 + |x|)^2`` is SoftsignGrad(gg, x); d/dx is ``-2 gg g sign(x) / (1 + |x|)^3`` (TF has
    no second derivative here; core gives the exact one)."""
    g, x = op.inputs
    denom = 1.0 + math_ops.abs(x)
    return [apply_op("SoftsignGrad", [gg, x]), gg * g * -2.0 * math_ops.sign(x) / (denom * denom * denom)]


register("Softsign", lambda x: x / (1 + np.abs(x)),
         lambda op, g: [apply_op("SoftsignGrad", [g, op.inputs[0]])], shape_same, fresh=True)
register("SoftsignGrad", lambda g, x: g / np.square(1 + np.abs(x)), _softsign_grad_grad, shape_same, fresh=True)


def selu(features: Any, name: Optional[str] = None) -> Tensor:
    """Scaled ELU: ``scale * x`` for ``x > 0``, else ``scale * alpha * (exp(x) - 1)`` (Klambauer et al. 2017)."""
    return apply_op("Selu", [features], name=name)


def softsign(features: Any, name: Optional[str] = None) -> Tensor:
    """``x / (|x| + 1)``."""
    return apply_op("Softsign", [features], name=name)


# ---- local response normalization


def _lrn_band(depth: int, depth_radius: int, dtype) -> np.ndarray:
    """``M[i, j] = 1`` where ``|i - j| <= depth_radius``: ``sqr @ M`` sums squares over each channel's window."""
    idx = np.arange(depth)
    return (np.abs(idx[:, None] - idx[None, :]) <= depth_radius).astype(dtype)


def _lrn_norm(x, depth_radius, bias, alpha):
    """``bias + alpha * sum(x[..., d - r : d + r + 1] ** 2)`` per channel ``d`` (attrs are float32, as in TF)."""
    t = x.dtype.type
    window = np.matmul(np.square(x), _lrn_band(x.shape[-1], int(depth_radius), x.dtype))
    return t(np.float32(bias)) + t(np.float32(alpha)) * window


def _lrn_forward(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5):
    """``x / (bias + alpha * sqr_sum) ** beta`` over a window of ``2 * depth_radius + 1`` channels."""
    return x * np.power(_lrn_norm(x, depth_radius, bias, alpha), -x.dtype.type(np.float32(beta)))


def _lrn_grad_forward(g, x, y, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5):
    """``dx_j = g_j N_j^-beta - 2 alpha beta x_j sum_{i: |i-j| <= r} g_i y_i / N_i`` with ``y = x N^-beta``."""
    t = x.dtype.type
    norm = _lrn_norm(x, depth_radius, bias, alpha)
    b = t(np.float32(beta))
    windowed = np.matmul(g * y / norm, _lrn_band(x.shape[-1], int(depth_radius), x.dtype))
    return g * np.power(norm, -b) - t(2) * t(np.float32(alpha)) * b * x * windowed


def _lrn_grad(op, g):
    attrs = {k: op.attrs[k] for k in ("depth_radius", "bias", "alpha", "beta")}
    return [apply_op("LRNGrad", [g, op.inputs[0], op.outputs[0]], attrs)]


def _lrn_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims != 4:
        raise ValueError("Shape must be rank 4 but is rank %d for '%s' (op: 'LRN') with input shapes: %s."
                         % (shape.ndims, op.name, shape))
    return shape if shape.dims is not None else TensorShape([None] * 4)


# LRNGrad has no gradient in TF either (grad=None)
register("LRN", _lrn_forward, _lrn_grad, _lrn_shape, fresh=True)
register("LRNGrad", _lrn_grad_forward, None, lambda op: op.inputs[1].shape, fresh=True)


def lrn(input: Any, depth_radius: int = 5, bias: float = 1, alpha: float = 1, beta: float = 0.5,  # noqa: A002
        name: Optional[str] = None) -> Tensor:
    """Local response normalization of a 4-D NHWC ``input`` over channels::

        sqr_sum[a, b, c, d] = sum(input[a, b, c, d - depth_radius : d + depth_radius + 1] ** 2)
        output = input / (bias + alpha * sqr_sum) ** beta

    Like TF's CPU kernel it takes float32 (and half) only."""
    input = convert_to_tensor(input)  # noqa: A001
    if input.dtype not in (dtypes.float32, dtypes.float16):
        raise TypeError("Value passed to parameter 'input' has DataType %s not in list of allowed values: "
                        "half, float32" % input.dtype.name)
    return apply_op("LRN", [input], dict(depth_radius=int(depth_radius), bias=float(bias), alpha=float(alpha),
                                         beta=float(beta)), name=name)


local_response_normalization = lrn



# ---- composite activations and layers


def crelu(features: Any, name: Optional[str] = None, axis: int = -1) -> Tensor:
    """Concatenated ReLU: ``relu(concat([x, -x], axis))`` (doubles the depth along ``axis``)."""
    with name_scope(name, "CRelu") as scope:
        features = convert_to_tensor(features, name="features")
        c = array_ops.concat([features, -features], axis, name=scope)
        return nn_ops.relu(c)


def swish(features: Any, beta: Any = 1.0) -> Tensor:
    """``x * sigmoid(beta * x)``; its gradient is TF's: ``dy * s * (1 + beta x (1 - s))`` with
    ``s = sigmoid(beta x)``. (TF wraps this in a ``custom_gradient`` IdentityN only to recompute ``s`` in
    the backward pass; the numbers are the same.)"""
    features = convert_to_tensor(features, name="features")
    beta = math_ops.cast(convert_to_tensor(beta, name="beta"), features.dtype)
    return features * math_ops.sigmoid(beta * features)


def relu_layer(x: Any, weights: Any, biases: Any, name: Optional[str] = None) -> Tensor:
    """``relu(matmul(x, weights) + biases)``."""
    with name_scope(name, "relu_layer") as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return nn_ops.relu(nn_ops.bias_add(math_ops.matmul(x, weights), biases), name=scope)


def xw_plus_b(x: Any, weights: Any, biases: Any, name: Optional[str] = None) -> Tensor:
    """``matmul(x, weights) + biases`` (a BiasAdd)."""
    with name_scope(name, "xw_plus_b") as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return nn_ops.bias_add(math_ops.matmul(x, weights), biases, name=scope)


# ---- losses


def _check_same_shape(a: Tensor, b: Tensor, what: str) -> None:
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError("%s must have the same shape, received (%s vs %s)." % (what, a.shape, b.shape))


def weighted_cross_entropy_with_logits(labels: Any = None, logits: Any = None, pos_weight: Any = None,
                                       name: Optional[str] = None, targets: Any = None) -> Tensor:
    """Sigmoid cross-entropy with positives weighted by ``pos_weight``; with ``l = 1 + (pos_weight - 1) * z``::

        (1 - z) * x + l * (log(1 + exp(-|x|)) + max(-x, 0))
    """
    if labels is not None and targets is not None:
        raise ValueError("Cannot specify both 'labels' and 'targets'")
    labels = targets if labels is None else labels
    with name_scope(name, "logistic_loss") as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        _check_same_shape(logits, labels, "`logits` and `labels`")
        log_weight = 1 + (pos_weight - 1) * labels
        return math_ops.add((1 - labels) * logits,
                            log_weight * (math_ops.log1p(math_ops.exp(-math_ops.abs(logits))) + nn_ops.relu(-logits)),
                            name=scope)


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False,
                     name: Optional[str] = None) -> Tensor:
    """``exp(log_input) - log_input * targets``, plus Stirling's ``t log t - t + 0.5 log(2 pi t)`` for
    ``targets > 1`` when ``compute_full_loss``."""
    with name_scope(name, "log_poisson_loss"):
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets")
        _check_same_shape(log_input, targets, "`log_input` and `targets`")
        result = math_ops.exp(log_input) - log_input * targets
        if compute_full_loss:
            point_five = constant(0.5, dtype=targets.dtype)
            two_pi = constant(2 * math.pi, dtype=targets.dtype)
            stirling_approx = (targets * math_ops.log(targets)) - targets + (
                point_five * math_ops.log(two_pi * targets))
            zeros = _zeros_like(targets)
            ones = _ones_like(targets)
            cond = math_ops.logical_and(targets >= zeros, targets <= ones)
            result += math_ops.where(cond, zeros, stirling_approx)
        return result


def zero_fraction(value: Any, name: Optional[str] = None) -> Tensor:
    """The fraction of zeros in ``value``, as a float32 scalar."""
    with name_scope(name, "zero_fraction"):
        value = convert_to_tensor(value, name="value")
        size = array_ops.size(value)
        with name_scope(None, "count_nonzero"):
            nonzero = math_ops.cast(math_ops.not_equal(value, array_ops.zeros([], value.dtype)), dtypes.int32)
            num_nonzero = reduction_ops.reduce_sum(nonzero, name="nonzero_count")
        with name_scope("counts_to_fraction"):
            num_zero = size - num_nonzero
            fraction = math_ops.cast(num_zero, dtypes.float32) / math_ops.cast(size, dtypes.float32)
        return array_ops.identity(fraction, "fraction")


# ---- moments from sufficient statistics, weighted moments


def _keep_dims(keepdims: Optional[bool], keep_dims: Optional[bool]) -> bool:
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    return bool(keepdims if keepdims is not None else keep_dims)


def sufficient_statistics(x: Any, axes: Sequence[int], shift: Any = None, keep_dims: Optional[bool] = None,
                          name: Optional[str] = None, keepdims: Optional[bool] = None) -> tuple:
    """``(count, sum(x - shift), sum((x - shift) ** 2), shift)`` over ``axes`` (no shift when ``shift`` is None;
    ``count`` is a Const when the reduced dims are static)."""
    axes = list(set(axes))
    keep = _keep_dims(keepdims, keep_dims)
    with name_scope(name, "sufficient_statistics"):
        x = convert_to_tensor(x, name="x")
        dims = x.shape.dims
        if dims is not None and all(dims[d] is not None for d in axes):
            counts = constant(int(np.prod([dims[d] for d in axes])), dtype=x.dtype)
        else:
            rank = array_ops.rank(x)
            positive_axes = [axis + rank if axis < 0 else axis for axis in axes]
            x_dims = array_ops.gather(math_ops.cast(array_ops.shape(x), x.dtype), positive_axes)
            counts = reduction_ops.reduce_prod(x_dims, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, name="shift")
            m_ss = math_ops.subtract(x, shift)
            v_ss = math_ops.squared_difference(x, shift)
        else:
            m_ss = x
            v_ss = math_ops.square(x)
        m_ss = reduction_ops.reduce_sum(m_ss, axes, keepdims=keep, name="mean_ss")
        v_ss = reduction_ops.reduce_sum(v_ss, axes, keepdims=keep, name="var_ss")
    return counts, m_ss, v_ss, shift


def normalize_moments(counts: Any, mean_ss: Any, variance_ss: Any, shift: Any,
                      name: Optional[str] = None) -> tuple:
    """Mean and variance from sufficient statistics: ``mean = mean_ss / counts + shift``,
    ``variance = variance_ss / counts - (mean_ss / counts) ** 2``."""
    with name_scope(name, "normalize"):
        divisor = math_ops.reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="shifted_mean")
            mean = math_ops.add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = math_ops.subtract(math_ops.multiply(variance_ss, divisor), math_ops.square(shifted_mean),
                                     name="variance")
    return mean, variance


def weighted_moments(x: Any, axes: Sequence[int], frequency_weights: Any, name: Optional[str] = None,
                     keep_dims: Optional[bool] = None, keepdims: Optional[bool] = None) -> tuple:
    """Frequency-weighted mean and variance over ``axes`` (0 where the weights sum to 0)::

        mean = sum(w * x) / sum(w),   variance = sum(w * (x - mean) ** 2) / sum(w)
    """
    keep = _keep_dims(keepdims, keep_dims)
    with name_scope(name, "weighted_moments"):
        x = convert_to_tensor(x, name="x")
        frequency_weights = convert_to_tensor(frequency_weights, name="frequency_weights")
        frequency_weights = math_ops.cast(frequency_weights, x.dtype)
        weighted_input_sum = reduction_ops.reduce_sum(frequency_weights * x, axes, name="weighted_input_sum",
                                                 keepdims=True)
        broadcasted_weights = frequency_weights + _zeros_like(x)
        sum_of_weights = reduction_ops.reduce_sum(broadcasted_weights, axes, name="sum_of_weights", keepdims=True)
        weighted_mean = math_ops.div_no_nan(weighted_input_sum, sum_of_weights)
        weighted_distsq = reduction_ops.reduce_sum(frequency_weights * math_ops.squared_difference(x, weighted_mean),
                                              axes, name="weighted_distsq", keepdims=True)
        weighted_variance = math_ops.div_no_nan(weighted_distsq, sum_of_weights)
        if not keep:
            weighted_mean = array_ops.squeeze(weighted_mean, axis=axes)
            weighted_variance = array_ops.squeeze(weighted_variance, axis=axes)
        return weighted_mean, weighted_variance
