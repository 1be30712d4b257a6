"""SummaryWriter: TF1 FileWriter surface and tensorboardX/torch add_*, checked with TF, TensorBoard, torch, tensorboardX."""
import glob
import math
import os
import struct
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _events import read_events
from tfevents.proto import config_pb2, event_pb2, graph_pb2, summary_pb2
from tfevents.summaries import FileWriter, SummaryWriter, builders, record, summary_iterator
from tfevents.summaries.writer import event_bytes as _event_bytes

INT64 = st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)


def _files(logdir):
    return sorted(glob.glob(os.path.join(logdir, "**", "*tfevents*"), recursive=True))


def _scalars(events):
    return [(e.step, v.tag, v.simple_value) for e in events for v in e.summary.value]


# ------------------------------------------------------------------ hand-encoded scalar Events

def _proto_scalar_event(wall_time, step, tag, value):
    # the Summary built by hand: builders.scalar would clean the tag (see summaries/tags.py)
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)])
    return event_pb2.Event(wall_time=wall_time, step=step, summary=summary).SerializeToString()


@settings(max_examples=400, deadline=None)
@given(tag=st.text(min_size=1, max_size=200), step=INT64,
       value=st.floats(allow_nan=True, allow_infinity=True, width=64),
       wall_time=st.one_of(st.floats(min_value=0, max_value=4e9), st.sampled_from([0.0, -0.0, 1.0]),
                           st.floats(allow_nan=False)))
def test_hand_encoded_scalar_event_equals_protobuf_bytes(tag, step, value, wall_time):
    ours = _event_bytes.scalar_event(wall_time, step, _event_bytes.scalar_packer(tag), value)
    assert ours == _proto_scalar_event(wall_time, step, tag, value)


@pytest.mark.parametrize("step", [0, 1, 127, 128, 16383, 16384, 2097151, 2097152, 2**35, 2**63 - 1, -1, -2**63])
@pytest.mark.parametrize("value", [0.0, -0.0, 1.5, float("nan"), float("inf"), -float("inf"), 1e39, -1e39,
                                   3.4028235e38, 1e-46, 5e-324])
@pytest.mark.parametrize("tag", ["loss", "ünïcödé/損失/🚀", "t" * 300])
def test_hand_encoded_scalar_event_edge_cases(tag, step, value):
    ours = _event_bytes.scalar_event(1.7e9, step, _event_bytes.scalar_packer(tag), value)
    assert ours == _proto_scalar_event(1.7e9, step, tag, value)
    parsed = event_pb2.Event.FromString(ours)
    assert (parsed.step, parsed.summary.value[0].tag) == (step, tag)
    stored = parsed.summary.value[0].simple_value
    expected = struct.unpack("<f", struct.pack("<f", value))[0] if abs(value) <= 3.4028235e38 else math.copysign(
        math.inf, value)
    assert stored == expected or (math.isnan(stored) and math.isnan(value))


def test_add_scalar_writes_protobuf_bytes(logdir):
    # add_scalar inlines scalar_event's common case: check its branches end to end
    steps = [1, 0x7F, 0x80, 0x3FFF, 0x4000, 0x1FFFFF, 0x200000, 0, -1, 2**40, np.int32(5), 7.0]
    values = [0.5, 1e39, -1e39, float("nan"), -0.0]
    cases = [(step, value, wall) for step in steps for value in values for wall in (1.7e9, 0.0, -0.0)]
    with SummaryWriter(logdir) as w:
        for step, value, wall in cases:
            w.add_scalar("t/ü", value, step, walltime=wall)
    (path,) = _files(logdir)
    payloads = [payload for _, payload in record.iter_records(path)][1:]
    assert payloads == [_proto_scalar_event(wall, int(step), "t/ü", value) for step, value, wall in cases]


def test_summary_and_file_version_events_equal_protobuf():
    summary = builders.scalar("a", 2.0)
    assert _event_bytes.summary_event(3.5, -7, summary.SerializeToString()) == event_pb2.Event(
        wall_time=3.5, step=-7, summary=summary).SerializeToString()
    assert _event_bytes.file_version_event(3.5, 9) == event_pb2.Event(
        wall_time=3.5, step=9, file_version="brain.Event:2").SerializeToString()


# ------------------------------------------------------------------ add_scalar values, tags, steps

