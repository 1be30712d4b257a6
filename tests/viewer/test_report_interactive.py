"""The interactive report (``tfevents report``, ``viewer/reports/interactive``) in real headless Chromium (selenium).

The demo's report renders every section with no console message and no request beyond its own file;
clicking a run's checkbox removes its line from the chart; dragging the smoothing slider makes the chart
show what ``viewer/smoothing.py`` computes for the weight the slider landed on; dragging across a chart
zooms its x range (double-click resets); the CSV holds every logged point while the chart draws fewer
(M4 keeps the spike); markup in run names, tags and text summaries shows as text and runs nothing.
Logdirs are written by the demo (tfevents.core) and by tensorboardX; values are checked against
``load_logdir`` and ``viewer/smoothing.py``.
"""
import csv
import io
import os

import numpy as np
import pytest

from _browser import browser, browser_session, console_messages, network_requests, open_file  # noqa: F401
from _viewer_data import SCRIPT_TEXT, mixed  # noqa: F401

MAX_DEMO_BYTES = 2 * 1024 * 1024
LONG_STEPS = 3000
SPIKE_STEP = 1234
PWN = ['<script>window.__pwned = 1</script>', '<img src=x onerror="window.__pwned = 2">',
       '"><svg onload="window.__pwned = 3">']


# ---------------------------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def demo(demo_cli_run):
    """``tfevents demo`` run as a user runs it (conftest's ``demo_cli_run``): (LOGDIR, LOGDIR/report.html)."""
    return demo_cli_run


@pytest.fixture(scope="module")
def long_runs(tmp_path_factory):
    """Two tensorboardX runs of 3000 noisy points (one spike) and a short third run, and their report."""
    from tensorboardX import SummaryWriter
    root = tmp_path_factory.mktemp("long")
    rng = np.random.default_rng(7)
    for k, name in enumerate(["alpha", "beta", "gamma"]):
        steps = np.arange(LONG_STEPS if k < 2 else 40)
        values = 3.0 * np.exp(-steps / 700.0) + k + rng.normal(0, 0.2, steps.size)
        if k == 0:
            values[SPIKE_STEP] = 50.0
        with SummaryWriter(str(root / "logs" / name)) as w:
            for s, v in zip(steps, values):
                w.add_scalar("train/loss", float(v), int(s))
                if s % 10 == 0:
                    w.add_scalar("train/lr", 0.1 * 0.999 ** s, int(s))
    out = str(root / "report.html")
    from tfevents.viewer.cli import main
    assert main(["report", str(root / "logs"), "-o", out, "--title", "long runs"]) == 0
    return str(root / "logs"), out


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """Markup in a run name, in tags and in text summaries (tensorboardX), and its report."""
    from tensorboardX import SummaryWriter
    root = tmp_path_factory.mktemp("hostile")
    run = root / "logs" / ('run<img src=x onerror="window.__pwned = 4">')
    with SummaryWriter(str(run)) as w:
        for i, tag in enumerate(PWN):
            for s in range(5):
                w.add_scalar(tag, float(s * (i + 1)), s)
            w.add_text("notes/" + tag, PWN[i] + " **bold %d**" % i, 1)
        w.add_hparams({PWN[0]: PWN[1], "lr": 0.1}, {"hp/" + PWN[2]: 1.0}, name="hp")
    out = str(root / "report.html")
    from tfevents.viewer.cli import main
    assert main(["report", str(root / "logs"), "-o", out]) == 0
    return str(root / "logs"), out


def _open(driver, path):
    """Load a report afresh: controls at their defaults (the page keeps them in sessionStorage)."""
    network_requests(driver)       # drop what earlier pages logged
    console_messages(driver)
    open_file(driver, path)
    if driver.execute_script("const n = sessionStorage.length; sessionStorage.clear(); return n"):
        open_file(driver, path)


CHART = """
const c = window.__tfe.charts.find(c => c.title === arguments[0]);
if (!c || !c.u) return null;
return {labels: c.u.series.map(s => s.label || null), show: c.u.series.map(s => s.show),
        data: c.u.data.map(a => Array.from(a)), min: c.u.scales.x.min, max: c.u.scales.x.max,
        left: c.u.over.getBoundingClientRect().left, width: c.u.over.clientWidth, height: c.u.over.clientHeight};
"""


