"""tfevents.viewer plots of runs written by tensorboardX, torch, TF2 and tfevents itself: rendered with Agg and
checked in pixels (each run's colour where its data is), in the legend, and in axis ranges; histograms
against TensorBoard's own distribution path; images, PR curves, hparams and graphs against what was logged."""
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from _viewer_data import NAN_STEP, OFFSETS, STEPS, _image, loss_curve, mixed, ours_available  # noqa: F401

pytest.importorskip("matplotlib")


def _render(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].astype(int)


def _rgb(color):
    import matplotlib.colors as mcolors
    return np.array(mcolors.to_rgb(color)) * 255


def _color_near(img, col, row, rgb, radius=3, tol=60):
    h, w, _ = img.shape
    r0, r1 = max(0, row - radius), min(h, row + radius + 1)
    c0, c1 = max(0, col - radius), min(w, col + radius + 1)
    patch = img[r0:r1, c0:c1].reshape(-1, 3)
    return bool(patch.size) and np.min(np.abs(patch - rgb).sum(axis=1)) <= tol


def _expected_runs():
    return ["tbx", "tf2", "torch"] + (["ours"] if ours_available() else [])


def _smoothed(run, weight):
    """Independent smoothing: pandas ewm over the finite points (TensorBoard's formula)."""
    y = loss_curve(OFFSETS[run])
    if run == "tbx":
        y[NAN_STEP] = np.nan
    finite = np.isfinite(y)
    out = y.copy()
    out[finite] = pd.Series(y[finite]).ewm(alpha=1 - weight, adjust=True).mean().to_numpy()
    return out


def test_scalar_plot_shows_every_run_in_its_colour_where_its_data_is(mixed):
    from tfevents.viewer import plot_scalars, run_colors
    root, _ = mixed
    fig = plot_scalars(root, tags="^loss$", smoothing=0.6)
    (ax,) = [a for a in fig.axes if a.get_visible()]
    img = _render(fig)
    height = img.shape[0]
    colors = run_colors(["tbx", "torch", "tf2", "torch/hp"] + (["ours"] if ours_available() else []))
    legend = {t.get_text(): h for t, h in zip(ax.get_legend().get_texts(), ax.get_legend().legend_handles)}
    for run in _expected_runs():
        assert run in legend, "run %s missing from the legend %s" % (run, sorted(legend))
        np.testing.assert_allclose(_rgb(legend[run].get_color()), _rgb(colors[run]))
        smoothed = _smoothed(run, 0.6)
        for step in (3, 30, 75, 120, 149):
            if not np.isfinite(smoothed[step]):
                continue
            px, py = ax.transData.transform((STEPS[step], smoothed[step]))
            assert _color_near(img, int(round(px)), height - int(round(py)), _rgb(colors[run])), (
                "no %s-coloured pixel at run %s step %d" % (colors[run], run, step))
    # axis ranges cover every run's data
    lo = min(np.nanmin(loss_curve(OFFSETS[r])) for r in _expected_runs())
    hi = max(np.nanmax(loss_curve(OFFSETS[r])) for r in _expected_runs())
    assert ax.get_ylim()[0] <= lo and ax.get_ylim()[1] >= hi
    assert ax.get_xlim()[0] <= STEPS[0] and ax.get_xlim()[1] >= STEPS[-1]
    # the raw series is drawn faint behind the smoothed one: both lines per run
    lines = [l for l in ax.get_lines() if l.get_linestyle() != "None"]
    faint = [l for l in lines if (l.get_alpha() or 1) < 0.5]
    assert len(faint) == len(lines) - len(faint) == len(_expected_runs())


def test_nan_is_a_marker_at_the_last_finite_value(mixed):
    from tfevents.viewer import plot_scalars, run_colors
    root, _ = mixed
    fig = plot_scalars(root, tags="^loss$", runs="^tbx$", smoothing=0.6)
    ax = fig.axes[0]
    # a run keeps its colour when others are filtered out
    all_runs = ["tbx", "torch", "tf2", "torch/hp"] + (["ours"] if ours_available() else [])
    assert ax.get_legend().legend_handles[0].get_color() == run_colors(all_runs)["tbx"]
    markers = [l for l in ax.get_lines() if l.get_marker() == "X"]
    assert len(markers) == 1
    np.testing.assert_array_equal(markers[0].get_xdata(), [NAN_STEP])
    np.testing.assert_allclose(markers[0].get_ydata(), [_smoothed("tbx", 0.6)[NAN_STEP - 1]])
    assert "NaN" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_inf_markers_and_log_y():
    from types import SimpleNamespace
    from tfevents.viewer import plot_scalars
    y = np.linspace(1, 100, 50)
    y[[10, 20]] = [np.inf, -np.inf]
    s = SimpleNamespace(step=np.arange(50), wall_time=np.arange(50.0), value=y)
    fig = plot_scalars({("r", "t"): s}, smoothing=0.0, logy=True)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    up = [l for l in ax.get_lines() if l.get_marker() == "^"]
    down = [l for l in ax.get_lines() if l.get_marker() == "v"]
    assert [list(up[0].get_xdata()), list(down[0].get_xdata())] == [[10], [20]]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "+inf" in labels and "-inf" in labels
    assert ax.get_ylim()[0] <= 1 and ax.get_ylim()[1] >= 100


