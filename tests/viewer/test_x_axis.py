"""Any scalar tag as the x axis (``--x samples_seen``) and log-scale x (``--logx``) in the viewer's surfaces:
export's x column, plot's pixels (two batch sizes over the same x range; a decade of log x spans equal widths)."""
import csv
import re

import numpy as np
import pytest

from _batch_runs import BATCHES, SAMPLES, write_batch_runs, write_sparse_run

from tfevents.summaries import SummaryWriter, load_logdir
from tfevents.viewer.cli import main

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def batch_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("batch_runs")
    write_batch_runs(root)
    write_sparse_run(root)
    return root


def _png(path):
    from PIL import Image
    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def _inside_axes(img):
    """The image between the axes' left and right spines (the two columns darkest over most of the height)."""
    dark = (img.sum(axis=2) < 150).sum(axis=0)
    spines = np.flatnonzero(dark > 0.5 * dark.max())
    return img[:, spines[0] + 3:spines[-1] - 2]


def _columns_of(img, color, tol=40):
    import matplotlib.colors as mcolors
    rgb = np.array(mcolors.to_rgb(color)) * 255
    return np.flatnonzero((np.abs(img - rgb).sum(axis=2) <= tol).any(axis=0))


def test_export_x_column_is_the_logged_samples_seen(batch_runs, tmp_path, capsys):
    out = tmp_path / "x.csv"
    assert main(["export", str(batch_runs), "-o", str(out), "--tags", "^loss$", "--x", "samples_seen"]) == 0
    assert "19 points without an x value for samples_seen dropped" in capsys.readouterr().err
    rows = list(csv.DictReader(open(out)))
    assert list(rows[0]) == ["run", "tag", "step", "wall_time", "value", "x"]
    assert {r["tag"] for r in rows} == {"loss"}
    for run, bs in BATCHES.items():
        xs = [float(r["x"]) for r in rows if r["run"] == run]
        steps = [int(r["step"]) for r in rows if r["run"] == run]
        assert xs == [float(bs * s) for s in steps] and xs[-1] == SAMPLES
    sparse = [(int(r["step"]), float(r["x"])) for r in rows if r["run"] == "sparse"]
    assert sparse == [(s, 8.0 * s) for s in range(5, 46)]   # interpolated between steps 5, 15, ..., 45; no more
    assert main(["export", str(batch_runs), "-o", str(tmp_path / "s.csv"), "--summary", "--x", "samples_seen"]) == 2


def test_plot_x_samples_seen_draws_both_batch_sizes_over_the_same_x_range(batch_runs, tmp_path):
    from tfevents.viewer import run_colors
    colors = run_colors(["bs32", "bs64", "sparse"])
    spans = {}
    for x in ("step", "samples_seen"):
        out = tmp_path / ("%s.png" % x)
        assert main(["plot", str(batch_runs), "-o", str(out), "--tags", "^loss$", "--runs", "^bs",
                     "--x", x, "--smoothing", "0"]) == 0
        img = _inside_axes(_png(out))
        spans[x] = {run: _columns_of(img, colors[run])[[0, -1]] for run in BATCHES}
        spans[x]["width"] = img.shape[1]
    on_x = spans["samples_seen"]
    assert np.abs(on_x["bs32"] - on_x["bs64"]).max() <= 2        # the same x range, 0 to 3200 samples
    assert on_x["bs32"][1] - on_x["bs32"][0] > 0.85 * on_x["width"]
    on_step = spans["step"]                                       # on steps, batch size 64 stops halfway
    assert on_step["bs64"][1] - on_step["bs64"][0] < 0.6 * (on_step["bs32"][1] - on_step["bs32"][0])


def test_plot_x_tag_footnote_counts_the_dropped_points(batch_runs):
    from tfevents.viewer import plot_scalars
    fig = plot_scalars(str(batch_runs), tags="^loss$", x="samples_seen", smoothing=0)
    (ax,) = [a for a in fig.axes if a.get_visible()]
    assert ax.get_xlabel() == "samples_seen\n(19 points without samples_seen dropped)"
    xs = {line.get_label(): line.get_xdata() for line in ax.get_lines()}
    np.testing.assert_array_equal(xs["sparse"], 8.0 * np.arange(5, 46))


