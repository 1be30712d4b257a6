"""``tf.layers`` convolutions: ``Conv1D``, ``Conv2D``, ``Conv2DTranspose``, ``SeparableConv2D`` and their
functional forms, on the ``tf.nn`` convolutions.

Kernel layouts are TF's: ``kernel_size + (in_channels, filters)`` for convolutions, ``kernel_size + (filters,
in_channels)`` for the transposed one, ``kernel_size + (in_channels, depth_multiplier)`` and ``(1, 1,
in_channels * depth_multiplier, filters)`` for the separable one. The bias is added with ``BiasAdd`` in the
input's layout (a channels-first 1-D bias is reshaped to ``[1, filters, 1]`` and added, as TF does).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ..ops import conv_ops
from ..initializers import Zeros
from ..ops import array_ops, math_ops, nn_ops, slicing_ops
from . import _utils
from .base import Layer

__all__ = ["Conv1D", "Conv2D", "Conv2DTranspose", "SeparableConv2D", "conv1d", "conv2d", "conv2d_transpose",
           "separable_conv2d"]


def _bias_add(outputs, bias, data_format: str):
    """``BiasAdd`` with ``data_format`` (NCHW through a broadcast add while ``nn.bias_add`` is NHWC-only)."""
    if data_format == "channels_last":
        return nn_ops.bias_add(outputs, bias)
    try:
        return nn_ops.bias_add(outputs, bias, data_format="NCHW")
    except NotImplementedError:
        shape = [1, -1] + [1] * (outputs.shape.ndims - 2)
        return math_ops.add(outputs, array_ops.reshape(bias, shape))


def _deconv_output_length(length: Optional[int], k: int, padding: str, stride: int):
    """Keras's ``deconv_output_length`` without output padding (of an int, or of an int32 scalar tensor)."""
    if length is None:
        return None
    return length * stride + max(k - stride, 0) if padding == "valid" else length * stride


class _Conv(Layer):
    """``rank``-D convolution of ``filters`` kernels of ``kernel_size`` plus a bias, then ``activation``."""

    rank = 2

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate: Any = 1, activation: Optional[Callable] = None,
                 use_bias: bool = True, kernel_initializer: Any = None, bias_initializer: Any = None,
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
                 name: Optional[str] = None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if int(filters) <= 0:
            raise ValueError("Invalid value for argument `filters`. Expected a strictly positive value. "
                             "Received filters=%s." % filters)
        self.filters = int(filters)
        self.kernel_size = _utils.normalize_tuple(kernel_size, self.rank, "kernel_size")
        self.strides = _utils.normalize_tuple(strides, self.rank, "strides")
        self.padding = _utils.normalize_padding(padding, allow_causal=self.rank == 1)
        self.data_format = _utils.normalize_data_format(data_format)
        self.dilation_rate = _utils.normalize_tuple(dilation_rate, self.rank, "dilation_rate")
        self.activation, self.use_bias = activation, use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer if bias_initializer is not None else Zeros()
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.activity_regularizer = activity_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.kernel = self.bias = None

    @property
    def _channel_axis(self) -> int:
        return 1 if self.data_format == "channels_first" else -1

    def _check_input(self, inputs) -> None:
        _utils.check_ndim(self, inputs, self.rank + 2)

    def _input_channels(self, input_shape) -> int:
        channels = input_shape.dims[self._channel_axis] if input_shape.dims is not None else None
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. The input_shape received is "
                             "%s, where axis %d (0-based) is the channel dimension, which found to be `None`."
                             % (input_shape, self._channel_axis % (self.rank + 2)))
        return int(channels)

    def _kernel_shape(self, channels: int) -> list:
        return list(self.kernel_size) + [channels, self.filters]

    def build(self, input_shape) -> None:
        self.kernel = self.add_weight("kernel", self._kernel_shape(self._input_channels(input_shape)),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def _convolve(self, inputs):
        """``tf.nn.convolution`` named after the class (``conv2d/Conv2D``), as Keras's ``convolution_op``."""
        return conv_ops.convolution(inputs, self.kernel, padding=self.padding.upper(), strides=list(self.strides),
                              dilations=list(self.dilation_rate), name=type(self).__name__,
                              data_format=_utils.tf_data_format(self.data_format, self.rank + 2))

    def _add_bias(self, outputs):
        return _bias_add(outputs, self.bias, self.data_format)

    def call(self, inputs):
        outputs = self._convolve(inputs)
        if self.use_bias:
            outputs = self._add_bias(outputs)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs


class Conv1D(_Conv):
    """1-D convolution of [batch, steps, channels] (``channels_first``: [batch, channels, steps]); ``padding``
    may also be 'causal' (left padding of ``dilation_rate * (kernel_size - 1)``)."""

    rank = 1

    def _convolve(self, inputs):
        padding = self.padding
        if padding == "causal":
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            paddings = [[0, 0], [left, 0], [0, 0]] if self.data_format == "channels_last" else \
                [[0, 0], [0, 0], [left, 0]]
            inputs, padding = slicing_ops.pad(inputs, paddings), "valid"
        if self.dilation_rate[0] != 1 and self.strides[0] != 1:
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1; received: "
                             "strides=%s and dilation_rate=%s" % (self.strides, self.dilation_rate))
        # TF writes SpaceToBatchND + Conv2D + BatchToSpaceND for a dilated kernel; a dilated Conv2D is the same
        return conv_ops.conv1d(inputs, self.kernel, stride=self.strides[0], padding=padding.upper(),
                         data_format=_utils.tf_data_format(self.data_format, 3), dilations=self.dilation_rate[0],
                         name="Conv1D")

    def _add_bias(self, outputs):
        if self.data_format == "channels_first":
            return outputs + array_ops.reshape(self.bias, [1, self.filters, 1])
        return nn_ops.bias_add(outputs, self.bias)