def test_add_scalar_accepts_numbers_numpy_and_torch(logdir):
    torch = pytest.importorskip("torch")
    values = [1, 2.5, True, np.float32(0.25), np.float64(-3.0), np.int64(7), np.array(4.5), np.array([6.0]),
              torch.tensor(8.5), torch.tensor([9.0], dtype=torch.float64), torch.tensor(3, dtype=torch.int32)]
    with SummaryWriter(logdir) as w:
        for step, value in enumerate(values):
            w.add_scalar("v", value, np.int64(step) if step % 2 else step)
    assert _scalars(read_events(logdir)) == [(i, "v", float(np.asarray(v).reshape(()))) for i, v in enumerate(values)]


@pytest.mark.parametrize("tag", [3, None, b"loss", ("a",), ["a"]])
def test_non_string_tag_is_refused(logdir, tag):
    with SummaryWriter(logdir) as w:
        with pytest.raises(TypeError, match="tag must be a str"):
            w.add_scalar(tag, 1.0, 0)
    assert read_events(logdir) == []


def test_empty_tag_is_refused_like_the_builders(logdir):
    with SummaryWriter(logdir) as w:
        with pytest.raises(ValueError, match="non-empty"):
            w.add_scalar("", 1.0, 0)
        with pytest.raises(ValueError, match="non-empty"):
            builders.scalar("", 1.0)


@pytest.mark.parametrize("value", ["1.0", b"1", None, [1.0, 2.0], np.array([1.0, 2.0]), 1j, object()])
def test_non_scalar_value_is_refused(logdir, value):
    with SummaryWriter(logdir) as w:
        with pytest.raises(TypeError, match="'loss'"):
            w.add_scalar("loss", value, 0)


@pytest.mark.parametrize("step,error,match", [
    (float("nan"), ValueError, "finite"), (float("inf"), ValueError, "finite"), (np.float64("-inf"), ValueError,
                                                                                 "finite"),
    (1.5, ValueError, "whole"), (1 << 63, ValueError, "int64"), (-(1 << 63) - 1, ValueError, "int64"),
    ("3", TypeError, "integer"), ([1], TypeError, "integer")])
def test_bad_step_is_refused(logdir, step, error, match):
    with SummaryWriter(logdir) as w:
        with pytest.raises(error, match=match):
            w.add_scalar("loss", 1.0, step)
        with pytest.raises(error, match=match):
            w.add_summary(builders.scalar("x", 1.0), step)
    assert read_events(logdir) == []


def test_steps_and_walltime(logdir):
    with SummaryWriter(logdir) as w:
        w.add_scalar("a", 1.0)                       # no step: 0, as tensorboardX/TF
        w.add_scalar("a", 2.0, 3.0, walltime=12.5)   # whole float step
        w.add_scalar("a", 3.0, -5)
        w.add_scalar("a", 4.0, (1 << 63) - 1)
    events = read_events(logdir)
    assert [e.step for e in events] == [0, 3, -5, (1 << 63) - 1]
    assert events[1].wall_time == 12.5 and events[0].wall_time > 1e9


# ------------------------------------------------------------------ read back by TF and TensorBoard

def _write_every_kind(logdir):
    graph_def = graph_pb2.GraphDef(node=[graph_pb2.NodeDef(name="x", op="Const")])
    run_metadata = config_pb2.RunMetadata()
    run_metadata.step_stats.dev_stats.add(device="/cpu:0").node_stats.add(node_name="x", all_start_micros=5)
    with SummaryWriter(logdir) as w:
        for step in range(20):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        w.add_summary(builders.scalar("acc", 0.5), 3)
        w.add_summary(builders.scalar("acc", 0.75).SerializeToString(), 4)
        w.add_session_log(event_pb2.SessionLog(status=event_pb2.SessionLog.CHECKPOINT, checkpoint_path="ck"), 4)
        w.add_event(event_pb2.Event(step=6, wall_time=7.0, file_version="custom"))
        w.add_graph(graph_def)
        w.add_run_metadata(run_metadata, "step4", 4)
        w.add_histogram("h", np.arange(100.0), 5)
        w.add_text("notes", "hello *world*", 5)
        w.add_image("img", np.zeros((3, 4, 5)), 5)
        w.add_audio("au", np.zeros(100), 5, sample_rate=8000)
        w.add_pr_curve("pr", np.array([0, 1, 1]), np.array([0.1, 0.8, 0.6]), 5, num_thresholds=5)