def _chart(driver, title):
    state = driver.execute_script(CHART, title)
    assert state is not None, "no chart %r drawn" % title
    return state


def _color_pixels(driver, title, color):
    """Pixels of the chart's canvas within a small distance of ``color`` (#rrggbb)."""
    return driver.execute_script("""
        const c = window.__tfe.charts.find(c => c.title === arguments[0]);
        const canvas = c.u.ctx.canvas, ctx = c.u.ctx, hex = arguments[1];
        const want = [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16));
        const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
        let n = 0;
        for (let i = 0; i < px.length; i += 4)
            if (px[i + 3] > 200 && Math.abs(px[i] - want[0]) + Math.abs(px[i + 1] - want[1])
                + Math.abs(px[i + 2] - want[2]) < 40) n++;
        return n;""", title, color)


# ---------------------------------------------------------------------------------------------- the demo

def test_network_detector_sees_a_request(browser, tmp_path):
    """The request log the tests rely on does catch a page that fetches something."""
    page = tmp_path / "fetch.html"
    page.write_text('<!DOCTYPE html><img src="http://127.0.0.1:9/x.png">')
    network_requests(browser)
    browser.get("file://" + str(page))
    assert "http://127.0.0.1:9/x.png" in network_requests(browser)
    console_messages(browser)


def test_demo_report_renders_offline_with_every_section(browser, demo):
    from tfevents.summaries import load_logdir
    logdir, report = demo
    size = os.path.getsize(report)
    assert size <= MAX_DEMO_BYTES, size
    text = open(report, encoding="utf-8").read()
    assert "http://" not in text.split('id="tfe-data"')[0] and "<link" not in text   # nothing linked in the head
    _open(browser, report)
    state = browser.execute_script("""
        const t = window.__tfe;
        return {charts: t.charts.length, drawn: t.charts.filter(c => c.draws > 0).length,
                sections: Array.from(document.querySelectorAll('section h2')).map(h => h.textContent),
                canvases: Array.from(document.querySelectorAll('.plot canvas')).map(c => c.width * c.height > 0),
                images: Array.from(document.images).map(i => i.complete && i.naturalWidth > 0),
                svgs: document.querySelectorAll('svg.svg-chart path').length,
                resources: performance.getEntriesByType('resource').map(r => r.name),
                scripts: document.scripts.length, pwned: typeof window.__pwned};""")
    requests = network_requests(browser)
    console = console_messages(browser)
    assert console == [], console                                     # no error, warning or CSP report
    page_url = "file://" + os.path.abspath(report)
    assert all(u == page_url or u.startswith("data:") for u in requests), [u[:80] for u in requests]
    assert state["resources"] == []
    data = load_logdir(logdir)
    assert state["charts"] == len({tag for _, tag in data.scalars}) == state["drawn"]
    assert state["canvases"] and all(state["canvases"])
    assert state["images"] and all(state["images"])
    assert state["svgs"] > 50
    assert state["sections"] == ["Scalars", "Distributions", "Histograms", "PR curves", "Embeddings", "Images",
                                 "Text", "HParams", "Graphs"]
    assert state["scripts"] == 4 and state["pwned"] == "undefined"     # data, blob, uPlot, report


def test_toggling_a_run_removes_its_line(browser, demo):
    from selenium.webdriver.common.by import By
    _, report = demo
    _open(browser, report)
    colors = browser.execute_script("return window.__tfe.data.runs")
    orange = next(r["color"] for r in colors if r["name"] == "test")
    before = _chart(browser, "loss")
    assert "test" in before["labels"] and "train" in before["labels"]
    assert _color_pixels(browser, "loss", orange) > 100
    box = browser.find_element(By.CSS_SELECTOR, '.run-toggle[value="test"]')
    box.click()
    after = _chart(browser, "loss")
    assert "test" not in after["labels"] and "train" in after["labels"]
    assert _color_pixels(browser, "loss", orange) < 5
    box.click()
    assert "test" in _chart(browser, "loss")["labels"]
    assert console_messages(browser) == []


