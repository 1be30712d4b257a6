"""The interactive report's page: TensorBoard's dashboards in one self-contained HTML file.

``render_interactive_report(logdir)`` returns the page's text: the vendored uPlot chart library
(``vendor/``, MIT), the page's own script (``report.js`` and the other ``*.js`` files here, concatenated in
``SCRIPTS`` order) and style (``report.css``) inline, and the data as JSON plus one base64 buffer of typed
arrays (``encode.py``). A Content-Security-Policy allows exactly these inline scripts (by their SHA-256)
and no network at all, so the file opens from ``file://`` anywhere and nothing a summary contains can run.
"""
from __future__ import annotations

import base64
import datetime
import functools
import hashlib
import html
import os
import threading
from typing import Any, Callable, Optional, Sequence

from tfevents.summaries.atomic import atomic_write

from ... import logdir_data
from ...plots.bands import BANDS, CENTERS
from ...smoothing import DEFAULT_SMOOTHING, Smoothing, smoothing_of
from ..rerender_on_change import watch
from .collect import collect
from .encode import Blob, script_json

HERE = os.path.dirname(os.path.abspath(__file__))
# the page's own code, in load order
SCRIPTS = ("report.js", "runlist.js", "colour.js", "smoothing.js", "scalars.js", "charts.js", "panels.js")
VENDOR_SCRIPT = os.path.join("vendor", "uPlot.iife.min.js")
STYLES = (os.path.join("vendor", "uPlot.min.css"), "report.css")
X_AXES = ("step", "relative", "wall")

__all__ = ["render_interactive_report", "page_html", "write_interactive_report", "watch_interactive_report"]


@functools.lru_cache(maxsize=None)
def _asset(name: str) -> str:
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return f.read()


