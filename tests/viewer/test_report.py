"""tfevents report --static: one self-contained HTML file of PNG charts, opened in headless Chromium (no
console errors, not blank, a `<script>` text summary shown as text and never run, nothing fetched), and
`--watch` re-rendering."""
import io
import os
import subprocess
import sys
import time
from html.parser import HTMLParser

import numpy as np
import pytest

from _browser import browser, browser_session, console_messages  # noqa: F401 (fixtures)
from _viewer_data import SCRIPT_TEXT, mixed, ours_available  # noqa: F401

SECTIONS = ["Scalars", "Distributions", "Histograms", "Images", "Audio", "Text", "PR curves", "HParams", "Graphs"]


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


@pytest.fixture(scope="module")
def report(mixed, tmp_path_factory):
    from tfevents.viewer.cli import main
    root, _ = mixed
    out = str(tmp_path_factory.mktemp("report") / "report.html")
    assert main(["report", root, "-o", out, "--static"]) == 0
    return out


def test_report_is_self_contained(report):
    text = open(report, encoding="utf-8").read()
    parser = _Tags()
    parser.feed(text)
    names = [t for t, _ in parser.tags]
    assert "script" not in names and "link" not in names and "iframe" not in names
    sources = [a["src"] for t, a in parser.tags if "src" in a]
    assert sources and all(s.startswith("data:") for s in sources)
    assert not any(a.get("href", "#").split(":")[0] in ("http", "https") for _, a in parser.tags)
    assert "@import" not in text and "url(" not in text and "@font-face" not in text
    imgs = [a for t, a in parser.tags if t == "img"]
    assert any(a["src"].startswith("data:image/png;base64,") for a in imgs)
    assert any(t == "audio" and a["src"].startswith("data:audio/wav;base64,") for t, a in parser.tags)
    for section in SECTIONS:
        assert ">%s</a>" % section in text, section
    runs = ["tbx", "torch", "torch/hp", "tf2"] + (["ours"] if ours_available() else [])
    for run in runs:
        assert "</i>%s</span>" % run in text


def test_report_renders_in_headless_chromium(browser, report):
    browser.set_window_size(1280, 1600)      # the window the screenshot checks were written for
    browser.get("file://" + os.path.abspath(report))
    state = browser.execute_script("""
        return {scripts: document.scripts.length, pwned: typeof window.__pwned,
                text: document.body.innerText,
                images: Array.from(document.images).map(i => i.complete && i.naturalWidth > 0),
                resources: performance.getEntriesByType('resource').map(r => r.name),
                height: document.body.scrollHeight};""")
    shot = browser.get_screenshot_as_png()
    console = console_messages(browser)
    assert console == [], console                       # no errors, warnings or failed loads
    assert state["scripts"] == 0 and state["pwned"] == "undefined"
    assert SCRIPT_TEXT.split(" **")[0] in state["text"]  # the <script> shows as text
    assert "bold words" in state["text"]
    assert state["images"] and all(state["images"]), "an inline image failed to decode"
    assert state["resources"] == []                     # nothing fetched
    assert state["height"] > 2000
    from PIL import Image
    pixels = np.asarray(Image.open(io.BytesIO(shot)).convert("RGB")).reshape(-1, 3)
    _, counts = np.unique(pixels[::7], axis=0, return_counts=True)
    dominant = counts.max() / counts.sum()
    assert dominant < 0.85, "screenshot is nearly blank (%.0f%% one colour)" % (100 * dominant)
    assert len(np.unique(pixels[::7], axis=0)) > 50


def test_report_image_steps_and_filters(mixed, tmp_path):
    from tfevents.viewer.cli import main
    root, _ = mixed
    out = tmp_path / "r.html"
    args = ["report", root, "-o", str(out), "--static", "--runs", "^tbx$", "--tags", "^sample$",
            "--image-steps", "40,100"]
    assert main(args) == 0
    parser = _Tags()
    parser.feed(out.read_text())
    assert [a["alt"] for t, a in parser.tags if t == "img"] == ["sample step 50", "sample step 100"]


def test_report_lists_reading_problems(tmp_path):
    from tensorboardX import SummaryWriter
    from tfevents.viewer import render_report
    run = tmp_path / "bad"
    with SummaryWriter(str(run)) as w:
        for s in range(20):
            w.add_scalar("loss", float(s), s)
    (name,) = [n for n in os.listdir(run) if "tfevents" in n]
    path = run / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # corrupt one record in the middle
    path.write_bytes(bytes(data))
    html = render_report(str(tmp_path))
    assert "Problems while reading" in html and name in html
    assert 'id="scalars"' in html  # what could be read is still shown


def _watch(cmd, ready):
    """Start ``tfevents <cmd> --watch``; returns (process, wait) where wait() blocks until the next line
    starting with ``ready``."""
    proc = subprocess.Popen([sys.executable, "-m", "tfevents.viewer.cli"] + cmd + ["--watch", "--interval", "0.2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait():
        deadline = time.time() + 60
        while time.time() < deadline:
            line = proc.stdout.readline()
            if line.startswith(ready):
                return
            assert line or proc.poll() is None, proc.stderr.read()
        raise AssertionError("no re-render within 60 s")
    return proc, wait


def test_report_watch_rerenders_when_event_files_grow(tmp_path):
    from tfevents.summaries import SummaryWriter  # flush() is synchronous (tensorboardX's is not)
    logdir, out = tmp_path / "logs", tmp_path / "live.html"
    w = SummaryWriter(str(logdir / "run"))
    w.add_text("status", "first entry", 1)
    w.flush()
    proc, wait_rendered = _watch(["report", str(logdir), "-o", str(out), "--static"], "rendered")
    try:
        wait_rendered()
        first = out.read_text()
        assert "first entry" in first and "second entry" not in first
        assert 'http-equiv="refresh"' in first  # an open tab reloads itself
        w.add_text("status", "second entry", 2)
        w.flush()
        wait_rendered()
        assert "second entry" in out.read_text()
    finally:
        w.close()
        proc.terminate()
        proc.wait(10)


def test_plot_watch_redraws_when_event_files_grow(tmp_path):
    """The watcher behind `tfevents plot --watch`, in a thread (the CLI path is covered by the report test)."""
    import argparse
    import queue
    import threading
    from tfevents.summaries import SummaryWriter
    from tfevents.viewer.cli import cmd_plot
    from tfevents.viewer.reports.rerender_on_change import watch
    logdir, out = tmp_path / "logs", tmp_path / "live.png"
    parser = argparse.ArgumentParser()
    cmd_plot.add_arguments(parser)
    args = parser.parse_args([str(logdir), "-o", str(out), "--smoothing", "0"])
    w = SummaryWriter(str(logdir / "run"))
    for s in range(10):
        w.add_scalar("loss", 1.0 / (s + 1), s)
    w.flush()
    drawn, stop = queue.Queue(), threading.Event()
    thread = threading.Thread(target=watch, args=(str(logdir), lambda: cmd_plot._draw(args)),
                              kwargs=dict(interval=0.1, stop=stop, on_render=lambda: drawn.put(out.read_bytes())))
    thread.start()
    try:
        first = drawn.get(timeout=60)
        assert first.startswith(b"\x89PNG")
        for s in range(10, 20):
            w.add_scalar("loss", 5.0, s)
        w.flush()
        assert drawn.get(timeout=60) != first
    finally:
        stop.set()
        thread.join(30)
        w.close()
