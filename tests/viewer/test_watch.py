"""``tfevents watch`` in a real terminal: tmux (send-keys, capture-pane) at 80x24, on a logdir a writer process keeps
appending to.

The logdir: ``alpha`` (a writer subprocess logs ``loss`` every 20 ms), ``beta`` (finished: 200 noisy points),
``broken`` (a record whose checksum was spoiled), and two hostile runs named with an OSC (a window title) and a CSI
(a colour) sequence that log the tag ``acc[/]`` (Textual markup, as ``torch.utils.tensorboard`` writes it). The
screen shows the runs; alpha's last step moves within two refresh intervals; ``s`` changes the smoothing and
beta's smoothed last value becomes what ``viewer/smoothing.py`` computes for the new weight on the values
``load_logdir`` reads; toggling beta removes its row; the status line names the corrupt record with the offset the
reader reports; nothing touches the right edge cut; ``q`` exits 0 and leaves the alternate screen. The hostile
names are shown escaped: the pane's title and colours stay ours; ``acc[/]`` is listed, charted and filtered. A
logdir deleted while watched is said so in the status line.
"""
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from _terminal import Terminal

pytest.importorskip("textual", reason="tfevents watch needs the `watch` extra (textual, textual-plotext)")
pytest.importorskip("textual_plotext", reason="tfevents watch needs the `watch` extra (textual, textual-plotext)")

INTERVAL = 1.0
HOSTILE_RUNS = ("\x1b]0;PWNED\x07run", "\x1b[31mRED\x1b[0m")   # an OSC 0 (window title) and a CSI SGR (red)
MARKUP_TAG = "acc[/]"   # Textual markup (a closing tag); torch.utils.tensorboard writes it unchanged
WRITER = r"""
import sys, time
from tfevents.summaries import SummaryWriter
w = SummaryWriter(sys.argv[1], flush_secs=1)
step = 0
while True:
    w.add_scalar("loss", 1.0 / (step + 1), step)
    w.flush()
    step += 1
    time.sleep(0.02)
"""


@pytest.fixture
def watched(tmp_path):
    """(logdir, the writer process, beta's values, the corrupt record's offset)."""
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed (apt-get install tmux): the terminal UI is tested in a real terminal")
    from tfevents.proto import summary_pb2
    from tfevents.summaries import SummaryWriter, load_logdir
    logdir = tmp_path / "logs"
    rng = np.random.default_rng(3)
    with SummaryWriter(str(logdir / "beta")) as w:
        for step in range(200):
            w.add_scalar("loss", float(2.0 * np.exp(-step / 50) + rng.normal(0, 0.3)), step)
    with SummaryWriter(str(logdir / "broken")) as w:
        for step in range(20):
            w.add_scalar("loss", float(step), step)
    broken = next((logdir / "broken").iterdir())
    data = bytearray(broken.read_bytes())
    data[len(data) // 2] ^= 0xFF
    broken.write_bytes(bytes(data))
    for run in HOSTILE_RUNS:
        with SummaryWriter(str(logdir / run)) as w:
            for step in range(5):   # add_summary writes the tag as it is (add_scalar would clean it)
                w.add_summary(summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=MARKUP_TAG,
                                                                                   simple_value=step / 10)]), step)
    read = load_logdir(str(logdir), on_error="skip")
    corrupt = [p for p in read.problems if p.kind == "corrupted"]
    assert len(corrupt) == 1
    beta = read.scalars[("beta", "loss")].value
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(logdir / "alpha")])
    try:
        yield str(logdir), writer, beta, corrupt[0].offset
    finally:
        writer.kill()
        writer.wait()


def _row(screen: str, run: str):
    """The stats row of ``run`` in the (first) chart's table: (step, last, smoothed, min, max) as text."""
    m = re.search(r"[■⣿•+x*o#@] %s +(\d+) +(\S+) +(\S+) +(\S+) +(\S+)" % re.escape(run), screen)
    return m.groups() if m else None


def _pane_title(term: Terminal) -> str:
    return term.tmux("display", "-p", "-t", "w", "#{pane_title}")


