"""The report's interactions on both pages: the report file (``tfevents report``) and the dashboard served live
(``tfevents api``, the same page fed by the JSON API), in headless Chromium. Run toggles, the run filter, smoothing,
bands of groups of runs and the HParams table's ranking by a metric's best value must work alike on each."""
from __future__ import annotations

import time

import numpy as np
import pytest

from _browser import browser, browser_session, console_messages, load, open_file  # noqa: F401 (fixtures)
from _dashboard import ApiProcess
from tfevents.summaries import SummaryWriter, aggregate, builders
from tfevents.viewer.cli import main
from tfevents.viewer.smoothing import ema

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

SEED_RUNS = r"/seed_\d+$"
RATES = (0.1, 0.01)
SEEDS = 2
STEPS = 300
PAGES = ("report", "served")


def _runs():
    return ["lr_%s/seed_%d" % (lr, seed) for lr in RATES for seed in range(SEEDS)]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """Two learning rates × two seeds, with hparams and a metric; the report file and the served page of it, both
    grouping the seeds (``--aggregate``)."""
    root = tmp_path_factory.mktemp("dashboard_as_report")
    logdir = root / "logs"
    rng = np.random.default_rng(35)
    for lr in RATES:
        for seed in range(SEEDS):
            with SummaryWriter(str(logdir / ("lr_%s" % lr) / ("seed_%d" % seed))) as w:
                for step in range(STEPS):
                    w.add_scalar("loss", float(1.0 / (1 + lr * step) + 0.1 * seed + rng.normal(0, 0.02)), step)
                for summary in builders.hparams({"lr": lr, "seed": seed}, {"loss": 0.0}):   # the metric: loss
                    w.add_summary(summary, 0)
    report = str(root / "report.html")
    assert main(["report", str(logdir), "-o", report, "--aggregate", SEED_RUNS]) == 0
    server = ApiProcess(str(logdir), "--samples-per-plugin", "scalars=all", "--aggregate", SEED_RUNS)
    try:
        server.wait_ready()
        yield {"logdir": str(logdir), "report": report, "served": server.base}
    finally:
        server.stop()


def _open(driver, sweep, page: str, view: str = "runs") -> None:
    """Load the page afresh (controls at their defaults), choose the ``view`` (the individual runs, or the groups'
    bands) and wait until the loss chart is drawn with it (on the served page: its series answered)."""
    opener = open_file if page == "report" else load
    opener(driver, sweep[page])
    if driver.execute_script("const n = sessionStorage.length; sessionStorage.clear(); return n"):
        opener(driver, sweep[page])
    deadline = time.monotonic() + 30
    while not driver.execute_script("return !!(window.__tfe && window.__tfe.ready)"):
        assert time.monotonic() < deadline, "the %s page did not get ready" % page
        time.sleep(0.05)
    driver.execute_script("document.querySelector('input[name=\"scalar-view\"][value=\"' + arguments[0] + '\"]').click()",
                          view)
    while time.monotonic() < deadline:
        if driver.execute_script("""
                const t = window.__tfe; if (!t || !t.ready) return false;
                const c = t.charts.find(c => c.title === 'loss');
                if (!(c && c.u)) return false;
                if (arguments[0] === 'bands') return !!c.bandView;
                const shown = c.shown || [];
                return shown.length === 4 && shown.every(s => !s.pending) && !c.bandView;""", view):
            return
        time.sleep(0.05)
    raise AssertionError("the loss chart was not drawn on the %s page in the %s view" % (page, view))


LINES = """
const c = window.__tfe.charts.find(c => c.title === 'loss');
return {labels: c.u.series.map(s => s.label || null), data: c.u.data.map(a => Array.from(a, v => v === null ? null : +v)),
        bandView: !!c.bandView};
"""


def _lines(driver) -> dict:
    return driver.execute_script(LINES)


@pytest.mark.parametrize("page", PAGES)
def test_toggling_a_run_and_the_run_filter(browser, sweep, page):
    from selenium.webdriver.common.by import By
    _open(browser, sweep, page)
    assert {l for l in _lines(browser)["labels"] if l} >= set(_runs())
    browser.execute_script("""
        const box = document.querySelector('.run-toggle[value="lr_0.1/seed_1"]');
        box.scrollIntoView(); box.click();""")
    assert "lr_0.1/seed_1" not in _lines(browser)["labels"]
    browser.execute_script("document.querySelector('.run-toggle[value=\"lr_0.1/seed_1\"]').click()")
    assert "lr_0.1/seed_1" in _lines(browser)["labels"]
    browser.find_element(By.ID, "run-filter").send_keys("^lr_0\\.01/")
    time.sleep(0.2)
    assert set(_lines(browser)["labels"]) & set(_runs()) == {"lr_0.01/seed_0", "lr_0.01/seed_1"}
    assert console_messages(browser) == []


