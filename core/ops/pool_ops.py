"""Pooling (tf.nn.max_pool/avg_pool/pool).

Names in ``__all__`` are exported as ``tf.nn.<name>``."""
from __future__ import annotations

__all__: list = []
