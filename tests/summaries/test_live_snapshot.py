"""``live.snapshot``: the reader's records of what a LiveLogdir keeps equal ``load_logdir``'s, kind by kind, record
by record, for runs written by our SummaryWriter, by tensorboardX and by TF2's ``tf.summary`` (when TensorFlow is
installed); a small reservoir gives the kept subset. What the live loader does not keep is listed in ``LOSSY`` and
``NOT_KEPT`` and checked to differ only there."""
import dataclasses
import importlib.util
import os
import shutil

import numpy as np
import pytest

import peer_runs
from tfevents.proto import config_pb2, graph_pb2, meta_graph_pb2, summary_pb2
from tfevents.summaries import SummaryWriter, load_logdir
from tfevents.summaries.live.loader import LiveLogdir, parse_samples_per_plugin
from tfevents.summaries.live.snapshot import DEFAULT_KINDS, SNAPSHOT_KINDS, snapshot
from tfevents.summaries.reader.kinds import KINDS, plugin_names
from tfevents.viewer.plots.hparams import hparams_table

HAVE_TF = importlib.util.find_spec("tensorflow") is not None
HAVE_TBX = importlib.util.find_spec("tensorboardX") is not None
STEPS = 6

# What the live loader keeps of an old-style value is what TensorBoard serves of it: a histogram as its [k, 3]
# tensor (sum and sum of squares estimated from bucket centres, the last limit the max), an image without its
# colorspace. (kind, run, tag) -> the record fields that differ.
LOSSY = {("histograms", "ours", "h"): {"sum", "sum_squares", "bucket_limits"},
         ("histograms", "tbx", "h"): {"sum", "sum_squares", "bucket_limits"},
         ("histograms", "tbx", "raw"): {"sum", "sum_squares"},   # its last limit is its max
         **{("images", run, tag): {"colorspace"} for run, tag in [("ours", "img"), ("ours", "imgs"),
                                                                  ("tbx", "img"), ("tbx", "images"),
                                                                  ("tbx", "figure")]}}
# Kept by no live series: a tensor whose plugin TensorBoard serves no data class of ("tensor", add_tensor's), a
# graph only in a meta graph (the data server reads GraphDef events only).
NOT_KEPT = {("tensors", ("ours", "tens")), ("graphs", "meta")}


def _every_plugin_unbounded():
    plugins = {k.plugin for k in KINDS.values() if k.plugin} | set(plugin_names())
    return parse_samples_per_plugin(",".join("%s=0" % p for p in sorted(plugins)))


def _write_ours(out, rng):
    with SummaryWriter(os.path.join(out, "ours")) as w:
        for step in range(STEPS):
            w.add_scalar("loss", 1.0 / (step + 1), step)
            w.add_histogram("h", rng.randn(100), step)
            w.add_image("img", rng.rand(3, 4, 5), step)
            w.add_images("imgs", rng.rand(2, 3, 4, 4), step)
            w.add_audio("snd", rng.rand(200) * 2 - 1, step, sample_rate=8000)
            w.add_text("t", "hello %d" % step, step)
            w.add_pr_curve("pr", rng.randint(0, 2, 30), rng.rand(30), step)
            w.add_video("vid", rng.rand(1, 3, 3, 4, 4), step)
            w.add_mesh("mesh", vertices=rng.rand(1, 3, 3).astype(np.float32),
                       colors=rng.randint(0, 255, (1, 3, 3)).astype(np.uint8),
                       faces=np.array([[[0, 1, 2]]], dtype=np.int32), global_step=step)
            w.add_tensor("tens", rng.rand(2, 3).astype(np.float32), step)
        graph = graph_pb2.GraphDef()
        graph.node.add(name="x", op="Placeholder")
        w.add_graph(graph)
        metadata = config_pb2.RunMetadata()
        metadata.step_stats.dev_stats.add(device="/cpu:0")
        w.add_run_metadata(metadata, "step1", 1)
        w.add_hparams({"lr": 0.1, "opt": "sgd", "deep": True}, {"acc": 0.5})
        empty = summary_pb2.Summary()   # metadata and no value: the reader skips it, the loader keeps a null tensor
        empty.value.add(tag="no_value").metadata.plugin_data.plugin_name = "text"
        w.add_summary(empty, 0)
        w.add_embedding(rng.rand(5, 3), metadata=list("abcde"))
    with SummaryWriter(os.path.join(out, "meta")) as w:
        meta = meta_graph_pb2.MetaGraphDef()
        meta.graph_def.node.add(name="y", op="Const")
        w.add_meta_graph(meta)
        w.add_scalar("loss", 0.5, 0)


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory, request):
    """A logdir with every kind: our writer's run (``ours``), a meta graph's run (``meta``), tensorboardX's
    (``tbx``, its hparams sub-run and add_scalars runs) and TF2's (``tf2``: the session's ``peer_logdir`` run of
    ``peer_runs.write_tf2``, copied)."""
    out = str(tmp_path_factory.mktemp("snapshot"))
    _write_ours(out, np.random.RandomState(0))
    if HAVE_TBX:
        peer_runs.write_tbx(os.path.join(out, "tbx"))
    if HAVE_TF:
        shutil.copytree(os.path.join(request.getfixturevalue("peer_logdir"), "tf2"), os.path.join(out, "tf2"))
    live = LiveLogdir(out, samples_per_plugin=_every_plugin_unbounded(), threads=1)
    live.reload()
    return out, live, load_logdir(out, on_error="skip")


