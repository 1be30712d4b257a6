"""`tfevents report --aggregate REGEX`: groups of runs drawn as bands in the interactive report, in real headless
Chromium (selenium).

Two groups of 5 seeded runs (tensorboardX) and the ranks of a real 2-process torch.distributed job. Checked as
drawn: the chart's data are ``tfevents.summaries.aggregate``'s numbers (torch's own all_reduce for the ranks), the
pixels of each band's fill lie in its column between the min and max lines (and fill it), and the control on the
page switches to the individual runs (their lines, no fill) and back, and between the std and min–max bands.
"""
import os

import numpy as np
import pytest

import _distributed
from _browser import browser, browser_session, console_messages, open_file  # noqa: F401
from _report_page import page_document
from tfevents.summaries import aggregate, fold_ranks, read_scalars
from tfevents.viewer.cli import main
from tfevents.viewer.colors import run_colors

SEEDS, STEPS = 5, np.arange(0, 100, 2)
OFFSETS = np.array([0.0, 0.4, 1.0, 2.2, 4.0])
GROUPS = {"a": 0.0, "b": 10.0}            # group -> base value (the two groups' bands never overlap)
SEED_RUNS = r"/seed_\d+$"
PROBE_STEPS = [14, 46, 86]                 # between the x grid lines (0, 20, 40, ...)


def values_of(group, seed):
    return (GROUPS[group] + STEPS / 50 + OFFSETS[seed] * (1 + STEPS / 100)).astype(np.float32)


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    """Groups a and b of 5 seeds each (tensorboardX), and their report with min–max bands, unsmoothed."""
    from tensorboardX import SummaryWriter
    root = tmp_path_factory.mktemp("seeds")
    for group in GROUPS:
        for seed in range(SEEDS):
            with SummaryWriter(str(root / "logs" / group / ("seed_%d" % seed))) as w:
                for step, value in zip(STEPS, values_of(group, seed)):
                    w.add_scalar("loss", float(value), int(step))
    out = str(root / "report.html")
    assert main(["report", str(root / "logs"), "-o", out, "--aggregate", SEED_RUNS, "--band", "minmax",
                 "--smoothing", "0"]) == 0
    return str(root / "logs"), out


def _open(driver, path):
    """Load a report afresh: controls at their defaults (the page keeps them in sessionStorage)."""
    open_file(driver, path)
    if driver.execute_script("const n = sessionStorage.length; sessionStorage.clear(); return n"):
        open_file(driver, path)


CHART = """
const c = window.__tfe.charts.find(c => c.title === arguments[0]);
return {labels: c.u.series.map(s => s.label || null), data: c.u.data.map(a => Array.from(a, v => v === null ? null : +v)),
        groups: (c.shownBands || []).map(b => b.group), bandView: !!c.bandView, alpha: window.__tfe.bandAlpha};
"""

COLUMNS = """
const c = window.__tfe.charts.find(c => c.title === arguments[0]), u = c.u, canvas = u.ctx.canvas, out = [];
for (const step of arguments[1]) {
  const x = Math.round(u.valToPos(step, "x", true)), i = Array.from(u.data[0]).indexOf(step), edges = [];
  for (let k = 1; k + 2 < u.data.length; k += 3)
    edges.push([u.valToPos(u.data[k + 1][i], "y", true), u.valToPos(u.data[k][i], "y", true)]);   // [upper, lower] px
  out.push({step, x, edges, column: Array.from(u.ctx.getImageData(x, 0, 1, canvas.height).data)});
}
return out;
"""

FILL_PIXELS = """
const c = window.__tfe.charts.find(c => c.title === arguments[0]), ctx = c.u.ctx, canvas = ctx.canvas;
const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data, want = arguments[1];
let n = 0;
const onWhite = (v, a) => v * a / 255 + 255 * (1 - a / 255);   // the canvas is transparent over the white card
for (let i = 0; i < px.length; i += 4) {
  const a = px[i + 3];
  if (Math.abs(onWhite(px[i], a) - want[0]) + Math.abs(onWhite(px[i + 1], a) - want[1])
      + Math.abs(onWhite(px[i + 2], a) - want[2]) <= 12) n++;
}
return n;
"""


def _on_white(rgba):
    """Canvas pixels (RGBA bytes; the plot's canvas is transparent, the card white) as seen on the page."""
    px = np.array(rgba, float).reshape(-1, 4)
    return px[:, :3] * px[:, 3:] / 255 + 255 * (1 - px[:, 3:] / 255)


def _fill_rgb(color, alpha):
    """A band's fill on the white plot: ``alpha * color + (1 - alpha) * white``."""
    rgb = np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)], float)
    return alpha * rgb + (1 - alpha) * 255


