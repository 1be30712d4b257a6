"""A Logdir's records as tables: pandas DataFrames, pyarrow Tables, polars DataFrames, one kind at a time.

Every table starts with ``run`` and ``tag`` (categorical: pandas ``category``, Arrow ``dictionary``, polars
``Categorical``), rows in (run, tag) order and, within a series, in the order the reader keeps (by step).
The other columns are the typed record's fields, by the field's name:

``scalars``     ``step`` int64, ``wall_time`` float64, ``value`` float32 when every series' values are float32
                (``ScalarSeries``), else float64. One row per point, as tbparse's ``scalars``.
``histograms``  one row per record (per step), as TensorBoard draws them and as tbparse's ``histograms``:
                ``step, wall_time, min, max, num, sum, sum_squares`` and the arrays ``bucket_limits`` and
                ``bucket_counts`` (``df.explode(["bucket_limits", "bucket_counts"])`` gives a row per bucket).
``images``      ``step, wall_time, sample, width, height, colorspace, size``; ``videos`` ``step, wall_time, sample,
                width, height, size``; ``audio`` ``step, wall_time, sample, sample_rate, num_channels,
                content_type, length_frames, label, size`` (``size``: the encoded bytes' length): with
                ``media=True`` also ``data`` (the encoded bytes), left out by default since a few images outweigh
                every scalar of a logdir.
``text``        ``step, wall_time, text`` (object: a ``str``, or an ndarray of str for a text tensor with
                dimensions; in Arrow a list of the flattened strings, with ``shape``).
``pr_curves``   ``step, wall_time`` and the arrays ``true_positives, false_positives, true_negatives,
                false_negatives, precision, recall`` (the rows of ``PrCurveRecord.data``).
``tensors``     ``step, wall_time, dtype, shape, value`` (the ndarray). In Arrow, where one column has one type,
                ``value`` is the C-order little-endian bytes of a numeric tensor
                (``np.frombuffer(value, np.dtype(dtype).newbyteorder("<")).reshape(shape)``) and ``strings`` the
                flattened elements of a string tensor (each null for the other sort).
``hparams``     one row per run with hyperparameters: ``run``, one column per hyperparameter, then one per
                metric tag holding the metric's last logged value in the run (or in the first run below it
                holding the tag, as TensorBoard's HParams dashboard looks it up; NaN when none), then
                ``status``, ``start_time``, ``end_time``. A metric named like a hyperparameter is ``metric/<tag>``.

The columns and their pandas dtypes are the kinds table's (``reader/kinds.py``): every reader returns them,
the Dask reader's partitions included (:func:`pandas_table` builds both).
Scalars are built from the series' numpy columns: pandas gets the concatenated columns without a further
copy (``copy=False``) and codes of the smallest integer type for ``run`` and ``tag``; Arrow gets one chunk per
series wrapping the series' own arrays (no copy; the run and tag indices are the only new memory); polars is
built from that Arrow table.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .kinds import KINDS, TABLE_KINDS
from .types import PrCurveRecord

__all__ = ["TABLE_KINDS", "to_pandas", "to_arrow", "to_polars", "scalar_columns", "record_columns", "pandas_table",
           "value_dtype", "metric_value"]


def _check_kind(kind: str) -> None:
    if kind not in TABLE_KINDS:
        raise ValueError("no table for kind %r; kinds with tables are %s" % (kind, ", ".join(TABLE_KINDS)))


def _codes(names: Sequence[str]) -> Tuple[List[str], np.ndarray]:
    """``(sorted distinct names, each name's index among them)``, indices of the smallest signed integer type."""
    categories = sorted(set(names))
    index = {name: i for i, name in enumerate(categories)}
    dtype = np.int8 if len(categories) < 2 ** 7 else np.int16 if len(categories) < 2 ** 15 else np.int32
    return categories, np.array([index[n] for n in names], dtype=dtype)


# ---------------------------------------------------------------- scalars

def scalar_columns(scalars: Mapping[Tuple[str, str], Any]) -> Dict[str, Any]:
    """Long columns of every scalar series in (run, tag) order: ``run_codes``/``runs`` and ``tag_codes``/``tags``
    (codes into the sorted names), ``step`` int64, ``wall_time`` float64, ``value`` float32 when every series'
    values are float32, else float64. One copy of the points (the concatenation); the codes are 1 to 4 bytes a
    point each."""
    keys = sorted(scalars)
    counts = np.array([len(scalars[k].step) for k in keys], dtype=np.int64)
    runs, run_codes = _codes([k[0] for k in keys])
    tags, tag_codes = _codes([k[1] for k in keys])
    series = [scalars[k] for k in keys]
    value_type = value_dtype(scalars)
    if series:
        step = np.concatenate([s.step for s in series]).astype(np.int64, copy=False)
        wall = np.concatenate([s.wall_time for s in series]).astype(np.float64, copy=False)
        value = np.concatenate([s.value for s in series], dtype=value_type)
    else:
        step, wall, value = np.zeros(0, np.int64), np.zeros(0), np.zeros(0, value_type)
    return {"runs": runs, "run_codes": np.repeat(run_codes, counts), "tags": tags,
            "tag_codes": np.repeat(tag_codes, counts), "step": step, "wall_time": wall, "value": value}


def _scalars_arrow(scalars):
    import pyarrow as pa
    keys = sorted(scalars)
    runs, run_codes = _codes([k[0] for k in keys])
    tags, tag_codes = _codes([k[1] for k in keys])
    value_type = pa.float32() if all(scalars[k].value.dtype == np.float32 for k in keys) else pa.float64()
    run_dict, tag_dict = pa.array(runs, pa.string()), pa.array(tags, pa.string())
    index_type = pa.from_numpy_dtype(run_codes.dtype if len(runs) >= len(tags) else tag_codes.dtype)
    schema = pa.schema([("run", pa.dictionary(index_type, pa.string())),
                        ("tag", pa.dictionary(index_type, pa.string())),
                        ("step", pa.int64()), ("wall_time", pa.float64()), ("value", value_type)])
    batches = []
    for key, rc, tc in zip(keys, run_codes.tolist(), tag_codes.tolist()):
        s = scalars[key]
        n = len(s.step)
        dtype = index_type.to_pandas_dtype()
        value = s.value if s.value.dtype == value_type.to_pandas_dtype() else s.value.astype(np.float64)
        batches.append(pa.record_batch([
            pa.DictionaryArray.from_arrays(np.full(n, rc, dtype), run_dict),
            pa.DictionaryArray.from_arrays(np.full(n, tc, dtype), tag_dict),
            pa.array(s.step, pa.int64()), pa.array(s.wall_time, pa.float64()), pa.array(value, value_type)],
            schema=schema))
    return pa.Table.from_batches(batches, schema=schema)


# ---------------------------------------------------------------- records

def _record_value(kind: str, record, name: str):
    """Column ``name`` of one record of ``kind`` (the record's field of that name, except where the table derives
    it: PR curves' six rows, a tensor's dtype and shape, a medium's size)."""
    if kind == "pr_curves":
        return record.data[PrCurveRecord.ROWS.index(name)] if name in PrCurveRecord.ROWS else getattr(record, name)
    if kind == "tensors" and name in ("dtype", "shape"):
        return str(record.value.dtype) if name == "dtype" else tuple(record.value.shape)
    if name == "size":
        return len(record.data)
    return getattr(record, name)


def record_columns(kind: str, records: Mapping[Tuple[str, str], Any], media: bool = False) -> Dict[str, list]:
    """``{column: list}`` of one row per record (per histogram step) of ``kind``, series in (run, tag) order: the
    kinds table's columns (``reader/kinds.py``), the encoded bytes only with ``media``."""
    names = KINDS[kind].column_names(media)
    cols: Dict[str, list] = {n: [] for n in names}
    fields = names[2:]
    for (run, tag), value in sorted(records.items()):
        if kind == "histograms":
            cols["run"] += [run] * len(value)
            cols["tag"] += [tag] * len(value)
            for name in fields:
                cols[name] += list(getattr(value, name)) if name.startswith("bucket") else getattr(value, name).tolist()
            continue
        for r in value:
            cols["run"].append(run)
            cols["tag"].append(tag)
            for name in fields:
                cols[name].append(_record_value(kind, r, name))
    return cols


def metric_value(scalars: Mapping, run: str, tag: str) -> float:
    """The last value of ``tag`` in ``run``, or in the first run below it holding the tag (TensorBoard's HParams
    lookup, e.g. ``<run>/validation``); NaN when none has it."""
    below = sorted(r for r, t in scalars if t == tag and (run == "." and r != "." or r.startswith(run + "/")))
    for r in [run] + below:
        s = scalars.get((r, tag))
        if s is not None and len(s.value):
            return float(s.value[-1])
    return math.nan


def _hparams_rows(logdir) -> Tuple[List[str], Dict[str, list]]:
    records = sorted(logdir.hparams.items())
    hp_names: List[str] = []
    metrics: List[str] = []
    for _, rec in records:
        hp_names += [k for k in rec.hparams if k not in hp_names]
        metrics += [t for t in rec.metrics if t not in metrics]
    metric_names = ["metric/" + t if t in hp_names or t in ("run", "status", "start_time", "end_time") else t
                    for t in metrics]
    names = ["run"] + hp_names + metric_names + ["status", "start_time", "end_time"]
    cols: Dict[str, list] = {n: [] for n in names}
    for run, rec in records:
        cols["run"].append(run)
        for name in hp_names:
            cols[name].append(rec.hparams.get(name))
        for name, tag in zip(metric_names, metrics):
            cols[name].append(metric_value(logdir.scalars, run, tag))
        cols["status"].append(rec.status)
        cols["start_time"].append(rec.start_time)
        cols["end_time"].append(rec.end_time)
    return names, cols


def _rows(logdir, kind: str, media: bool) -> Tuple[List[str], Dict[str, list]]:
    if kind == "hparams":
        return _hparams_rows(logdir)
    cols = record_columns(kind, logdir.data[kind], media)
    return list(cols), cols


def _object_column(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _pandas_column(name: str, values: list, dtype: Optional[str] = None, categories: Optional[Sequence[str]] = None):
    """One column: ``run``/``tag`` categorical (over ``categories``, else its own sorted names), else of ``dtype``
    (the kinds table's; None: inferred, for the hparams table)."""
    import pandas as pd
    if name in ("run", "tag"):
        if categories is None:
            categories, codes = _codes(values)
            return _categorical(codes, categories)
        return pd.Categorical(values, dtype=_categories(categories))
    if dtype == "object" or any(isinstance(v, (np.ndarray, tuple)) for v in values):
        return _object_column(values)  # one array or shape per row, never broadcast into a 2-D column
    if dtype is not None:
        return pd.Series(values, dtype=dtype) if values else pd.Series([], dtype=dtype)
    return pd.Series(values) if values else _object_column([])


def value_dtype(scalars: Mapping[Tuple[str, str], Any]):
    """The dtype of scalars' ``value`` column: float32 when every series' values are float32, else float64."""
    return np.float32 if all(s.value.dtype == np.float32 for s in scalars.values()) else np.float64


def pandas_table(kind: str, cols: Mapping[str, Any], runs: Optional[Sequence[str]] = None,
                 tags: Optional[Sequence[str]] = None, value: Any = None):
    """The DataFrame of ``kind`` from :func:`record_columns` (or :func:`scalar_columns`) with the kinds table's
    dtypes. ``runs`` / ``tags``: the categories of ``run`` and ``tag`` (default: the names present, sorted) — the
    Dask reader passes the whole logdir's so that its partitions concatenate to the offline reader's table;
    ``value``: the scalars' value dtype (default: as :func:`scalar_columns` chose)."""
    import pandas as pd
    if kind == "scalars":
        run = _recoded(cols["run_codes"], cols["runs"], runs)
        tag = _recoded(cols["tag_codes"], cols["tags"], tags)
        values = cols["value"] if value is None else cols["value"].astype(value, copy=False)
        return pd.DataFrame({"run": run, "tag": tag, "step": cols["step"], "wall_time": cols["wall_time"],
                             "value": values}, copy=False)
    dtypes = {c.name: c.dtype for c in KINDS[kind].columns}
    names = list(cols)
    return pd.DataFrame({name: _pandas_column(name, cols[name], dtypes.get(name),
                                              runs if name == "run" else tags if name == "tag" else None)
                         for name in names}, columns=names)


def _recoded(codes: np.ndarray, names: Sequence[str], categories: Optional[Sequence[str]]):
    """A categorical of ``names[codes]`` over ``categories`` (sorted; default: ``names``, sorted themselves)."""
    if categories is None or list(categories) == list(names):
        return _categorical(codes, names)
    where = np.searchsorted(np.asarray(categories, dtype=object), np.asarray(names, dtype=object))
    return _categorical(where[codes] if len(names) else codes, categories)


def _categories(names: Sequence[str]):
    """The categorical dtype of ``run`` / ``tag``: its categories are strings (``str`` even when there are none)."""
    import pandas as pd
    return pd.CategoricalDtype(pd.Index(list(names), dtype="str"))


def _categorical(codes: np.ndarray, names: Sequence[str]):
    import pandas as pd
    return pd.Categorical.from_codes(codes, dtype=_categories(names))


def _little_endian(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))


def _arrow_column(name: str, values: list):
    import pyarrow as pa
    if name in ("run", "tag"):
        return pa.array(values, pa.string()).dictionary_encode()
    if any(isinstance(v, np.ndarray) for v in values):
        return pa.array([np.ravel(v).tolist() if isinstance(v, np.ndarray) else [v] for v in values])
    if any(isinstance(v, tuple) for v in values):
        return pa.array([list(v) for v in values], pa.list_(pa.int64()))
    return pa.array(values)


# ---------------------------------------------------------------- entry points

def to_pandas(logdir, kind: str = "scalars", media: bool = False):
    """One kind of ``logdir``'s records as a pandas DataFrame (module docstring)."""
    _check_kind(kind)
    if kind == "scalars":
        return pandas_table(kind, scalar_columns(logdir.scalars))
    if kind == "hparams":
        import pandas as pd
        names, cols = _hparams_rows(logdir)
        return pd.DataFrame({name: _pandas_column(name, cols[name]) for name in names}, columns=names)
    return pandas_table(kind, record_columns(kind, logdir.data[kind], media))


def to_arrow(logdir, kind: str = "scalars", media: bool = False):
    """One kind of ``logdir``'s records as a ``pyarrow.Table`` (module docstring); needs pyarrow."""
    _check_kind(kind)
    try:
        import pyarrow as pa
    except ImportError:
        raise ImportError("to_arrow needs pyarrow: pip install 'tfevents[arrow]'") from None
    if kind == "scalars":
        return _scalars_arrow(logdir.scalars)
    names, cols = _rows(logdir, kind, media)
    if kind == "tensors":  # one column cannot hold every dtype: numbers as their bytes, strings as a list
        values = cols["value"]
        cols["value"] = [None if v.dtype == object else _little_endian(v).tobytes() for v in values]
        cols["strings"] = [list(np.ravel(v)) if v.dtype == object else None for v in values]
        names.append("strings")
    arrays = [_arrow_column(name, cols[name]) for name in names]
    if kind == "text" and pa.types.is_list(arrays[names.index("text")].type):
        names.append("shape")
        arrays.append(_arrow_column("shape", [tuple(np.shape(t)) for t in cols["text"]]))
    return pa.table(arrays, names=names)


def to_polars(logdir, kind: str = "scalars", media: bool = False):
    """One kind of ``logdir``'s records as a polars DataFrame, built from :func:`to_arrow`'s table; needs polars
    and pyarrow."""
    try:
        import polars as pl
    except ImportError:
        raise ImportError("to_polars needs polars: pip install 'tfevents[polars]'") from None
    return pl.from_arrow(to_arrow(logdir, kind, media))