def _differences(a, b, where="") -> list:
    """Where ``a`` and ``b`` differ (dtypes and shapes of arrays included), as paths; [] when equal."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return [where + ": %r vs %r" % (type(a), type(b))]
        if a.dtype != b.dtype or a.shape != b.shape:
            return [where + ": %s%s vs %s%s" % (a.dtype, a.shape, b.dtype, b.shape)]
        if a.dtype == object:
            same = all(x == y for x, y in zip(a.ravel().tolist(), b.ravel().tolist()))
        else:
            same = np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        return [] if same else [where]
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        if type(a) is not type(b):
            return [where + ": %s vs %s" % (type(a).__name__, type(b).__name__)]
        return [d for f in dataclasses.fields(a) for d in _differences(getattr(a, f.name), getattr(b, f.name),
                                                                       where + "." + f.name)]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return [where + ": %d vs %d items" % (len(a), len(b))]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, "%s[%d]" % (where, i))]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [where + ": keys %s vs %s" % (sorted(a, key=str), sorted(b, key=str))]
        return [d for k in a for d in _differences(a[k], b[k], "%s[%r]" % (where, k))]
    return [] if (type(a) is type(b) or {type(a), type(b)} <= {int, float}) and a == b else [
        where + ": %r vs %r" % (a, b)]


def _fields(differences) -> set:
    """The record fields named by ``_differences`` paths such as ``[3].colorspace`` or ``.bucket_limits[0]``."""
    return {d.split(".")[1].split("[")[0].split(":")[0] for d in differences}


def test_snapshot_equals_load_logdir_kind_by_kind(every_kind):
    path, live, offline = every_kind
    snap = snapshot(live, SNAPSHOT_KINDS)
    assert snap.runs == offline.runs and snap.path == path
    for kind in sorted(SNAPSHOT_KINDS):
        got, want = snap.data[kind], offline.data[kind]
        assert got, "snapshot has no %s" % kind
        missing = {key for key in set(want) - set(got)}
        assert {(kind, key) for key in missing} == {nk for nk in NOT_KEPT if nk[0] == kind}, kind
        assert set(got) <= set(want), kind
        for key in sorted(got, key=str):
            found = _differences(got[key], want[key])
            lossy = LOSSY.get((kind,) + key) if isinstance(key, tuple) else None
            if lossy is None:
                assert not found, (kind, key, found[:5])
            else:
                assert found and _fields(found) == lossy, (kind, key, found[:5])
    if HAVE_TF:   # TF2 writes tensors only: every kind of it comes back exactly
        assert any(run == "tf2" for run, _ in snap.histograms) and "tf2" in snap.hparams
        assert not [key for key in LOSSY if key[1] == "tf2"]
    assert not snap.problems and all(files == [] for files in snap.files.values())


def test_lossy_values_keep_what_tensorboard_serves(every_kind):
    """An old-style histogram comes back as TensorBoard's [k, 3] tensor: min, max, num and counts exact, the
    limits but the last, which is the max; an old-style image has colorspace 0 (not recorded), as TF2's."""
    path, live, offline = every_kind
    snap = snapshot(live, ["histograms", "images"])
    for (kind, run, tag), lost in LOSSY.items():
        if kind == "histograms":
            got, want = snap.histograms[(run, tag)], offline.histograms[(run, tag)]
            for name in ("step", "wall_time", "min", "max", "num"):
                np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
            for i in range(len(want)):
                np.testing.assert_array_equal(got.bucket_counts[i], want.bucket_counts[i])
                np.testing.assert_array_equal(got.bucket_limits[i][:-1], want.bucket_limits[i][:-1])
                assert got.bucket_limits[i][-1] == got.max[i]
        else:
            assert [r.colorspace for r in snap.images[(run, tag)]] == [0] * len(offline.images[(run, tag)])
            assert all(r.colorspace for r in offline.images[(run, tag)])


