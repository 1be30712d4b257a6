"""The sidebar's run list (``viewer/reports/interactive/runlist.js``) over 10,000 runs, in headless Chromium.

The list is virtualized (a few dozen rows in the DOM whatever the number of runs; scrolling renders the rows in
view), the regex filter leaves exactly the matching runs, the sort control orders the list as numpy's stable
argsort orders the runs' hparam or scalar statistic (runs without one last, in both directions), a run ticked off
while scrolled out of view leaves its chart, and names show as text. The document's per-run ``hparams`` and
``stats`` (``[last, min, max]``, NaN left out, null when not finite) are checked in Python, the report's
(``collect.py``) against the served dashboard's (``dashboard/page.py``).
"""
import re

import numpy as np
import pytest

from _browser import browser, browser_session, console_messages, open_file  # noqa: F401
from _run_list_logdir import HOSTILE, N_RUNS, run_name as _name

TARGET = "run_09990"    # near the end by name: out of view until the list scrolls there
MAX_ROWS = 100


@pytest.fixture(scope="module")
def many_runs(run_list_logdir):
    """10,000 tiny runs and their report (tests/_run_list_logdir.py, written in the session's background): (report
    path, names by name, {name: lr}, {name: loss min})."""
    report, names, lrs, loss_min = run_list_logdir
    assert names[0] == HOSTILE[0] and names[-1] == HOSTILE[1]
    return report, names, lrs, loss_min


def _argsorted(names, values, desc=False):
    """The names as numpy's stable argsort orders their values (NaN, i.e. missing, last either way)."""
    x = np.array([values.get(n, np.nan) for n in names])
    return [names[k] for k in np.argsort(-x if desc else x, kind="stable")]


ROWS = """return Array.from(document.querySelectorAll('.run-list [data-run-row]'))
  .map(r => [r.querySelector('span').textContent, r.querySelector('.run-toggle').checked,
             window.__tfe.data.runs[+r.dataset.runRow].name, r.getBoundingClientRect().top]);"""


def _rows(browser):
    """The rendered rows top to bottom: (shown name, ticked); each row's text is its run's name."""
    rows = sorted(browser.execute_script(ROWS), key=lambda r: r[3])
    assert all(text == name for text, _, name, _ in rows)
    return [(text, ticked) for text, ticked, _, _ in rows]


def _scroll(browser, top):
    """Scroll the list as a user does (the scroll event renders the rows now in view); returns the rows once
    the first one is the row at ``top``."""
    from selenium.webdriver.support.ui import WebDriverWait
    browser.execute_script("document.querySelector('.run-list').scrollTop = arguments[0]", top)
    want = browser.execute_script("""const l = document.querySelector('.run-list'), h = window.__tfe.runList.rowHeight;
        return window.__tfe.runList.order()[Math.floor(l.scrollTop / h)];""")
    WebDriverWait(browser, 5).until(lambda d: any(name == want for name, _ in _rows(d)))
    return _rows(browser)


def _in_chart(browser, tag, run):
    """Is ``run`` one of the series the ``tag`` chart draws (its uPlot series' labels, as the report tests)."""
    return browser.execute_script("""const c = window.__tfe.charts.find(c => c.title === arguments[0]);
        return !!(c && c.u && !c.card.classList.contains('hidden') && c.u.series.some(s => s.label === arguments[1]));""",
                                  tag, run)


def _set(browser, element_id, value, event):
    browser.execute_script("const e = document.getElementById(arguments[0]); e.value = arguments[1];"
                           "e.dispatchEvent(new Event(arguments[2]))", element_id, value, event)


