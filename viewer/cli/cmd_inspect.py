"""``tfevents inspect PATH``: per run and tag, the kind, count, step and wall-time ranges, steps
that go back, points dropped by restarts, and every corrupted or truncated record with its offset.
Tensors, videos, meshes and embeddings also show their shapes (of the last step). ``--values`` adds, per run and
scalar tag, the last, minimum and maximum values with their steps (``Logdir.summary()``: NaN skipped, the first
point of a tie; a series of NaN only shows ``nan`` at its last step, and ``nan`` with no step, ``-``, for its min
and max) and a unicode sparkline of the series.

Corrupt records are reported on stderr (file, offset) and reading goes on (``--on-error``).
Long loads show a progress bar on stderr when it is a terminal (``--progress`` forces it).
Run names, tags and the other strings read from files are printed with control characters escaped
(``\x1b``), so a hostile file cannot send escape sequences to the terminal.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Optional

from tfevents.summaries import record

from . import run_choice
from ..plain_text import printable

RESTART_MODES = ("tensorboard", "rust", "python", "legacy", "none")
_BAR_MIN_BYTES = 32 << 20


def add_load_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by inspect and export."""
    parser.add_argument("path", help="logdir, run directory, event file, or fsspec URL (s3://, gs://, memory://)")
    parser.add_argument("--tags", metavar="REGEX", help="only tags matching this regex (re.search)")
    parser.add_argument("--runs", metavar="REGEX", help="only runs matching this regex (re.search)")
    run_choice.add_arguments(parser)
    parser.add_argument("--restarts", choices=RESTART_MODES, default="tensorboard",
                        help="which points restarts drop: like TensorBoard (default; its Rust data server), "
                             "its Python loader, its legacy EventAccumulator, or none")
    parser.add_argument("--on-error", choices=("warn", "raise", "skip"), default="warn",
                        help="on a corrupt record: warn on stderr and go on (default), stop, or stay quiet")
    parser.add_argument("--no-checksum", dest="checksum", action="store_false",
                        help="do not verify record checksums")
    parser.add_argument("--workers", type=int, default=None, help="processes reading files (default: auto)")
    parser.add_argument("--progress", action="store_true", default=None,
                        help="always show a progress bar (default: on a terminal, for large logdirs)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_load_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    parser.add_argument("--values", action="store_true",
                        help="also print, per run and scalar tag, the last, minimum and maximum values with their "
                             "steps and a sparkline of the series")


class ProgressBar:
    """``[#####     ]  52%  120.0/230.5 MB  3.1 s`` on stderr, redrawn in place."""

    def __init__(self, stream=None, force: Optional[bool] = None, width: int = 30):
        self.stream = stream or sys.stderr
        self.force, self.width = force, width
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if self.force is None and (total < _BAR_MIN_BYTES or not self.stream.isatty()):
            return
        if self.force is False:
            return
        frac = done / total if total else 1.0
        fill = int(round(frac * self.width))
        self.stream.write("\r[%s%s] %3d%%  %.1f/%.1f MB  %.1f s" % (
            "#" * fill, " " * (self.width - fill), frac * 100, done / 1e6, total / 1e6, time.monotonic() - self.start))
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False


def load(args, prog: str, kinds=None):
    """load_logdir with the CLI's options; problems go to stderr. Returns (Logdir, exit status)."""
    from tfevents.summaries.reader import load_logdir  # lazy: numpy, protobuf (CLI start-up)
    status = run_choice.where_problem(args, prog)
    if status:
        return None, status
    bar = ProgressBar(force=args.progress)
    try:
        logdir = load_logdir(args.path, args.tags, args.runs, kinds=kinds, restarts=args.restarts,
                             on_error="skip", workers=args.workers, check_crc=args.checksum, progress=bar,
                             **run_choice.choice(args))
    except (FileNotFoundError, ValueError) as err:
        print("%s: %s" % (prog, err), file=sys.stderr)
        return None, 2
    finally:
        bar.close()
    status = report_problems(prog, logdir.problems, args.on_error)
    return (None, status) if status else (logdir, 0)


