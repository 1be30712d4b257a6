"""``tf.layers.BatchNormalization`` and ``tf.layers.batch_normalization``."""
from __future__ import annotations

from typing import Any, Optional

from ..control_flow import smart_cond, smart_constant_value
from ..framework import dtypes
from ..initializers import Ones, Zeros
from ..framework.graph import name_scope
from ..ops import array_ops, math_ops, nn_ops, state_ops
from ..framework.registry import constant, convert_to_tensor
from .base import Layer

__all__ = ["BatchNormalization", "batch_normalization"]


# TF's fused kernel's data format for (input rank, channel axis); other inputs are normalized op by op
_FUSED_DATA_FORMATS = {(4, 1): "NCHW", (4, 3): "NHWC", (5, 1): "NCDHW", (5, 4): "NDHWC"}


class BatchNormalization(Layer):
    """Batch normalization over all axes but ``axis``, with tf-keras's graph (the legacy ``tf.layers`` layer).

    Training: ``y = gamma * (x - mean_B) / sqrt(var_B + eps) + beta`` with the batch moments, and update ops
    ``moving -= (moving - batch_stat) * (1 - momentum)`` (in ``layer.updates`` and ``UPDATE_OPS``). Inference:
    the moving statistics. ``training`` is a bool or a bool tensor, selected as Keras's ``smart_cond`` does: when
    its value is known while building only that side is built, else a ``cond`` selects it when run.

    Op by op (rank 2, or another axis): the moments, a cond each selecting the mean and the variance, and a cond
    each around the two updates (their Merges are the update ops). Fused (``fused=None`` or True, 4-D/5-D float16/
    float32 inputs with the channels first or last): one cond over a training and an inference
    ``FusedBatchNormV3``, whose moving variance follows the Bessel-corrected batch variance, and a cond selecting
    the updates' momentum (1, no change, when ``training`` is false).
    """

    def __init__(self, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, beta_initializer: Any = None, gamma_initializer: Any = None,
                 moving_mean_initializer: Any = None, moving_variance_initializer: Any = None,
                 beta_regularizer: Any = None, gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, renorm: bool = False, renorm_clipping: Any = None,
                 renorm_momentum: float = 0.99, fused: Any = None, trainable: bool = True,
                 virtual_batch_size: Any = None, adjustment: Any = None, name: Optional[str] = None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError("batch renormalization, virtual batches and adjustment are not supported")
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise NotImplementedError("batch normalization over several axes is not supported")
            axis = axis[0]
        self.axis, self.momentum, self.epsilon = int(axis), momentum, epsilon
        self.center, self.scale, self.fused = center, scale, fused
        self.beta_initializer = beta_initializer if beta_initializer is not None else Zeros()
        self.gamma_initializer = gamma_initializer if gamma_initializer is not None else Ones()
        self.moving_mean_initializer = moving_mean_initializer if moving_mean_initializer is not None else Zeros()
        self.moving_variance_initializer = (moving_variance_initializer if moving_variance_initializer is not None
                                            else Ones())
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None

    def build(self, input_shape) -> None:
        ndims = input_shape.ndims
        if ndims is None:
            raise ValueError("Input has undefined rank.")
        if not -ndims <= self.axis < ndims:
            raise ValueError("Invalid axis: %d" % self.axis)
        self.axis %= ndims
        channels = input_shape.dims[self.axis]
        if channels is None:
            raise ValueError("Input has undefined `axis` dimension. Received input with shape %s. Axis value: %d"
                             % (input_shape, self.axis))
        # tf-keras's V1 rule: fused unless fused=False, where the kernel can take the input (else op by op)
        self._data_format = _FUSED_DATA_FORMATS.get((ndims, self.axis))
        fusable = self._data_format is not None and self._dtype in (dtypes.float16, dtypes.float32)
        self.fused = self.fused is not False and fusable
        param_dtype = dtypes.float32 if self._dtype in (dtypes.float16,) else self._dtype
        if self.scale:
            self.gamma = self.add_weight("gamma", [channels], dtype=param_dtype, initializer=self.gamma_initializer,
                                         regularizer=self.gamma_regularizer, constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight("beta", [channels], dtype=param_dtype, initializer=self.beta_initializer,
                                        regularizer=self.beta_regularizer, constraint=self.beta_constraint)
        self.moving_mean = self.add_weight("moving_mean", [channels], dtype=param_dtype, trainable=False,
                                           initializer=self.moving_mean_initializer)
        self.moving_variance = self.add_weight("moving_variance", [channels], dtype=param_dtype, trainable=False,
                                               initializer=self.moving_variance_initializer)

    def _assign_moving_average(self, variable, value, momentum):
        """Keras's ``AssignMovingAvg``: ``moving -= (moving - value) * (1 - momentum)``; ``momentum`` a number
        or a tensor."""
        with name_scope("AssignMovingAvg") as scope:
            decay = convert_to_tensor(1.0 - momentum, name="decay")
            if decay.dtype != variable.dtype.base_dtype:
                decay = math_ops.cast(decay, variable.dtype.base_dtype)
            delta = (variable._to_tensor() - math_ops.cast(value, variable.dtype.base_dtype)) * decay
            return state_ops.assign_sub(variable, delta, name=scope)

    def call(self, inputs, training: Any = False):
        if training is None:    # Keras's learning phase, false unless set (TF selects by its placeholder)
            training = False
        training_value = smart_constant_value(training)
        if self.fused:
            return self._fused_call(inputs, training, training_value)
        ndims = inputs.shape.ndims
        shape = [1] * ndims
        shape[self.axis] = inputs.shape.dims[self.axis]

        def shaped(t):
            return t if self.axis == ndims - 1 or t is None else array_ops.reshape(t, shape)

        scale, offset = shaped(self.gamma), shaped(self.beta)       # Keras reshapes these first
        if training_value is False:
            mean, variance = self.moving_mean, self.moving_variance
        else:
            batch_mean, batch_variance = nn_ops.moments(inputs, [i for i in range(ndims) if i != self.axis])
            mean = smart_cond(training, lambda: batch_mean, lambda: convert_to_tensor(self.moving_mean))
            variance = smart_cond(training, lambda: batch_variance,
                                  lambda: convert_to_tensor(self.moving_variance))
            for variable, value in ((self.moving_mean, mean), (self.moving_variance, variance)):
                # the update, or (a training tensor) a cond whose false branch leaves the variable as it is
                self.add_update(smart_cond(
                    training, lambda variable=variable, value=value: self._assign_moving_average(
                        variable, value, self.momentum), lambda variable=variable: variable))
        return nn_ops.batch_normalization(inputs, shaped(mean), shaped(variance), offset, scale, self.epsilon)

    def _fused_call(self, inputs, training, training_value):
        """Keras's ``_fused_batch_norm``: ``FusedBatchNormV3`` in training or inference mode (a cond over both
        for a training tensor); the updates toward its batch moments at ``momentum``, selected by a second cond
        (1, no change, when false)."""
        channels = [inputs.shape.dims[self.axis]]
        param_dtype = self.moving_mean.dtype.base_dtype
        beta = self.beta if self.center else constant(0.0, dtype=param_dtype, shape=channels)
        gamma = self.gamma if self.scale else constant(1.0, dtype=param_dtype, shape=channels)

        def fused_batch_norm(is_training):
            return lambda: nn_ops.fused_batch_norm(inputs, gamma, beta, mean=self.moving_mean,
                                                   variance=self.moving_variance, epsilon=self.epsilon,
                                                   is_training=is_training, data_format=self._data_format)

        output, mean, variance = smart_cond(training, fused_batch_norm(True), fused_batch_norm(False))
        if training_value is not False:
            if training_value is None:
                momentum = smart_cond(training, lambda: self.momentum, lambda: 1.0)
            else:
                momentum = convert_to_tensor(self.momentum)
            for variable, value in ((self.moving_mean, mean), (self.moving_variance, variance)):
                self.add_update(self._assign_moving_average(variable, value, momentum))
        return output


def batch_normalization(inputs: Any, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                        center: bool = True, scale: bool = True, beta_initializer: Any = None,
                        gamma_initializer: Any = None, moving_mean_initializer: Any = None,
                        moving_variance_initializer: Any = None, beta_regularizer: Any = None,
                        gamma_regularizer: Any = None, beta_constraint: Any = None, gamma_constraint: Any = None,
                        training: Any = False, trainable: bool = True, name: Optional[str] = None,
                        reuse: Any = None, renorm: bool = False, renorm_clipping: Any = None,
                        renorm_momentum: float = 0.99, fused: Any = None, virtual_batch_size: Any = None,
                        adjustment: Any = None):
    """Functional ``BatchNormalization``; remember to run ``tf.get_collection(tf.GraphKeys.UPDATE_OPS)``."""
    layer = BatchNormalization(axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                               beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                               moving_mean_initializer=moving_mean_initializer,
                               moving_variance_initializer=moving_variance_initializer,
                               beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
                               beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, renorm=renorm,
                               renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum, fused=fused,
                               trainable=trainable, virtual_batch_size=virtual_batch_size, adjustment=adjustment,
                               name=name, _scope=name, _reuse=reuse)
    return layer(inputs, training=training)
