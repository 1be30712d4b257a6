"""Logdir.summary(): per run and scalar tag, the last, minimum and maximum values with their steps, equal to numpy
on the loaded columns, for runs written by TF1, TF2, tensorboardX, torch and tfevents (NaN values, ties, a
restart, a series of NaN only)."""
import numpy as np
import pytest

from tfevents.summaries import SummaryWriter, load_logdir

pytestmark = pytest.mark.filterwarnings("ignore:.*purged.*:tfevents.summaries.ReadWarning")

KINDS = ("tf1", "tf2", "tbx", "torch")


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    root = tmp_path_factory.mktemp("ours_summary")
    with SummaryWriter(str(root / "run")) as w:
        for step, value in enumerate([3.0, float("nan"), 1.0, 5.0, 1.0, 5.0, 2.0]):
            w.add_scalar("ties_and_nan", value, step * 10)
        for step in range(4):
            w.add_scalar("all_nan", float("nan"), step)
        for step in range(20):
            w.add_scalar("restarted", float(step), step)
    with SummaryWriter(str(root / "run")) as w:   # a restart at step 10: TensorBoard drops 10..19 of the first
        for step in range(10, 15):
            w.add_scalar("restarted", -float(step), step)
    return str(root)


def numpy_summary(step, value):
    """What the summary must say, straight from numpy."""
    out = {"count": len(step), "first_step": step.min(), "last_step": step.max(), "last": value[-1],
           "last_value_step": step[-1]}
    if np.isnan(value).all():
        return dict(out, min=np.nan, min_step=-1, max=np.nan, max_step=-1)
    return dict(out, min=np.nanmin(value), min_step=step[np.nanargmin(value)], max=np.nanmax(value),
                max_step=step[np.nanargmax(value)])


def assert_summary_matches(logdir):
    df = logdir.summary()
    assert len(df) == len(logdir.scalars) > 0
    assert list(df.columns) == ["run", "tag", "count", "first_step", "last_step", "last", "last_value_step", "min",
                                "min_step", "max", "max_step"]
    for row in df.itertuples(index=False):
        s = logdir.scalars[(row.run, row.tag)]
        for name, want in numpy_summary(s.step, s.value).items():
            got = getattr(row, name)
            assert got == want or (np.isnan(want) and np.isnan(got)), (row.run, row.tag, name, got, want)


@pytest.mark.parametrize("kind", KINDS)
def test_summary_of_peer_runs_equals_numpy(peer_logdir, kind):
    assert_summary_matches(load_logdir("%s/%s" % (peer_logdir, kind)))


def test_summary_of_our_runs_equals_numpy(ours):
    logdir = load_logdir(ours)
    assert_summary_matches(logdir)
    df = logdir.summary().set_index("tag")
    assert df.loc["ties_and_nan", "min_step"] == 20 and df.loc["ties_and_nan", "max_step"] == 30   # first of a tie
    assert df.loc["all_nan", "min_step"] == -1 and np.isnan(df.loc["all_nan", "max"])
    assert df.loc["restarted", "last"] == -14.0 and df.loc["restarted", "max"] == 9.0   # after the restart
