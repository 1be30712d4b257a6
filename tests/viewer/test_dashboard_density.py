"""The density of many runs (viewer/dashboard/density.py, DenseLines) against hand-checked rasters and a direct
per-segment, per-column reference; the owner raster and ``nearest_run``; the ``/api/v1/density`` route over a
``LiveLogdir`` against the function on ``load_logdir``'s series; 2,000 runs. Each test runs twice: with the C
extension (``_density.c``) and with the numpy code it replaces (test_dashboard_density_extension.py holds the two
to each other on many runs)."""
from __future__ import annotations

import asyncio
import base64
import json
import math
import urllib.parse
from collections import defaultdict
from typing import Dict, List, Set, Tuple

import numpy as np
import pytest

from _density_runs import random_runs
from tfevents.summaries import SummaryWriter, load_logdir
from tfevents.viewer.dashboard.density import MAX_PIXELS, MAX_SIDE, data_range, density, load_kernel, nearest_run

pytest.importorskip("starlette")

from tfevents.summaries.live.loader import LiveLogdir  # noqa: E402
from tfevents.viewer.dashboard.app import build_app  # noqa: E402


@pytest.fixture(autouse=True, params=["extension", "numpy"])
def density_code(request, monkeypatch):
    """Which code draws the densities: the C extension, or the numpy code (``TFEVENTS_DENSITY_KERNEL=0``)."""
    if request.param == "numpy":
        monkeypatch.setenv("TFEVENTS_DENSITY_KERNEL", "0")
    elif load_kernel() is None:
        pytest.skip("the _density extension is not built (no C compiler at install): the numpy code draws alone")
    return request.param


# -- a direct reference: each run's covered cells, column by column, in Python loops

def covered_cells(step, value, x_range, y_range, width, height, logy=False) -> Dict[int, Set[int]]:
    """column -> rows run covers there: its lone points' pixels and, for each segment, the rows between the floor
    of its v at the two ends of its part inside [c, c + 1] (a part of positive length; clipped to the chart)."""
    (x0, x1), (y0, y1) = x_range, y_range
    if logy:
        y0, y1 = math.log10(y0), math.log10(y1)
    sx, sy = width / (x1 - x0), height / (y1 - y0)
    order = np.argsort(np.asarray(step), kind="stable")
    xs = [float(s) for s in np.asarray(step, dtype=np.float64)[order]]
    vs = []
    for y in np.asarray(value, dtype=np.float64)[order]:
        t = y if not logy else (math.log10(y) if y > 0 else (-math.inf if y == 0 else math.nan))
        vs.append(0.0 if t == math.inf else float(height) if t == -math.inf else (y1 - t) * sy)
    us = [(x - x0) * sx for x in xs]
    us = [np.nextafter(float(width), 0.0) if u == width else u for u in us]
    cells: Dict[int, Set[int]] = defaultdict(set)

    def cover(c, lo_v, hi_v):
        if hi_v < 0 or lo_v > height:
            return
        for r in range(min(max(int(math.floor(lo_v)), 0), height - 1), min(int(math.floor(hi_v)), height - 1) + 1):
            cells[c].add(r)

    for u, v in zip(us, vs):
        if not math.isnan(v) and 0 <= u <= width:
            cover(min(int(math.floor(u)), width - 1), v, v)
    for (ua, va), (ub, vb) in zip(zip(us, vs), zip(us[1:], vs[1:])):
        if math.isnan(va) or math.isnan(vb):
            continue
        if ua == ub:
            if 0 <= ua < width:
                cover(int(math.floor(ua)), min(va, vb), max(va, vb))
            continue
        for c in range(max(0, int(math.floor(ua))), min(width, int(math.floor(ub)) + 1)):
            left, right = max(ua, c), min(ub, c + 1)
            if left >= right:
                continue
            ends = [va + (vb - va) * ((e - ua) / (ub - ua)) if e != ua else va for e in (left, right)]
            ends = [vb if e == ub else x for e, x in zip((left, right), ends)]
            cover(c, min(ends), max(ends))
    return cells


def reference(series, x_range, y_range, width, height, logy=False) -> Tuple[np.ndarray, List[Dict[int, Set[int]]]]:
    dens = np.zeros((height, width))
    every = []
    for step, value in series:
        cells = covered_cells(step, value, x_range, y_range, width, height, logy)
        for c, rows in cells.items():
            for r in rows:
                dens[r, c] += 1.0 / len(rows)
        every.append(cells)
    return dens, every


def check_owner(owner: np.ndarray, every: List[Dict[int, Set[int]]], dens: np.ndarray) -> None:
    """Each pixel's owner covers it with the greatest weight there (the first on ties); -1 where none covers."""
    height, width = owner.shape
    for r in range(height):
        for c in range(width):
            covering = [(len(cells[c]), i) for i, cells in enumerate(every) if r in cells.get(c, ())]
            assert owner[r, c] == (min(covering)[1] if covering else -1), (r, c)
    assert ((owner >= 0) == (dens > 0)).all()


