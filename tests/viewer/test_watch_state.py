"""What ``tfevents watch`` draws (``viewer/watch/state.py``), without a terminal: the series equal the offline
reader's, each pass reads only appended bytes into reservoirs of ``samples`` points, a restart (a job re-logging
earlier steps) shows as a problem, and status words are never cut."""
import numpy as np

from tfevents.summaries import SummaryWriter, load_logdir
from tfevents.viewer.smoothing import smooth
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
        np.testing.assert_allclose(line.y, smooth(s.value, 0.6))
        assert (line.stats.step, line.stats.last) == (int(s.step[-1]), float(s.value[-1]))
        assert (line.stats.min, line.stats.max) == (float(s.value.min()), float(s.value.max()))
        rel = state.line(run, "loss", 0.6, x="relative")
        assert rel.x[0] >= 0 and np.all(np.diff(rel.x) >= 0)


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
