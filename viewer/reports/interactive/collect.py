"""What the interactive report shows, gathered from a loaded Logdir into one JSON-able document plus a
:class:`~.encode.Blob` of typed arrays. Numbers stay numbers (the page draws them); every user string
(run, tag, text) stays a plain string the page inserts as text, except text summaries, which are
markdown rendered and cleaned to an allowlist here (``viewer/reports/safe_html.py``) exactly as the static report.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from tfevents.summaries.compare.aggregate import aggregate_columns

from ... import logdir_data
from ...colors import run_colors
from ...plots import matplotlib_figures
from ...plots.graphs import summarize_graph
from ...plots.histograms import distribution, rebin
from ...plots.hparams import hparams_table
from ...plots.media import data_uri, image_mime, pick_steps
from ...plots.projections import pca_2d, plot_mesh
from ...plots.scalars import X_AXES, chart_groups
from ..safe_html import text_to_safe_html
from .encode import Blob, finite_or_none, run_entry, short_number

MAX_MEDIA_STEPS = 10    # TensorBoard keeps 10 images / audio clips per series (its reservoir size)
MAX_TEXT_STEPS = 10
MAX_HISTOGRAM_STEPS = 50   # ridge lines drawn per histogram chart (distributions keep every step)
HISTOGRAM_BINS = 30        # TensorBoard re-bins histograms to 30 buckets for display
MAX_PR_STEPS = 20
MAX_GRAPH_LEAVES = 300
MAX_EMBEDDING_POINTS = 5000   # points of a PCA scatter (a random but fixed subset beyond)
MAX_CATEGORIES = 20     # nodes listed per scope of the graph tree (the rest are counted)
# the document's lists of the kinds other than scalars and hparams (the page's sections), as the served dashboard
# leaves them empty (``viewer/dashboard/page.py``)
MEDIA_AND_OTHER_SECTIONS = ("distributions", "histograms", "images", "videos", "audio", "text", "pr_curves", "graphs",
                            "embeddings", "meshes")
AGGREGATE_STATS = ("mean", "std", "min", "max", "median", "count")   # what the page can draw of a group


def collect(logdir: Any, *, tags: Optional[str] = None, runs: Optional[str] = None,
            group: Optional[str] = None, image_steps: Optional[Sequence[int]] = None,
            max_images: int = MAX_MEDIA_STEPS, aggregate: Optional[str] = None, x: str = "step") -> tuple:
    """``(document, blob)`` for a loaded Logdir, keeping only ``tags`` / ``runs`` (regexes); with ``aggregate`` (a
    regex, as ``tfevents.summaries.aggregate``'s ``by``) the scalars' groups of runs reduced per step too; ``x`` a
    scalar tag that ``tags`` leaves out: its series are embedded too, as an x axis only (:func:`_x_axes`)."""
    blob = Blob()
    all_runs = logdir_data.all_runs(logdir, {})
    colors = run_colors(all_runs)

    def pick(attr: str) -> dict:
        return logdir_data.select(dict(getattr(logdir, attr, None) or {}), tags, runs)

    scalars = pick("scalars")
    used = sorted({k[0] for attr in ("scalars", "histograms", "images", "videos", "audio", "text",
                                     "pr_curves", "embeddings", "meshes") for k in pick(attr)} | set(pick("hparams"))
                  | set(pick("graphs")))
    for run in used:
        colors.setdefault(run, run_colors([run])[run])
    listed = logdir.runs if isinstance(getattr(logdir, "runs", None), list) else all_runs   # a Logdir: its runs,
    # as the query chose them (colours stay those of every run of the folder, whatever was chosen)
    run_names = sorted(set(used) | set(r for r in listed if logdir_data.select({r: 0}, None, runs)))
    index = {r: i for i, r in enumerate(run_names)}
    problems = [str(p) for p in getattr(logdir, "problems", None) or ()]
    doc: Dict[str, Any] = {
        "runs": _run_entries(run_names, colors, scalars, pick("hparams"), _run_infos(logdir)),
        "scalars": _scalars(scalars, index, blob, group,
                            aggregate_entries(logdir, tags, runs, aggregate, index, blob, x) if aggregate else []),
        **other_sections(logdir, index, blob, problems, tags=tags, runs=runs, image_steps=image_steps,
                         max_images=max_images),
        "hparams": _hparams(logdir, runs),
        "problems": problems,
    }
    doc["scalars"].update(_x_axes(logdir, scalars, runs, x, index, blob))
    return doc, blob


def _run_infos(logdir: Any) -> Dict[str, Any]:
    """The runs' labels and notes (``tfevents runs label``/``note``), from the walk that read a Logdir; none for a
    mapping of records or a folder gone."""
    if not isinstance(getattr(logdir, "path", None), str) or not hasattr(logdir, "walk"):
        return {}
    from tfevents.summaries.runs.choose import run_infos  # lazy: the run table's modules, only for a logdir
    return run_infos(logdir)


def _run_entries(run_names: List[str], colors: dict, scalars: dict, hparams: dict,
                 infos: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Each run's name and colour, its ``hparams`` (when it logged any), ``stats``: per scalar tag ``[last, min,
    max]`` over every kept point, NaN left out, null when none or not finite (the sidebar's run list sorts by them),
    and its labels and notes."""
    stats: Dict[str, Dict[str, list]] = {}
    for (run, tag), s in scalars.items():
        v = np.asarray(s.value, np.float64)
        if len(v):
            kept = v[~np.isnan(v)]
            stats.setdefault(run, {})[tag] = [short_number(v[-1]), *((short_number(kept.min()),
                                                                      short_number(kept.max()))
                                                                     if len(kept) else (None, None))]
    return [run_entry(r, colors.get(r) or run_colors([r])[r], dict(getattr(hparams.get(r), "hparams", None) or {}),
                      stats.get(r), infos.get(r)) for r in run_names]


def other_sections(logdir: Any, index: Dict[str, int], blob: Blob, problems: List[str], *,
                   tags: Optional[str] = None, runs: Optional[str] = None,
                   image_steps: Optional[Sequence[int]] = None, max_images: int = MAX_MEDIA_STEPS) -> Dict[str, Any]:
    """The document's sections of every kind but scalars and hparams (:data:`MEDIA_AND_OTHER_SECTIONS`) of a loaded
    Logdir (the report's, or the served dashboard's snapshot of its live logdir), of the ``tags`` and ``runs`` chosen
    (regexes), runs named by their place in the page's run list (``index``; every run of the Logdir must be in it);
    a graph's problems are added to ``problems``."""
    def pick(attr: str) -> dict:
        return logdir_data.select(dict(getattr(logdir, attr, None) or {}), tags, runs)

    sections = {
        "images": _media(pick("images"), index, image_steps, max_images, image=True),
        "videos": _media(pick("videos"), index, image_steps, max_images, image=False),
        "audio": _audio(pick("audio"), index, max_images),
        "text": _text(pick("text"), index),
        "pr_curves": _pr_curves(pick("pr_curves"), index, blob),
        "graphs": _graphs(pick("graphs"), index, problems),
        "embeddings": _embeddings(pick("embeddings"), index, blob),
        "meshes": _meshes(pick("meshes"), index),
    }
    sections["distributions"], sections["histograms"] = _histograms(pick("histograms"), index, blob)
    return sections


def _x_axes(logdir: Any, chosen: dict, runs: Optional[str], x: str, index: dict, blob: Blob) -> dict:
    """What the page's x axis selector offers beyond step and time: ``x_tags``, every scalar tag of the shown
    series (the page takes a run's x from its series of that tag, as ``tfevents.summaries.reader.x_axis``), and
    ``x_only``, the series of ``x`` when it is a tag the chosen ones leave out (steps and values, per run)."""
    tags = {tag for (_, tag), s in chosen.items() if len(s.step)}
    x_only = []
    if x not in X_AXES and x not in tags:
        shown = {run for run, _ in chosen}
        for (run, tag), s in logdir_data.select(dict(getattr(logdir, "scalars", None) or {}), None, runs).items():
            if tag == x and run in shown and run in index and len(s.step):
                x_only.append({"run": index[run], "tag": tag, "step": blob.add_steps(s.step),
                               "value": blob.add_values(s.value)})
        if x_only:
            tags.add(x)
    return {"x_tags": sorted(tags), "x_only": x_only}


def _scalars(chosen: dict, index: dict, blob: Blob, group: Optional[str], aggregates: list) -> dict:
    """Series (every point, for hover and CSV), ``aggregates`` (:func:`aggregate_entries`) and charts: one per tag,
    or per ``group`` regex value, each naming its series and its aggregates by index."""
    series, by_tag = [], {}
    for (run, tag), s in chosen.items():
        if not len(s.step):
            continue
        by_tag.setdefault(tag, []).append(len(series))
        series.append({"run": index[run], "tag": tag, "step": blob.add_steps(s.step),
                       "wall": blob.add(s.wall_time, np.float64), "value": blob.add_values(s.value)})
    bands_of: Dict[str, List[int]] = {}
    for i, entry in enumerate(aggregates):
        bands_of.setdefault(entry["tag"], []).append(i)
    charts = [{"title": title, "series": [i for t in members for i in by_tag[t]],
               "bands": [i for t in members for i in bands_of.get(t, ())]}
              for title, members in chart_groups(by_tag, group).items()]
    return {"series": series, "charts": charts, "aggregates": aggregates}


def aggregate_entries(logdir: Any, tags: Optional[str], runs: Optional[str], by: str, index: dict, blob: Blob,
                x: str = "step") -> list:
    """Each (group, tag) of ``aggregate_columns(logdir, by)`` (the runs of a group aligned and reduced per step):
    its group, tag, colour, member runs (indices into the page's runs), alignment, and arrays of the steps and of
    every statistic of :data:`AGGREGATE_STATS` (the page draws a centre line and band edges from them). ``x`` a
    scalar tag: the runs aligned on that x instead (``aggregate(x=)``), ``axis`` naming it and ``step`` holding the
    x values (float64), the points without an x counted in ``dropped``; else ``axis`` is ``step``."""
    on_tag = x not in X_AXES
    table = aggregate_columns(logdir, by, tags, AGGREGATE_STATS, runs=runs, **({"x": x} if on_tag else {}))
    colors = run_colors(table.groups)
    group_col, tag_col = table.columns["group"], table.columns["tag"]
    n = len(table)
    changes = (group_col[1:] != group_col[:-1]) | (tag_col[1:] != tag_col[:-1])   # rows are in (group, tag) blocks
    starts = [0] + (np.flatnonzero(changes) + 1).tolist() if n else []
    out = []
    for start, end in zip(starts, starts[1:] + [n]):
        group, tag = group_col[start], tag_col[start]
        entry = {"group": group, "tag": tag, "color": colors[group], "align": table.align[(group, tag)],
                 "runs": [index[r] for r in table.groups[group] if r in index],
                 "axis": x if on_tag else "step", "dropped": table.dropped.get((group, tag), 0),
                 "step": blob.add(table.columns["x"][start:end], np.float64) if on_tag
                 else blob.add_steps(table.columns["step"][start:end])}
        for stat in AGGREGATE_STATS:
            column = table.columns[stat][start:end]
            entry[stat] = blob.add(column, np.int32) if stat == "count" else blob.add_values(column)
        out.append(entry)
    return out


def _histograms(chosen: dict, index: dict, blob: Blob) -> tuple:
    """Distributions (TensorBoard's basis-point bands for every step) and the offset (ridge) view (each
    of up to 50 steps re-binned onto 30 common buckets)."""
    dists, ridges = [], []
    for (run, tag), s in chosen.items():
        n = len(s.step)
        if not n:
            continue
        steps = np.asarray(s.step)
        dists.append({"run": index[run], "tag": tag, "step": blob.add_steps(steps),
                      "bands": blob.add(distribution(s), np.float64)})
        pick = np.unique(np.linspace(0, n - 1, min(n, MAX_HISTOGRAM_STEPS)).round().astype(int))
        mins, maxs = np.asarray(s.min, np.float64)[pick], np.asarray(s.max, np.float64)[pick]
        ok = np.isfinite(mins) & np.isfinite(maxs)
        lo, hi = (float(mins[ok].min()), float(maxs[ok].max())) if ok.any() else (-1.0, 1.0)
        if hi <= lo:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, HISTOGRAM_BINS + 1)
        counts = rebin(_Subset(s, pick), edges)
        ridges.append({"run": index[run], "tag": tag, "step": blob.add_steps(steps[pick]),
                       "edges": blob.add(edges, np.float64), "counts": blob.add(counts, np.float64)})
    return dists, ridges


