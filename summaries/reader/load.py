"""The offline reader: a logdir of event files -> runs -> columnar series, like TensorBoard loads it.

::

    from tfevents.summaries import load_logdir, read_scalars
    logdir = load_logdir("runs/")                 # every run, every kind
    s = logdir.scalars[("train", "loss")]          # ScalarSeries: .step, .wall_time, .value
    logdir.videos[("train", "rollout")][0].frames()    # VideoRecord: GIF frames [T, H, W, 3]
    logdir.meshes[("train", "cloud")][0].vertices      # MeshRecord: vertices, faces, colors, config
    logdir.embeddings[("train", "emb:00003")].matrix() # EmbeddingRecord: matrix, metadata, sprite
    df = logdir.to_pandas()                        # run, tag, step, wall_time, value
    logdir.to_pandas("histograms")                 # any kind (reader/tables.py); .to_arrow(), .to_polars()
    logdir.summary()                               # run, tag, last, min, max and their steps
    read_scalars("s3://bucket/runs", tags="loss")  # {(run, tag): ScalarSeries}

A run is each directory holding files whose name contains ``tfevents`` (its path relative to
the logdir, ``.`` for the logdir itself); a run's files are read in name order (walk.py: symlinked
directories followed once; FIFOs, sockets, devices and unreadable files skipped and reported). ``path`` may be a
logdir, a run directory, one event file, or an fsspec URL (``s3://``, ``gs://``, ``memory://``).

Checksums are checked. A file ending inside a record (still being written) is reported as
``truncated``; a bad checksum as ``corrupted`` with file and offset, after which reading resumes
at the next intact record. ``on_error`` says what else happens: ``'warn'`` (a ReadWarning per
problem), ``'raise'`` (CorruptedRecordError on the first corrupted record) or ``'skip'``; either
way, ``Logdir.problems`` lists every problem, including points purged by restarts
(``restarts=``: see :mod:`tfevents.summaries.reader.restarts`).

Record kinds beyond the columns: images whose data is a GIF are ``videos``; mesh plugin tensors are
``meshes`` keyed by the mesh name (not the ``<name>_VERTEX`` tags); ``embeddings`` come from each run
directory's ``projector_config.pbtxt`` (and the logdir's own, as run ``.``), keyed by tensor name (the
``tags=`` regex applies to it); tensors of other plugins are ``tensors`` with their dtype and shape.
"""
from __future__ import annotations

import functools
import itertools
import os
import posixpath
import re
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

from . import restarts as _restarts
from . import tables
from ..record import HEADER_SIZE
from .decode import Problem
from .kinds import KIND_NAMES as KINDS, KINDS as KIND_TABLE, SERIES_KINDS, add_kind_properties, check_kinds
from .export import scalars_to_pandas
from .merge import RunData, merge_run
from .projector import load_embeddings
from .scan import ReadWarning, report, scan_file
from .summary import SUMMARY_COLUMNS, summary_columns
from .walk import Discovery, discover, fsspec_url
from .types import (AudioRecord, EmbeddingRecord, HistogramSeries, HParamsRecord, ImageRecord, MeshRecord,
                    PrCurveRecord, ScalarSeries, TensorRecord, TextRecord, VideoRecord)

__all__ = ["load_logdir", "read_scalars", "Logdir", "Problem", "ReadWarning", "ScalarSeries", "HistogramSeries",
           "ImageRecord", "AudioRecord", "TextRecord", "PrCurveRecord", "TensorRecord", "HParamsRecord", "VideoRecord",
           "MeshRecord", "EmbeddingRecord", "KINDS", "list_runs", "check_read_options",
           "reread_records", "reduce_logdir", "ReducedRun"]