def test_relative_and_wall_time_axes(mixed):
    import matplotlib.dates as mdates
    from tfevents.summaries import read_scalars
    from tfevents.viewer import plot_scalars
    root, _ = mixed
    s = read_scalars(root, tags="^loss$", runs="^torch$")[("torch", "loss")]
    ax = plot_scalars({("torch", "loss"): s}, x="relative", smoothing=0).axes[0]
    span = s.wall_time[-1] - s.wall_time[0]
    scale = {"relative time (s)": 1, "relative time (min)": 60, "relative time (h)": 3600}[ax.get_xlabel()]
    line = [l for l in ax.get_lines() if l.get_linestyle() != "None"][0]
    np.testing.assert_allclose(line.get_xdata()[[0, -1]], [0, span / scale])
    ax = plot_scalars({("torch", "loss"): s}, x="wall", smoothing=0).axes[0]
    lo, hi = ax.get_xlim()
    first, last = mdates.date2num((s.wall_time[[0, -1]] * 1e6).astype("datetime64[us]"))
    assert lo <= first + 1e-9 and hi >= last - 1e-9


def test_group_regex_puts_matching_tags_in_one_chart():
    from types import SimpleNamespace
    from tfevents.viewer import plot_scalars
    def series(k):
        return SimpleNamespace(step=np.arange(20), wall_time=np.arange(20.0), value=np.arange(20.0) + k)
    data = {("a", "loss/train"): series(0), ("a", "loss/val"): series(1), ("b", "loss/train"): series(2),
            ("a", "acc"): series(3)}
    fig = plot_scalars(data, group=r"^([^/]+)/", smoothing=0)
    charts = {ax.get_title(): ax for ax in fig.axes if ax.get_visible()}
    assert sorted(charts) == ["acc", "loss"]
    labels = [t.get_text() for t in charts["loss"].get_legend().get_texts()]
    assert sorted(labels) == ["a: loss/train", "a: loss/val", "b: loss/train"]
    styles = {l.get_label(): l.get_linestyle() for l in charts["loss"].get_lines()}
    assert styles["a: loss/train"] == styles["b: loss/train"] != styles["a: loss/val"]
    with pytest.raises(ValueError, match="regex"):
        plot_scalars(data, group="(")


def test_a_million_points_keep_their_extremes():
    from types import SimpleNamespace
    from tfevents.viewer import plot_scalars
    rng = np.random.default_rng(0)
    n = 1_000_000
    y = rng.normal(size=n)
    y[123_457], y[876_543] = 500.0, -400.0
    s = SimpleNamespace(step=np.arange(n), wall_time=np.arange(n) * 0.01, value=y)
    ax = plot_scalars({("big", "noise"): s}, smoothing=0.9).axes[0]
    raw = [l for l in ax.get_lines() if (l.get_alpha() or 1) < 0.5][0]
    ys = np.asarray(raw.get_ydata())
    assert ys.size <= 4 * 2000 + 2 < n
    assert ys.max() == 500.0 and ys.min() == -400.0
    assert 123_457 in raw.get_xdata() and 876_543 in raw.get_xdata()
    assert ax.get_ylim()[0] <= -400 and ax.get_ylim()[1] >= 500


def _tensorboard_distribution(run_dir, tag):
    """What TensorBoard's distribution dashboard computes: its event accumulator (which migrates old
    HistogramProtos to [k, 3] tensors) and its compressor."""
    from tensorboard.backend.event_processing import plugin_event_accumulator
    from tensorboard.plugins.distribution import compressor
    from tensorboard.util import tensor_util
    acc = plugin_event_accumulator.EventAccumulator(run_dir, size_guidance={"tensors": 0})
    acc.Reload()
    events = acc.Tensors(tag)
    return ([e.step for e in events],
            np.array([[v for _, v in compressor.compress_histogram(tensor_util.make_ndarray(e.tensor_proto))]
                      for e in events]))