def report_problems(prog: str, problems, on_error: str) -> int:
    """Read problems on stderr as ``--on-error`` says: warnings (``warn``), nothing (``skip``), or, with ``raise``,
    the first corrupted record as an error. The exit status: 1 when that error stops the command, else 0."""
    bad = [p for p in problems if p.kind in ("corrupted", "truncated", "unparseable", "unreadable", "skipped")]
    if on_error != "skip":
        for p in bad:
            print("%s: warning: %s" % (prog, printable(p)), file=sys.stderr)
    if on_error == "raise":
        first = next((p for p in bad if p.kind == "corrupted"), None)
        if first is not None:
            print("%s: %s" % (prog, printable(record.CorruptedRecordError(first.path, first.offset, first.detail))),
                  file=sys.stderr)
            return 1
    return 0


def _time(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t)) if t == t else "nan"


def _shape(dims) -> str:
    return "x".join(str(int(d)) for d in dims)


def describe(kind: str, value) -> str:
    """The shape facts of a record (the last of a list) of kinds tensors, videos, meshes, embeddings; ''."""
    rec = value[-1] if isinstance(value, list) and value else value
    if isinstance(value, list) and not value:
        return ""
    try:
        if kind == "tensors":
            return "%s %s" % (rec.value.dtype, list(rec.value.shape))
        if kind == "videos":
            fps = rec.fps
            return "%dx%d, %d frame%s%s" % (rec.width, rec.height, rec.num_frames, "" if rec.num_frames == 1 else "s",
                                             ", %.3g fps" % fps if fps else "")
        if kind == "meshes":
            parts = ["vertices %s" % _shape(rec.vertices.shape)]
            if rec.faces is not None:
                parts.append("faces %s" % _shape(rec.faces.shape))
            if rec.colors is not None:
                parts.append("colors")
            return ", ".join(parts)
        if kind == "embeddings":
            if rec.tensor_path is None:
                where = "in checkpoint %s" % (rec.model_checkpoint_path or "(not named)")
                return where if not rec.tensor_shape else "%s %s" % (_shape(rec.tensor_shape), where)
            parts = [_shape(rec.shape)]
            if rec.metadata_path is not None:
                header = rec.metadata()[0]
                parts.append("metadata %s" % ", ".join(header))
            if rec.sprite_path is not None:
                dim = rec.single_image_dim
                parts.append("sprite" + (" %s cells" % _shape(dim) if dim else ""))
            return ", ".join(parts)
    except (OSError, ValueError) as err:
        return "unreadable: %s" % err
    return ""


def series_rows(logdir):
    """One dict per (run, kind, tag) with the facts inspect prints (embeddings: one row each, no steps)."""
    import numpy as np
    from tfevents.summaries.reader.kinds import SERIES_KINDS  # lazy: numpy (CLI start-up)
    rows = []
    for kind in SERIES_KINDS:
        for (run, tag), value in sorted(logdir.data[kind].items()):
            if isinstance(value, list):
                steps = np.array([r.step for r in value], dtype=np.int64)
                walls = np.array([r.wall_time for r in value], dtype=np.float64)
            else:
                steps, walls = value.step, value.wall_time
            row = {"run": run, "kind": kind, "tag": tag, "count": int(len(steps)),
                   "out_of_order": logdir.out_of_order.get((run, kind, tag), 0),
                   "purged": logdir.purged.get((run, kind, tag), 0)}
            if len(steps):
                row.update(first_step=int(steps.min()), last_step=int(steps.max()),
                           first_wall_time=float(np.nanmin(walls)) if np.isfinite(walls).any() else None,
                           last_wall_time=float(np.nanmax(walls)) if np.isfinite(walls).any() else None)
            if kind in ("tensors", "videos", "meshes"):
                row["shape"] = describe(kind, value)
            rows.append(row)
    for (run, name), rec in sorted(getattr(logdir, "embeddings", {}).items()):
        rows.append({"run": run, "kind": "embeddings", "tag": name, "count": 1, "out_of_order": 0, "purged": 0,
                     "shape": describe("embeddings", rec)})
    return rows


def _number(x: float) -> str:
    return "%.6g" % x


def value_rows(logdir, width: int = 24):
    """One dict per (run, scalar tag): ``Logdir.summary()``'s columns (NaN as None) and ``sparkline``."""
    from tfevents.summaries.reader.summary import summary_columns  # lazy: numpy (CLI start-up)
    from tfevents.viewer.sparkline import sparkline  # lazy: numpy (CLI start-up)
    columns = summary_columns(logdir.scalars)
    rows = []
    for i in range(len(columns["run"])):
        row = {name: col[i].item() if hasattr(col[i], "item") else col[i] for name, col in columns.items()}
        for name in ("last", "min", "max"):
            if row[name] != row[name]:
                row[name] = None
        row["sparkline"] = sparkline(logdir.scalars[(row["run"], row["tag"])].value, width)
        rows.append(row)
    return rows


