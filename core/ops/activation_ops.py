"""More tf.nn: selu, softsign, crelu, swish, lrn, relu_layer, xw_plus_b, moments helpers, weighted/poisson losses.

Names in ``__all__`` are exported as ``tf.nn.<name>``."""
from __future__ import annotations

__all__: list = []