# Bytes of event files per worker process: the C scanner reads ~50 MB in 0.1-0.2 s, about what
# starting a worker and sending its columns back costs, so smaller shares are read in-process.
_BYTES_PER_WORKER = 64 << 20
PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class Logdir:
    """Everything read from a logdir: ``data`` by kind (``reader/kinds.py``), each kind also an attribute
    (``logdir.scalars``, ``logdir.histograms``, ...). A series kind's keys are ``(run, tag)``; ``meshes`` are keyed by
    ``(run, mesh name)``, ``embeddings`` by ``(run, tensor name)``, ``run_metadata`` by ``(run, tag)``, and
    ``hparams``, ``graphs`` and ``session_logs`` by run; runs are relative paths."""

    path: str
    runs: List[str] = field(default_factory=list)
    data: Dict[str, dict] = field(default_factory=lambda: {name: {} for name in KINDS})
    problems: List[Problem] = field(default_factory=list)
    files: Dict[str, List[str]] = field(default_factory=dict)
    out_of_order: Dict[Tuple[str, str, str], int] = field(default_factory=dict)  # (run, kind, tag) -> count
    purged: Dict[Tuple[str, str, str], int] = field(default_factory=dict)        # (run, kind, tag) -> points
    restarts: str = "tensorboard"
    # the walk that found its runs, with every folder's file names: the side files (run info, hparams.yaml) are
    # found in it without a second listing, as they were when the Logdir was read (None: a Logdir made otherwise)
    walk: Optional[Discovery] = field(default=None, repr=False, compare=False)

    def tags(self, kind: Optional[str] = None) -> Dict[str, List[Tuple[str, str]]]:
        """``{kind: sorted [(run, tag)]}`` for the series kinds and embeddings (or just ``kind``)."""
        kinds = [kind] if kind else SERIES_KINDS + ("embeddings",)
        return {k: sorted(self.data[k]) for k in kinds if self.data[k]}

    def to_pandas(self, kind: str = "scalars", *, pivot: bool = False, media: bool = False):
        """One kind of records as a DataFrame: ``run`` and ``tag`` (categorical), then the record's fields
        (:mod:`tfevents.summaries.reader.tables`; scalars: ``step, wall_time, value``). ``media=True`` adds the
        encoded bytes of images, audio and videos. Scalars with ``pivot=True``: one column per (run, tag)
        indexed by step (the last value written for a step)."""
        if kind == "scalars" and pivot:
            return scalars_to_pandas(self.scalars, pivot=True)
        if pivot:
            raise ValueError("pivot=True is for scalars, not %r" % (kind,))
        return tables.to_pandas(self, kind, media)

    def to_arrow(self, kind: str = "scalars", *, media: bool = False):
        """One kind of records as a ``pyarrow.Table`` (the columns of :meth:`to_pandas`; scalars wrap the series'
        own arrays without copying). Needs pyarrow (``pip install 'tfevents[arrow]'``)."""
        return tables.to_arrow(self, kind, media)

    def to_polars(self, kind: str = "scalars", *, media: bool = False):
        """One kind of records as a polars DataFrame, from :meth:`to_arrow`. Needs polars
        (``pip install 'tfevents[polars]'``)."""
        return tables.to_polars(self, kind, media)

    def summary(self):
        """Per (run, scalar tag): count, first and last step, the last value and the minimum and maximum with their
        steps, as a DataFrame (:mod:`tfevents.summaries.reader.summary`)."""
        import pandas as pd
        return pd.DataFrame(summary_columns(self.scalars), columns=list(SUMMARY_COLUMNS))

    def runs_table(self, *, runs: Optional[str] = None, where: Optional[str] = None, archived: bool = True,
                   restarts: Optional[str] = None, on_error: str = "warn", workers: Optional[int] = None,
                   storage_options: Optional[dict] = None):
        """The run table of these runs, as :func:`tfevents.summaries.runs_table` makes it from this Logdir (its
        series as read: no event file is read again; only the runs' small side files, hparams.yaml, Hydra's
        config and the run info). One row per run: hparams, labels, notes, archived, every scalar tag's
        last/min/max with their steps (:mod:`tfevents.summaries.runs.table`)."""
        from tfevents.summaries.runs.table import runs_table  # lazy: runs/ sits above the reader
        return runs_table(self, runs=runs, where=where, archived=archived, restarts=restarts, on_error=on_error,
                          workers=workers, storage_options=storage_options)

    def _repr_html_(self) -> str:
        """A notebook shows a Logdir as its interactive report, inline (``tfevents.viewer.notebook``)."""
        from tfevents.viewer.notebook import logdir_html  # lazy: the viewer sits above the reader; notebooks only
        return logdir_html(self)

    def add_run(self, data: RunData) -> None:
        """Put one merged run's records in (the reader's step after merging a run)."""
        run = data.run
        self.files[run] = data.files
        for name, value in data.data.items():
            if KIND_TABLE[name].key != "run":
                target = self.data[name]
                for tag, records in value.items():
                    target[(run, tag)] = records
            elif value:
                self.data[name][run] = value
        self.problems.extend(data.problems)
        for (kind, tag), n in data.out_of_order.items():
            self.out_of_order[(run, kind, tag)] = n
        for (kind, tag), n in data.purged.items():
            self.purged[(run, kind, tag)] = n