def _print_values(rows, out) -> None:
    """The ``--values`` table of one run's scalar tags: a NaN value as ``nan``, no step (``NO_STEP``: an all-NaN
    series has no min or max) as ``-``."""
    from tfevents.summaries.reader.summary import NO_STEP  # lazy: numpy (CLI start-up)
    width = max(len(printable(r["tag"])) for r in rows)
    print("  %-*s %14s %8s  %14s %8s  %14s %8s  %s" % (width, "scalar", "last", "@step", "min", "@step", "max",
                                                       "@step", "trend"), file=out)
    for r in rows:
        cells = []
        for name, at in (("last", "last_value_step"), ("min", "min_step"), ("max", "max_step")):
            cells += ["nan" if r[name] is None else _number(r[name]), "-" if r[at] == NO_STEP else str(r[at])]
        print("  %-*s %14s %8s  %14s %8s  %14s %8s  %s" % ((width, printable(r["tag"])) + tuple(cells)
                                                           + (r["sparkline"],)), file=out)


def run(args) -> int:
    logdir, status = load(args, "tfevents inspect")
    if logdir is None:
        return status
    rows = series_rows(logdir)
    values = value_rows(logdir) if getattr(args, "values", False) else None
    if args.json:
        doc = {"path": logdir.path, "restarts": args.restarts, "runs": logdir.runs, "series": rows,
               "files": logdir.files, "graphs": sorted(logdir.graphs), "hparams": {
                   r: {"hparams": h.hparams, "metrics": h.metrics} for r, h in logdir.hparams.items()},
               "session_logs": logdir.session_logs,
               "problems": [{"path": p.path, "offset": p.offset, "kind": p.kind, "detail": p.detail}
                            for p in logdir.problems]}
        if values is not None:
            doc["values"] = values
        json.dump(doc, sys.stdout, indent=1, default=str, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    out = sys.stdout
    if not logdir.runs and not rows:
        print("no event files under %s" % logdir.path, file=out)
        return 1
    by_run = {}
    for row in rows:
        by_run.setdefault(row["run"], []).append(row)
    for run_name in list(logdir.runs) + sorted(set(by_run) - set(logdir.runs)):
        files = logdir.files.get(run_name, [])
        print("run %s  (%d file%s)" % (printable(run_name), len(files), "" if len(files) == 1 else "s"), file=out)
        series = by_run.get(run_name, [])
        if series:
            width = max(len(printable(r["tag"])) for r in series)
            print("  %-10s %-*s %8s  %-21s %-41s %s" % ("kind", width, "tag", "count", "steps", "wall time (UTC)",
                                                       "notes"), file=out)
            for r in series:
                steps = "%d..%d" % (r["first_step"], r["last_step"]) if "first_step" in r else "-"
                walls = ("%s .. %s" % (_time(r["first_wall_time"]), _time(r["last_wall_time"]))
                         if r.get("first_wall_time") is not None else "-")
                notes = [r["shape"]] if r.get("shape") else []
                if r["out_of_order"]:
                    notes.append("%d step(s) go back" % r["out_of_order"])
                if r["purged"]:
                    notes.append("%d purged by restarts" % r["purged"])
                print("  %-10s %-*s %8d  %-21s %-41s %s" % (r["kind"], width, printable(r["tag"]), r["count"], steps,
                                                           walls, ", ".join(notes)), file=out)
        run_values = [r for r in values or () if r["run"] == run_name]
        if run_values:
            _print_values(run_values, out)
        extras = []
        if run_name in logdir.graphs:
            extras.append("graph (%d bytes)" % len(logdir.graphs[run_name]))
        n_md = sum(1 for (r, _) in logdir.run_metadata if r == run_name)
        if n_md:
            extras.append("%d run metadata" % n_md)
        if run_name in logdir.hparams:
            extras.append("hparams %s" % sorted(logdir.hparams[run_name].hparams))
        starts = [s for s in logdir.session_logs.get(run_name, []) if s[2] == "START"]
        if starts:
            extras.append("restarts: SessionLog.START at step%s %s" % (
                "s" if len(starts) > 1 else "", ", ".join(str(s[0]) for s in starts)))
        for e in extras:
            print("  " + printable(e), file=out)
    if logdir.problems:
        print("problems:", file=out)
        for p in logdir.problems:
            print("  %s" % printable(p), file=out)
    return 0
