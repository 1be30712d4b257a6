"""Interop with the real tools, both ways.

(a) Runs written by TF1's FileWriter, TF2's tf.summary, tensorboardX and torch.utils.tensorboard
    (tests/peer_runs.py, conftest's ``peer_logdir``) read by our ``summary_iterator`` give the same events as
    TF's ``tf.compat.v1.train.summary_iterator``.
(b) A run WE write with every kind is read with the same tags, steps and values by TensorBoard's
    EventAccumulator (legacy and the plugin one the server uses), EventFileLoader, TF's
    summary_iterator and tbparse.
"""
import glob
import io
import os

import numpy as np
import pytest

from tfevents.proto import config_pb2, event_pb2, graph_pb2, step_stats_pb2
from tfevents.summaries import builders


def event_files(root):
    return sorted(glob.glob(os.path.join(root, "**", "*tfevents*"), recursive=True))


def summary_iterator(path):
    from tfevents.summaries import summary_iterator as ours
    return ours(path)


# ------------------------------------------------------------------------------- (a) peers -> us

@pytest.mark.parametrize("kind", ["tf1", "tf2", "tbx", "torch"])
def test_peer_runs_read_by_us_equal_tf_summary_iterator(tf, peer_logdir, kind):
    paths = event_files(os.path.join(peer_logdir, kind))
    assert paths, "no event files written by %s" % kind
    total = 0
    for path in paths:
        ours = list(summary_iterator(path))
        assert all(isinstance(e, event_pb2.Event) for e in ours)
        theirs = [e.SerializeToString() for e in tf.compat.v1.train.summary_iterator(path)]
        assert [e.SerializeToString() for e in ours] == theirs, path
        assert ours[0].file_version.startswith("brain.Event:")
        total += len(ours)
    assert total > 5


def test_peer_runs_hold_every_kind(peer_logdir):
    """The peers wrote what the comparison above is meant to cover (read through our iterator)."""
    def kinds_in(kind):
        seen = set()
        for path in event_files(os.path.join(peer_logdir, kind)):
            for event in summary_iterator(path):
                what = event.WhichOneof("what")
                seen.add(what)
                if what == "summary":
                    for value in event.summary.value:
                        seen.add(value.WhichOneof("value"))
                        if value.metadata.plugin_data.plugin_name:
                            seen.add(value.metadata.plugin_data.plugin_name)
        return seen

    assert {"graph_def", "meta_graph_def", "tagged_run_metadata", "session_log", "simple_value", "histo",
            "image"} <= kinds_in("tf1")
    assert {"scalars", "histograms", "images", "text", "audio"} <= kinds_in("tf2")
    for kind in ("tbx", "torch"):
        assert {"simple_value", "histo", "image", "text", "pr_curves", "custom_scalars", "hparams",
                "mesh"} <= kinds_in(kind)
    assert {"audio", "graph_def"} <= kinds_in("torch")


# ------------------------------------------------------------------------------- (b) us -> readers

STEPS = (0, 1, 2)
LOSS = {0: 1.25, 1: 0.5, 2: 0.1}
TEXT = {step: "step **%d**" % step for step in STEPS}
HPARAMS = {"lr": 0.01, "optimizer": "adam", "layers": 3}


def make_graph_def():
    graph = graph_pb2.GraphDef()
    graph.node.add(name="x", op="Placeholder").attr["dtype"].type = 1
    graph.node.add(name="w", op="VariableV2").attr["dtype"].type = 1
    graph.node.add(name="y", op="MatMul", input=["x", "w"])
    graph.versions.producer = 27
    return graph


