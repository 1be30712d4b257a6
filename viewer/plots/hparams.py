"""Hyperparameters: a table (run × hparams and metrics) and parallel coordinates, as in TensorBoard's
HPARAMS dashboard. A metric's value is the last logged value of its scalar tag in the session's run (or,
as TensorBoard looks it up, in a run below it such as ``<run>/validation``); each row also carries that series'
summary (last, min, max and their steps: ``tfevents.summaries.reader.summary``, as ``Logdir.summary()``), so a
table can rank runs by a metric's best value instead."""
from __future__ import annotations

import math
from typing import Any, Iterable, List, Mapping, Optional, Tuple

import numpy as np

from tfevents.summaries.reader.summary import series_summary

from .. import logdir_data
from ..colors import run_colors
from . import matplotlib_figures
from .matplotlib_figures import literal


def hparams_table(source: Any, runs: Optional[str] = None) -> tuple[list[str], list[str], list[dict]]:
    """``(hparam names, metric tags, rows)``; each row is ``{"run", "hparams": {...}, "metrics": {...},
    "summaries": {tag: series_summary(...) or None}}`` (``metrics``: the last values)."""
    logdir = logdir_data.load(source, kinds=["hparams", "scalars"])
    records = logdir_data.select(dict(getattr(logdir, "hparams", {}) or {}), None, runs)
    scalars = dict(getattr(logdir, "scalars", {}) or {})
    names: list[str] = []
    metrics: list[str] = []
    rows = []
    for run, rec in records.items():
        hp = dict(getattr(rec, "hparams", {}) or {})
        names += [k for k in hp if k not in names]
        tags = list(getattr(rec, "metrics", []) or [])
        metrics += [t for t in tags if t not in metrics]
        series = {t: metric_series(scalars, run, t) for t in tags}
        rows.append({"run": run, "hparams": hp,
                     "metrics": {t: None if s is None else float(np.asarray(s.value)[-1]) for t, s in series.items()},
                     "summaries": {t: None if s is None else series_summary(np.asarray(s.step), s.value)
                                   for t, s in series.items()}})
    return names, metrics, rows


def metric_runs(keys: Iterable[Tuple[str, str]], run: str, tag: str) -> List[str]:
    """The runs whose series ``tag`` may stand for ``run``'s HParams metric ``tag``, in the order they are tried:
    ``run``, then the runs below it that have ``tag`` (e.g. ``run/validation``, as TensorBoard's session groups),
    by name; ``keys``: the ``(run, tag)`` of every scalar series."""
    return [run] + sorted(r for r, t in keys if t == tag and _below(r, run))


def metric_series(scalars: Mapping, run: str, tag: str) -> Optional[Any]:
    """The series of ``tag`` in ``run`` (or in the first run below it that has it), None if none has a point."""
    for r in metric_runs(scalars, run, tag):
        s = scalars.get((r, tag))
        if s is not None and len(s.value):
            return s
    return None


def metric_value(scalars: Mapping, run: str, tag: str) -> Optional[float]:
    """Last value of ``tag`` in ``run`` (or the first run below it that has it)."""
    s = metric_series(scalars, run, tag)
    return None if s is None else float(np.asarray(s.value)[-1])


def _below(child: str, run: str) -> bool:
    return run == "." and child != "." or child.startswith(run.rstrip("/") + "/")


def plot_parallel_coordinates(source: Any, runs: Optional[str] = None):
    """A Figure: one vertical axis per hparam and metric, one polyline per run in its run colour.

    Numeric columns are scaled to [0, 1] between their min and max; other values are placed evenly in
    sorted order; a missing value leaves a gap.
    """
    logdir = logdir_data.load(source, kinds=["hparams", "scalars"])
    names, metrics, rows = hparams_table(logdir, runs)
    columns = [("hparam", n) for n in names] + [("metric", m) for m in metrics]
    fig = matplotlib_figures.new_figure(max(5.0, 1.6 * len(columns) + 2.5), 4.2)
    ax = fig.add_subplot()
    if not rows or not columns:
        matplotlib_figures.empty(ax, "no hparams")
        return fig
    colors = run_colors(logdir_data.all_runs(logdir, {r["run"]: None for r in rows}))
    scaled, labels = [], []
    for kind, name in columns:
        values = [(r["hparams"] if kind == "hparam" else r["metrics"]).get(name) for r in rows]
        ys, ticks = _scale_column(values)
        scaled.append(ys)
        labels.append(ticks)
    grid = np.array(scaled, dtype=np.float64).T  # rows x columns
    xs = np.arange(len(columns))
    for r, row in enumerate(rows):
        ax.plot(xs, grid[r], color=colors[row["run"]], lw=2, marker="o", ms=4, label=literal(row["run"]))
    for i, ticks in enumerate(labels):
        ax.axvline(i, color="0.3", lw=0.8)
        for y, text in ticks:
            ax.text(i + 0.04, y, literal(text), fontsize=7, va="center", color="0.2")
    ax.set_xticks(xs, [literal(n) for _, n in columns], rotation=20, ha="right", fontsize=8)
    ax.set_yticks([])
    ax.set_ylim(-0.08, 1.08)
    ax.set_xlim(-0.2, len(columns) - 0.5)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def _scale_column(values):
    numeric = [v for v in values if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
               and math.isfinite(float(v))]
    if numeric and len(numeric) == sum(v is not None for v in values):
        lo, hi = min(numeric), max(numeric)
        span = (hi - lo) or 1.0
        ys = [np.nan if v is None else (float(v) - lo) / span if hi != lo else 0.5 for v in values]
        ticks = [(0.0 if hi != lo else 0.5, _fmt(lo))] + ([(1.0, _fmt(hi))] if hi != lo else [])
        return ys, ticks
    cats = sorted({str(v) for v in values if v is not None})
    pos = {c: (i / (len(cats) - 1) if len(cats) > 1 else 0.5) for i, c in enumerate(cats)}
    return [np.nan if v is None else pos[str(v)] for v in values], [(pos[c], c) for c in cats]


def _fmt(v) -> str:
    return "%.4g" % v if isinstance(v, float) else str(v)