def test_distributions_equal_tensorboards_for_every_writer(mixed):
    from tfevents.summaries import load_logdir
    from tfevents.viewer import plot_distributions
    from tfevents.viewer.plots.histograms import distribution
    root, _ = mixed
    logdir = load_logdir(root, tags="^weights$", kinds=["histograms"])
    runs = _expected_runs()
    fig = plot_distributions(logdir)
    titles = {ax.get_title(): ax for ax in fig.axes if ax.get_visible()}
    for run in runs:
        series = logdir.histograms[(run, "weights")]
        steps, expected = _tensorboard_distribution(os.path.join(root, run), "weights")
        assert list(series.step) == steps == list(range(0, 150, 10))
        np.testing.assert_allclose(distribution(series), expected, rtol=1e-6, atol=1e-6)
        median = [l for l in titles["weights (%s)" % run].get_lines()][0]
        np.testing.assert_allclose(median.get_ydata(), expected[:, 4], rtol=1e-6, atol=1e-6)


def test_ridge_plot_rebins_without_losing_counts(mixed):
    from tfevents.summaries import load_logdir
    from tfevents.viewer import plot_histograms
    from tfevents.viewer.plots.histograms import rebin
    root, _ = mixed
    logdir = load_logdir(root, tags="^weights$", runs="^tbx$")
    series = logdir.histograms[("tbx", "weights")]
    edges = np.linspace(series.min.min(), series.max.max(), 31)
    counts = rebin(series, edges)
    np.testing.assert_allclose(counts.sum(axis=1), 400)          # 400 values logged per step
    centers = (edges[1:] + edges[:-1]) / 2
    means = (counts * centers).sum(axis=1) / 400
    np.testing.assert_allclose(means, series.step / 50.0, atol=0.3)  # the data's drifting mean
    ax = plot_histograms(logdir).axes[0]
    assert len(ax.collections) == len(series.step)               # one filled ridge per step


def test_image_grid_shows_the_logged_pixels(mixed):
    from tfevents.viewer import plot_images
    root, _ = mixed
    fig = plot_images(root, tags="^sample$")
    shown = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in shown] == ["step 0", "step 50", "step 100"]
    for ax, step in zip(shown, (0, 50, 100)):
        np.testing.assert_array_equal(np.asarray(ax.images[0].get_array()), _image(step).transpose(1, 2, 0))
    fig = plot_images(root, tags="^sample$", steps=[49])
    assert [ax.get_title() for ax in fig.axes if ax.images] == ["step 50"]


def test_pr_curve_plot_draws_the_logged_curve(mixed):
    from tfevents.summaries import load_logdir
    from tfevents.viewer import plot_pr_curves
    root, _ = mixed
    logdir = load_logdir(root, kinds=["pr_curves"])
    rec = logdir.pr_curves[("tbx", "pr")][-1]
    ax = plot_pr_curves(logdir).axes[0]
    (line,) = ax.get_lines()
    np.testing.assert_allclose(line.get_xdata(), rec.data[5])
    np.testing.assert_allclose(line.get_ydata(), rec.data[4])
    assert line.get_label().startswith("tbx") and ax.get_xlabel() == "recall"
    assert 0.4 < np.max(rec.data[4]) <= 1.0


def test_hparams_table_and_parallel_coordinates(mixed):
    from tfevents.viewer import hparams_table, plot_parallel_coordinates
    root, _ = mixed
    names, metrics, rows = hparams_table(root)
    assert sorted(names) == ["layers", "lr", "optimizer"] and metrics == ["hp/accuracy"]
    (row,) = rows
    assert row["run"] == "torch/hp" and row["hparams"]["optimizer"] == "adam"
    assert row["hparams"]["lr"] == pytest.approx(0.01) and row["metrics"]["hp/accuracy"] == pytest.approx(0.875)
    ax = plot_parallel_coordinates(root).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["torch/hp"]
    assert len([t for t in ax.get_xticklabels()]) == 4


def test_graph_summary_matches_tensorflows_graph(mixed):
    from tfevents.viewer import graph_summaries, plot_graph_summary
    root, graph = mixed
    summary = graph_summaries(root)["tf2"]
    assert summary.nodes == graph["nodes"]
    assert dict(summary.op_types) == graph["ops"]
    assert summary.scopes["dense"] >= 4  # MatMul, Const, AddV2, Relu live in name_scope("dense")
    assert len(plot_graph_summary(root).axes) == 2


