"""The dashboard's page at ``/`` of ``tfevents api`` (viewer/dashboard/page.py, reports/interactive/served.js), in
headless Chromium against the real command: the interactive report's page whose series arrive from the JSON API when
their chart scrolls into view, drawn as the API answers them (reduced to the chart's width), moving on without a
reload when a writer appends steps, names shown as text, and behind the token and a path prefix beyond localhost."""
from __future__ import annotations

import base64
import time
import urllib.parse

import numpy as np
import pytest

from _browser import browser, browser_session, console_messages, load, network_requests  # noqa: F401
from _dashboard import RELOAD_INTERVAL, ApiProcess, get, get_json, query
from tfevents.viewer.dashboard.page import DENSITY_ABOVE
from tfevents.summaries import SummaryWriter, load_logdir
from tfevents.summaries.live.loader import LiveLogdir
from tfevents.viewer.dashboard.page import live_document
from _report_page import DTYPES, page_document
from tfevents.summaries.live.loader import parse_samples_per_plugin
from tfevents.viewer.cli import main
from tfevents.viewer.dashboard.page import dashboard_html
from tfevents.viewer.reports.interactive.collect import MEDIA_AND_OTHER_SECTIONS, collect

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

HOSTILE_RUN = "<img src=x onerror=window.__pwned=1>/\"q'\" \u200fRTL"
HOSTILE_TAG = "</script><script>window.__pwned=2</script>"
MANY = 2000


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("dashboard_page")
    rng = np.random.default_rng(34)
    for lr, batch in ((0.1, 32), (0.01, 64)):
        with SummaryWriter(str(logdir / "sweep" / ("lr_%s" % lr))) as w:
            for step in range(3000):
                w.add_scalar("loss", float(1.0 / (1 + lr * step) + rng.normal(0, 0.01)), step)
                if step % 10 == 0:
                    w.add_scalar("samples_seen", float(step * batch), step)
            w.add_hparams({"lr": lr, "optimizer": "adam"}, {"final/loss": lr})
    with SummaryWriter(str(logdir / HOSTILE_RUN)) as w:
        w.add_scalar(HOSTILE_TAG, 1.5, 3)
    for i in range(MANY):                               # one chart of 2,000 runs: a density
        with SummaryWriter(str(logdir / "many" / ("run_%04d" % i))) as w:
            base = rng.normal()
            for step in range(0, 200, 10):
                w.add_scalar("many/signal", float(base + 0.01 * step), step)
    growing = SummaryWriter(str(logdir / "growing"), flush_secs=1000)
    growing.add_scalar("loss", 1.0, 0)
    growing.flush()
    servers = {"plain": ApiProcess(str(logdir), "--samples-per-plugin", "scalars=all"),
               "gated": ApiProcess(str(logdir), "--host", "0.0.0.0", "--path-prefix", "/x/")}
    try:
        for s in servers.values():
            s.wait_ready()
        yield {"writer": growing, **servers}
    finally:
        growing.close()
        for s in servers.values():
            s.stop()


def _charts(driver) -> dict:
    """{chart title: {drawn, series: {run: [steps drawn...]}}} of the page as it is."""
    return driver.execute_script("""
        const tfe = window.__tfe, out = {};
        if (!tfe || !tfe.ready) return null;
        for (const c of tfe.charts) out[c.title] = {drawn: !!c.u, note: c.note.textContent,
            series: Object.fromEntries((c.shown || []).filter(s => !s.pending).map(s => [s.fetch.run, Array.from(s.step)]))};
        return out;""")


def _wait(driver, predicate, timeout: float, what: str):
    start = time.monotonic()
    while True:
        state = _charts(driver)
        if state is not None and predicate(state):
            return state
        assert time.monotonic() - start < timeout, "%s: not within %.1f s: %r" % (what, timeout, state)
        time.sleep(0.05)


