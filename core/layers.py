"""``tf.layers`` (TF 1.x functional layers): dense, batch_normalization, dropout, flatten.

A layer's variables live in the variable scope named after the layer (``hidden1/kernel``, ignoring name
scopes), its ops in the name scope of the same name under the current one (``dnn/hidden1/MatMul``).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from . import dtypes
from .graph import GraphKeys, get_default_graph, name_scope
from .initializers import Ones, Zeros
from .ops import array_ops, math_ops, nn_ops, state_ops
from .registry import constant_value, convert_to_tensor
from .variable_scope import get_variable, variable_scope


def _layer_name(name: Optional[str], base: str) -> str:
    if name:
        return name
    graph = get_default_graph()
    counts = graph.__dict__.setdefault("_layer_name_counts", {})
    i = counts.get(base, 0)
    counts[base] = i + 1
    return base if i == 0 else "%s_%d" % (base, i)


def dense(inputs: Any, units: int, activation: Optional[Callable] = None, use_bias: bool = True,
          kernel_initializer: Any = None, bias_initializer: Any = None, kernel_regularizer: Any = None,
          bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None,
          bias_constraint: Any = None, trainable: bool = True, name: Optional[str] = None, reuse: Any = None):
    """``activation(inputs @ kernel + bias)`` with ``kernel`` [in, units] (glorot-uniform by default)."""
    inputs = convert_to_tensor(inputs)
    name = _layer_name(name, "dense")
    in_dim = inputs.shape.dims[-1] if inputs.shape.dims else None
    if in_dim is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
    with variable_scope(name, reuse=reuse, auxiliary_name_scope=False):
        kernel = get_variable("kernel", [in_dim, units], dtype=inputs.dtype, initializer=kernel_initializer,
                              regularizer=kernel_regularizer, trainable=trainable)
        bias = get_variable("bias", [units], dtype=inputs.dtype,
                            initializer=bias_initializer if bias_initializer is not None else Zeros(),
                            regularizer=bias_regularizer, trainable=trainable) if use_bias else None
    with name_scope(name):
        if inputs.shape.ndims is not None and inputs.shape.ndims > 2:
            flat = array_ops.reshape(inputs, [-1, in_dim])
            out = math_ops.matmul(flat, kernel)
            dims = [-1 if d is None else d for d in inputs.shape.dims[:-1]]
            if dims.count(-1) > 1:
                shape = array_ops.concat([array_ops.shape(inputs)[:-1], [units]], 0)
            else:
                shape = dims + [units]
            out = array_ops.reshape(out, shape)
        else:
            out = math_ops.matmul(inputs, kernel)
        if bias is not None:
            out = nn_ops.bias_add(out, bias)
        if activation is not None:
            out = activation(out)
    return out


def dropout(inputs: Any, rate: float = 0.5, noise_shape: Any = None, seed: Optional[int] = None,
            training: Any = False, name: Optional[str] = None):
    """Dropout applied only when ``training`` (a bool or a bool tensor) is true."""
    name = _layer_name(name, "dropout")
    with name_scope(name):
        inputs = convert_to_tensor(inputs)
        value = constant_value(training) if hasattr(training, "op") else training
        if value is not None and not bool(value):
            return array_ops.identity(inputs)
        dropped = nn_ops.dropout(inputs, rate=rate, noise_shape=noise_shape, seed=seed)
        if value is not None:
            return dropped
        return math_ops.where(convert_to_tensor(training, dtype=dtypes.bool), dropped, inputs)


def flatten(inputs: Any, name: Optional[str] = None):
    inputs = convert_to_tensor(inputs)
    name = _layer_name(name, "flatten")
    with name_scope(name):
        dims = inputs.shape.dims[1:]
        if dims is not None and None not in dims:
            n = 1
            for d in dims:
                n *= d
            return array_ops.reshape(inputs, [-1, n])
        return array_ops.reshape(inputs, array_ops.stack([array_ops.shape(inputs)[0], -1]))


def batch_normalization(inputs: Any, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                        center: bool = True, scale: bool = True, beta_initializer: Any = None,
                        gamma_initializer: Any = None, moving_mean_initializer: Any = None,
                        moving_variance_initializer: Any = None, beta_regularizer: Any = None,
                        gamma_regularizer: Any = None, beta_constraint: Any = None, gamma_constraint: Any = None,
                        training: Any = False, trainable: bool = True, name: Optional[str] = None,
                        reuse: Any = None, renorm: bool = False, renorm_clipping: Any = None,
                        renorm_momentum: float = 0.99, fused: Any = None, virtual_batch_size: Any = None,
                        adjustment: Any = None):
    """Batch normalization over all axes but ``axis``.

    Training: ``y = gamma * (x - mean_B) / sqrt(var_B + eps) + beta`` with the batch moments, and update ops
    ``moving -= (moving - batch_stat) * (1 - momentum)`` added to ``UPDATE_OPS``. Inference: the moving
    statistics. ``training`` may be a bool tensor (e.g. a placeholder): the statistics are selected and the
    update's decay is 0 when it is false.
    """
    inputs = convert_to_tensor(inputs)
    ndims = inputs.shape.ndims
    if ndims is None:
        raise ValueError("batch_normalization needs inputs of known rank")
    axis = axis % ndims
    channels = inputs.shape.dims[axis]
    name = _layer_name(name, "batch_normalization")
    with variable_scope(name, reuse=reuse, auxiliary_name_scope=False):
        gamma = get_variable("gamma", [channels], dtype=inputs.dtype, trainable=trainable,
                             initializer=gamma_initializer if gamma_initializer is not None else Ones(),
                             regularizer=gamma_regularizer) if scale else None
        beta = get_variable("beta", [channels], dtype=inputs.dtype, trainable=trainable,
                            initializer=beta_initializer if beta_initializer is not None else Zeros(),
                            regularizer=beta_regularizer) if center else None
        moving_mean = get_variable("moving_mean", [channels], dtype=inputs.dtype, trainable=False,
                                   initializer=moving_mean_initializer if moving_mean_initializer is not None
                                   else Zeros())
        moving_variance = get_variable("moving_variance", [channels], dtype=inputs.dtype, trainable=False,
                                       initializer=moving_variance_initializer
                                       if moving_variance_initializer is not None else Ones())
    reduction_axes = [i for i in range(ndims) if i != axis]
    broadcast = [1] * ndims
    broadcast[axis] = channels

    def shaped(t):
        return t if axis == ndims - 1 or t is None else array_ops.reshape(t, broadcast)

    static = training if not hasattr(training, "op") else constant_value(training)
    if fused is not False and ndims == 4 and axis == 3 and not renorm and virtual_batch_size is None:
        with name_scope(name):
            out, updates = _fused_batch_norm(inputs, gamma, beta, moving_mean, moving_variance, channels, static,
                                             training, momentum, epsilon)
        for update in updates:
            get_default_graph().add_to_collection(GraphKeys.UPDATE_OPS, update.op)
        return out
    with name_scope(name):
        if static is not None and not bool(static):
            mean, variance = moving_mean, moving_variance
            updates = []
        else:
            batch_mean, batch_var = nn_ops.moments(inputs, reduction_axes)
            if static is not None:
                mean, variance = batch_mean, batch_var
                decay = 1.0 - momentum
            else:
                training = convert_to_tensor(training, dtype=dtypes.bool)
                mean = math_ops.where(training, batch_mean, moving_mean._to_tensor())
                variance = math_ops.where(training, batch_var, moving_variance._to_tensor())
                decay = math_ops.where(training, 1.0 - momentum, 0.0)
            updates = [
                state_ops.assign_sub(moving_mean, (moving_mean._to_tensor() - batch_mean) * decay,
                                     name="AssignMovingAvg"),
                state_ops.assign_sub(moving_variance, (moving_variance._to_tensor() - batch_var) * decay,
                                     name="AssignMovingAvg_1"),
            ]
        out = nn_ops.batch_normalization(inputs, shaped(mean), shaped(variance), shaped(beta), shaped(gamma),
                                         epsilon)
    for update in updates:
        get_default_graph().add_to_collection(GraphKeys.UPDATE_OPS, update.op)
    return out


def _fused_batch_norm(inputs, gamma, beta, moving_mean, moving_variance, channels, static, training, momentum,
                      epsilon):
    """The NHWC path (TF uses FusedBatchNorm for 4-D inputs): the moving variance follows the Bessel-corrected
    batch variance, as in TF."""
    scale = gamma._to_tensor() if gamma is not None else array_ops.ones([channels], inputs.dtype)
    offset = beta._to_tensor() if beta is not None else array_ops.zeros([channels], inputs.dtype)

    def inference():
        return nn_ops.fused_batch_norm(inputs, scale, offset, moving_mean._to_tensor(), moving_variance._to_tensor(),
                                       epsilon=epsilon, is_training=False)[0]

    if static is not None and not bool(static):
        return inference(), []
    out, batch_mean, batch_var = nn_ops.fused_batch_norm(inputs, scale, offset, epsilon=epsilon, is_training=True)
    if static is not None:
        decay = 1.0 - momentum
    else:
        training = convert_to_tensor(training, dtype=dtypes.bool)
        out = math_ops.where(training, out, inference())
        decay = math_ops.where(training, 1.0 - momentum, 0.0)
    updates = [
        state_ops.assign_sub(moving_mean, (moving_mean._to_tensor() - batch_mean) * decay, name="AssignMovingAvg"),
        state_ops.assign_sub(moving_variance, (moving_variance._to_tensor() - batch_var) * decay,
                             name="AssignMovingAvg_1"),
    ]
    return out, updates


BatchNormalization = batch_normalization
Dense = dense
