"""The run table: one row per run, its hyperparameters, its user metadata and every scalar tag's last, min and max.

::

    from tfevents.summaries import runs_table
    table = runs_table("runs/", where='lr < 0.01 and "val/acc".max > 0.9 and not archived')
    table.sort_values("val/acc.max").tail(5)

``runs_table(source)`` reads what the table needs of a logdir (the scalars and HParams events) and reduces each run
to its row in the job that reads it (``reader.load.reduce_logdir``: a worker process sends back a few numbers per
tag, not the series); given a loaded :class:`~tfevents.summaries.reader.load.Logdir` it reads no event file again.
Either way the small files beside the event files are read too: ``hparams.yaml``, ``.hydra/config.yaml`` (see
:mod:`tfevents.summaries.runs.hparams`) and the run's labels, notes and archived flag
(:mod:`tfevents.summaries.run_info`), found in the listing the reader's walk made (no second listing per run).

Columns, in order, one row per run sorted by name:

``name``             the run (its folder relative to the logdir, ``.`` for the logdir itself), a string.
``first_wall_time``  the smallest and largest wall time (seconds since the epoch, float) of the run's scalar
``last_wall_time``   points, as the table keeps them (after ``restarts=``); NaN for a run without scalars.
``last_step``        the largest step of the run's scalar points (float: NaN for a run without scalars).
``files``            how many event files the run has (int).
``restarts``         how many times the run restarted, as the reader sees it (int): the most times any one of
                     its scalar series went back in step (``RunData.out_of_order``, counted before the
                     ``restarts=`` rule drops anything). A job restarted from a checkpoint logs steps it has logged
                     before, so each series it logs goes back once per restart; two restarts are 2 however many
                     tags each logged. It does not depend on ``restarts=``, which says which points are dropped
                     (:mod:`tfevents.summaries.reader.restarts`), not whether the job restarted; the reader's
                     ``purged`` problems could not count it under the default rule, which reports only each
                     series' first step back. A restart that resumes past the last logged step is not seen (0),
                     nor is one that logs no scalar.
``labels``           the run's labels, a list of strings (empty when none).
``notes``            its notes, a string (``""`` when none).
``archived``         whether it is archived (bool). ``archived=False`` leaves archived runs out of the table.
hparams              one column per hyperparameter name found in any run, sorted by column name; nested keys
                     joined with dots;
                     missing where a run has none of that name (None or NaN, as pandas types the column).
``<tag>.last``       per scalar tag of any run (tags sorted), six float columns: the last value, the minimum and
``<tag>.min``        the maximum (NaN values skipped), the step of the last value (``.step``) and of the minimum
``<tag>.max``        and maximum (the first such point), as :mod:`tfevents.summaries.reader.summary` computes
``<tag>.step``       them. Missing is NaN, never -1: a run without the tag, and the min/max (with their steps)
``<tag>.min_step``   of a series of NaN only.
``<tag>.max_step``

A hyperparameter whose name is a built-in column (``name``, ``files``, ``labels``, ...) or one of the tag columns
(an hparam ``loss.min`` beside a tag ``loss``) is the column ``hparams.<name>`` (``hparams.hparams.<name>`` if
that is taken too, and so on): the table's own columns keep their names, so a query means the same on every
logdir.

The query language (:mod:`tfevents.summaries.runs.query`) works on this table as it is: ``where=`` keeps the runs
it selects (``"val/acc".max > 0.9``, ``loss.min < 0.1``, ``"bad" in labels``, ``not archived``).

:func:`table_to_arrow` and :func:`table_to_polars` give the same table as a ``pyarrow.Table`` and a polars
DataFrame (as ``Logdir.to_arrow``/``to_polars`` do for the records). The live dashboard builds :class:`RunRow`
objects from its own loader and calls :func:`table_from_rows`, the one place the columns are made.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import os
import posixpath
import re
import threading
import warnings
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..reader.load import Logdir, ReadWarning, check_read_options, reduce_logdir
from ..reader.merge import RunData
from ..reader.restarts import normalize_mode
from ..reader.summary import NO_STEP, series_summary
from ..reader.types import HParamsRecord, ScalarSeries
from ..reader.walk import Discovery, discover
from ..run_info import RunInfo, read_run_info
from .hparams import (HYDRA_DIR, HYDRA_FILE, LIGHTNING_FILE, HParamsFileError, flatten, hydra_config_folder,
                      parse_hparams_yaml, run_hparams)
from .query import parse

__all__ = ["RunRow", "BUILT_IN_COLUMNS", "TAG_FIELDS", "runs_table", "table_from_rows", "run_row", "add_side_files", "logdir_walk",
           "table_to_arrow", "table_to_polars"]

BUILT_IN_COLUMNS = ("name", "first_wall_time", "last_wall_time", "last_step", "files", "restarts", "labels", "notes",
                    "archived")
TAG_FIELDS = ("last", "min", "max", "step", "min_step", "max_step")
_NAN = float("nan")
_REMOTE_THREADS = 16   # the side files of an object store's runs are read by threads: each read waits on the network


@dataclasses.dataclass
class RunRow:
    """One run's row before it is a table row (module docstring for each field's meaning): ``hparams`` flattened
    (nested keys joined with dots), ``info`` the run's labels, notes and archived flag, ``tags`` tag ->
    ``(last, min, max, step, min_step, max_step)`` as floats (NaN where missing)."""

    name: str
    first_wall_time: float = _NAN
    last_wall_time: float = _NAN
    last_step: float = _NAN
    files: int = 0
    restarts: int = 0
    hparams: Dict[str, Any] = dataclasses.field(default_factory=dict)
    info: RunInfo = dataclasses.field(default_factory=RunInfo)
    tags: Dict[str, Tuple[float, float, float, float, float, float]] = dataclasses.field(default_factory=dict)


# ---------------------------------------------------------------- one run's row from what the reader read

def _step(step: int) -> float:
    return _NAN if step == NO_STEP else float(step)


def tag_stats(series: ScalarSeries) -> Tuple[float, float, float, float, float, float]:
    """``(last, min, max, step, min_step, max_step)`` of one series, NaN for what it lacks."""
    s = series_summary(series.step, series.value)
    return (s["last"], s["min"], s["max"], _step(s["last_value_step"]), _step(s["min_step"]), _step(s["max_step"]))


def count_restarts(out_of_order: Mapping[str, int]) -> int:
    """How many times a run restarted (module docstring, ``restarts``) from its scalar series' counts of steps
    going back (tag -> count)."""
    return max(out_of_order.values(), default=0)


def run_row(name: str, scalars: Mapping[str, ScalarSeries], hparams: Optional[HParamsRecord], files: Sequence[str],
            out_of_order: Mapping[str, int]) -> RunRow:
    """The row of one run from its scalar series (tag -> series), its HParams record, its event files and how many
    times each scalar series went back in step (tag -> count, for ``restarts``). ``hparams`` and ``info`` hold only
    what the event files say (HParams events; no run info): the caller adds the side files' (see
    :func:`runs_table`)."""
    first, last, last_step = math.inf, -math.inf, -math.inf
    tags = {}
    for tag, series in scalars.items():
        tags[tag] = tag_stats(series)
        if len(series):
            walls = series.wall_time
            lo, hi = walls.min(), walls.max()   # NaN when one is NaN (kept by restarts other than 'tensorboard')
            if math.isnan(lo) and not np.isnan(walls).all():
                lo, hi = np.nanmin(walls), np.nanmax(walls)
            if not math.isnan(lo):
                first, last = min(first, float(lo)), max(last, float(hi))
            last_step = max(last_step, float(series.step.max()))
    first, last, last_step = (v if math.isfinite(v) else _NAN for v in (first, last, last_step))
    return RunRow(name, first, last, last_step, len(files), count_restarts(out_of_order),
                  flatten(hparams.hparams) if hparams is not None else {}, RunInfo(), tags)


def _scalar_steps_back(out_of_order: Mapping[tuple, int]) -> Dict[str, int]:
    """tag -> count of the scalar series among a run's ``(kind, tag)`` (or ``(run, kind, tag)``) out-of-order counts."""
    return {key[-1]: n for key, n in out_of_order.items() if key[-2] == "scalars"}


