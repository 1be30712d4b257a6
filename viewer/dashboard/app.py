"""The Starlette app of the dashboard and its HTTP JSON API over a ``LiveLogdir``, read only through its read API.

``GET /``: the dashboard's page (``page.py``: the interactive report's page asking these routes for its data).

API routes (every answer JSON, ``Content-Type: application/json``, but series asked for with ``encoding=binary``;
run and tag names travel as query parameters, since they hold slashes):

- ``GET /api/v1/runs``: ``{"pass", "runs": [{"run", "start_time", "hparams": {name: value}, "scalars": {tag:
  {"last", "last_step", "last_wall_time", "min", "min_step", "max", "max_step", "points"}}}]}``, runs sorted by
  name; ``min``/``max`` are of every value logged (NaN left out; null with their steps when there is none),
  ``points`` the points kept; ``pass`` the server's reload passes done. With ``after=PASS`` only the runs with a
  series that changed in a pass after ``PASS`` (a previous answer's ``pass``), with only those series (what
  changed, for a page that polls: the dashboard's); with ``since=WALL`` (seconds since the epoch) only those with
  a series whose last point's wall time is at least ``WALL``, likewise. With
  ``where=QUERY`` only the runs the run query chooses (``tfevents.summaries.runs.query`` on the run table of what
  the server holds: hparams, labels, notes, each scalar tag's ``.last/.min/.max/.step``); a query that does not
  parse, or names no column of the table, is a 400 whose ``error`` has the position and a caret line.
- ``GET /api/v1/tags?run=R``: ``{"run", "tags": [{"tag", "plugin", "data_class", "last_step", "last_wall_time",
  "points"}]}``; ``data_class`` is ``"scalar"``, ``"tensor"``, ``"blob_sequence"`` or ``"unknown"``.
- ``GET /api/v1/scalars?run=R&tag=T[&points=N]``: ``{"run", "tag", "step": [...], "wall_time": [...],
  "value": [...]}``, the kept points oldest first; with ``start=S`` / ``end=E`` only those of steps S to E
  (inclusive), with ``points=N`` only those that N pixel columns draw (``reduce.m4_indices``; after the cut, so a
  zoomed-in chart asks for its range in full resolution); with ``encoding=base64`` each column is base64 of its
  little-endian values: ``step`` and ``wall_time`` float64, ``value`` float32 (a hundred thousand points encode in
  milliseconds, where JSON's numbers take a good part of a second); with ``encoding=binary`` the answer is those
  columns' bytes after a JSON head (``responses.binary_series_response``; ``application/octet-stream``: what the
  dashboard asks for, read as typed-array views of the answer).
- ``GET /api/v1/scalars_of_tag?tag=T[&points=N][&runs=REGEX][&run=R...][&where=QUERY][&start=S][&end=E]``:
  ``{"tag", "series": [{"run", "step", "wall_time", "value"}]}``, the series ``T`` of every run that has it, whose name
  ``re.search``-matches ``REGEX`` and, when ``run=`` is given (repeatable: exact names), is one of those; runs by
  name, each as ``/api/v1/scalars`` answers it (one request for a chart of many runs; the dashboard's); with
  ``where=QUERY`` only the runs the query chooses, as for ``runs``.
- ``GET /api/v1/density?tag=T&width=W&height=H[&runs=REGEX][&run=R...][&where=QUERY][&logy=1]``: the density
  (``density.density``) of the scalar series ``T`` of the runs chosen as for ``scalars_of_tag``, on a ``W`` × ``H``
  raster (1 to 4096 each, at most 2**22 pixels): ``{"tag", "width", "height", "logy", "x_range": [x0, x1],
  "y_range": [y0, y1], "runs": [names], "density": base64, "owner": base64}``, runs by name; the ranges are the
  data's (``density.data_range``), ``density`` is float32 little-endian, ``owner`` int32 little-endian (the index
  in ``runs`` of the run of greatest weight at each pixel, -1 where none passes), both ``H`` rows of ``W`` pixels,
  the top row first.

``tfevents serve`` adds ``/tensorboard/``: TensorBoard's UI, forwarded to its web server (``proxy.py``).

Non-finite numbers: NaN is ``null``, +inf and -inf are the strings ``"Infinity"`` and ``"-Infinity"``. Names are
data: JSON strings with ``<``, ``>`` and ``&`` escaped as ``\\u003c``, ``\\u003e``, ``\\u0026``. Errors:
``{"error": message, "parameter": name}`` with 400 (a missing or malformed parameter) or 404 (no such run, tag or
scalar series).
"""
from __future__ import annotations

