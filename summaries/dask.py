"""Logdirs read in parallel on a Dask cluster: event files scanned on the workers, Dask DataFrames out.

::

    from dask.distributed import Client
    from tfevents.summaries.dask import read_scalars, read_logdir, write_parquet

    client = Client("tcp://scheduler:8786")            # or LocalCluster(); no client: Dask's local threads
    df = read_scalars("s3://bucket/sweep", tags="loss")  # dask.dataframe: run, tag, step, wall_time, value
    df.groupby(["run", "tag"]).value.min().compute()
    logdir = read_logdir("s3://bucket/sweep", kinds=("scalars", "histograms", "images"))
    logdir.histograms, logdir.images, logdir.problems  # DataFrames; the problems found, on the client
    write_parquet(df, "s3://bucket/sweep-parquet")     # hive layout: run=<escaped run>/part-NNNNN.parquet

The runs and their files are listed on the client (names only: no file is read there). Each event file is then
scanned by a task on a worker, which opens the storage URL itself (local paths must be the same on every worker:
a shared filesystem), and each run is merged by one task after its files' scans, with the restart rules of
:func:`tfevents.summaries.reader.load_logdir` (they span the files of a run). The merged runs stay in the workers'
memory (as with ``persist()``); only each run's problems and row counts come back to the client, which re-issues
the problems as :class:`ReadWarning` (``on_error='warn'``), raises :class:`CorruptedRecordError` on a corrupted
record (``'raise'``) or keeps quiet (``'skip'``), exactly as ``load_logdir`` does. So these functions return once
the logdir has been read, and the DataFrames they return equal ``load_logdir(...)``'s, index included: one
partition per run (runs without rows have none), in run order, rows in (tag, point) order, and the index a
``RangeIndex`` over all rows whose divisions are known.

Nothing here is imported by ``tfevents.summaries``; importing this module imports dask (the ``dask`` extra).
"""
from __future__ import annotations

import functools
import os
import urllib.parse
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np
import pandas as pd

try:
    import dask
    import dask.dataframe as dd
    from dask import delayed
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError("tfevents.summaries.dask needs Dask: pip install 'tfevents[dask]' "
                      "(dask[dataframe] and distributed)") from err

from .reader.decode import Problem
from .reader import kinds as kind_table
from .reader.load import check_read_options, reread_records
from .reader.merge import merge_run
from .reader.scan import ReadWarning, report, scan_file
from .reader.tables import pandas_table, record_columns, scalar_columns
from .reader.walk import discover, fsspec_url, is_url

__all__ = ["read_scalars", "read_logdir", "write_parquet", "DaskLogdir", "TABLE_KINDS", "COLUMNS",
           "escape_run", "kind_frame", "connect", "ReadWarning"]

COLUMNS: Dict[str, Tuple[str, ...]] = {kind: kind_table.KINDS[kind].column_names() for kind in kind_table.TABLE_KINDS
                                       if kind != "hparams"}
"""The columns of each kind's DataFrame: the kinds table's (``reader/kinds.py``), as ``Logdir.to_pandas(kind)`` has
them, with the same dtypes (``run`` and ``tag`` categorical over the whole logdir's names, scalars' ``value``
float32 when every series' is). Object columns hold numpy arrays (``bucket_limits``, ``bucket_counts``, the PR
curves' rows, ``value``), ``str`` or an array of str (``text``), tuples (``shape``); ``size`` is an encoded
image's, video's or audio clip's length in bytes (the bytes themselves stay in the files: ``load_logdir`` reads
them)."""
TABLE_KINDS = frozenset(COLUMNS)


def kind_frame(kind: str, series: Dict[Tuple[str, str], Any], runs: Optional[List[str]] = None,
               tags: Optional[List[str]] = None, value: Any = None) -> pd.DataFrame:
    """``{(run, tag): records}`` of one kind (as in a ``Logdir``) as that kind's DataFrame (:data:`COLUMNS`), series in
    (run, tag) order: ``Logdir.to_pandas(kind)``'s table (``reader/tables.pandas_table``). ``runs``, ``tags``: the
    categories of ``run`` and ``tag`` (the whole logdir's, so that partitions concatenate to one table); ``value``:
    the scalars' value dtype."""
    cols = scalar_columns(series) if kind == "scalars" else record_columns(kind, series)
    return pandas_table(kind, cols, runs, tags, value)


def _scan(path: str, fs, tags: Optional[str], kinds: Optional[frozenset], check_crc: bool):
    """One event file scanned on a worker (problems are kept in the rows, never warned there)."""
    return scan_file(path, tags=tags, kinds=kinds, check_crc=check_crc, on_error="skip", fs=fs)