def _bands_drawn_between_edges(driver, title, groups, alpha, tol=12):
    """For each probed step and group: the fill's pixels of that column lie between the group's upper and lower
    lines (2 px slack for antialiasing), reach both, and cover most of the span (lines and grid cross it)."""
    colors = run_colors(groups)
    for probe in driver.execute_script(COLUMNS, title, PROBE_STEPS):
        column = _on_white(probe["column"])
        for group, (top, bottom) in zip(groups, probe["edges"]):
            rows = np.flatnonzero(np.abs(column - _fill_rgb(colors[group], alpha)).sum(axis=1) <= tol)
            where = "group %s at step %d (lines at %.1f, %.1f px)" % (group, probe["step"], top, bottom)
            assert len(rows) > 0.8 * (bottom - top), "the band does not fill its column: " + where
            assert rows.min() >= top - 2 and rows.max() <= bottom + 2, (rows.min(), rows.max(), where)
            assert rows.min() <= top + 3 and rows.max() >= bottom - 3, (rows.min(), rows.max(), where)


def _series(df, group, stat):
    return df[df.group == group][stat].to_numpy()


def test_band_fill_lies_between_the_min_and_max_lines(browser, seeds):
    logdir, report = seeds
    _open(browser, report)
    assert browser.execute_script("return document.querySelector('input[name=scalar-view]:checked').value") == "bands"
    state = browser.execute_script(CHART, "loss")
    assert state["bandView"] and state["groups"] == ["a", "b"]
    assert state["labels"][1:] == ["a (5 runs) lower", "a (5 runs) upper", "a (5 runs)",
                                   "b (5 runs) lower", "b (5 runs) upper", "b (5 runs)"]
    df = aggregate(logdir, by=SEED_RUNS)
    np.testing.assert_array_equal(state["data"][0], STEPS)
    for k, group in enumerate(GROUPS):
        runs = np.stack([values_of(group, s) for s in range(SEEDS)]).astype(np.float64)
        lower, upper, center = (np.array(state["data"][1 + 3 * k + j], float) for j in range(3))
        np.testing.assert_array_equal(lower, _series(df, group, "min"))
        np.testing.assert_array_equal(upper, _series(df, group, "max"))
        np.testing.assert_allclose(center, _series(df, group, "mean"), rtol=1e-12)
        np.testing.assert_array_equal(lower, runs.min(0))                  # ... which are numpy's over the seeds
        np.testing.assert_allclose(center, runs.mean(0), rtol=1e-12)
    _bands_drawn_between_edges(browser, "loss", list(GROUPS), state["alpha"])
    assert not [m for m in console_messages(browser) if m["level"] == "SEVERE"]


def test_switch_shows_the_individual_runs_and_back(browser, seeds):
    _, report = seeds
    _open(browser, report)
    alpha = browser.execute_script("return window.__tfe.bandAlpha")
    fill = [list(_fill_rgb(run_colors(GROUPS)[g], alpha)) for g in GROUPS]
    before = [browser.execute_script(FILL_PIXELS, "loss", f) for f in fill]
    assert min(before) > 2000, before
    browser.find_element("css selector", "input[name=scalar-view][value=runs]").click()
    state = browser.execute_script(CHART, "loss")
    runs = ["%s/seed_%d" % (g, s) for g in GROUPS for s in range(SEEDS)]
    assert not state["bandView"]
    assert state["labels"][2::2] == runs                                   # each run's line (raw ones between)
    for k, run in enumerate(runs):
        np.testing.assert_array_equal(state["data"][2 + 2 * k], values_of(run[0], int(run[-1])))
    after = [browser.execute_script(FILL_PIXELS, "loss", f) for f in fill]
    assert max(after) < min(before) / 50, (before, after)                  # no band left
    browser.find_element("css selector", "input[name=scalar-view][value=bands]").click()
    assert browser.execute_script(CHART, "loss")["groups"] == ["a", "b"]