class _Subset:
    """Some steps of a HistogramSeries (the attributes ``histograms.rebin`` reads)."""

    def __init__(self, series: Any, pick: np.ndarray):
        self.step = np.asarray(series.step)[pick]
        self.min = np.asarray(series.min)[pick]
        self.max = np.asarray(series.max)[pick]
        self.bucket_limits = [series.bucket_limits[i] for i in pick]
        self.bucket_counts = [series.bucket_counts[i] for i in pick]


def _by_step(records: list, steps: Optional[Sequence[int]], max_steps: int) -> List[list]:
    """Records grouped by step (samples of one step together), at most ``max_steps`` steps spread evenly
    over the run (always the last), or the steps nearest to ``steps``."""
    groups: Dict[int, list] = {}
    for rec in records:
        groups.setdefault(int(rec.step), []).append(rec)
    firsts = [g[0] for _, g in sorted(groups.items())]
    return [groups[int(r.step)] for r in pick_steps(firsts, steps, max_steps)]


def _media(chosen: dict, index: dict, steps, max_steps: int, image: bool) -> list:
    out = []
    for (run, tag), recs in chosen.items():
        items = []
        for group in _by_step(list(recs), steps, max_steps):
            srcs = []
            for rec in sorted(group, key=lambda r: getattr(r, "sample", 0)):
                data = bytes(rec.data)
                srcs.append({"src": data_uri(data, image_mime(data) if image else "image/gif"),
                             "width": int(getattr(rec, "width", 0) or 0),
                             "height": int(getattr(rec, "height", 0) or 0)})
            items.append({"step": int(group[0].step), "wall": float(group[0].wall_time), "samples": srcs})
        if items:
            out.append({"run": index[run], "tag": tag, "items": items})
    return out