def test_tensorflow_summary_iterator_reads_the_same_events(logdir, tf):
    _write_every_kind(logdir)
    (path,) = _files(logdir)
    ours = [e.SerializeToString() for e in summary_iterator(path)]
    theirs = [e.SerializeToString() for e in tf.compat.v1.train.summary_iterator(path)]
    assert theirs == ours and len(ours) == 1 + 20 + 11
    kinds = [event_pb2.Event.FromString(b).WhichOneof("what") for b in ours]
    assert kinds.count("graph_def") == 1 and kinds.count("tagged_run_metadata") == 1
    assert kinds.count("session_log") == 1 and kinds.count("summary") == 27


def test_tensorboard_event_accumulator_reads_scalars_and_plugins(logdir):
    from tensorboard.backend.event_processing import event_accumulator

    _write_every_kind(logdir)
    acc = event_accumulator.EventAccumulator(logdir, size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    points = acc.Scalars("loss")
    assert [p.step for p in points] == list(range(20))
    assert [p.value for p in points] == pytest.approx([1.0 / (s + 1) for s in range(20)])
    assert acc.Histograms("h")[0].histogram_value.num == 100
    assert acc.Images("img")[0].width == 5
    assert acc.Audio("au")[0].sample_rate == 8000
    assert {"notes/text_summary", "pr"} <= set(acc.Tags()["tensors"])
    assert acc.Graph().node[0].name == "x"
    assert acc.RunMetadata("step4").step_stats.dev_stats[0].node_stats[0].all_start_micros == 5


def test_builder_summaries_are_written_unchanged(logdir):
    values = np.linspace(-1, 1, 50)
    with SummaryWriter(logdir) as w:
        w.add_histogram("h", values, 1, bins=7)
        w.add_histogram_raw("hr", 0, 2, 3, 3, 5, [1, 2], [1, 2], 2)
        w.add_images("ims", np.ones((2, 1, 3, 3)), 3)
        w.add_pr_curve_raw("prr", [3, 2], [1, 0], [0, 1], [0, 1], [0.75, 1.0], [1.0, 2 / 3], 4, num_thresholds=2)
        w.add_custom_scalars({"cat": {"chart": ["Multiline", ["loss"]]}})
    expected = [builders.histogram("h", values, bins=7), builders.histogram_raw("hr", 0, 2, 3, 3, 5, [1, 2], [1, 2]),
                builders.images("ims", np.ones((2, 1, 3, 3))),
                builders.pr_curve_raw("prr", [3, 2], [1, 0], [0, 1], [0, 1], [0.75, 1.0], [1.0, 2 / 3], 2),
                builders.custom_scalars({"cat": {"chart": ["Multiline", ["loss"]]}})]
    events = read_events(logdir)
    assert [e.summary for e in events] == expected
    assert [e.step for e in events] == [1, 2, 3, 4, 0]


def test_add_figure(logdir):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(2, 1), dpi=50)
    with SummaryWriter(logdir) as w:
        w.add_figure("fig", fig, 2)
    (event,) = read_events(logdir)
    image = event.summary.value[0].image
    assert (image.width, image.height, event.step) == (100, 50, 2)
    assert not plt.fignum_exists(fig.number)


# ------------------------------------------------------------------ TF1 surface

def test_file_writer_alias_and_logdir(logdir):
    assert FileWriter is SummaryWriter
    w = FileWriter(logdir, None, 5, 60, None, ".suffix")
    assert w.get_logdir() == logdir
    w.close()
    assert _files(logdir)[0].endswith(".suffix")


def test_add_graph_from_tf_graph_and_graph_defs(logdir, tf):
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0, name="a")
        tf.add(a, a, name="b")
    tf_graph_def = g.as_graph_def(add_shapes=True)
    from tensorboard.compat.proto import graph_pb2 as tb_graph_pb2

    with SummaryWriter(logdir) as w:
        w.add_graph(g)
        w.add_graph(None, 3, graph_def=g.as_graph_def())
        w.add_graph(tb_graph_pb2.GraphDef.FromString(tf_graph_def.SerializeToString()))
        w.add_graph(tf_graph_def.SerializeToString())
        with pytest.raises(TypeError, match="GraphDef"):
            w.add_graph(summary_pb2.Summary())
        with pytest.raises(TypeError):
            w.add_graph(object())
    events = read_events(logdir)
    graphs = [tf.compat.v1.GraphDef.FromString(e.graph_def) for e in events]
    assert graphs[0] == tf_graph_def and graphs[1] == g.as_graph_def()
    assert graphs[2] == graphs[3] == tf_graph_def and events[1].step == 3