def test_one_point_series_show_their_point_and_its_value_on_hover(browser, demo):
    """The demo's ``hparam/*`` metrics are one point each: each chart draws it (as TensorBoard does), and hovering
    over it shows its value."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from tfevents.summaries import load_logdir
    logdir, report = demo
    logged = {tag: (run, s) for (run, tag), s in load_logdir(logdir).scalars.items() if tag.startswith("hparam/")}
    assert len(logged) == 4 and all(s.step.size == 1 for _, s in logged.values())
    _open(browser, report)
    colors = {r["name"]: r["color"] for r in browser.execute_script("return window.__tfe.data.runs")}
    for tag, (run, series) in sorted(logged.items()):
        assert _color_pixels(browser, tag, colors[run]) >= 9, "%s: its one point is not drawn" % tag
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})",
                               browser.find_element(By.CSS_SELECTOR, '.scalar-card[data-chart="%s"]' % tag))
        over, x, y = browser.execute_script("""
            const u = window.__tfe.charts.find(c => c.title === arguments[0]).u, k = u.data[2].findIndex(v => v !== null);
            return [u.over, u.valToPos(u.data[0][k], 'x'), u.valToPos(u.data[2][k], 'y')];""", tag)
        size = over.size
        ActionChains(browser).move_to_element_with_offset(over, int(x - size["width"] / 2),
                                                          int(y - size["height"] / 2)).perform()
        card = browser.find_element(By.CSS_SELECTOR, '.scalar-card[data-chart="%s"]' % tag)
        rows = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
                for tr in card.find_elements(By.CSS_SELECTOR, ".tooltip tbody tr")]
        assert len(rows) == 1, (tag, rows)
        assert float(rows[0][3]) == pytest.approx(float(series.value[0]), rel=1e-3)
        assert int(rows[0][4]) == int(series.step[0])
    assert console_messages(browser) == []


def test_graph_tree_counts_every_node(browser, demo, tf):
    """The graph tree's op counts per top-level scope equal the GraphDef's as TensorFlow parses it."""
    logdir, report = demo
    from tfevents.summaries import load_logdir
    graph = tf.compat.v1.GraphDef()
    graph.ParseFromString(bytes(load_logdir(logdir).graphs["train"]))
    expected = {}
    for node in graph.node:
        expected[node.name.split("/")[0]] = expected.get(node.name.split("/")[0], 0) + 1
    _open(browser, report)
    tree = browser.execute_script("return window.__tfe.data.graphs[0].tree.map(c => [c[0], c[2]])")
    assert dict(tree) == expected
    shown = browser.execute_script("return document.querySelector('#graphs').innerText")
    assert "%d nodes" % len(graph.node) in shown and "hidden1" in shown


# ---------------------------------------------------------------------------------------------- scalars

def test_smoothing_slider_shows_viewer_smoothing(browser, long_runs):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from tfevents.summaries import load_logdir
    from tfevents.viewer.smoothing import ema
    logdir, report = long_runs
    series = load_logdir(logdir).scalars[("alpha", "train/loss")]
    _open(browser, report)
    slider = browser.find_element(By.ID, "smoothing")
    for offset in (-60, 45):
        ActionChains(browser).click_and_hold(slider).move_by_offset(offset, 0).release().perform()
        weight = float(slider.get_attribute("value"))
        assert weight != 0.6
        state = _chart(browser, "train/loss")
        k = state["labels"].index("alpha")
        xs, shown = np.array(state["data"][0]), state["data"][k]
        idx = np.searchsorted(series.step, xs)
        have = np.array([v is not None for v in shown])
        assert have.sum() > 100
        expected = ema(series.value, weight)[idx[have]]
        np.testing.assert_allclose(np.array(shown, dtype=float)[have], expected, rtol=1e-9)
        # ... and not what another weight gives
        assert not np.allclose(np.array(shown, dtype=float)[have], ema(series.value, 0.6)[idx[have]], rtol=1e-6)
    assert console_messages(browser) == []
    # a reload (--watch's refresh: location.reload() in the same tab) keeps the slider where it was; a new
    # navigation (driver.get) may land in another renderer before its sessionStorage write arrives
    from selenium.webdriver.support.ui import WebDriverWait
    browser.execute_script("window.__before_reload = 1; location.reload();")
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(
        "return window.__before_reload === undefined && window.__reportReady !== undefined"))
    assert float(browser.find_element(By.ID, "smoothing").get_attribute("value")) == weight


def test_long_series_drawn_downsampled_but_csv_has_every_point(browser, long_runs):
    from tfevents.summaries import load_logdir
    logdir, report = long_runs
    data = load_logdir(logdir).scalars
    _open(browser, report)
    state = _chart(browser, "train/loss")
    k = state["labels"].index("alpha")
    raw = [v for v in state["data"][k - 1] if v is not None]      # raw series sits before the smoothed one
    assert len(raw) < LONG_STEPS * 0.9                              # downsampled for display ...
    assert max(raw) == pytest.approx(50.0)                          # ... keeping the spike (M4)
    text = browser.execute_script("""
        return window.__tfe.chartCsv(window.__tfe.charts.find(c => c.title === 'train/loss'));""")
    rows = list(csv.DictReader(io.StringIO(text)))
    for run in ("alpha", "beta", "gamma"):
        mine = [r for r in rows if r["run"] == run]
        s = data[(run, "train/loss")]
        assert [int(r["step"]) for r in mine] == s.step.tolist()
        assert [float(r["value"]) for r in mine] == s.value.tolist()
        assert [float(r["wall_time"]) for r in mine] == s.wall_time.tolist()


def test_drag_zooms_the_x_range_and_double_click_resets(browser, long_runs):
    from selenium.webdriver.common.action_chains import ActionChains
    _, report = long_runs
    _open(browser, report)
    before = _chart(browser, "train/loss")
    over = browser.execute_script(
        "return window.__tfe.charts.find(c => c.title === 'train/loss').u.over")
    w = before["width"]
    ActionChains(browser).move_to_element_with_offset(over, int(-w * 0.2), 0).click_and_hold() \
        .move_by_offset(int(w * 0.3), 10).release().perform()
    zoomed = _chart(browser, "train/loss")
    assert before["min"] < zoomed["min"] < zoomed["max"] < before["max"]
    assert zoomed["max"] - zoomed["min"] < 0.45 * (before["max"] - before["min"])
    inside = [x for x in zoomed["data"][0] if zoomed["min"] <= x <= zoomed["max"]]
    assert len(inside) >= (zoomed["max"] - zoomed["min"]) * 0.99     # every step of the range is drawn now
    ActionChains(browser).double_click(over).perform()
    reset = _chart(browser, "train/loss")
    assert (reset["min"], reset["max"]) == (before["min"], before["max"])


def test_hover_shows_each_runs_step_wall_time_smoothed_and_raw_value(browser, long_runs):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from tfevents.summaries import load_logdir
    from tfevents.viewer.smoothing import ema
    logdir, report = long_runs
    data = load_logdir(logdir).scalars
    _open(browser, report)
    over = browser.execute_script("return window.__tfe.charts.find(c => c.title === 'train/loss').u.over")
    ActionChains(browser).move_to_element_with_offset(over, 30, 0).perform()
    step = browser.execute_script("""
        const u = window.__tfe.charts.find(c => c.title === 'train/loss').u;
        return u.posToVal(u.cursor.left, 'x');""")
    card = browser.find_element(By.CSS_SELECTOR, '.scalar-card[data-chart="train/loss"]')
    rows = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in card.find_elements(By.CSS_SELECTOR, ".tooltip tbody tr")]
    assert [r[1] for r in rows] == ["alpha", "beta", "gamma"]
    for _, run, smoothed, raw, shown_step, wall, relative in rows:
        s = data[(run, "train/loss")]
        i = int(np.abs(s.step - step).argmin())                       # the run's point nearest the cursor
        assert int(shown_step) == s.step[i]
        assert float(raw) == pytest.approx(s.value[i], rel=1e-3)
        assert float(smoothed) == pytest.approx(ema(s.value, 0.6)[i], rel=1e-3)
        assert wall and relative.endswith("s")
    assert int(rows[2][4]) == 39                                        # gamma stops at step 39


def test_axis_scale_outlier_and_filter_controls(browser, long_runs):
    from selenium.webdriver.common.by import By
    _, report = long_runs
    _open(browser, report)
    y_range = ("const u = window.__tfe.charts.find(c => c.title === 'train/loss').u; "
               "return [u.scales.y.min, u.scales.y.max, u.scales.x.min, u.scales.x.max, u.scales.y.distr]")
    y0 = browser.execute_script(y_range)
    assert y0[1] > 50                                                # the spike is in range
    browser.find_element(By.ID, "ignore-outliers").click()
    y1 = browser.execute_script(y_range)
    assert y1[1] < 10                                                # 5th..95th percentile
    browser.find_element(By.ID, "ignore-outliers").click()
    browser.find_element(By.ID, "log-y").click()
    assert browser.execute_script(y_range)[4] == 3                   # uPlot's log distribution
    browser.find_element(By.ID, "log-y").click()
    browser.find_element(By.CSS_SELECTOR, 'input[name="x-axis"][value="wall"]').click()
    wall = browser.execute_script(y_range)
    assert wall[2] > 1e9                                             # seconds since the epoch
    browser.find_element(By.CSS_SELECTOR, 'input[name="x-axis"][value="relative"]').click()
    rel = browser.execute_script(y_range)
    assert 0 <= rel[2] < rel[3] < wall[3] - wall[2] + 1
    browser.find_element(By.CSS_SELECTOR, 'input[name="x-axis"][value="step"]').click()
    tag_filter = browser.find_element(By.ID, "tag-filter")
    tag_filter.send_keys("lr$")
    visible = browser.execute_script(
        "return window.__tfe.charts.filter(c => !c.card.classList.contains('hidden')).map(c => c.title)")
    assert visible == ["train/lr"]
    tag_filter.clear()
    tag_filter.send_keys("(")                                        # an invalid regex is flagged, not fatal
    assert "invalid" in tag_filter.get_attribute("class")
    tag_filter.clear()
    browser.execute_script("const e = document.getElementById('tag-filter'); e.dispatchEvent(new Event('input'))")
    runs = browser.find_element(By.ID, "run-filter")
    runs.send_keys("^(alpha|gamma)$")
    assert _chart(browser, "train/loss")["labels"][1:] == ["alpha (raw)", "alpha", "gamma (raw)", "gamma"]
    runs.clear()
    browser.execute_script("const e = document.getElementById('run-filter'); e.dispatchEvent(new Event('input'))")
    groups = browser.execute_script(
        "return Array.from(document.querySelectorAll('#scalars .group-name')).map(g => g.textContent)")
    assert groups == ["train"]                                       # TensorBoard's prefix grouping
    assert console_messages(browser) == []


# ---------------------------------------------------------------------------------------------- safety

def test_markup_in_runs_tags_and_text_shows_as_text(browser, hostile):
    from tfevents.summaries import load_logdir
    logdir, report = hostile
    assert load_logdir(logdir).text                                  # the logdir really has the payloads
    _open(browser, report)
    state = browser.execute_script("""
        return {pwned: typeof window.__pwned, scripts: document.scripts.length,
                text: document.body.innerText,
                injected: document.querySelectorAll('main img[src="x"], main svg[onload], [onerror]').length,
                bold: Array.from(document.querySelectorAll('.markdown strong')).map(b => b.textContent)};""")
    console = console_messages(browser)
    assert state["pwned"] == "undefined" and state["scripts"] == 4 and state["injected"] == 0
    assert console == [], console                                    # not even a CSP violation report
    for payload in PWN:
        assert payload in state["text"]                              # tags, text and hparams, as text
    assert 'run<img src=x onerror="window.__pwned = 4">' in state["text"]
    assert sorted(state["bold"]) == ["bold 0", "bold 1", "bold 2"]   # the markdown around them still renders


# ---------------------------------------------------------------------------------------------- the CLI

def test_cli_default_is_interactive_and_static_is_kept(long_runs, tmp_path):
    from tfevents.viewer.cli import main
    logdir, _ = long_runs
    interactive, static = tmp_path / "i.html", tmp_path / "s.html"
    assert main(["report", logdir, "-o", str(interactive), "--smoothing", "0.9", "--x", "relative"]) == 0
    assert main(["report", logdir, "-o", str(static), "--static", "--tags", "lr"]) == 0
    page = interactive.read_text()
    assert 'id="tfe-data"' in page and "uPlot" in page and '"smoothing":0.9' in page and '"x":"relative"' in page
    assert "Content-Security-Policy" in page and "script-src 'sha256-" in page
    assert "<script" not in static.read_text() and "data:image/png;base64," in static.read_text()
    assert main(["report", logdir, "-o", str(tmp_path / "bad.html"), "--tags", "("]) == 2
    assert not (tmp_path / "bad.html").exists()


def test_group_regex_and_bad_options(long_runs):
    import json
    import re
    from tfevents.viewer.reports.interactive import render_interactive_report
    logdir, _ = long_runs
    page = render_interactive_report(logdir, group="^([^/]*)/")
    doc = json.loads(re.search(r'id="tfe-data">(.*?)</script>', page).group(1))
    (chart,) = doc["scalars"]["charts"]
    assert chart["title"] == "train" and len(chart["series"]) == 6  # 3 runs x (train/loss, train/lr)
    with pytest.raises(ValueError, match="x must be one of"):
        render_interactive_report(logdir, x="epoch")
    with pytest.raises(ValueError, match="smoothing must be in"):
        render_interactive_report(logdir, smoothing=1.5)
    with pytest.raises(ValueError, match="invalid run regex"):
        render_interactive_report(logdir, runs="[")


# ---------------------------------------------------------------------------------------------- other kinds

def test_every_writers_runs_render(browser, mixed, tmp_path):
    """tensorboardX, torch, TF2 and tfevents runs (tests/_viewer_data.py): audio plays from data URIs, the
    text summary's <script> shows as text, every kind has its section."""
    from tfevents.viewer.cli import main
    root, facts = mixed
    out = str(tmp_path / "mixed.html")
    assert main(["report", root, "-o", out]) == 0
    _open(browser, out)
    state = browser.execute_script("""
        const audio = Array.from(document.querySelectorAll('audio'));
        return {sections: Array.from(document.querySelectorAll('section h2')).map(h => h.textContent),
                audio: audio.map(a => a.src.slice(0, 15)), text: document.querySelector('#text').innerText,
                pwned: typeof window.__pwned, nodes: window.__tfe.data.graphs.map(g => g.nodes)};""")
    for name in ("Scalars", "Distributions", "Histograms", "PR curves", "Images", "Audio", "Text", "HParams", "Graphs"):
        assert name in state["sections"], name
    assert state["audio"] == ["data:audio/wav;"]
    duration = browser.execute_async_script("""
        const a = document.querySelector('audio'), done = arguments[arguments.length - 1];
        if (a.readyState >= 1) done(a.duration); else a.addEventListener('loadedmetadata', () => done(a.duration));""")
    assert duration == pytest.approx(0.25, abs=0.01)                   # the torch clip: 4000 samples at 16 kHz
    assert SCRIPT_TEXT.split(" **")[0] in state["text"] and state["pwned"] == "undefined"
    assert facts["nodes"] in state["nodes"]                              # TF2's graph, node count as TF sees it
    assert console_messages(browser) == []


