"""`tfevents plot --aggregate`: each group of 5 seeded runs drawn as its mean line over a shaded band, checked in
pixels of the PNG: the band's tint fills the column between mean - std and mean + std (or min and max) and nothing
outside it, and the line is drawn at the mean."""
import numpy as np
import pytest
from PIL import Image

from tfevents.summaries import SummaryWriter, aggregate
from tfevents.viewer.cli import main
from tfevents.viewer.colors import run_colors
from tfevents.viewer.plots.bands import BAND_ALPHA, plot_aggregate

pytest.importorskip("matplotlib")

SEEDS, STEPS = 5, np.arange(0, 100, 2)
OFFSETS = np.array([0.0, 0.4, 1.0, 2.2, 4.0])   # seed i logs step / 50 + OFFSETS[i]


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    root = tmp_path_factory.mktemp("bands")
    for seed in range(SEEDS):
        with SummaryWriter(str(root / "cfg" / ("seed_%d" % seed))) as w:
            for step in STEPS:
                w.add_scalar("loss", step / 50 + OFFSETS[seed], int(step))
    return str(root)


def _pixels(path):
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB")).astype(int)


def _tint(color):
    """The band's colour on the white axes: ``alpha * color + (1 - alpha) * white``."""
    import matplotlib.colors as mcolors
    rgb = np.array(mcolors.to_rgb(color)) * 255
    return BAND_ALPHA * rgb + (1 - BAND_ALPHA) * 255, rgb


def _column_rows(img, col, rgb, tol=12):
    return np.flatnonzero(np.abs(img[:, col] - rgb).sum(axis=1) <= tol)


@pytest.mark.parametrize("band", ["std", "minmax"])
def test_plot_aggregate_png_has_the_band_between_its_edges(seeds, tmp_path, band):
    out = tmp_path / ("bands-%s.png" % band)
    assert main(["plot", seeds, "--aggregate", r"/seed_\d+$", "--band", band, "--smoothing", "0", "-o", str(out)]) == 0
    img = _pixels(out)
    # the same figure from the API, for where the data lands in pixels (same code, same size: same layout)
    fig = plot_aggregate(seeds, by=r"/seed_\d+$", band=band)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    FigureCanvasAgg(fig).draw()
    (ax,) = [a for a in fig.axes if a.get_visible()]
    height = img.shape[0]
    tint, line = _tint(run_colors(["cfg"])["cfg"])
    values = STEPS[:, None] / 50 + OFFSETS[None, :]
    df = aggregate(seeds, by=r"/seed_\d+$")
    np.testing.assert_allclose(df["std"], np.std(values, axis=1, ddof=1), rtol=1e-6)
    for step in (13, 47, 81):        # between the grid lines of the x ticks
        x = step / 50
        mean, std = x + OFFSETS.mean(), OFFSETS.std(ddof=1)
        lo, hi = (mean - std, mean + std) if band == "std" else (x + OFFSETS.min(), x + OFFSETS.max())
        col = int(round(ax.transData.transform((step, mean))[0]))
        top = height - ax.transData.transform((step, hi))[1]
        bottom = height - ax.transData.transform((step, lo))[1]
        tinted = _column_rows(img, col, tint)
        assert len(tinted) > 0.8 * (bottom - top), "the band does not fill the column at step %d" % step
        assert tinted.min() >= top - 2 and tinted.max() <= bottom + 2, (tinted.min(), tinted.max(), top, bottom)
        assert tinted.min() <= top + 3 and tinted.max() >= bottom - 3     # ... and reaches both edges
        at_mean = height - ax.transData.transform((step, mean))[1]
        drawn = _column_rows(img, col, line, tol=40)
        assert len(drawn) and np.abs(drawn - at_mean).min() <= 2, "no mean line at step %d" % step


def test_without_aggregate_there_is_no_band(seeds, tmp_path):
    """The tint is the band's: the runs drawn one by one leave (almost: antialiased edges) none of it."""
    tint, _ = _tint(run_colors(["cfg"])["cfg"])
    counts = {}
    for name, extra in (("runs", []), ("bands", ["--aggregate", r"/seed_\d+$"])):
        out = tmp_path / (name + ".png")
        assert main(["plot", seeds, "--smoothing", "0", "-o", str(out)] + extra) == 0
        counts[name] = int((np.abs(_pixels(out) - tint).sum(axis=2) <= 12).sum())
    assert counts["bands"] > 5000 and counts["runs"] < counts["bands"] / 100, counts