import base64
import math
import re
import threading
from typing import Dict, List, Optional, Tuple

import numpy as np
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from tfevents.summaries.live.loader import BLOB_SEQUENCE, SCALAR, TENSOR, LiveLogdir, TagInfo

from .density import MAX_PIXELS, MAX_SIDE, data_range, density
from .page import dashboard_html
from .proxy import MOUNT, tensorboard_routes
from .reduce import m4_indices
from .responses import (SERIES_DTYPES, base64_series_response, binary_series_response, json_list, json_number,
                        json_response)

__all__ = ["build_app", "normalize_prefix", "MAX_POINTS"]

MAX_POINTS = 100_000   # the most pixel columns ``points=`` may ask for
ENCODINGS = ("json", "base64", "binary")
FIRST_PASS_WAIT = 600  # seconds the page waits for the first pass over the logdir before showing what is in
DATA_CLASS_NAMES = {SCALAR: "scalar", TENSOR: "tensor", BLOB_SEQUENCE: "blob_sequence"}


class BadRequest(Exception):
    def __init__(self, status: int, parameter: str, message: str):
        super().__init__(message)
        self.status, self.parameter, self.message = status, parameter, message


def _required(request: Request, name: str) -> str:
    value = request.query_params.get(name)
    if value is None or value == "":
        raise BadRequest(400, name, "the query parameter %r is required" % name)
    return value


def _points_parameter(request: Request) -> Optional[int]:
    text = request.query_params.get("points")
    if text is None:
        return None
    try:
        points = int(text)
    except ValueError:
        points = 0
    if not 1 <= points <= MAX_POINTS:
        raise BadRequest(400, "points", "points must be an integer from 1 to %d, got %r" % (MAX_POINTS, text))
    return points


def _step_range(request: Request) -> Tuple[Optional[int], Optional[int]]:
    """``start`` and ``end``: the steps a series is cut to (inclusive; either may be left out)."""
    bounds = []
    for name in ("start", "end"):
        text = request.query_params.get(name)
        try:
            bounds.append(None if text is None else int(text))
        except ValueError:
            raise BadRequest(400, name, "%s must be an integer step, got %r" % (name, text)) from None
    return bounds[0], bounds[1]


def _known_run(live: LiveLogdir, run: str) -> str:
    if run not in live.run_names():
        raise BadRequest(404, "run", "no such run: %r" % run)
    return run


class RunQueries:
    """The runs a ``where=`` query chooses: the run table of what the loader holds is made once per pass, however
    many requests ask (``tfevents.summaries.runs.live_table``), and each query's answer kept until the next pass."""

    def __init__(self, live: LiveLogdir):
        self.live = live
        self.lock = threading.Lock()
        self.passes = -1
        self.table = None
        self.answers: Dict[str, frozenset] = {}

    def chosen(self, where: str) -> frozenset:
        from tfevents.summaries.runs.choose import chosen_names  # lazy: pandas and lark, only for a query
        from tfevents.summaries.runs.live_table import live_runs_table  # lazy: likewise
        from tfevents.summaries.runs.query import QueryError  # lazy: likewise
        with self.lock:
            if self.passes != self.live.passes:
                self.passes, self.table, self.answers = self.live.passes, None, {}
            if where not in self.answers:
                if self.table is None:
                    self.table = live_runs_table(self.live)
                try:
                    names = chosen_names(self.table, where)
                except QueryError as err:
                    raise BadRequest(400, "where", str(err)) from None
                self.answers[where] = frozenset(names) & frozenset(self.live.run_names())
            return self.answers[where]


def _where(request: Request, queries: RunQueries) -> Optional[frozenset]:
    """The runs ``where=`` chooses (None: no ``where``, or a blank one)."""
    text = request.query_params.get("where")
    return queries.chosen(text) if text is not None and text.strip() else None


