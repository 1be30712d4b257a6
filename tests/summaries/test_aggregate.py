"""tfevents.summaries.aggregate against tensorboard-reducer (same steps; its outer join for the exact alignment) and
against numpy on the loaded columns (interpolated and binned alignment; runs of different lengths, a restarted run,
NaN values, a group of one run); the event files of ``write=`` read back by a real TensorBoard server."""
import os
import re
import warnings

import numpy as np
import pytest

from tfevents.summaries import SummaryWriter, aggregate, load_logdir
from tfevents.summaries.compare import group_runs

from _tensorboard import TensorBoardServer

reducer_load = pytest.importorskip("tensorboard_reducer.load", reason="tensorboard-reducer is the reference "
                                   "(the test extra)")
reducer_reduce = pytest.importorskip("tensorboard_reducer.reduce")
reducer_write = pytest.importorskip("tensorboard_reducer.write")

pytestmark = pytest.mark.filterwarnings("ignore:.*purged.*:tfevents.summaries.ReadWarning")

STATS = ("mean", "std", "min", "max", "median", "count")
TAGS = ("loss", "acc", "val/loss")
GROUPS = ("lr0.1", "lr0.01")
SEEDS = 5


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    """Two groups of 5 seeds, every run logging the same steps of three tags; one NaN in lr0.1/seed_2's loss."""
    root = tmp_path_factory.mktemp("seeds")
    rng = np.random.default_rng(26)
    for group in GROUPS:
        for seed in range(SEEDS):
            with SummaryWriter(str(root / group / ("seed_%d" % seed))) as w:
                for step in range(0, 200, 5):
                    for tag in TAGS:
                        value = float(rng.normal())
                        if (group, seed, tag, step) == ("lr0.1", 2, "loss", 50):
                            value = float("nan")
                        w.add_scalar(tag, value, step)
    return str(root)


def _reducer(dirs, **load_options):
    events = reducer_load.load_tb_events(dirs, **load_options)
    return events, reducer_reduce.reduce_events(events, list(STATS))


def _assert_equal_to(ours, steps, expected):
    """``ours`` (one (group, tag) of our DataFrame) has ``steps`` and ``expected[stat]`` (to float64 rounding)."""
    np.testing.assert_array_equal(ours["step"].to_numpy(), steps)
    for stat in STATS:
        got, want = ours[stat].to_numpy(dtype=np.float64), np.asarray(expected[stat], dtype=np.float64)
        if stat == "count":
            np.testing.assert_array_equal(got, want, err_msg=stat)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15, equal_nan=True, err_msg=stat)


def test_same_steps_equal_tensorboard_reducer(seeds):
    df = aggregate(seeds, by=r"/seed_\d+$")
    assert sorted(df.attrs["groups"]) == sorted(GROUPS)
    assert set(df.attrs["align"].values()) == {"exact"}
    for group in GROUPS:
        dirs = [os.path.join(seeds, group, "seed_%d" % s) for s in range(SEEDS)]
        assert df.attrs["groups"][group] == ["%s/seed_%d" % (group, s) for s in range(SEEDS)]
        _, reduced = _reducer(dirs)
        for tag in TAGS:
            ours = df[(df.group == group) & (df.tag == tag)]
            _assert_equal_to(ours, reduced["mean"][tag].index.to_numpy(),
                             {stat: reduced[stat][tag].to_numpy() for stat in STATS})
    nan_step = df[(df.group == "lr0.1") & (df.tag == "loss") & (df.step == 50)]
    assert int(nan_step["count"].iloc[0]) == SEEDS - 1     # the NaN is skipped, as pandas skips it


def test_the_regex_first_group_and_a_callable_name_groups(seeds):
    by_group = aggregate(seeds, by=r"^(lr[\d.]+)/", tags="^acc$", stats=("mean",))
    by_removal = aggregate(seeds, by=r"/seed_\d+$", tags="^acc$", stats=("mean",))
    by_callable = aggregate(seeds, by=lambda run: run.split("/")[0], tags="^acc$", stats=("mean",))
    assert by_group.equals(by_removal) and by_callable.equals(by_removal)
    only_one = aggregate(seeds, by=lambda run: "x" if run.startswith("lr0.01/") else None, tags="^acc$")
    assert set(only_one.group) == {"x"} and set(only_one["count"]) == {SEEDS}