def test_ten_thousand_runs_list_filter_sort_and_toggle(browser, many_runs):
    from selenium.webdriver.common.by import By
    report, names, lrs, loss_min = many_runs
    open_file(browser, report, ready_timeout=60)

    # virtualized: a few dozen rows in the DOM, the first ones by name, every one ticked
    rows = _rows(browser)
    assert 10 <= len(rows) <= MAX_ROWS, len(rows)
    assert rows == [(n, True) for n in names[:len(rows)]]
    assert browser.execute_script("return document.querySelectorAll('.run-toggle').length") == len(rows)
    assert browser.execute_script("return window.__pwned === undefined")
    assert browser.execute_script("return document.querySelectorAll('.run-list img').length") == 0

    # scrolled to the bottom: the last runs, the last one (RTL marks, quotes) as its exact text
    rows = _scroll(browser, 10 ** 9)
    assert 10 <= len(rows) <= MAX_ROWS and rows[-1] == (names[-1], True)
    assert [n for n, _ in rows] == names[-len(rows):]

    # a run ticked off while out of view leaves the chart; its row keeps the state when scrolled away and back
    rows = _scroll(browser, 0)
    assert TARGET not in [n for n, _ in rows] and _in_chart(browser, "loss", TARGET)
    rows = _scroll(browser, names.index(TARGET) * 22 - 100)
    assert (TARGET, True) in rows
    browser.find_element(By.CSS_SELECTOR, '.run-toggle[value="%s"]' % TARGET).click()
    assert not _in_chart(browser, "loss", TARGET) and _in_chart(browser, "loss", "run_09991")
    assert browser.execute_script("return window.__tfe.state.hidden") == [TARGET]
    _scroll(browser, 0)
    assert (TARGET, False) in _scroll(browser, names.index(TARGET) * 22 - 100)
    browser.find_element(By.CSS_SELECTOR, '.run-toggle[value="%s"]' % TARGET).click()
    assert _in_chart(browser, "loss", TARGET) and browser.execute_script("return window.__tfe.state.hidden") == []

    # the filter leaves exactly the matching runs; "all" unticks every one of them, rendered or not
    pattern = r"_0012\d$|_09999$"
    _set(browser, "run-filter", pattern, "input")
    matching = [n for n in names if re.search(pattern, n)]
    assert browser.execute_script("return window.__tfe.runList.order()") == matching
    assert _rows(browser) == [(n, True) for n in matching]
    big = r"^run_0[0-4]"      # 5000 runs, most never rendered
    _set(browser, "run-filter", big, "input")
    browser.find_element(By.ID, "all-runs").click()
    hidden = browser.execute_script("return window.__tfe.state.hidden")
    assert sorted(hidden) == [n for n in names if re.search(big, n)]
    _set(browser, "run-filter", "", "input")
    assert not _in_chart(browser, "loss", "run_04990") and _in_chart(browser, "loss", "run_05000")
    browser.find_element(By.ID, "all-runs").click()
    assert browser.execute_script("return window.__tfe.state.hidden") == []
    assert len(browser.execute_script("return window.__tfe.runList.order()")) == len(names)

    # sorted by an hparam, then by loss's min descending: numpy's stable argsort, runs without the column last
    _set(browser, "run-sort", "hp:lr", "change")
    expected = _argsorted(names, lrs)
    assert browser.execute_script("return window.__tfe.runList.order()") == expected
    rows = _scroll(browser, 0)
    assert [n for n, _ in rows] == expected[:len(rows)]
    assert [n for n, _ in _scroll(browser, 10 ** 9)] == expected[-len(rows):]
    assert set(expected[len(lrs):]) == set(names) - set(lrs) and expected[-1] == names[-1]   # missing: last
    browser.find_element(By.ID, "run-sort-dir").click()
    _set(browser, "run-sort", "min:loss", "change")
    expected = _argsorted(names, loss_min, desc=True)
    assert browser.execute_script("return window.__tfe.runList.order()") == expected
    rows = _scroll(browser, 0)
    assert [n for n, _ in rows] == expected[:len(rows)]
    assert expected[0] == max(loss_min, key=loss_min.get)
    # the order is the list's only: the charts' series and the runs' colours are as before
    assert browser.execute_script("return window.__tfe.data.runs.map(r => r.name)") == names

    # the served page's poll (GET api/v1/runs) updates the stats the list sorts by
    browser.execute_script("""window.__tfe.updateRunStats({runs: [{run: 'run_00004', scalars: {loss: {last: 0.5,
        min: 7.5, max: "Infinity", points: 2}}}, {run: 'not a run', scalars: {}}]})""")
    assert browser.execute_script("return window.__tfe.runList.order()[0]") == "run_00004"
    assert browser.execute_script("return window.__tfe.data.runs[1 + 4].stats.loss") == [0.5, 7.5, None]
    assert [e for e in console_messages(browser) if e["level"] == "SEVERE"] == []


def test_the_documents_runs_carry_hparams_and_stats(tmp_path):
    """Each run's ``stats``: ``[last, min, max]`` per scalar tag, NaN left out, null when not finite or none; its
    ``hparams`` only when it logged some. The report's document and the served dashboard's agree."""
    from tfevents.summaries import SummaryWriter, load_logdir
    from tfevents.summaries.live.loader import LiveLogdir
    from tfevents.viewer.reports.interactive.collect import collect
    series = {"a": [1.0, np.nan, 3.0, 0.5], "b": [np.nan], "c": [np.inf, 2.0, -1.5]}
    for run, values in series.items():
        with SummaryWriter(str(tmp_path / run)) as w:
            for step, v in enumerate(values):
                w.add_scalar("loss", v, step)
            if run == "a":
                w.add_hparams({"lr": 0.1, "opt": "adam", "amsgrad": True}, {})
    report, _ = collect(load_logdir(str(tmp_path)))
    assert report["runs"] == [
        {"name": "a", "color": report["runs"][0]["color"], "hparams": {"lr": 0.1, "opt": "adam", "amsgrad": True},
         "stats": {"loss": [0.5, 0.5, 3.0]}},
        {"name": "b", "color": report["runs"][1]["color"], "stats": {"loss": [None, None, None]}},
        {"name": "c", "color": report["runs"][2]["color"], "stats": {"loss": [-1.5, -1.5, None]}}]
    pytest.importorskip("starlette")
    from tfevents.viewer.dashboard.page import live_document
    live = LiveLogdir(str(tmp_path))
    live.reload()
    served, _ = live_document(live, title="t", api_base="/api/v1/", reload_interval=1.0)
    assert served["runs"] == report["runs"]