def test_image_slider_distributions_and_pr_curves_show_the_logged_data(browser, demo):
    import base64
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from tfevents.summaries import load_logdir
    from tfevents.viewer.plots.histograms import distribution
    logdir, report = demo
    data = load_logdir(logdir)
    _open(browser, report)
    card = browser.find_element(By.CSS_SELECTOR, '#images .card[data-tag="confusion_matrix"]')
    records = {r.step: bytes(r.data) for r in data.images[("train", "confusion_matrix")]}

    def shown():
        label = card.find_element(By.CSS_SELECTOR, ".step-value").text
        src = card.find_element(By.CSS_SELECTOR, "img").get_attribute("src")
        return int(label.split()[1]), base64.b64decode(src.split(",", 1)[1])
    step, png = shown()
    assert step == max(records) and png == records[step]              # the latest step first
    slider = card.find_element(By.CSS_SELECTOR, ".step-slider")
    slider.send_keys(Keys.HOME)
    step, png = shown()
    assert step == min(records) and png == records[step]
    # distributions: the bands the page draws are TensorBoard's basis points (viewer/plots/histograms.py)
    bands = browser.execute_script("""
        const d = window.__tfe.data.distributions.find(d => d.tag === 'weights/hidden1/kernel');
        return Array.from(window.__tfe.arr(d.bands));""")
    expected = distribution(data.histograms[("train", "weights/hidden1/kernel")])
    np.testing.assert_array_equal(np.array(bands).reshape(expected.shape), expected)
    # PR curves: one line per run with a step slider; its last position is the last logged step
    pr = browser.find_element(By.CSS_SELECTOR, '#pr-curves .card[data-tag="pr_curves/class_3"]')
    last = data.pr_curves[("test", "pr_curves/class_3")][-1].step
    assert pr.find_element(By.CSS_SELECTOR, ".step-value").text == "step %d" % last
    assert len(pr.find_elements(By.CSS_SELECTOR, "path.pr-line")) == 1
    assert console_messages(browser) == []


