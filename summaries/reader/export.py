"""Scalars out of the reader: pandas DataFrames, CSV (long, or TensorBoard's per-series layout), Parquet.

Long format has the columns ``run, tag, step, wall_time, value``, one row per point, series in
(run, tag) order. TensorBoard's "download CSV" layout is one file per series with the header
``Wall time,Step,Value``.
"""
from __future__ import annotations

import csv
import os
import re
from typing import Dict, Optional, Tuple

import numpy as np

from .types import ScalarSeries

__all__ = ["scalars_to_pandas", "write_csv", "write_tensorboard_csv", "write_parquet", "export_scalars",
           "write_table"]

Scalars = Dict[Tuple[str, str], ScalarSeries]
COLUMNS = ("run", "tag", "step", "wall_time", "value")


def _long_columns(scalars: Scalars, x: Optional[Dict[Tuple[str, str], np.ndarray]] = None):
    keys = sorted(scalars)
    counts = [len(scalars[k].step) for k in keys]
    run = np.repeat(np.array([k[0] for k in keys], dtype=object), counts)
    tag = np.repeat(np.array([k[1] for k in keys], dtype=object), counts)
    if keys:
        step = np.concatenate([scalars[k].step for k in keys]).astype(np.int64)
        wall = np.concatenate([scalars[k].wall_time for k in keys]).astype(np.float64)
        value = np.concatenate([scalars[k].value for k in keys]).astype(np.float64)
    else:
        step, wall, value = np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
    cols = {"run": run, "tag": tag, "step": step, "wall_time": wall, "value": value}
    if x is not None:   # an x axis' values (x_axis.scalars_on_x), one per point
        cols["x"] = np.concatenate([np.asarray(x[k], np.float64) for k in keys]) if keys else np.zeros(0)
    return cols


def scalars_to_pandas(scalars: Scalars, pivot: bool = False):
    """Long DataFrame, or (``pivot``) step-indexed with one column per (run, tag)."""
    import pandas as pd
    df = pd.DataFrame(_long_columns(scalars), columns=list(COLUMNS))
    if not pivot:
        return df
    df = df.drop_duplicates(subset=["run", "tag", "step"], keep="last")
    return df.pivot(index="step", columns=["run", "tag"], values="value")


def _fmt(x: float) -> str:
    return repr(float(x))  # shortest text that reads back to the same double


def write_csv(scalars: Scalars, out, header: bool = True,
              x: Optional[Dict[Tuple[str, str], np.ndarray]] = None) -> int:
    """Long-format CSV to a path or text file (``x``: an ``x`` column, each series' x values); returns the number
    of rows."""
    cols = _long_columns(scalars, x)
    close = False
    if isinstance(out, (str, os.PathLike)):
        out, close = open(out, "w", newline=""), True
    try:
        w = csv.writer(out, lineterminator="\n")
        if header:
            w.writerow(COLUMNS + (("x",) if x is not None else ()))
        n = len(cols["step"])
        step, wall, value = cols["step"].tolist(), cols["wall_time"].tolist(), cols["value"].tolist()
        rows = [cols["run"].tolist(), cols["tag"].tolist(), step, map(repr, wall), map(repr, value)]
        if x is not None:
            rows.append(map(repr, cols["x"].tolist()))
        w.writerows(zip(*rows))
        return n
    finally:
        if close:
            out.close()


_MAX_NAME = 100  # characters of a run or tag kept in a file name (file names stop at 255 bytes)