class Conv2D(_Conv):
    """2-D convolution of [batch, h, w, channels] (``channels_first``: [batch, channels, h, w])."""

    rank = 2


class Conv2DTranspose(_Conv):
    """The gradient of ``Conv2D`` with respect to its input (``Conv2DBackpropInput``): output size
    ``n * stride + max(k - stride, 0)`` ('valid') or ``n * stride`` ('same'); kernel [kh, kw, filters, in]."""

    rank = 2

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 data_format: str = "channels_last", **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format, **kwargs)

    def _kernel_shape(self, channels: int) -> list:
        return list(self.kernel_size) + [self.filters, channels]

    def _convolve(self, inputs):
        channels_first = self.data_format == "channels_first"
        if channels_first:       # TF's CPU kernels are NHWC: Keras transposes around the op
            inputs = array_ops.transpose(inputs, [0, 2, 3, 1])
        dims = inputs.shape.dims
        shape = array_ops.shape(inputs)
        sizes = [_deconv_output_length(dims[i], k, self.padding, s)
                 for i, k, s in zip((1, 2), self.kernel_size, self.strides)]
        output_shape = array_ops.stack([shape[0]] + [
            size if size is not None else _deconv_output_length(shape[i], k, self.padding, s)
            for i, size, k, s in zip((1, 2), sizes, self.kernel_size, self.strides)] + [self.filters])
        outputs = conv_ops.conv2d_transpose(inputs, self.kernel, output_shape, strides=[1, *self.strides, 1],
                                      padding=self.padding.upper(), data_format="NHWC")
        outputs.set_shape([dims[0]] + sizes + [self.filters])
        return array_ops.transpose(outputs, [0, 3, 1, 2]) if channels_first else outputs