@pytest.mark.parametrize("page", PAGES)
def test_smoothing_is_the_ema_of_the_drawn_raw_line(browser, sweep, page):
    _open(browser, sweep, page)
    browser.execute_script("""
        const s = document.getElementById('smoothing'); s.value = '0.8'; s.dispatchEvent(new Event('input'));""")
    time.sleep(0.2)
    state = _lines(browser)
    run = "lr_0.1/seed_0"
    raw = np.array(state["data"][state["labels"].index(run + " (raw)")], dtype=float)
    smoothed = np.array(state["data"][state["labels"].index(run)], dtype=float)
    have = ~np.isnan(raw)
    assert have.sum() > 100
    np.testing.assert_allclose(smoothed[have], ema(raw[have], 0.8), rtol=1e-9)


@pytest.mark.parametrize("page", PAGES)
def test_bands_are_the_aggregate_of_each_group(browser, sweep, page):
    _open(browser, sweep, page, "bands")
    browser.execute_script("""
        const s = document.getElementById('smoothing'); s.value = '0'; s.dispatchEvent(new Event('input'));""")
    time.sleep(0.2)
    state = _lines(browser)
    assert state["bandView"], state["labels"]
    table = aggregate(sweep["logdir"], SEED_RUNS, tags="^loss$")
    steps = np.array(state["data"][0])
    for lr in RATES:
        group = "lr_%s" % lr
        mean = table[table.group == group].set_index("step")["mean"]
        k = state["labels"].index("%s (%d runs)" % (group, SEEDS))   # the centre line (mean by default)
        drawn = np.array(state["data"][k], dtype=float)
        np.testing.assert_allclose(drawn, mean.reindex(steps).to_numpy(), rtol=1e-6)


@pytest.mark.parametrize("page", PAGES)
def test_hparams_table_ranks_runs_by_a_metrics_best_value(browser, sweep, page):
    from selenium.webdriver.common.by import By
    _open(browser, sweep, page)
    rows = "return Array.from(document.querySelectorAll('.hp-table tbody tr')).map(r => r.cells[0].textContent)"
    header = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".hp-table th")]
    assert any("loss" in h for h in header), header
    from tfevents.summaries import load_logdir
    loaded = load_logdir(sweep["logdir"], kinds=("scalars",))
    best = {run: float(np.nanmin(loaded.scalars[(run, "loss")].value)) for run in _runs()}
    browser.execute_script("""const s = document.querySelector('select.hp-stat[data-metric="loss"]');
        s.value = 'min'; s.dispatchEvent(new Event('change'));""")
    shown = [r for r in browser.execute_script(rows) if r]
    assert shown == sorted(best, key=best.get), (shown, best)
    assert console_messages(browser) == []


def test_the_served_query_box_chooses_runs_as_the_run_table_does(browser, sweep):
    """The served page's query box (served.js queryBox): the runs the server's run query chooses are the ones the
    list and the loss chart keep (the same set as a pandas mask on ``runs_table``); a bad query shows the server's
    caret line and chooses nothing new; clearing it brings every run back."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from tfevents.summaries.runs.table import runs_table
    table = runs_table(sweep["logdir"])
    want = sorted(table["name"][(table["lr"] < 0.05) & (table["loss.min"] < 0.3)])
    assert 0 < len(want) < len(_runs())
    _open(browser, sweep, "served")
    box = browser.find_element(By.ID, "run-where")
    box.send_keys('lr < 0.05 and loss.min < 0.3', Keys.ENTER)
    deadline = time.monotonic() + 15
    while sorted(browser.execute_script("return window.__tfe.runList.order()")) != want:
        assert time.monotonic() < deadline, browser.execute_script("return window.__tfe.runList.order()")
        time.sleep(0.05)
    assert set(_lines(browser)["labels"]) & set(_runs()) == set(want)
    box.clear()
    box.send_keys("lr <", Keys.ENTER)
    while not browser.find_element(By.ID, "run-where-error").is_displayed():
        assert time.monotonic() < deadline, "no error shown for a bad query"
        time.sleep(0.05)
    error = browser.find_element(By.ID, "run-where-error").text
    assert "position 4" in error and "^" in error
    assert sorted(browser.execute_script("return window.__tfe.runList.order()")) == want   # the last good choice
    box.send_keys(Keys.BACKSPACE * 4, Keys.ENTER)
    while sorted(browser.execute_script("return window.__tfe.runList.order()")) != sorted(_runs()):
        assert time.monotonic() < deadline, "clearing the query did not bring the runs back"
        time.sleep(0.05)
    assert not browser.find_element(By.ID, "run-where-error").is_displayed()