# -- hand-checked rasters

X, Y = (0.0, 4.0), (0.0, 1.0)


def test_a_horizontal_line_weighs_one_in_each_column_of_its_row():
    d = density([(np.arange(11), np.full(11, 0.5))], (0, 10), Y, 5, 4)
    expected = np.zeros((4, 5), np.float32)
    expected[2] = 1.0   # v = (1 - 0.5) * 4 = 2: row 2 (row 0 at the top)
    np.testing.assert_array_equal(d.density, expected)
    assert d.density.dtype == np.float32 and d.owner.dtype == np.int32
    assert (d.owner[2] == 0).all() and (np.delete(d.owner, 2, axis=0) == -1).all()


def test_a_vertical_jump_in_one_column_spreads_one_over_the_rows_it_crosses():
    step, value = np.array([0.0, 2.0, 2.0, 4.0]), np.array([0.15, 0.15, 0.85, 0.85])   # v 8.5 | 8.5..1.5 | 1.5
    d = density([(step, value)], X, Y, 4, 10)
    expected = np.zeros((10, 4))
    expected[8, 0] = expected[8, 1] = expected[1, 3] = 1.0
    expected[1:9, 2] = 1 / 8
    np.testing.assert_allclose(d.density, expected, rtol=1e-6)
    np.testing.assert_allclose(d.density.sum(axis=0), 1.0, rtol=1e-6)
    # a steep line: in each column, the rows between where it crosses the column's edges, v = 9.7 - 2.3 u
    d = density([(np.array([0.0, 4.0]), np.array([0.03, 0.95]))], X, Y, 4, 10)
    for c, rows in enumerate([[7, 8, 9], [5, 6, 7], [2, 3, 4, 5], [0, 1, 2]]):
        np.testing.assert_allclose(d.density[:, c], np.isin(np.arange(10), rows) / len(rows), rtol=1e-6)


def test_two_identical_runs_give_two_and_the_first_owns():
    run = (np.arange(5), np.array([0.1, 0.7, 0.3, 0.9, 0.5]))
    one, two = density([run], X, Y, 4, 6), density([run, run], X, Y, 4, 6)
    np.testing.assert_allclose(two.density, 2 * one.density, rtol=1e-6)
    np.testing.assert_array_equal(two.owner, one.owner)


def test_nan_breaks_the_line_and_two_parts_in_one_column_count_once():
    d = density([(np.array([0, 2, 4]), np.array([0.15, np.nan, 0.85]))], X, Y, 4, 10)
    expected = np.zeros((10, 4))
    expected[8, 0] = expected[1, 3] = 1.0   # two lone points, nothing between
    np.testing.assert_array_equal(d.density, expected)
    # one column: the part 0.05 -> 0.25 (v 9.5 -> 7.5: rows 7-9), then a lone 0.15 (row 8): the union, 1/3 each
    d = density([(np.arange(4), np.array([0.05, 0.25, np.nan, 0.15]))], (0, 3), Y, 1, 10)
    np.testing.assert_allclose(d.density[:, 0], np.isin(np.arange(10), [7, 8, 9]) / 3, rtol=1e-6)


def test_infinities_are_drawn_at_the_edges_and_log_y_breaks_at_negatives():
    d = density([(np.arange(3), np.array([0.5, np.inf, 0.5]))], (0, 2), Y, 2, 4)
    # up from row 2 to the top edge in column 0, and down again in column 1 (the inf point at u = 1: column 1)
    np.testing.assert_allclose(d.density, np.array([[1 / 3, 1 / 3]] * 3 + [[0, 0]]), rtol=1e-6)
    d = density([(np.arange(3), np.array([0.5, -np.inf, 0.5]))], (0, 2), Y, 2, 4)
    np.testing.assert_allclose(d.density, np.array([[0, 0]] * 2 + [[0.5, 0.5]] * 2), rtol=1e-6)
    # log y over 0.01..100 (4 decades, 4 rows): 1 is row 2; 0 is -inf (bottom edge), -1 a break
    d = density([(np.arange(4), np.array([1.0, 0.0, -1.0, 1.0]))], (0, 3), (0.01, 100.0), 3, 4, logy=True)
    np.testing.assert_allclose(d.density, [[0, 0, 0], [0, 0, 0], [0.5, 0, 1], [0.5, 1, 0]], rtol=1e-6)


