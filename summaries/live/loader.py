"""A live logdir: each ``reload()`` reads only the bytes appended since the last, into bounded series.

This is the loader behind ``tfevents serve``, with the Rust data server's model of a logdir (its
``logdir.rs``, ``run.rs``, ``data_compat.rs``):

- a run is a directory of event files (``walk.discover``); runs whose files are gone are dropped;
- every file keeps a byte offset; a pass scans from there (the C fast path), and a record the file ends
  inside is read again next pass, not reported. The scanner reduces the rows of a scalar series, and the lone
  histograms of a histogram series, to what its reservoir would keep of them as it reads, so a scan holds little
  whatever the file's length (``HOLD_BYTES``). A file that shrank or was replaced (new inode) is read
  again from its start. A corrupted record is reported once with file and offset, and the records after it
  are read (the Rust server stops reading such a file);
- a run's series are keyed by tag; the first value of a tag fixes its *data class* and metadata (TF1
  ``simple_value`` -> scalars, images/audio -> blob sequences, histograms -> tensors, else the plugin name's
  class), the run's graph is the blob sequence ``__run_graph__``, and each tagged RunMetadata one of its own;
- each series is a :class:`~.reservoir.Reservoir` (preemption on repeated steps, last point kept) of
  ``samples_per_plugin`` points (scalars 1000, tensors 100, blob sequences 10 by default), so memory does not
  grow with the number of steps.

Values are kept compactly (``packing.py``): scalar columns packed, histograms as ``CompactHistogram`` (rebuilt
as the Rust server's [k, 3] tensor when read), other tensors as serialized TensorProtos, blobs as lists of bytes.
"""
from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np

from tfevents.proto import summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
from ..reader.decode import FileRows, Problem, RawHistogram, histo_row
from .packing import CompactHistogram
from .reservoir import Reservoir, fill_at_same_steps
from ..reader.scan import have_fast_path, scan_stream
from ..reader.walk import discover

__all__ = ["LiveLogdir", "LiveRun", "Series", "tensor_bytes", "SCALAR", "TENSOR", "BLOB_SEQUENCE",
           "RUN_GRAPH_TAG", "UNBOUNDED"]

log = logging.getLogger("tfevents.serve")

UNKNOWN, SCALAR, TENSOR, BLOB_SEQUENCE = 0, 1, 2, 3
RUN_GRAPH_TAG = "__run_graph__"
DEFAULT_CAPACITY = {SCALAR: 1000, TENSOR: 100, BLOB_SEQUENCE: 10}
HOLD_BYTES = 16 << 20  # a scan of a file stops once the rows and undecoded records it holds reach this (C path)
SCAN_BYTES = 16 << 20  # without the C scanner, a file is read in slices of this size instead
READ_BYTES = 1 << 20   # read (and framed) at a time within a scan: ~8 MB less at the peak of a 2-thread load than
#                        the offline reader's 4 MB, for the same CPU
UNBOUNDED = 2 ** 62  # a reservoir capacity that keeps every point (TensorBoard's ``--samples_per_plugin x=all``)
_TENSOR_PLUGINS = frozenset({"histograms", "text", "hparams", "pr_curves", "mesh", "custom_scalars"})
_BLOB_PLUGINS = frozenset({"images", "audio", "graph_run_metadata", "graph_run_metadata_graph", "graph_keras_model"})
_GRAPH_STRING_PLUGINS = frozenset({"graph_run_metadata", "graph_run_metadata_graph", "graph_keras_model"})


def _blank(plugin: str, data_class: int, content: bytes = b"") -> bytes:
    md = summary_pb2.SummaryMetadata(data_class=data_class)
    md.plugin_data.plugin_name = plugin
    md.plugin_data.content = content
    return md.SerializeToString()


_SCALAR_MD = _blank("scalars", SCALAR)
_HISTO_MD = _blank("histograms", TENSOR)
_IMAGE_MD = _blank("images", BLOB_SEQUENCE, b"\x10\x01")  # ImagePluginData{converted_to_tensor: true}
_AUDIO_MD = _blank("audio", BLOB_SEQUENCE, b"\x18\x01")   # AudioPluginData{converted_to_tensor: true}
_GRAPH_MD = _blank("graphs", BLOB_SEQUENCE)
_RUN_METADATA_MD = _blank("graph_tagged_run_metadata", BLOB_SEQUENCE)


