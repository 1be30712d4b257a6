"""The interactive report on any scalar tag as x (``report --x samples_seen``, the page's tag selector) and on log x
(``--logx``, the page's switch), in the session's headless Chromium: the chart's x values and its CSV are the
logged ``samples_seen``, interpolated by the page exactly as ``x_axis.x_at_steps``; the dropped points are counted
under the chart; a decade of log x spans equal widths."""
import csv
import io

import numpy as np
import pytest

from _batch_runs import BATCHES, SAMPLES, write_batch_runs, write_sparse_run
from _browser import browser, browser_session, console_messages, open_file  # noqa: F401

from tfevents.summaries import load_logdir
from tfevents.summaries.reader.x_axis import x_at_steps
from tfevents.viewer.cli import main

CHART = """
const c = window.__tfe.charts.find(c => c.title === arguments[0]);
return {labels: c.u.series.map(s => s.label || null), data: c.u.data.map(a => Array.from(a)),
        distr: c.u.scales.x.distr, note: c.note.textContent,
        pos: arguments[1].map(v => c.u.valToPos(v, "x")), min: c.u.scales.x.min, max: c.u.scales.x.max};
"""


@pytest.fixture(scope="module")
def x_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("x_report")
    write_batch_runs(root / "logs")
    write_sparse_run(root / "logs")
    out = str(root / "report.html")
    assert main(["report", str(root / "logs"), "-o", out, "--tags", "^loss$", "--x", "samples_seen"]) == 0
    return str(root / "logs"), out


def _open(driver, path):
    console_messages(driver)
    open_file(driver, path)
    if driver.execute_script("const n = sessionStorage.length; sessionStorage.clear(); return n"):
        open_file(driver, path)


def _by_run(state):
    """``{label: [(x, y)]}`` of the chart's smoothed lines (non-null points)."""
    xs = state["data"][0]
    return {label: [(x, y) for x, y in zip(xs, ys) if y is not None]
            for label, ys in zip(state["labels"][1:], state["data"][1:]) if not label.endswith("(raw)")}


def test_report_x_samples_seen_chart_and_csv(browser, x_report):
    logdir, report = x_report
    _open(browser, report)
    state = browser.execute_script(CHART, "loss", [])
    lines = _by_run(state)
    scalars = load_logdir(logdir).scalars
    for run, bs in BATCHES.items():
        assert [x for x, _ in lines[run]] == scalars[(run, "samples_seen")].value.tolist()
        assert lines[run][-1][0] == SAMPLES                              # both batch sizes end at 3200 samples
    assert [x for x, _ in lines["sparse"]] == (8.0 * np.arange(5, 46)).tolist()
    assert state["note"] == "19 points without samples_seen dropped"
    # the page's interpolation is x_at_steps', to the last bit
    xs = browser.execute_script("""const s = window.__tfe.charts.find(c => c.title === 'loss').shown
        .find(s => window.__tfe.data.runs[s.run].name === 'sparse'); return Array.from(window.__tfe.xFromTag(s, 'samples_seen'))""")
    sp = scalars[("sparse", "samples_seen")]
    want = x_at_steps(scalars[("sparse", "loss")].step, sp.step, sp.value)
    np.testing.assert_array_equal(np.array([np.nan if v is None else v for v in xs]), want)
    text = browser.execute_script("return window.__tfe.chartCsv(window.__tfe.charts.find(c => c.title === 'loss'))")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == ["run", "tag", "step", "wall_time", "value", "x"]
    for run, bs in BATCHES.items():
        assert [(int(r["step"]) * bs, float(r["x"])) for r in rows if r["run"] == run] == \
               [(float(v), float(v)) for v in scalars[(run, "samples_seen")].value]
    assert len([r for r in rows if r["run"] == "sparse"]) == 41
    assert console_messages(browser) == []


def test_report_tag_selector_and_log_x(browser, x_report, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    logdir, _ = x_report
    out = str(tmp_path / "steps.html")
    assert main(["report", logdir, "-o", out, "--runs", "^bs"]) == 0  # step axis; every tag embedded
    _open(browser, out)
    assert browser.execute_script(CHART, "loss", [])["max"] <= 100   # steps
    Select(browser.find_element(By.ID, "x-tag")).select_by_value("samples_seen")
    state = browser.execute_script(CHART, "loss", [])
    assert {label: pts[-1][0] for label, pts in _by_run(state).items()} == {"bs32": SAMPLES, "bs64": SAMPLES}
    browser.find_element(By.ID, "log-x").click()
    state = browser.execute_script(CHART, "loss", [100, 1000, 10, 300])
    assert state["distr"] == 3                                       # uPlot's log distribution
    p100, p1000, p10, p300 = state["pos"]
    assert abs((p1000 - p100) - (p100 - p10)) < 1e-6 * (p1000 - p100) and p100 < p300 < p1000
    assert all(x > 0 for x in state["data"][0])                      # x = 0 (step 0) is not drawn on log x
    browser.find_element(By.CSS_SELECTOR, 'input[name="x-axis"][value="step"]').click()
    assert browser.execute_script("return window.__tfe.state.x") == "step"
    assert Select(browser.find_element(By.ID, "x-tag")).first_selected_option.get_attribute("value") == ""
    assert console_messages(browser) == []


def test_show_takes_a_tag_as_x_and_log_x(x_report):
    import json
    import re
    from tfevents.viewer.notebook import report_view
    logdir, _ = x_report
    page = report_view(logdir, tags="^loss$", x="samples_seen", logx=True).page
    doc = json.loads(re.search(r'id="tfe-data">(.*?)</script>', page).group(1))
    assert doc["options"]["x"] == "samples_seen" and doc["options"]["logx"] is True
    assert doc["scalars"]["x_tags"] == ["loss", "samples_seen"]
    assert sorted(doc["runs"][s["run"]]["name"] for s in doc["scalars"]["x_only"]) == ["bs32", "bs64", "sparse"]
    with pytest.raises(ValueError, match="or a scalar tag of the runs"):
        report_view(logdir, x="tokens")


def test_report_bands_on_samples_seen(browser, x_report, tmp_path):
    from selenium.webdriver.common.by import By
    from tfevents.summaries import aggregate
    logdir, _ = x_report
    out = str(tmp_path / "bands.html")
    assert main(["report", logdir, "-o", out, "--tags", "^loss$", "--x", "samples_seen", "--aggregate", ".*",
                 "--band", "minmax"]) == 0          # one group of the three runs
    _open(browser, out)
    want = aggregate(logdir, ".*", "^loss$", stats=("mean", "min", "max"), x="samples_seen")
    state = browser.execute_script(CHART, "loss", [])
    assert state["data"][0] == want["x"].tolist()   # the union of the runs' x values (few rows: all drawn)
    assert state["note"] == "19 points without samples_seen dropped"
    text = browser.execute_script("return window.__tfe.chartCsv(window.__tfe.charts.find(c => c.title === 'loss'))")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0])[:3] == ["group", "tag", "x"] and [float(r["x"]) for r in rows] == want["x"].tolist()
    browser.find_element(By.CSS_SELECTOR, 'input[name="x-axis"][value="step"]').click()
    state = browser.execute_script(CHART, "loss", [])      # bands aligned on samples_seen: the runs on steps
    assert "bs32" in state["labels"] and state["max"] <= 100
    assert console_messages(browser) == []
