"""Ranks: which process of a distributed job writes (writer/ranks.py), and folding rank runs (reader/ranks.py).

Under a real torch.distributed job (gloo, 127.0.0.1, tests/_distributed.py) and under the SLURM, Open MPI,
PMI and torchrun variables set in the environment.
"""
import os
import sys

import numpy as np
import pytest

import _distributed
from tfevents.summaries import SummaryWriter, fold_ranks, read_scalars
from tfevents.summaries.writer import ranks as writer_ranks

LAUNCHER_VARIABLES = [name for pair in writer_ranks.ENV_VARIABLES for name in pair[:2]]


@pytest.fixture
def clean_env(monkeypatch):
    """No launcher variable, and jax hidden: TensorFlow and torch.utils.tensorboard import jax when it is installed
    (it is, for tests/summaries/test_jax_arrays.py), and an imported jax is a source of the rank."""
    for name in LAUNCHER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    return monkeypatch


def _files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


@pytest.fixture
def job(ranks_job):
    """The session's real 2-process torch.distributed job (conftest ``ranks_job``)."""
    return ranks_job


def test_torch_distributed_default_writes_rank_zero_only(job):
    root = os.path.join(job, "default")
    files = _files(root)
    assert len(files) == 1 and "/" not in files[0], files       # one event file, in the logdir itself
    series = read_scalars(root)[(".", "loss")]
    np.testing.assert_array_equal(series.step, _distributed.STEPS)
    np.testing.assert_array_equal(series.value, _distributed.values_of(0))


def test_torch_distributed_all_writes_every_rank_and_folds_to_torch_reductions(job):
    scalars = read_scalars(os.path.join(job, "all"))
    assert sorted(scalars) == [("rank_%d" % r, "loss") for r in range(_distributed.WORLD)]
    for r in range(_distributed.WORLD):
        np.testing.assert_array_equal(scalars[("rank_%d" % r, "loss")].value, _distributed.values_of(r))
    folded = fold_ranks(scalars)
    assert sorted(folded) == [("ranks_max", "loss"), ("ranks_mean", "loss"), ("ranks_min", "loss")]
    torch_mean, torch_min, torch_max = np.load(os.path.join(job, "reduced.npy"))
    by_hand = np.stack([_distributed.values_of(r) for r in range(_distributed.WORLD)])
    for name, from_torch, hand in (("mean", torch_mean, by_hand.mean(0)), ("min", torch_min, by_hand.min(0)),
                                   ("max", torch_max, by_hand.max(0))):
        series = folded[("ranks_" + name, "loss")]
        np.testing.assert_array_equal(series.step, _distributed.STEPS)
        np.testing.assert_array_equal(series.value, from_torch)
        np.testing.assert_array_equal(series.value, hand)


@pytest.mark.parametrize("rank_var,size_var", [pair[:2] for pair in writer_ranks.ENV_VARIABLES])
def test_launcher_variables(clean_env, tmp_path, rank_var, size_var):
    clean_env.setenv(rank_var, "1")
    clean_env.setenv(size_var, "4")
    assert writer_ranks.detect_rank() == (1, 4, writer_ranks.detect_rank().source)
    assert rank_var in writer_ranks.detect_rank().source
    silent = SummaryWriter(str(tmp_path / "zero"))
    silent.add_scalar("loss", 1.0, 1)
    silent.close()
    assert isinstance(silent, SummaryWriter) and not os.path.exists(tmp_path / "zero")
    with SummaryWriter(str(tmp_path / "all"), ranks="all") as w:
        w.add_scalar("loss", 1.0, 1)
    assert [f.split("/")[0] for f in _files(tmp_path / "all")] == ["rank_1"]
    with SummaryWriter(str(tmp_path / "listed"), ranks=[1, 3]) as w:
        w.add_scalar("loss", 1.0, 1)
    with SummaryWriter(str(tmp_path / "unlisted"), ranks=[0, 2]) as w:
        w.add_scalar("loss", 1.0, 1)
    assert [f.split("/")[0] for f in _files(tmp_path / "listed")] == ["rank_1"]
    assert not os.path.exists(tmp_path / "unlisted")


def test_precedence_and_explicit_rank(clean_env, tmp_path):
    clean_env.setenv("SLURM_PROCID", "3")          # torchrun inside a SLURM allocation: RANK is the global rank
    clean_env.setenv("SLURM_NTASKS", "4")
    clean_env.setenv("RANK", "0")
    clean_env.setenv("WORLD_SIZE", "8")
    assert writer_ranks.detect_rank()[:2] == (0, 8)
    assert writer_ranks.detect_rank(rank=5)[:2] == (5, 8)
    assert not os.path.exists(tmp_path / "r")
    SummaryWriter(str(tmp_path / "r"), rank=5).add_scalar("x", 1.0)       # explicit rank 5: silent
    assert not os.path.exists(tmp_path / "r")
    with SummaryWriter(str(tmp_path / "r"), rank=5, ranks="all") as w:
        assert w.get_logdir() == str(tmp_path / "r" / "rank_5")