def _audio(chosen: dict, index: dict, max_steps: int) -> list:
    out = []
    for (run, tag), recs in chosen.items():
        items = []
        for group in _by_step(list(recs), None, max_steps):
            clips = [{"src": data_uri(bytes(r.data), getattr(r, "content_type", None) or "audio/wav"),
                      "rate": float(r.sample_rate), "channels": int(r.num_channels or 1),
                      "label": str(getattr(r, "label", "") or "")}
                     for r in sorted(group, key=lambda r: getattr(r, "sample", 0))]
            items.append({"step": int(group[0].step), "wall": float(group[0].wall_time), "samples": clips})
        if items:
            out.append({"run": index[run], "tag": tag, "items": items})
    return out


def _text(chosen: dict, index: dict) -> list:
    out = []
    for (run, tag), recs in chosen.items():
        items = [{"step": int(r.step), "wall": float(r.wall_time), "html": text_to_safe_html(r.text)}
                 for r in list(recs)[-MAX_TEXT_STEPS:]]
        if items:
            out.append({"run": index[run], "tag": tag, "items": items})
    return out


def _pr_curves(chosen: dict, index: dict, blob: Blob) -> list:
    """Precision, recall and thresholds of up to 20 steps of each (run, tag)."""
    out = []
    for (run, tag), recs in chosen.items():
        recs = list(recs)
        if not recs:
            continue
        pick = np.unique(np.linspace(0, len(recs) - 1, min(len(recs), MAX_PR_STEPS)).round().astype(int))
        items = []
        for i in pick:
            data = np.asarray(recs[i].data, dtype=np.float64)
            items.append({"step": int(recs[i].step), "wall": float(recs[i].wall_time),
                          "tp": blob.add(data[0]), "fp": blob.add(data[1]),
                          "precision": blob.add(data[4]), "recall": blob.add(data[5])})
        out.append({"run": index[run], "tag": tag, "items": items})
    return out


