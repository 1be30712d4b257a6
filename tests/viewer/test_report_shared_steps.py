"""The interactive report's charts of runs logged at the same steps (a sweep), in the session's headless Chromium:
``chartData`` hands uPlot the shared x and each run's own arrays, uncopied, and they hold the numbers its general
path (aligning every series on the union of x values) gives; a chart with a NaN, or runs at other steps, takes the
general path."""
import numpy as np
import pytest

from _browser import browser, browser_session, console_messages, open_file  # noqa: F401

from tfevents.summaries import SummaryWriter
from tfevents.viewer.cli import main

BOTH_PATHS = """
const c = window.__tfe.charts.find(c => c.title === arguments[0]);
const x = c.u.data[0], shared = window.__tfe.chartData(c, null);
const general = window.__tfe.chartData(c, [x[0], x[x.length - 1]]);   // a range: the general path, whatever
return {uncopied: shared[1] === c.shown[0].value, typed: !Array.isArray(shared[1]),
        shared: shared.map(a => Array.from(a)), general: general.map(a => Array.from(a))};
"""


@pytest.fixture(scope="module")
def sweep_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    rng = np.random.default_rng(4)
    for run in range(4):
        with SummaryWriter(str(root / "logs" / ("lr%d" % run))) as w:
            for step in range(0, 300, 3):
                w.add_scalar("loss", float(rng.normal()) + run, step)
                w.add_scalar("acc", float("nan") if run == 2 and step == 30 else float(rng.random()), step)
                w.add_scalar("lag", float(rng.random()), step + run)   # each run at its own steps
    out = str(root / "report.html")
    assert main(["report", str(root / "logs"), "-o", out]) == 0
    return out


def test_runs_at_the_same_steps_are_drawn_from_their_own_arrays(browser, sweep_report):
    console_messages(browser)
    open_file(browser, sweep_report)
    loss = browser.execute_script(BOTH_PATHS, "loss")
    assert loss["uncopied"] and loss["typed"]
    assert len(loss["shared"]) == 1 + 2 * 4 and len(loss["shared"][0]) == 100
    assert loss["shared"] == loss["general"]   # x, then each run's raw and smoothed values: the same numbers
    for title in ("acc", "lag"):   # a NaN (drawn as a gap), or other steps: aligned by the general path
        other = browser.execute_script(BOTH_PATHS, title)
        assert not other["typed"] and other["shared"] == other["general"]
    assert console_messages(browser) == []