def test_no_environment_is_rank_zero(clean_env, tmp_path):
    assert writer_ranks.detect_rank()[:2] == (0, None)
    with SummaryWriter(str(tmp_path / "a")) as w:
        assert w.get_logdir() == str(tmp_path / "a")
    with SummaryWriter(str(tmp_path / "b"), ranks="all") as w:
        assert w.get_logdir() == str(tmp_path / "b" / "rank_0")


@pytest.mark.parametrize("env,message", [
    ({"RANK": "one"}, "RANK='one' is not an integer"),
    ({"SLURM_PROCID": "4", "SLURM_NTASKS": "4"}, "SLURM_PROCID=4 is not below SLURM_NTASKS=4"),
    ({"OMPI_COMM_WORLD_RANK": "-1"}, "OMPI_COMM_WORLD_RANK='-1' must be >= 0"),
])
def test_bad_environment_is_a_clear_error(clean_env, tmp_path, env, message):
    for name, value in env.items():
        clean_env.setenv(name, value)
    with pytest.raises(ValueError, match=message):
        SummaryWriter(str(tmp_path / "x"))
    assert not os.path.exists(tmp_path / "x")


@pytest.mark.parametrize("ranks,error", [("some", ValueError), (3, TypeError), ([0, -1], ValueError),
                                         ([True], ValueError)])
def test_bad_ranks_argument(clean_env, tmp_path, ranks, error):
    with pytest.raises(error, match="ranks"):
        SummaryWriter(str(tmp_path / "x"), ranks=ranks)
    assert not os.path.exists(tmp_path / "x")


def test_silent_writer_every_method_returns_at_once(clean_env, tmp_path):
    clean_env.setenv("RANK", "1")
    w = SummaryWriter(str(tmp_path / "run"), max_queue=3, flush_secs=1)
    methods = [name for name in dir(SummaryWriter)
               if not name.startswith("_") and name != "get_logdir" and callable(getattr(w, name))]
    assert {"add_scalar", "add_image", "add_video", "add_embedding", "add_hparams", "flush", "close"} <= set(methods)
    for name in methods:
        assert getattr(w, name)("tag", np.zeros((3, 4, 4)), 1, bogus=True) is None, name
    with w as same:
        assert same is w
    assert w.file_writer is None and w.get_logdir() == str(tmp_path / "run")
    assert list(tmp_path.iterdir()) == []


def test_fold_ranks_matches_numpy_by_hand(clean_env, tmp_path):
    """Three ranks with uneven steps (rank 2 starts late), a NaN, and a run that is not a rank."""
    rng = np.random.default_rng(0)
    logged = {0: {s: float(np.float32(rng.normal())) for s in range(0, 20)},
              1: {s: float(np.float32(rng.normal())) for s in range(0, 20, 2)},
              2: {s: float(np.float32(rng.normal())) for s in range(10, 30)}}
    logged[2][12] = float("nan")
    for rank, points in logged.items():
        with SummaryWriter(str(tmp_path / "exp"), rank=rank, ranks="all") as w:
            for step, value in points.items():
                w.add_scalar("loss", value, step)
    with SummaryWriter(str(tmp_path / "baseline")) as w:
        w.add_scalar("loss", 1.0, 1)
    scalars = read_scalars(str(tmp_path))
    folded = fold_ranks(scalars, statistics=("mean", "min", "max", "count"))
    assert folded[("baseline", "loss")] is scalars[("baseline", "loss")]
    assert sorted(run for run, _ in folded) == ["baseline", "exp/ranks_count", "exp/ranks_max", "exp/ranks_mean",
                                                 "exp/ranks_min"]
    steps = sorted(set().union(*logged.values()))
    for name, reduce in (("mean", np.mean), ("min", np.min), ("max", np.max), ("count", len)):
        series = folded[("exp/ranks_" + name, "loss")]
        np.testing.assert_array_equal(series.step, steps)
        hand = [reduce([points[s] for points in logged.values() if s in points]) for s in steps]
        np.testing.assert_array_equal(series.value, hand)
    assert np.isnan(folded[("exp/ranks_mean", "loss")].value[steps.index(12)])
    with pytest.raises(ValueError, match="statistics"):
        fold_ranks(scalars, statistics=("median",))


def test_fold_ranks_step_logged_twice_keeps_its_last_value():
    from tfevents.summaries import ScalarSeries

    def series(steps, values):
        return ScalarSeries(np.array(steps, np.int64), np.arange(len(steps), dtype=np.float64), np.array(values, float))

    folded = fold_ranks({("a/rank_0", "x"): series([1, 2, 2, 3], [1.0, 5.0, 2.0, 3.0]),
                         ("a/rank_1", "x"): series([2, 1], [4.0, 3.0])})
    mean = folded[("a/ranks_mean", "x")]
    np.testing.assert_array_equal(mean.step, [1, 2, 3])
    np.testing.assert_array_equal(mean.value, [2.0, 3.0, 3.0])
    np.testing.assert_array_equal(mean.wall_time, [1.0, 2.0, 3.0])   # the later of the ranks' wall times
    np.testing.assert_array_equal(folded[("a/ranks_max", "x")].value, [3.0, 4.0, 3.0])
