"""Segment reductions, partition/stitch, counting: segment_*, unsorted_segment_*, dynamic_partition, bincount, ...

Names in ``__all__`` are exported as ``tf.<name>``."""
from __future__ import annotations

__all__: list = []
