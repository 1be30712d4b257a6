"""``tfevents serve`` with tfevents' dashboard (viewer/cli/cmd_serve.py, viewer/dashboard/proxy.py): the dashboard and
TensorBoard's UI on one load of the logdir; beyond localhost every route behind the token, TensorBoard's UI reached
through the dashboard only, the gRPC provider and TensorBoard's own server on loopback only. Real processes,
real TensorBoard, real Chromium."""
from __future__ import annotations

import socket
import time
import urllib.parse

import numpy as np
import pytest

from _browser import browser, browser_session, load  # noqa: F401 (fixtures)
from _dashboard import ServeProcess, get, get_json, query
from _tensorboard import free_port, wait_for_tensorboard_lines
from tfevents.summaries import SummaryWriter, load_logdir

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

RUNS = ("lr_0.1", "lr_0.01")
STEPS = 200


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve_dashboard")
    for run in RUNS:
        lr = float(run.split("_")[1])
        with SummaryWriter(str(root / run)) as w:
            for step in range(STEPS):
                w.add_scalar("loss", 1.0 / (1 + lr * step), step)
    return root


@pytest.fixture(scope="module")
def beyond(logdir):
    """``tfevents serve --host 0.0.0.0 --path-prefix /x/``: a generated token."""
    port = free_port()
    server = ServeProcess(str(logdir), port, "--host", "0.0.0.0", "--path-prefix", "/x/")
    try:
        server.wait_ready()
        server.port = port
        yield server
    finally:
        server.stop()


def _token(url: str) -> str:
    return urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["token"][0]


def _this_machines_address() -> str:
    """An address of this machine other than loopback (a UDP socket's source toward a private address: nothing
    is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.254.254.254", 1))
            address = s.getsockname()[0]
        except OSError:
            address = ""
    if not address or address.startswith("127."):
        pytest.skip("this machine has no non-loopback IPv4 address to try the ports on")
    return address


def test_the_printed_urls_work_and_the_api_answers_as_load_logdir(beyond, logdir):
    token = _token(beyond.url)
    assert urllib.parse.urlsplit(beyond.url).path == "/x/"
    assert beyond.tensorboard == beyond.base + "tensorboard/?token=" + token   # only through the dashboard
    status, headers, body = get(beyond.url)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    loaded = load_logdir(str(logdir), kinds=("scalars",))
    answer = get_json(beyond.base + "api/v1/runs?token=" + token)
    assert [r["run"] for r in answer["runs"]] == list(RUNS[::-1])           # sorted by name
    for run in RUNS:
        series = loaded.scalars[(run, "loss")]
        got = get_json(beyond.base + "api/v1/scalars?" + query(run=run, tag="loss", token=token))
        np.testing.assert_array_equal(got["step"], series.step)
        np.testing.assert_array_equal(np.float32(got["value"]), series.value)
    status, _, body = get(beyond.tensorboard.replace("/?", "/data/runs?"))  # TensorBoard's own route, through us
    assert status == 200 and sorted(__import__("json").loads(body)) == sorted(RUNS)


@pytest.mark.parametrize("route", ["", "api/v1/runs", "api/v1/tags?run=lr_0.1", "tensorboard/",
                                   "tensorboard/index.js", "tensorboard/data/runs", "no/such/route"])
def test_every_route_needs_the_token(beyond, route):
    token = _token(beyond.url)
    url = beyond.base + route
    join = "&" if "?" in route else "?"
    assert get(url)[0] == 401
    assert get(url + join + "token=wrong")[0] == 401
    assert get(url, headers={"Authorization": "token wrong"})[0] == 401
    assert get(url, headers={"Cookie": "%s=wrong" % beyond.cookie})[0] == 401
    expected = 404 if route.startswith("no/") else 200
    assert get(url + join + "token=" + token)[0] == expected
    assert get(url, headers={"Authorization": "token " + token})[0] == expected
    assert get(url, headers={"Cookie": "%s=%s" % (beyond.cookie, token)})[0] == expected


def test_tensorboard_and_the_provider_listen_on_loopback_only(beyond):
    address = _this_machines_address()
    provider_port = int(beyond.provider.rsplit(":", 1)[1])
    assert beyond.provider.startswith("127.0.0.1:")
    for port in (beyond.port, provider_port):   # TensorBoard's own server and the gRPC provider
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((address, port), timeout=5).close()
        socket.create_connection(("127.0.0.1", port), timeout=5).close()   # there, on loopback
    dashboard_port = urllib.parse.urlsplit(beyond.url).port
    status, _, _ = get("http://%s:%d/x/" % (address, dashboard_port))
    assert status == 401                                                   # reachable, and gated


def test_tensorboards_ui_through_the_dashboard_draws_its_scalars_in_chromium(browser, beyond):
    load(browser, beyond.tensorboard + "#scalars")
    count = wait_for_tensorboard_lines(browser, 2)
    assert count >= 2, "TensorBoard's scalars chart did not draw both runs through the dashboard"


def test_the_dashboard_page_draws_and_links_to_tensorboards_ui(browser, beyond):
    load(browser, beyond.url)
    deadline, state = time.monotonic() + 30, None
    while time.monotonic() < deadline:
        state = browser.execute_script("""
            const t = window.__tfe; if (!t || !t.ready) return null;
            const c = t.charts.find(c => c.title === 'loss');
            const link = document.querySelector('#tensorboard-link a');
            return {drawn: !!(c && c.u), runs: c ? (c.shown || []).filter(s => !s.pending).map(s => s.fetch.run) : [],
                    link: link && link.getAttribute('href')};""")
        if state and state["drawn"] and len(state["runs"]) == 2 and state["link"]:
            break
        time.sleep(0.1)
    assert state and state["drawn"] and sorted(state["runs"]) == sorted(RUNS), state
    assert state["link"] == "/x/tensorboard/"


def test_on_localhost_tensorboard_keeps_its_port_and_no_token_is_asked(logdir):
    port = free_port()
    server = ServeProcess(str(logdir), port)
    try:
        server.wait_ready()
        assert server.tensorboard == "http://127.0.0.1:%d/" % port
        assert "token" not in server.url
        assert get_json(server.base + "api/v1/runs")["runs"]
        deadline = time.monotonic() + 60
        while True:                                                # TensorBoard itself, as ever, once it is up
            try:
                status, _, body = get(server.tensorboard + "data/runs")
                break
            except OSError:
                assert time.monotonic() < deadline, "TensorBoard did not start on its port"
                time.sleep(0.25)
        assert status == 200 and b"lr_0.1" in body
    finally:
        server.stop()