def test_points_outside_the_x_range_are_clipped_away():
    d = density([(np.array([-2.0, 2.0, 6.0]), np.array([0.5, 0.5, 0.5]))], X, Y, 4, 2)
    np.testing.assert_array_equal(d.density, [[0, 0, 0, 0], [1, 1, 1, 1]])
    d = density([(np.array([5.0, 6.0]), np.array([0.5, 0.5]))], X, Y, 4, 2)
    assert not d.density.any() and (d.owner == -1).all()


# -- against the reference

@pytest.mark.parametrize("seed, width, height, nan", [(0, 13, 9, True), (1, 7, 17, True), (2, 30, 5, True),
                                                      (3, 1, 11, True), (4, 13, 9, False), (5, 40, 7, False)])
def test_density_and_owner_equal_the_reference(seed, width, height, nan):
    """Runs with a break (``_pieces``) and without (``_unbroken``), with runs of both in one batch."""
    rng = np.random.default_rng(seed)
    series = random_runs(rng, 6, int(rng.integers(2, 40)), nan)
    series.append((np.array([3, 1, 2, 2]), np.array([0.2, -0.5, 0.4, 1.1], np.float32)))   # not by step, a repeat
    series.append((np.array([7]), np.array([0.3], np.float32)))                           # one point
    series.append((np.zeros(0, np.int64), np.zeros(0, np.float32)))                      # none
    x_range, y_range = (0.0, 50.0), (-1.5, 1.5)   # some runs go beyond both
    d = density(series, x_range, y_range, width, height)
    dens, every = reference(series, x_range, y_range, width, height)
    np.testing.assert_allclose(d.density, dens, rtol=1e-5, atol=0)
    np.testing.assert_allclose(d.density.sum(axis=0), [sum(c in cells for cells in every) for c in range(width)],
                               rtol=1e-5)
    check_owner(d.owner, every, dens)


def test_log_y_equals_the_reference():
    rng = np.random.default_rng(5)
    with np.errstate(invalid="ignore"):   # inf * 0
        series = [(s, np.exp(v) * rng.choice(np.float32([1, 1, 1, 0, -1]), v.size)) for s, v in random_runs(rng, 5, 30)]
    (x_range, y_range) = data_range(series, logy=True)
    d = density(series, x_range, y_range, 11, 8, logy=True)
    dens, every = reference(series, x_range, y_range, 11, 8, logy=True)
    np.testing.assert_allclose(d.density, dens, rtol=1e-5)
    check_owner(d.owner, every, dens)


def test_many_runs_in_several_batches_equal_the_reference(monkeypatch):
    from tfevents.viewer.dashboard import density as module
    monkeypatch.setattr(module, "BATCH_CELLS", 64)   # a batch every few runs
    rng = np.random.default_rng(7)
    series = random_runs(rng, 40, 25)
    d = density(series, (0.0, 50.0), (-2.0, 2.0), 10, 12)
    dens, every = reference(series, (0.0, 50.0), (-2.0, 2.0), 10, 12)
    np.testing.assert_allclose(d.density, dens, rtol=1e-5)
    check_owner(d.owner, every, dens)


def test_nearest_run_names_a_run_through_the_pixel_or_the_nearest_within_the_radius():
    series = [(np.arange(5), np.full(5, 0.25)), (np.arange(5), np.full(5, 0.75))]
    d = density(series, (0, 4), Y, 4, 10)   # run 0 in row 7, run 1 in row 2
    assert nearest_run(d.owner, 1, 7) == 0 and nearest_run(d.owner, 3, 2) == 1
    assert nearest_run(d.owner, 1, 6) is None
    assert nearest_run(d.owner, 1, 6, radius=1) == 0
    assert nearest_run(d.owner, 1, 4, radius=2) == 1   # row 2 is 2 away, row 7 is 3
    assert nearest_run(d.owner, 1, 5, radius=1) is None
    assert nearest_run(d.owner, 1, 5, radius=2) == 0
    assert nearest_run(d.owner, 9, 0, radius=5) is None   # outside the raster