BEST_FIELDS = ("last_value_step", "min", "min_step", "max", "max_step")   # of a metric's series_summary


def _hparams(logdir: Any, runs: Optional[str]) -> dict:
    """The HParams table: per row its hyperparameters, its metrics' last values, and per metric ``best``: the min
    and max of the metric's series with their steps and the last value's step (the page ranks by any of them)."""
    names, metrics, rows = hparams_table(logdir, runs)
    return {"hparams": names, "metrics": metrics,
            "rows": [{"run": r["run"],
                      "hparams": {k: finite_or_none(v) for k, v in r["hparams"].items()},
                      "metrics": {k: finite_or_none(v) for k, v in r["metrics"].items()},
                      "best": {k: {f: finite_or_none(v[f]) for f in BEST_FIELDS}
                               for k, v in r["summaries"].items() if v is not None}} for r in rows]}


def _graphs(chosen: dict, index: dict, problems: list) -> list:
    """Each run's graph as a tree of name scopes: ``[name, op type or "", nodes below, children]``."""
    out = []
    for run, graph in chosen.items():
        if isinstance(graph, (bytes, bytearray, memoryview)):
            from google.protobuf.message import DecodeError
            from tfevents.proto import graph_pb2  # lazy: protobuf, only for a GraphDef given as bytes
            parsed = graph_pb2.GraphDef()
            try:
                parsed.ParseFromString(bytes(graph))
            except DecodeError as err:
                problems.append("graph of run %s: not a GraphDef (%s)" % (run, err))
                continue
            graph = parsed
        summary = summarize_graph(graph)
        root: dict = {}
        for node in graph.node:
            level = root
            parts = node.name.split("/")
            for part in parts[:-1]:
                level = level.setdefault(part, [None, {}])[1]
            entry = level.setdefault(parts[-1], [None, {}])
            entry[0] = node.op
        out.append({"run": index[run], "nodes": summary.nodes, "functions": summary.functions,
                    "op_types": summary.op_types.most_common(), "tree": _tree(root)[1]})
    return out