add_kind_properties(Logdir)


# ---------------------------------------------------------------- finding runs and files

def list_runs(path: PathLike, runs: Optional[str] = None, storage_options: Optional[dict] = None):
    """``(fs, [(run, [file, ...]), ...])`` for a logdir, run directory or event file.

    ``fs`` is None for local paths, else the fsspec filesystem; runs are sorted, files in name
    order; ``runs`` is a regex (re.search) on the run name; ``storage_options`` go to fsspec.
    Files that are not regular or not readable are skipped with a ReadWarning (see walk.py).
    """
    found = discover(path, runs, storage_options)
    for problem in found.problems:
        warnings.warn(str(problem), ReadWarning, stacklevel=2)
    return found.fs, found.runs


def _file_size(fs, path: str) -> int:
    try:
        return fs.size(path) if fs is not None else os.path.getsize(path)
    except (OSError, ValueError):
        return 0


# ---------------------------------------------------------------- loading

def check_read_options(on_error: str, restarts: str, tags: Optional[str], runs: Optional[str]) -> str:
    """Check the options every reader takes (ValueError naming the bad one); the normalized restarts mode."""
    if on_error not in ("warn", "raise", "skip"):
        raise ValueError("on_error must be 'warn', 'raise' or 'skip', got %r" % (on_error,))
    mode = _restarts.normalize_mode(restarts)
    for name, pattern in (("tags", tags), ("runs", runs)):
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as err:
                raise ValueError("%s is not a valid regex: %r (%s)" % (name, pattern, err)) from None
    return mode


@dataclass
class ReducedRun:
    """One run as a ``reduce`` callable made it in the run's read job (:func:`reduce_logdir`): ``value``, what it
    returned, and the run's ``files`` and ``problems`` (reported by the caller, as ``load_logdir`` reports them)."""

    run: str
    value: Any
    files: List[str]
    problems: List[Problem]


def _read_run(run: str, files: List[str], tags, kinds, check_crc, mode, fs,
              scanned: Optional[Callable[[int], None]] = None,
              reduce: Optional[Callable[[RunData], Any]] = None) -> Tuple[Union[RunData, ReducedRun], int]:
    """Scan one run's files and merge them: ``(RunData, how many of its problems the files reported)``, or with
    ``reduce``, ``(ReducedRun, ...)`` holding ``reduce(RunData)``.

    A job of its own (picklable arguments), so that a run's per-file rows (offsets, float64 values) live
    only while it is merged: the load's peak is the merged columns plus a few runs' rows, not every file's.
    A ``reduce`` runs in the job too, so a worker process sends back what it returns, not the run's series."""
    rows = []
    for i, path in enumerate(files):
        rows.append(scan_file(path, tags=tags, kinds=kinds, check_crc=check_crc, on_error="skip", fs=fs))
        if scanned:
            scanned(i)
    data = merge_run(run, rows, mode, kinds, reread=functools.partial(reread_records, fs))
    file_problems = sum(len(r.problems) for r in rows)
    if reduce is not None:
        return ReducedRun(run, reduce(data), data.files, data.problems), file_problems
    return data, file_problems


