"""Issue 35 in the report page, in headless Chromium: runs coloured by a value ("Colour by", colour.js), the HParams
parallel coordinates' brushes choosing the runs every chart draws (panels.js), and runs' labels and notes in the run
list (runlist.js).

Twelve runs written with tfevents' SummaryWriter: ``lr`` spanning four decades (so the colour and the axis are on a
log scale), ``optimizer`` one of three strings, a ``loss`` series and a ``val/acc`` metric (add_hparams). The
expected colours are computed here from colour.js's documented rule (viridis stops, value -> position); the brushed
runs are checked against the brush's range read from the page, and the page's query of the brushes
(``TFE.choiceQuery()``) is parsed with ``tfevents.summaries.runs.parse`` and evaluated on a pandas table of the
runs, which must choose the same runs.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from _browser import browser, browser_session, console_messages, load, open_file  # noqa: F401 (fixtures)
from _report_page import page_document
from tfevents.summaries import SummaryWriter
from tfevents.summaries.runs import parse
from tfevents.viewer.cli import main

N_RUNS = 12
OPTIMIZERS = ("adam", "sgd", "rmsprop")
HOSTILE = "<img src=x onerror=window.__pwned=1>"
VIRIDIS = ["#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c", "#22a884", "#44bf70", "#7ad151",
           "#bddf26", "#fde725"]   # colour.js VIRIDIS: matplotlib's viridis at 0, 0.1, ..., 1
TAB10 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
NO_VALUE = "#c8c8c8"


def _name(k):
    return "run_%02d" % k


def _lr(k):
    return float(10 ** (-5 + 4 * k / (N_RUNS - 1)))


def _labels(k):
    return {0: ["bad", HOSTILE], 4: ["bad"], 8: ["bad", "rerun"]}.get(k, ["keep"] if k % 2 else [])


def _notes(k):
    return "tried lr %.3g by hand" % _lr(k) if k % 3 == 0 else None


def _acc(k):
    """The metric's value as the page and the run table have it: logged as a float32 scalar."""
    return float(np.float32(0.5 + 0.04 * k))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """The logdir's report (``tfevents report``) and the same page with the runs' labels and notes: the report's own
    when SummaryWriter(labels=, notes=) and the report carry them, else the document patched with them."""
    root = tmp_path_factory.mktemp("colour_brush")
    logdir = root / "logs"
    for k in range(N_RUNS):
        kwargs = {"labels": _labels(k), "notes": _notes(k)} if _labels(k) or _notes(k) else {}
        try:
            writer = SummaryWriter(str(logdir / _name(k)), **kwargs)
        except TypeError:   # a SummaryWriter without labels / notes yet
            writer = SummaryWriter(str(logdir / _name(k)))
        with writer as w:
            for step in range(40):
                w.add_scalar("loss", 1.0 / (1.0 + _lr(k) * 1000 * step) + 0.001 * k, step)
            w.add_hparams({"lr": _lr(k), "optimizer": OPTIMIZERS[k % 3]}, {"val/acc": _acc(k)}, global_step=40)
    report = root / "report.html"
    assert main(["report", str(logdir), "-o", str(report)]) == 0
    html = report.read_text(encoding="utf-8")
    doc, _ = page_document(html)
    assert [r["name"] for r in doc["runs"]] == [_name(k) for k in range(N_RUNS)]
    assert not doc["problems"], doc["problems"]
    for row in doc["hparams"]["rows"]:   # the brush reads these values: the ones written
        assert row["hparams"]["lr"] == _lr(int(row["run"][4:]))
    labelled = report
    if not any("labels" in r for r in doc["runs"]):   # the report does not carry them (yet): patch the document
        from tfevents.viewer.reports.interactive.encode import script_json
        for k, run in enumerate(doc["runs"]):
            if _labels(k):
                run["labels"] = _labels(k)
            if _notes(k):
                run["notes"] = _notes(k)
        block = re.search(r'(<script type="application/json" id="tfe-data">)(.*?)(</script>)', html, re.S)
        labelled = root / "report_labelled.html"
        labelled.write_text(html[:block.start(2)] + script_json(doc) + html[block.end(2):], encoding="utf-8")
    return {"report": str(report), "labelled": str(labelled), "doc": doc, "logdir": str(logdir)}


# --- helpers ------------------------------------------------------------------------------------------------


def _open(driver, path):
    """The page afresh: sessionStorage (the controls' state) emptied."""
    open_file(driver, path)
    if driver.execute_script("const n = sessionStorage.length; sessionStorage.clear(); return n"):
        open_file(driver, path)
    assert driver.execute_script("return window.__tfe.ready === true || window.__reportReady !== undefined")