def initial_metadata(first_what: str, metadata: Optional[bytes]) -> Tuple[bytes, int, str]:
    """(SummaryMetadata bytes, data class, plugin name) of a series from its first value's kind ('simple_value',
    'image', 'audio', 'histo', 'tensor'; 'graph', 'run_metadata' for those events) and metadata: the Rust
    server's rules."""
    md = summary_pb2.SummaryMetadata.FromString(metadata) if metadata else None
    if md is not None and md.data_class != UNKNOWN:
        return metadata, md.data_class, md.plugin_data.plugin_name
    fixed = {"simple_value": (_SCALAR_MD, SCALAR, "scalars"), "image": (_IMAGE_MD, BLOB_SEQUENCE, "images"),
             "audio": (_AUDIO_MD, BLOB_SEQUENCE, "audio"), "histo": (_HISTO_MD, TENSOR, "histograms"),
             "graph": (_GRAPH_MD, BLOB_SEQUENCE, "graphs"),
             "run_metadata": (_RUN_METADATA_MD, BLOB_SEQUENCE, "graph_tagged_run_metadata")}
    if first_what in fixed:
        return fixed[first_what]
    if md is None:
        return b"", UNKNOWN, ""
    plugin = md.plugin_data.plugin_name
    if plugin == "scalars":
        md.data_class = SCALAR
    elif plugin in _TENSOR_PLUGINS:
        md.data_class = TENSOR
    elif plugin in _BLOB_PLUGINS:
        md.data_class = BLOB_SEQUENCE
    return md.SerializeToString(), md.data_class, plugin


# ---------------------------------------------------------------- values in the form they are served

def blob_sequence(what: str, payload, plugin: str) -> Optional[list]:
    """The blobs of one value of a blob-sequence series, or None (the Rust server's DataLoss)."""
    if what == "image":
        return [str(payload.width).encode(), str(payload.height).encode(), payload.encoded_image_string]
    if what == "audio":
        return [payload.encoded_audio_string]
    if what == "tensor" and payload.dtype == types_pb2.DT_STRING:
        dims = [d.size for d in payload.tensor_shape.dim]
        values = list(payload.string_val)
        if len(dims) == 1:
            return values
        if len(dims) == 2 and dims[1] == 2 and plugin == "audio":
            return values[0::2]
        if not dims and len(values) == 1 and plugin in _GRAPH_STRING_PLUGINS:
            return values
    return None


# a summary value with no value set is served as this empty float tensor, as the Rust server does
_NULL_TENSOR = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_shape=tensor_shape_pb2.TensorShapeProto(
    dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=0)])).SerializeToString()


def _scalar_tensor_bytes(value: float) -> bytes:
    return tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[value],
                                  tensor_shape=tensor_shape_pb2.TensorShapeProto()).SerializeToString()


# ---------------------------------------------------------------- series and runs

@dataclass
class Series:
    """One tag of one run: its data class, SummaryMetadata (serialized) and reservoir of values."""

    data_class: int
    metadata: bytes
    plugin: str
    reservoir: Reservoir


@dataclass
class _Cursor:
    offset: int = 0
    inode: Optional[int] = None


