"""The interactive report's line charts, in the session's headless Chromium: ``linePaths`` (scalars.js, which
works out each x pixel once per draw for all the series) draws the very pixels uPlot's own linear builder draws,
for runs at the same steps, with a NaN (a gap it spans) and at other steps, zoomed in or not; a chart of more than
``THIN_ABOVE`` runs draws its smoothed lines 1 px wide, a chart of fewer 1.5 px."""
import numpy as np
import pytest

from _browser import browser, browser_session, console_messages, open_file  # noqa: F401

from tfevents.summaries import SummaryWriter
from tfevents.viewer.cli import main

RUNS = 24   # more than scalars.js THIN_ABOVE (20)

SAME_PIXELS = """
const [title, zoom, done] = arguments, tfe = window.__tfe;
const c = tfe.charts.find(c => c.title === title), u = c.u;
const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
const image = () => u.ctx.getImageData(0, 0, u.ctx.canvas.width, u.ctx.canvas.height).data;
(async () => {
  const x = u.data[0];
  if (zoom) u.setScale("x", {min: x[Math.floor(x.length / 4)], max: x[Math.floor(x.length / 2)]});
  u.redraw(true, false); await frame();
  const ours = u.series.slice(1).every(s => s.paths === tfe.linePaths), mine = image();
  for (const s of u.series.slice(1)) s.paths = uPlot.paths.linear();
  u.redraw(true, false); await frame();
  const theirs = image();
  let differ = 0, drawn = 0;
  for (let i = 0; i < mine.length; i += 4) {
    if (mine[i] !== theirs[i] || mine[i + 1] !== theirs[i + 1] || mine[i + 2] !== theirs[i + 2] ||
        mine[i + 3] !== theirs[i + 3]) differ++;
    if (theirs[i + 3] && (theirs[i] !== theirs[i + 1] || theirs[i + 1] !== theirs[i + 2])) drawn++;   // coloured
  }
  for (const s of u.series.slice(1)) s.paths = tfe.linePaths;
  u.redraw(true, false); await frame();
  done({ours, differ, drawn, widths: Array.from(new Set(u.series.slice(1).filter((s, k) => k % 2).map(s => s.width)))});
})().catch(e => done({error: String(e)}));
"""


@pytest.fixture(scope="module")
def sweep_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("lines")
    rng = np.random.default_rng(7)
    for run in range(RUNS):
        with SummaryWriter(str(root / "logs" / ("seed%02d" % run))) as w:
            for step in range(0, 1500, 3):   # 500 points: joined one by one, as uPlot joins them
                w.add_scalar("loss", float(rng.normal()) + 0.01 * run * step ** 0.5, step)
                w.add_scalar("acc", float("nan") if run == 2 and step in (30, 33) else float(rng.random()), step)
                w.add_scalar("lag", float(rng.random()), step + run)   # each run at its own steps
    out = str(root / "report.html")
    assert main(["report", str(root / "logs"), "-o", out]) == 0
    return out


@pytest.mark.parametrize("zoom", [False, True])
def test_line_paths_draw_what_uplots_linear_builder_draws(browser, sweep_report, zoom):
    console_messages(browser)
    open_file(browser, sweep_report)
    browser.set_script_timeout(60)
    for title in ("loss", "acc", "lag"):
        got = browser.execute_async_script(SAME_PIXELS, title, zoom)
        assert "error" not in got, got
        assert got["ours"], title
        assert got["drawn"] > 2000, (title, got)   # the lines are there to compare
        assert got["differ"] == 0, (title, got)
        assert got["widths"] == [1], (title, got)   # 24 runs: thin smoothed lines
    # (Chromium's hint that a canvas read back often could say so: the test's reading, not the page's)
    assert [m for m in console_messages(browser) if "getImageData" not in m["message"]] == []


def test_a_chart_of_few_runs_draws_its_smoothed_lines_wider(browser, sweep_report):
    open_file(browser, sweep_report)
    widths = browser.execute_script("""
const input = document.getElementById("run-filter");
input.value = "seed0[0-2]"; input.dispatchEvent(new Event("input", {bubbles: true}));
const u = window.__tfe.charts.find(c => c.title === "loss").u;
return [(u.series.length - 1) / 2, u.series.slice(1).map(s => s.width)];""")
    assert widths == [3, [1, 1.5] * 3]