def _safe(name: str) -> str:
    """A run or tag as part of a file name: only ``[A-Za-z0-9._-]`` (so never a path separator or
    ``..`` on its own), at most ``_MAX_NAME`` characters."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "_"
    if len(safe) > _MAX_NAME:
        import hashlib
        safe = safe[:_MAX_NAME - 9] + "_" + hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return safe


def write_tensorboard_csv(scalars: Scalars, directory: str) -> list:
    """One ``run-<run>-tag-<tag>.csv`` per series (TensorBoard's download names) with the header
    ``Wall time,Step,Value``; returns the paths written. Names are reduced to ``[A-Za-z0-9._-]``;
    two series whose names reduce to the same file get ``-2``, ``-3``... (nothing is overwritten)."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    used = set()
    for (run, tag) in sorted(scalars):
        s = scalars[(run, tag)]
        stem = "run-%s-tag-%s" % (_safe(run), _safe(tag))
        name, n = stem, 1
        while name in used:
            n += 1
            name = "%s-%d" % (stem, n)
        used.add(name)
        path = os.path.join(directory, name + ".csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(("Wall time", "Step", "Value"))
            w.writerows(zip(map(repr, s.wall_time.tolist()), s.step.tolist(), map(repr, s.value.tolist())))
        paths.append(path)
    return paths


def write_parquet(scalars: Scalars, path: str, x: Optional[Dict[Tuple[str, str], np.ndarray]] = None) -> int:
    """Long format to Parquet (needs pyarrow; ``x``: an ``x`` column as in :func:`write_csv`); returns the number
    of rows."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("Parquet export needs pyarrow: pip install pyarrow") from None
    cols = _long_columns(scalars, x)
    table = pa.table({
        "run": pa.array(cols["run"].tolist(), type=pa.string()).dictionary_encode(),
        "tag": pa.array(cols["tag"].tolist(), type=pa.string()).dictionary_encode(),
        "step": pa.array(cols["step"], type=pa.int64()),
        "wall_time": pa.array(cols["wall_time"], type=pa.float64()),
        "value": pa.array(cols["value"], type=pa.float64()),
        **({"x": pa.array(cols["x"], type=pa.float64())} if x is not None else {}),
    })
    pq.write_table(table, path)
    return table.num_rows


def export_scalars(scalars: Scalars, out: str, fmt: Optional[str] = None,
                   x: Optional[Dict[Tuple[str, str], np.ndarray]] = None) -> int:
    """Write ``scalars`` to ``out`` by extension (.csv, .parquet/.pq) or ``fmt``
    ('csv', 'parquet', 'tensorboard-csv' = a directory of per-series files). ``x``: each series' x values
    (``x_axis.scalars_on_x``), an ``x`` column of csv and parquet."""
    if fmt is None:
        lower = str(out).lower()
        fmt = "parquet" if lower.endswith((".parquet", ".pq")) else "csv"
    if fmt == "csv":
        return write_csv(scalars, out, x=x)
    if fmt == "parquet":
        return write_parquet(scalars, out, x=x)
    if x is not None and fmt == "tensorboard-csv":
        raise ValueError("TensorBoard's CSV layout has no x column: use csv or parquet")
    if fmt == "tensorboard-csv":
        write_tensorboard_csv(scalars, out)
        return sum(len(s.step) for s in scalars.values())
    raise ValueError("unknown export format %r (csv, parquet, tensorboard-csv)" % fmt)




def write_table(columns: Dict[str, np.ndarray], out, fmt: Optional[str] = None) -> int:
    """Any table of named columns (strings as object arrays, numbers as numpy arrays; e.g. a summary or an
    aggregation) to CSV (floats as their shortest exact text, NaN as ``nan``) or Parquet, by ``fmt`` or ``out``'s
    extension; returns the number of rows."""
    names = list(columns)
    n = len(columns[names[0]]) if names else 0
    if fmt is None:
        fmt = "parquet" if str(out).lower().endswith((".parquet", ".pq")) else "csv"
    if fmt == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError("Parquet export needs pyarrow: pip install pyarrow") from None
        pq.write_table(pa.table({name: pa.array(col.tolist(), type=pa.string()) if col.dtype == object
                                 else pa.array(col) for name, col in columns.items()}), out)
        return n
    if fmt != "csv":
        raise ValueError("unknown table format %r (csv, parquet)" % fmt)
    cells = [col.tolist() if col.dtype != np.float64 else list(map(_fmt, col.tolist())) for col in columns.values()]
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(names)
        w.writerows(zip(*cells))
    return n