def test_a_regex_that_matches_no_run_warns_and_leaves_each_run_alone(seeds):
    runs = ["lr0.1/seed_0", "lr0.1/seed_1", "solo"]
    message = "by=%r matches none of the 3 runs (lr0.1/seed_0, lr0.1/seed_1, solo): each run is a group of its own"
    with pytest.warns(UserWarning, match=re.escape(message % r"/sed_\d+$")):
        assert group_runs(runs, r"/sed_\d+$") == {run: [run] for run in runs}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert group_runs(runs, r"/seed_\d+$") == {"lr0.1": ["lr0.1/seed_0", "lr0.1/seed_1"], "solo": ["solo"]}
        assert group_runs([], r"/sed_\d+$") == {}
    with pytest.warns(UserWarning, match="matches none of the %d runs" % (len(GROUPS) * SEEDS)):
        df = aggregate(seeds, by=r"/sed_\d+$", tags="^acc$", stats=("count",))
    assert set(df["count"]) == {1} and len(df.attrs["groups"]) == len(GROUPS) * SEEDS


def test_rank_sub_runs_fold_into_their_run(tmp_path):
    """``by=r"/rank_\\d+$"``: the sub-runs ``<run>/rank_<N>`` of a distributed job become the run ``<run>``."""
    for run in ("a", "b"):
        for rank in range(3):
            with SummaryWriter(str(tmp_path / run / ("rank_%d" % rank))) as w:
                for step in range(10):
                    w.add_scalar("loss", float(rank * 10 + step), step)
    df = aggregate(str(tmp_path), by=r"/rank_\d+$")
    assert df.attrs["groups"] == {"a": ["a/rank_0", "a/rank_1", "a/rank_2"], "b": ["b/rank_0", "b/rank_1", "b/rank_2"]}
    a = df[df.group == "a"]
    np.testing.assert_array_equal(a["mean"], np.arange(10) + 10.0)
    np.testing.assert_array_equal(a["min"], np.arange(10.0))


# ---------------------------------------------------------------- runs that log different steps


@pytest.fixture(scope="module")
def ragged(tmp_path_factory):
    """Group g: s0 every 2 steps to 40; s1 every 5 from 5 to 60; s2 every 3 to 30, restarted at 15 up to 45 (its
    second file re-logs 15..30 with other values); s3 every 4 to 48 with NaN values. Group solo: one run."""
    root = tmp_path_factory.mktemp("ragged")
    rng = np.random.default_rng(7)

    def log(run, steps, values=None):
        with SummaryWriter(str(root / run)) as w:
            for i, step in enumerate(steps):
                w.add_scalar("loss", float(rng.normal() if values is None else values[i]), int(step))
                if step % 10 == 0:
                    w.add_scalar("rare", float(rng.normal()), int(step))

    log("g/s0", range(0, 41, 2))
    log("g/s1", range(5, 61, 5))
    log("g/s2", range(0, 31, 3))
    log("g/s2", range(15, 46, 3), values=np.full(11, 100.0) + np.arange(11))   # the restart
    s3 = rng.normal(size=13)
    s3[[0, 5, 6]] = np.nan
    log("g/s3", range(0, 49, 4), values=s3)
    log("solo/s0", range(0, 20))
    return str(root)


def _loaded(ragged):
    """{(group, tag): [(step, value) columns of each run]} as the reader loads them (values widened to float64,
    as aggregate computes: the reader keeps simple_values as float32)."""
    logdir = load_logdir(ragged)
    out = {}
    for (run, tag), s in sorted(logdir.scalars.items()):
        out.setdefault((run.split("/")[0], tag), []).append((s.step, s.value.astype(np.float64)))
    return out


def _numpy_stats(matrix):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return {"mean": np.nanmean(matrix, 0), "std": np.nanstd(matrix, 0, ddof=1), "min": np.nanmin(matrix, 0),
                "max": np.nanmax(matrix, 0), "median": np.nanmedian(matrix, 0),
                "count": np.sum(~np.isnan(matrix), 0)}


