"""What ``tfevents watch`` draws (``viewer/watch/state.py``), without a terminal: the series equal the offline
reader's, each pass reads only appended bytes into reservoirs of ``samples`` points, a restart (a job re-logging
earlier steps) shows as a problem, and status words are never cut."""
import numpy as np

from tfevents.summaries import SummaryWriter, load_logdir
from tfevents.viewer.smoothing import ema, parse_smoothing, smooth
from tfevents.viewer.watch.state import WatchState
from tfevents.viewer.watch.text import fit_words


def _write(path, steps, suffix=""):
    with SummaryWriter(path, filename_suffix=suffix) as w:
        for s in steps:
            w.add_scalar("loss", 1.0 / (s + 1), s)
            if s % 10 == 0:
                w.add_histogram("weights", np.random.default_rng(s).normal(size=100), s)


def test_lines_are_the_readers_series_smoothed(logdir):
    _write(logdir + "/a", range(300))
    _write(logdir + "/b", range(0, 300, 7))
    state = WatchState(logdir, threads=1)
    state.reload()
    assert state.runs() == ["a", "b"] and state.tags() == ["loss"] and state.tags("^w") == []
    read = load_logdir(logdir).scalars
    for run in ("a", "b"):
        line = state.line(run, "loss", 0.6)
        s = read[(run, "loss")]
        np.testing.assert_array_equal(line.x, s.step)
        np.testing.assert_allclose(line.y, ema(s.value, 0.6))
        assert (line.stats.step, line.stats.last) == (int(s.step[-1]), float(s.value[-1]))
        assert (line.stats.min, line.stats.max) == (float(s.value.min()), float(s.value.max()))
        rel = state.line(run, "loss", 0.6, x="relative")
        assert rel.x[0] >= 0 and np.all(np.diff(rel.x) >= 0)
        for spec in (parse_smoothing("window:5"), parse_smoothing("gaussian:12")):   # watch --smooth: on the x drawn
            np.testing.assert_array_equal(state.line(run, "loss", spec).y, smooth(s.step, s.value, *spec))


def test_memory_is_bounded_and_only_appended_bytes_are_read(logdir):
    _write(logdir + "/a", range(100))
    state = WatchState(logdir, samples=50, threads=1)
    state.reload()
    _write(logdir + "/a", range(100, 5000), suffix=".2")
    state.reload()
    steps, _, _ = state.series("a", "loss")
    assert len(steps) == 50 and steps[-1] == 4999              # a reservoir: 50 points, the last kept
    with state.live.lock:
        run = state.live.runs["a"]
        assert "weights" not in run.series or len(run.series["weights"].reservoir) == 0   # histograms not kept
        offsets = {path: cursor.offset for path, cursor in run.files.items()}
    state.reload()                                              # nothing appended: the cursors stay
    with state.live.lock:
        assert {p: c.offset for p, c in state.live.runs["a"].files.items()} == offsets


def test_a_restart_is_a_problem(logdir):
    _write(logdir + "/a", range(50))
    state = WatchState(logdir, threads=1)
    state.reload()
    assert state.problems == []
    _write(logdir + "/a", range(20, 30), suffix=".restarted")
    state.reload()
    (problem,) = state.problems
    assert problem.kind == "restart" and "loss went back from step 49 to 29" in problem.detail


def test_fit_words_keeps_words_whole():
    words = ["3 runs", "12 tags", "smoothing 0.60", "x: step"]
    assert fit_words(words, 80) == "3 runs  12 tags  smoothing 0.60  x: step"
    assert fit_words(words, 30) == "3 runs  12 tags …"
    assert fit_words(words, 3) == "…"


def test_min_and_max_are_the_whole_series_not_the_sample(logdir, monkeypatch):
    """A 20,000-step series with one spike down and one up: the sample of 1,000 points misses them, the min and max
    shown equal numpy's over every value (read in one pass, where the scanner reduces what it reads, and in several
    passes as the job appends), with the pure-Python scanner too; ties keep the first step, as inspect does."""
    from tfevents.summaries.reader import scan
    rng = np.random.default_rng(7)
    values = rng.uniform(1.0, 2.0, 20000).astype(np.float32)
    values[12345], values[777] = -100.0, 500.0
    values[[3000, 19999]] = np.nan, 1.5
    with SummaryWriter(logdir + "/a") as w:
        for step, v in enumerate(values[:15000]):
            w.add_scalar("loss", float(v), step)
    expected = (float(np.nanmin(values)), float(np.nanmax(values)))
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(scan, "native", None)
        state = WatchState(logdir, samples=1000, threads=1)
        state.reload()
        line = state.line("a", "loss", 0.0)
        assert len(line.x) == 1000 and -100.0 not in line.y and 500.0 not in line.y   # the sample misses both
        assert (line.stats.min, line.stats.max) == (float(np.nanmin(values[:15000])), float(np.nanmax(values[:15000])))
        info, = state.live.tags(["a"], ["loss"])
        assert (info.min_step, info.max_step) == (12345, 777) and info.last == float(values[14999])
    with SummaryWriter(logdir + "/a", filename_suffix=".more") as w:   # the job goes on: a second pass, a new file
        for step in range(15000, 20000):
            w.add_scalar("loss", float(values[step]), step)
    state.reload()
    assert (state.line("a", "loss", 0.0).stats.min, state.line("a", "loss", 0.0).stats.max) == expected


def test_min_and_max_after_a_restart_come_from_the_points_kept(logdir):
    """A restart re-logs steps 50.. (preempting the old ones, which held the spike): the extremes no longer count
    the preempted spike."""
    with SummaryWriter(logdir + "/a") as w:
        for step in range(100):
            w.add_scalar("loss", 1000.0 if step == 70 else 1.0, step)
    state = WatchState(logdir, threads=1)
    state.reload()
    assert state.line("a", "loss", 0.0).stats.max == 1000.0
    with SummaryWriter(logdir + "/a", filename_suffix=".restarted") as w:
        for step in range(50, 120):
            w.add_scalar("loss", 2.0, step)
    state.reload()
    stats = state.line("a", "loss", 0.0).stats
    read = load_logdir(logdir).scalars[("a", "loss")]   # the offline reader applies the same restart rule
    assert (stats.min, stats.max) == (float(read.value.min()), float(read.value.max())) == (1.0, 2.0)