def test_watch_follows_a_growing_logdir_in_tmux(watched):
    from tfevents.viewer.smoothing import ema
    from tfevents.viewer.watch.text import number
    logdir, writer, beta, corrupt_offset = watched
    term = Terminal(80, 24)
    try:
        title = _pane_title(term)
        term.keys("%s -m tfevents.viewer.cli watch %s --interval %s --tags loss; echo EXIT=$?"
                  % (sys.executable, logdir, INTERVAL), "Enter")
        screen = term.wait_for(lambda s: _row(s, "alpha") and _row(s, "beta") and "corrupted" in s,
                               what="the runs, their rows and the corrupt record")
        assert "broken" in screen and "Traceback" not in screen

        # the hostile run names are listed as text: escaped, the pane's title and colours untouched
        assert "\\x1b]0;PWNED" in screen and "\\x1b[31mRED" in screen
        assert _pane_title(term) == title
        assert ("16", 31) not in _sgr_colours(term.tmux("capture-pane", "-p", "-e", "-t", "w"))

        # the status line names the corrupt record, where the reader finds it
        status = [line for line in screen.splitlines() if "corrupted" in line]
        assert status and "corrupted record in broken at offset %d" % corrupt_offset in status[0], status

        # alpha's last point moves within two refresh intervals
        first = int(_row(screen, "alpha")[0])
        start = time.monotonic()
        moved = term.wait_for(lambda s: _row(s, "alpha") and int(_row(s, "alpha")[0]) > first, timeout=2 * INTERVAL,
                              what="alpha's last step to move past %d" % first)
        assert time.monotonic() - start <= 2 * INTERVAL + 0.2
        assert writer.poll() is None

        # smoothing: beta's smoothed last value is TensorBoard's for the weight shown
        assert "smoothing 0.60" in moved
        assert _row(moved, "beta")[2] == number(ema(beta, 0.6)[-1])
        term.keys("s")
        after = term.wait_for(lambda s: "smoothing 0.80" in s, what="smoothing 0.80")
        assert _row(after, "beta")[2] == number(ema(beta, 0.8)[-1]) != number(ema(beta, 0.6)[-1])
        assert _row(after, "beta")[1] == number(beta[-1])     # the raw last value does not change

        # toggling beta (runs list: the hostile two, alpha, beta, broken) hides its line and row
        term.keys("r")
        for _ in range(sorted(HOSTILE_RUNS + ("alpha", "beta", "broken")).index("beta")):
            term.keys("Down")
        term.keys("Space")
        hidden = term.wait_for(lambda s: _row(s, "beta") is None, what="beta's row to go")
        assert "▐ ▌ ■ beta" in hidden and "▐X▌ ■ alpha" in hidden
        assert _row(hidden, "alpha") is not None

        # 80x24: every line fits; nothing ends cut at the right edge; every key and run name whole
        lines = hidden.splitlines()
        assert len(lines) <= 24 and all(len(line) <= 80 for line in lines)
        assert not [line for line in lines if len(line) == 80 and line[-1].isalnum()]
        for word in ("q quit", "s smooth+", "S smooth-", "x x axis", "/ filter", "r runs", "t tags",
                     "alpha", "beta", "broken", "loss"):
            assert re.search(r"(^|[^\w])%s($|[^\w])" % re.escape(word), hidden, re.M), word

        # q quits: exit status 0, the alternate screen left
        term.keys("q")
        term.wait_for(lambda s: "EXIT=0" in s, timeout=10, what="EXIT=0")
        assert term.tmux("display", "-p", "-t", "w", "#{alternate_on}").strip() == "0"
    finally:
        term.close()


def _sgr_colours(ansi: str) -> list:
    """The colours an ANSI text sets (SGR 38/48): ``("256", n)`` or ``("rgb", r, g, b)`` or ``("16", code)``."""
    out = []
    for params in re.findall(r"\x1b\[([0-9;]*)m", ansi):
        p = [int(x) if x else 0 for x in params.split(";")]
        i = 0
        while i < len(p):
            if p[i] in (38, 48) and i + 2 < len(p) and p[i + 1] == 5:
                out.append(("256", p[i + 2]))
                i += 3
            elif p[i] in (38, 48) and i + 4 < len(p) and p[i + 1] == 2:
                out.append(("rgb",) + tuple(p[i + 2:i + 5]))
                i += 5
            else:
                if 30 <= p[i] <= 37 or 40 <= p[i] <= 47 or 90 <= p[i] <= 97 or 100 <= p[i] <= 107:
                    out.append(("16", p[i]))
                i += 1
    return out


