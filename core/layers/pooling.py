"""``tf.layers`` pooling: ``MaxPooling1D/2D``, ``AveragePooling1D/2D`` and their functional forms.

2-D pooling is one ``MaxPool``/``AvgPool`` op in the input's layout; 1-D pooling adds a unit spatial axis
(``ExpandDims``), pools in NHWC and ``Squeeze``s it away, as TF's layers do.
"""
from __future__ import annotations

from typing import Any, Optional

from ..ops import pool_ops
from ..ops import array_ops
from . import _utils
from .base import Layer

__all__ = ["AveragePooling1D", "AveragePooling2D", "MaxPooling1D", "MaxPooling2D", "average_pooling1d",
           "average_pooling2d", "max_pooling1d", "max_pooling2d"]


class _Pooling(Layer):
    """``rank``-D pooling with ``pool_size`` windows moved by ``strides`` ('valid' or 'same' padding)."""

    rank = 2
    pool_op = "max_pool"

    def __init__(self, pool_size: Any, strides: Any, padding: str = "valid", data_format: str = "channels_last",
                 name: Optional[str] = None, **kwargs):
        if strides is None:
            raise ValueError("Argument `strides` must not be None.")
        super().__init__(name=name, **kwargs)
        self.pool_size = _utils.normalize_tuple(pool_size, self.rank, "pool_size")
        self.strides = _utils.normalize_tuple(strides, self.rank, "strides")
        self.padding = _utils.normalize_padding(padding)
        self.data_format = _utils.normalize_data_format(data_format)

    def _check_input(self, inputs) -> None:
        _utils.check_ndim(self, inputs, self.rank + 2)

    def _pool(self, inputs, pool_size: tuple, strides: tuple, data_format: str):
        if data_format == "NHWC":
            ksize, stride = (1,) + pool_size + (1,), (1,) + strides + (1,)
        else:
            ksize, stride = (1, 1) + pool_size, (1, 1) + strides
        return getattr(pool_ops, self.pool_op)(inputs, ksize=list(ksize), strides=list(stride),
                                         padding=self.padding.upper(), data_format=data_format)

    def call(self, inputs):
        if self.rank == 2:
            return self._pool(inputs, self.pool_size, self.strides, _utils.tf_data_format(self.data_format, 4))
        axis = 2 if self.data_format == "channels_last" else 3
        inputs = array_ops.expand_dims(inputs, axis)
        if self.data_format == "channels_first":     # TF's CPU pooling is NHWC only: Keras transposes
            inputs = array_ops.transpose(inputs, [0, 2, 3, 1])
        outputs = self._pool(inputs, self.pool_size + (1,), self.strides + (1,), "NHWC")
        if self.data_format == "channels_first":
            outputs = array_ops.transpose(outputs, [0, 3, 1, 2])
        return array_ops.squeeze(outputs, [axis])


class MaxPooling1D(_Pooling):
    """Max over windows of ``pool_size`` steps of [batch, steps, channels] (or [batch, channels, steps])."""
    rank, pool_op = 1, "max_pool"


class AveragePooling1D(_Pooling):
    """Mean over windows of ``pool_size`` steps ('same' windows average their valid entries only)."""
    rank, pool_op = 1, "avg_pool"


class MaxPooling2D(_Pooling):
    """Max over ``pool_size`` windows of [batch, h, w, channels] (or [batch, channels, h, w])."""
    rank, pool_op = 2, "max_pool"


class AveragePooling2D(_Pooling):
    """Mean over ``pool_size`` windows ('same' windows average their valid entries only)."""
    rank, pool_op = 2, "avg_pool"


def max_pooling1d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                  data_format: str = "channels_last", name: Optional[str] = None):
    """Functional ``MaxPooling1D``."""
    return MaxPooling1D(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)


def average_pooling1d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                      data_format: str = "channels_last", name: Optional[str] = None):
    """Functional ``AveragePooling1D``."""
    return AveragePooling1D(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)


def max_pooling2d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                  data_format: str = "channels_last", name: Optional[str] = None):
    """Functional ``MaxPooling2D``."""
    return MaxPooling2D(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)


def average_pooling2d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                      data_format: str = "channels_last", name: Optional[str] = None):
    """Functional ``AveragePooling2D``."""
    return AveragePooling2D(pool_size, strides, padding=padding, data_format=data_format, name=name)(inputs)