def _scalar_summary(info: TagInfo) -> Dict[str, object]:
    none_logged = math.isnan(info.min)
    return {"last": json_number(info.last), "last_step": info.last_step,
            "last_wall_time": json_number(info.max_wall_time),
            "min": None if none_logged else json_number(info.min),
            "min_step": None if none_logged else info.min_step,
            "max": None if none_logged else json_number(info.max),
            "max_step": None if none_logged else info.max_step,
            "points": info.count}


def runs(live: LiveLogdir, since: Optional[float] = None, where: Optional[frozenset] = None,
         after: Optional[int] = None) -> Dict[str, object]:
    """Every run, or with ``since`` only the runs with a scalar series whose last point's wall time is at least
    ``since``, and with ``after`` only those with a scalar series that changed in a reload pass after that one, and
    of those only such series (what a page that polls asks: what changed); with ``where`` only the runs in it.
    ``pass``: the passes done when the answer was made (the next poll's ``after``)."""
    passes = live.passes   # read first: a pass that ends while this answer is made is reported again next time
    scalars: Dict[str, Dict[str, object]] = {}
    for info in live.tags(data_class=SCALAR, changed_after=after):
        if (since is None or info.max_wall_time >= since) and (where is None or info.run in where):
            scalars.setdefault(info.run, {})[info.tag] = _scalar_summary(info)
    names = live.run_names() if since is None and after is None else sorted(scalars)
    if where is not None:
        names = [name for name in names if name in where]
    return {"pass": passes, "runs": [{"run": name, "start_time": live.start_time(name),
                      "hparams": {k: json_number(v) if isinstance(v, float) else v
                                  for k, v in live.hparams(name).items()},
                      "scalars": scalars.get(name, {})}
                     for name in names]}


def _since(request: Request) -> Optional[float]:
    text = request.query_params.get("since")
    if text is None:
        return None
    try:
        since = float(text)
    except ValueError:
        since = math.nan
    if not math.isfinite(since):
        raise BadRequest(400, "since", "since must be a wall time in seconds, got %r" % text)
    return since


def _after(request: Request) -> Optional[int]:
    text = request.query_params.get("after")
    if text is None:
        return None
    try:
        after = int(text)
    except ValueError:
        after = -1
    if after < 0:
        raise BadRequest(400, "after", "after must be a reload pass (an integer, 0 or more), got %r" % text)
    return after


def tags(live: LiveLogdir, run: str) -> Dict[str, object]:
    infos: List[TagInfo] = live.tags(runs=[_known_run(live, run)])
    return {"run": run, "tags": [{"tag": i.tag, "plugin": i.plugin,
                                  "data_class": DATA_CLASS_NAMES.get(i.data_class, "unknown"),
                                  "last_step": i.last_step, "last_wall_time": json_number(i.max_wall_time),
                                  "points": i.count} for i in infos]}


Columns = Tuple[np.ndarray, np.ndarray, np.ndarray]   # a series' step, wall_time and value


def _series(live: LiveLogdir, run: str, tag: str, points: Optional[int],
            steps: Tuple[Optional[int], Optional[int]] = (None, None)) -> Columns:
    """``(step, wall_time, value)`` of a scalar series, cut to the steps ``steps`` (inclusive bounds, None: open),
    then reduced to ``points`` pixel columns when given."""
    series = live.points(run, tag)
    step, wall_time, value = series.step, series.wall_time, series.value
    start, end = steps
    if start is not None or end is not None:
        keep = np.ones(len(step), dtype=bool)
        if start is not None:
            keep &= step >= start
        if end is not None:
            keep &= step <= end
        step, wall_time, value = step[keep], wall_time[keep], value[keep]
    if points is not None:
        keep = m4_indices(step, value, points)
        step, wall_time, value = step[keep], wall_time[keep], value[keep]
    return step, wall_time, value