def test_each_chart_draws_what_the_api_answers_for_its_width(browser, served):
    base = served["plain"].base
    load(browser, base)
    state = _wait(browser, lambda s: s.get("loss", {}).get("drawn"), 20, "the loss chart drawn")
    width = browser.execute_script("return window.__tfe.charts.find(c => c.title === 'loss').plot.clientWidth")
    for run in ("sweep/lr_0.1", "sweep/lr_0.01"):
        answer = get_json(base + "api/v1/scalars?" + query(run=run, tag="loss", points=max(240, width)))
        assert state["loss"]["series"][run] == answer["step"]   # the reduced series, as the API sends it
        assert 4 < len(answer["step"]) < 3000                    # reduced: not every point of the 3,000
    drawn_x = browser.execute_script("const c = window.__tfe.charts.find(c => c.title === 'loss');"
                                     "return [c.u.data[0][0], c.u.data[0][c.u.data[0].length - 1]]")
    assert drawn_x == [0, 2999]
    assert [m for m in console_messages(browser) if m["level"] == "SEVERE"] == []
    origin = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(base))
    assert all(url.startswith(origin) for url in network_requests(browser) if url.startswith("http"))


def test_runs_at_the_same_steps_arrive_sharing_one_array_of_them(browser, served):
    base = served["plain"].base
    load(browser, base)
    _wait(browser, lambda s: "samples_seen" in s, 20, "the page built")
    browser.execute_script("window.__tfe.charts.find(c => c.title === 'samples_seen').card.scrollIntoView()")
    state = _wait(browser, lambda s: s["samples_seen"]["drawn"], 20, "the samples_seen chart drawn")
    same = browser.execute_script("""
        const c = window.__tfe.charts.find(c => c.title === 'samples_seen'), [a, b] = c.shown;
        const x = Array.from(c.u.data[0]).join();
        return [a.step === b.step, x === Array.from(a.step).join(), Array.from(a.value), Array.from(b.value)];""")
    assert same[:2] == [True, True]   # one steps array (the binary answer's shared_steps), drawn as the x
    for run, drawn in zip(("sweep/lr_0.01", "sweep/lr_0.1"), same[2:]):
        answer = get_json(base + "api/v1/scalars?" + query(run=run, tag="samples_seen"))
        assert state["samples_seen"]["series"][run] == answer["step"] and drawn == answer["value"]


def test_appended_steps_are_drawn_within_two_reload_intervals_without_a_reload(browser, served):
    load(browser, served["plain"].base)
    _wait(browser, lambda s: s.get("loss", {}).get("drawn") and "growing" in s["loss"]["series"], 20,
          "the growing run drawn")
    browser.execute_script("window.__sameDocument = true")
    writer = served["writer"]
    for step in range(1, 41):
        writer.add_scalar("loss", 1.0 / step, step)
    writer.flush()
    # the loader's next pass (one interval), then the page's next poll (another)
    state = _wait(browser, lambda s: s["loss"]["series"].get("growing", [])[-1:] == [40], 2 * RELOAD_INTERVAL + 1.0,
                  "step 40 drawn")
    assert state["loss"]["series"]["growing"] == list(range(41))
    assert browser.execute_script("return window.__sameDocument === true")   # no reload of the page
    assert "last change" in browser.find_element("id", "served-status").text


def test_zooming_in_asks_for_the_range_in_full(browser, served):
    load(browser, served["plain"].base)
    state = _wait(browser, lambda s: s.get("loss", {}).get("drawn"), 20, "the loss chart drawn")
    before = [k for k in state["loss"]["series"]["sweep/lr_0.1"] if 1000 <= k <= 1100]
    assert len(before) < 101                                  # reduced to the chart's width: not every step
    browser.execute_script("window.__tfe.charts.find(c => c.title === 'loss').u.setScale('x', {min: 1000, max: 1100})")
    state = _wait(browser, lambda s: [k for k in s["loss"]["series"]["sweep/lr_0.1"] if 1000 <= k <= 1100]
                  == list(range(1000, 1101)), 10, "the zoomed range in full")
    drawn = browser.execute_script("const u = window.__tfe.charts.find(c => c.title === 'loss').u;"
                                   "return Array.from(u.data[0]).filter(x => x >= 1000 && x <= 1100)")
    assert drawn == list(range(1000, 1101))                   # and drawn so