def test_default_kinds_are_all_but_scalars(every_kind):
    path, live, offline = every_kind
    snap = snapshot(live)
    assert not snap.scalars and DEFAULT_KINDS == SNAPSHOT_KINDS - {"scalars"}
    every = snapshot(live, SNAPSHOT_KINDS)
    for kind in DEFAULT_KINDS:
        assert sorted(snap.data[kind], key=str) == sorted(every.data[kind], key=str), kind
    assert set(snapshot(live, "videos").videos) == set(every.videos) and not snapshot(live, "videos").images
    with pytest.raises(ValueError, match="embeddings"):
        snapshot(live, ["embeddings"])
    with pytest.raises(ValueError, match="unknown kind"):
        snapshot(live, ["pictures"])


def test_hparams_carry_hparams_and_metric_tags(every_kind):
    """The HParams table of the snapshot (with scalars for the metrics' values) is load_logdir's."""
    path, live, offline = every_kind
    snap = snapshot(live, ["hparams", "scalars"])
    assert snap.hparams["ours"].hparams == {"lr": 0.1, "opt": "sgd", "deep": True}
    assert snap.hparams["ours"].metrics == ["acc"]
    names, metrics, rows = hparams_table(snap)
    assert (names, metrics, rows) == hparams_table(load_logdir(path, kinds=["hparams", "scalars"], on_error="skip"))
    assert "acc" in metrics and len(rows) == len(offline.hparams) >= 1


def test_small_reservoir_gives_the_kept_subset(tmp_path):
    rng = np.random.RandomState(1)
    with SummaryWriter(str(tmp_path / "run")) as w:
        for step in range(40):
            w.add_histogram("h", rng.randn(50), step)
            w.add_text("t", "step %d" % step, step)
            w.add_image("img", rng.rand(3, 2, 2), step)
            w.add_pr_curve("pr", rng.randint(0, 2, 10), rng.rand(10), step)
    live = LiveLogdir(str(tmp_path), samples_per_plugin={"histograms": 5, "text": 4, "images": 3, "pr_curves": 6},
                      threads=1)
    live.reload()
    snap, offline = snapshot(live), load_logdir(str(tmp_path), on_error="skip")
    for kind, size in [("histograms", 5), ("text", 4), ("images", 3), ("pr_curves", 6)]:
        [(run, tag)] = snap.data[kind]      # text's tag is t/text_summary
        kept = live.points(run, tag).step
        assert len(kept) == size and kept[-1] == 39
        records = snap.data[kind][(run, tag)]
        steps = records.step if kind == "histograms" else np.array([r.step for r in records])
        np.testing.assert_array_equal(steps, kept)
        if kind in ("text", "pr_curves"):   # the kept records are load_logdir's at those steps
            want = [r for r in offline.data[kind][(run, tag)] if r.step in set(kept.tolist())]
            assert not _differences(records, want)
