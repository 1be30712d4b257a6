"""The dashboard's page at ``/``: the interactive report's page (the same JS and CSS, ``reports/interactive/``) over a
``LiveLogdir``, its data asked for on demand instead of embedded.

The embedded document is the report's (``collect.py``'s shape) with the runs, their colours and hparams, and the
scalar charts and series, but no series' arrays: each series carries ``fetch``, ``[points, last_step]`` as listed
now (a few bytes a series: 50,000 of them make a page of a few MB), and the page's ``served.js`` asks ``GET
api/v1/scalars_of_tag`` for the shown series of a chart when the chart scrolls into view (one request per tag),
reduced to the chart's pixel width (``points=``), then polls ``GET api/v1/runs?after=`` (the document's
``api.pass``, then each answer's) every reload interval and asks again for the series that changed.

The other kinds (histograms and distributions, images, audio, text, PR curves, graphs, embeddings, meshes) and the
HParams table's experiments come from a snapshot of what the loader keeps (``summaries/live/snapshot.py``: its
records as the offline reader makes them), made into the report's sections by the report's own code
(``collect.other_sections``), embedded as the page loads (a reload shows what came since). The HParams table's
metrics (last, min and max with their steps) are the loader's, of every value logged. With ``aggregate`` (a regex,
as ``tfevents report --aggregate``) the groups' bands are the report's too, over a snapshot of the scalars. Read
only through the loader's read API.
"""
from __future__ import annotations

import contextlib
import datetime
import gc
import math
import operator
import threading
from typing import Any, Dict, List, Optional


from tfevents.summaries.live.loader import SCALAR, LiveLogdir, TagInfo
from tfevents.summaries.live.snapshot import DEFAULT_KINDS, snapshot
from tfevents.summaries.run_info import RunInfo
from tfevents.summaries.runs.choose import infos_in

from ..colors import run_colors
from ..plots.bands import BANDS, CENTERS
from ..plots.hparams import metric_runs
from ..plots.scalars import chart_groups
from ..reports.interactive.collect import aggregate_entries, other_sections
from ..reports.interactive.encode import Blob, finite_or_none, run_entry, short_numbers
from ..reports.interactive.page import page_html
from ..smoothing import DEFAULT_SMOOTHING

__all__ = ["live_document", "dashboard_html", "DENSITY_ABOVE"]

SERVED_SCRIPT = "served.js"   # reports/interactive/served.js: the page's requests to the API
DENSITY_ABOVE = 300           # a chart of more runs than this is drawn as their density (GET api/v1/density)


def live_document(live: LiveLogdir, *, title: str, api_base: str, reload_interval: float,
                  tensorboard: Optional[str] = None, aggregate: Optional[str] = None) -> tuple:
    """``(document, blob)`` of the page for ``live`` as it is now: the report's document shape, series without
    arrays (``fetch``: ``[points, last_step]``, for the page to ask the API for them), ``api`` the API's base path,
    the reload interval and the path of TensorBoard's UI (``tensorboard``; None: not served); ``aggregate``: the
    regex grouping runs into bands."""
    blob = Blob()
    passes = live.passes   # before reading: the page's first poll asks what changed after it
    run_names = live.run_names()
    colors = run_colors(live.run_names(every=True))   # a run keeps its colour whatever serve --where chose
    index = {run: i for i, run in enumerate(run_names)}
    series: List[Dict[str, Any]] = []
    by_tag: Dict[str, List[int]] = {}
    newest = None   # the newest point's wall time and run: the page's "last change" until it polls
    scalars = live.tags(data_class=SCALAR)   # listed once: the charts, the run list and the HParams table
    shown = sorted((i for i in scalars if i.run in index), key=operator.attrgetter("run", "tag"))   # the report's
    for info in shown:                                                                                # order
        by_tag.setdefault(info.tag, []).append(len(series))
        series.append({"run": index[info.run], "tag": info.tag, "fetch": [info.count, info.last_step]})
    walls = [(i.max_wall_time, i.run) for i in shown if math.isfinite(i.max_wall_time)]
    if walls:
        wall, run = max(walls, key=operator.itemgetter(0))   # (the first of equal wall times, as before)
        newest = {"wall": wall, "run": run}
    aggregates = aggregate_entries(snapshot(live, ("scalars",)), None, None, aggregate, index, blob) \
        if aggregate else []
    bands_of: Dict[str, List[int]] = {}
    for i, entry in enumerate(aggregates):
        bands_of.setdefault(entry["tag"], []).append(i)
    charts = [{"title": title_, "series": [i for t in members for i in by_tag[t]],
               "bands": [i for t in members for i in bands_of.get(t, ())]}
              for title_, members in chart_groups(by_tag).items()]
    others = snapshot(live, DEFAULT_KINDS)
    hparams = {run: live.hparams(run) for run in run_names}   # (parsed once: the run list and the HParams table)
    problems = [str(p) for p in getattr(live, "problems", None) or ()]
    doc: Dict[str, Any] = {
        "runs": _run_entries(hparams, scalars, run_names, colors, infos_in(live.found) if live.found else {}),
        "scalars": {"series": series, "charts": charts, "aggregates": aggregates, "x_tags": sorted(by_tag),
                    "x_only": []},
        **other_sections(others, index, blob, problems),
        "hparams": _hparams(hparams, scalars, run_names, dict(others.hparams or {})),
        "problems": problems,
        "title": title,
        "options": {"smoothing": DEFAULT_SMOOTHING, "x": "step", "logy": False, "logx": False, "smooth": None,
                    "aggregate": aggregate, "view": "bands" if aggregates else "runs", "center": CENTERS[0],
                    "band": BANDS[0]},
        "rendered": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "api": {"base": api_base, "interval": reload_interval, "density_above": DENSITY_ABOVE,
                "tensorboard": tensorboard, "newest": newest, "pass": passes},
    }
    return doc, blob


