"""Lossless compact forms for what a live logdir keeps: scalar columns and histograms.

- **Scalar columns** (``pack_columns``): steps as the first step plus the differences of consecutive steps, wall
  times as the first wall time plus the differences of their float64 bit patterns (consecutive wall times share
  their exponent, so the differences are small integers; exact by construction, wrap-around included), values as
  float32 (what TensorBoard serves). Each column of differences is stored in the fewest bytes
  (``narrow_ints``): int8, int16 or int32, with the few differences that do not fit kept aside (an index and the
  int64 value, 12 bytes each; a writer's flush makes one long gap among short ones). A column that nothing
  shrinks stays as it was. 20 bytes a point become 6-10.
- **Histograms** (``CompactHistogram``): a TF1 HistogramProto's bucket limits are almost always TensorFlow's
  default edges (TF, tensorboardX, torch and our writer all use them), so they are kept as indices into that
  table (a slice when contiguous), and the counts sparsely (most buckets are empty). A histogram of 600 buckets,
  14 KB as the Rust server's [k, 3] float64 tensor, takes well under 1 KB. ``tensor_bytes()`` rebuilds the tensor.
"""
from __future__ import annotations

import functools
import sys
import threading
from typing import Dict, Optional, Tuple

import numpy as np

from tfevents.proto import tensor_pb2, types_pb2

from ..builders.histograms import default_bucket_edges
from ..reader.fastscan import native

__all__ = ["pack_columns", "pack_steps", "pack_walls", "unpack_columns", "unpack_steps_values", "narrow_ints",
           "widen_ints", "CompactHistogram"]

_EXCEPTION_BYTES = 12   # an int32 index and an int64 value


# The types narrow_ints tries, smallest first, looked up once (np.iinfo costs ~0.6 us a call):
# (dtype, min, max, bytes a value, max - min as uint64).
_NARROW_TYPES = tuple((np.dtype(t), int(np.iinfo(t).min), int(np.iinfo(t).max), np.dtype(t).itemsize,
                       np.uint64(int(np.iinfo(t).max) - int(np.iinfo(t).min))) for t in (np.int8, np.int16, np.int32))


def _outside(a: np.ndarray, lo: int, span: np.uint64) -> np.ndarray:
    """Mask of the entries of ``a`` (int64) outside ``[lo, lo + span]``, in two array operations instead of three:
    ``a - lo`` taken modulo 2**64 (int64 subtraction wraps) and read as uint64 is at most ``span`` exactly for the
    entries inside."""
    return (a - lo).view(np.uint64) > span


def narrow_ints(a: np.ndarray) -> Optional[tuple]:
    """``a`` (int64) in the fewest bytes, as ``(small, where, wide)``: ``small`` int8, int16 or int32, and the
    entries at ``where`` (int32 indices, or None when there are none) that do not fit it given in ``wide`` (int64).
    None when int64 itself is the smallest.

    The cost of a type is ``itemsize * len(a) + 12 * (entries that do not fit)``; the cheapest wins, the narrower
    one on a tie, int64 (``8 * len(a)``) on a tie with it."""
    a = np.asarray(a, dtype=np.int64)   # (a no-op for int64; _outside reads the bits as uint64)
    n = len(a)
    if not n:
        return (a.astype(np.int8), None, None)
    if native is not None and a.flags.c_contiguous:   # the same in two passes of the C scanner's module
        return _narrow_native(a)
    lo, hi = int(np.minimum.reduce(a)), int(np.maximum.reduce(a))   # a.min(), a.max() without their overhead
    best, best_cost = None, 8 * n
    for dtype, type_min, type_max, size, span in _NARROW_TYPES:
        if lo >= type_min and hi <= type_max:
            if size * n < best_cost:
                best, best_cost = (dtype, None), size * n
            break                  # wider types only cost more
        if lo > type_max or hi < type_min:
            continue               # every entry outside: 12 bytes each, more than int64 (wall-time bit differences)
        if size * n + _EXCEPTION_BYTES >= best_cost:
            continue               # one entry at least outside: this type cannot win, whatever the count
        outside = _outside(a, type_min, span)
        cost = size * n + _EXCEPTION_BYTES * int(np.count_nonzero(outside))
        if cost < best_cost:
            best, best_cost = (dtype, outside), cost
    if best is None:
        return None
    dtype, outside = best
    if outside is None:
        return (a.astype(dtype), None, None)
    where = outside.nonzero()[0]
    small = a.astype(dtype)        # the entries at `where` wrap around here; they are zeroed next
    small[where] = 0
    return (small, where.astype(np.int32), a[where])