@dataclass
class LiveRun:
    """A run: its files' read positions, start time (earliest wall time of any event) and series by tag."""

    name: str
    capacity: Mapping[str, int]
    files: Dict[str, _Cursor] = field(default_factory=dict)
    start_time: Optional[float] = None
    series: Dict[str, Series] = field(default_factory=dict)

    def _capacity(self, plugin: str, data_class: int) -> int:
        return self.capacity.get(plugin, DEFAULT_CAPACITY.get(data_class, 0)) if data_class else 0

    def _series(self, tag: str, first_what: str, metadata: Optional[bytes]) -> Optional[Series]:
        s = self.series.get(tag)
        if s is None:
            md, data_class, plugin = initial_metadata(first_what, metadata)
            cap = self._capacity(plugin, data_class)
            dtype = np.float32 if data_class == SCALAR else object
            s = self.series[tag] = Series(data_class, md, plugin, Reservoir(cap, dtype))
        return s

    @staticmethod
    def _first_seen(tag: str, rows: FileRows) -> Tuple[str, Optional[bytes]]:
        """(first_what, metadata) of a tag new to the run: the kind of its first value in ``rows`` and its first
        metadata, which fix its data class (``initial_metadata``)."""
        cols = rows.scalars.get(tag)
        others = rows.values.get(tag, ())
        meta = rows.metadata.get(tag)
        first_scalar = int(cols[0][0]) if cols is not None and len(cols[0]) else None
        first_other = others[0][0] if others else None
        if first_other is None or (first_scalar is not None and first_scalar < first_other):
            first_what = "tensor" if tag in rows.tensor_scalars else "simple_value"
        else:
            first_what = "tensor" if others[0][3] == "empty" else others[0][3]
        return first_what, meta[1] if meta else None

    def _reservoir(self, tag: str, first_what: str, metadata: Optional[bytes]) -> Tuple[int, int]:
        """(data class, capacity) of the tag's series: the run's, or the one its first value would make."""
        s = self.series.get(tag)
        if s is not None:
            return s.data_class, s.reservoir.capacity
        _, data_class, plugin = initial_metadata(first_what, metadata)
        return data_class, self._capacity(plugin, data_class)

    def reservoir_capacity(self, tag: str, metadata: Optional[bytes], first_what: str) -> int:
        """The C scanner's ``keep``: the capacity of the reservoir a tag's rows of its first kind go to (scalars
        to a scalar series, lone histograms to a tensor series), or 0 when, as far as its first row tells, they go
        to none or to one that keeps every point."""
        data_class, cap = self._reservoir(tag, first_what, metadata)
        wanted = TENSOR if first_what == "histo" else SCALAR
        return cap if data_class == wanted and cap < UNBOUNDED else 0

    def reduction_exact(self, rows: FileRows, decided: Mapping[str, int]) -> bool:
        """Whether every tag the scanner reduced (by ``decided[tag]``, from :meth:`reservoir_capacity`) has only
        rows of that kind in the scan and a reservoir of that capacity for them: else some of its rows are missing
        (a tag logged both as scalars and as other values in one scan, or first as something else), and the scan
        is read again unreduced."""
        for tag in rows.reduced | rows.reduced_histograms:
            histograms = tag in rows.reduced_histograms
            if histograms:
                alone = tag not in rows.scalars and len(rows.values[tag]) == rows.described[tag]
            else:
                alone = tag not in rows.merged and tag not in rows.values
            if not alone or (histograms and tag in rows.reduced):
                return False
            data_class, cap = self._reservoir(tag, *self._first_seen(tag, rows))
            if data_class != (TENSOR if histograms else SCALAR) or cap != decided.get(tag):
                return False
        return True

    def apply(self, rows: FileRows) -> None:
        """Fold one scan of a file's new bytes into the run's series."""
        earliest = min(rows.min_wall_time, rows.fast_min_wall_time)  # finite wall times of every event read
        if earliest != float("inf") and (self.start_time is None or earliest < self.start_time):
            self.start_time = earliest
        fresh = []   # scalar series filled for the first time: together where their steps are the same
        for tag in set(rows.scalars) | set(rows.values):
            s = self.series.get(tag)
            if s is None:
                s = self._series(tag, *self._first_seen(tag, rows))
            cols = rows.scalars.get(tag)
            if s.data_class == SCALAR and not len(s.reservoir) and s.reservoir.capacity > 0 and cols is not None:
                fresh.append((s.reservoir, cols))
            else:
                self._apply_tag(tag, s, rows)
        for reservoirs, steps, walls, values in _same_steps(fresh):
            fill_at_same_steps(reservoirs, steps, np.stack(walls), np.stack(values).astype(np.float32))
        for offset, step, wall, graph, from_meta_graph in rows.graphs:
            if not from_meta_graph:  # the Rust server reads GraphDef events only
                self._offer_blobs(RUN_GRAPH_TAG, "graph", [(step, wall, [graph])])
        for offset, step, wall, tag, blob in rows.run_metadata:
            self._offer_blobs(tag, "run_metadata", [(step, wall, [blob])])

    def _offer_blobs(self, tag: str, what: str, points) -> None:
        s = self._series(tag, what, None)
        if s.data_class != BLOB_SEQUENCE:
            return
        values = np.empty(len(points), dtype=object)
        values[:] = [blobs for _, _, blobs in points]
        s.reservoir.offer(np.array([p[0] for p in points], np.int64), np.array([p[1] for p in points]), values)

    def _apply_tag(self, tag: str, s: Series, rows: FileRows) -> None:
        cols = rows.scalars.get(tag)
        others = rows.values.get(tag, ())
        if s.reservoir.capacity <= 0:
            return
        if s.data_class == SCALAR:
            if cols is not None and len(cols[0]):
                s.reservoir.offer(cols[1], cols[2], cols[3].astype(np.float32))
            return
        # tensors and blob sequences: values in file order, with one-element tensors from the scalar columns
        points = []  # (offset, step, wall, served value)
        for offset, step, wall, what, payload in others:
            if s.data_class == TENSOR:   # histograms stay protos until kept (then compacted, see tensor_bytes)
                value = payload if what == "histo" else (
                    payload.SerializeToString() if what == "tensor" else _NULL_TENSOR if what == "empty" else None)
            else:
                value = blob_sequence(what, payload, s.plugin)
            if value is not None:
                points.append((offset, step, wall, value))
        if cols is not None and len(cols[0]) and s.data_class == TENSOR and tag in rows.tensor_scalars:
            points.extend((int(o), int(st), float(w), _scalar_tensor_bytes(float(v)))
                          for o, st, w, v in zip(*cols))
            points.sort(key=lambda p: p[0])
        if not points:
            return
        values = np.empty(len(points), dtype=object)
        values[:] = [p[3] for p in points]
        s.reservoir.offer(np.array([p[1] for p in points], np.int64), np.array([p[2] for p in points]), values)
        if s.data_class == TENSOR:   # only the histograms the reservoir keeps are ever read
            kept = s.reservoir.data[2]
            for i, v in enumerate(kept):
                if not isinstance(v, (bytes, CompactHistogram)):
                    kept[i] = compact_histogram(v)