def test_plot_logx_a_decade_spans_equal_widths(tmp_path):
    """``y = log10(samples)`` over 10..10^4 samples is a straight line on log x: the curve's row is linear in its
    column (each decade the same width), and not on linear x."""
    with SummaryWriter(str(tmp_path / "run")) as w:
        for step, samples in enumerate(np.unique(np.round(np.geomspace(10, 10_000, 300)))):
            w.add_scalar("y", float(np.log10(samples)), step)
            w.add_scalar("samples_seen", float(samples), step)
    from tfevents.viewer import run_colors
    color = run_colors(["run"])["run"]
    residual = {}
    for logx in (True, False):
        out = tmp_path / ("%s.png" % logx)
        assert main(["plot", str(tmp_path), "-o", str(out), "--tags", "^y$", "--x", "samples_seen",
                     "--smoothing", "0"] + (["--logx"] if logx else [])) == 0
        img = _inside_axes(_png(out))
        hit = np.abs(img - np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)])).sum(axis=2) <= 40
        cols = np.flatnonzero(hit.any(axis=0))
        rows = np.array([np.flatnonzero(hit[:, c]).mean() for c in cols])
        fit = np.polyval(np.polyfit(cols, rows, 1), cols)
        residual[logx] = np.abs(rows - fit).max()
        if logx:
            # the column where y crosses 1, 2, 3 (x = 10, 100, 1000 ... 10^4): equal steps
            crossings = np.interp([rows.max() - (rows.max() - rows.min()) * k / 3 for k in range(4)],
                                  rows[::-1], cols[::-1])
            widths = np.diff(crossings)
            assert widths.max() - widths.min() <= 3, widths
    assert residual[True] <= 2.0 and residual[False] > 20


def test_plot_aggregate_on_x_draws_the_aggregate_x(batch_runs):
    from tfevents.summaries import aggregate
    from tfevents.viewer.plots.bands import plot_aggregate
    logdir = load_logdir(str(batch_runs))
    fig = plot_aggregate(logdir, lambda run: "all", "^loss$", x="samples_seen", band="none", logx=True)
    (ax,) = [a for a in fig.axes if a.get_visible()]
    assert ax.get_xscale() == "log" and ax.get_xlabel().endswith("(19 points without samples_seen dropped)")
    expected = aggregate(logdir, lambda run: "all", "^loss$", stats=("mean",), x="samples_seen")
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), expected["x"].to_numpy())


def test_watch_state_lines_on_a_tag(tmp_path):
    from tfevents.viewer.watch.state import WatchState
    write_batch_runs(tmp_path)
    write_sparse_run(tmp_path)
    state = WatchState(str(tmp_path), threads=1)
    state.reload()
    scalars = load_logdir(str(tmp_path)).scalars
    for run in BATCHES:
        line = state.line(run, "loss", 0.0, x="samples_seen")
        np.testing.assert_array_equal(line.x, scalars[(run, "samples_seen")].value)
        assert line.dropped == 0 and line.x[-1] == SAMPLES
    sparse = state.line("sparse", "loss", 0.0, x="samples_seen")
    np.testing.assert_array_equal(sparse.x, 8.0 * np.arange(5, 46))
    np.testing.assert_array_equal(sparse.y, np.arange(5, 46))
    assert sparse.dropped == 19
    assert state.line("bs32", "loss", 0.6, x="tokens") is None          # a tag the run never logged


def test_watch_x_samples_seen_in_tmux(batch_runs):
    """``tfevents watch --x samples_seen`` in a real terminal: the chart's axis is samples_seen up to 3200 for both
    batch sizes, the status line says so, and the sparse run's points without an x are counted."""
    import shutil
    import sys
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed (apt-get install tmux): the terminal UI is tested in a real terminal")
    pytest.importorskip("textual_plotext")
    from _terminal import Terminal
    term = Terminal(100, 30)
    try:
        term.keys("%s -m tfevents.viewer.cli watch %s --interval 1 --tags '^loss$' --x samples_seen; echo EXIT=$?"
                  % (sys.executable, batch_runs), "Enter")
        screen = term.wait_for(lambda s: "x: samples_seen" in s and "19 points without it dropped" in s
                               and " bs64 " in s and "3200" in s, what="the chart on samples_seen")
        assert "Traceback" not in screen
        rows = {run: re.search(r"%s +(\d+) " % run, screen) for run in BATCHES}
        assert {run: int(m.group(1)) for run, m in rows.items() if m} == {"bs32": 100, "bs64": 50}
        term.keys("q")
        term.wait_for(lambda s: "EXIT=0" in s, what="watch to exit")
    finally:
        term.close()


def test_an_x_no_run_logged_is_an_error(batch_runs, tmp_path, capsys):
    assert main(["plot", str(batch_runs), "-o", str(tmp_path / "p.png"), "--x", "tokens"]) == 2
    assert main(["export", str(batch_runs), "-o", str(tmp_path / "e.csv"), "--x", "tokens"]) == 2
    err = capsys.readouterr().err
    assert err.count("no run logged tokens") == 2
    assert not (tmp_path / "p.png").exists() and not (tmp_path / "e.csv").exists()
