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
from .reader.export import scalars_to_pandas
from .reader.load import _check_kinds, _reread, check_read_options
from .reader.merge import merge_run
from .reader.scan import ReadWarning, report, scan_file
from .reader.walk import discover, is_url

__all__ = ["read_scalars", "read_logdir", "write_parquet", "DaskLogdir", "TABLE_KINDS", "COLUMNS",
           "escape_run", "kind_frame", "connect", "ReadWarning"]

_META = ("run", "tag", "step", "wall_time")
COLUMNS: Dict[str, Tuple[str, ...]] = {
    "scalars": _META + ("value",),
    "histograms": _META + ("min", "max", "num", "sum", "sum_squares", "bucket_limits", "bucket_counts"),
    "images": _META + ("sample", "width", "height", "colorspace", "size"),
    "videos": _META + ("sample", "width", "height", "size"),
    "audio": _META + ("sample", "sample_rate", "num_channels", "length_frames", "content_type", "label", "size"),
    "text": _META + ("text",),
    "pr_curves": _META + ("data",),
    "tensors": _META + ("dtype", "shape", "value"),
}
"""The columns of each kind's DataFrame. ``size`` is the encoded image/video/audio's length in bytes (the
bytes themselves stay in the files: ``load_logdir`` reads them); object columns hold numpy arrays
(``bucket_limits``, ``bucket_counts``, ``data``, ``value``), ``str`` or an array of str (``text``), tuples (``shape``)."""
TABLE_KINDS = frozenset(COLUMNS)
_INT = ("step", "sample", "width", "height", "colorspace", "size", "num_channels", "length_frames")
_FLOAT = ("wall_time", "min", "max", "num", "sum", "sum_squares", "sample_rate", "value")  # tensors' value: arrays
_STR = ("content_type", "label", "dtype")


# ---------------------------------------------------------------- one run's rows as DataFrames (on the workers)

def _rows(kind: str, records) -> Dict[str, list]:
    """The non-key columns of one (run, tag)'s records of ``kind``."""
    if kind == "histograms":
        s = records
        return {"step": s.step, "wall_time": s.wall_time, "min": s.min, "max": s.max, "num": s.num, "sum": s.sum,
                "sum_squares": s.sum_squares, "bucket_limits": list(s.bucket_limits),
                "bucket_counts": list(s.bucket_counts)}
    columns = COLUMNS[kind][2:]
    get = {
        "images": lambda r: (r.step, r.wall_time, r.sample, r.width, r.height, r.colorspace, len(r.data)),
        "videos": lambda r: (r.step, r.wall_time, r.sample, r.width, r.height, len(r.data)),
        "audio": lambda r: (r.step, r.wall_time, r.sample, r.sample_rate, r.num_channels, r.length_frames,
                            r.content_type, r.label, len(r.data)),
        "text": lambda r: (r.step, r.wall_time, r.text),
        "pr_curves": lambda r: (r.step, r.wall_time, r.data),
        "tensors": lambda r: (r.step, r.wall_time, str(r.value.dtype), tuple(r.value.shape), r.value),
    }[kind]
    values = [get(r) for r in records]
    return {name: [v[i] for v in values] for i, name in enumerate(columns)}


def _typed(kind: str, name: str, values: list) -> pd.Series:
    """One column with its fixed dtype: int64, float64, str, or object (arrays, tuples, text)."""
    if name in ("run", "tag") or name in _STR:
        return pd.Series(values, dtype="str")
    if name in _INT:
        return pd.Series(np.asarray(values, dtype=np.int64))
    if name in _FLOAT and not (kind == "tensors" and name == "value"):
        return pd.Series(np.asarray(values, dtype=np.float64))
    out = np.empty(len(values), dtype=object)  # element by element: arrays stay arrays, never stacked
    for i, v in enumerate(values):
        out[i] = v
    return pd.Series(out, dtype=object)


def _repeated(names: List[str], counts: List[int]) -> pd.Series:
    """``names[i]`` repeated ``counts[i]`` times as a ``str`` column: the Arrow string array's buffers are built
    directly (pandas converting an object array of the same strings gives the same column, several times slower)."""
    import pyarrow as pa
    encoded = [n.encode("utf-8", "surrogatepass") for n in names]
    size = sum(len(e) * c for e, c in zip(encoded, counts))
    if size >= 1 << 31:  # beyond 32-bit offsets: let Arrow and pandas do it
        return pd.Series(np.repeat(np.array(names, dtype=object), counts), dtype="str")
    offsets = np.zeros(sum(counts) + 1, dtype=np.int32)
    np.cumsum(np.repeat(np.array([len(e) for e in encoded], dtype=np.int32), counts), out=offsets[1:])
    data = b"".join(e * c for e, c in zip(encoded, counts))
    array = pa.StringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data))
    return pd.Series(pd.array(array, dtype="str"))