def _reduce_run(data: RunData) -> RunRow:
    """The reducer :func:`runs_table` runs in each read job (a module-level function: picklable)."""
    return run_row(data.run, data.scalars, data.hparams, data.files, _scalar_steps_back(data.out_of_order))


def _rows_of_logdir(logdir: Logdir, runs: Optional[str]) -> List[RunRow]:
    """Every run's row from a loaded Logdir (its scalars, hparams, files and out-of-order counts); no file is read."""
    select = re.compile(runs).search if runs is not None else None
    names = [r for r in logdir.runs if select is None or select(r) is not None]
    scalars: Dict[str, Dict[str, ScalarSeries]] = defaultdict(dict)
    for (run, tag), series in logdir.scalars.items():
        scalars[run][tag] = series
    steps_back: Dict[str, Dict[tuple, int]] = defaultdict(dict)
    for key, n in logdir.out_of_order.items():
        steps_back[key[0]][key] = n
    return [run_row(run, scalars.get(run, {}), logdir.hparams.get(run), logdir.files.get(run, []),
                    _scalar_steps_back(steps_back.get(run, {}))) for run in names]


# ---------------------------------------------------------------- the files beside the event files

class _Folders:
    """The logdir's folders as the walk listed them (or, without a listing, listed on demand): file names by
    folder relative to the logdir, and the paths and texts of the files in them."""

    def __init__(self, found: Discovery):
        self.fs, self.listing = found.fs, found.listing
        self.root = found.root
        if self.listing is None:   # one event file was given: its folder is the logdir
            self.root = self.root.rpartition("/")[0] if self.fs is not None else os.path.dirname(self.root) or "."
            self._listed: Dict[str, List[str]] = {}
        self._hydra: Dict[str, Any] = {}
        self._lock = threading.Lock()

    def path(self, folder: str, name: Optional[str] = None) -> str:
        parts = [p for p in (folder if folder != "." else None, name) if p]
        if self.fs is not None:
            return posixpath.join(self.root, *parts)
        return os.path.join(self.root, *parts)

    def get(self, folder: str, default=()) -> Sequence[str]:
        """The names of the files in ``folder`` (a Mapping's ``get``, for ``hydra_config_folder``)."""
        if self.listing is not None:
            return self.listing.get(folder, default)
        if folder not in self._listed:
            where = self.path(folder)
            try:
                if self.fs is not None:
                    names = [posixpath.basename(p.rstrip("/")) for p in self.fs.ls(where, detail=False)]
                else:
                    names = [e.name for e in os.scandir(where) if e.is_file()]
            except (OSError, ValueError):
                names = []
            self._listed[folder] = sorted(names)
        return self._listed[folder] or default

    def read_yaml(self, folder: str, name: str) -> Dict[str, Any]:
        where = self.path(folder, name)
        try:
            if self.fs is not None:
                data = self.fs.cat_file(where)
            else:
                with open(where, "rb") as f:
                    data = f.read()
        except OSError as err:
            raise HParamsFileError("%s cannot be read: %s" % (where, err)) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise HParamsFileError("%s is not UTF-8 text: %s" % (where, err)) from None
        return parse_hparams_yaml(text, where)

    def hydra(self, folder: str) -> Dict[str, Any]:
        """The flattened ``.hydra/config.yaml`` of ``folder``, read once however many runs share it."""
        with self._lock:
            if folder not in self._hydra:
                try:
                    self._hydra[folder] = self.read_yaml(folder, HYDRA_DIR + "/" + HYDRA_FILE)
                except HParamsFileError as err:
                    self._hydra[folder] = err
            found = self._hydra[folder]
        if isinstance(found, Exception):
            raise found
        return found