def test_bad_arguments_are_value_errors():
    run = [(np.arange(3), np.arange(3.0))]
    for args in [((0, 1), (0, 1), 0, 5), ((0, 1), (0, 1), 5, MAX_SIDE + 1), ((1, 1), (0, 1), 5, 5),
                 ((0, 1), (0, 1), MAX_SIDE, MAX_PIXELS // MAX_SIDE + 1),
                 ((0, 1), (0, np.inf), 5, 5)]:
        with pytest.raises(ValueError):
            density(run, *args)
    with pytest.raises(ValueError):
        density(run, (0, 1), (0, 1), 5, 5, logy=True)


def test_data_range():
    series = [(np.array([3, 9]), np.array([np.nan, -2.0])), (np.array([5]), np.array([np.inf]))]
    assert data_range(series) == ((3.0, 9.0), (-2.5, -1.5))
    assert data_range([(np.array([4]), np.array([0.0, ]))], logy=True) == ((4.0, 5.0), (0.1, 10.0))
    assert data_range([(np.array([1, 2]), np.array([0.1, 100.0]))], logy=True) == ((1.0, 2.0), (0.1, 100.0))


def test_two_thousand_runs_weigh_two_thousand_in_every_column():
    rng = np.random.default_rng(2000)
    runs, points = 2000, 200
    step = np.arange(points) * 5
    values = np.cumsum(rng.normal(0, 1, (runs, points)), axis=1)
    series = [(step, values[i].astype(np.float32)) for i in range(runs)]
    x_range, y_range = data_range(series)
    d = density(series, x_range, y_range, 300, 150)
    np.testing.assert_allclose(d.density.sum(axis=0), runs, rtol=1e-4)
    # hovering: each owned pixel's run passes through it (its polyline's rows in that column)
    for px, py in zip(rng.integers(0, 300, 50), rng.integers(0, 150, 50)):
        run = nearest_run(d.owner, int(px), int(py))
        if run is not None:
            assert py in covered_cells(*series[run], x_range, y_range, 300, 150)[int(px)]


# -- the route

def asgi_get(app, path: str, query: Dict[str, str]) -> Tuple[int, dict]:
    """(status, JSON body) of a GET to the ASGI ``app``, in process (as Starlette's TestClient); names are escaped
    (no ``<`` in the body)."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": urllib.parse.urlencode(query).encode(),
             "headers": [(b"host", b"127.0.0.1")], "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
             "root_path": ""}
    sent: List[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert dict(start["headers"])[b"content-type"] == b"application/json" and b"<" not in body
    return start["status"], json.loads(body)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("density")
    rng = np.random.default_rng(34)
    for name in ("sweep/a", "sweep/b", "other/<c>", "no_loss"):
        with SummaryWriter(str(root / name)) as w:
            for step in range(0, 300, 3):
                if name != "no_loss":
                    value = float(rng.normal()) if step != 30 else float("nan")
                    w.add_scalar("loss", abs(value) if name == "sweep/b" else value, step)
                w.add_scalar("acc", step / 300, step)
    return str(root)


@pytest.fixture(scope="module")
def app(logdir):
    live = LiveLogdir(logdir)
    live.reload()
    return build_app(live)


def test_the_route_equals_the_function_on_the_offline_series(app, logdir):
    offline = load_logdir(logdir)
    for query, names, logy in [({}, ["other/<c>", "sweep/a", "sweep/b"], False),
                               ({"runs": "^sweep/", "logy": "1"}, ["sweep/a", "sweep/b"], True),
                               ({"runs": "b$"}, ["sweep/b"], False)]:
        status, got = asgi_get(app, "/api/v1/density", dict(tag="loss", width="37", height="23", **query))
        assert status == 200, got
        assert got["runs"] == names and (got["width"], got["height"], got["logy"]) == (37, 23, logy)
        series = [(offline.scalars[(n, "loss")].step, offline.scalars[(n, "loss")].value) for n in names]
        x_range, y_range = data_range(series, logy)
        assert (tuple(got["x_range"]), tuple(got["y_range"])) == (x_range, y_range)
        expected = density(series, x_range, y_range, 37, 23, logy)
        dens = np.frombuffer(base64.b64decode(got["density"]), "<f4").reshape(23, 37)
        owner = np.frombuffer(base64.b64decode(got["owner"]), "<i4").reshape(23, 37)
        np.testing.assert_array_equal(dens, expected.density)
        np.testing.assert_array_equal(owner, expected.owner)
        if not logy:   # (with logy, sweep/a's negative values break its line)
            np.testing.assert_allclose(dens.sum(axis=0), len(names), rtol=1e-5)


@pytest.mark.parametrize("query, status, parameter", [
    ({"width": "10", "height": "10"}, 400, "tag"),
    ({"tag": "loss", "height": "10"}, 400, "width"),
    ({"tag": "loss", "width": "0", "height": "10"}, 400, "width"),
    ({"tag": "loss", "width": "10", "height": str(MAX_SIDE + 1)}, 400, "height"),
    ({"tag": "loss", "width": "ten", "height": "10"}, 400, "width"),
    ({"tag": "loss", "width": str(MAX_SIDE), "height": str(MAX_PIXELS // MAX_SIDE + 1)}, 400, "height"),
    ({"tag": "loss", "width": "10", "height": "10", "runs": "("}, 400, "runs"),
    ({"tag": "nope", "width": "10", "height": "10"}, 404, "tag"),
    ({"tag": "loss", "width": "10", "height": "10", "runs": "^no_loss$"}, 404, "tag"),
])
def test_bad_route_parameters_are_json_errors_naming_them(app, query, status, parameter):
    got_status, got = asgi_get(app, "/api/v1/density", query)
    assert (got_status, got["parameter"]) == (status, parameter)
