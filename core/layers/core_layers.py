"""``tf.layers.Dense``, ``Dropout``, ``Flatten`` and their functional forms ``dense``, ``dropout``, ``flatten``."""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Optional

from .. import control_flow
from ..framework import dtypes
from ..initializers import Zeros
from ..ops import array_ops, linalg_contract_ops, math_ops, nn_ops
from ..framework.registry import constant_value, convert_to_tensor
from .base import Layer

__all__ = ["Dense", "Dropout", "Flatten", "dense", "dropout", "flatten"]


def _static_bool(value: Any) -> Optional[bool]:
    """A Python/numpy bool, or a tensor's constant value; ``None`` for a tensor only known when run."""
    if hasattr(value, "op"):
        value = constant_value(value)
        return None if value is None else bool(value)
    return bool(value)


class Dense(Layer):
    """``outputs = activation(inputs @ kernel + bias)``, ``kernel`` [in, units] (glorot-uniform), ``bias`` zeros.

    Inputs of rank > 2 are contracted over their last axis (TF's ``tensordot``).
    """

    def __init__(self, units: int, activation: Optional[Callable] = None, use_bias: bool = True,
                 kernel_initializer: Any = None, bias_initializer: Any = None, kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, trainable: bool = True, name: Optional[str] = None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.activity_regularizer = activity_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.kernel = self.bias = None

    def _check_input(self, inputs) -> None:
        if inputs.shape.ndims is not None and inputs.shape.ndims < 2:
            raise ValueError("Input 0 of layer %s is incompatible with the layer: expected min_ndim=2, found "
                             "ndim=%d. Full shape received: %s" % (self.name, inputs.shape.ndims, inputs.shape))

    def build(self, input_shape) -> None:
        last = input_shape.dims[-1] if input_shape.dims else None
        if last is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be defined. Found None. "
                             "Full input shape received: %s" % (input_shape,))
        self.kernel = self.add_weight("kernel", [int(last), self.units], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units], regularizer=self.bias_regularizer,
                                        initializer=self.bias_initializer if self.bias_initializer is not None
                                        else Zeros(), constraint=self.bias_constraint)

    def call(self, inputs):
        ndims = inputs.shape.ndims
        if ndims is None or ndims == 2:
            outputs = math_ops.matmul(inputs, self.kernel)
        elif inputs.shape.is_fully_defined():
            outputs = linalg_contract_ops.tensordot(inputs, self.kernel, [[ndims - 1], [0]])
        else:       # TF's tensordot with dynamic shapes: the same contraction, reshaped around one MatMul
            flat = math_ops.matmul(array_ops.reshape(inputs, [-1, inputs.shape.dims[-1]]), self.kernel)
            shape = array_ops.concat([array_ops.shape(inputs)[:-1], [self.units]], 0)
            outputs = array_ops.reshape(flat, shape)
        if ndims is not None and ndims > 2:
            outputs.set_shape(list(inputs.shape.dims[:-1]) + [self.units])
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs


def dense(inputs: Any, units: int, activation: Optional[Callable] = None, use_bias: bool = True,
          kernel_initializer: Any = None, bias_initializer: Any = None, kernel_regularizer: Any = None,
          bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None,
          bias_constraint: Any = None, trainable: bool = True, name: Optional[str] = None, reuse: Any = None):
    """Functional ``Dense``: ``activation(inputs @ kernel + bias)`` in variable scope ``name`` (or ``dense_N``)."""
    layer = Dense(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                  bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                  bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, trainable=trainable,
                  name=name, _scope=name, _reuse=reuse)
    return layer(inputs)


class Dropout(Layer):
    """Keeps each entry with probability ``1 - rate`` scaled by ``1 / (1 - rate)`` when ``training``, else the
    identity; ``training`` may be a bool tensor (selected when run)."""

    def __init__(self, rate: float = 0.5, noise_shape: Any = None, seed: Optional[int] = None,
                 name: Optional[str] = None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def _noise_shape(self, inputs):
        if self.noise_shape is None:
            return None
        dims = list(self.noise_shape)
        if all(d is not None for d in dims):
            return dims
        shape = array_ops.shape(inputs)
        return array_ops.stack([shape[i] if d is None else d for i, d in enumerate(dims)])

    def call(self, inputs, training: Any = False):
        static = _static_bool(training)
        if static is False:
            return array_ops.identity(inputs)

        def dropped():
            return nn_ops.dropout(inputs, rate=self.rate, noise_shape=self._noise_shape(inputs), seed=self.seed)

        if static:
            return dropped()
        # Keras's smart_cond: a tf.cond on the training tensor
        return control_flow.cond(convert_to_tensor(training, dtype=dtypes.bool), dropped,
                                 lambda: array_ops.identity(inputs))


def dropout(inputs: Any, rate: float = 0.5, noise_shape: Any = None, seed: Optional[int] = None,
            training: Any = False, name: Optional[str] = None):
    """Functional ``Dropout``: applied only when ``training`` (a bool or a bool tensor) is true."""
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)(inputs, training=training)


class Flatten(Layer):
    """``[batch, d1, d2, ...] -> [batch, d1 * d2 * ...]`` (channels-first inputs are first made channels-last)."""

    def __init__(self, data_format: str = "channels_last", **kwargs):
        super().__init__(**kwargs)
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError('The `data_format` argument must be one of "channels_first", "channels_last". '
                             "Received: %s" % data_format)
        self.data_format = data_format

    def call(self, inputs):
        rank = inputs.shape.ndims
        if self.data_format == "channels_first" and rank and rank > 1:
            inputs = array_ops.transpose(inputs, [0] + list(range(2, rank)) + [1])
        if rank == 1:
            return array_ops.expand_dims(inputs, 1)
        dims = inputs.shape.dims
        if dims is not None and None not in dims[1:]:
            shape = [-1, int(functools.reduce(operator.mul, dims[1:], 1))]
        elif dims is not None and dims[0] is not None:
            shape = [int(dims[0]), -1]
        else:
            shape = array_ops.stack([array_ops.shape(inputs)[0], -1])
        return array_ops.reshape(inputs, shape)


def flatten(inputs: Any, name: Optional[str] = None, data_format: str = "channels_last"):
    """Functional ``Flatten``: ``[batch, ...] -> [batch, -1]``."""
    return Flatten(name=name, data_format=data_format)(inputs)