def test_bad_constructor_arguments_leave_no_file(logdir):
    with pytest.raises(TypeError, match="GraphDef"):
        SummaryWriter(logdir, graph=summary_pb2.Summary())
    with pytest.raises(ValueError, match="finite"):
        SummaryWriter(logdir, purge_step=float("nan"))
    with pytest.raises(ValueError, match="max_queue"):
        SummaryWriter(logdir, max_queue=0)
    assert os.listdir(logdir) == []


def test_graph_in_constructor_writes_graph_and_meta_graph(logdir, tf):
    g = tf.Graph()
    with g.as_default():
        tf.constant(2.0, name="c")
    with SummaryWriter(logdir, g) as w:
        pass
    graph_event, meta_event = read_events(logdir)
    assert tf.compat.v1.GraphDef.FromString(graph_event.graph_def) == g.as_graph_def(add_shapes=True)
    meta = tf.compat.v1.MetaGraphDef.FromString(meta_event.meta_graph_def)
    assert meta.graph_def == g.as_graph_def(add_shapes=True)


def test_run_metadata_and_meta_graph(logdir, tf):
    rm = tf.compat.v1.RunMetadata()
    rm.step_stats.dev_stats.add(device="/cpu:0")
    with SummaryWriter(logdir) as w:
        w.add_run_metadata(rm, "step1", 1)
        with pytest.raises(ValueError, match="already used"):
            w.add_run_metadata(rm, "step1", 2)
        with pytest.raises(TypeError, match="RunMetadata"):
            w.add_run_metadata(summary_pb2.Summary(), "step2", 2)
        w.add_meta_graph(tf.compat.v1.MetaGraphDef(), 2)
        with pytest.raises(TypeError, match="MetaGraphDef"):
            w.add_meta_graph(rm)
    first, second = read_events(logdir)
    assert first.tagged_run_metadata.tag == "step1" and first.step == 1
    assert tf.compat.v1.RunMetadata.FromString(first.tagged_run_metadata.run_metadata) == rm
    assert second.WhichOneof("what") == "meta_graph_def" and second.step == 2


def test_close_reopen_and_write_after_close(logdir):
    w = SummaryWriter(logdir)
    w.add_scalar("a", 1.0, 1)
    w.close()
    w.close()
    assert w.file_writer is None                      # the peers' attribute while closed
    w.reopen()                                        # explicit, as before
    w.add_scalar("a", 2.0, 2)
    w.close()
    w.add_scalar("a", 3.0, 3)                         # a write after close() reopens, as tensorboardX and torch do
    w.add_scalars("m", {"x": 1.0}, 3)                 # ... and so does a sub-run's
    w.reopen()                                        # a no-op while open
    w.flush()
    files = sorted(glob.glob(os.path.join(logdir, "events.*")), key=os.path.getmtime)
    assert [_scalars(list(summary_iterator(p))) for p in files] == [[(1, "a", 1.0)], [(2, "a", 2.0)],
                                                                    [(3, "a", 3.0)]]
    assert len(glob.glob(os.path.join(logdir, "m_x", "events.*"))) == 1
    w.close()


# ------------------------------------------------------------------ torch / tensorboardX layouts

def test_add_scalars_matches_torch_layout_without_extra_threads(tmp_path):
    tb = pytest.importorskip("torch.utils.tensorboard")
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "torch")
    threads_before = threading.active_count()
    fds_before = len(os.listdir("/proc/self/fd"))
    with SummaryWriter(ours) as w:
        w.add_scalars("loss/train", {"a": 1.0, "b": np.float32(2.0)}, 1)
        w.add_scalars("loss/train", {"a": 3.0, "c": 4.0}, 2)
        assert threading.active_count() <= max(threads_before, 1) + 1
        assert len(os.listdir("/proc/self/fd")) <= fds_before + 1     # the main file only
    tw = tb.SummaryWriter(theirs)
    tw.add_scalars("loss/train", {"a": 1.0, "b": np.float32(2.0)}, 1)
    tw.add_scalars("loss/train", {"a": 3.0, "c": 4.0}, 2)
    tw.close()

    def layout(root):
        runs = {}
        for path in _files(root):
            run = os.path.relpath(os.path.dirname(path), root)
            events = read_events(path, skip_version=False)
            runs.setdefault(run, []).extend(_scalars(events))
        return {run: sorted(points) for run, points in runs.items() if points or run != "."}

    assert layout(ours) == layout(theirs)
    assert set(layout(ours)) == {"loss_train_a", "loss_train_b", "loss_train_c"}