def _rows_by_tag(kind: str, records: Dict[str, Any]) -> Dict[str, int]:
    """The rows each tag of a run gives ``kind``'s table (a histogram series a row per step)."""
    return {tag: len(value) for tag, value in records.items()}


def _merge(run: str, fs, mode: str, kinds: Optional[frozenset], table_kinds: Tuple[str, ...], *rows) -> dict:
    """One run merged on a worker: its records by kind, and what the client needs to know."""
    data = merge_run(run, list(rows), mode, kinds, reread=functools.partial(reread_records, fs))
    records = {kind: data.data[kind] for kind in table_kinds}
    return {"records": records, "info": {
        "run": run, "files": data.files, "file_problems": [p for r in rows for p in r.problems],
        "problems": data.problems, "out_of_order": dict(data.out_of_order), "purged": dict(data.purged),
        "rows": {kind: _rows_by_tag(kind, records[kind]) for kind in table_kinds},
        "float32": all(s.value.dtype == np.float32 for s in records.get("scalars", {}).values())}}


def _info(merged: dict) -> dict:
    return merged["info"]


def _partition(merged: dict, kind: str, start: int, runs: List[str], tags: List[str], value: Any) -> pd.DataFrame:
    """One run's frame of ``kind`` over the logdir's categories, with its rows' place in the whole result as the
    index."""
    run = merged["info"]["run"]
    df = kind_frame(kind, {(run, tag): v for tag, v in merged["records"][kind].items()}, runs, tags, value)
    return df.set_axis(pd.RangeIndex(start, start + len(df)), axis=0)


# ---------------------------------------------------------------- the client side

@dataclass
class DaskLogdir:
    """What :func:`read_logdir` read: one Dask DataFrame per kind (``frames``, also as attributes:
    ``logdir.scalars``), the runs and their files, every problem found (as ``Logdir.problems``), and the
    (run, kind, tag) counts of steps going back and of points purged by restarts."""

    path: str
    runs: List[str] = field(default_factory=list)
    files: Dict[str, List[str]] = field(default_factory=dict)
    frames: Dict[str, Any] = field(default_factory=dict)
    keys: Dict[str, List[Tuple[str, str]]] = field(default_factory=dict)
    problems: List[Problem] = field(default_factory=list)
    out_of_order: Dict[Tuple[str, str, str], int] = field(default_factory=dict)
    purged: Dict[Tuple[str, str, str], int] = field(default_factory=dict)
    restarts: str = "tensorboard"

    def __getattr__(self, name: str):
        frames = self.__dict__.get("frames", {})
        if name in frames:
            return frames[name]
        raise AttributeError("%r: no such attribute, and kind %r was not read (kinds read: %s)"
                             % (name, name, ", ".join(sorted(frames)) or "none"))

    def tags(self, kind: Optional[str] = None) -> Dict[str, List[Tuple[str, str]]]:
        """``{kind: sorted [(run, tag)]}`` of the kinds read (or just ``kind``), as ``Logdir.tags``."""
        kinds = [kind] if kind else sorted(self.keys)
        return {k: self.keys[k] for k in kinds if self.keys.get(k)}


def _check_table_kinds(kinds) -> frozenset:
    checked = kind_table.check_kinds(kinds) if kinds is not None else TABLE_KINDS
    other = checked - TABLE_KINDS
    if other:
        raise ValueError("the Dask reader has no table for kind(s) %s (they are per run, not per point: read them "
                         "with tfevents.summaries.load_logdir); its kinds are %s"
                         % (sorted(other), ", ".join(sorted(TABLE_KINDS))))
    if not checked:
        raise ValueError("kinds is empty; choose among %s" % ", ".join(sorted(TABLE_KINDS)))
    return checked


def _persist(objects: list, progress: bool) -> list:
    """``dask.persist`` on the current scheduler; with ``progress``, Dask's progress bar until they are done
    (distributed's text bar with a distributed client, else ``dask.diagnostics.ProgressBar``)."""
    if not objects:
        return []
    if not progress:
        return list(dask.persist(*objects))
    try:
        from distributed import default_client, progress as draw
        default_client()
    except (ImportError, ValueError):  # no distributed client: the local scheduler computes in persist
        from dask.diagnostics import ProgressBar
        with ProgressBar():
            return list(dask.persist(*objects))
    persisted = list(dask.persist(*objects))
    draw(persisted)  # blocks until they are done
    return persisted


