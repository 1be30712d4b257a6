"""Decoding Event protos into the reader's per-file rows (the general, proto-based path).

Everything the scalar fast path (``_fastscan``) does not take comes here as one record's payload:
``FileRows.add_event`` parses it with the Event proto and files each part by kind. Scalar-like
values (``simple_value``, and one-element numeric tensors) become rows of a per-tag column;
everything else is kept as a small tuple until the run is merged, because a tensor value's kind
depends on the first metadata of its tag in the whole run (as in TensorBoard), which one file
cannot know.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np
from google.protobuf.message import DecodeError

from tfevents.proto import event_pb2, meta_graph_pb2, tensor_pb2, types_pb2

from .fastscan import native

__all__ = ["FileRows", "Problem", "tensor_to_ndarray", "parse_file_version"]

# DataType enum -> numpy dtype, and the TensorProto repeated field holding that dtype's values.
_NUMPY = {
    types_pb2.DT_FLOAT: (np.float32, "float_val"),
    types_pb2.DT_DOUBLE: (np.float64, "double_val"),
    types_pb2.DT_HALF: (np.float16, "half_val"),
    types_pb2.DT_BFLOAT16: (None, "half_val"),
    types_pb2.DT_INT32: (np.int32, "int_val"),
    types_pb2.DT_INT16: (np.int16, "int_val"),
    types_pb2.DT_INT8: (np.int8, "int_val"),
    types_pb2.DT_UINT8: (np.uint8, "int_val"),
    types_pb2.DT_UINT16: (np.uint16, "int_val"),
    types_pb2.DT_INT64: (np.int64, "int64_val"),
    types_pb2.DT_UINT32: (np.uint32, "uint32_val"),
    types_pb2.DT_UINT64: (np.uint64, "uint64_val"),
    types_pb2.DT_BOOL: (np.bool_, "bool_val"),
    types_pb2.DT_STRING: (np.object_, "string_val"),
    types_pb2.DT_COMPLEX64: (np.complex64, "scomplex_val"),     # (real, imag) pairs in the repeated field
    types_pb2.DT_COMPLEX128: (np.complex128, "dcomplex_val"),
}
_NUMERIC_KINDS = "biuf"
_MAX_ELEMENTS = 1 << 28  # a forged shape must not make the reader allocate gigabytes
_MAX_PADDING = 1 << 14   # elements a short value list may be padded to (TF's fill rule); beyond: refused


@dataclass
class Problem:
    """Something wrong found while reading: ``kind`` is 'truncated', 'corrupted', 'unparseable',
    'purged', 'unreadable' or 'skipped' (not a regular file); ``offset`` the byte offset of the record (None
    when not about one)."""

    path: str
    offset: Optional[int]
    kind: str
    detail: str = ""

    def __str__(self) -> str:
        where = self.path if self.offset is None else "%s at offset %d" % (self.path, self.offset)
        return "%s: %s%s" % (where, self.kind, ": " + self.detail if self.detail else "")


def parse_file_version(text: str) -> float:
    """'brain.Event:2' -> 2.0 (TensorBoard's event_util.ParseFileVersion); -1 if unparseable."""
    try:
        return float(text.split(":")[-1])
    except ValueError:
        return -1.0


def _bfloat16_to_float32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _half_values(raw: np.ndarray, dtype: int) -> np.ndarray:
    """``half_val`` as float16 (DT_HALF) or float32 (DT_BFLOAT16 widened). TensorFlow stores the 16-bit
    patterns; torch.utils.tensorboard's ``add_tensor`` stores each value's float32 bit pattern (its
    ``half_to_int``), recognisable by values outside 0..0xFFFF (only denormals below 1e-40 would not be)."""
    if raw.size and (raw.min() < 0 or raw.max() > 0xFFFF):
        as_float32 = raw.astype(np.int32).view(np.float32)
        return as_float32.astype(np.float16) if dtype == types_pb2.DT_HALF else as_float32
    bits = raw.astype(np.uint16)
    return bits.view(np.float16) if dtype == types_pb2.DT_HALF else _bfloat16_to_float32(bits)


def tensor_to_ndarray(t: tensor_pb2.TensorProto) -> np.ndarray:
    """A TensorProto as a numpy array (like ``tf.make_ndarray``); strings come back as bytes objects.

    The values come from ``tensor_content`` when set, else from the dtype's repeated field; a
    repeated field shorter than the shape is padded with its last value (TF's convention), but
    never to more than ``max(16384, 16 x the values given)`` elements (ValueError: a hostile file could
    otherwise make a few bytes expand to gigabytes).
    """
    shape = [d.size for d in t.tensor_shape.dim]
    if any(d < 0 for d in shape):
        raise ValueError("tensor shape %s has an unknown dimension" % shape)
    n = 1
    for d in shape:
        n *= d
    if n > _MAX_ELEMENTS:
        raise ValueError("tensor shape %s holds %d elements, more than the reader expands" % (shape, n))
    if t.dtype not in _NUMPY:
        raise ValueError("unsupported tensor dtype %s" % types_pb2.DataType.Name(t.dtype)
                         if t.dtype in types_pb2.DataType.values() else "unknown dtype %d" % t.dtype)
    np_dtype, field_name = _NUMPY[t.dtype]
    if t.dtype == types_pb2.DT_STRING:
        values = list(t.string_val)
        array = np.empty(len(values), dtype=object)
        array[:] = values
    elif t.tensor_content:
        if t.dtype == types_pb2.DT_BFLOAT16:
            array = _bfloat16_to_float32(np.frombuffer(t.tensor_content, dtype="<u2"))
        else:
            array = np.frombuffer(t.tensor_content, dtype=np.dtype(np_dtype).newbyteorder("<")).astype(np_dtype)
    else:
        raw = getattr(t, field_name)
        if t.dtype in (types_pb2.DT_HALF, types_pb2.DT_BFLOAT16):
            array = _half_values(np.asarray(raw, dtype=np.int64), t.dtype)
        elif t.dtype in (types_pb2.DT_COMPLEX64, types_pb2.DT_COMPLEX128):
            parts = np.asarray(raw, dtype=np.float32 if t.dtype == types_pb2.DT_COMPLEX64 else np.float64)
            array = parts[:parts.size // 2 * 2].view(np_dtype)
        else:
            array = np.asarray(raw, dtype=np_dtype)
    if array.size == n:
        return array.reshape(shape)
    if n > max(_MAX_PADDING, 16 * array.size):
        # a few bytes expanding to millions of elements: a decompression bomb, not what a writer stores
        raise ValueError("tensor of shape %s holds %d value(s); padding them to %d elements is refused"
                         % (shape, array.size, n))
    if array.size == 0:
        return np.zeros(shape, dtype=array.dtype) if array.dtype != object else np.full(shape, b"", dtype=object)
    if array.size < n:
        padded = np.empty(n, dtype=array.dtype)
        padded[:array.size] = array
        padded[array.size:] = array[-1]
        return padded.reshape(shape)
    raise ValueError("tensor holds %d values but its shape %s needs %d" % (array.size, shape, n))


_PLAIN_FIELDS = {types_pb2.DT_FLOAT: "float_val", types_pb2.DT_DOUBLE: "double_val",
                 types_pb2.DT_INT32: "int_val", types_pb2.DT_INT64: "int64_val"}


def scalar_of_tensor(t: tensor_pb2.TensorProto) -> Optional[float]:
    """The value of a one-element numeric tensor, or None if ``t`` is not one."""
    if t.dtype == types_pb2.DT_STRING or t.dtype not in _NUMPY:
        return None
    if any(d.size != 1 for d in t.tensor_shape.dim):
        return None
    field_name = _PLAIN_FIELDS.get(t.dtype)
    if field_name is not None and not t.tensor_content:
        values = getattr(t, field_name)
        if len(values) == 1:  # the common case (TF2, torch new-style), without numpy
            return float(values[0])
    try:
        array = tensor_to_ndarray(t)
    except ValueError:
        return None
    if array.size != 1 or array.dtype.kind not in _NUMERIC_KINDS:
        return None
    return float(array.reshape(()))


def _bucket_bytes(p) -> Tuple[bytes, bytes]:
    """(bucket_limit, bucket) of a HistogramProto as little-endian float64 bytes, cut straight from
    its packed wire form (iterating the repeated fields costs ~0.2 us per element)."""
    b = p.SerializeToString()
    found = {}
    i, n = 0, len(b)
    while i < n:
        key = b[i]
        i += 1
        wt = key & 7
        if key >= 0x80 or wt not in (1, 2):  # not the layout protobuf writes for HistogramProto
            break
        if wt == 1:
            i += 8
            continue
        length = shift = 0
        while True:
            c = b[i]
            i += 1
            length |= (c & 0x7F) << shift
            shift += 7
            if c < 0x80:
                break
        if length % 8:
            break
        found[key >> 3] = b[i:i + length]
        i += length
    else:
        return found.get(6, b""), found.get(7, b"")
    return (np.array(p.bucket_limit, dtype="<f8").tobytes(), np.array(p.bucket, dtype="<f8").tobytes())


def histo_row(p) -> tuple:
    """A HistogramProto as ``(min, max, num, sum, sum_squares, bucket_limit, bucket)`` with the
    buckets as float64 bytes: cheap to build, and cheap to send back from a worker process (a
    pickled bytes object costs a copy; a pickled small ndarray costs ~15 us)."""
    limits, counts = _bucket_bytes(p)
    return (p.min, p.max, p.num, p.sum, p.sum_squares, limits, counts)


class RawHistogram:
    """A histogram left undecoded: the payload of its event (bytes-like), whose summary is this one value (the C
    scanner checked its layout); :meth:`proto` decodes it, :meth:`row` gives its :func:`histo_row`."""

    __slots__ = ("payload",)

    def __init__(self, payload: bytes):
        self.payload = payload

    def proto(self):
        return event_pb2.Event.FromString(self.payload).summary.value[0].histo

    def row(self) -> tuple:
        """``histo_row(self.proto())``, read straight from the wire by the C scanner when it is built."""
        row = native.lone_histogram_row(self.payload) if native is not None else None
        return row if row is not None else histo_row(self.proto())


@dataclass
class FileRows:
    """What one event file holds, by kind, before the run is merged.

    Every entry carries ``offset`` (the record's byte offset), which orders entries of one file
    the way they were written. ``scalars[tag]`` has parallel columns offset/step/wall_time/value;
    ``values[tag]`` holds ``(offset, step, wall_time, what, payload)`` for non-scalar values with
    ``what`` in {'histo', 'image', 'audio', 'tensor'} (a histo as :func:`histo_row`'s tuple, or as its
    HistogramProto with ``raw_histograms``); ``metadata[tag]`` is the first
    ``(offset, SummaryMetadata bytes)`` seen for the tag.
    """

    path: str
    scalars: Dict[str, Tuple[list, list, list, list]] = field(default_factory=dict)
    values: Dict[str, list] = field(default_factory=dict)
    metadata: Dict[str, Tuple[int, bytes]] = field(default_factory=dict)
    graphs: List[tuple] = field(default_factory=list)        # (offset, step, wall_time, bytes, from_meta_graph)
    run_metadata: List[tuple] = field(default_factory=list)  # (offset, step, wall_time, tag, bytes)
    session_logs: List[tuple] = field(default_factory=list)  # (offset, step, wall_time, status, checkpoint_path)
    file_versions: List[tuple] = field(default_factory=list)  # (offset, version)
    problems: List[Problem] = field(default_factory=list)
    tensor_scalars: set = field(default_factory=set)  # tags whose scalar rows include tensor values
    reduced: set = field(default_factory=set)  # tags whose fast rows the scanner reduced (scan_stream's ``keep``)
    reduced_histograms: set = field(default_factory=set)  # tags whose lone histograms it reduced
    # the reduced tags' value extremes over every row, reduced ones included: (min, min_step, max, max_step,
    # stepped_back), NaN and -1 for none (see value_extremes)
    reduced_extremes: Dict[str, tuple] = field(default_factory=dict)
    described: Dict[str, int] = field(default_factory=dict)  # lone histograms filed by add_lone_histograms, by tag
    merged: set = field(default_factory=set)   # tags with scalar rows from both paths (merged by offset)
    fast_min_wall_time: float = float("inf")   # the earliest finite wall time of the fast path's rows
    records: int = 0
    end: int = 0  # where reading stopped (see scan.scan_stream)
    min_wall_time: float = float("inf")  # the earliest finite wall time of the events outside ``scalars``
    keep_empty: bool = False  # keep values without a value oneof as 'empty' entries (the live loader's null tensors)
    raw_histograms: bool = False  # keep a histo as its HistogramProto or a RawHistogram, for :func:`histo_row` later
    # (the live loader turns into rows only the histograms its reservoirs keep)
    tag_filter: Optional[object] = None  # callable(tag) -> bool, or None for every tag
    kinds: Optional[frozenset] = None
    _accepted: Dict[str, bool] = field(default_factory=dict)

    def accepts(self, tag: str) -> bool:
        ok = self._accepted.get(tag)
        if ok is None:
            ok = self._accepted[tag] = self.tag_filter is None or bool(self.tag_filter(tag))
        return ok

    def _wants(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds

    def add_event(self, offset: int, payload: bytes) -> None:
        """Parse one record's payload and file what it holds."""
        try:
            event = event_pb2.Event.FromString(payload)
        except DecodeError as err:
            self.problems.append(Problem(self.path, offset, "unparseable", "not an Event proto: %s" % err))
            return
        what = event.WhichOneof("what")
        step, wall_time = event.step, event.wall_time
        if wall_time < self.min_wall_time and wall_time - wall_time == 0:  # finite: not inf, nan
            self.min_wall_time = wall_time
        if what == "summary":
            self._add_summary(offset, step, wall_time, event.summary)
        elif what == "file_version":
            self.file_versions.append((offset, parse_file_version(event.file_version)))
        elif what == "session_log":
            sl = event.session_log
            self.session_logs.append((offset, step, wall_time, sl.status, sl.checkpoint_path))
        elif what == "graph_def":
            if self._wants("graphs"):
                self.graphs.append((offset, step, wall_time, event.graph_def, False))
        elif what == "meta_graph_def":
            if self._wants("graphs"):
                try:
                    meta = meta_graph_pb2.MetaGraphDef.FromString(event.meta_graph_def)
                except DecodeError:
                    meta = None
                if meta is not None and meta.HasField("graph_def"):
                    self.graphs.append((offset, step, wall_time, meta.graph_def.SerializeToString(), True))
        elif what == "tagged_run_metadata":
            if self._wants("run_metadata"):
                trm = event.tagged_run_metadata
                self.run_metadata.append((offset, step, wall_time, trm.tag, trm.run_metadata))

    def add_lone_histograms(self, tag: str, payloads: memoryview, histograms: list) -> None:
        """File the events the scanner described as one histogram value of ``tag`` (no metadata), ``(offset,
        start, end, step, wall_time)`` in file order, each event's payload ``payloads[start:end]``, undecoded: what
        :meth:`add_event` would file, with a :class:`RawHistogram` for the HistogramProto (the scanner accepted the
        tag and noted the wall times)."""
        entries = self.values.setdefault(tag, [])
        mixed = bool(entries)
        entries.extend((offset, step, wall_time, "histo", RawHistogram(payloads[start:end]))
                       for offset, start, end, step, wall_time in histograms)
        if mixed:   # other events of the tag went to the proto decoder: in file order with them
            entries.sort(key=lambda entry: entry[0])
        self.described[tag] = self.described.get(tag, 0) + len(histograms)

    def _add_summary(self, offset: int, step: int, wall_time: float, summary) -> None:
        accepted, metadata = self._accepted, self.metadata
        for value in summary.value:
            what = value.WhichOneof("value")
            tag = value.tag
            if what == "tensor" and not tag:
                tag = value.node_name  # tensor summaries of the plugin-asset era
            ok = accepted.get(tag)
            if not (ok or (ok is None and self.accepts(tag))):
                continue
            if tag not in metadata and value.HasField("metadata"):
                metadata[tag] = (offset, value.metadata.SerializeToString())
            if what is None or what == "obsolete_old_style_histogram":
                if what is None and self.keep_empty:  # e.g. tensorboardX's hparams: metadata and no value
                    self.values.setdefault(tag, []).append((offset, step, wall_time, "empty", None))
                continue
            if what == "simple_value":
                scalar = value.simple_value
            elif what == "tensor":
                scalar = scalar_of_tensor(value.tensor)
                if scalar is not None:
                    self.tensor_scalars.add(tag)
            else:
                scalar = None
            if scalar is not None:
                cols = self.scalars.get(tag)
                if cols is None:  # compact typed arrays, not lists of Python objects
                    cols = self.scalars[tag] = (array("q"), array("q"), array("d"), array("d"))
                cols[0].append(offset)
                cols[1].append(step)
                cols[2].append(wall_time)
                cols[3].append(scalar)
            else:
                payload = getattr(value, what)
                if what == "histo" and not self.raw_histograms:
                    payload = histo_row(payload)
                self.values.setdefault(tag, []).append((offset, step, wall_time, what, payload))

    def add_fast_columns(self, tag: str, meta: Optional[Tuple[int, bytes]], offsets: np.ndarray,
                         steps: np.ndarray, wall_times: np.ndarray, values: np.ndarray) -> None:
        """Fold in one tag's columns from the fast path (already filtered by ``tag_filter``)."""
        if meta is not None and (tag not in self.metadata or meta[0] < self.metadata[tag][0]):
            self.metadata[tag] = meta
        cols = self.scalars.get(tag)
        if cols is None:
            self.scalars[tag] = (offsets, steps, wall_times, values)
            return
        self.merged.add(tag)
        o = np.concatenate([offsets, np.asarray(cols[0], dtype=np.int64)])
        order = np.argsort(o, kind="stable")
        self.scalars[tag] = (
            o[order],
            np.concatenate([steps, np.asarray(cols[1], dtype=np.int64)])[order],
            np.concatenate([wall_times, np.asarray(cols[2], dtype=np.float64)])[order],
            np.concatenate([values, np.asarray(cols[3], dtype=np.float64)])[order],
        )

    def finish(self) -> "FileRows":
        """Turn the scalar columns into numpy arrays (int64 offset/step, float64 wall_time/value)."""
        for tag, cols in list(self.scalars.items()):
            if isinstance(cols[0], array):
                self.scalars[tag] = (np.frombuffer(cols[0], dtype=np.int64), np.frombuffer(cols[1], dtype=np.int64),
                                     np.frombuffer(cols[2], dtype=np.float64), np.frombuffer(cols[3], dtype=np.float64))
        self.tag_filter = None  # not picklable in general, and no longer needed
        self._accepted = {}
        return self


