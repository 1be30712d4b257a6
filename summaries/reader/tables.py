"""A Logdir's records as tables: pandas DataFrames, pyarrow Tables, polars DataFrames, one kind at a time.

Every table starts with ``run`` and ``tag`` (categorical: pandas ``category``, Arrow ``dictionary``, polars
``Categorical``), rows in (run, tag) order and, within a series, in the order the reader keeps (by step).
The other columns are the typed record's fields, by the field's name:

``scalars``     ``step`` int64, ``wall_time`` float64, ``value`` float32 when every series' values are float32
                (``ScalarSeries``), else float64. One row per point, as tbparse's ``scalars``.
``histograms``  one row per record (per step), as TensorBoard draws them and as tbparse's ``histograms``:
                ``step, wall_time, min, max, num, sum, sum_squares`` and the arrays ``bucket_limits`` and
                ``bucket_counts`` (``df.explode(["bucket_limits", "bucket_counts"])`` gives a row per bucket).
``images``      ``step, wall_time, sample, width, height, colorspace``; ``videos`` ``step, wall_time, sample,
                width, height``; ``audio`` ``step, wall_time, sample, sample_rate, num_channels, content_type,
                length_frames, label``: with ``media=True`` also ``data`` (the encoded bytes), left out by
                default since a few images outweigh every scalar of a logdir.
``text``        ``step, wall_time, text`` (a ``str``, or an ndarray of str for a text tensor with dimensions;
                in Arrow a list of the flattened strings, with ``shape``).
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

Scalars are built from the series' numpy columns: pandas gets the concatenated columns without a further
copy (``copy=False``) and codes of the smallest integer type for ``run`` and ``tag``; Arrow gets one chunk per
series wrapping the series' own arrays (no copy; the run and tag indices are the only new memory); polars is
built from that Arrow table.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .types import AudioRecord, ImageRecord, PrCurveRecord, TensorRecord, TextRecord, VideoRecord

__all__ = ["TABLE_KINDS", "to_pandas", "to_arrow", "to_polars", "scalar_columns", "metric_value"]

TABLE_KINDS = ("scalars", "histograms", "images", "audio", "videos", "text", "pr_curves", "tensors", "hparams")
_RECORDS = {"images": ImageRecord, "audio": AudioRecord, "videos": VideoRecord, "text": TextRecord,
            "pr_curves": PrCurveRecord, "tensors": TensorRecord}
_MEDIA = ("images", "audio", "videos")
_PR_ROWS = ("true_positives", "false_positives", "true_negatives", "false_negatives", "precision", "recall")
_HISTOGRAM_FIELDS = ("step", "wall_time", "min", "max", "num", "sum", "sum_squares", "bucket_limits",
                     "bucket_counts")


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
    value_type = np.float32 if all(s.value.dtype == np.float32 for s in series) else np.float64
    if series:
        step = np.concatenate([s.step for s in series]).astype(np.int64, copy=False)
        wall = np.concatenate([s.wall_time for s in series]).astype(np.float64, copy=False)
        value = np.concatenate([s.value for s in series], dtype=value_type)
    else:
        step, wall, value = np.zeros(0, np.int64), np.zeros(0), np.zeros(0, value_type)
    return {"runs": runs, "run_codes": np.repeat(run_codes, counts), "tags": tags,
            "tag_codes": np.repeat(tag_codes, counts), "step": step, "wall_time": wall, "value": value}


def _scalars_pandas(scalars):
    import pandas as pd
    c = scalar_columns(scalars)
    return pd.DataFrame({"run": pd.Categorical.from_codes(c["run_codes"], c["runs"]),
                         "tag": pd.Categorical.from_codes(c["tag_codes"], c["tags"]),
                         "step": c["step"], "wall_time": c["wall_time"], "value": c["value"]}, copy=False)


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

def _record_rows(logdir, kind: str, media: bool) -> Tuple[List[str], Dict[str, list]]:
    """``(column names, {name: list})`` of one row per record (per histogram step) of ``kind``."""
    if kind == "histograms":
        names = ["run", "tag"] + list(_HISTOGRAM_FIELDS)
        cols: Dict[str, list] = {n: [] for n in names}
        for (run, tag), h in sorted(logdir.histograms.items()):
            cols["run"] += [run] * len(h)
            cols["tag"] += [tag] * len(h)
            for name in _HISTOGRAM_FIELDS:
                cols[name] += list(getattr(h, name)) if name.startswith("bucket") else getattr(h, name).tolist()
        return names, cols
    fields = [f.name for f in dataclasses.fields(_RECORDS[kind])]
    if "sample" in fields:  # step, wall_time, sample first: the row's identity
        fields.remove("sample")
        fields.insert(2, "sample")
    if kind in _MEDIA and not media:
        fields.remove("data")
    if kind == "pr_curves":
        fields = ["step", "wall_time"] + list(_PR_ROWS)
    if kind == "tensors":
        fields = ["step", "wall_time", "dtype", "shape", "value"]
    names = ["run", "tag"] + fields
    cols = {n: [] for n in names}
    for (run, tag), records in sorted(getattr(logdir, kind).items()):
        for r in records:
            cols["run"].append(run)
            cols["tag"].append(tag)
            for name in fields:
                if kind == "pr_curves" and name in _PR_ROWS:
                    cols[name].append(r.data[_PR_ROWS.index(name)])
                elif kind == "tensors" and name in ("dtype", "shape"):
                    cols[name].append(str(r.value.dtype) if name == "dtype" else tuple(r.value.shape))
                else:
                    cols[name].append(getattr(r, name))
    return names, cols


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
    return _hparams_rows(logdir) if kind == "hparams" else _record_rows(logdir, kind, media)


def _object_column(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _pandas_column(name: str, values: list):
    import pandas as pd
    if name in ("run", "tag"):
        categories, codes = _codes(values)
        return pd.Categorical.from_codes(codes, categories)
    if any(isinstance(v, (np.ndarray, tuple)) for v in values):
        return _object_column(values)  # one array or shape per row, never broadcast into a 2-D column
    return pd.Series(values) if values else _object_column([])


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
        return _scalars_pandas(logdir.scalars)
    import pandas as pd
    names, cols = _rows(logdir, kind, media)
    return pd.DataFrame({name: _pandas_column(name, cols[name]) for name in names}, columns=names)


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