class SeparableConv2D(_Conv):
    """A depthwise convolution (``depth_multiplier`` kernels per input channel) then a 1x1 convolution to
    ``filters`` channels (``tf.nn.separable_conv2d``)."""

    rank = 2

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate: Any = (1, 1), depth_multiplier: int = 1,
                 activation: Optional[Callable] = None, use_bias: bool = True, depthwise_initializer: Any = None,
                 pointwise_initializer: Any = None, bias_initializer: Any = None,
                 depthwise_regularizer: Any = None, pointwise_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None, depthwise_constraint: Any = None,
                 pointwise_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
                 name: Optional[str] = None, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, bias_constraint=bias_constraint,
                         trainable=trainable, name=name, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer, self.pointwise_initializer = depthwise_initializer, pointwise_initializer
        self.depthwise_regularizer, self.pointwise_regularizer = depthwise_regularizer, pointwise_regularizer
        self.depthwise_constraint, self.pointwise_constraint = depthwise_constraint, pointwise_constraint
        self.depthwise_kernel = self.pointwise_kernel = None

    def build(self, input_shape) -> None:
        channels = self._input_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", list(self.kernel_size) + [channels, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", [1, 1, channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def _convolve(self, inputs):
        data_format = _utils.tf_data_format(self.data_format, 4)
        strides = (1,) + self.strides + (1,) if data_format == "NHWC" else (1, 1) + self.strides
        return conv_ops.separable_conv2d(inputs, self.depthwise_kernel, self.pointwise_kernel, strides=list(strides),
                                   padding=self.padding.upper(), data_format=data_format,
                                   dilations=list(self.dilation_rate))


def _conv_layer(cls, inputs, reuse, name, **kwargs):
    return cls(name=name, _scope=name, _reuse=reuse, **kwargs)(inputs)


def conv1d(inputs: Any, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
           data_format: str = "channels_last", dilation_rate: Any = 1, activation: Optional[Callable] = None,
           use_bias: bool = True, kernel_initializer: Any = None, bias_initializer: Any = None,
           kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
           kernel_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
           name: Optional[str] = None, reuse: Any = None):
    """Functional ``Conv1D``: kernel [k, in, filters] in variable scope ``name`` (or ``conv1d_N``)."""
    return _conv_layer(Conv1D, inputs, reuse, name, filters=filters, kernel_size=kernel_size, strides=strides,
                       padding=padding, data_format=data_format, dilation_rate=dilation_rate,
                       activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                       bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                       bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                       kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, trainable=trainable)


def conv2d(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
           data_format: str = "channels_last", dilation_rate: Any = (1, 1), activation: Optional[Callable] = None,
           use_bias: bool = True, kernel_initializer: Any = None, bias_initializer: Any = None,
           kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
           kernel_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
           name: Optional[str] = None, reuse: Any = None):
    """Functional ``Conv2D``: kernel [kh, kw, in, filters] in variable scope ``name`` (or ``conv2d_N``)."""
    return _conv_layer(Conv2D, inputs, reuse, name, filters=filters, kernel_size=kernel_size, strides=strides,
                       padding=padding, data_format=data_format, dilation_rate=dilation_rate,
                       activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                       bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                       bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                       kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, trainable=trainable)


def conv2d_transpose(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                     data_format: str = "channels_last", activation: Optional[Callable] = None,
                     use_bias: bool = True, kernel_initializer: Any = None, bias_initializer: Any = None,
                     kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                     kernel_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
                     name: Optional[str] = None, reuse: Any = None):
    """Functional ``Conv2DTranspose``: kernel [kh, kw, filters, in] in variable scope ``name``."""
    return _conv_layer(Conv2DTranspose, inputs, reuse, name, filters=filters, kernel_size=kernel_size,
                       strides=strides, padding=padding, data_format=data_format, activation=activation,
                       use_bias=use_bias, kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                       kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                       activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                       bias_constraint=bias_constraint, trainable=trainable)


def separable_conv2d(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                     data_format: str = "channels_last", dilation_rate: Any = (1, 1), depth_multiplier: int = 1,
                     activation: Optional[Callable] = None, use_bias: bool = True,
                     depthwise_initializer: Any = None, pointwise_initializer: Any = None,
                     bias_initializer: Any = None, depthwise_regularizer: Any = None,
                     pointwise_regularizer: Any = None, bias_regularizer: Any = None,
                     activity_regularizer: Any = None, depthwise_constraint: Any = None,
                     pointwise_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
                     name: Optional[str] = None, reuse: Any = None):
    """Functional ``SeparableConv2D``: depthwise [kh, kw, in, depth_multiplier] then pointwise
    [1, 1, in * depth_multiplier, filters] kernels."""
    return _conv_layer(SeparableConv2D, inputs, reuse, name, filters=filters, kernel_size=kernel_size,
                       strides=strides, padding=padding, data_format=data_format, dilation_rate=dilation_rate,
                       depth_multiplier=depth_multiplier, activation=activation, use_bias=use_bias,
                       depthwise_initializer=depthwise_initializer, pointwise_initializer=pointwise_initializer,
                       bias_initializer=bias_initializer, depthwise_regularizer=depthwise_regularizer,
                       pointwise_regularizer=pointwise_regularizer, bias_regularizer=bias_regularizer,
                       activity_regularizer=activity_regularizer, depthwise_constraint=depthwise_constraint,
                       pointwise_constraint=pointwise_constraint, bias_constraint=bias_constraint,
                       trainable=trainable)