def _choose_colour(driver, value):
    from selenium.webdriver.support.ui import Select
    Select(driver.find_element("id", "colour-by")).select_by_value(value)


DRAWN = """return window.__tfe.charts.map(c => {
  if (!c.u || c.card.classList.contains('hidden')) return [c.title, {}];
  const out = {};
  c.u.series.forEach((s, k) => { if (k === 0) return;
    out[s.label] = typeof s.stroke === 'function' ? s.stroke(c.u, k) : s.stroke; });
  return [c.title, out];
});"""


def _drawn(driver):
    """{chart title: {series label: stroke}} of every shown scalar chart (its uPlot series: raw then smoothed)."""
    return dict(driver.execute_script(DRAWN))


def _drawn_runs(driver):
    """{chart title: set of the runs drawn} (the smoothed series' labels are the run names)."""
    return {title: {label for label in series if not label.endswith(" (raw)")} for title, series in _drawn(driver).items()}


def _hex_of_css(css):
    """'rgb(r, g, b)' (a style as the browser reads it back) -> '#rrggbb'."""
    r, g, b = (int(v) for v in re.findall(r"\d+", css)[:3])
    return "#%02x%02x%02x" % (r, g, b)


def _viridis(t):
    """colour.js viridis(t): the stops linearly interpolated, each channel rounded half up."""
    n = len(VIRIDIS)
    s = min(1.0, max(0.0, t)) * (n - 1)
    k = min(n - 2, int(math.floor(s)))
    f = s - k
    a = [int(VIRIDIS[k][j:j + 2], 16) for j in (1, 3, 5)]
    b = [int(VIRIDIS[k + 1][j:j + 2], 16) for j in (1, 3, 5)]
    return "#" + "".join("%02x" % int(math.floor(x + (y - x) * f + 0.5)) for x, y in zip(a, b))


