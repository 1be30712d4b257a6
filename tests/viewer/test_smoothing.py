"""tfevents.viewer: the smoothings, min/max downsampling, distribution compression and safe text, checked against
independent computations (pandas, scipy, W&B's published TWEMA loop, TensorBoard's own compressor, html parsing);
the report page's smoothing.js against smoothing.py in headless Chromium."""
import html.parser
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _browser import browser, browser_session, console_messages, open_file  # noqa: F401
from tfevents.viewer.plots.histograms import compress, tensorboard_buckets
from tfevents.viewer.reports.safe_html import markdown_to_safe_html, text_to_safe_html
from tfevents.viewer.smoothing import KINDS, Smoothing, ema, minmax_indices, parse_smoothing, smooth


def _random_series(rng, n, nan_frac=0.1):
    y = rng.normal(size=n).cumsum() * 3 + 100
    bad = rng.random(n) < nan_frac
    y[bad] = rng.choice([np.nan, np.inf, -np.inf], size=bad.sum(), p=[0.6, 0.2, 0.2])
    return y


@pytest.mark.parametrize("n", [1, 2, 7, 255, 256, 257, 1000, 20_000])
@pytest.mark.parametrize("weight", [0.0, 0.3, 0.6, 0.9, 0.99, 0.999])
def test_smoothing_equals_pandas_ewm_on_finite_points(n, weight):
    rng = np.random.default_rng(n * 1000 + int(weight * 1000))
    y = _random_series(rng, n)
    got = ema(y, weight)
    finite = np.isfinite(y)
    # non-finite points pass through unchanged (NaN stays NaN, ±inf stays ±inf)
    np.testing.assert_array_equal(got[~finite], y[~finite])
    if finite.any():
        expected = pd.Series(y[finite]).ewm(alpha=1 - weight, adjust=True).mean().to_numpy()
        np.testing.assert_allclose(got[finite], expected, rtol=1e-10, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(float("nan")), st.just(float("inf"))),
                min_size=1, max_size=600),
       st.floats(0.0, 0.999))
def test_smoothing_property_matches_pandas(values, weight):
    y = np.array(values, dtype=np.float64)
    got = ema(y, weight)
    finite = np.isfinite(y)
    if np.all(y == y[0]):  # TensorBoard returns a constant series unchanged
        np.testing.assert_array_equal(got, y)
        return
    np.testing.assert_array_equal(got[~finite], y[~finite])
    if finite.any():
        expected = pd.Series(y[finite]).ewm(alpha=1 - weight, adjust=True).mean().to_numpy()
        np.testing.assert_allclose(got[finite], expected, rtol=1e-8, atol=1e-6)


def test_smoothing_edge_cases_follow_tensorboard():
    const = np.full(10, 3.25)
    np.testing.assert_array_equal(ema(const, 0.9), const)      # constant: unchanged
    y = np.array([1.0, 2.0, np.nan, 4.0])
    np.testing.assert_array_equal(ema(y, 1.0)[[0, 1, 3]], 0.0)  # w == 1: divisor 1, last stays 0
    assert np.isnan(ema(y, 1.0)[2])
    np.testing.assert_array_equal(ema(y, 0.0), y)              # w == 0: raw
    assert ema([], 0.6).size == 0
    with pytest.raises(ValueError, match="smoothing"):
        ema(y, 1.5)


def _wandb_twema(x, y, param):
    """W&B's published TWEMA sample (docs "Smooth line plots"), line for line; VIEWPORT_SCALE = 1000 and rangeOfX
    the series' x range, the two constants the sample leaves open."""
    smoothing_weight = min(param ** 0.5, 0.999)
    range_of_x = max(x) - min(x)
    last_y, debias_weight, out = 0.0, 0.0, []
    for index, y_point in enumerate(y):
        prev_x = index - 1 if index > 0 else 0
        change_in_x = (x[index] - x[prev_x]) / range_of_x * 1000
        adj = smoothing_weight ** change_in_x
        last_y = last_y * adj + y_point
        debias_weight = debias_weight * adj + 1
        out.append(last_y / debias_weight)
    return np.array(out)


