"""``LiveLogdir(choose=...)``: after each pass the read API shows only the runs ``choose`` names (what ``tfevents
serve --where`` and archived runs build on), while ``every=True`` still lists them all for the choice itself."""
import numpy as np

from tfevents.summaries import SummaryWriter
from tfevents.summaries.live.loader import LiveLogdir


def _write(root, run, values, image=False):
    with SummaryWriter(str(root / run)) as w:
        for step, v in enumerate(values):
            w.add_scalar("loss", v, step)
        if image:
            w.add_image("img", np.zeros((3, 4, 4), np.uint8), 0)


def test_choose_limits_the_read_api_to_the_chosen_runs(tmp_path):
    _write(tmp_path, "a", [3.0, 1.0])
    _write(tmp_path, "b", [0.5, 0.25], image=True)
    seen = []

    def best_loss_below_one(live):
        seen.append(live.run_names(every=True))
        return [i.run for i in live.tags(every=True) if i.tag == "loss" and i.min < 1.0]

    live = LiveLogdir(str(tmp_path), choose=best_loss_below_one)
    live.reload()
    assert seen == [["a", "b"]] and live.chosen == {"b"}
    assert live.run_names() == ["b"] and [name for name, _ in live.run_starts()] == ["b"]
    assert {(i.run, i.tag) for i in live.tags()} == {("b", "loss"), ("b", "img")}
    assert "images" in live.plugin_names()
    assert live.points("b", "loss").value.tolist() == [0.5, 0.25]

    _write(tmp_path, "b2", [2.0])          # not chosen: hidden from every listing and lookup
    live.choose = lambda live: ["a"]
    live.reload()
    assert live.run_names() == ["a"] and live.run_names(every=True) == ["a", "b", "b2"]
    assert live.points("b", "loss") is None and [i.run for i in live.tags()] == ["a"]
    assert "images" not in live.plugin_names()
    try:
        live.blob("b", "img", 0, 0)
    except LookupError as e:
        assert "no such run" in str(e)
    else:
        raise AssertionError("a hidden run's blob was served")

    live.choose = lambda live: None          # None: every run again
    live.reload()
    assert live.run_names() == ["a", "b", "b2"]