def test_std_band_median_line_run_toggles_and_csv(browser, seeds):
    logdir, report = seeds
    _open(browser, report)
    df = aggregate(logdir, by=SEED_RUNS)
    browser.execute_script("""
        const pick = (id, v) => { const s = document.getElementById(id); s.value = v; s.dispatchEvent(new Event('change')); };
        pick('band-kind', 'std'); pick('band-center', 'median');""")
    state = browser.execute_script(CHART, "loss")
    for k, group in enumerate(GROUPS):
        mean, std = _series(df, group, "mean"), _series(df, group, "std")
        np.testing.assert_allclose(state["data"][1 + 3 * k], mean - std, rtol=1e-9)
        np.testing.assert_allclose(state["data"][2 + 3 * k], mean + std, rtol=1e-9)
        np.testing.assert_allclose(state["data"][3 + 3 * k], _series(df, group, "median"), rtol=1e-12)
    _bands_drawn_between_edges(browser, "loss", list(GROUPS), state["alpha"])
    csv = browser.execute_script("return window.__tfe.chartCsv(window.__tfe.charts[0])").splitlines()
    assert csv[0] == "group,tag,step,mean,std,min,max,median,count" and len(csv) == 1 + len(df)
    row = dict(zip(csv[0].split(","), csv[1 + len(STEPS) + 3].split(",")))     # group b, the fourth step
    expect = df[df.group == "b"].iloc[3]
    assert row["group"] == "b" and int(row["step"]) == expect["step"] and int(row["count"]) == SEEDS
    assert float(row["mean"]) == pytest.approx(expect["mean"], rel=1e-12)
    for seed in range(SEEDS):                              # untick group b's runs: its band goes, a's stays
        browser.find_element("css selector", ".run-toggle[value='b/seed_%d']" % seed).click()
    assert browser.execute_script(CHART, "loss")["groups"] == ["a"]


def test_ranks_of_a_torch_distributed_job_fold_into_mean_and_min_max_band(browser, ranks_job, tmp_path):
    """``--aggregate '/rank_\\d+$'`` on a job's ``all/rank_<N>`` runs: the mean line and min–max band are torch's
    all_reduce (SUM / world, MIN, MAX) and ``fold_ranks``' series; ``default`` (rank 0 only) is a group of one."""
    out = str(tmp_path / "ranks.html")
    assert main(["report", ranks_job, "-o", out, "--aggregate", r"/rank_\d+$", "--band", "minmax",
                 "--smoothing", "0"]) == 0
    _open(browser, out)
    state = browser.execute_script(CHART, "loss")
    assert state["groups"] == ["all", "default"]
    assert state["labels"][1:4] == ["all (2 runs) lower", "all (2 runs) upper", "all (2 runs)"]
    np.testing.assert_array_equal(state["data"][0], _distributed.STEPS)
    torch_mean, torch_min, torch_max = np.load(os.path.join(ranks_job, "reduced.npy"))
    folded = fold_ranks(read_scalars(os.path.join(ranks_job, "all")))
    for j, (from_torch, name) in enumerate(((torch_min, "min"), (torch_max, "max"), (torch_mean, "mean"))):
        np.testing.assert_array_equal(state["data"][1 + j], from_torch)
        np.testing.assert_array_equal(state["data"][1 + j], folded[("ranks_" + name, "loss")].value)
    np.testing.assert_array_equal(state["data"][6], _distributed.values_of(0))    # default: rank 0's own line
    colors = run_colors(["all", "default"])
    probe = browser.execute_script(COLUMNS, "loss", [int(_distributed.STEPS[3])])[0]
    column = _on_white(probe["column"])
    top, bottom = probe["edges"][0]
    rows = np.flatnonzero(np.abs(column - _fill_rgb(colors["all"], state["alpha"])).sum(axis=1) <= 12)
    assert bottom - top > 10 and len(rows) > 0.6 * (bottom - top)
    assert rows.min() >= top - 2 and rows.max() <= bottom + 2


def test_show_takes_aggregate_and_bad_options_are_refused(seeds, tmp_path, capsys):
    from tfevents.viewer.notebook import report_view
    logdir, _ = seeds
    doc, array = page_document(report_view(logdir, aggregate=SEED_RUNS, center="median").page)
    assert doc["options"]["view"] == "bands" and doc["options"]["center"] == "median"
    (entry,) = [a for a in doc["scalars"]["aggregates"] if a["group"] == "a"]
    df = aggregate(logdir, by=SEED_RUNS)
    np.testing.assert_allclose(array(entry["median"]), _series(df, "a", "median"), rtol=1e-7)
    doc, _ = page_document(report_view(logdir).page)
    assert doc["options"]["view"] == "runs" and doc["scalars"]["aggregates"] == []
    out = str(tmp_path / "r.html")
    assert main(["report", logdir, "-o", out, "--aggregate", "(["]) == 2
    assert "invalid aggregate regex" in capsys.readouterr().err
    assert main(["report", logdir, "-o", out, "--static", "--aggregate", SEED_RUNS]) == 2
    assert "--aggregate draws bands in the interactive report" in capsys.readouterr().err
    with pytest.raises(ValueError, match="band must be one of"):
        report_view(logdir, aggregate=SEED_RUNS, band="iqr")
    with pytest.raises(TypeError, match="aggregate is a regex"):
        report_view(logdir, aggregate=["lr"])
    assert not os.path.exists(out)
