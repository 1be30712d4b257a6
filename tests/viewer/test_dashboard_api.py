"""``tfevents api``: the HTTP JSON API over a live logdir (viewer/dashboard/), served by the real command as a child
process on 127.0.0.1 and a free port, read with urllib: its answers against the offline reader, the M4 reduction
against a numpy reference, hostile names, the token, the path prefix, TLS, and a run that grows while served."""
from __future__ import annotations

import base64
import json
import math
import os
import ssl
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Tuple

import numpy as np
import pytest

from _dashboard import RELOAD_INTERVAL, ApiProcess, get, get_json, query
from tfevents.summaries import SummaryWriter, load_logdir
from tfevents.viewer.dashboard.reduce import m4_indices

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

HOSTILE_RUN = "hostile/<script>alert(1)</script>/\"q'uote\" \u200fRTL"
HOSTILE_TAG = "</iframe><script>x</script>/a \"b\" 'c'/\u202eevil"
HOSTILE_HPARAM = "<img src=x onerror=alert(1)>"
HOSTILE_VALUE = "</iframe>\"'\u200f/x"
ROUTES = ("api/v1/runs", "api/v1/tags?run=sweep/lr_0.1", "api/v1/scalars?run=sweep/lr_0.1&tag=loss", "", "nope")


def spiky_values(n: int = 10_000) -> np.ndarray:
    rng = np.random.default_rng(34)
    values = np.sin(np.arange(n) / 300.0) + rng.normal(0, 0.05, n)
    values[[137, 2_500, 2_501, 7_777]] = [40.0, -35.0, 30.0, 55.0]   # spikes and dips of one or two points
    return values.astype(np.float32)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("api")
    for lr in (0.1, 0.01):
        with SummaryWriter(str(logdir / "sweep" / ("lr_%s" % lr))) as w:
            for step in range(0, 600, 2):
                w.add_scalar("loss", 1.0 / (1 + lr * step), step)
                w.add_scalar("eval/acc", float("nan") if step == 10 else step * lr, step * 3)
            w.add_scalar("loss", float("inf"), 700)
            w.add_scalar("loss", float("-inf"), 701)
            w.add_histogram("weights", np.arange(10.0), 0)
            w.add_hparams({"lr": lr, "optimizer": "adam", "layers": 3, "bn": True}, {"final/loss": lr})
    with SummaryWriter(str(logdir / "spiky")) as w:
        for step, value in enumerate(spiky_values()):
            w.add_scalar("signal", float(value), step)
    with SummaryWriter(str(logdir / HOSTILE_RUN)) as w:
        w.add_scalar(HOSTILE_TAG, 1.5, 3)
        w.add_hparams({HOSTILE_HPARAM: HOSTILE_VALUE}, {"m": 1.0})
    growing = SummaryWriter(str(logdir / "growing"), flush_secs=1000)
    growing.add_scalar("loss", 1.0, 0)
    growing.flush()

    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(logdir / "key.pem"),
                    "-out", str(logdir / "cert.pem")], check=True, capture_output=True)
    cert, key = str(logdir.parent / "cert.pem"), str(logdir.parent / "key.pem")
    os.replace(logdir / "cert.pem", cert)
    os.replace(logdir / "key.pem", key)

    servers = {"plain": ApiProcess(str(logdir), "--samples-per-plugin", "scalars=all"),
               "gated": ApiProcess(str(logdir), "--host", "0.0.0.0", "--path-prefix", "/x/"),
               "tls": ApiProcess(str(logdir), "--certfile", cert, "--keyfile", key,
                                 env={"TFEVENTS_API_TOKEN": "s3cret"}),   # a token on localhost too
               "open": ApiProcess(str(logdir), "--host", "0.0.0.0", "--no-token")}
    try:
        for s in servers.values():
            s.wait_ready()
        yield {"logdir": str(logdir), "writer": growing, "cert": cert, **servers}
    finally:
        growing.close()
        for s in servers.values():
            s.stop()


