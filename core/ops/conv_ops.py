"""Convolutions (tf.nn.conv1d/conv2d/conv2d_transpose/depthwise/separable/atrous/convolution).

Names in ``__all__`` are exported as ``tf.nn.<name>``."""
from __future__ import annotations

__all__: list = []
