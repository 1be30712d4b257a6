"""Array manipulation: pad, slice, reverse, gather_nd/scatter_nd, masks, sort/top_k, unique, meshgrid, linspace, space/depth.

Names in ``__all__`` are exported as ``tf.<name>``."""
from __future__ import annotations

__all__: list = []