def _columns(columns: Columns, encoding: str) -> Dict[str, object]:
    """``{"step", "wall_time", "value"}``: JSON arrays, or with ``encoding`` "base64" each column as base64 of its
    little-endian values (``SERIES_DTYPES``)."""
    if encoding == "base64":
        return {name: _base64(column, dtype) for (name, dtype), column in zip(SERIES_DTYPES, columns)}
    step, wall_time, value = columns
    return {"step": step.tolist(), "wall_time": json_list(wall_time),
            "value": json_list(np.asarray(value, dtype=np.float64))}


def _base64(column: np.ndarray, dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(column, dtype=dtype).tobytes()).decode("ascii")


def _encoding(request: Request) -> str:
    """``encoding=``: ``json`` (the default), ``base64`` or ``binary``."""
    encoding = request.query_params.get("encoding", "json")
    if encoding not in ENCODINGS:
        raise BadRequest(400, "encoding", "encoding must be json, base64 or binary, got %r" % encoding)
    return encoding


def scalars(live: LiveLogdir, run: str, tag: str, points: Optional[int],
            steps: Tuple[Optional[int], Optional[int]] = (None, None), encoding: str = "json"):
    """The answer's content, or with ``encoding=binary`` the answer itself (``binary_series_response``)."""
    _known_run(live, run)
    if not live.tags(runs=[run], tags=[tag], data_class=SCALAR):
        raise BadRequest(404, "tag", "run %r has no scalar series %r" % (run, tag))
    columns = _series(live, run, tag, points, steps)
    if encoding == "binary":
        return binary_series_response({"run": run, "tag": tag}, [(run, columns)])
    return {"run": run, "tag": tag, **_columns(columns, encoding)}


def _runs_pattern(request: Request) -> "re.Pattern":
    try:
        return re.compile(request.query_params.get("runs", ""))
    except re.error as err:
        raise BadRequest(400, "runs", "runs is not a regular expression: %s" % err)


def _chosen_runs(live: LiveLogdir, tag: str, request: Request, queries: RunQueries) -> List[str]:
    """The runs (by name) that have the scalar series ``tag``, chosen by the request: those named by ``run=``
    (repeatable, exact names) if any, whose name ``re.search``-matches ``runs=`` (default: every run) and that
    ``where=`` chooses (default: every run); 404 when none."""
    named = set(request.query_params.getlist("run"))
    chosen = _runs_pattern(request)
    where = _where(request, queries)
    listed = live.tags(runs=sorted(named) if named else None, tags=[tag], data_class=SCALAR)   # (named: those only)
    names = sorted(i.run for i in listed if chosen.search(i.run) and (where is None or i.run in where))
    if not names:
        raise BadRequest(404, "tag", "no run chosen (runs=%r, %d run= names) has a scalar series %r"
                         % (chosen.pattern, len(named), tag))
    return names


def scalars_of_tag(live: LiveLogdir, request: Request, queries: RunQueries):
    """The answer's content, or with ``encoding=base64`` or ``binary`` the answer itself."""
    tag, points, steps = _required(request, "tag"), _points_parameter(request), _step_range(request)
    encoding = _encoding(request)
    series = [(run, _series(live, run, tag, points, steps)) for run in _chosen_runs(live, tag, request, queries)]
    if encoding == "binary":
        return binary_series_response({"tag": tag}, series)
    if encoding == "base64":
        return base64_series_response({"tag": tag}, [(run, _columns(columns, encoding)) for run, columns in series])
    return {"tag": tag, "series": [{"run": run, **_columns(columns, encoding)} for run, columns in series]}


def _side(request: Request, name: str) -> int:
    text = _required(request, name)
    try:
        side = int(text)
    except ValueError:
        side = 0
    if not 1 <= side <= MAX_SIDE:
        raise BadRequest(400, name, "%s must be an integer from 1 to %d, got %r" % (name, MAX_SIDE, text))
    return side