def _same_steps(fresh: List[tuple]) -> List[tuple]:
    """``(reservoirs, steps, walls, values)`` groups of ``(reservoir, scalar columns)`` whose steps are equal (and
    reservoirs of one capacity), in the order first met."""
    groups: List[tuple] = []
    candidates: Dict[tuple, List[tuple]] = {}   # groups by capacity, length, first and last step
    for reservoir, (_, steps, walls, values) in fresh:
        if not len(steps):
            continue
        key = (reservoir.capacity, len(steps), int(steps[0]), int(steps[-1]))
        same = candidates.setdefault(key, [])
        group = next((g for g in same if np.array_equal(g[1], steps)), None)
        if group is None:
            group = ([], steps, [], [])
            same.append(group)
            groups.append(group)
        group[0].append(reservoir)
        group[2].append(walls)
        group[3].append(values)
    return groups


def compact_histogram(value) -> CompactHistogram:
    """A histogram as the scan left it (a RawHistogram, a HistogramProto or a ``histo_row`` tuple), compacted."""
    if isinstance(value, RawHistogram):
        return CompactHistogram.of_event(value.payload) or CompactHistogram(value.row())
    return CompactHistogram(value if isinstance(value, tuple) else histo_row(value))


def tensor_bytes(value) -> Optional[bytes]:
    """A kept tensor value as serialized TensorProto bytes (histograms are rebuilt as the Rust server's tensor; one
    a reader meets before the loader compacted it is compacted here)."""
    if isinstance(value, bytes):
        return value
    if not isinstance(value, CompactHistogram):
        value = compact_histogram(value)
    return value.tensor_bytes()


