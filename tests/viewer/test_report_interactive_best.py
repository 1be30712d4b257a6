"""The interactive report's HParams table ranked by each metric's best value, in real headless Chromium (selenium).

Four trials log ``val/loss`` and ``val/acc`` over steps and their HParams (the metrics' last values), so that the
last, minimum and maximum of each series rank the runs differently. A control per metric column switches what the
column shows and ranks by; the cells, their steps and the row order are checked against ``Logdir.summary()``.
"""
import numpy as np
import pytest

from _browser import browser, browser_session, console_messages, open_file  # noqa: F401
from tfevents.summaries import SummaryWriter, load_logdir
from tfevents.viewer.cli import main

LOSS = {"r0": [5, 4, 3, 2, 1.5, 1.25], "r1": [4, 2, 0.5, 1, 2, 3], "r2": [6, 3, 2, 1.75, 1.5, 1.0],
        "r3": [3, 3.5, 2.5, 0.75, 2.25, 2.0]}


@pytest.fixture(scope="module")
def trials(tmp_path_factory):
    root = tmp_path_factory.mktemp("best")
    for i, (run, losses) in enumerate(LOSS.items()):
        with SummaryWriter(str(root / "logs" / run)) as w:
            for k, loss in enumerate(losses):
                w.add_scalar("val/loss", loss, 10 * k)
                w.add_scalar("val/acc", 1 - loss / 10 + 0.01 * i * k, 10 * k)
            w.add_hparams({"lr": 0.1 * (i + 1)}, {"val/loss": losses[-1], "val/acc": 1 - losses[-1] / 10 + 0.05 * i},
                          global_step=10 * len(losses))          # the final metrics, a step after the series
    out = str(root / "report.html")
    assert main(["report", str(root / "logs"), "-o", out]) == 0
    return str(root / "logs"), out


TABLE = """
const table = document.querySelector('.hp-table'), heads = Array.from(table.tHead.rows[0].cells);
return {heads: heads.map(th => th.firstChild.textContent.replace(/ [▲▼]$/, '')),
        rows: Array.from(table.tBodies[0].rows).map(tr => ({run: tr.dataset.hpRun,
                                                           cells: Array.from(tr.cells).map(td => [td.textContent, td.title])}))};
"""


def _table(driver):
    state = driver.execute_script(TABLE)
    return state["heads"], state["rows"]


def _choose(driver, metric, stat):
    driver.execute_script("""const s = document.querySelector('select.hp-stat[data-metric="' + arguments[0] + '"]');
                             s.value = arguments[1]; s.dispatchEvent(new Event('change'));""", metric, stat)


def _column(heads, rows, metric):
    k = heads.index(metric)
    return {r["run"]: (float(r["cells"][k][0]), r["cells"][k][1]) for r in rows}


def test_hparams_table_ranks_by_each_metrics_best_value(browser, trials):
    logdir, report = trials
    summary = load_logdir(logdir).summary().set_index(["run", "tag"])
    open_file(browser, report)
    browser.execute_script("sessionStorage.clear()")
    open_file(browser, report)
    heads, rows = _table(browser)
    assert heads == ["run", "lr", "val/loss", "val/acc"]
    for metric in ("val/loss", "val/acc"):                       # the default: the last value, as TensorBoard
        for run, (value, title) in _column(heads, rows, metric).items():
            assert value == pytest.approx(summary.loc[(run, metric), "last"], rel=1e-6)
            assert title == "step %d" % summary.loc[(run, metric), "last_value_step"]
    _choose(browser, "val/loss", "min")
    heads, rows = _table(browser)
    shown = _column(heads, rows, "val/loss")
    best = summary.xs("val/loss", level="tag").sort_values("min")
    assert [r["run"] for r in rows] == list(best.index)         # best (lowest) first
    for run, (value, title) in shown.items():
        assert value == pytest.approx(best.loc[run, "min"], rel=1e-6)
        assert title == "step %d" % best.loc[run, "min_step"]
    assert [r["run"] for r in rows] != list(summary.xs("val/loss", level="tag").sort_values("last").index)
    _choose(browser, "val/acc", "max")
    heads, rows = _table(browser)
    acc = summary.xs("val/acc", level="tag").sort_values("max", ascending=False)
    assert [r["run"] for r in rows] == list(acc.index)            # highest first
    for run, (value, title) in _column(heads, rows, "val/acc").items():
        assert value == pytest.approx(acc.loc[run, "max"], rel=1e-6)
        assert title == "step %d" % acc.loc[run, "max_step"]
    for run, (value, _) in _column(heads, rows, "val/loss").items():   # the other column keeps its own choice
        assert value == pytest.approx(best.loc[run, "min"], rel=1e-6)
    lines = browser.execute_script("return Array.from(document.querySelectorAll('.hp-line')).length")
    assert lines == len(LOSS)
    open_file(browser, report)                                   # the choice survives a reload (sessionStorage)
    heads, rows = _table(browser)
    assert _column(heads, rows, "val/acc")["r0"][0] == pytest.approx(acc.loc["r0", "max"], rel=1e-6)
    _choose(browser, "val/acc", "last")
    heads, rows = _table(browser)
    for run, (value, _) in _column(heads, rows, "val/acc").items():
        assert value == pytest.approx(summary.loc[(run, "val/acc"), "last"], rel=1e-6)
    assert not [m for m in console_messages(browser) if m["level"] == "SEVERE"]