def make_run_metadata():
    meta = config_pb2.RunMetadata()
    dev = meta.step_stats.dev_stats.add(device="/job:localhost/replica:0/task:0/device:CPU:0")
    dev.node_stats.add(node_name="y", all_start_micros=100, all_end_rel_micros=7)
    assert isinstance(dev.node_stats[0], step_stats_pb2.NodeExecStats)
    return meta


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    """A run written by our SummaryWriter with every kind; returns (logdir, inputs)."""
    from tfevents.summaries import SummaryWriter
    logdir = str(tmp_path_factory.mktemp("ours"))
    rng = np.random.default_rng(11)
    inputs = {
        "weights": {step: rng.normal(size=300) + step for step in STEPS},
        "image": rng.random((3, 6, 5)).astype(np.float32),
        "images": rng.integers(0, 256, (5, 4, 3, 3), dtype=np.uint8),
        "sound": (np.sin(np.linspace(0, 40, 800)) * 0.5).astype(np.float32),
        "labels": rng.random(60) < 0.5,
    }
    inputs["predictions"] = np.clip(inputs["labels"] * 0.3 + rng.random(60) * 0.7, 0, 1)
    from matplotlib.figure import Figure
    fig = Figure(figsize=(2, 1), dpi=30)
    fig.add_subplot().plot([0, 1], [1, 0])
    with SummaryWriter(logdir) as w:
        w.add_graph(make_graph_def())
        for step in STEPS:
            w.add_scalar("loss", LOSS[step], step)
            w.add_scalars("lr", {"a": 0.1 * step, "b": 0.2 * step}, step)
            w.add_histogram("weights", inputs["weights"][step], step)
            w.add_text("notes", TEXT[step], step)
        w.add_histogram_raw("raw", 0.0, 3.0, 6, 9.0, 19.0, [1.0, 2.0, 3.0], [1, 2, 3], global_step=1)
        w.add_image("image", inputs["image"], 1)
        w.add_images("images", inputs["images"], 1, dataformats="NHWC")
        w.add_figure("figure", fig, 1)
        w.add_audio("sound", inputs["sound"], 1, sample_rate=8000)
        w.add_pr_curve("pr", inputs["labels"], inputs["predictions"], 1, num_thresholds=21)
        w.add_custom_scalars({"cat": {"losses": ["Multiline", ["loss"]]}})
        w.add_run_metadata(make_run_metadata(), "step1", 1)
        w.add_summary(builders.scalar("from_summary", 7.5), 2)
        w.add_session_log(event_pb2.SessionLog(status=event_pb2.SessionLog.CHECKPOINT, checkpoint_path="ckpt"), 2)
        w.add_hparams(HPARAMS, {"hparam/accuracy": 0.75})
    return logdir, inputs


def root_file(logdir):
    paths = glob.glob(os.path.join(logdir, "*tfevents*"))
    assert len(paths) == 1, paths
    return paths[0]


def f32(x):
    return float(np.float32(x))


def test_our_events_read_identically_by_tf_tensorboard_and_our_iterator(tf, ours):
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader, LegacyEventFileLoader
    from tensorboard.util import tensor_util
    logdir, _ = ours
    paths = event_files(logdir)
    assert len(paths) == 3  # the run and the two add_scalars sub-runs
    for path in paths:
        events = list(summary_iterator(path))
        mine = [e.SerializeToString() for e in events]
        assert mine == [e.SerializeToString() for e in tf.compat.v1.train.summary_iterator(path)]
        assert mine == [e.SerializeToString() for e in LegacyEventFileLoader(path).Load()]
        assert events[0].file_version == "brain.Event:2"
        # EventFileLoader migrates old-style values to plugin tensors: same steps and tags, same scalars
        ours_by_key = {(e.step, v.tag): v for e in events for v in e.summary.value}
        migrated = {(e.step, v.tag): v for e in EventFileLoader(path).Load() for v in e.summary.value}
        assert set(ours_by_key) <= set(migrated)
        for key, value in ours_by_key.items():
            if value.WhichOneof("value") == "simple_value":
                assert tensor_util.make_ndarray(migrated[key].tensor).item() == value.simple_value