def read_logdir(path: str, tags: Optional[str] = None, runs: Optional[str] = None, *,
                kinds: Optional[Iterable[str]] = None, restarts: str = "tensorboard", on_error: str = "warn",
                check_crc: bool = True, storage_options: Optional[dict] = None,
                progress: bool = False) -> DaskLogdir:
    """Read the runs under ``path`` on the current Dask client's workers into one Dask DataFrame per kind.

    ``kinds``: some of :data:`TABLE_KINDS` (default: all of them; see :data:`COLUMNS` for each kind's
    columns). ``tags``, ``runs``, ``restarts``, ``on_error``, ``check_crc`` and ``storage_options`` mean what
    they mean for ``load_logdir``; ``storage_options`` travel with the tasks to the workers (leave them out
    to let each worker use its own credentials). ``progress``: draw Dask's progress bar while reading.
    Returns when every run has been read (see the module's docstring); problems are reported on the client.
    """
    mode = check_read_options(on_error, restarts, tags, runs)
    table_kinds = tuple(sorted(_check_table_kinds(kinds)))
    wanted = frozenset(table_kinds)
    path = os.fspath(path)
    found = discover(path if is_url(path) else os.path.abspath(path), runs, storage_options)
    for problem in found.problems:
        report(problem, on_error)
    fs = found.fs
    # keys unique to this call: files change, and a key still held from an earlier read must not be reused
    call = uuid.uuid4().hex
    scan, merge = delayed(_scan), delayed(_merge)
    merged = []
    for i, (run, files) in enumerate(found.runs):
        scans = [scan(f, fs, tags, wanted, check_crc, dask_key_name="tfevents-scan-%s-%d-%d" % (call, i, j))
                 for j, f in enumerate(files)]
        merged.append(merge(run, fs, mode, wanted, table_kinds, *scans,
                            dask_key_name="tfevents-merge-%s-%d" % (call, i)))
    merged = _persist(merged, progress)
    infos = dask.compute(*[delayed(_info, pure=True)(m) for m in merged]) if merged else ()
    out = DaskLogdir(path, runs=[run for run, _ in found.runs], restarts=restarts, problems=list(found.problems))
    for info in infos:
        for problem in info["file_problems"]:
            report(problem, on_error)
        for problem in info["problems"]:
            if problem.kind == "purged" and on_error == "warn":
                warnings.warn(str(problem), ReadWarning, stacklevel=2)
        run = info["run"]
        out.files[run] = info["files"]
        out.problems.extend(info["problems"])
        for (kind, tag), n in info["out_of_order"].items():
            out.out_of_order[(run, kind, tag)] = n
        for (kind, tag), n in info["purged"].items():
            out.purged[(run, kind, tag)] = n
    value = np.float32 if all(info["float32"] for info in infos) else np.float64
    for kind in table_kinds:
        out.keys[kind] = [(info["run"], tag) for info in infos for tag in sorted(info["rows"][kind])]
        out.frames[kind] = _frame(kind, merged, [info["run"] for info in infos], [info["rows"][kind] for info in infos],
                                  value)
    return out


def _frame(kind: str, merged: list, run_names: List[str], rows: List[Dict[str, int]], value: Any):
    """The Dask DataFrame of ``kind`` over the persisted runs: a partition per run with rows, known divisions,
    ``run`` and ``tag`` categorical over the names that have rows (as ``Logdir.to_pandas(kind)``)."""
    lengths = [sum(counts.values()) for counts in rows]
    runs = sorted(run for run, n in zip(run_names, lengths) if n)
    tags = sorted({tag for counts in rows for tag, n in counts.items() if n})
    meta = kind_frame(kind, {}, runs, tags, value)
    parts, divisions, start = [], [], 0
    for m, n in zip(merged, lengths):
        if n:
            parts.append(delayed(_partition, pure=True)(m, kind, start, runs, tags, value))
            divisions.append(start)
            start += n
    # Dask would turn object columns into strings: ours hold arrays, tuples and text as they are
    with dask.config.set({"dataframe.convert-string": False}):
        if not parts:
            return dd.from_pandas(meta, npartitions=1)
        divisions.append(start - 1)
        return dd.from_delayed(parts, meta=meta, divisions=tuple(divisions), verify_meta=False)


def read_scalars(path: str, tags: Optional[str] = None, runs: Optional[str] = None, *,
                 restarts: str = "tensorboard", on_error: str = "warn", check_crc: bool = True,
                 storage_options: Optional[dict] = None, progress: bool = False):
    """Scalars under ``path`` as a Dask DataFrame with the columns ``run, tag, step, wall_time, value``, read on
    the current Dask client's workers; ``.compute()`` equals ``load_logdir(...).to_pandas()``: the same columns,
    dtypes (``run`` and ``tag`` categorical, ``value`` float32 where exact), values and index. Arguments as
    :func:`read_logdir`."""
    return read_logdir(path, tags, runs, kinds=("scalars",), restarts=restarts, on_error=on_error,
                       check_crc=check_crc, storage_options=storage_options, progress=progress).scalars


