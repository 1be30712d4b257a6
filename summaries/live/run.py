"""A run of a live logdir: its files' read positions and its series by tag, each a bounded reservoir, and how one
scan of a file's new bytes is folded into them (``LiveRun.apply``), with the C scanner's ``keep`` (the capacity of
the reservoir a tag's rows go to) and the check that a reduced scan lost nothing (``reduction_exact``)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Mapping, NamedTuple, Optional, Tuple

import numpy as np

from ..reader.decode import FileRows
from ..reader.kinds import BLOB_SEQUENCE, SCALAR, TENSOR, default_reservoir
from . import extremes
from .packing import CompactHistogram
from .reservoir import Reservoir, fill_at_same_steps
from .values import (NULL_TENSOR, RUN_GRAPH_TAG, blob_sequence, compact_histogram, initial_metadata,
                     scalar_tensor_bytes)

__all__ = ["LiveRun", "Series", "FileCursor", "TagInfo", "tag_info", "UNBOUNDED"]

UNBOUNDED = 2 ** 62  # a reservoir capacity that keeps every point (TensorBoard's ``--samples_per_plugin x=all``)


@dataclass
class Series:
    """One tag of one run: its data class, SummaryMetadata (serialized) and reservoir of values; a scalar series
    also the extremes of every value logged (``live/extremes.py``)."""

    data_class: int
    metadata: bytes
    plugin: str
    reservoir: Reservoir
    extremes: extremes.Extremes = extremes.NO_EXTREMES
    listed: Optional[tuple] = field(default=None, repr=False, compare=False)  # (stats, extremes, TagInfo) last listed


class TagInfo(NamedTuple):
    """One non-empty series as the views list it: what TensorBoard's List* RPCs report of it."""

    run: str
    tag: str
    plugin: str
    data_class: int
    metadata: bytes          # its SummaryMetadata, serialized
    count: int               # points kept
    last_step: int           # the last step kept (TensorBoard's max_step)
    max_wall_time: float
    max_length: int          # blob sequences: the most blobs at one step (0 for the other data classes)
    last: float              # scalars: the last value (NaN for the other data classes)
    min: float               # scalars: the least and greatest value of the whole series (not only the points
    min_step: int            # kept; NaN left out, NaN and step -1 when none: ``live/extremes.py``)
    max: float
    max_step: int




def tag_info(run: str, tag: str, s: Series) -> TagInfo:
    """``s`` listed, the same object again while its points and extremes are (TensorBoard asks for every series'
    listing every few seconds; a reservoir's ``stats`` and a series' ``extremes`` are replaced, never changed)."""
    stats, found = s.reservoir.stats, s.extremes
    cached = s.listed
    if cached is not None and cached[0] is stats and cached[1] is found:
        return cached[2]
    count, last_step, max_wall = stats
    info = TagInfo(run, tag, s.plugin, s.data_class, s.metadata, count, last_step, max_wall,
                   max(len(v) for v in s.reservoir.data[2]) if s.data_class == BLOB_SEQUENCE else 0,
                   float(s.reservoir.last_value) if s.data_class == SCALAR else math.nan, *found)
    s.listed = (stats, found, info)
    return info


@dataclass
class FileCursor:
    offset: int = 0
    inode: Optional[int] = None