def test_tf_summary_iterator_sees_our_steps_and_values(tf, ours):
    logdir, _ = ours
    scalars, texts, kinds = {}, {}, set()
    for event in tf.compat.v1.train.summary_iterator(root_file(logdir)):
        kinds.add(event.WhichOneof("what"))
        for value in event.summary.value:
            if value.tag == "loss":
                scalars[event.step] = value.simple_value
            if value.tag == "notes/text_summary":
                texts[event.step] = tf.make_ndarray(value.tensor).item().decode()
    assert scalars == {s: f32(v) for s, v in LOSS.items()}
    assert texts == TEXT
    assert {"file_version", "graph_def", "summary", "tagged_run_metadata", "session_log"} <= kinds


def test_legacy_event_accumulator_reads_every_kind(ours):
    from tensorboard.backend.event_processing import event_accumulator as ea
    logdir, inputs = ours
    acc = ea.EventAccumulator(logdir, size_guidance={k: 0 for k in ea.DEFAULT_SIZE_GUIDANCE}).Reload()
    tags = acc.Tags()
    assert set(tags["scalars"]) == {"loss", "from_summary", "hparam/accuracy"}
    assert set(tags["histograms"]) == {"weights", "raw"}
    assert set(tags["images"]) == {"image", "images", "figure"}
    assert tags["audio"] == ["sound"]
    assert {"notes/text_summary", "pr", "custom_scalars__config__"} <= set(tags["tensors"])
    # hparams values carry only metadata (no value), which this accumulator skips: see the plugin one
    assert tags["graph"] and tags["run_metadata"] == ["step1"]

    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [(s, f32(LOSS[s])) for s in STEPS]
    assert [(e.step, e.value) for e in acc.Scalars("from_summary")] == [(2, 7.5)]
    for event in acc.Histograms("weights"):
        values = inputs["weights"][event.step]
        h = event.histogram_value
        assert (h.min, h.max, h.num) == (values.min(), values.max(), values.size)
        assert sum(h.bucket) == values.size and h.sum == pytest.approx(values.sum())
    assert [e.step for e in acc.Histograms("weights")] == list(STEPS)
    raw = acc.Histograms("raw")[0].histogram_value
    assert (list(raw.bucket_limit), list(raw.bucket)) == ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    image = acc.Images("image")[0]
    assert (image.step, image.height, image.width) == (1, 6, 5)
    assert (acc.Images("images")[0].height, acc.Images("images")[0].width) == (4, 15)
    sound = acc.Audio("sound")[0]
    assert (sound.step, sound.sample_rate, sound.length_frames, sound.content_type) == (1, 8000, 800, "audio/wav")
    assert [n.name for n in acc.Graph().node] == ["x", "w", "y"]
    assert acc.RunMetadata("step1").step_stats.dev_stats[0].node_stats[0].all_end_rel_micros == 7
    assert [(e.step, e.tensor_proto.string_val[0].decode()) for e in acc.Tensors("notes/text_summary")] == \
        sorted(TEXT.items())


