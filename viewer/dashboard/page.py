"""The dashboard's page at ``/``: the interactive report's page (the same JS and CSS, ``reports/interactive/``) over a
``LiveLogdir``, its data asked for on demand instead of embedded.

The embedded document is the report's (``collect.py``'s shape) with the runs, their colours and hparams, and the
scalar charts and series, but every series' arrays empty: each series carries ``fetch`` (its run and tag, its
``points`` and ``last_step`` as listed now), and the page's ``served.js`` asks ``GET api/v1/scalars_of_tag`` for the
series of a chart when the chart scrolls into view (one request per tag), reduced to the chart's pixel width
(``points=``), then polls ``GET api/v1/runs`` every reload interval and asks again for the series that changed. The
other kinds are not in the dashboard yet (the report file has them). Read only through the loader's read API.
"""
from __future__ import annotations

import datetime
from typing import Any, Dict, List, Optional

import numpy as np

from tfevents.summaries.live.loader import SCALAR, LiveLogdir

from ..colors import run_colors
from ..plots.bands import BANDS, CENTERS
from ..plots.scalars import chart_groups
from ..reports.interactive.collect import MEDIA_AND_OTHER_SECTIONS
from ..reports.interactive.encode import Blob, finite_or_none
from ..reports.interactive.page import page_html
from ..smoothing import DEFAULT_SMOOTHING

__all__ = ["live_document", "dashboard_html", "DENSITY_ABOVE"]

SERVED_SCRIPT = "served.js"   # reports/interactive/served.js: the page's requests to the API
DENSITY_ABOVE = 300           # a chart of more runs than this is drawn as their density (GET api/v1/density)


def live_document(live: LiveLogdir, *, title: str, api_base: str, reload_interval: float,
                  tensorboard: Optional[str] = None) -> tuple:
    """``(document, blob)`` of the page for ``live`` as it is now: the report's document shape, series arrays
    empty (``fetch`` names what to ask the API for), ``api`` the API's base path, the reload interval and the path
    of TensorBoard's UI (``tensorboard``; None: not served)."""
    blob = Blob()
    empty = {"step": blob.add(np.zeros(0, np.int32)), "wall": blob.add(np.zeros(0, np.float64)),
             "value": blob.add(np.zeros(0, np.float32))}
    run_names = live.run_names()
    colors = run_colors(run_names)
    index = {run: i for i, run in enumerate(run_names)}
    series: List[Dict[str, Any]] = []
    by_tag: Dict[str, List[int]] = {}
    for info in sorted(live.tags(data_class=SCALAR), key=lambda i: (i.run, i.tag)):   # the report's order
        if info.run not in index:
            continue
        by_tag.setdefault(info.tag, []).append(len(series))
        series.append({"run": index[info.run], "tag": info.tag, **empty,
                       "fetch": {"run": info.run, "tag": info.tag, "points": info.count,
                                 "last_step": info.last_step}})
    charts = [{"title": title_, "series": [i for t in members for i in by_tag[t]], "bands": []}
              for title_, members in chart_groups(by_tag).items()]
    doc: Dict[str, Any] = {
        "runs": [{"name": run, "color": colors[run]} for run in run_names],
        "scalars": {"series": series, "charts": charts, "aggregates": [], "x_tags": sorted(by_tag), "x_only": []},
        **{section: [] for section in MEDIA_AND_OTHER_SECTIONS},   # not in the dashboard yet
        "hparams": _hparams(live, run_names),
        "problems": [str(p) for p in getattr(live, "problems", None) or ()],
        "title": title,
        "options": {"smoothing": DEFAULT_SMOOTHING, "x": "step", "logy": False, "logx": False, "smooth": None,
                    "aggregate": None, "view": "runs", "center": CENTERS[0], "band": BANDS[0]},
        "rendered": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "api": {"base": api_base, "interval": reload_interval, "density_above": DENSITY_ABOVE,
                "tensorboard": tensorboard},
    }
    return doc, blob


def _hparams(live: LiveLogdir, run_names: List[str]) -> Dict[str, Any]:
    """The HParams table of the runs that logged hyperparameters (no metrics columns yet)."""
    rows, names = [], set()
    for run in run_names:
        values = live.hparams(run)
        if values:
            names.update(values)
            rows.append({"run": run, "hparams": {k: finite_or_none(v) if isinstance(v, float) else v
                                                 for k, v in values.items()},
                         "metrics": {}, "best": {}})
    return {"hparams": sorted(names), "metrics": [], "rows": rows}


def dashboard_html(live: LiveLogdir, *, title: str, api_base: str, reload_interval: float,
                   tensorboard: Optional[str] = None) -> str:
    """The page's HTML: the report's page with ``served.js``, allowed to ask this server (CSP ``connect-src
    'self'``) and nothing else."""
    doc, blob = live_document(live, title=title, api_base=api_base, reload_interval=reload_interval,
                              tensorboard=tensorboard)
    return page_html(doc, blob, extra_scripts=(SERVED_SCRIPT,), connect="'self'")