@pytest.mark.parametrize("param", [0.0, 0.3, 0.6, 0.99, 1.0])
def test_twema_is_wandbs_published_formula(param):
    rng = np.random.default_rng(int(param * 100))
    x = np.cumsum(rng.integers(1, 30, size=3000)).astype(float)   # uneven steps
    y = _random_series(rng, x.size)
    got = smooth(x, y, "twema", param)
    ok = np.isfinite(y)
    np.testing.assert_array_equal(got[~ok], y[~ok])   # non-finite points pass through, left out of the rest
    np.testing.assert_allclose(got[ok], _wandb_twema(x[ok].tolist(), y[ok].tolist(), param), rtol=1e-12, atol=1e-12)
    # density-aware: the same curve sampled twice as densely smooths to the same line at the shared x
    xs = np.arange(0, 2001, dtype=float)
    curve = np.sin(xs / 150.0) + 3
    dense, sparse = smooth(xs, curve, "twema", 0.6), smooth(xs[::2], curve[::2], "twema", 0.6)
    np.testing.assert_allclose(dense[::2][200:], sparse[200:], rtol=2e-3)


@pytest.mark.parametrize("m", [1, 2, 5, 25, 400])
@pytest.mark.parametrize("kind", ["window", "window-centred"])
def test_windows_equal_pandas_rolling(kind, m):
    rng = np.random.default_rng(m)
    y = _random_series(rng, 2000)
    got = smooth(None, y, kind, m)
    ok = np.isfinite(y)
    np.testing.assert_array_equal(got[~ok], y[~ok])
    expected = pd.Series(y[ok]).rolling(m, center=kind == "window-centred", min_periods=1).mean().to_numpy()
    np.testing.assert_allclose(got[ok], expected, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.5, 7.0])
def test_gaussian_equals_scipy_on_even_x_and_a_weighted_sum_on_uneven_x(sigma):
    from scipy.ndimage import gaussian_filter1d
    rng = np.random.default_rng(int(sigma * 10))
    y = rng.normal(size=500).cumsum()
    h = 2.0                                   # x evenly spaced by h; sigma/h samples in scipy's terms
    x = 100 + h * np.arange(y.size)
    s = sigma / h
    r = np.floor(4 * s)                       # our cut: |dx| <= 4 sigma; scipy's radius int(truncate*s + 0.5)
    truncate = (r + 0.25) / s if r > 0 else 0.1 / s
    assert int(truncate * s + 0.5) == r
    # normalised at the ends: scipy with zeros outside, divided by the same filter of ones
    ref = (gaussian_filter1d(y, s, mode="constant", cval=0.0, truncate=truncate)
           / gaussian_filter1d(np.ones_like(y), s, mode="constant", cval=0.0, truncate=truncate))
    np.testing.assert_allclose(smooth(x, y, "gaussian", sigma), ref, rtol=1e-12, atol=1e-12)
    # uneven x, in any order, with non-finite values: the direct weighted sum over the finite points
    xu = np.cumsum(rng.exponential(3.0, size=400))
    yu = _random_series(rng, xu.size)
    perm = rng.permutation(xu.size)
    got = smooth(xu[perm], yu[perm], "gaussian", sigma)[np.argsort(perm)]
    ok = np.isfinite(yu)
    np.testing.assert_array_equal(got[~ok], yu[~ok])
    d = xu[ok][None, :] - xu[ok][:, None]
    w = np.where(np.abs(d) <= 4 * sigma, np.exp(-0.5 * (d / sigma) ** 2), 0.0)
    np.testing.assert_allclose(got[ok], w @ yu[ok] / w.sum(axis=1), rtol=1e-12, atol=1e-12)