def _problem(err: Exception, on_error: str) -> None:
    if on_error == "raise":
        raise err
    if on_error == "warn":
        warnings.warn(str(err), ReadWarning, stacklevel=4)


def _with_side_files(row: RunRow, folders: _Folders, on_error: str) -> RunRow:
    """``row`` with the hparams of its ``hparams.yaml`` and Hydra config merged in (hparams.py's precedence) and its
    run info; a side file that cannot be read is reported by ``on_error`` and left out."""
    names = folders.get(row.name)
    lightning = hydra = None
    try:
        if LIGHTNING_FILE in names:
            lightning = folders.read_yaml(row.name, LIGHTNING_FILE)
    except HParamsFileError as err:
        _problem(err, on_error)
    try:
        folder = hydra_config_folder(row.name, folders)
        if folder is not None:
            hydra = folders.hydra(folder)
    except HParamsFileError as err:
        _problem(err, on_error)
    info = RunInfo()
    try:
        info = read_run_info(folders.path(row.name), fs=folders.fs, names=names)
    except (OSError, ValueError) as err:
        _problem(ValueError("run info of %r: %s" % (row.name, err)), on_error)
    return dataclasses.replace(row, hparams=run_hparams(row.hparams, lightning, hydra), info=info)


def add_side_files(rows: List[RunRow], found: Discovery, on_error: str, workers: Optional[int]) -> List[RunRow]:
    """``rows`` with their side files read (hparams files merged in, run info), from the folders ``found`` (a walk
    with ``listing=True``) lists; the offline table's step and the live table's (``live_table.py``)."""
    folders = _Folders(found)
    complete = functools.partial(_with_side_files, folders=folders, on_error=on_error)
    threads = workers if workers is not None else _REMOTE_THREADS if found.fs is not None else 1
    threads = max(1, min(int(threads), len(rows)))
    if threads == 1:
        return [complete(row) for row in rows]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(complete, rows))