_INT_OF_SIZE = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32)}


def _narrow_native(a: np.ndarray) -> Optional[tuple]:
    """:func:`narrow_ints` by the C module (``_fastscan.narrow_ints``: the same answer, ~5x sooner)."""
    packed = native.narrow_ints(a)
    if packed is None:
        return None
    size, small, where, wide = packed
    small = np.frombuffer(small, _INT_OF_SIZE[size])
    if where is None:
        return (small, None, None)
    return (small, np.frombuffer(where, np.int32), np.frombuffer(wide, np.int64))


def widen_ints(packed: tuple) -> np.ndarray:
    """The int64 array :func:`narrow_ints` packed."""
    small, where, wide = packed
    out = small.astype(np.int64)
    if where is not None:
        out[where] = wide
    return out


def pack_columns(steps: np.ndarray, walls: np.ndarray, values: np.ndarray) -> tuple:
    """``(first_step, step_diffs, first_wall_bits, wall_bit_diffs, values)`` with the differences packed by
    :func:`narrow_ints` wherever that saves memory (else ``first_*`` is None and the column is kept whole):
    ``pack_steps(steps) + pack_walls(walls) + (values,)``."""
    if not len(steps):
        return (None, steps, None, walls, values)
    return pack_steps(steps) + pack_walls(walls) + (values,)


def pack_steps(steps: np.ndarray) -> tuple:
    """``(first_step, step_diffs)`` of :func:`pack_columns` (non-empty int64 ``steps``)."""
    packed = narrow_ints(steps[1:] - steps[:-1])   # np.diff without its overhead (~2 us)
    return (int(steps[0]), packed) if packed is not None else (None, steps)


def pack_walls(walls: np.ndarray) -> tuple:
    """``(first_wall_bits, wall_bit_diffs)`` of :func:`pack_columns` (non-empty float64 ``walls``)."""
    bits = walls.view(np.int64)
    packed = narrow_ints(bits[1:] - bits[:-1])
    return (int(bits[0]), packed) if packed is not None else (None, walls)


def _undiff(first: int, packed: tuple) -> np.ndarray:
    """``first`` followed by ``first + d[0] + ... + d[i]`` for the differences ``d`` :func:`narrow_ints` packed."""
    small, where, wide = packed
    out = np.empty(len(small) + 1, dtype=np.int64)
    out[0] = first
    out[1:] = small
    if where is not None:
        out[1:][where] = wide
    np.add.accumulate(out, out=out)   # int64 sums wrap as np.diff did: exact (np.cumsum costs ~2 us more)
    return out


def unpack_columns(packed: tuple) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The int64 steps, float64 wall times and values of :func:`pack_columns`' result."""
    steps, values = unpack_steps_values(packed)
    _, _, first_bits, walls, _ = packed
    if first_bits is not None:
        walls = _undiff(first_bits, walls).view(np.float64)
    return steps, walls, values


def unpack_steps_values(packed: tuple) -> Tuple[np.ndarray, np.ndarray]:
    """The int64 steps and the values of :func:`pack_columns`' result, without the wall times (half the work of
    :func:`unpack_columns` for a reader that needs no wall time). The steps are read-only: series packed at the same
    steps (a sweep's runs) are given one array of them (:func:`_shared_steps`)."""
    first_step, steps, _, _, values = packed
    return (_shared_steps(first_step, steps) if first_step is not None else steps), values


SHARED_STEPS_KEPT = 64          # the step columns _shared_steps keeps: a sweep has a few (runs of one length each)
SHARED_STEPS_MAX_POINTS = 10_000   # and of at most this many steps (the cache stays under ~8 MB)
_shared_step_arrays: Dict[tuple, np.ndarray] = {}
_shared_steps_lock = threading.Lock()


def _shared_steps(first: int, packed: tuple) -> np.ndarray:
    """``_undiff(first, packed)``, read-only, and one array for every series whose steps packed alike: a sweep's
    10,000 runs logged at the same steps unpack them once, not 10,000 times (a density of their series then reads
    one array of steps, in the cache, instead of 80 MB of copies). Looked up by the packed differences' bytes (a
    microsecond for 1,000 steps); the ``SHARED_STEPS_KEPT`` added last kept, of ``SHARED_STEPS_MAX_POINTS`` steps at
    most (a longer column is unpacked each time: its unpacking costs little beside its length)."""
    small, where, _ = packed
    if where is not None or len(small) >= SHARED_STEPS_MAX_POINTS:   # (where: a gap beyond the narrow type: rare)
        out = _undiff(first, packed)
        out.flags.writeable = False
        return out
    key = (first, small.dtype.char, small.tobytes())
    with _shared_steps_lock:
        out = _shared_step_arrays.get(key)
    if out is None:
        out = _undiff(first, packed)
        out.flags.writeable = False
        with _shared_steps_lock:
            if len(_shared_step_arrays) >= SHARED_STEPS_KEPT:
                del _shared_step_arrays[next(iter(_shared_step_arrays))]   # the oldest
            out = _shared_step_arrays.setdefault(key, out)
    return out