@pytest.mark.parametrize("ext", ["png", "svg", "pdf"])
def test_plot_command_writes_each_format(mixed, tmp_path, ext, capsys):
    from tfevents.viewer.cli import main
    root, _ = mixed
    out = tmp_path / ("loss." + ext)
    assert main(["plot", root, "-o", str(out), "--tags", "^loss$", "--smoothing", "0.8", "--x", "relative"]) == 0
    data = out.read_bytes()
    assert data.startswith({"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF"}[ext])
    assert "%d runs" % len(_expected_runs()) in capsys.readouterr().out
    if ext == "svg":
        text = data.decode()
        assert all(run in text for run in _expected_runs())
    if ext == "png":
        from PIL import Image
        img = np.asarray(Image.open(out).convert("RGB")).astype(int)
        from tfevents.viewer import run_colors
        colors = run_colors(os.listdir(root) + ["torch/hp"])
        for run in _expected_runs():  # every run's colour is drawn, in a line's worth of pixels
            assert (np.abs(img - _rgb(colors[run])).sum(axis=2) < 30).sum() > 100, run


def test_plot_command_errors(mixed, tmp_path, capsys):
    from tfevents.viewer.cli import main
    root, _ = mixed
    assert main(["plot", root, "-o", str(tmp_path / "x.png"), "--tags", "no_such_tag"]) == 1
    assert "no scalars" in capsys.readouterr().err
    assert main(["plot", root, "-o", str(tmp_path / "x.png"), "--tags", "("]) == 2
    assert "regex" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "missing"), "-o", str(tmp_path / "x.png")]) == 2
    assert main(["plot", root, "-o", str(tmp_path / "x.gif")]) == 2
    with pytest.raises(SystemExit):
        main(["plot", root, "-o", str(tmp_path / "x.png"), "--smoothing", "1.5"])


def test_import_does_not_load_matplotlib():
    code = "import sys, tfevents.viewer, tfevents.viewer.smoothing; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


LITERAL_RUNS = ("lr=$\\alpha_{$", "price $5 and $6", "_private")   # mathtext, money, matplotlib's "not in legend"


@pytest.fixture
def drawn_texts(monkeypatch):
    """Every string Agg draws, as ``(text, drawn as mathtext)``: the real renderer, its calls recorded."""
    from matplotlib.backends.backend_agg import RendererAgg
    drawn = []
    draw_text = RendererAgg.draw_text

    def recording(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        drawn.append((s, ismath))
        return draw_text(self, gc, x, y, s, prop, angle, ismath, mtext)
    monkeypatch.setattr(RendererAgg, "draw_text", recording)
    return drawn


def _visible(text: str) -> str:
    return text.replace("\u200b", "")   # the zero-width space that keeps a leading "_" in the legend


def test_names_with_dollars_and_underscores_are_drawn_as_written(tmp_path, drawn_texts, capsys):
    """`plot` and `report --static` draw each run name literally (no mathtext) and in the legend; the files are
    written (a `$\\alpha_{$` once raised from matplotlib's mathtext parser and wrote nothing)."""
    from tfevents.summaries import SummaryWriter
    from tfevents.viewer.cli import main
    from tfevents.viewer.plots.scalars import scalar_figures
    for i, run in enumerate(LITERAL_RUNS):
        with SummaryWriter(str(tmp_path / "logs" / run)) as w:
            for step in range(5):
                w.add_scalar("loss", 1.0 / (step + 1 + i), step)
                w.add_histogram("weights", np.arange(10.0) + step, step)
    logdir = str(tmp_path / "logs")

    (fig,) = scalar_figures(logdir, tags="loss").values()
    legend = fig.axes[0].get_legend()
    assert sorted(_visible(t.get_text()).replace("\\$", "$") for t in legend.get_texts()) == sorted(LITERAL_RUNS)

    png = tmp_path / "loss.png"
    assert main(["plot", logdir, "-o", str(png), "--tags", "loss"]) == 0
    assert png.read_bytes().startswith(b"\x89PNG")
    drawn = {(_visible(s), ismath) for s, ismath in drawn_texts}
    for run in LITERAL_RUNS:
        assert (run, False) in drawn, (run, sorted(drawn))

    drawn_texts.clear()
    report = tmp_path / "report.html"
    assert main(["report", logdir, "-o", str(report), "--static"]) == 0
    assert report.read_text().count("<img") >= 1 + len(LITERAL_RUNS)   # the scalar chart, a chart per histogram
    drawn = {(_visible(s), ismath) for s, ismath in drawn_texts}
    for run in LITERAL_RUNS:
        assert (run, False) in drawn, (run, sorted(drawn))                       # the legend
        assert ("weights (%s)" % run, False) in drawn, (run, sorted(drawn))      # a histogram's title