# ---------------------------------------------------------------- the table

def logdir_walk(logdir: Logdir, storage_options: Optional[dict] = None) -> Discovery:
    """The walk that found a loaded Logdir's runs, with every folder's file names (``Logdir.walk``), or a walk of its
    path now when it has none."""
    if logdir.walk is not None:
        return logdir.walk
    return discover(logdir.path, storage_options=storage_options, listing=True)


def runs_table(source: Union[str, "os.PathLike[str]", Logdir], *, runs: Optional[str] = None,
               where: Optional[str] = None, archived: bool = True, restarts: Optional[str] = None,
               on_error: str = "warn", workers: Optional[int] = None,
               storage_options: Optional[dict] = None) -> "pandas.DataFrame":
    """The run table of ``source`` (module docstring: its columns), a pandas DataFrame, one row per run.

    ``source``: a logdir, run directory or event file path, an fsspec URL (``s3://...``; ``storage_options`` go to
    fsspec), or a loaded :class:`~tfevents.summaries.reader.load.Logdir` (its series are used as they are: no event
    file is read again, only the small side files, found in the walk that read it, ``Logdir.walk``: a side file
    made since is not seen, as a point logged since is not; a Logdir loaded with ``tags=`` has those tags only).
    ``runs``: a regex (re.search) on run names. ``where``: a query (:mod:`tfevents.summaries.runs.query`) the rows
    must satisfy (a QueryError before anything is read when it does not parse). ``archived=False`` leaves the
    archived runs out. ``restarts``: the restarts rule (``load_logdir``'s; None: ``'tensorboard'`` for a path, the
    rule a Logdir was read with, and a Logdir read with another rule is a ValueError). ``on_error``: as
    ``load_logdir``'s for the event files; a side file (YAML, run info) that cannot be read is a ReadWarning with
    ``'warn'``, raised with ``'raise'`` (HParamsFileError or ValueError naming the file), passed over with
    ``'skip'``, and left out of the row either way. ``workers``: ``load_logdir``'s (processes for local event
    files); the side files of an object store are read by that many threads (default 16).
    """
    query = parse(where) if where is not None else None
    if isinstance(source, Logdir):
        check_read_options(on_error, source.restarts, None, runs)
        if restarts is not None and normalize_mode(restarts) != normalize_mode(source.restarts):
            raise ValueError("this Logdir was read with restarts=%r, not %r: load it again with restarts=%r"
                             % (source.restarts, restarts, restarts))
        rows = _rows_of_logdir(source, runs)
        found = logdir_walk(source, storage_options)
    else:
        mode = check_read_options(on_error, "tensorboard" if restarts is None else restarts, None, runs)
        found, reduced = reduce_logdir(source, _reduce_run, runs=runs,
                                       kinds=("scalars", "hparams"), restarts=mode, on_error=on_error,
                                       workers=workers, storage_options=storage_options, listing=True)
        rows = [r.value for r in reduced]
    table = table_from_rows(add_side_files(rows, found, on_error, workers))
    keep = np.ones(len(table), dtype=bool)
    if not archived:
        keep &= ~table["archived"].to_numpy(dtype=bool)
    if query is not None:
        keep &= np.asarray(query.evaluate(table), dtype=bool)
    if not keep.all():
        table = table[keep].reset_index(drop=True)
    return table


def _hparam_columns(rows: Sequence[RunRow], reserved: set) -> Dict[str, str]:
    """hparam name -> its column: the name, or ``hparams.<name>`` (prefixed again while taken) when the name is one
    of the ``reserved`` columns (the built-in and tag columns)."""
    names = sorted({k for row in rows for k in row.hparams})
    taken = set(reserved) | set(names)
    out = {}
    for name in names:
        column = name
        if name in reserved:
            column = "hparams." + name
            while column in taken:
                column = "hparams." + column
            taken.add(column)
        out[name] = column
    return out