def test_plugin_event_accumulator_serves_every_dashboard(ours):
    """The accumulator behind ``tensorboard --load_fast=false``: values migrated to tensors per plugin."""
    from tensorboard.backend.event_processing import plugin_event_accumulator as pea
    from tensorboard.util import tensor_util
    logdir, inputs = ours
    acc = pea.EventAccumulator(logdir, size_guidance={pea.TENSORS: 0, pea.GRAPH: 0, pea.RUN_METADATA: 0})
    acc.Reload()
    plugins = {name: set(acc.PluginTagToContent(name)) for name in
               ("scalars", "histograms", "images", "audio", "text", "pr_curves", "custom_scalars", "hparams")}
    assert plugins["scalars"] == {"loss", "from_summary", "hparam/accuracy"}
    assert plugins["histograms"] == {"weights", "raw"}
    assert plugins["images"] == {"image", "images", "figure"}
    assert plugins["audio"] == {"sound"}
    assert plugins["text"] == {"notes/text_summary"}
    assert plugins["pr_curves"] == {"pr"}
    assert plugins["custom_scalars"] == {"custom_scalars__config__"}
    assert plugins["hparams"] == {"_hparams_/experiment", "_hparams_/session_start_info",
                                  "_hparams_/session_end_info"}
    loss = [(e.step, tensor_util.make_ndarray(e.tensor_proto).item()) for e in acc.Tensors("loss")]
    assert loss == [(s, f32(LOSS[s])) for s in STEPS]
    buckets = tensor_util.make_ndarray(acc.Tensors("weights")[0].tensor_proto)
    assert buckets[:, 2].sum() == 300 and buckets[0, 0] == np.float32(inputs["weights"][0].min())
    image = tensor_util.make_ndarray(acc.Tensors("image")[0].tensor_proto)  # [width, height, png]
    assert (image[0], image[1]) == (b"5", b"6")
    from PIL import Image
    pixels = np.asarray(Image.open(io.BytesIO(image[2])).convert("RGB"))
    np.testing.assert_array_equal(pixels, (inputs["image"].transpose(1, 2, 0) * 255).astype(np.uint8))
    pr = tensor_util.make_ndarray(acc.Tensors("pr")[0].tensor_proto)
    assert pr.shape == (6, 21) and pr[0, 0] == inputs["labels"].sum()
    # graphs and run metadata are migrated to tensors of the graphs plugins
    assert set(acc.PluginTagToContent("graphs")) == {"__run_graph__"}
    assert set(acc.PluginTagToContent("graph_tagged_run_metadata")) == {"step1"}
    run_metadata = tensor_util.make_ndarray(acc.Tensors("step1")[0].tensor_proto)[0]
    assert config_pb2.RunMetadata.FromString(run_metadata).step_stats.dev_stats[0].node_stats[0].node_name == "y"


def test_sub_runs_of_add_scalars_are_read_by_event_accumulator(ours):
    from tensorboard.backend.event_processing import event_accumulator as ea
    logdir, _ = ours
    for key, scale in (("a", 0.1), ("b", 0.2)):
        acc = ea.EventAccumulator(os.path.join(logdir, "lr_" + key)).Reload()
        assert [(e.step, e.value) for e in acc.Scalars("lr")] == [(s, f32(scale * s)) for s in STEPS]


def test_tbparse_reads_our_run(ours):
    tbparse = pytest.importorskip("tbparse")
    logdir, inputs = ours
    reader = tbparse.SummaryReader(logdir, pivot=False, extra_columns={"dir_name"})
    scalars = reader.scalars
    loss = scalars[(scalars.tag == "loss") & (scalars.dir_name == "")]
    assert list(zip(loss.step, loss.value)) == [(s, f32(LOSS[s])) for s in STEPS]
    lr_b = scalars[(scalars.tag == "lr") & (scalars.dir_name == "lr_b")]
    assert list(zip(lr_b.step, lr_b.value)) == [(s, f32(0.2 * s)) for s in STEPS]
    text = reader.text
    assert list(zip(text.step, text.tag, text.value)) == [(s, "notes", TEXT[s]) for s in STEPS]  # tbparse drops /text_summary
    hist = reader.histograms
    assert sorted(set(hist.tag)) == ["raw", "weights"]
    weights = hist[hist.tag == "weights"]
    assert list(weights.step) == list(STEPS)
    assert [np.sum(c) for c in weights.counts] == [300] * 3
    images = reader.images
    assert sorted(set(images.tag)) == ["figure", "image", "images"]
    assert reader.images[reader.images.tag == "image"].value.iloc[0].shape[:2] == (6, 5)
    audio = reader.audio
    assert list(audio.tag) == ["sound"] and audio.value.iloc[0].shape[0] == 800
    hparams = reader.hparams
    assert dict(zip(hparams.tag, hparams.value)) == HPARAMS