def test_purge_step_writes_what_tensorboardx_writes(tmp_path):
    tensorboardX = pytest.importorskip("tensorboardX")
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "tbx")
    with SummaryWriter(ours, purge_step=42) as w:
        w.add_scalar("x", 1.0, 42)
    with tensorboardX.SummaryWriter(theirs, purge_step=42) as w:
        w.add_scalar("x", 1.0, 42)

    def strip(root):
        events = read_events(_files(root)[0], skip_version=False)
        for e in events:
            e.ClearField("wall_time")
        return events

    assert strip(ours) == strip(theirs)
    assert strip(ours)[2].session_log.status == event_pb2.SessionLog.START


def test_add_hparams_writes_into_the_writers_run(tmp_path):
    from tensorboard.plugins.hparams import plugin_data_pb2

    logdir = str(tmp_path / "trial")
    with SummaryWriter(logdir) as w:
        w.add_hparams({"lr": 0.1, "opt": "adam"}, {"hparam/acc": 0.9}, global_step=7)
        w.add_hparams({"lr": 0.2}, {"hparam/acc": 0.8}, run_name="second")
    assert sorted(os.listdir(logdir))[-1] == "second"
    assert [d for d in os.listdir(logdir) if os.path.isdir(os.path.join(logdir, d))] == ["second"]
    events = read_events(logdir)
    assert [v.tag for e in events for v in e.summary.value] == [
        "_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info", "hparam/acc"]
    assert _scalars(events[3:]) == [(7, "hparam/acc", pytest.approx(0.9))]
    start = plugin_data_pb2.HParamsPluginData.FromString(events[1].summary.value[0].metadata.plugin_data.content)
    assert start.session_start_info.hparams["opt"].string_value == "adam"
    second = read_events(os.path.join(logdir, "second"))
    assert _scalars(second[3:]) == [(0, "hparam/acc", pytest.approx(0.8))]


def test_default_logdir_like_torch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_exp") as w:
        assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp")
    with SummaryWriter(log_dir=str(tmp_path / "x")) as w:
        assert w.get_logdir() == str(tmp_path / "x")


def test_tbparse_reads_runs_and_scalars(tmp_path):
    tbparse = pytest.importorskip("tbparse")
    logdir = str(tmp_path)
    with SummaryWriter(logdir) as w:
        for step in range(5):
            w.add_scalar("loss", step / 4, step)
            w.add_scalars("pair", {"x": step, "y": -step}, step)
    frame = tbparse.SummaryReader(logdir, extra_columns={"dir_name"}).scalars
    got = sorted((row.dir_name, row.tag, row.step, row.value) for row in frame.itertuples())
    expected = sorted([("", "loss", s, s / 4) for s in range(5)] + [("pair_x", "pair", s, float(s)) for s in range(5)]
                      + [("pair_y", "pair", s, float(-s)) for s in range(5)])
    assert got == expected


def test_add_hparams_metric_named_like_a_logged_series_keeps_that_series(tmp_path):
    """A metric written at step 0 after `loss` reached step 99 would send the series back, and TensorBoard's
    default loader would then drop all 100 points; by default the metric goes at the highest step logged."""
    from tfevents.summaries import read_scalars

    logdir = str(tmp_path)
    with SummaryWriter(logdir) as w:
        for step in range(100):
            w.add_scalar("loss", 1.0 / (step + 1), step)
        w.add_histogram("weights", [0.0, 1.0], 120)
        w.add_hparams({"lr": 0.1}, {"loss": 0.25})
    for mode in ("tensorboard", "python", "legacy"):
        loss = read_scalars(logdir, restarts=mode)[(".", "loss")]
        assert list(loss.step[:100]) == list(range(100)), mode
        assert loss.step[-1] == 120 and loss.value[-1] == 0.25, mode
