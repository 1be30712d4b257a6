"""A live logdir: each ``reload()`` reads only the bytes appended since the last, into bounded series.

This is the loader behind ``tfevents serve``, with the Rust data server's model of a logdir (its
``logdir.rs``, ``run.rs``, ``data_compat.rs``):

- a run is a directory of event files (``walk.discover``); runs whose files are gone are dropped;
- every file keeps a byte offset; a pass scans from there (the C fast path), and a record the file ends
  inside is read again next pass, not reported. The scanner reduces the rows of a scalar series, and the lone
  histograms of a histogram series, to what its reservoir would keep of them as it reads, so a scan holds little
  whatever the file's length (``read.HOLD_BYTES``). A file that shrank or was replaced (new inode) is read
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

import gc
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Collection, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from tfevents.proto import plugin_hparams_pb2, summary_pb2
from ..reader.decode import Problem
from ..reader.kinds import BLOB_SEQUENCE, SCALAR, TENSOR, UNKNOWN
from ..reader.walk import Discovery, discover
from .read import read_run
from .reservoir import sample_indices
from .run import UNBOUNDED, LiveRun, Series, TagInfo, tag_info
from .workers import PROCESS_BYTES, jobs_of, read_in_processes, start_pool

__all__ = ["LiveLogdir", "TagInfo", "Points", "parse_samples_per_plugin", "SCALAR", "TENSOR", "BLOB_SEQUENCE",
           "UNKNOWN", "UNBOUNDED"]

log = logging.getLogger("tfevents.serve")

# a run with less than this to read in a pass is read by the pass's own thread, not shared among threads: ~0.3 ms
# a file of Python work then outweighs the C scan, and two threads contending for the GIL were slower than one
# (10,000 runs of 270 kB: 10.4 s with 2 threads, 9.0 s with 1; 1,000 runs of 2.7 MB: 5.0 s with 2, 8.2 s with 1)
SHARED_RUN_BYTES = 1 << 20


PRESPAWN_ENTRIES = 100   # a first pass starts its worker processes before the walk when the logdir's top folder
#                          lists at least this many entries (a sweep); for fewer, the walk tells whether to start them


def _many_entries(path: str) -> bool:
    """Whether ``path`` is a local folder listing at least ``PRESPAWN_ENTRIES`` entries (stops counting there)."""
    if "://" in path:
        return False
    try:
        with os.scandir(path) as entries:
            return sum(1 for _, _ in zip(range(PRESPAWN_ENTRIES), entries)) >= PRESPAWN_ENTRIES
    except OSError:
        return False


def _bytes_to_read(run: LiveRun, files: List[str]) -> int:
    """The bytes of ``files`` (local) that ``run`` has not read: beyond its cursor, or the whole of a file that is
    new, shrank or was replaced (a new inode); a new file, or one that cannot be stat'ed, counts at least 1 (its
    scan makes its cursor, or reports it), so 0 means the run has nothing to read."""
    pending = 0
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            pending += 1
            continue
        cursor = run.files.get(path)
        if cursor is None or st.st_size < cursor.offset or cursor.inode not in (None, st.st_ino):
            pending += max(1, st.st_size)
        else:
            pending += st.st_size - cursor.offset
    return pending


class Points(NamedTuple):
    """A series' kept points, oldest first: ``step`` int64, ``wall_time`` float64, ``value`` (float32 scalars, or
    objects: tensors as the loader keeps them, see :func:`tensor_bytes`; blob sequences as lists of bytes)."""

    step: np.ndarray
    wall_time: np.ndarray
    value: np.ndarray


def parse_samples_per_plugin(text: Optional[str]) -> Dict[str, int]:
    """'scalars=1000,images=all' -> {'scalars': 1000, 'images': UNBOUNDED}: TensorBoard's flag, where 'all' and 0
    both mean every point."""
    out: Dict[str, int] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError("expected PLUGIN=COUNT, got %r" % item)
        value = value.strip()
        try:
            count = UNBOUNDED if value == "all" else int(value)
        except ValueError:
            raise ValueError("%r: the count must be an integer or 'all'" % item) from None
        if count < 0:
            raise ValueError("%r: the count must be non-negative" % item)
        out[name.strip()] = count or UNBOUNDED
    return out


class LiveLogdir:
    """Runs of a logdir kept current by :meth:`reload`, read through its read API (the one boundary between the
    loader and the views, as the Rust data server's ``Commit``): :meth:`run_names`, :meth:`run_starts`,
    :meth:`plugin_names`, :meth:`tags`, :meth:`points`, :meth:`blob` and :meth:`hparams` each take the lock
    themselves and return plain values, so a reload pass may run beside them.

    ``samples_per_plugin``: reservoir size by plugin name (TensorBoard's flag), e.g. ``{"scalars": 1000}``;
    ``plugins``: the only plugins whose values are kept (say ``{"scalars"}``; None: every plugin).
    ``on_problem(problem)`` is called once per problem (corrupted record, unreadable file). ``threads``: files
    scanned at once (default: the CPUs, at most 4: a scan holds little, ``HOLD_BYTES``, and does most of its work
    without the GIL, so on benchmarks/serve.py's 2-CPU machine two threads reached a full load sooner than one on
    both logdirs, scalars only 2.1 s against 2.9 s, with histograms and images 3.0 s against 3.3 s, for ~7-10 MB
    more at the peak). ``processes``: worker processes for a first read of many runs (``workers.py``: when the runs a
    pass finds new hold at least ``PROCESS_BYTES`` on a local disk; 1, the default: none). A program that sets it
    must start from a ``if __name__ == "__main__":`` guard, as any program using ``multiprocessing``'s ``spawn``.

    ``choose(live)``, when given, is called after every pass with the loader itself and returns the names of the
    runs the read API shows (None: every run): ``tfevents serve --where`` and the archived runs left out. It reads
    every run through :meth:`run_names` and :meth:`tags` with ``every=True`` (a query on a metric needs the runs it
    leaves out too) and :meth:`hparams`; the choice takes effect as a whole when it returns, so a view never sees half of it.
    """

    def __init__(self, path: str, samples_per_plugin: Optional[Mapping[str, int]] = None,
                 storage_options: Optional[dict] = None,
                 on_problem: Optional[Callable[[Problem], None]] = None, check_crc: bool = True,
                 threads: Optional[int] = None, plugins: Optional[Iterable[str]] = None,
                 choose: Optional[Callable[["LiveLogdir"], Optional[Collection[str]]]] = None,
                 processes: int = 1):
        self.path = os.fspath(path)
        self.capacity = dict(samples_per_plugin or {})
        self.plugins = frozenset(plugins) if plugins is not None else None
        self.storage_options = storage_options
        self.on_problem = on_problem or (lambda p: log.warning("%s", p))
        self.check_crc = check_crc
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        self.threads = max(1, threads if threads is not None else min(4, cpus))
        self.processes = max(1, int(processes))
        self.runs: Dict[str, LiveRun] = {}
        self.problems: List[Problem] = []
        self.lock = threading.RLock()
        self.passes = 0
        self._reported = set()
        self.choose = choose
        # the runs shown (None: all), as ``choose`` last said; none before its first answer
        self.chosen: Optional[frozenset] = frozenset() if choose is not None else None
        self.found: Optional[Discovery] = None     # the last pass's walk, with every folder's file names
        # run -> tag -> (reservoir stats, extremes, the pass that changed them), as last seen: ``changed_after``
        self._changes: Dict[str, Dict[str, tuple]] = {}
        self._folders: dict = {}   # the walk's listing of each folder, used again while the folder is unchanged

    # -- the read API

    def _shown(self, every: bool = False) -> Dict[str, LiveRun]:
        """The runs the read API shows (the caller holds the lock): every run, or those ``choose`` chose."""
        chosen = self.chosen
        if every or chosen is None:
            return self.runs
        return {name: run for name, run in self.runs.items() if name in chosen}

    def _shown_run(self, name: str) -> Optional[LiveRun]:
        """The run ``name`` if the read API shows it (the caller holds the lock): one lookup, not :meth:`_shown`'s
        dict of every run (a chart of 10,000 runs asks for each run's points)."""
        chosen = self.chosen
        return self.runs.get(name) if chosen is None or name in chosen else None

    def run_names(self, every: bool = False) -> List[str]:
        """Every run found (of those chosen, unless ``every``), sorted."""
        with self.lock:
            return sorted(self._shown(every))

    def run_starts(self) -> List[Tuple[str, float]]:
        """``(run, start time)`` of the runs that have read an event with a finite wall time, by start time."""
        with self.lock:
            found = [(run.start_time, name) for name, run in self._shown().items() if run.start_time is not None]
        return [(name, start) for start, name in sorted(found)]

    def file_count(self, run: str) -> int:
        """How many event files ``run`` has (0: no such run)."""
        with self.lock:
            r = self.runs.get(run)
            return len(r.files) if r is not None else 0

    def start_time(self, run: str) -> Optional[float]:
        """The earliest wall time of any event of ``run`` (None: no such run, or none read yet)."""
        with self.lock:
            r = self._shown(True).get(run)
            return r.start_time if r is not None else None

    def plugin_names(self) -> List[str]:
        """The plugins of every series with a data class, sorted."""
        with self.lock:
            return sorted({s.plugin for run in self._shown().values() for s in run.series.values()
                           if s.data_class != UNKNOWN})

    def tags(self, runs: Optional[Iterable[str]] = None, tags: Optional[Iterable[str]] = None,
             plugin: Optional[str] = None, data_class: Optional[int] = None, every: bool = False,
             changed_after: Optional[int] = None) -> List[TagInfo]:
        """The non-empty series chosen by exact run names, exact tags, plugin and data class (None: any), by run
        then tag as found; of the runs ``choose`` chose, unless ``every``; with ``changed_after``, only those whose
        points or extremes changed in a pass after that one (``passes`` counts them: a poller keeps the count it
        saw before it read, and asks for what changed after it)."""
        with self.lock:
            if runs is not None:
                chosen = [(r, run) for r, run in ((r, self.runs.get(r) if every else self._shown_run(r))
                                                  for r in runs) if run is not None]
            else:
                chosen = list(self._shown(every).items())
            found = []
            for name, run in chosen:
                marks = self._changes.get(name, {})
                items = ([(t, run.series[t]) for t in tags if t in run.series] if tags is not None
                         else list(run.series.items()))
                for tag, s in items:
                    if s.reservoir.stats[0] and (plugin is None or s.plugin == plugin) and (
                            data_class is None or s.data_class == data_class) and (
                            changed_after is None or marks.get(tag, (0, 0, 0))[2] > changed_after):
                        found.append(tag_info(name, tag, s))
        return found

    def _series_of(self, run: str, tag: str) -> Optional[Series]:
        with self.lock:
            r = self._shown_run(run)
            return r.series.get(tag) if r is not None else None

    def points(self, run: str, tag: str, num_points: Optional[int] = None) -> Optional[Points]:
        """The kept points of ``run``'s ``tag`` (None: no such series), at most ``num_points`` of them: the last and
        ``num_points - 1`` others chosen by the reservoir's own rule (``reservoir.sample_indices``)."""
        s = self._series_of(run, tag)
        if s is None:
            return None
        steps, walls, values = s.reservoir.data
        if num_points is not None and num_points < len(steps):
            keep = sample_indices(steps, num_points)
            steps, walls, values = steps[keep], walls[keep], values[keep]
        return Points(steps, walls, values)

    def steps_and_values(self, run: str, tag: str) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """``(step, value)`` of every kept point of ``run``'s ``tag`` (None: no such series): :meth:`points`
        without the wall times, which stay packed (a density of 10,000 runs unpacks half as much)."""
        s = self._series_of(run, tag)
        return s.reservoir.steps_values if s is not None else None

    def steps_and_values_of(self, runs: Sequence[str], tag: str) -> List[Optional[Tuple[np.ndarray, np.ndarray]]]:
        """:meth:`steps_and_values` of ``tag`` for each of ``runs``, the runs looked up under one hold of the lock
        (a density of 10,000 runs)."""
        with self.lock:
            found = [self._shown_run(run) for run in runs]
            series = [r.series.get(tag) if r is not None else None for r in found]
        return [s.reservoir.steps_values if s is not None else None for s in series]

    def blob(self, run: str, tag: str, step: int, index: int) -> bytes:
        """Blob ``index`` of the blob sequence ``run``/``tag`` at ``step``; LookupError saying which part is
        missing (the run, the tag, the step — evicted or never logged — or the index)."""
        with self.lock:
            r = self._shown_run(run)
            s = r.series.get(tag) if r is not None else None
        if r is None:
            raise LookupError("no such run: %r" % run)
        if s is None or s.data_class != BLOB_SEQUENCE:
            raise LookupError("run %r has no such tag: %r" % (run, tag))
        steps, _, values = s.reservoir.data
        where = np.flatnonzero(steps == step)
        if not len(where):
            raise LookupError("run %r, tag %r has no step %d; may have been evicted" % (run, tag, step))
        blobs = values[where[0]]
        if index >= len(blobs):
            raise LookupError("blob sequence at run %r, tag %r, step %d has no index %d (length: %d)"
                              % (run, tag, step, index, len(blobs)))
        return blobs[index]

    def hparams(self, run: str) -> Dict[str, object]:
        """The hyperparameters ``run`` logged (an HParams ``session_start_info``), by name: numbers, strings and
        bools as they were logged; ``{}`` when it logged none (or its values are kept at 0 points)."""
        with self.lock:
            r = self.runs.get(run)
            metadata = [s.metadata for s in r.series.values() if s.plugin == "hparams"] if r is not None else []
        out: Dict[str, object] = {}
        for blob in metadata:
            content = summary_pb2.SummaryMetadata.FromString(blob).plugin_data.content
            data = plugin_hparams_pb2.HParamsPluginData.FromString(content)
            if data.WhichOneof("data") == "session_start_info":
                for name, value in data.session_start_info.hparams.items():
                    which = value.WhichOneof("kind")
                    out[name] = getattr(value, which) if which in ("number_value", "string_value",
                                                                   "bool_value") else None
        return out

    def _report(self, problem: Problem) -> None:
        key = (problem.path, problem.offset, problem.kind)
        if key not in self._reported:
            self._reported.add(key)
            self.problems.append(problem)
            self.on_problem(problem)

    def reload(self) -> None:
        """One pass: find runs and files, read what was appended to each file since the last pass."""
        # A first pass over a local logdir of many runs starts its worker processes before the walk, which their
        # start (importing the reader) then overlaps
        early = start_pool(self.processes) if self.processes > 1 and not self.passes and _many_entries(self.path) \
            else None
        try:
            self._pass(early)
        finally:
            if early is not None:
                early.shutdown(wait=False, cancel_futures=True)

    def _pass(self, pool) -> None:
        try:
            found = discover(self.path, storage_options=self.storage_options, listing=True, cache=self._folders)
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
                    self.runs[name] = LiveRun(name, self.capacity, plugins=self.plugins)
        fs = found.fs if found is not None else None
        work = []
        for name, files in sorted(groups.items()):
            run = self.runs[name]
            for gone in [p for p in run.files if p not in set(files)]:
                del run.files[gone]
            work.append((run, files))
        # Runs with much to read are read by a few threads at once (the C scanner releases the GIL while it frames
        # and decodes); the others, whose time goes to Python's per-file work, by this thread alone afterwards,
        # since threads contending for the GIL there are slower than one (``SHARED_RUN_BYTES``). Within a run,
        # files in name order, each in scans that hold at most about HOLD_BYTES, folded in as they are read, so a
        # pass holds at most one scan's rows per thread.
        if fs is None:
            pending = [_bytes_to_read(run, files) for run, files in work]
            work, pending = self._read_new_in_processes(work, pending, pool)
            shared = [w for w, size in zip(work, pending) if size >= SHARED_RUN_BYTES]
            alone = [w for w, size in zip(work, pending) if 0 < size < SHARED_RUN_BYTES]   # (0: nothing new)
        else:
            shared, alone = work, []
        touched = {run.name for run, _ in shared + alone}   # (and the runs the workers read: new, so unmarked)
        if self.threads > 1 and len(shared) > 1:
            with ThreadPoolExecutor(self.threads) as pool:
                for future in [pool.submit(self._read_run, fs, run, files) for run, files in shared]:
                    future.result()
        else:
            alone = shared + alone
        for run, files in alone:
            self._read_run(fs, run, files)
        self.found = found
        if self.choose is not None:
            chosen = self.choose(self)
            self.chosen = frozenset(chosen) if chosen is not None else None
        self._note_changes(self.passes + 1, touched)
        self.passes += 1

    def _note_changes(self, this_pass: int, touched: Collection[str]) -> None:
        """Mark each series whose points or extremes this pass changed (both are replaced, never changed in place,
        so an identity check per series tells) with ``this_pass``: those of the runs read in it (``touched``) and
        of runs new to the marks; forget the runs that are gone."""
        with self.lock:
            seen, changes = self._changes, {}
            for name, run in self.runs.items():
                before = seen.get(name)
                if before is not None and name not in touched:
                    changes[name] = before
                    continue
                before, marks = before or {}, {}
                for tag, s in run.series.items():
                    stats, found = s.reservoir.stats, s.extremes
                    mark = before.get(tag)
                    marks[tag] = mark if mark is not None and mark[0] is stats and mark[1] is found else (
                        stats, found, this_pass)
                changes[name] = marks
            self._changes = changes

    def _read_new_in_processes(self, work: List[tuple], pending: List[int], pool=None
                               ) -> Tuple[List[tuple], List[int]]:
        """Read the runs of ``work`` never read before in worker processes (``workers.py``) when there are
        ``processes`` and those runs hold at least ``PROCESS_BYTES`` to read; ``(work, pending)`` of the others."""
        new = [i for i, (run, _) in enumerate(work) if not run.files]
        if not new or self.processes < 2 or sum(pending[i] for i in new) < PROCESS_BYTES:
            return work, pending

        def install(runs: List[LiveRun], problems: List[Problem]) -> None:
            for problem in problems:
                self._report(problem)
            with self.lock:
                for run in runs:
                    if run.name in self.runs:   # (always: a pass alone adds and drops runs)
                        self.runs[run.name] = run
            # The runs live until replaced and hold no reference cycles (refcounting frees them), so they are moved
            # out of the cyclic collector's sight: else its full collections, as the heap grows, traverse every run
            # read so far (~0.3 s each at 10,000 runs, ~0.7 s of a first pass in all). Only a server asks for
            # worker processes, and what else it holds lives as long.
            gc.freeze()

        jobs = jobs_of([(work[i][0].name, work[i][1], pending[i]) for i in new])
        read_in_processes(jobs, self.processes, self.capacity, self.plugins, self.check_crc, install, pool=pool)
        rest = sorted(set(range(len(work))) - set(new))
        return [work[i] for i in rest], [pending[i] for i in rest]

    def _read_run(self, fs, run: LiveRun, files: List[str]) -> None:
        read_run(fs, run, files, self.check_crc, self._report, self.lock)