def test_hparams_table_sorts_filters_and_draws_a_line_per_row(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from tensorboardX import SummaryWriter
    from tfevents.viewer.cli import main
    rates = [0.3, 0.01, 0.1, 0.03]
    for i, lr in enumerate(rates):
        with SummaryWriter(str(tmp_path / "logs" / ("trial%d" % i))) as w:
            w.add_hparams({"lr": lr, "optimizer": "adam" if i % 2 else "sgd"}, {"hp/acc": 1 - lr})
    out = str(tmp_path / "hp.html")
    assert main(["report", str(tmp_path / "logs"), "-o", out]) == 0
    _open(browser, out)
    lr_column = "return Array.from(document.querySelectorAll('.hp-table tbody tr')).map(r => r.cells[%d].textContent)"
    header = browser.find_elements(By.CSS_SELECTOR, ".hp-table th")
    k = [h.text for h in header].index("lr")
    assert sorted(map(float, browser.execute_script(lr_column % k))) == sorted(rates)
    browser.find_elements(By.CSS_SELECTOR, ".hp-table th")[k].click()
    assert list(map(float, browser.execute_script(lr_column % k))) == sorted(rates)
    browser.find_elements(By.CSS_SELECTOR, ".hp-table th")[k].click()
    assert list(map(float, browser.execute_script(lr_column % k))) == sorted(rates, reverse=True)
    assert len(browser.find_elements(By.CSS_SELECTOR, ".hp-coords path.hp-line")) == 4
    browser.find_element(By.CSS_SELECTOR, ".hp-filter").send_keys("adam")
    assert len(browser.execute_script(lr_column % k)) == 2
    assert len(browser.find_elements(By.CSS_SELECTOR, ".hp-coords path.hp-line")) == 2
    assert console_messages(browser) == []


def test_watch_rewrites_the_interactive_report_when_event_files_grow(tmp_path):
    import threading
    from tfevents.summaries import SummaryWriter
    from tfevents.viewer.reports.interactive import watch_interactive_report
    logdir, out = tmp_path / "logs", tmp_path / "live.html"
    w = SummaryWriter(str(logdir / "run"))
    w.add_scalar("first_tag", 1.0, 0)
    w.flush()
    rendered, stop = [], threading.Event()
    thread = threading.Thread(target=watch_interactive_report, args=(str(logdir), str(out)),
                              kwargs=dict(interval=0.1, stop=stop,
                                          on_render=lambda p: rendered.append(out.read_text())))
    thread.start()
    try:
        import time
        deadline = time.time() + 60
        while not rendered and time.time() < deadline:
            time.sleep(0.05)
        assert rendered and "first_tag" in rendered[0] and "second_tag" not in rendered[0]
        assert 'http-equiv="refresh"' in rendered[0]
        w.add_scalar("second_tag", 2.0, 1)
        w.flush()
        while len(rendered) < 2 and time.time() < deadline:
            time.sleep(0.05)
        assert len(rendered) >= 2 and "second_tag" in rendered[-1]
    finally:
        stop.set()
        thread.join(30)
        w.close()


def test_odd_data_renders_without_console_errors(browser, tmp_path):
    """Non-finite scalars, a one-point series, a one-step histogram, and an empty logdir."""
    from tensorboardX import SummaryWriter
    from tfevents.viewer.cli import main
    with SummaryWriter(str(tmp_path / "logs" / "odd")) as w:
        for s, v in enumerate([1.0, float("nan"), 2.0, float("inf"), float("-inf"), 3.0]):
            w.add_scalar("weird", v, s)
        w.add_scalar("single", 5.0, 7)
        w.add_histogram("once", np.array([1.0, 1.0, 2.0]), 3)
    out = str(tmp_path / "odd.html")
    assert main(["report", str(tmp_path / "logs"), "-o", out]) == 0
    _open(browser, out)
    weird = _chart(browser, "weird")
    assert weird["data"][1] == [1.0, None, 2.0, None, None, 3.0]        # non-finite points are gaps
    assert _chart(browser, "single")["data"][0] == [7]
    assert browser.execute_script("return document.querySelectorAll('#distributions path').length") > 0
    assert console_messages(browser) == []
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty"), "-o", str(tmp_path / "empty.html")]) == 0
    _open(browser, str(tmp_path / "empty.html"))
    assert "No summaries found." in browser.execute_script("return document.body.innerText")
    assert console_messages(browser) == []


def test_videos_embeddings_and_meshes(browser, tmp_path):
    import base64
    from selenium.webdriver.common.by import By
    from tensorboardX import SummaryWriter as TbxWriter
    from tfevents.summaries import SummaryWriter, load_logdir
    from tfevents.viewer.cli import main
    from tfevents.viewer.plots.projections import pca_2d
    rng = np.random.default_rng(0)
    with SummaryWriter(str(tmp_path / "logs" / "ours")) as w:
        for step in (1, 2):
            w.add_video("clip", rng.integers(0, 256, (1, 4, 3, 8, 8)).astype(np.uint8), step, fps=5)
        w.add_mesh("pyramid", np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]], np.float32),
                   faces=np.array([[[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]]), global_step=3)
    mat = np.concatenate([rng.normal(loc=c * 4, size=(10, 5)) for c in range(3)]).astype(np.float32)
    with TbxWriter(str(tmp_path / "logs" / "tbx")) as tw:
        tw.add_embedding(mat, metadata=["group%d" % (i // 10) for i in range(30)], tag="words", global_step=1)
    out = str(tmp_path / "media.html")
    assert main(["report", str(tmp_path / "logs"), "-o", out]) == 0
    data = load_logdir(str(tmp_path / "logs"))
    _open(browser, out)
    video = browser.find_element(By.CSS_SELECTOR, '#videos .card[data-tag="clip"] img').get_attribute("src")
    assert base64.b64decode(video.split(",", 1)[1]) == bytes(data.videos[("ours", "clip")][-1].data)
    page = browser.execute_script("""
        const e = window.__tfe.data.embeddings[0];
        return {x: Array.from(window.__tfe.arr(e.x)), y: Array.from(window.__tfe.arr(e.y)), cats: e.categories,
                legend: document.querySelector('#embeddings .legend').innerText,
                mesh: document.querySelector('#meshes img').naturalWidth};""")
    coords, _ = pca_2d(mat)
    np.testing.assert_allclose(np.c_[page["x"], page["y"]], coords, rtol=1e-5, atol=1e-5)
    assert page["cats"] == ["group0", "group1", "group2"] and "group2" in page["legend"]
    assert page["mesh"] > 100
    assert console_messages(browser) == []