def _sha256(text: str) -> str:
    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def render_interactive_report(source: Any, *, tags: Optional[str] = None, runs: Optional[str] = None,
                              smoothing: float = DEFAULT_SMOOTHING, smooth: "Optional[str | Smoothing]" = None,
                              x: str = "step", logy: bool = False, logx: bool = False,
                              group: Optional[str] = None, title: Optional[str] = None,
                              refresh_seconds: Optional[int] = None, max_images: int = 10,
                              image_steps: Optional[Sequence[int]] = None,
                              storage_options: Optional[dict] = None, aggregate: Optional[str] = None,
                              center: str = "mean", band: str = "std", where: Optional[str] = None,
                              archived: bool = False) -> str:
    """The interactive report's HTML text.

    ``source``: a logdir path or a loaded Logdir; ``tags`` / ``runs``: regexes (``re.search``) choosing
    what is embedded; ``smoothing``, ``x`` (step / relative / wall) and ``logy``: the controls' starting
    positions (``smoothing``: TensorBoard's EMA weight; ``smooth``: ``"KIND:PARAM"`` or a Smoothing, the page's
    smoothing kind and parameter to start with, e.g. ``"twema:0.6"``); ``group``: a regex whose first group
    names the chart a scalar tag is drawn in (default one chart per tag, in sections by tag prefix as
    TensorBoard); ``max_images`` / ``image_steps``: the steps of each image, video and audio series the step
    slider offers; ``storage_options``: fsspec's, for a logdir given as a URL (``s3://``, ``gs://``, ...).
    ``aggregate``: a regex grouping runs as ``tfevents.summaries.aggregate``'s ``by`` (``r"/seed_\\d+$"``: seeds;
    ``r"/rank_\\d+$"``: a job's ranks); the page then draws each group's ``center`` line ('mean' or 'median') over
    its ``band`` ('std': mean ± std, 'minmax' or 'none') and has a control to switch between the bands and the
    individual runs. ``where``: a run query (``tfevents.summaries.runs.query``) choosing the runs shown;
    archived runs are left out unless ``archived``.
    """
    smoothing = float(smoothing)
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError("smoothing must be in [0, 1], got %r" % smoothing)
    start = smoothing_of(smoothing, smooth) if smooth is not None else None
    if start is not None and start.kind == "ema":
        smoothing = float(start.param)
    if not isinstance(x, str) or not x:   # step, relative, wall or a scalar tag (the page's selector offers them)
        raise ValueError("x must be one of %s or a scalar tag, got %r" % (", ".join(X_AXES), x))
    if aggregate is not None and not isinstance(aggregate, str):
        raise TypeError("aggregate is a regex grouping runs (a str), got %r" % (aggregate,))
    if center not in CENTERS:
        raise ValueError("center must be one of %s, got %r" % (", ".join(CENTERS), center))
    if band not in BANDS:
        raise ValueError("band must be one of %s, got %r" % (", ".join(BANDS), band))
    for pattern, what in ((tags, "tag"), (runs, "run"), (group, "group"), (aggregate, "aggregate")):
        logdir_data.compile_pattern(pattern, what)
    if isinstance(source, (str, os.PathLike)):
        logdir = logdir_data.load(source, on_error="skip",   # problems are listed in the report instead
                                  storage_options=storage_options, where=where, archived=archived)
        path = os.fspath(source)
        title = title or (path if logdir_data.is_url(path) else os.path.abspath(path))
    else:
        logdir = logdir_data.load(source, where=where, archived=archived, storage_options=storage_options)
    title = title or "tfevents report"
    if x not in X_AXES and not any(tag == x for _, tag in dict(getattr(logdir, "scalars", None) or {})):
        raise ValueError("x must be one of %s or a scalar tag of the runs, got %r" % (", ".join(X_AXES), x))
    doc, blob = collect(logdir, tags=tags, runs=runs, group=group, image_steps=image_steps,
                        max_images=max_images, aggregate=aggregate or None, x=x)
    doc.update(title=title, options={"smoothing": smoothing, "x": x, "logy": bool(logy), "aggregate": aggregate or None,
                                     "smooth": {"kind": start.kind, "param": start.param} if start else None,
                                     "logx": bool(logx),
                                     "view": "bands" if doc["scalars"]["aggregates"] else "runs",
                                     "center": center, "band": band},
               rendered=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"))
    return page_html(doc, blob, refresh_seconds=refresh_seconds)


def page_html(doc: dict, blob: Blob, *, refresh_seconds: Optional[int] = None, extra_scripts: Sequence[str] = (),
              connect: str = "'none'") -> str:
    """The page's HTML for a collected ``doc`` (with ``title``, ``options`` and ``rendered``) and its ``blob``: the
    assets inline, the data embedded. ``extra_scripts``: more of this folder's scripts, run after ``SCRIPTS`` in the
    same closure (the served dashboard's ``served.js``); ``connect``: the CSP's ``connect-src`` (``'none'``: no
    request at all, as a report file; the dashboard: ``'self'``)."""
    blob_text, encoding = blob.encoded()
    vendor = _asset(VENDOR_SCRIPT)
    own = "(function () {\n\"use strict\";\n%s\n})();" % "\n".join(_asset(name)
                                                                 for name in (*SCRIPTS, *extra_scripts))
    csp = ("default-src 'none'; script-src %s %s; style-src 'unsafe-inline'; img-src data: blob:; "
           "media-src data:; connect-src %s; base-uri 'none'; form-action 'none'"
           % (_sha256(vendor), _sha256(own), connect))
    head = ['<meta charset="utf-8">', '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta http-equiv="Content-Security-Policy" content="%s">' % csp,
            "<title>%s</title>" % html.escape(doc["title"]),
            "<style>%s</style>" % "\n".join(_asset(name) for name in STYLES)]
    if refresh_seconds:
        head.append('<meta http-equiv="refresh" content="%d">' % int(refresh_seconds))
    body = ['<div id="app"><noscript>This report needs JavaScript.</noscript></div>',
            '<script type="application/json" id="tfe-data">%s</script>' % script_json(doc),
            '<script type="application/octet-stream" id="tfe-blob" data-encoding="%s">%s</script>'
            % (encoding, blob_text),
            "<script>%s</script>" % vendor, "<script>%s</script>" % own]
    return '<!DOCTYPE html>\n<html lang="en"><head>%s</head><body>%s</body></html>\n' % (
        "".join(head), "\n".join(body))


def write_interactive_report(source: Any, path: str, **kwargs: Any) -> str:
    """Render and write atomically (a reader never sees a half-written file); returns ``path``."""
    return atomic_write(path, render_interactive_report(source, **kwargs).encode("utf-8"), durable=False)


def watch_interactive_report(logdir: str, path: str, *, interval: float = 2.0,
                             stop: Optional[threading.Event] = None,
                             on_render: Optional[Callable[[str], None]] = None, **kwargs: Any) -> None:
    """Write the report, then re-render it whenever the logdir's event files change, until ``stop`` is
    set. The open page reloads itself every ``interval`` seconds (at least 2) and keeps its controls."""
    kwargs.setdefault("refresh_seconds", max(2, int(round(interval))))
    watch(logdir, lambda: write_interactive_report(logdir, path, **kwargs), interval=interval, stop=stop,
          on_render=(lambda: on_render(path)) if on_render else None)