def _is_grey(colour) -> bool:
    if colour[0] == "rgb":
        return colour[1] == colour[2] == colour[3]
    if colour[0] == "256":
        n = colour[1]
        if n >= 232 or n in (0, 7, 8, 15, 16, 231):
            return True
        if 16 <= n <= 231:
            r, g, b = (n - 16) // 36, (n - 16) // 6 % 6, (n - 16) % 6
            return r == g == b
        return False
    return colour[1] % 10 in (0, 7)      # black, white


def test_watch_uses_the_whole_window_and_only_greys_under_no_color(watched):
    logdir, writer, _, _ = watched
    term = Terminal(120, 40, env={"NO_COLOR": "1"})
    try:
        title = _pane_title(term)
        # no tag filter: the first two tags are charted, acc[/] (markup) among them
        term.keys("NO_COLOR=1 %s -m tfevents.viewer.cli watch %s --interval %s; echo EXIT=$?"
                  % (sys.executable, logdir, INTERVAL), "Enter")
        screen = term.wait_for(lambda s: _row(s, "alpha") and _row(s, "beta"), what="the runs' rows")
        assert "▐X▌ acc[/]" in screen and "▐X▌ loss" in screen and "Traceback" not in screen
        assert _pane_title(term) == title
        assert max(len(line) for line in screen.splitlines()) > 100          # the charts take the wider window
        coloured = term.tmux("capture-pane", "-p", "-e", "-t", "w")
        hues = sorted({c for c in _sgr_colours(coloured) if not _is_grey(c)})
        assert hues == [], hues[:10]                                         # only greys: no colour
        # each run is told apart by a marker of its own instead of its colour
        markers = {run: re.search(r"([⣿•+x*o#@]) %s " % run, screen).group(1) for run in ("alpha", "beta")}
        assert markers["alpha"] != markers["beta"]

        # a tag filter that matches the markup tag lists it alone
        term.keys("/")
        term.wait_for(lambda s: s.rstrip().splitlines()[-1].strip() == "/ filter", timeout=10,
                      what="the filter focused (the footer shows its key alone)")
        term.keys("acc")
        filtered = term.wait_for(lambda s: "▐X▌ loss" not in s, what="loss filtered out of the tag list")
        assert "▐X▌ acc[/]" in filtered and "Traceback" not in filtered
        assert _pane_title(term) == title

        # the logdir deleted while watched: the status line says so
        writer.kill()
        writer.wait()
        shutil.rmtree(logdir)
        gone = term.wait_for(lambda s: "logdir deleted or moved" in s, timeout=4 * INTERVAL,
                             what="the deleted logdir reported")
        assert any("logdir deleted or moved" in line for line in gone.splitlines()[-3:-1]), gone   # status line

        term.keys("Enter")   # out of the filter, into the tag list: the keys show again
        term.wait_for(lambda s: "q quit" in s, timeout=10, what="the filter left")
        term.keys("q")
        term.wait_for(lambda s: "EXIT=0" in s, timeout=10, what="EXIT=0")
    finally:
        term.close()


def _watch_refused(*args: str) -> str:
    """``tfevents watch ARGS`` run without a terminal: it must refuse at once, exit status 2; its stderr."""
    out = subprocess.run([sys.executable, "-m", "tfevents.viewer.cli", "watch", *args], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2, out
    return out.stderr


@pytest.mark.parametrize("samples", ["0", "-3"])
def test_watch_samples_must_be_positive(tmp_path, samples):
    assert "--samples: must be at least 1, got %s" % samples in _watch_refused(str(tmp_path), "--samples", samples)


def test_watch_names_a_fifo_as_not_a_directory(tmp_path):
    fifo = tmp_path / "logs"
    os.mkfifo(fifo)
    err = _watch_refused(str(fifo))
    assert "not a directory (a FIFO)" in err and "no such" not in err, err