def test_a_tag_as_the_x_axis_asks_for_that_tags_series_too(browser, served):
    """The x selector on a tag (issue 36) in the served page: the runs' samples_seen series are asked for (their own
    chart need not have been in view) and the loss chart is drawn on them."""
    load(browser, served["plain"].base)
    _wait(browser, lambda s: s.get("loss", {}).get("drawn"), 20, "the loss chart drawn")
    browser.execute_script("const x = document.getElementById('x-tag'); x.value = 'samples_seen';"
                           "x.dispatchEvent(new Event('change'))")
    start = time.monotonic()
    while True:
        drawn = browser.execute_script("""
            const c = window.__tfe.charts.find(c => c.title === 'loss');
            return c.u ? {last: c.u.data[0][c.u.data[0].length - 1], note: c.note.textContent,
                          x: window.__tfe.state.x} : null;""")
        if drawn and drawn["x"] == "samples_seen" and drawn["last"] > 3000:
            break
        assert time.monotonic() - start < 20, drawn
        time.sleep(0.05)
    assert drawn["last"] == 2990 * 64                       # lr_0.01's batch of 64 at the x tag's last step
    # steps after the x tag's last (2991-2999) and the run without samples_seen have no x: dropped, and counted
    assert "without samples_seen dropped" in drawn["note"]


def _show_the_density_of_many(browser, base: str) -> None:
    """Load the page and scroll to the chart of 2,000 runs; wait until its density (and the canvas on top) is
    drawn."""
    load(browser, base)
    browser.execute_script("window.__tfe.charts.find(c => c.title === 'many/signal').card.scrollIntoView()")
    start = time.monotonic()
    while not browser.execute_script("const c = window.__tfe.charts.find(c => c.title === 'many/signal');"
                                     "return !!(c && c.densityData && c.onTopCanvas)"):
        assert time.monotonic() - start < 20, "no density drawn"
        time.sleep(0.05)