def test_the_restart_is_applied_before_aggregating(ragged):
    s2 = load_logdir(ragged, runs="^g/s2$").scalars[("g/s2", "loss")]
    np.testing.assert_array_equal(s2.step, list(range(0, 15, 3)) + list(range(15, 46, 3)))
    assert (s2.value[s2.step >= 15] >= 100).all()


def test_interpolated_alignment_equals_numpy(ragged):
    df = aggregate(ragged, by=r"/s\d$")
    assert df.attrs["align"] == {("g", "loss"): "interp", ("g", "rare"): "interp",
                                 ("solo", "loss"): "exact", ("solo", "rare"): "exact"}
    for (group, tag), columns in _loaded(ragged).items():
        union = np.unique(np.concatenate([s for s, _ in columns]))
        rows = []
        for s, v in columns:
            s, v = s[~np.isnan(v)], v[~np.isnan(v)]
            inside = (union >= s.min()) & (union <= s.max())
            rows.append(np.where(inside, np.interp(union, s, v), np.nan))
        ours = df[(df.group == group) & (df.tag == tag)]
        _assert_equal_to(ours, union, _numpy_stats(np.array(rows)))
    solo = df[(df.group == "solo") & (df.tag == "loss")]
    assert set(solo["count"]) == {1} and solo["std"].isna().all()
    assert (solo["mean"] == solo["median"]).all()


def test_binned_alignment_equals_numpy(ragged):
    bins = 7
    df = aggregate(ragged, by=r"/s\d$", align="bins", bins=bins)
    for (group, tag), columns in _loaded(ragged).items():
        lo, hi = min(s.min() for s, _ in columns), max(s.max() for s, _ in columns)
        edges = np.linspace(lo, hi, bins + 1)
        matrix = np.full((len(columns), bins), np.nan)
        logged = np.zeros(bins, bool)
        for r, (s, v) in enumerate(columns):
            for i in range(bins):
                inside = (s >= edges[i]) & ((s < edges[i + 1]) | ((i == bins - 1) & (s == hi)))
                logged[i] |= inside.any()
                if (inside & ~np.isnan(v)).any():
                    matrix[r, i] = np.nanmean(v[inside])
        ours = df[(df.group == group) & (df.tag == tag)]
        _assert_equal_to(ours, np.ceil(edges[:-1])[logged].astype(np.int64),
                         {k: a[logged] for k, a in _numpy_stats(matrix).items()})


def test_exact_alignment_equals_tensorboard_reducers_outer_join(ragged):
    """tensorboard-reducer on runs of different steps (``strict_steps=False, min_runs_per_step=1``: every step any
    run logged; ``keep-last`` for the restarted run's re-logged steps, here what TensorBoard keeps)."""
    df = aggregate(ragged, by=r"/s\d$", align="exact", tags="^loss$")
    dirs = [os.path.join(ragged, "g", r) for r in ("s0", "s1", "s2", "s3")]
    _, reduced = _reducer(dirs, strict_steps=False, handle_dup_steps="keep-last", min_runs_per_step=1)
    # the reducer keeps a step only where a value was logged; all-NaN steps are the only difference in rows
    index = reduced["mean"]["loss"].index.to_numpy()
    order = np.argsort(index)
    _assert_equal_to(df[(df.group == "g") & (df.tag == "loss")], index[order],
                     {stat: reduced[stat]["loss"].to_numpy()[order] for stat in STATS})