def density_of(live: LiveLogdir, request: Request, queries: RunQueries) -> Dict[str, object]:
    tag, width, height = _required(request, "tag"), _side(request, "width"), _side(request, "height")
    if width * height > MAX_PIXELS:
        raise BadRequest(400, "height", "width x height must be at most %d pixels, got %d" % (MAX_PIXELS,
                                                                                             width * height))
    logy = request.query_params.get("logy", "0") not in ("0", "", "false")
    names = _chosen_runs(live, tag, request, queries)
    series = live.steps_and_values_of(names, tag)
    x_range, y_range = data_range(series, logy)
    d = density(series, x_range, y_range, width, height, logy)
    return {"tag": tag, "width": width, "height": height, "logy": logy, "x_range": list(x_range),
            "y_range": list(y_range), "runs": names,
            "density": base64.b64encode(d.density.astype("<f4").tobytes()).decode("ascii"),
            "owner": base64.b64encode(d.owner.astype("<i4").tobytes()).decode("ascii")}


def normalize_prefix(prefix: str) -> str:
    """'/x/', 'x', '/x' -> '/x'; '/' or '' -> ''."""
    return "/" + prefix.strip("/") if prefix.strip("/") else ""


def build_app(live: LiveLogdir, path_prefix: str = "/", *, title: Optional[str] = None,
              reload_interval: float = 5.0, loaded: Optional[threading.Event] = None,
              tensorboard: Optional[Tuple[str, int]] = None, aggregate: Optional[str] = None) -> Starlette:
    """The dashboard's page (``/``, ``page.py``) and the API's routes over ``live``, under ``path_prefix`` (``/x/``
    serves ``/x/`` and ``/x/api/v1/...``); ``title``: the page's (default the logdir's path); ``reload_interval``:
    how often the page asks what changed; ``loaded``: set once the first pass is in (the page waits for it, at most
    ``FIRST_PASS_WAIT`` seconds); ``tensorboard``: the ``(host, port)`` of TensorBoard's web server, forwarded at
    ``/tensorboard/`` (``proxy.py``) and linked from the page; ``aggregate``: the regex grouping runs into the page's
    bands (as ``tfevents report --aggregate``)."""
    prefix = normalize_prefix(path_prefix)

    def page(request: Request) -> Response:   # sync: on Starlette's thread pool, so waiting blocks no other request
        if loaded is not None:
            loaded.wait(FIRST_PASS_WAIT)
        text = dashboard_html(live, title=title or live.path, api_base=prefix + "/api/v1/",
                              reload_interval=reload_interval,
                              tensorboard=prefix + MOUNT + "/" if tensorboard else None, aggregate=aggregate)
        return Response(text.encode("utf-8"), media_type="text/html; charset=utf-8",
                        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
                                 "Referrer-Policy": "no-referrer"})

    queries = RunQueries(live)
    # A page asks for the series of every chart in view at once. Built side by side, their answers share the GIL
    # and all arrive at the end (six charts of 100 runs: each after ~0.3 s); built one at a time, in the order
    # asked, the first arrives after ~0.03 s and the page draws it while the server builds the next.
    series_answers = threading.Lock()

    def one_at_a_time(read):
        def locked(request: Request):
            with series_answers:
                return read(request)
        return locked

    def answer(read):
        def endpoint(request: Request) -> Response:   # sync: Starlette runs it on its thread pool
            try:
                content = read(request)
                return content if isinstance(content, Response) else json_response(content)
            except BadRequest as err:
                return json_response({"error": err.message, "parameter": err.parameter}, err.status)
        return endpoint

    routes = [
        Route("/", page),
        Route("/api/v1/runs", answer(lambda r: runs(live, _since(r), _where(r, queries), _after(r)))),
        Route("/api/v1/tags", answer(lambda r: tags(live, _required(r, "run")))),
        Route("/api/v1/scalars", answer(lambda r: scalars(live, _required(r, "run"), _required(r, "tag"),
                                                          _points_parameter(r), _step_range(r), _encoding(r)))),
        Route("/api/v1/scalars_of_tag", answer(one_at_a_time(lambda r: scalars_of_tag(live, r, queries)))),
        Route("/api/v1/density", answer(lambda r: density_of(live, r, queries))),
    ]
    if tensorboard is not None:
        routes += tensorboard_routes(*tensorboard)
    app = Starlette(routes=[Mount(prefix, routes=routes)] if prefix else routes)

    async def not_found(request: Request, exc) -> Response:
        return json_response({"error": "no such route: %s" % request.url.path}, 404)

    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, lambda request, exc: json_response({"error": "method not allowed"}, 405))
    return app