@dataclass
class LiveRun:
    """A run: its files' read positions, start time (earliest wall time of any event) and series by tag."""

    name: str
    capacity: Mapping[str, int]
    files: Dict[str, FileCursor] = field(default_factory=dict)
    start_time: Optional[float] = None
    series: Dict[str, Series] = field(default_factory=dict)
    plugins: Optional[FrozenSet[str]] = None   # the plugins whose values are kept (None: all)

    def _capacity(self, plugin: str, data_class: int) -> int:
        if not data_class or (self.plugins is not None and plugin not in self.plugins):
            return 0
        return self.capacity.get(plugin, default_reservoir(data_class))

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
        noted = []   # (scalar series, the scan's extremes of its values, whether they restart)
        for tag in set(rows.scalars) | set(rows.values):
            s = self.series.get(tag)
            if s is None:
                s = self._series(tag, *self._first_seen(tag, rows))
            cols = rows.scalars.get(tag)
            is_fresh = s.data_class == SCALAR and not len(s.reservoir) and s.reservoir.capacity > 0 and cols is not None
            if s.data_class == SCALAR and s.reservoir.capacity > 0 and cols is not None and len(cols[0]) and not (
                    is_fresh and tag not in rows.reduced_extremes):   # (fresh, unreduced: by its group, below)
                noted.append(self._scan_extremes(tag, s, cols, rows))
            if is_fresh:
                fresh.append((s, tag in rows.reduced_extremes, cols))
            else:
                self._apply_tag(tag, s, rows)
        for group, steps, walls, values in _same_steps(fresh):
            walls, values = np.array(walls), np.array(values, dtype=np.float32)   # (rows of one
            #                                                                   length: np.array, sooner than np.stack)
            found = extremes.of_rows(steps, walls, values)
            noted.extend((s, scanned, stepped_back)   # (a fresh series has no last step: a restart only within)
                         for (s, reduced), (scanned, stepped_back) in zip(group, found) if not reduced)
            fill_at_same_steps([s.reservoir for s, _ in group], steps, walls, values)
        for s, scanned, restarted in noted:
            s.extremes = extremes.of_points(*s.reservoir.data)[0] if restarted else extremes.merge(s.extremes, scanned)
        for offset, step, wall, graph, from_meta_graph in rows.graphs:
            if not from_meta_graph:  # the Rust server reads GraphDef events only
                self._offer_blobs(RUN_GRAPH_TAG, "graph", [(step, wall, [graph])])
        for offset, step, wall, tag, blob in rows.run_metadata:
            self._offer_blobs(tag, "run_metadata", [(step, wall, [blob])])

    @staticmethod
    def _scan_extremes(tag: str, s: Series, cols, rows: FileRows) -> tuple:
        """``(series, extremes of the scan's values of tag, whether the scan restarts the series)``: a step in the
        scan not above the one before it, or its first step not above the series' last (``live/extremes.py``)."""
        found = rows.reduced_extremes.get(tag)   # the scanner dropped rows: it counted them
        if found is not None:
            lo, lo_step, hi, hi_step, stepped_back = found
            scanned = (float(np.float32(lo)), lo_step, float(np.float32(hi)), hi_step)
        else:
            scanned, stepped_back = extremes.of_points(cols[1], cols[2], np.asarray(cols[3], dtype=np.float32))
        last_step = s.reservoir.stats[1]
        return s, scanned, stepped_back or (last_step is not None and int(cols[1][0]) <= last_step)

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
                    payload.SerializeToString() if what == "tensor" else NULL_TENSOR if what == "empty" else None)
            else:
                value = blob_sequence(what, payload, s.plugin)
            if value is not None:
                points.append((offset, step, wall, value))
        if cols is not None and len(cols[0]) and s.data_class == TENSOR and tag in rows.tensor_scalars:
            points.extend((int(o), int(st), float(w), scalar_tensor_bytes(float(v)))
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
    """``([(series, extremes reduced by the scanner)], steps, walls, values)`` groups of ``(series, reduced, scalar
    columns)`` whose steps are equal (and reservoirs of one capacity), in the order first met."""
    groups: List[tuple] = []
    candidates: Dict[tuple, List[tuple]] = {}   # groups by capacity, length, first and last step
    for s, reduced, (_, steps, walls, values) in fresh:
        if not len(steps):
            continue
        key = (s.reservoir.capacity, len(steps), int(steps[0]), int(steps[-1]))
        same = candidates.setdefault(key, [])
        group = next((g for g in same if not np.count_nonzero(g[1] != steps)), None)   # (equal lengths: ~3x
        #                                                                                  sooner than array_equal)
        if group is None:
            group = ([], steps, [], [])
            same.append(group)
            groups.append(group)
        group[0].append((s, reduced))
        group[2].append(walls)
        group[3].append(values)
    return groups