def test_hparams_name_the_groups(tmp_path):
    for i, (lr, opt) in enumerate([(0.1, "adam"), (0.1, "adam"), (0.01, "adam"), (0.1, "sgd")]):
        with SummaryWriter(str(tmp_path / ("trial%d" % i))) as w:
            w.add_hparams({"lr": lr, "opt": opt, "seed": i}, {"final": float(i)}, global_step=0)
        with SummaryWriter(str(tmp_path / ("trial%d" % i) / "train")) as w:   # metrics in a sub-run
            for step in range(5):
                w.add_scalar("loss", float(i + step), step)
    with SummaryWriter(str(tmp_path / "no_hparams")) as w:
        w.add_scalar("loss", 1.0, 0)
    with pytest.warns(UserWarning, match="no_hparams"):
        df = aggregate(str(tmp_path), by=["lr", "opt"], tags="^loss$")
    assert df.attrs["groups"] == {"lr=0.01,opt=adam": ["trial2/train"], "lr=0.1,opt=adam": ["trial0/train",
                                  "trial1/train"], "lr=0.1,opt=sgd": ["trial3/train"]}
    both = df[df.group == "lr=0.1,opt=adam"]
    np.testing.assert_array_equal(both["mean"], np.arange(5) + 0.5)


def test_bad_options_are_named(seeds):
    with pytest.raises(ValueError, match="unknown statistic.*'mode'"):
        aggregate(seeds, by="seed", stats=("mean", "mode"))
    with pytest.raises(ValueError, match="bins=N"):
        aggregate(seeds, by="seed", align="bins")
    with pytest.raises(ValueError, match="align must be"):
        aggregate(seeds, by="seed", align="nearest")
    with pytest.raises(ValueError, match="by is not a valid regex"):
        aggregate(seeds, by="seed(")
    with pytest.raises(TypeError, match="by must be"):
        aggregate(seeds, by=3)
    with pytest.raises(ValueError, match="cannot name a run directory"):
        aggregate(seeds, by=lambda run: "../outside", tags="^acc$", write=str(seeds) + "-out")
    with pytest.raises(ValueError, match="local directory"):
        aggregate(seeds, by="seed", tags="^acc$", write="s3://bucket/reduced")
    empty = aggregate(seeds, by="seed", tags="^no such tag$")
    assert list(empty.columns) == ["group", "tag", "step", *STATS] and len(empty) == 0


# ---------------------------------------------------------------- write=


def test_written_runs_match_tensorboard_reducers_and_tensorboard_serves_them(seeds, tmp_path):
    out = tmp_path / "ours"
    df = aggregate(seeds, by=r"/seed_\d+$", write=str(out))
    # TensorBoard (which takes seconds to start) starts now, while the checks before its own run
    with TensorBoardServer(str(out), timeout=90) as server:
        # tensorboard-reducer writes the same runs (names and values) for one group
        group_dirs = [os.path.join(seeds, "lr0.01", "seed_%d" % s) for s in range(SEEDS)]
        _, reduced = _reducer(group_dirs)
        reducer_write.write_tb_events(reduced, str(tmp_path / "theirs" / "lr0.01"))
        theirs = load_logdir(str(tmp_path / "theirs")).scalars
        ours = load_logdir(str(out)).scalars
        assert {k for k in ours if k[0].startswith("lr0.01-")} == set(theirs)
        for key, series in theirs.items():
            np.testing.assert_array_equal(ours[key].step, series.step)
            np.testing.assert_array_equal(ours[key].value, series.value, err_msg=str(key))
        with pytest.raises(FileExistsError, match="overwrite=True"):
            aggregate(seeds, by=r"/seed_\d+$", write=str(out))

        expected = {}
        for group in GROUPS:
            for tag in TAGS:
                rows = df[(df.group == group) & (df.tag == tag)]
                steps = rows["step"].to_numpy()
                for stat in set(STATS) - {"std"}:
                    expected[("%s-%s" % (group, stat), tag)] = (steps, rows[stat].to_numpy())
                expected[("%s-mean+std" % group, tag)] = (steps, (rows["mean"] + rows["std"]).to_numpy())
                expected[("%s-mean-std" % group, tag)] = (steps, (rows["mean"] - rows["std"]).to_numpy())
        server.wait_for("the aggregated runs", lambda: len(server.json("/data/plugin/scalars/tags")) == 14)
        for (run, tag), (steps, values) in expected.items():
            points = server.json("/data/plugin/scalars/scalars", run=run, tag=tag)
            np.testing.assert_array_equal([p[1] for p in points], steps)
            np.testing.assert_array_equal(np.array([p[2] for p in points], np.float64),
                                          values.astype(np.float32).astype(np.float64), err_msg="%s %s" % (run, tag))