def test_smooth_kinds_and_their_parameters():
    y = np.array([1.0, 5.0, np.nan, 2.0, np.inf, 4.0])
    np.testing.assert_array_equal(smooth(None, y, "ema", 0.6), ema(y, 0.6))   # the default kind is TensorBoard's
    np.testing.assert_array_equal(smooth(None, y), ema(y, 0.6))
    for kind in KINDS:   # raw settings leave the points as they are
        sm = Smoothing.of(kind, 1 if kind.startswith("window") else 0)
        assert sm.raw
        np.testing.assert_array_equal(smooth(np.arange(6.0), y, *sm), y)
    assert smooth(None, [], "window", 3).size == 0
    assert parse_smoothing("twema:0.6") == ("twema", 0.6) and parse_smoothing("window:25") == ("window", 25)
    assert parse_smoothing("Gaussian:2.5") == ("gaussian", 2.5) and parse_smoothing("ema") == ("ema", 0.6)
    assert str(parse_smoothing("window-centred:9")) == "window-centred:9"
    for text, words in [("median:3", "kinds: ema, twema, window, window-centred, gaussian"),
                        ("window:2.5", "integer >= 1"), ("window:0", "integer >= 1"), ("ema:1.5", "in [0, 1]"),
                        ("twema:-0.1", "in [0, 1]"), ("gaussian:-1", ">= 0"), ("gaussian:nan", ">= 0"),
                        ("gaussian", "needs its parameter"), ("window:", "no parameter")]:
        with pytest.raises(ValueError, match=re.escape(words)):
            parse_smoothing(text)
    with pytest.raises(ValueError, match="differ in length"):
        smooth([1.0, 2.0], [1.0], "gaussian", 1.0)


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_minmax_downsampling_keeps_every_buckets_extremes(order):
    rng = np.random.default_rng(7)
    n, buckets = 1_000_000 if order == "sorted" else 200_000, 1000
    x = np.arange(n, dtype=np.float64)
    if order == "shuffled":  # steps out of order (e.g. merged files): the general path
        x = rng.permutation(x)
    y = rng.normal(size=n)
    spikes = rng.choice(n, 25, replace=False)
    y[spikes] = rng.choice([-1, 1], 25) * 1e3
    y[[10, n // 2]] = [np.nan, np.inf]
    d = minmax_indices(x, y, buckets)
    assert d.line.size <= 4 * buckets and np.all(np.diff(d.line) > 0)
    # independent check: per pixel bucket, min and max of the kept points equal those of all points
    frame = pd.DataFrame({"b": np.minimum((x / (n - 1) * buckets).astype(int), buckets - 1), "y": y})
    frame = frame[np.isfinite(frame.y)]
    full = frame.groupby("b").y.agg(["min", "max"])
    kept = frame.loc[frame.index.isin(d.line)].groupby("b").y.agg(["min", "max"])
    pd.testing.assert_frame_equal(kept, full)
    assert set(spikes) <= set(d.line.tolist())
    assert sorted(d.markers.tolist()) == [10, n // 2]


def _tb_compressed(histo_proto):
    """TensorBoard's own path: migrate the HistogramProto to a [k, 3] tensor, then compress it."""
    from tensorboard import data_compat
    from tensorboard.compat.proto import summary_pb2
    from tensorboard.plugins.distribution import compressor
    from tensorboard.util import tensor_util
    value = summary_pb2.Summary.Value(tag="h")
    value.histo.ParseFromString(histo_proto.SerializeToString())
    buckets = tensor_util.make_ndarray(data_compat.migrate_value(value).tensor)
    return np.array([v for _, v in compressor.compress_histogram(buckets)])


@pytest.mark.parametrize("seed", range(6))
def test_distribution_compression_equals_tensorboards(seed):
    from tensorboardX.summary import histogram
    rng = np.random.default_rng(seed)
    values = [rng.normal(size=500), rng.exponential(size=50), np.r_[np.zeros(30), rng.normal(size=3)],
              np.full(10, 2.5), rng.integers(0, 4, size=100).astype(float), rng.normal(size=1)][seed]
    bins = ["auto", 7, 30][seed % 3]
    h = histogram("h", values, bins=bins).value[0].histo
    got = compress(tensorboard_buckets(h.min, h.max, list(h.bucket_limit), list(h.bucket)))
    np.testing.assert_array_equal(got, _tb_compressed(h))


def test_text_script_is_escaped_and_markdown_rendered():
    out = markdown_to_safe_html("# Title\n\n**bold** <script>window.pwned=1</script> [x](javascript:alert(1))"
                                "\n\n<img src=x onerror=alert(1)> ![i](http://example.com/i.png)")
    tags = []

    class P(html.parser.HTMLParser):
        def handle_starttag(self, tag, attrs):
            tags.append((tag, dict(attrs)))
    P().feed(out)
    assert ("h1", {}) in tags and ("strong", {}) in tags
    assert all(t != "script" for t, _ in tags)
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in out
    assert all("onerror" not in a and not a.get("href", "").startswith("javascript") for _, a in tags)
    assert all("src" not in a for t, a in tags if t == "img")  # never fetch from a network
    table = text_to_safe_html(np.array([["a", "<b>x</b>"], ["*c*", "<script>"]], dtype=object))
    assert table.count("<tr>") == 2 and "<em>c</em>" in table and "&lt;script&gt;" in table


SMOOTH_JS = """
const [x, y, kind, param] = arguments;
const num = v => (typeof v === "string" ? Number(v) : v);
const out = window.__tfe.smoothing.smooth(Float64Array.from(x, num), Float64Array.from(y, num), kind, param);
return Array.from(out, String);
"""


def test_page_smoothings_equal_pythons(browser, tmp_path):
    """The page's smoothing.js, evaluated in headless Chromium, gives smoothing.py's numbers (to float64 rounding)
    for every kind on the same inputs; a report made with ``smooth="twema:0.6"`` starts on that kind and draws it."""
    from tfevents.summaries import SummaryWriter
    from tfevents.viewer.reports.interactive.page import write_interactive_report
    rng = np.random.default_rng(3)
    steps = np.cumsum(rng.integers(1, 9, size=300))
    with SummaryWriter(str(tmp_path / "logs" / "run<b>")) as w:
        for s, v in zip(steps, rng.normal(size=steps.size).cumsum()):
            w.add_scalar("loss", float(v), int(s))
    report = write_interactive_report(str(tmp_path / "logs"), str(tmp_path / "r.html"), smooth="twema:0.6")
    open_file(browser, report)
    assert browser.execute_script("return document.getElementById('smoothing-kind').value") == "twema"
    assert float(browser.execute_script("return document.getElementById('smoothing').value")) == 0.6
    x = np.r_[steps[:150], steps[150:] + 0.5].astype(float)          # uneven, with non-finite values
    y = _random_series(rng, x.size)
    shuffled = rng.permutation(x.size)
    as_js = [v if np.isfinite(v) else str(v).replace("inf", "Infinity").replace("nan", "NaN") for v in y]
    cases = [("ema", 0.6), ("ema", 0.0), ("twema", 0.6), ("twema", 0.95), ("window", 1), ("window", 7),
             ("window-centred", 8), ("window-centred", 25), ("gaussian", 0.0), ("gaussian", 3.0),
             ("gaussian", 40.0)]
    for kind, param in cases:
        for xs, ys, js_y in ((x, y, as_js), (x[shuffled], y[shuffled], [as_js[i] for i in shuffled])):
            got = np.array([float(v) for v in browser.execute_script(SMOOTH_JS, xs.tolist(), js_y, kind, param)])
            want = smooth(xs, ys, kind, param)
            np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
            np.testing.assert_array_equal(got[~np.isfinite(want)], want[~np.isfinite(want)])
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=0, err_msg="%s:%s" % (kind, param))
    # the chart draws Python's twema of the run
    from tfevents.summaries import load_logdir
    series = load_logdir(str(tmp_path / "logs")).scalars[("run<b>", "loss")]
    data = browser.execute_script("const c = window.__tfe.charts[0]; return c.u.data.map(a => Array.from(a));")
    xs_drawn, drawn = np.array(data[0]), np.array([np.nan if v is None else v for v in data[2]])
    want = smooth(series.step, series.value, "twema", 0.6)[np.searchsorted(series.step, xs_drawn)]
    np.testing.assert_allclose(drawn, want, rtol=1e-12)
    # switching the kind redraws with the other smoothing; the slider follows the kind
    browser.execute_script("const s = document.getElementById('smoothing-kind'); s.value = 'window';"
                           "s.dispatchEvent(new Event('change'));")
    assert browser.execute_script("return document.getElementById('smoothing').max") == "200"
    data = browser.execute_script("const c = window.__tfe.charts[0]; return c.u.data.map(a => Array.from(a));")
    want = smooth(None, series.value, "window", 10)[np.searchsorted(series.step, np.array(data[0]))]
    np.testing.assert_allclose(np.array(data[2], dtype=float), want, rtol=1e-12)
    assert console_messages(browser) == []


def test_cli_smooth_option(tmp_path, capsys):
    """``export --smooth window:3`` adds a ``smoothed`` column equal to smoothing.py's; a bad kind or parameter and
    ``--smooth`` beside ``--smoothing`` exit 2 naming the problem."""
    from tfevents.summaries import SummaryWriter, load_logdir
    from tfevents.viewer.cli import main
    rng = np.random.default_rng(5)
    for run, n in (("a", 40), ("b", 25)):
        with SummaryWriter(str(tmp_path / "logs" / run)) as w:
            for s, v in zip(range(0, 3 * n, 3), rng.normal(size=n).cumsum()):
                w.add_scalar("loss", float(v), s)
                w.add_scalar("samples", float(s * 32), s)
    logs, out, plain = str(tmp_path / "logs"), str(tmp_path / "s.csv"), str(tmp_path / "p.csv")
    assert main(["export", logs, "-o", out, "--smooth", "window:3"]) == 0
    assert main(["export", logs, "-o", plain]) == 0
    table, plain_table = pd.read_csv(out), pd.read_csv(plain)
    pd.testing.assert_frame_equal(table.drop(columns="smoothed"), plain_table)   # the long table, plus one column
    for (run, tag), s in load_logdir(logs).scalars.items():
        rows = table[(table.run == run) & (table.tag == tag)]
        np.testing.assert_array_equal(rows.smoothed.to_numpy(), smooth(s.step, s.value, "window", 3))
    # on --x TAG the smoothing runs on that x (gaussian's sigma in its units)
    assert main(["export", logs, "-o", out, "--tags", "loss", "--x", "samples", "--smooth", "gaussian:100"]) == 0
    table = pd.read_csv(out)
    s = load_logdir(logs).scalars[("a", "loss")]
    rows = table[table.run == "a"]
    np.testing.assert_array_equal(rows.smoothed.to_numpy(), smooth(rows.x.to_numpy(), s.value, "gaussian", 100))
    capsys.readouterr()
    for argv, words in [(["export", logs, "-o", out, "--smooth", "median:3"], "unknown smoothing kind 'median' "
                         "(kinds: ema, twema, window, window-centred, gaussian)"),
                        (["export", logs, "-o", out, "--smooth", "window:0"], "an integer >= 1, got '0'"),
                        (["plot", logs, "-o", str(tmp_path / "p.png"), "--smooth", "twema:2"], "in [0, 1], got '2'"),
                        (["report", logs, "-o", str(tmp_path / "r.html"), "--smooth", "twema:0.6", "--smoothing",
                          "0.5"], "not allowed with argument"),
                        (["watch", logs, "--smoothing", "0.5", "--smooth", "window:3"], "not allowed with argument")]:
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2 and words in capsys.readouterr().err
    assert main(["export", logs, "-o", out, "--summary", "--smooth", "window:3"]) == 2
    assert "--smooth adds a smoothed column to the long table" in capsys.readouterr().err


@pytest.mark.parametrize("spec", ["window-centred:5", "twema:0.9", "gaussian:6"])
def test_plot_draws_the_chosen_smoothing(spec):
    """``plot_scalars(smooth=...)``: the bold line is smoothing.py's on the chart's x (steps), the raw line behind."""
    import matplotlib
    matplotlib.use("Agg")
    from types import SimpleNamespace
    from tfevents.viewer.plots.scalars import plot_scalars
    rng = np.random.default_rng(11)
    step = np.cumsum(rng.integers(1, 5, size=200))
    s = SimpleNamespace(step=step, wall_time=1e9 + step * 0.5, value=rng.normal(size=step.size).cumsum())
    fig = plot_scalars({("run", "loss"): s}, smooth=spec, max_points=1000)
    raw, line = fig.axes[0].lines[:2]
    np.testing.assert_array_equal(raw.get_ydata(), s.value)
    np.testing.assert_array_equal(line.get_ydata(), smooth(step, s.value, *parse_smoothing(spec)))