def _object_column(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _value_column(values: list):
    """An hparam column: pandas' own typing of the values (numbers with a missing one are float with NaN), but an
    object column whenever a value is a list, tuple or mapping (never broadcast into a 2-D column)."""
    import pandas as pd  # lazy: pandas is needed by the tables only
    if any(isinstance(v, (list, tuple, dict, np.ndarray)) for v in values):
        return _object_column(values)
    return pd.Series(values, dtype=None if values else object)


def table_from_rows(rows: Iterable[RunRow]) -> "pandas.DataFrame":
    """The run table (module docstring) of ``rows``, sorted by name: the one place its columns are made."""
    import pandas as pd  # lazy: as _value_column
    rows = sorted(rows, key=lambda r: r.name)
    tags = sorted({t for row in rows for t in row.tags})
    tag_columns = ["%s.%s" % (tag, f) for tag in tags for f in TAG_FIELDS]
    hparams = _hparam_columns(rows, set(BUILT_IN_COLUMNS) | set(tag_columns))
    columns: Dict[str, Any] = {
        "name": pd.Series([r.name for r in rows], dtype=str),
        "first_wall_time": np.array([r.first_wall_time for r in rows], dtype=np.float64),
        "last_wall_time": np.array([r.last_wall_time for r in rows], dtype=np.float64),
        "last_step": np.array([r.last_step for r in rows], dtype=np.float64),
        "files": np.array([r.files for r in rows], dtype=np.int64),
        "restarts": np.array([r.restarts for r in rows], dtype=np.int64),
        "labels": _object_column([list(r.info.labels) for r in rows]),
        "notes": pd.Series([r.info.notes for r in rows], dtype=str),
        "archived": np.array([bool(r.info.archived) for r in rows], dtype=bool),
    }
    for name, column in hparams.items():
        columns[column] = _value_column([r.hparams.get(name) for r in rows])
    missing = (_NAN,) * len(TAG_FIELDS)
    for tag in tags:
        stats = np.array([r.tags.get(tag, missing) for r in rows], dtype=np.float64).reshape(len(rows), len(TAG_FIELDS))
        for i, f in enumerate(TAG_FIELDS):
            columns["%s.%s" % (tag, f)] = stats[:, i]
    order = list(BUILT_IN_COLUMNS) + sorted(hparams.values()) + tag_columns
    return pd.DataFrame(columns, columns=order)


# ---------------------------------------------------------------- Arrow and polars

def _arrow_column(values: "pandas.Series"):
    import pyarrow as pa  # lazy: as table_to_arrow
    try:
        return pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        # one hparam holding values Arrow cannot type as one (numbers and strings): their text
        return pa.array([None if _missing(v) else str(v) for v in values], pa.string())


def _missing(value: Any) -> bool:
    return value is None or isinstance(value, float) and math.isnan(value)


def table_to_arrow(table: "pandas.DataFrame") -> "pyarrow.Table":
    """A run table (:func:`runs_table`) as a ``pyarrow.Table`` of the same columns: ``labels`` a list of strings,
    missing values null; an hparam column Arrow cannot type as one (numbers and strings in one column) is the text
    of its values (``str()``). Needs pyarrow (``pip install 'tfevents[arrow]'``)."""
    try:
        import pyarrow as pa  # lazy: an optional dependency (the arrow extra)
    except ImportError:
        raise ImportError("table_to_arrow needs pyarrow: pip install 'tfevents[arrow]'") from None
    arrays = []
    for name in table.columns:
        if name == "labels":
            arrays.append(pa.array([list(v) for v in table[name]], pa.list_(pa.string())))
        else:
            arrays.append(_arrow_column(table[name]))
    return pa.table(arrays, names=list(table.columns))


def table_to_polars(table: "pandas.DataFrame") -> "polars.DataFrame":
    """A run table as a polars DataFrame, built from :func:`table_to_arrow`'s table. Needs polars and pyarrow
    (``pip install 'tfevents[polars]'``)."""
    try:
        import polars as pl  # lazy: an optional dependency (the polars extra)
    except ImportError:
        raise ImportError("table_to_polars needs polars: pip install 'tfevents[polars]'") from None
    return pl.from_arrow(table_to_arrow(table))