class LiveLogdir:
    """Runs of a logdir kept current by :meth:`reload`; thread-safe for readers (hold :attr:`lock` while
    iterating ``runs`` or a run's ``series``).

    ``samples_per_plugin``: reservoir size by plugin name (TensorBoard's flag), e.g. ``{"scalars": 1000}``.
    ``on_problem(problem)`` is called once per problem (corrupted record, unreadable file). ``threads``: files
    scanned at once (default: the CPUs, at most 4: a scan holds little, ``HOLD_BYTES``, and does most of its work
    without the GIL, so on benchmarks/serve.py's 2-CPU machine two threads reached a full load sooner than one on
    both logdirs, scalars only 2.1 s against 2.9 s, with histograms and images 3.0 s against 3.3 s, for ~7-10 MB
    more at the peak).
    """

    def __init__(self, path: str, samples_per_plugin: Optional[Mapping[str, int]] = None,
                 storage_options: Optional[dict] = None,
                 on_problem: Optional[Callable[[Problem], None]] = None, check_crc: bool = True,
                 threads: Optional[int] = None):
        self.path = os.fspath(path)
        self.capacity = dict(samples_per_plugin or {})
        self.storage_options = storage_options
        self.on_problem = on_problem or (lambda p: log.warning("%s", p))
        self.check_crc = check_crc
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        self.threads = max(1, threads if threads is not None else min(4, cpus))
        self.runs: Dict[str, LiveRun] = {}
        self.problems: List[Problem] = []
        self.lock = threading.RLock()
        self.passes = 0
        self._reported = set()

    def _report(self, problem: Problem) -> None:
        key = (problem.path, problem.offset, problem.kind)
        if key not in self._reported:
            self._reported.add(key)
            self.problems.append(problem)
            self.on_problem(problem)

    def reload(self) -> None:
        """One pass: find runs and files, read what was appended to each file since the last pass."""
        try:
            found = discover(self.path, storage_options=self.storage_options)
        except FileNotFoundError:
            found = None  # a logdir may be created after the server starts, as TensorBoard allows
        groups = dict(found.runs) if found is not None else {}
        if found is not None:
            for problem in found.problems:
                self._report(problem)
        with self.lock:
            for name in [r for r in self.runs if r not in groups]:
                del self.runs[name]
            for name in groups:
                if name not in self.runs:
                    self.runs[name] = LiveRun(name, self.capacity)
        fs = found.fs if found is not None else None
        work = []
        for name, files in sorted(groups.items()):
            run = self.runs[name]
            for gone in [p for p in run.files if p not in set(files)]:
                del run.files[gone]
            work.append((run, files))
        # Runs are read by a few threads at once (the C scanner releases the GIL while it frames and decodes);
        # within a run, files in name order, each in scans that hold at most about HOLD_BYTES, folded in as they
        # are read, so a pass holds at most one scan's rows per thread.
        if self.threads > 1 and len(work) > 1:
            with ThreadPoolExecutor(self.threads) as pool:
                for future in [pool.submit(self._read_run, fs, run, files) for run, files in work]:
                    future.result()
        else:
            for run, files in work:
                self._read_run(fs, run, files)
        self.passes += 1

    def _read_run(self, fs, run: "LiveRun", files: List[str]) -> None:
        for path in files:
            while True:
                decided: Dict[str, int] = {}

                def keep(tag: str, metadata: Optional[bytes], first_what: str) -> int:
                    decided[tag] = run.reservoir_capacity(tag, metadata, first_what)
                    return decided[tag]

                rows = self._scan(fs, run, path, keep)
                reduced = rows is not None and (rows.reduced or rows.reduced_histograms)
                if reduced and not run.reduction_exact(rows, decided):
                    rows = self._scan(fs, run, path, None)
                if rows is None:
                    break
                for problem in rows.problems:
                    if problem.kind != "truncated":
                        self._report(problem)
                with self.lock:
                    run.apply(rows)
                run.files[path].offset = rows.end

    def _scan(self, fs, run: "LiveRun", path: str, keep: Optional[Callable]) -> Optional[FileRows]:
        """The rows appended to ``path`` since the last pass (None when nothing was), as far as one scan holds;
        the caller moves the file's cursor to ``rows.end``. ``keep``: see ``scan_stream``."""
        cursor = run.files.get(path)
        if cursor is None:
            cursor = run.files[path] = _Cursor()
        try:
            if fs is None:
                f = open(path, "rb")
                st = os.fstat(f.fileno())
                size, inode = st.st_size, st.st_ino
            else:
                f = fs.open(path, "rb")
                size, inode = fs.size(path), None
        except OSError as err:
            self._report(Problem(path, None, "unreadable", str(err)))
            return None
        with f:
            if size < cursor.offset or (inode is not None and cursor.inode not in (None, inode)):
                log.info("%s shrank or was replaced; reading it again from the start", path)
                cursor.offset = 0
            cursor.inode = inode
            if size <= cursor.offset:
                return None
            start = cursor.offset
            end = size if have_fast_path() else min(size, start + SCAN_BYTES)
            rows = scan_stream(f, path, end, start=start, tail_ok=True, check_crc=self.check_crc, on_error="skip",
                               keep_empty=True, raw_histograms=True, chunk=READ_BYTES, keep=keep, budget=HOLD_BYTES)
            if rows.end == start and end < size:  # one record longer than a slice: read it whole
                rows = scan_stream(f, path, size, start=start, tail_ok=True, check_crc=self.check_crc,
                                   on_error="skip", keep_empty=True, raw_histograms=True, chunk=READ_BYTES)
        if rows.end <= start:
            return None  # only a partial record so far: the next pass reads it
        return rows