@pytest.fixture(scope="module")
def offline(served):
    return load_logdir(served["logdir"])


def as_float(x) -> float:
    return {None: math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(x, x)


def test_runs_tags_and_series_equal_the_offline_reader(served, offline):
    base = served["plain"].base
    runs = get_json(base + "api/v1/runs")["runs"]
    assert [r["run"] for r in runs] == sorted(offline.runs)
    for run in runs:
        name = run["run"]
        assert run["hparams"] == offline.hparams[name].hparams if name in offline.hparams else run["hparams"] == {}
        offline_tags = sorted(t for r, t in offline.scalars if r == name)
        assert sorted(run["scalars"]) == offline_tags
        tags = get_json(base + "api/v1/tags?" + query(run=name))
        assert tags["run"] == name
        assert sorted(t["tag"] for t in tags["tags"] if t["data_class"] == "scalar") == offline_tags
        for tag in offline_tags:
            series = offline.scalars[(name, tag)]
            got = get_json(base + "api/v1/scalars?" + query(run=name, tag=tag))
            assert got["step"] == series.step.tolist()
            assert got["wall_time"] == series.wall_time.tolist()
            np.testing.assert_array_equal(np.array([as_float(v) for v in got["value"]], dtype=series.value.dtype),
                                          series.value)
            assert run["scalars"][tag]["last_step"] == tags_last_step(tags, tag) == series.step[-1]
    assert start_times_are_sane(runs)


def tags_last_step(tags, tag):
    return next(t["last_step"] for t in tags["tags"] if t["tag"] == tag)


def start_times_are_sane(runs) -> bool:
    return all(r["start_time"] is not None and abs(r["start_time"] - time.time()) < 600 for r in runs)


def test_last_min_and_max_equal_the_summary(served, offline):
    runs = {r["run"]: r for r in get_json(served["plain"].base + "api/v1/runs")["runs"]}
    summary = offline.summary()
    assert len(summary) == sum(len(r["scalars"]) for r in runs.values())
    for row in summary.itertuples():
        got = runs[row.run]["scalars"][row.tag]
        assert got["last_step"] == row.last_step
        np.testing.assert_equal(as_float(got["last"]), np.float32(row.last))
        assert (as_float(got["min"]), got["min_step"], as_float(got["max"]), got["max_step"]) == (
            row.min, row.min_step, row.max, row.max_step)
    loss = runs["sweep/lr_0.1"]["scalars"]["loss"]
    assert (loss["last"], loss["max"], loss["min"]) == ("-Infinity", "Infinity", "-Infinity")


def test_a_histogram_is_listed_with_its_kind(served):
    tags = get_json(served["plain"].base + "api/v1/tags?" + query(run="sweep/lr_0.01"))["tags"]
    weights = next(t for t in tags if t["tag"] == "weights")
    assert (weights["plugin"], weights["data_class"], weights["last_step"]) == ("histograms", "tensor", 0)


def m4_reference(step: np.ndarray, value: np.ndarray, columns: int) -> np.ndarray:
    """The indices M4 keeps, column by column: first, last, least and greatest (first of equals)."""
    column = (step - step[0]) * columns // (step[-1] - step[0] + 1)
    keep = set()
    for c in np.unique(column):
        where = np.flatnonzero(column == c)
        keep.update([where[0], where[-1], where[np.argmin(value[where])], where[np.argmax(value[where])]])
    return np.array(sorted(keep))


def test_a_reduced_series_keeps_each_columns_first_last_min_and_max(served):
    values = spiky_values()
    steps = np.arange(values.size)
    got = get_json(served["plain"].base + "api/v1/scalars?" + query(run="spiky", tag="signal", points=50))
    expected = m4_reference(steps, values, 50)
    assert got["step"] == steps[expected].tolist()
    np.testing.assert_array_equal(np.float32(got["value"]), values[expected])
    assert 50 < len(got["step"]) <= 200
    assert {137, 2_500, 2_501, 7_777} <= set(got["step"])


def test_a_step_range_is_cut_before_the_reduction(served):
    values = spiky_values()
    base = served["plain"].base + "api/v1/scalars?"
    got = get_json(base + query(run="spiky", tag="signal", start=2_400, end=2_600))
    assert got["step"] == list(range(2_400, 2_601))                 # in full inside the range
    np.testing.assert_array_equal(np.float32(got["value"]), values[2_400:2_601])
    reduced = get_json(base + query(run="spiky", tag="signal", start=2_000, end=3_999, points=20))
    steps = np.arange(2_000, 4_000)
    assert reduced["step"] == steps[m4_reference(steps, values[2_000:4_000], 20)].tolist()
    assert get_json(base + query(run="spiky", tag="signal", end=4))["step"] == [0, 1, 2, 3, 4]
    status, _, body = get(base + query(run="spiky", tag="signal", start="x"))
    assert status == 400 and json.loads(body)["parameter"] == "start"


def test_scalars_of_tag_is_each_runs_reduced_series_in_one_answer(served):
    base = served["plain"].base
    got = get_json(base + "api/v1/scalars_of_tag?" + query(tag="loss", points=40, runs="^sweep/"))
    assert [s["run"] for s in got["series"]] == ["sweep/lr_0.01", "sweep/lr_0.1"]
    for series in got["series"]:
        alone = get_json(base + "api/v1/scalars?" + query(run=series["run"], tag="loss", points=40))
        assert series == {"run": alone["run"], "step": alone["step"], "wall_time": alone["wall_time"],
                          "value": alone["value"]}
    every = get_json(base + "api/v1/scalars_of_tag?" + query(tag="loss"))
    assert {"growing", "sweep/lr_0.1"} <= {s["run"] for s in every["series"]}
    status, _, body = get(base + "api/v1/scalars_of_tag?" + query(tag="loss", runs="^nothing$"))
    assert status == 404 and json.loads(body)["parameter"] == "tag"
    status, _, body = get(base + "api/v1/scalars_of_tag?" + query(tag="loss", runs="("))
    assert status == 400 and json.loads(body)["parameter"] == "runs"
    named = get_json(base + "api/v1/scalars_of_tag?" + urllib.parse.urlencode(
        [("tag", "loss"), ("run", "sweep/lr_0.1"), ("run", "growing"), ("run", "no such run")]))
    assert [s["run"] for s in named["series"]] == ["growing", "sweep/lr_0.1"]   # run=: exactly those named
    both = get_json(base + "api/v1/scalars_of_tag?" + urllib.parse.urlencode(
        [("tag", "loss"), ("run", "sweep/lr_0.1"), ("run", "growing"), ("runs", "^sweep/")]))
    assert [s["run"] for s in both["series"]] == ["sweep/lr_0.1"]              # and runs= as well


def test_base64_columns_are_the_json_columns(served):
    base = served["plain"].base
    for route, params in (("scalars", {"run": "spiky", "tag": "signal", "points": 100}),
                          ("scalars_of_tag", {"tag": "loss", "points": 50})):
        plain = get_json(base + "api/v1/%s?" % route + query(**params))
        packed = get_json(base + "api/v1/%s?" % route + query(encoding="base64", **params))
        for a, b in zip(plain.get("series", [plain]), packed.get("series", [packed])):
            assert a.get("run") == b.get("run")
            for column, dtype in (("step", "<f8"), ("wall_time", "<f8"), ("value", "<f4")):
                got = np.frombuffer(base64.b64decode(b[column]), dtype)
                want = np.array([as_float(v) for v in a[column]], dtype=np.float64)
                np.testing.assert_array_equal(got.astype(np.float64), want.astype(dtype).astype(np.float64))
    assert get(base + "api/v1/scalars?" + query(run="spiky", tag="signal", encoding="xml"))[0] == 400


def binary_series(body: bytes) -> Tuple[dict, list]:
    """The head and the series (run, step, wall_time, value) of an ``encoding=binary`` answer, by its layout."""
    size = struct.unpack_from("<I", body)[0]
    head = json.loads(body[4:4 + size].decode("utf-8"))
    at, n = 4 + size + (-(4 + size) % 8), sum(s["points"] for s in head["series"])
    m = head["series"][0]["points"] if head["shared_steps"] else n
    assert len(body) == at + 8 * m + 12 * n
    step, wall = np.frombuffer(body, "<f8", m, at), np.frombuffer(body, "<f8", n, at + 8 * m)
    value = np.frombuffer(body, "<f4", n, at + 8 * m + 8 * n)
    ends = np.cumsum([0] + [s["points"] for s in head["series"]])
    return head, [(s["run"], step if head["shared_steps"] else step[a:b], wall[a:b], value[a:b])
                  for s, a, b in zip(head["series"], ends, ends[1:])]


def test_binary_series_are_the_json_columns(served):
    base = served["plain"].base
    shared = []
    for route, params in (("scalars", {"run": "spiky", "tag": "signal", "points": 100}),
                          ("scalars_of_tag", {"tag": "loss", "points": 50}),
                          ("scalars_of_tag", {"tag": "loss", "start": 2, "end": 7}),
                          ("scalars_of_tag", {"tag": "loss", "runs": "^sweep/"})):
        plain = get_json(base + "api/v1/%s?" % route + query(**params))
        status, headers, body = get(base + "api/v1/%s?" % route + query(encoding="binary", **params))
        assert status == 200 and headers["Content-Type"] == "application/octet-stream"
        assert headers["X-Content-Type-Options"] == "nosniff"
        head, series = binary_series(body)
        shared.append(head["shared_steps"])
        wanted = plain.get("series", [plain])
        assert [run for run, *_ in series] == [s.get("run", plain.get("run")) for s in wanted]
        assert head["tag"] == plain["tag"] and head.get("run") == plain.get("run")
        for a, (_, step, wall, value) in zip(wanted, series):
            for column, got, dtype in (("step", step, "<f8"), ("wall_time", wall, "<f8"), ("value", value, "<f4")):
                want = np.array([as_float(v) for v in a[column]], dtype=np.float64)
                np.testing.assert_array_equal(got.astype(np.float64), want.astype(dtype).astype(np.float64))
    assert shared == [False, False, False, True]   # the sweep's runs, at the same steps: theirs sent once


def test_runs_since_lists_only_the_series_with_newer_points(served):
    base = served["plain"].base
    every = get_json(base + "api/v1/runs")["runs"]
    walls = sorted(info["last_wall_time"] for run in every for info in run["scalars"].values())
    cut = walls[len(walls) // 2]
    newer = get_json(base + "api/v1/runs?" + query(since=repr(cut)))["runs"]
    expected = {(run["run"], tag) for run in every for tag, info in run["scalars"].items()
                if info["last_wall_time"] >= cut}
    assert {(run["run"], tag) for run in newer for tag in run["scalars"]} == expected
    assert all(run["scalars"] for run in newer)
    assert get(base + "api/v1/runs?since=soon")[0] == 400


@pytest.mark.parametrize("params, status, parameter", [
    ({}, 400, "run"),
    ({"run": "spiky"}, 400, "tag"),
    ({"run": "spiky", "tag": "signal", "points": "many"}, 400, "points"),
    ({"run": "spiky", "tag": "signal", "points": "0"}, 400, "points"),
    ({"run": "nope", "tag": "signal"}, 404, "run"),
    ({"run": "spiky", "tag": "nope"}, 404, "tag"),
    ({"run": "sweep/lr_0.1", "tag": "weights"}, 404, "tag"),   # not a scalar series
])
def test_bad_parameters_are_json_errors_naming_them(served, params, status, parameter):
    code, headers, body = get(served["plain"].base + "api/v1/scalars?" + query(**params))
    assert code == status
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body)["parameter"] == parameter


def test_hostile_names_round_trip_as_json_data(served):
    base = served["plain"].base
    status, headers, body = get(base + "api/v1/runs")
    assert headers["Content-Type"] == "application/json"
    assert b"<" not in body and b">" not in body
    run = next(r for r in json.loads(body)["runs"] if r["run"] == HOSTILE_RUN)
    assert run["hparams"] == {HOSTILE_HPARAM: HOSTILE_VALUE}
    assert HOSTILE_TAG in run["scalars"]
    tags = get_json(base + "api/v1/tags?" + query(run=HOSTILE_RUN))
    assert tags["run"] == HOSTILE_RUN and HOSTILE_TAG in [t["tag"] for t in tags["tags"]]
    series = get_json(base + "api/v1/scalars?" + query(run=HOSTILE_RUN, tag=HOSTILE_TAG))
    assert (series["run"], series["tag"], series["step"], series["value"]) == (HOSTILE_RUN, HOSTILE_TAG, [3], [1.5])


def test_beyond_localhost_every_route_needs_the_token(served):
    gated = served["gated"]
    assert gated.url.startswith("http://127.0.0.1:") and "/x/api/v1/runs?token=" in gated.url
    assert len(gated.token) >= 32
    wrong = "0" * len(gated.token)
    for route in ROUTES:
        url = gated.base + route
        assert get(url)[0] == 401, route
        sep = "&" if "?" in route else "?"
        assert get(url + sep + "token=" + wrong)[0] == 401, route
        assert get(url, headers={"Authorization": "token " + wrong})[0] == 401, route
        assert get(url, headers={"Cookie": gated.cookie + "=" + wrong})[0] == 401, route
    status, headers, body = get(gated.base + "api/v1/runs")
    assert headers["Content-Type"] == "application/json" and "token" in json.loads(body)["error"]


def test_the_printed_token_works_and_its_cookie_then_works_alone(served):
    gated = served["gated"]
    status, headers, body = get(gated.url)
    assert status == 200 and "sweep/lr_0.1" in [r["run"] for r in json.loads(body)["runs"]]
    cookie = headers["Set-Cookie"]
    attributes = [a.strip() for a in cookie.split(";")]
    assert attributes[0] == gated.cookie + "=" + gated.token
    assert {"HttpOnly", "SameSite=Strict", "Path=/x/"} <= set(attributes)
    assert get(gated.base + "api/v1/tags?" + query(run="spiky"), headers={"Cookie": attributes[0]})[0] == 200
    assert get(gated.base + "api/v1/runs", headers={"Authorization": "token " + gated.token})[0] == 200


def test_the_path_prefix_serves_the_same_api(served):
    gated, token = served["gated"], "token=" + served["gated"].token
    route = "api/v1/scalars?" + query(run="sweep/lr_0.1", tag="loss", points=20)
    assert get_json(gated.base + route + "&" + token) == get_json(served["plain"].base + route)
    assert get(gated.base.replace("/x/", "/") + "api/v1/runs?" + token)[0] == 404


def test_no_token_must_be_asked_for(served):
    assert "?token=" not in served["open"].url
    assert get_json(served["open"].base + "api/v1/runs")["runs"]
    assert "WARNING: serving 0.0.0.0 without a token" in served["open"].log()
    assert "WARNING" not in served["gated"].log()


def test_on_localhost_only_requests_to_a_loopback_name_are_answered(served):
    url = served["plain"].base + "api/v1/runs"
    port = urllib.parse.urlsplit(url).port
    for host in ("localhost:%d" % port, "127.0.0.1:%d" % port, "[::1]:%d" % port, "localhost"):
        assert get(url, headers={"Host": host})[0] == 200, host
    for host in ("evil.example:%d" % port, "evil.example", "127.0.0.1.evil.example", ""):   # DNS rebinding
        status, headers, body = get(url, headers={"Host": host})
        assert status == 403 and headers["Content-Type"] == "application/json", host
    assert get(served["open"].base + "api/v1/runs", headers={"Host": "evil.example"})[0] == 200   # bound to all


@pytest.mark.parametrize("args, message", [
    (["--token", "t", "--no-token"], "not allowed with"),
    (["--token", ""], "--token: give letters"),
    (["--token", "a;b"], "--token: give letters"),
    (["--keyfile", "key.pem"], "--keyfile needs --certfile"),
    (["--certfile", "/no/such/cert.pem"], "TLS: "),
    (["--samples-per-plugin", "scalars"], "--samples-per-plugin"),
])
def test_bad_arguments_are_clear_errors_before_any_url(served, args, message):
    done = subprocess.run([sys.executable, "-m", "tfevents.viewer.cli", "api", served["logdir"], "--port", "0"]
                          + args, capture_output=True, timeout=60)
    assert done.returncode in (1, 2) and message in done.stderr.decode() and done.stdout == b""


def test_tls_with_a_self_signed_certificate(served):
    tls = served["tls"]
    assert tls.url.startswith("https://127.0.0.1:") and tls.url.endswith("?token=s3cret")
    context = ssl.create_default_context(cafile=served["cert"])
    assert get_json(tls.url, context=context)["runs"]
    assert get(tls.base + "api/v1/runs", context=context)[0] == 401
    status, headers, _ = get(tls.url, context=context)
    assert "Secure" in headers["Set-Cookie"]
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        get(tls.url.replace("https:", "http:"))


def test_a_growing_run_shows_its_new_last_step_within_two_reload_intervals(served):
    """... and ``runs?after=PASS`` (the page's poll) lists exactly the series that changed after that pass."""
    base = served["plain"].base
    url = base + "api/v1/scalars?" + query(run="growing", tag="loss")
    assert get_json(url)["step"][-1] < 50
    before = get_json(base + "api/v1/runs")["pass"]
    writer = served["writer"]
    for step in range(1, 51):
        writer.add_scalar("loss", 1.0 / step, step)
    writer.flush()
    start = time.monotonic()
    while get_json(url)["step"][-1] != 50:
        assert time.monotonic() - start < 2 * RELOAD_INTERVAL, "not served within two reload intervals"
        time.sleep(0.05)
    assert get_json(url)["step"] == list(range(51))
    changed = get_json(base + "api/v1/runs?" + query(after=before))
    assert changed["pass"] > before
    assert [(run["run"], sorted(run["scalars"])) for run in changed["runs"]] == [("growing", ["loss"])]
    assert changed["runs"][0]["scalars"]["loss"]["last_step"] == 50
    assert get_json(base + "api/v1/runs?" + query(after=changed["pass"]))["runs"] == []   # nothing since
    assert get(base + "api/v1/runs?after=-1")[0] == 400 and get(base + "api/v1/runs?after=x")[0] == 400


def test_m4_in_step_order_ignores_nan_for_the_extremes_and_keeps_short_series_whole():
    # steps out of order; column 0 = steps 0-4, column 1 = steps 5-9
    step = np.array([9, 0, 1, 2, 3, 4, 5, 6, 7, 8])
    value = np.array([0.0, 5.0, np.nan, -1.0, 7.0, 2.0, np.nan, np.nan, np.inf, 1.0])
    kept = m4_indices(step, value, 2)
    assert step[kept].tolist() == [0, 2, 3, 4, 5, 7, 9]   # first, min, max, last; first, max (inf), last / min
    assert m4_indices(step, value, 100).tolist() == np.argsort(step).tolist()
    assert m4_indices(np.array([3, 4]), np.array([np.nan, np.nan]), 1).tolist() == [0, 1]
    assert m4_indices(np.zeros(0, np.int64), np.zeros(0), 5).tolist() == []
    with pytest.raises(ValueError):
        m4_indices(step, value, 0)
