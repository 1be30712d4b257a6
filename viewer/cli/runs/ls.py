"""``tfevents runs ls LOGDIR [--where Q] [--sort COL] [--desc] [--columns C1,C2] [--format table|csv|json]
[--archived]``: the run table (``tfevents.summaries.runs.table.runs_table``), one row per run.

- Archived runs are left out unless ``--archived``; ``--where`` keeps the runs the query chooses.
- ``--sort COL`` orders the rows by any column (``--desc`` descending); runs without a value come last both ways,
  values of different kinds (numbers, strings) are ordered by kind first. The default order is by name.
- ``--columns`` chooses the columns (any of the table's; an unknown one is a usage error naming the nearest).
  Default: ``name``, ``last_step``, ``last_wall_time``, ``labels``, then as many ``<tag>.last`` columns as fit the
  terminal's width (all of them for csv and json).
- ``--format table`` (default) prints aligned text, each cell through ``printable`` (control characters as
  ``\\xNN``), wall times as UTC dates, lists joined by ``, ``, missing values as ``-``. ``csv`` is one header and a
  row per run (wall times in seconds, lists as JSON arrays; control characters kept as they are, but escaped when
  the output is a terminal); ``json`` is one document, ``{"logdir", "columns",
  "runs": [{column: value}]}`` with missing and non-finite numbers as ``null``.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import shutil
import sys
import time
from typing import Any, List, Sequence

from ...plain_text import printable
from .common import CommandError, add_logdir_argument, add_where_arguments, fail, load_table, nearest

ACTION = "ls"
FORMATS = ("table", "csv", "json")
BASE_COLUMNS = ("name", "last_step", "last_wall_time", "labels")
HEADERS = {"last_step": "last step", "last_wall_time": "last wall time (UTC)"}
GAP = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_logdir_argument(parser)
    add_where_arguments(parser, "list archived runs too (they are left out by default)")
    parser.add_argument("--sort", metavar="COL", default=None, help="order by this column (default: name)")
    parser.add_argument("--desc", action="store_true", help="with --sort: descending")
    parser.add_argument("--columns", metavar="C1,C2,...", default=None,
                        help="the columns to show, comma-separated (default: name, last step, last wall time, "
                             "labels and the scalars' last values that fit)")
    parser.add_argument("--format", choices=FORMATS, default="table", help="table (default), csv or json")


def missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, NaT, pd.NA (raises on NA: caught below)
    except (TypeError, ValueError):
        return True


def plain(value: Any) -> Any:
    """A table cell as a JSON-able Python value: numpy scalars unwrapped, lists as lists, missing as None."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
        if isinstance(value, list):
            return [plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if not isinstance(value, (list, tuple, dict)) and missing(value):
        return None
    return value


def column_values(table, column: str) -> List[Any]:
    """A column's cells as :func:`plain` values, numeric columns converted at once."""
    series = table[column]
    kind = getattr(series.dtype, "kind", "O")
    if kind == "f":
        return [v if math.isfinite(v) else None for v in series.to_numpy().tolist()]
    if kind in "iub":
        return series.to_numpy().tolist()
    return [plain(v) for v in series]


def _rows(table, columns: Sequence[str]):
    return zip(*(column_values(table, c) for c in columns)) if len(table) else iter(())


def _sort_key(value: Any):
    value = plain(value)
    if isinstance(value, bool):
        return (1, value)
    if isinstance(value, (int, float)):
        return (0, value)
    if isinstance(value, str):
        return (2, value)
    return (3, json.dumps(value, sort_keys=True, default=str))


def sorted_rows(table, column: str, descending: bool) -> List[int]:
    """Row positions ordered by ``column``: missing values last both ways, kinds before values."""
    values = list(table[column])
    present = [i for i, v in enumerate(values) if plain(v) is not None]
    absent = [i for i, v in enumerate(values) if plain(v) is None]
    present.sort(key=lambda i: _sort_key(values[i]), reverse=descending)
    if descending:  # reverse=True also reverses ties; keep them in name order
        groups = {}
        for i in present:
            groups.setdefault(_sort_key(values[i]), []).append(i)
        present = [i for key in groups for i in sorted(groups[key])]
    return present + absent


def cell_text(column: str, value: Any) -> str:
    value = plain(value)
    if value is None:
        return "-"
    if column.endswith("wall_time") and isinstance(value, (int, float)) and not isinstance(value, bool):
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "%.6g" % value
    if isinstance(value, list):
        return printable(", ".join(str(v) for v in value)) or "-"
    return printable(value)


def _check_columns(names: Sequence[str], known: Sequence[str], what: str) -> None:
    for name in names:
        if name not in known:
            raise CommandError("unknown %s %s%s" % (what, printable(repr(name)), nearest(name, known)))


def default_columns(table, width: int) -> List[str]:
    columns = [c for c in BASE_COLUMNS if c in table.columns]
    lasts = [c for c in table.columns if c.endswith(".last")]
    used = sum(_width(table, c) + GAP for c in columns)
    for c in lasts:
        w = _width(table, c) + GAP
        if used + w > width:
            break
        columns.append(c)
        used += w
    return columns


def _width(table, column: str) -> int:
    cells = [cell_text(column, v) for v in table[column]]
    return max([len(HEADERS.get(column, printable(column)))] + [len(c) for c in cells])


def print_table(table, columns: Sequence[str], out) -> None:
    headers = [HEADERS.get(c, printable(c)) for c in columns]
    rows = [[cell_text(c, v) for c, v in zip(columns, values)] for values in _rows(table, columns)]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    numeric = [c != "name" and c not in ("labels", "notes") and not c.endswith("wall_time")
               and all(isinstance(plain(v), (int, float)) or plain(v) is None for v in table[c]) for c in columns]

    def line(cells):
        return (" " * GAP).join(cell.rjust(w) if num else cell.ljust(w)
                                for cell, w, num in zip(cells, widths, numeric)).rstrip()
    print(line(headers), file=out)
    for r in rows:
        print(line(r), file=out)


def write_csv(table, columns: Sequence[str], out) -> None:
    """Every value as it is (floats in full precision, lists as JSON), but on a terminal, where strings are
    shown through ``printable``."""
    shown = printable if out.isatty() else str
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([shown(c) for c in columns])
    for values in _rows(table, columns):
        row = []
        for v in values:
            row.append("" if v is None else shown(json.dumps(v, ensure_ascii=False)) if isinstance(v, list)
                       else repr(v) if isinstance(v, float) else shown(v))
        writer.writerow(row)


def write_json(table, columns: Sequence[str], logdir: str, out) -> None:
    runs = [dict(zip(columns, values)) for values in _rows(table, columns)]
    out.write(json.dumps({"logdir": logdir, "columns": list(columns), "runs": runs}, ensure_ascii=False,
                         allow_nan=False, default=str) + "\n")  # one string: json.dump writes piece by piece


def run(args) -> int:
    try:
        table = load_table(args.logdir, args.where, args.archived)
        known = list(table.columns)
        columns = None
        if args.columns is not None:
            columns = [c.strip() for c in args.columns.split(",") if c.strip()]
            if not columns:
                raise CommandError("--columns names no column")
            _check_columns(columns, known, "column")
        if args.sort is not None:
            _check_columns([args.sort], known, "column to sort by")
            table = table.iloc[sorted_rows(table, args.sort, args.desc)].reset_index(drop=True)
        elif args.desc:
            raise CommandError("--desc needs --sort COL")
    except CommandError as err:
        return fail(err, ACTION)
    out = sys.stdout
    if args.format == "table":
        width = shutil.get_terminal_size((120, 24)).columns
        print_table(table, columns or default_columns(table, width), out)
    elif args.format == "csv":
        write_csv(table, columns or known, out)
    else:
        write_json(table, columns or known, args.logdir, out)
    return 0
