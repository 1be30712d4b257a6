"""``tfevents.viewer.show`` and ``Logdir._repr_html_`` in a real notebook: executed by a Jupyter kernel (nbclient),
exported by ``nbconvert --to html``, opened in headless Chromium (selenium).

The notebook shows the demo's logdir twice through ``show()`` (different tags and runs) and once as a cell's value
(``load_logdir(...)``). In the exported page each output's iframe draws every chart it should (the interactive
report's own ``window.__tfe`` state, as its tests read it), no request leaves the page, and toggling a run in one
report leaves the other as it was.
"""

import pytest

from _browser import browser, browser_session, console_messages, network_requests  # noqa: F401

nbformat = pytest.importorskip("nbformat", reason="the notebook tests need nbformat (the `test` extra)")
nbclient = pytest.importorskip("nbclient", reason="the notebook tests need nbclient (the `test` extra)")
nbconvert = pytest.importorskip("nbconvert", reason="the notebook tests need nbconvert (the `test` extra)")
pytest.importorskip("ipykernel", reason="the notebook tests need ipykernel (the `test` extra)")

SHOWN = [dict(tags="loss|accuracy", runs=None), dict(tags=None, runs="^train$")]


@pytest.fixture(scope="module")
def demo_logdir(demo_cli_run):
    """The demo's runs (conftest's ``demo_cli_run``: ``tfevents demo`` once per session)."""
    return demo_cli_run[0]


@pytest.fixture(scope="module")
def exported(demo_logdir, tmp_path_factory):
    """The notebook executed by a real kernel and exported to HTML as ``jupyter nbconvert --to html`` does: (path
    of the HTML file, executed notebook, the URLs of the scripts nbconvert's own template links: require.js and
    MathJax)."""
    from nbconvert import HTMLExporter
    v4 = nbformat.v4
    cells = [v4.new_code_cell("from tfevents.viewer import show\nfrom tfevents.summaries import load_logdir\n"
                              "LOGDIR = %r" % demo_logdir)]
    for options in SHOWN:
        cells.append(v4.new_code_cell("show(LOGDIR, tags=%r, runs=%r, height=520)" % (options["tags"], options["runs"])))
    cells.append(v4.new_code_cell("load_logdir(LOGDIR, kinds=('scalars',))"))
    nb = v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                               "language": "python"}})
    work = tmp_path_factory.mktemp("nb")
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(work)}}).execute()
    exporter = HTMLExporter()
    body, _ = exporter.from_notebook_node(nb)
    out = work / "shown.html"
    out.write_text(body, encoding="utf-8")
    return str(out), nb, {exporter.require_js_url, exporter.mathjax_url}


def _frames_state(driver):
    """The state of each report iframe of the current page, in document order."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    states = []
    frames = driver.find_elements(By.CSS_SELECTOR, "iframe[srcdoc]")
    for frame in frames:
        # a frame below the fold gets no animation frames, and the report says it is ready on its first one
        driver.execute_script("arguments[0].scrollIntoView()", frame)
        driver.switch_to.frame(frame)
        try:
            WebDriverWait(driver, 30).until(lambda d: d.execute_script("return window.__reportReady !== undefined"))
            states.append(driver.execute_script("""
                const t = window.__tfe;
                return {titles: t.charts.map(c => c.title), drawn: t.charts.filter(c => c.draws > 0).length,
                        canvases: Array.from(document.querySelectorAll('.plot canvas')).map(c => c.width * c.height > 0),
                        runs: t.data.runs.map(r => r.name), origin: window.origin};"""))
        finally:
            driver.switch_to.default_content()
    return states


def test_outputs_are_iframes_of_the_report(exported):
    _, nb, _ = exported
    outputs = [o for cell in nb.cells[1:] for o in cell.outputs]
    assert [o.output_type for o in outputs] == ["display_data", "display_data", "execute_result"], outputs
    for o in outputs:
        markup = o.data["text/html"]
        assert markup.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts' in markup
        assert "<script" not in markup         # the page is inside the attribute, escaped, not in the notebook


def test_every_report_in_the_exported_notebook_draws(browser, exported, demo_logdir):
    from tfevents.summaries import load_logdir
    from tfevents.viewer.logdir_data import select
    path, _, template_urls = exported
    network_requests(browser)
    console_messages(browser)
    browser.get("file://" + path)
    states = _frames_state(browser)
    scalars = load_logdir(demo_logdir, kinds=("scalars",)).scalars
    wanted = [sorted({tag for _, tag in select(scalars, o["tags"], o["runs"])}) for o in SHOWN]
    wanted.append(sorted({tag for _, tag in scalars}))
    assert len(states) == 3
    for state, tags in zip(states, wanted):
        assert sorted(state["titles"]) == tags
        assert state["drawn"] == len(tags) > 0
        assert state["canvases"] and all(state["canvases"])
        assert state["origin"] == "null"          # sandboxed: an opaque origin of its own
    assert states[1]["runs"] == ["train"] and "test" in states[0]["runs"]
    page = "file://" + path
    requests = network_requests(browser)
    # nothing but the page itself and nbconvert's template scripts (which the machine cannot reach)
    leaving = [u for u in requests if u != page and not u.startswith(("data:", "about:")) and u not in template_urls]
    assert leaving == [] and page in requests, requests
    errors = [m for m in console_messages(browser)
              if m["level"] == "SEVERE" and not any(u in m["message"] for u in template_urls)]
    assert errors == [], errors


def test_toggling_a_run_in_one_report_leaves_the_other(browser, exported):
    from selenium.webdriver.common.by import By
    path, _, _ = exported
    browser.get("file://" + path)
    _frames_state(browser)
    frames = browser.find_elements(By.CSS_SELECTOR, "iframe[srcdoc]")
    labels = "return window.__tfe.charts.find(c => c.title === 'loss').u.series.map(s => s.label || null)"

    def in_frame(k, script):
        browser.switch_to.frame(frames[k])
        try:
            return browser.execute_script(script)
        finally:
            browser.switch_to.default_content()

    assert "test" in in_frame(0, labels) and "test" in in_frame(2, labels)
    browser.switch_to.frame(frames[0])
    try:
        browser.execute_script("arguments[0].scrollIntoView()",
                               browser.find_element(By.CSS_SELECTOR, '.run-toggle[value="test"]'))
        browser.find_element(By.CSS_SELECTOR, '.run-toggle[value="test"]').click()
    finally:
        browser.switch_to.default_content()
    assert "test" not in in_frame(0, labels)
    assert "test" in in_frame(2, labels)
