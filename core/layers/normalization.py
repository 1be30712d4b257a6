"""``tf.layers.BatchNormalization`` and ``tf.layers.batch_normalization``."""
from __future__ import annotations

from typing import Any, Optional

from ..framework import dtypes
from ..initializers import Ones, Zeros
from ..framework.graph import name_scope
from ..ops import array_ops, math_ops, nn_ops, state_ops
from ..framework.registry import convert_to_tensor
from .base import Layer
from .core_layers import _static_bool

__all__ = ["BatchNormalization", "batch_normalization"]


class BatchNormalization(Layer):
    """Batch normalization over all axes but ``axis``.

    Training: ``y = gamma * (x - mean_B) / sqrt(var_B + eps) + beta`` with the batch moments, and update ops
    ``moving -= (moving - batch_stat) * (1 - momentum)`` (in ``layer.updates`` and ``UPDATE_OPS``). Inference:
    the moving statistics. ``training`` may be a bool tensor: the statistics are selected when run and the
    update's decay is 0 when it is false. 4-D float32 inputs normalized over channels take TF's fused kernel, whose
    moving variance follows the Bessel-corrected batch variance.
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
        fusable = ndims == 4 and self.axis in (1, 3) and self._dtype in (dtypes.float16, dtypes.float32)
        if self.fused and not fusable:
            raise ValueError("Passing `fused=True` is only supported for 4-D float16/float32 inputs normalized "
                             "over axis 1 or 3")
        self.fused = fusable if self.fused is None else bool(self.fused)
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

    def _assign_moving_averages(self, batch_mean, batch_var, static, training) -> None:
        """Keras's ``AssignMovingAvg``: ``moving -= (moving - batch_stat) * decay`` with ``decay = 1 - momentum``
        (0 when a ``training`` tensor is false); the update ops go to ``updates``."""
        updates = []
        for variable, value, name in ((self.moving_mean, batch_mean, "AssignMovingAvg"),
                                      (self.moving_variance, batch_var, "AssignMovingAvg_1")):
            with name_scope(name) as scope:
                if static is not None:
                    decay = convert_to_tensor(1.0 - self.momentum, dtype=dtypes.float32, name="decay")
                else:
                    decay = math_ops.where(training, 1.0 - self.momentum, 0.0, name="decay")
                if decay.dtype != variable.dtype.base_dtype:
                    decay = math_ops.cast(decay, variable.dtype.base_dtype)
                delta = (variable._to_tensor() - math_ops.cast(value, variable.dtype.base_dtype)) * decay
                updates.append(state_ops.assign_sub(variable, delta, name=scope))
        self.add_update(updates)

    def call(self, inputs, training: Any = False):
        static = _static_bool(training)
        if static is None:
            training = convert_to_tensor(training, dtype=dtypes.bool)
        if self.fused:
            return self._fused_call(inputs, static, training)
        ndims = inputs.shape.ndims
        shape = [1] * ndims
        shape[self.axis] = inputs.shape.dims[self.axis]

        def shaped(t):
            return t if self.axis == ndims - 1 or t is None else array_ops.reshape(t, shape)

        if static is False:
            mean, variance = self.moving_mean, self.moving_variance
        else:
            batch_mean, batch_var = nn_ops.moments(inputs, [i for i in range(ndims) if i != self.axis])
            if static:
                mean, variance = batch_mean, batch_var
            else:
                mean = math_ops.where(training, batch_mean, self.moving_mean._to_tensor())
                variance = math_ops.where(training, batch_var, self.moving_variance._to_tensor())
            self._assign_moving_averages(batch_mean, batch_var, static, training)
        return nn_ops.batch_normalization(inputs, shaped(mean), shaped(variance), shaped(self.beta),
                                          shaped(self.gamma), self.epsilon)

    def _fused_call(self, inputs, static, training):
        """TF's fused kernel (NHWC here: channels-first inputs are transposed to it and back)."""
        channels = inputs.shape.dims[self.axis]
        if self.axis == 1:
            inputs = array_ops.transpose(inputs, [0, 2, 3, 1])
        scale = self.gamma._to_tensor() if self.gamma is not None else array_ops.ones([channels], inputs.dtype)
        offset = self.beta._to_tensor() if self.beta is not None else array_ops.zeros([channels], inputs.dtype)

        def inference():
            return nn_ops.fused_batch_norm(inputs, scale, offset, self.moving_mean._to_tensor(),
                                           self.moving_variance._to_tensor(), epsilon=self.epsilon,
                                           is_training=False)[0]

        if static is False:
            out = inference()
        else:
            out, batch_mean, batch_var = nn_ops.fused_batch_norm(inputs, scale, offset, epsilon=self.epsilon,
                                                                 is_training=True)
            if static is None:
                out = math_ops.where(training, out, inference())
            self._assign_moving_averages(batch_mean, batch_var, static, training)
        return array_ops.transpose(out, [0, 3, 1, 2]) if self.axis == 1 else out


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