@functools.lru_cache(maxsize=1)
def _edge_table() -> np.ndarray:
    big = sys.float_info.max
    return np.concatenate([[-big], default_bucket_edges(), [big]])


@functools.lru_cache(maxsize=1)
def _edge_index() -> dict:
    return {float(e): i for i, e in enumerate(_edge_table())}


@functools.lru_cache(maxsize=1)
def _edge_bytes() -> Tuple[bytes, dict]:
    """The edge table as little-endian float64 bytes, and the index of each edge by its 8 bytes."""
    table = _edge_table().astype("<f8").tobytes()
    return table, {table[i:i + 8]: i // 8 for i in range(0, len(table), 8)}


class CompactHistogram:
    """One TF1 histogram (min, max, bucket limits, counts) in little memory; see the module docstring."""

    __slots__ = ("lo", "hi", "edges", "nonzero", "counts", "k")

    @classmethod
    def of_event(cls, payload: bytes) -> Optional["CompactHistogram"]:
        """The histogram of an event the C scanner described as a lone histogram, compacted by the scanner when its
        limits are a run of the default edges (what every writer writes); None otherwise, or without the
        scanner: ``CompactHistogram(row)`` then. The same object either way."""
        parts = native.compact_lone_histogram(payload, _edge_bytes()[0]) if native is not None else None
        if parts is None:
            return None
        lo, hi, first, k, nonzero, counts, float32 = parts
        h = cls.__new__(cls)
        h.lo, h.hi, h.k, h.edges, h.nonzero = lo, hi, k, slice(first, first + k), nonzero
        h.counts = np.frombuffer(counts, np.float32 if float32 else np.float64)
        return h

    def __init__(self, row: tuple):
        lo, hi, _num, _sum, _sq, limits, counts = row
        raw_limits = limits if isinstance(limits, bytes) else None   # histo_row gives bytes
        limits = np.frombuffer(limits, "<f8")
        counts = np.frombuffer(counts, "<f8")
        self.lo, self.hi, self.k = float(lo), float(hi), len(limits)
        self.edges = self._edges(limits, raw_limits)
        nz = (counts != 0).nonzero()[0]     # the same as counts.nonzero(), ~0.4 us sooner
        self.nonzero = nz.astype(np.uint16 if self.k < 65536 else np.uint32).tobytes()
        vals = counts[nz]              # a new array, not a view of the row
        as32 = vals.astype(np.float32)
        # float32 when it holds the counts exactly: compared as bit patterns, the cheapest test (no zero is kept, so
        # -0.0 never meets 0.0; a NaN count is kept as float32 only if it converts back to the same bits)
        self.counts = as32 if as32.astype(np.float64).tobytes() == vals.tobytes() else vals
        if len(counts) != len(limits):  # not a valid histogram: served as nothing (the Rust server's DataLoss)
            self.k = -1

    @staticmethod
    def _edges(limits: np.ndarray, raw_limits: Optional[bytes] = None):
        """A slice of the edge table, or uint16 indices into it, or the limits themselves (``raw_limits``: their
        bytes, when the caller has them)."""
        if not len(limits):
            return slice(0, 0)
        # The common case, a run of the default edges, by comparing bytes: a dict lookup and one memcmp.
        table_bytes, index_by_bytes = _edge_bytes()
        raw = limits.tobytes() if raw_limits is None else raw_limits
        first = index_by_bytes.get(raw[:8])
        if first is not None and table_bytes[8 * first:8 * first + len(raw)] == raw:
            return slice(first, first + len(limits))
        # Else compare values (as before the shortcut: -0.0 equals the table's 0.0).
        table = _edge_table()
        first = _edge_index().get(float(limits[0]))
        if first is not None and first + len(limits) <= len(table) and np.array_equal(
                table[first:first + len(limits)], limits):
            return slice(first, first + len(limits))
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
