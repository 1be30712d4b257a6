"""Lossless compact forms for what a live logdir keeps: scalar columns and histograms.

- **Scalar columns** (``pack_columns``): steps as offsets from the first step, wall times as the first wall time
  plus the differences of their float64 bit patterns (consecutive wall times share their exponent, so the
  differences are small integers; exact by construction), both int16 or int32 whichever holds them, values as
  float32 (what TensorBoard serves). A column that fits neither stays as it was. 20 bytes a point become 8-12.
- **Histograms** (``CompactHistogram``): a TF1 HistogramProto's bucket limits are almost always TensorFlow's
  default edges (TF, tensorboardX, torch and our writer all use them), so they are kept as indices into that
  table (a slice when contiguous), and the counts sparsely (most buckets are empty). A histogram of 600 buckets,
  14 KB as the Rust server's [k, 3] float64 tensor, takes well under 1 KB. ``tensor_bytes()`` rebuilds the tensor.
"""
from __future__ import annotations

import functools
import sys
from typing import Optional, Tuple

import numpy as np

from tfevents.proto import tensor_pb2, types_pb2

from ..builders.histograms import default_bucket_edges

__all__ = ["pack_columns", "unpack_columns", "CompactHistogram"]

def _narrow(a: np.ndarray) -> Optional[np.ndarray]:
    """``a`` as int16 or int32, the smallest that holds it, or None when neither does."""
    if not len(a):
        return a.astype(np.int16)
    lo, hi = a.min(), a.max()
    for dtype in (np.int16, np.int32):
        info = np.iinfo(dtype)
        if lo >= info.min and hi <= info.max:
            return a.astype(dtype)
    return None


def pack_columns(steps: np.ndarray, walls: np.ndarray, values: np.ndarray) -> tuple:
    """``(first_step, steps, first_wall_bits, walls, values)`` with int16 or int32 columns wherever they fit."""
    if not len(steps):
        return (None, steps, None, walls, values)
    first_step = int(steps[0])
    narrow = _narrow(steps - first_step)
    if narrow is not None:
        steps = narrow
    else:
        first_step = None
    bits = walls.view(np.int64)
    narrow = _narrow(np.diff(bits))
    if narrow is not None:
        first_bits = int(bits[0])
        walls = narrow
    else:
        first_bits = None
    return (first_step, steps, first_bits, walls, values)


def unpack_columns(packed: tuple) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The int64 steps, float64 wall times and values of :func:`pack_columns`' result."""
    first_step, steps, first_bits, walls, values = packed
    if first_step is not None:
        steps = steps.astype(np.int64) + first_step
    if first_bits is not None:
        bits = np.empty(len(walls) + 1, dtype=np.int64)
        bits[0] = first_bits
        np.cumsum(walls, out=bits[1:], dtype=np.int64)
        bits[1:] += first_bits
        walls = bits.view(np.float64)
    return steps, walls, values


@functools.lru_cache(maxsize=1)
def _edge_table() -> np.ndarray:
    big = sys.float_info.max
    return np.concatenate([[-big], default_bucket_edges(), [big]])


@functools.lru_cache(maxsize=1)
def _edge_index() -> dict:
    return {float(e): i for i, e in enumerate(_edge_table())}


class CompactHistogram:
    """One TF1 histogram (min, max, bucket limits, counts) in little memory; see the module docstring."""

    __slots__ = ("lo", "hi", "edges", "nonzero", "counts", "k")

    def __init__(self, row: tuple):
        lo, hi, _num, _sum, _sq, limits, counts = row
        limits = np.frombuffer(limits, "<f8")
        counts = np.frombuffer(counts, "<f8")
        self.lo, self.hi, self.k = float(lo), float(hi), len(limits)
        self.edges = self._edges(limits)
        nz = np.flatnonzero(counts)
        self.nonzero = nz.astype(np.uint16 if self.k < 65536 else np.uint32).tobytes()
        vals = counts[nz]
        as32 = vals.astype(np.float32)
        self.counts = as32 if (as32 == vals).all() else vals.copy()
        if len(counts) != len(limits):  # not a valid histogram: served as nothing (the Rust server's DataLoss)
            self.k = -1

    @staticmethod
    def _edges(limits: np.ndarray):
        """A slice of the edge table, or uint16 indices into it, or the limits themselves."""
        table = _edge_table()
        if not len(limits):
            return slice(0, 0)
        first = _edge_index().get(float(limits[0]))
        if first is not None and first + len(limits) <= len(table) and np.array_equal(
                table[first:first + len(limits)], limits):
            return slice(first, first + len(limits))   # the common case, without a search
        at = np.searchsorted(table, limits)
        at = np.minimum(at, len(table) - 1)
        if np.array_equal(table[at], limits):
            if at[-1] - at[0] == len(at) - 1:
                return slice(int(at[0]), int(at[-1]) + 1)
            return at.astype(np.uint16).tobytes()
        return limits.tobytes()

    def limits(self) -> np.ndarray:
        if isinstance(self.edges, slice):
            return _edge_table()[self.edges]
        if self.k and len(self.edges) == 2 * self.k:
            return _edge_table()[np.frombuffer(self.edges, np.uint16)]
        return np.frombuffer(self.edges, "<f8")

    def tensor_bytes(self) -> Optional[bytes]:
        """The [k, 3] float64 (left, right, count) TensorProto the Rust data server makes of it: left edges
        ``min`` then the limits, right edges the limits then ``max``."""
        if self.k < 0:
            return None
        k = self.k
        limits = self.limits()
        counts = np.zeros(k)
        nz = np.frombuffer(self.nonzero, np.uint16 if k < 65536 else np.uint32)
        counts[nz] = self.counts
        table = np.empty((k, 3), dtype="<f8")
        if k:
            table[0, 0] = self.lo
            table[1:, 0] = limits[:-1]
            table[:-1, 1] = limits[:-1]
            table[-1, 1] = self.hi
            table[:, 2] = counts
        t = tensor_pb2.TensorProto(dtype=types_pb2.DT_DOUBLE, tensor_content=table.tobytes())
        t.tensor_shape.dim.add(size=k)
        t.tensor_shape.dim.add(size=3)
        return t.SerializeToString()