def _scalars_frame(series: Dict[Tuple[str, str], Any]) -> pd.DataFrame:
    """What ``scalars_to_pandas(series)`` gives (str run/tag, float64 value), with the string columns built faster."""
    keys = sorted(series)
    if not keys:
        return scalars_to_pandas({}).astype({"run": "str", "tag": "str"})
    counts = [len(series[k].step) for k in keys]
    return pd.DataFrame({
        "run": _repeated([k[0] for k in keys], counts), "tag": _repeated([k[1] for k in keys], counts),
        "step": np.concatenate([series[k].step for k in keys]).astype(np.int64),
        "wall_time": np.concatenate([series[k].wall_time for k in keys]).astype(np.float64),
        "value": np.concatenate([series[k].value for k in keys]).astype(np.float64)}, columns=list(COLUMNS["scalars"]))


def kind_frame(kind: str, series: Dict[Tuple[str, str], Any]) -> pd.DataFrame:
    """``{(run, tag): records}`` of one kind (as in a ``Logdir``) as that kind's long DataFrame (:data:`COLUMNS`),
    series in (run, tag) order. Scalars equal ``scalars_to_pandas``, dtypes included (``Logdir.to_pandas()`` has the same values, with
    categorical run/tag and float32 values where exact: a partition's dtypes are fixed before its run is read)."""
    if kind == "scalars":
        return _scalars_frame(series)
    keys = sorted(series)
    parts: Dict[str, list] = {name: [] for name in COLUMNS[kind]}
    for run, tag in keys:
        rows = _rows(kind, series[(run, tag)])
        n = len(rows["step"])
        parts["run"].extend([run] * n)
        parts["tag"].extend([tag] * n)
        for name, values in rows.items():
            parts[name].extend(values)
    return pd.DataFrame({name: _typed(kind, name, values) for name, values in parts.items()},
                        columns=list(COLUMNS[kind]))


def _scan(path: str, fs, tags: Optional[str], kinds: Optional[frozenset], check_crc: bool):
    """One event file scanned on a worker (problems are kept in the rows, never warned there)."""
    return scan_file(path, tags=tags, kinds=kinds, check_crc=check_crc, on_error="skip", fs=fs)


def _merge(run: str, fs, mode: str, kinds: Optional[frozenset], table_kinds: Tuple[str, ...], *rows) -> dict:
    """One run merged on a worker: its DataFrames by kind, and what the client needs to know."""
    data = merge_run(run, list(rows), mode, kinds, reread=functools.partial(_reread, fs))
    frames = {kind: kind_frame(kind, {(run, tag): v for tag, v in getattr(data, kind).items()})
              for kind in table_kinds}
    return {"frames": frames, "info": {
        "run": run, "files": data.files, "file_problems": [p for r in rows for p in r.problems],
        "problems": data.problems, "out_of_order": dict(data.out_of_order), "purged": dict(data.purged),
        "rows": {kind: len(df) for kind, df in frames.items()},
        "tags": {kind: sorted(getattr(data, kind)) for kind in table_kinds}}}


def _info(merged: dict) -> dict:
    return merged["info"]


def _partition(merged: dict, kind: str, start: int) -> pd.DataFrame:
    """One run's frame of ``kind`` with its rows' place in the whole result as the index."""
    df = merged["frames"][kind]
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
    checked = _check_kinds(kinds) if kinds is not None else TABLE_KINDS
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
    for kind in table_kinds:
        out.keys[kind] = [(info["run"], tag) for info in infos for tag in info["tags"][kind]]
        out.frames[kind] = _frame(kind, merged, [info["rows"][kind] for info in infos])
    return out


def _frame(kind: str, merged: list, lengths: List[int]):
    """The Dask DataFrame of ``kind`` over the persisted runs: a partition per run with rows, known divisions."""
    meta = kind_frame(kind, {})
    parts, divisions, start = [], [], 0
    for m, n in zip(merged, lengths):
        if n:
            parts.append(delayed(_partition, pure=True)(m, kind, start))
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
    the current Dask client's workers; ``.compute()`` equals ``load_logdir(...).to_pandas()`` (index included;
    run and tag as str rather than categorical, value as float64). Arguments as :func:`read_logdir`."""
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
    fs, root = fsspec.core.url_to_fs(path, **(storage_options or {}))
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
        if "tag" in table.column_names:
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
