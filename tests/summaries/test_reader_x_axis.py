"""Scalars on another x axis (``summaries/reader/x_axis.py``): each point takes the x its run logged for the x tag
at its step, interpolated between the tag's logged steps, never extrapolated, the others dropped and counted; and
``aggregate(x=...)`` aligning runs on that x as ``np.interp`` onto the union of x values."""
import numpy as np
import pytest

from _batch_runs import BATCHES, SAMPLES, write_batch_runs, write_sparse_run

from tfevents.summaries import aggregate, load_logdir
from tfevents.summaries.compare import aggregate_columns
from tfevents.summaries.reader.x_axis import scalars_on_x, series_x, x_at_steps


def test_x_logged_at_the_same_step_is_taken_as_is():
    step = np.array([0, 1, 2, 7])
    x_value = np.array([0.1, 1e15 + 3, 2.7, 0.3])   # not monotonic, not representable by interpolation
    assert np.array_equal(x_at_steps(step, step, x_value), x_value)


def test_x_logged_every_10_steps_is_interpolated_inside_its_range_only():
    step = np.arange(60)
    x_step = np.arange(5, 46, 10)
    x_value = 8.0 * x_step
    x = x_at_steps(step, x_step, x_value)
    inside = (step >= 5) & (step <= 45)
    assert np.array_equal(x[inside], 8.0 * step[inside])
    assert np.isnan(x[~inside]).all()           # never extrapolated: 19 points without an x


def test_x_tag_repeated_steps_keep_the_last_and_non_finite_values_are_not_used():
    x = x_at_steps(np.array([0, 1, 2, 3, 4]), np.array([0, 2, 2, 3, 4]), np.array([0.0, 5.0, 2.0, np.nan, 4.0]))
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0, 3.0, 4.0])
    assert np.isnan(x_at_steps(np.array([1]), np.zeros(0, np.int64), np.zeros(0))).all()


def test_scalars_on_x_drops_and_counts(tmp_path):
    write_batch_runs(tmp_path)
    write_sparse_run(tmp_path)
    scalars = load_logdir(str(tmp_path)).scalars
    on = scalars_on_x({k: s for k, s in scalars.items() if k[1] == "loss"}, "samples_seen", scalars)
    assert on.dropped == {("sparse", "loss"): 19}
    assert on.total_dropped == 19
    np.testing.assert_array_equal(on.series[("sparse", "loss")].step, np.arange(5, 46))
    np.testing.assert_array_equal(on.x[("sparse", "loss")], 8.0 * np.arange(5, 46))
    for run, bs in BATCHES.items():
        np.testing.assert_array_equal(on.x[(run, "loss")], scalars[(run, "samples_seen")].value)
        assert on.x[(run, "loss")][-1] == SAMPLES
    gone = scalars_on_x({("bs32", "loss"): scalars[("bs32", "loss")]}, "tokens", scalars)
    assert gone.series == {} and gone.dropped == {("bs32", "loss"): SAMPLES // 32 + 1}
    s = scalars[("bs32", "loss")]
    np.testing.assert_array_equal(series_x(s, "relative"), s.wall_time - s.wall_time[0])


def test_aggregate_on_x_equals_np_interp_onto_the_union_of_x_values(tmp_path):
    write_batch_runs(tmp_path)
    write_sparse_run(tmp_path)
    scalars = load_logdir(str(tmp_path)).scalars
    df = aggregate(str(tmp_path), by=lambda run: "all", tags="^loss$", x="samples_seen", stats=("mean", "count"))
    assert list(df.columns) == ["group", "tag", "x", "mean", "count"]
    assert df.attrs["x"] == "samples_seen" and df.attrs["dropped"] == {("all", "loss"): 19}
    xs, ys = [], []
    for run in ("bs32", "bs64", "sparse"):
        x = x_at_steps(scalars[(run, "loss")].step, scalars[(run, "samples_seen")].step,
                       scalars[(run, "samples_seen")].value)
        keep = ~np.isnan(x)
        xs.append(x[keep])
        ys.append(scalars[(run, "loss")].value[keep].astype(np.float64))
    union = np.unique(np.concatenate(xs))
    matrix = np.full((3, len(union)), np.nan)
    for r, (x, y) in enumerate(zip(xs, ys)):
        inside = (union >= x[0]) & (union <= x[-1])
        matrix[r, inside] = np.interp(union[inside], x, y)
    np.testing.assert_array_equal(df["x"].to_numpy(), union)
    np.testing.assert_allclose(df["mean"].to_numpy(), np.nanmean(matrix, axis=0), rtol=1e-15)
    np.testing.assert_array_equal(df["count"].to_numpy(), (~np.isnan(matrix)).sum(axis=0))
    # a Logdir already loaded and a tag filter that leaves the x tag out give the same table
    table = aggregate_columns(load_logdir(str(tmp_path)), lambda run: "all", "^loss$", ("mean", "count"),
                              x="samples_seen")
    np.testing.assert_array_equal(table.series("all", "loss")["x"], union)
    assert len(table) == len(union)
    with pytest.raises(ValueError, match="write= needs x='step'"):
        aggregate(str(tmp_path), by=lambda run: "all", x="samples_seen", write=str(tmp_path / "out"))