def test_a_chart_of_2000_runs_is_drawn_as_their_density_and_hovering_names_a_run_through_the_pixel(browser, served):
    base = served["plain"].base
    _show_the_density_of_many(browser, base)
    drawn = browser.execute_script("""
        const c = window.__tfe.charts.find(c => c.title === 'many/signal'), canvas = c.plot.querySelector('canvas');
        return {runs: c.shown.length, lines: !!c.u, width: canvas.width, height: canvas.height,
                listed: c.densityData.runs.length, loaded: c.shown.filter(s => !s.pending).length};""")
    assert drawn["runs"] == drawn["listed"] == MANY > DENSITY_ABOVE
    assert not drawn["lines"] and drawn["loaded"] == 0          # no uPlot lines, no series asked for
    answer = get_json(base + "api/v1/density?" + query(tag="many/signal", width=drawn["width"], height=drawn["height"]))
    density = np.frombuffer(base64.b64decode(answer["density"]), "<f4").reshape(drawn["height"], drawn["width"])
    owner = np.frombuffer(base64.b64decode(answer["owner"]), "<i4").reshape(drawn["height"], drawn["width"])
    np.testing.assert_allclose(density.sum(axis=0)[density.sum(axis=0) > 0], MANY, rtol=1e-4)   # every run, each column
    # pixels the runs pass through, inside a 3 x 3 block of such pixels (a mouse event's position is whole CSS pixels)
    inner = np.ones_like(owner[1:-1, 1:-1], dtype=bool)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            inner &= owner[1 + dy:owner.shape[0] - 1 + dy, 1 + dx:owner.shape[1] - 1 + dx] >= 0
    rows, cols = np.nonzero(inner)
    rows, cols = rows + 1, cols + 1
    for k in (0, len(rows) // 2, len(rows) - 1):
        py, px = int(rows[k]), int(cols[k])
        named = browser.execute_script("""
            const c = window.__tfe.charts.find(c => c.title === 'many/signal'), canvas = c.plot.querySelector('canvas');
            const box = canvas.getBoundingClientRect(), sx = box.width / canvas.width, sy = box.height / canvas.height;
            canvas.dispatchEvent(new MouseEvent('mousemove', {clientX: box.left + (arguments[0] + 0.5) * sx,
                                                              clientY: box.top + (arguments[1] + 0.5) * sy}));
            const run = c.tooltip.querySelector('.density-run');
            return !c.tooltip.classList.contains('hidden') && run ? run.textContent : null;""", px, py)
        near = {answer["runs"][k] for k in owner[py - 1:py + 2, px - 1:px + 2].ravel()}
        assert named in near and density[py - 1:py + 2, px - 1:px + 2].min() > 0


def test_hostile_names_show_as_text_and_run_nothing(browser, served):
    load(browser, served["plain"].base)
    _wait(browser, lambda s: HOSTILE_TAG in s, 20, "the hostile tag's chart listed")
    assert browser.execute_script("return window.__pwned === undefined")
    runs = browser.execute_script("return Array.from(document.querySelectorAll('.run-list .run span'))"
                                  ".map(n => n.textContent)")
    assert HOSTILE_RUN in runs
    titles = browser.execute_script("return Array.from(document.querySelectorAll('.scalar-card .tag'))"
                                    ".map(n => n.textContent)")
    assert HOSTILE_TAG in titles
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0


def test_beyond_localhost_the_page_needs_the_token_and_works_under_the_prefix(browser, served):
    gated = served["gated"]
    page = gated.base                                           # http://127.0.0.1:PORT/x/
    assert urllib.parse.urlsplit(page).path == "/x/"
    status, _, _ = get(page)
    assert status == 401
    status, _, _ = get(page + "?token=wrong")
    assert status == 401
    load(browser, page + "?token=" + gated.token)               # the token once; its cookie then
    state = _wait(browser, lambda s: s.get("loss", {}).get("drawn"), 20, "the loss chart drawn behind the token")
    assert set(state["loss"]["series"]) >= {"sweep/lr_0.1", "sweep/lr_0.01"}


def test_the_served_document_has_the_reports_shape(tmp_path):
    """The page's scripts read the served document as a report's: the same sections, and the same series and
    charts of the scalars (without their arrays: ``fetch``, their points and last step, to ask for them)."""
    for run in ("a", "b"):
        with SummaryWriter(str(tmp_path / run)) as w:
            for step in range(5):
                w.add_scalar("loss", step * 0.5, step)
                w.add_scalar("eval/acc", step * 0.1, step)
            w.add_histogram("weights", np.arange(4.0), 0)
    live = LiveLogdir(str(tmp_path))
    live.reload()
    served, _ = live_document(live, title="t", api_base="/api/v1/", reload_interval=1.0)
    report, _ = collect(load_logdir(str(tmp_path)))
    assert set(served) - {"title", "options", "rendered", "api"} == set(report)
    assert served["runs"] == report["runs"]
    assert served["scalars"]["charts"] == report["scalars"]["charts"]
    assert [(s["run"], s["tag"]) for s in served["scalars"]["series"]] == \
        [(s["run"], s["tag"]) for s in report["scalars"]["series"]]
    assert all("step" not in s and s["fetch"] == [5, 4] for s in served["scalars"]["series"])


def _resolved(value, array):
    """``value`` with every embedded-array reference (``[dtype, offset, length]``) replaced by its values."""
    if isinstance(value, list):
        if (len(value) == 3 and isinstance(value[0], str) and value[0] in DTYPES
                and all(isinstance(v, int) for v in value[1:])):
            return array(value).tolist()
        return [_resolved(v, array) for v in value]
    if isinstance(value, dict):
        return {k: _resolved(v, array) for k, v in value.items()}
    return value


def test_the_other_kinds_and_the_hparams_table_are_the_reports(tmp_path):
    """Histograms and distributions, images, audio, text, PR curves and the HParams table with its metrics: the
    served page's sections (from the live loader's snapshot) equal the report file's (from load_logdir)."""
    rng = np.random.default_rng(5)
    for run, lr in (("a", 0.1), ("b", 0.01)):
        with SummaryWriter(str(tmp_path / "logs" / run)) as w:
            for step in range(3):
                w.add_scalar("loss", 1.0 / (1 + lr * step), step)
                w.add_histogram("weights", rng.normal(size=50), step)
                w.add_image("sample", rng.random((3, 8, 8)), step)
                w.add_audio("clip", np.sin(np.arange(800) * lr).astype(np.float32), step, sample_rate=8000)
                w.add_text("notes", "**step** %d of <b>%s</b>" % (step, run), step)
                w.add_pr_curve("pr", rng.integers(0, 2, 40), rng.random(40), step)
            w.add_hparams({"lr": lr, "opt": "adam"}, {"loss": 1.0 / (1 + lr * 2)}, global_step=2)
    logdir = str(tmp_path / "logs")
    live = LiveLogdir(logdir, parse_samples_per_plugin("scalars=all,histograms=all,images=all,audio=all,"
                                                       "text=all,pr_curves=all"))
    live.reload()
    served, served_array = page_document(dashboard_html(live, title="t", api_base="/api/v1/", reload_interval=1.0))
    out = str(tmp_path / "report.html")
    assert main(["report", logdir, "-o", out]) == 0
    with open(out, encoding="utf-8") as f:
        report, report_array = page_document(f.read())
    assert [r["name"] for r in served["runs"]] == [r["name"] for r in report["runs"]]
    for section in MEDIA_AND_OTHER_SECTIONS + ("hparams",):
        assert _resolved(served[section], served_array) == _resolved(report[section], report_array), section
    assert all(served[s] for s in ("histograms", "distributions", "images", "audio", "text", "pr_curves"))
    assert served["hparams"]["metrics"] == ["loss"] and len(served["hparams"]["rows"]) == 2


ON_TOP = """
const c = window.__tfe.charts.find(c => c.title === 'many/signal'), top = c.onTopCanvas;
const px = top.getContext('2d').getImageData(0, 0, top.width, top.height).data;
let drawn = 0;
for (let i = 3; i < px.length; i += 4) if (px[i] > 0) drawn++;
return {lines: c.linesOnTop || [], drawn};
"""


def test_on_a_density_the_hovered_pinned_and_best_runs_are_drawn_on_top(browser, served):
    base = served["plain"].base
    _show_the_density_of_many(browser, base)
    assert browser.execute_script(ON_TOP)["lines"] == []
    hovered = browser.execute_script("""
        const c = window.__tfe.charts.find(c => c.title === 'many/signal'), got = c.densityData;
        const bytes = Uint8Array.from(atob(got.owner), ch => ch.charCodeAt(0)), owner = new Int32Array(bytes.buffer);
        const w = got.width, owned = j => owner[j] >= 0;   // a pixel amid owned ones: mouse positions are whole CSS px
        const i = owner.findIndex((k, j) => j % w > 1 && j % w < w - 1 && j > w && j < owner.length - w &&
            [-w - 1, -w, -w + 1, -1, 0, 1, w - 1, w, w + 1].every(d => owned(j + d)));
        const x = i % w, y = Math.floor(i / w);
        const canvas = c.plot.querySelector('canvas.density'), box = canvas.getBoundingClientRect();
        const at = {clientX: box.left + (x + 0.5) * box.width / w, clientY: box.top + (y + 0.5) * box.height / got.height};
        canvas.dispatchEvent(new MouseEvent('mousemove', at));
        canvas.dispatchEvent(new MouseEvent('click', at));
        return c.tooltip.querySelector('.density-run').textContent;""")

    def on_top(predicate, what):
        start = time.monotonic()
        while True:
            state = browser.execute_script(ON_TOP)
            if predicate(state):
                return state
            assert time.monotonic() - start < 10, "%s: %r %r" % (what, state, console_messages(browser))
            time.sleep(0.05)

    state = on_top(lambda s: s["lines"] == [hovered], "the hovered run drawn on top")
    assert state["drawn"] > 20                                  # its line's pixels on the overlay
    browser.execute_script("window.__tfe.charts.find(c => c.title === 'many/signal').plot"
                           ".querySelector('canvas.density').dispatchEvent(new MouseEvent('mouseleave'))")
    on_top(lambda s: s["lines"] == [hovered], "the clicked run stays pinned")
    runs = get_json(base + "api/v1/runs")["runs"]
    lows = sorted((r["scalars"]["many/signal"]["min"], r["run"]) for r in runs if "many/signal" in r["scalars"])
    best = [name for _, name in lows[:5]]
    browser.execute_script("""const s = document.getElementById('run-sort'); s.value = 'min:many/signal';
                              s.dispatchEvent(new Event('change'));""")
    state = on_top(lambda s: set(s["lines"]) == {hovered, *best}, "the five lowest minima drawn on top")
    assert state["drawn"] > 100
    browser.execute_script("""const s = document.getElementById('run-sort'); s.value = 'name';
                              s.dispatchEvent(new Event('change'));""")


def test_the_collector_is_paused_while_pages_are_built_and_back_after_the_last():
    """page._collector_paused: off during one build or two at once, on again after the last ends (an error too),
    and left off when it was off before."""
    import gc
    import threading
    from tfevents.viewer.dashboard import page
    assert gc.isenabled()
    entered, release = threading.Barrier(3), threading.Event()

    def build():
        with page._collector_paused():
            entered.wait()
            release.wait()
    threads = [threading.Thread(target=build) for _ in range(2)]
    for t in threads:
        t.start()
    entered.wait()
    assert not gc.isenabled()
    release.set()
    for t in threads:
        t.join()
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with page._collector_paused():
            assert not gc.isenabled()
            raise RuntimeError("a failed build")
    assert gc.isenabled()
    gc.disable()
    try:
        with page._collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