# ---------------------------------------------------------------- partitioned Parquet

_MAX_NAME_BYTES = 255  # one path component on common filesystems


def escape_run(run: str) -> str:
    """A run name as its hive partition directory ``run=<escaped>``: every byte of its UTF-8 form outside
    ``[A-Za-z0-9._~-]`` percent-encoded (``/`` -> ``%2F``, space -> ``%20``, ``%`` -> ``%25``; pyarrow's
    "uri" segment encoding), which DuckDB, Spark and pyarrow decode when they read the partition value back."""
    return "run=" + urllib.parse.quote(run, safe="", errors="surrogateescape")


def _write_partition(df: pd.DataFrame, path: str, storage_options: Optional[dict], index: int) -> int:
    """Write one partition's rows under ``path/run=<escaped run>/part-<index>.parquet`` (on a worker)."""
    import fsspec
    import pyarrow as pa
    import pyarrow.parquet as pq
    if not len(df):
        return 0
    fs, root = fsspec.core.url_to_fs(fsspec_url(path), **(storage_options or {}))
    root = root.rstrip("/")
    for run, part in df.groupby("run", sort=False):
        name = escape_run(run)
        if len(name.encode()) > _MAX_NAME_BYTES:
            raise ValueError("run %r is too long for a partition directory: %d bytes once escaped (at most %d)"
                             % (run, len(name.encode()), _MAX_NAME_BYTES))
        table = pa.Table.from_pandas(part.drop(columns=["run"]), preserve_index=False)
        fields = [pa.field(f.name, pa.string()) if pa.types.is_large_string(f.type) or pa.types.is_string_view(
            f.type) else f for f in table.schema]
        table = table.cast(pa.schema(fields))
        if "tag" in table.column_names and not pa.types.is_dictionary(table.schema.field("tag").type):
            table = table.set_column(table.column_names.index("tag"), "tag",
                                     table.column("tag").dictionary_encode())
        directory = root + "/" + name
        fs.makedirs(directory, exist_ok=True)
        with fs.open("%s/part-%05d.parquet" % (directory, index), "wb") as f:
            pq.write_table(table, f)
    return len(df)


def write_parquet(frame, path: str, *, storage_options: Optional[dict] = None, progress: bool = False) -> int:
    """Write a Dask DataFrame with a ``run`` column (say, :func:`read_scalars`'s) as hive-partitioned Parquet:
    ``path/run=<escaped run>/part-<partition>.parquet`` (see :func:`escape_run`), the ``run`` column in the
    directory names only, ``tag`` dictionary-encoded. The workers write (``path`` is a local directory they
    share, or an fsspec URL); returns the number of rows. Read it back with DuckDB
    (``read_parquet('OUT/*/*.parquet', hive_partitioning=true, hive_types={'run': 'VARCHAR'})``: without
    ``hive_types`` DuckDB turns all-numeric run names into numbers), pandas (``pd.read_parquet(OUT)``,
    ``run`` as a categorical) or Spark (``spark.read.parquet(OUT)``)."""
    if "run" not in frame.columns:
        raise ValueError("write_parquet needs a 'run' column to partition by; columns are %s" % list(frame.columns))
    write = delayed(_write_partition, pure=False)
    tasks = [write(part, os.fspath(path), storage_options, i) for i, part in enumerate(frame.to_delayed())]
    tasks = _persist(tasks, progress)
    return int(sum(dask.compute(*tasks)))


# ---------------------------------------------------------------- connecting

def connect(scheduler: str, **cluster_kwargs):
    """A ``distributed.Client`` for ``scheduler``: ``'local'`` (a LocalCluster with a worker process per CPU),
    ``'local:N'`` (N worker processes, one thread each unless ``cluster_kwargs`` say otherwise: they go to
    ``LocalCluster``) or a scheduler's address (``tcp://host:8786``).
    The client becomes the current one; close it (and its LocalCluster: ``client.cluster``) when done."""
    from distributed import Client, LocalCluster
    if scheduler == "local" or scheduler.startswith("local:"):
        n = scheduler[len("local:"):] if ":" in scheduler else ""
        if n and not (n.isdigit() and int(n) > 0):
            raise ValueError("local:N needs a positive number of workers, got %r" % scheduler)
        workers = int(n) if n else (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                    else os.cpu_count() or 1)
        options = dict(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
        options.update(cluster_kwargs)
        cluster = LocalCluster(**options)
        return Client(cluster)
    if "://" not in scheduler and ":" not in scheduler:
        raise ValueError("not a Dask scheduler: %r (give tcp://host:8786, host:8786, local or local:N)" % scheduler)
    return Client(scheduler)
