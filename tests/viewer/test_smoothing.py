"""tfevents.viewer: TensorBoard smoothing, min/max downsampling, distribution compression and safe text,
checked against independent computations (pandas, TensorBoard's own compressor, html parsing)."""
import html.parser

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfevents.viewer.plots.histograms import compress, tensorboard_buckets
from tfevents.viewer.reports.safe_html import markdown_to_safe_html, text_to_safe_html
from tfevents.viewer.smoothing import ema, minmax_indices


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