def _run_entries(hparams: Dict[str, dict], scalars: List[TagInfo], run_names: List[str], colors: Dict[str, str],
                 infos: Dict[str, RunInfo]) -> List[Dict[str, Any]]:
    """Each run's name and colour, its ``hparams`` (when it logged any), ``stats``: per scalar tag ``[last, min,
    max]`` as the loader keeps them (null when none or not finite; the sidebar's run list sorts by them), and its
    labels and notes (the run info files the loader's last walk listed)."""
    stats: Dict[str, Dict[str, list]] = {}
    numbers = short_numbers([x for info in scalars for x in (info.last, info.min, info.max)])
    for i, info in enumerate(scalars):
        stats.setdefault(info.run, {})[info.tag] = numbers[3 * i:3 * i + 3]
    return [run_entry(run, colors[run], hparams[run], stats.get(run), infos.get(run)) for run in run_names]


def _hparams(hparams: Dict[str, dict], scalars: List[TagInfo], run_names: List[str],
             records: Dict[str, Any]) -> Dict[str, Any]:
    """The HParams table (the report's shape): a row per run that logged hyperparameters or names metrics (its
    ``records``: the snapshot's, by run), its values, and per metric the last value and the best ones with their
    steps, of the run's series of the metric or of the first run below it that has one (``metric_runs``, as the
    report), as the loader keeps them (min and max of every value logged)."""
    infos = {(i.run, i.tag): i for i in scalars}
    names: List[str] = []
    metrics: List[str] = []
    rows = []
    for run in run_names:
        values = hparams[run]
        tags = list(getattr(records.get(run), "metrics", None) or [])
        if not values and not tags:
            continue
        names += [k for k in values if k not in names]
        metrics += [t for t in tags if t not in metrics]
        row: Dict[str, Any] = {"run": run, "hparams": {k: finite_or_none(v) if isinstance(v, float) else v
                                                       for k, v in values.items()}, "metrics": {}, "best": {}}
        for tag in tags:
            info = next((infos[(r, tag)] for r in metric_runs(infos, run, tag) if (r, tag) in infos), None)
            row["metrics"][tag] = None if info is None else finite_or_none(info.last)
            if info is not None:
                row["best"][tag] = {"last_value_step": info.last_step, "min": finite_or_none(info.min),
                                    "min_step": info.min_step, "max": finite_or_none(info.max),
                                    "max_step": info.max_step}
        rows.append(row)
    return {"hparams": names, "metrics": metrics, "rows": rows}


_building = 0                      # page builds under way, in this process
_building_lock = threading.Lock()
_collector_was_enabled = True      # before the first of them began


@contextlib.contextmanager
def _collector_paused():
    """The cyclic garbage collector off while a page is built, back on after the last build under way ends: a build
    makes ~300,000 dicts and lists that hold no reference cycles and die with it, and the collector's passes over
    them took ~0.2 s of a 1 s build at 10,000 runs."""
    global _building, _collector_was_enabled
    with _building_lock:
        if not _building:
            _collector_was_enabled = gc.isenabled()
            gc.disable()
        _building += 1
    try:
        yield
    finally:
        with _building_lock:
            _building -= 1
            if not _building and _collector_was_enabled:
                gc.enable()


def dashboard_html(live: LiveLogdir, *, title: str, api_base: str, reload_interval: float,
                   tensorboard: Optional[str] = None, aggregate: Optional[str] = None) -> str:
    """The page's HTML: the report's page with ``served.js``, allowed to ask this server (CSP ``connect-src
    'self'``) and nothing else."""
    with _collector_paused():
        doc, blob = live_document(live, title=title, api_base=api_base, reload_interval=reload_interval,
                                  tensorboard=tensorboard, aggregate=aggregate)
        return page_html(doc, blob, extra_scripts=(SERVED_SCRIPT,), connect="'self'")