def _position(v, lo, hi):
    """colour.js's value -> position: log10 scale when all values are positive and span more than two decades."""
    if hi == lo:
        return 0.5
    if lo > 0 and math.log10(hi) - math.log10(lo) > 2:
        return (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    return (v - lo) / (hi - lo)


def _close(hex_a, hex_b):
    """Equal colours, or one unit apart in a channel (JavaScript's and C's log10 may differ in the last bit)."""
    a = [int(hex_a[j:j + 2], 16) for j in (1, 3, 5)]
    b = [int(hex_b[j:j + 2], 16) for j in (1, 3, 5)]
    return max(abs(x - y) for x, y in zip(a, b)) <= 1


def _no_severe(driver):
    severe = [m for m in console_messages(driver) if m["level"] == "SEVERE"]
    assert not severe, severe


def _run_list_swatches(driver):
    return dict(driver.execute_script("""return Array.from(document.querySelectorAll('.run-list [data-run-row]'))
        .map(r => [window.__tfe.data.runs[+r.dataset.runRow].name, getComputedStyle(r.querySelector('.swatch')).backgroundColor]);"""))


def _hp_lines(driver):
    """{run: stroke} of the parallel coordinates' lines in the brushes (all without a brush)."""
    return dict(driver.execute_script("""return Array.from(document.querySelectorAll('.hp-coords path.hp-line'))
        .map(p => [p.dataset.hpRun, p.getAttribute('stroke')]);"""))


# --- colour by value -----------------------------------------------------------------------------------------


def test_colour_by_numeric_hparam_follows_the_legend(browser, sweep):
    _open(browser, sweep["report"])
    own = {r["name"]: r["color"] for r in sweep["doc"]["runs"]}
    assert browser.execute_script("return document.getElementById('colour-legend').classList.contains('hidden')")
    assert {label: stroke for label, stroke in _drawn(browser)["loss"].items() if not label.endswith(" (raw)")} == own

    _choose_colour(browser, "hp:lr")
    legend = browser.execute_script("const d = document.getElementById('colour-legend'); "
                                    "return [d.dataset.kind, d.dataset.min, d.dataset.max, d.dataset.scale, d.classList.contains('hidden')]")
    kind, lo, hi, scale, hidden = legend
    lrs = {_name(k): _lr(k) for k in range(N_RUNS)}
    assert (kind, scale, hidden) == ("numeric", "log", False)
    assert float(lo) == min(lrs.values()) and float(hi) == max(lrs.values())
    lo, hi = float(lo), float(hi)
    expected = {run: _viridis(_position(lr, lo, hi)) for run, lr in lrs.items()}
    assert expected[_name(0)] == VIRIDIS[0] and expected[_name(N_RUNS - 1)] == VIRIDIS[-1]
    assert len(set(expected.values())) == N_RUNS

    series = _drawn(browser)["loss"]
    for run, colour in expected.items():
        assert _close(series[run], colour), (run, series[run], colour)
        assert series[run + " (raw)"] == series[run] + "40"   # the raw line: the same colour, faint
    for run, css in _run_list_swatches(browser).items():
        assert _hex_of_css(css) == series[run]
    assert _hp_lines(browser) == {run: series[run] for run in lrs}

    # kept across a reload, as the other controls
    open_file(browser, sweep["report"])
    assert browser.execute_script("return document.getElementById('colour-by').value") == "hp:lr"
    assert _drawn(browser)["loss"] == series

    # a metric's statistic: numbers, linear here (0.5 .. 0.94 spans less than two decades)
    _choose_colour(browser, "max:val/acc")
    assert browser.execute_script("return document.getElementById('colour-legend').dataset.scale") == "linear"
    series = _drawn(browser)["loss"]
    for k in range(N_RUNS):
        assert _close(series[_name(k)], _viridis(_position(_acc(k), _acc(0), _acc(N_RUNS - 1))))

    _choose_colour(browser, "run")   # back to each run's own colour
    assert {label: s for label, s in _drawn(browser)["loss"].items() if not label.endswith(" (raw)")} == own
    assert browser.execute_script("return document.getElementById('colour-legend').classList.contains('hidden')")
    _no_severe(browser)


def test_colour_by_string_hparam_one_colour_per_value(browser, sweep):
    _open(browser, sweep["report"])
    _choose_colour(browser, "hp:optimizer")
    swatches = browser.execute_script("""const d = document.getElementById('colour-legend');
        return [d.dataset.kind, Array.from(d.querySelectorAll('.legend-item')).map(i =>
            [i.dataset.category, i.dataset.colour, i.textContent, getComputedStyle(i.querySelector('.swatch')).backgroundColor])];""")
    kind, items = swatches
    assert kind == "category"
    assert [i[0] for i in items] == sorted(OPTIMIZERS) == [i[2] for i in items]
    legend = {category: colour for category, colour, _, _ in items}
    assert list(legend.values()) == TAB10[:3]   # viewer/colors.py's palette in the values' sorted order
    assert all(_hex_of_css(css) == colour for _, colour, _, css in items)
    series = _drawn(browser)["loss"]
    for k in range(N_RUNS):
        assert series[_name(k)] == legend[OPTIMIZERS[k % 3]]
    assert _hp_lines(browser) == {_name(k): legend[OPTIMIZERS[k % 3]] for k in range(N_RUNS)}
    _no_severe(browser)


# --- brushes ---------------------------------------------------------------------------------------------------


def _axis(browser, name):
    area = browser.find_element("css selector", '.hp-coords .hp-brush-area[data-col="%s"]' % name)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", area)
    return area


def _drag(browser, name, top, bottom):
    """Drag down the axis ``name`` from ``top`` to ``bottom`` (fractions of its brushable height from the top)."""
    from selenium.webdriver.common.action_chains import ActionChains
    area = _axis(browser, name)
    height = area.rect["height"]
    y0 = -height / 2 + top * height
    steps = 5
    chain = ActionChains(browser).move_to_element_with_offset(area, 0, int(y0)).click_and_hold()
    for _ in range(steps):
        chain = chain.move_by_offset(0, int((bottom - top) * height / steps))
    chain.release().perform()


def _click(browser, name):
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(browser).move_to_element(_axis(browser, name)).click().perform()


def _table():
    """The runs as a run table: name, hparams, the metric's columns."""
    return pd.DataFrame({"name": [_name(k) for k in range(N_RUNS)], "lr": [_lr(k) for k in range(N_RUNS)],
                         "optimizer": [OPTIMIZERS[k % 3] for k in range(N_RUNS)],
                         "val/acc.last": [_acc(k) for k in range(N_RUNS)], "val/acc.max": [_acc(k) for k in range(N_RUNS)]})


def _state(browser):
    return browser.execute_script("""const t = window.__tfe;
        return {brushes: t.hpBrushes(), query: t.choiceQuery(), order: t.runList.order(),
                rects: Array.from(document.querySelectorAll('.hp-coords rect.hp-brush')).map(r => r.dataset.col)};""")


def _chosen_by_query(query):
    return set(parse(query).select(_table()))


def test_brushes_choose_the_runs_of_every_chart(browser, sweep):
    _open(browser, sweep["report"])
    every = {_name(k) for k in range(N_RUNS)}
    assert all(runs == every for runs in _drawn_runs(browser).values())

    # a brush on lr: the runs with lr inside it, in every chart, the list and the table; the query says the same
    _drag(browser, "lr", 0.3, 0.7)
    state = _state(browser)
    [brush] = state["brushes"]
    assert brush["name"] == "lr" and brush["kind"] == "hparams"
    inside = {_name(k) for k in range(N_RUNS) if brush["lo"] <= _lr(k) <= brush["hi"]}
    assert 0 < len(inside) < N_RUNS, brush
    assert all(runs == inside for runs in _drawn_runs(browser).values())
    assert set(state["order"]) == inside
    assert state["rects"] == ["lr"]
    assert "`lr` >= " in state["query"] and "`lr` <= " in state["query"]
    assert _chosen_by_query(state["query"]) == inside
    table_rows = browser.execute_script("return Array.from(document.querySelectorAll('.hp-table tbody tr')).map(r => r.dataset.hpRun)")
    assert set(table_rows) == inside
    assert set(_hp_lines(browser)) == inside   # the others stay on the axes, faded
    assert browser.execute_script("return document.querySelectorAll('.hp-coords path.hp-line-out').length") == N_RUNS - len(inside)

    # a second brush, on the categorical axis: the two intersect
    _drag(browser, "optimizer", 0.4, 1.0)   # the lower categories: "adam" at the bottom, then "rmsprop"
    state = _state(browser)
    cats = next(b["cats"] for b in state["brushes"] if b["name"] == "optimizer")
    assert sorted(cats) == ["adam", "rmsprop"]
    both = {run for run in inside if OPTIMIZERS[int(run[4:]) % 3] in cats}
    assert 0 < len(both) < len(inside)
    assert all(runs == both for runs in _drawn_runs(browser).values())
    assert '`optimizer` in ["' in state["query"]
    assert _chosen_by_query(state["query"]) == both
    assert sorted(state["rects"]) == ["lr", "optimizer"]

    # a click on the lr axis without a drag clears its brush only
    _click(browser, "lr")
    state = _state(browser)
    assert [b["name"] for b in state["brushes"]] == ["optimizer"]
    only_cats = {_name(k) for k in range(N_RUNS) if OPTIMIZERS[k % 3] in cats}
    assert all(runs == only_cats for runs in _drawn_runs(browser).values())
    assert _chosen_by_query(state["query"]) == only_cats

    # a metric's axis: "val/acc".last
    _click(browser, "optimizer")
    _drag(browser, "val/acc", 0.0, 0.5)   # the upper half: the best runs
    state = _state(browser)
    [brush] = state["brushes"]
    top = {_name(k) for k in range(N_RUNS) if brush["lo"] <= _acc(k) <= brush["hi"]}
    assert 0 < len(top) < N_RUNS and _name(N_RUNS - 1) in top
    assert '"val/acc".last >= ' in state["query"]
    assert _chosen_by_query(state["query"]) == top
    assert all(runs == top for runs in _drawn_runs(browser).values())

    # cleared: every run again
    _click(browser, "val/acc")
    state = _state(browser)
    assert state["brushes"] == [] and state["query"] == "" and state["rects"] == []
    assert all(runs == every for runs in _drawn_runs(browser).values())
    assert set(state["order"]) == every
    assert browser.execute_script("return document.querySelector('.hp-brush-note').classList.contains('hidden')")

    # the note under the table says the brushes' query; its button clears them all
    _drag(browser, "lr", 0.0, 0.5)
    _drag(browser, "optimizer", 0.0, 0.3)
    state = _state(browser)
    note = browser.execute_script("return document.querySelector('.hp-brush-note code').textContent")
    assert note and "(" + note + ")" == state["query"]
    assert len(state["brushes"]) == 2 and all(runs != every for runs in _drawn_runs(browser).values())
    browser.find_element("css selector", ".hp-brush-clear").click()
    assert _state(browser)["brushes"] == [] and _state(browser)["query"] == ""
    assert all(runs == every for runs in _drawn_runs(browser).values())
    _no_severe(browser)


def test_brush_query_quotes_names_and_strings(browser, sweep):
    """The query of brushes on columns whose names and values need escaping: backticks and backslashes in an hparam's
    name, quotes in a tag, quotes and backslashes in a string value; parsed, it names the columns and values."""
    _open(browser, sweep["report"])
    query = browser.execute_script(r"""
        const t = window.__tfe;
        return [t.brushQueryOf({kind: 'hparams', name: 'we`ird\\name', stat: 'last', lo: 1e-7, hi: 0.5}),
                t.brushQueryOf({kind: 'metrics', name: 'val/"acc"', stat: 'max', lo: -2, hi: 3}),
                t.brushQueryOf({kind: 'hparams', name: 'opt', stat: 'last', cats: new Map([['a"b\\c', ['a"b\\c']], ['1', [1, '1']], ['true', [true]]])})];""")
    table = pd.DataFrame({"name": ["a", "b", "c", "d"], "we`ird\\name": [1e-8, 1e-7, 0.5, 0.6],
                          'val/"acc".max': [-3.0, -2.0, 3.0, 0.0], "opt": ['a"b\\c', 1, True, "1"]})
    assert list(parse(query[0]).select(table)) == ["b", "c"]
    assert list(parse(query[1]).select(table)) == ["b", "c", "d"]
    assert list(parse(query[2]).select(table)) == ["a", "b", "c", "d"]
    _no_severe(browser)


# --- labels and notes ----------------------------------------------------------------------------------------


def test_labels_as_chips_notes_as_title_and_the_filter_finds_labels(browser, sweep):
    _open(browser, sweep["labelled"])
    rows = browser.execute_script("""return Array.from(document.querySelectorAll('.run-list [data-run-row]')).map(r =>
        [r.querySelector('span').textContent, Array.from(r.querySelectorAll('.chip')).map(c => c.textContent), r.title,
         r.getBoundingClientRect().height]);""")
    assert len(rows) == N_RUNS
    height = browser.execute_script("return window.__tfe.runList.rowHeight")
    for k, (name, chips, title, h) in enumerate(sorted(rows)):
        assert name == _name(k)
        assert chips == _labels(k)
        assert (_notes(k) in title) if _notes(k) else title == name
        assert abs(h - height) < 0.5   # the list stays virtualized at a fixed row height
    # the hostile label is text: no element made of it, nothing ran
    assert browser.execute_script("return document.querySelectorAll('.run-list img').length") == 0
    assert browser.execute_script("return window.__pwned") is None

    browser.execute_script("const e = document.getElementById('run-filter'); e.value = 'bad';"
                           "e.dispatchEvent(new Event('input'))")
    bad = {_name(k) for k in range(N_RUNS) if "bad" in _labels(k)}
    assert set(browser.execute_script("return window.__tfe.runList.order()")) == bad
    assert all(runs == bad for runs in _drawn_runs(browser).values())
    browser.execute_script("const e = document.getElementById('run-filter'); e.value = '^run_0[12]$|rerun';"
                           "e.dispatchEvent(new Event('input'))")
    assert set(browser.execute_script("return window.__tfe.runList.order()")) == {_name(1), _name(2), _name(8)}
    _no_severe(browser)


# --- the served dashboard: the same page -----------------------------------------------------------------------


def test_served_dashboard_colours_and_brushes_alike(browser, sweep):
    """``tfevents api``'s page (the report's page fed by the JSON API): colour by lr and a brush on its axis work as
    in the report file."""
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    import time
    from _dashboard import ApiProcess
    server = ApiProcess(sweep["logdir"], "--samples-per-plugin", "scalars=all")
    try:
        server.wait_ready()
        load(browser, server.base)
        deadline = time.monotonic() + 30
        while not browser.execute_script("""const t = window.__tfe; if (!(t && t.ready)) return false;
                const c = t.charts.find(c => c.title === 'loss');
                return !!(c && c.u && c.shown.length === arguments[0] && c.shown.every(s => !s.pending));""", N_RUNS):
            assert time.monotonic() < deadline, "the served page did not draw the loss chart"
            time.sleep(0.05)
        _choose_colour(browser, "hp:lr")
        lo, hi = (float(v) for v in browser.execute_script(
            "const d = document.getElementById('colour-legend'); return [d.dataset.min, d.dataset.max]"))
        series = _drawn(browser)["loss"]
        for k in range(N_RUNS):
            assert _close(series[_name(k)], _viridis(_position(_lr(k), lo, hi)))

        _drag(browser, "lr", 0.3, 0.7)
        state = _state(browser)
        [brush] = state["brushes"]
        inside = {_name(k) for k in range(N_RUNS) if brush["lo"] <= _lr(k) <= brush["hi"]}
        assert 0 < len(inside) < N_RUNS
        deadline = time.monotonic() + 30
        while _drawn_runs(browser).get("loss") != inside:
            assert time.monotonic() < deadline, _drawn_runs(browser)
            time.sleep(0.05)
        assert all(runs == inside for runs in _drawn_runs(browser).values())
        assert _chosen_by_query(state["query"]) == inside
        _click(browser, "lr")
        assert _state(browser)["brushes"] == []
        _no_severe(browser)
    finally:
        server.stop()