def _read_all(fs, groups, file_sizes: List[List[int]], tags, kinds, check_crc, mode, workers, progress,
              reduce: Optional[Callable[[RunData], Any]] = None) -> List[tuple]:
    """:func:`_read_run` over every run, in worker processes (local) or threads (remote) when it pays;
    results in run order. At most two jobs per worker are in flight, so finished runs' rows do not pile up.
    ``progress`` hears of every file read in-process, of every run read by a worker."""
    sizes = [sum(s) for s in file_sizes]
    total = sum(sizes)
    jobs = [(run, files) for run, files in groups]
    if workers is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        if fs is not None:  # remote reads wait on the network: threads, more than the CPUs
            workers = min(16, len(jobs))
        else:
            workers = max(1, min(cpus, len(jobs), total // _BYTES_PER_WORKER))
    workers = max(1, min(int(workers), len(jobs) or 1))
    done = 0
    results: List[Optional[tuple]] = [None] * len(jobs)
    if workers == 1:
        for i, (run, files) in enumerate(jobs):
            def scanned(f, i=i):
                nonlocal done
                done += file_sizes[i][f]
                progress(done, total)
            results[i] = _read_run(run, files, tags, kinds, check_crc, mode, fs, scanned if progress else None,
                                   reduce)
        return results
    if fs is None:
        import multiprocessing
        ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        pool = ProcessPoolExecutor(workers, mp_context=ctx)
    else:
        pool = ThreadPoolExecutor(workers)
    with pool:
        order = iter(sorted(range(len(jobs)), key=lambda i: -sizes[i]))  # biggest first keeps the workers busy
        running = {}
        for i in itertools.islice(order, 2 * workers):
            running[pool.submit(_read_run, *jobs[i], tags, kinds, check_crc, mode, fs, None, reduce)] = i
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                i = running.pop(future)
                results[i] = future.result()
                done += sizes[i]
                if progress:
                    progress(done, total)
                nxt = next(order, None)
                if nxt is not None:
                    running[pool.submit(_read_run, *jobs[nxt], tags, kinds, check_crc, mode, fs, None, reduce)] = nxt
    return results


def load_logdir(path: PathLike, tags: Optional[str] = None, runs: Optional[str] = None, *,
                kinds: Optional[Iterable[str]] = None, restarts: str = "tensorboard", on_error: str = "warn",
                workers: Optional[int] = None, check_crc: bool = True,
                progress: Optional[Callable[[int, int], None]] = None,
                storage_options: Optional[dict] = None, where: Optional[str] = None,
                archived: bool = True) -> Logdir:
    """Read every run under ``path`` into a :class:`Logdir`.

    ``tags`` / ``runs``: regexes (re.search) choosing tags and runs before anything is parsed.
    ``where``: a run query (:mod:`tfevents.summaries.runs.query`, on the run table: hparams, labels, every scalar
    tag's ``.last/.min/.max``), e.g. ``'lr < 0.01 and "val/acc".max > 0.9'``; ``archived=False`` leaves out the
    runs archived with ``tfevents runs archive`` (:mod:`tfevents.summaries.runs.choose`: one read when the load
    reads the scalars and hparams of every tag).
    ``kinds``: subset of :data:`KINDS` to keep (None: all). ``restarts``: 'tensorboard' (what
    ``tensorboard --logdir`` shows: the Rust data server's rule), 'rust', 'python' (the Python
    plugin loader), 'legacy' (EventAccumulator) or 'none'. ``on_error``: 'warn', 'raise' or
    'skip'. ``workers``: processes for local files (None: as many as pay off; 1: in-process).
    ``progress(done_bytes, total_bytes)`` is called as files finish. ``storage_options`` are
    passed to fsspec for URLs (e.g. ``{"client_kwargs": {"endpoint_url": ...}}`` for S3).
    """
    if where is not None or not archived:
        from ..runs.choose import load_chosen  # lazy: runs/ sits above the reader (the run table reads through it)
        return load_chosen(path, where, archived, tags=tags, runs=runs, kinds=kinds, restarts=restarts,
                           on_error=on_error, workers=workers, check_crc=check_crc, progress=progress,
                           storage_options=storage_options)
    mode = check_read_options(on_error, restarts, tags, runs)
    kinds = check_kinds(kinds)
    found, read = _discover_and_read(path, tags, runs, kinds, mode, on_error, workers, check_crc, progress,
                                     storage_options, listing=True)
    fs, groups = found.fs, found.runs
    logdir = Logdir(os.fspath(path), runs=[run for run, _ in groups], restarts=restarts, problems=list(found.problems),
                    walk=found)
    for data, file_problems in read:
        _report_run_problems(data.problems, file_problems, on_error)
        logdir.add_run(data)
    if kinds is None or "embeddings" in kinds:
        for problem in _load_embeddings(logdir, fs, path, groups, tags, runs):
            if on_error != "skip":
                warnings.warn(str(problem), ReadWarning, stacklevel=2)
    return logdir


def _discover_and_read(path, tags, runs, kinds, mode, on_error, workers, check_crc, progress, storage_options,
                       reduce=None, listing: bool = False) -> Tuple[Discovery, List[tuple]]:
    """The walk (its problems reported) and :func:`_read_all` over the runs it found."""
    found = discover(path, runs, storage_options, listing=listing)
    for problem in found.problems:
        report(problem, on_error)
    sizes = [[_file_size(found.fs, f) for f in files] for _, files in found.runs]
    return found, _read_all(found.fs, found.runs, sizes, tags, kinds, check_crc, mode, workers, progress, reduce)


def _report_run_problems(problems: List[Problem], file_problems: int, on_error: str) -> None:
    """A run's problems as ``on_error`` says: its files' first, then the points its restarts purged (a warning)."""
    for problem in problems[:file_problems]:
        report(problem, on_error)
    for problem in problems[file_problems:]:
        if problem.kind == "purged" and on_error == "warn":
            warnings.warn(str(problem), ReadWarning, stacklevel=3)


def reduce_logdir(path: PathLike, reduce: Callable[[RunData], Any], tags: Optional[str] = None,
                  runs: Optional[str] = None, *, kinds: Optional[Iterable[str]] = None, restarts: str = "tensorboard",
                  on_error: str = "warn", workers: Optional[int] = None, check_crc: bool = True,
                  storage_options: Optional[dict] = None, listing: bool = False
                  ) -> Tuple[Discovery, List[ReducedRun]]:
    """Read every run under ``path`` as :func:`load_logdir` does (same options), but reduce each run to
    ``reduce(RunData)`` in the job that read it (a worker process sends back what ``reduce`` returns, not the
    run's series; ``reduce`` must be picklable: a module-level function or a ``functools.partial`` of one).

    Returns the walk (:class:`~tfevents.summaries.reader.walk.Discovery`; ``listing=True`` keeps every folder's
    file names, see there) and a :class:`ReducedRun` per run, in run order. Problems are reported as
    ``load_logdir`` reports them. Embeddings are not read (they are not in event files)."""
    mode = check_read_options(on_error, restarts, tags, runs)
    kinds = check_kinds(kinds)
    found, read = _discover_and_read(path, tags, runs, kinds, mode, on_error, workers, check_crc, None,
                                     storage_options, reduce, listing)
    for reduced, file_problems in read:
        _report_run_problems(reduced.problems, file_problems, on_error)
    return found, [reduced for reduced, _ in read]


def reread_records(fs, path: str, offsets: List[int]) -> List[bytes]:
    """The payloads of the records at ``offsets`` of one event file (already checked when scanned)."""
    out = []
    with (fs.open(path, "rb") if fs is not None else open(path, "rb")) as f:
        for offset in offsets:
            f.seek(offset)
            header = f.read(HEADER_SIZE)
            if len(header) < HEADER_SIZE:
                raise ValueError("%s ends before the record at offset %d" % (path, offset))
            out.append(f.read(int.from_bytes(header[:8], "little")))
    return out


def _load_embeddings(logdir: Logdir, fs, path, groups, tags, runs) -> List[Problem]:
    """``logdir.embeddings`` from the projector config of every run directory, and of the logdir itself
    (run ``.``) when it is a directory without event files of its own, as TensorBoard's projector looks."""
    dirs = [(run, (posixpath if fs is not None else os.path).dirname(files[0])) for run, files in groups if files]
    if not any(run == "." for run, _ in dirs) and (runs is None or re.search(runs, ".")):
        root = os.fspath(path)
        if fs is not None:
            root = fs._strip_protocol(fsspec_url(root)).rstrip("/") or "/"
            if fs.isdir(root):
                dirs.append((".", root))
        elif os.path.isdir(root):
            dirs.append((".", root))
    accept = re.compile(tags).search if tags is not None else None
    found_problems: List[Problem] = []
    for run, directory in sorted(dirs):
        found, problems = load_embeddings(fs, directory, accept)
        for name, record in found.items():
            logdir.embeddings[(run, name)] = record
        found_problems.extend(problems)
    logdir.problems.extend(found_problems)
    return found_problems


def read_scalars(path: PathLike, tags: Optional[str] = None, runs: Optional[str] = None, *,
                 restarts: str = "tensorboard", on_error: str = "warn", workers: Optional[int] = None,
                 storage_options: Optional[dict] = None) -> Dict[Tuple[str, str], ScalarSeries]:
    """``{(run, tag): ScalarSeries}`` for every scalar series under ``path`` (see load_logdir)."""
    return load_logdir(path, tags, runs, kinds=("scalars",), restarts=restarts, on_error=on_error,
                       workers=workers, storage_options=storage_options).scalars