def _tree(level: dict) -> tuple:
    """``(node count, children)`` of one scope; children sorted scopes first, then ops, by name."""
    children, total = [], 0
    for name, (op, sub) in level.items():
        count, kids = _tree(sub) if sub else (0, [])
        count += 1 if op else 0
        total += count
        children.append([name, op or "", count, kids])
    children.sort(key=lambda c: (not c[3], c[0]))
    if len(children) > MAX_GRAPH_LEAVES:
        rest = children[MAX_GRAPH_LEAVES:]
        children = children[:MAX_GRAPH_LEAVES] + [["… %d more" % len(rest), "", sum(c[2] for c in rest), []]]
    return total, children


def _embeddings(chosen: dict, index: dict, blob: Blob) -> list:
    """Each embedding's 2-D PCA (as the Projector's), coloured by its first metadata column when that has
    at most 20 distinct values; or why it cannot be drawn (a checkpoint tensor, an unreadable file)."""
    out = []
    for (run, name), rec in chosen.items():
        entry: Dict[str, Any] = {"run": index[run], "tag": name}
        try:
            matrix = np.asarray(rec.matrix(), dtype=np.float64)
            pick = np.arange(len(matrix))
            if len(matrix) > MAX_EMBEDDING_POINTS:
                pick = np.sort(np.random.default_rng(0).choice(len(matrix), MAX_EMBEDDING_POINTS, replace=False))
            coords, ratio = pca_2d(matrix[pick])
        except (OSError, ValueError) as err:
            entry["error"] = str(err)
            out.append(entry)
            continue
        entry.update(points=int(matrix.shape[0]), dims=int(matrix.shape[1]), shown=int(len(pick)),
                     x=blob.add(coords[:, 0], np.float32), y=blob.add(coords[:, 1], np.float32),
                     ratio=[float(r) for r in ratio])
        try:
            header, rows = rec.metadata() if hasattr(rec, "metadata") else ([], [])
        except (OSError, ValueError):
            header, rows = [], []
        if len(rows) == len(matrix):
            labels = [str(rows[i][0]) if rows[i] else "" for i in pick]
            names = sorted(set(labels), key=lambda v: (_as_float(v) is None, _as_float(v) or 0.0, v))
            if len(names) <= MAX_CATEGORIES:
                code = {n: i for i, n in enumerate(names)}
                entry.update(label=str(header[0]) if header else "label", categories=names,
                             category=blob.add([code[v] for v in labels], np.uint8))
        out.append(entry)
    return out


def _as_float(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def _meshes(chosen: dict, index: dict) -> list:
    """The latest step of each mesh, rendered in 3-D by matplotlib (``viewer/plots/projections.py``) as a PNG."""
    if not chosen:
        return []
    return [{"run": index[run], "tag": name, "step": int(recs[-1].step),
             "src": matplotlib_figures.to_data_uri(plot_mesh(recs[-1], title="%s (%s)" % (name, run)))}
            for (run, name), recs in chosen.items() if recs]
