"""The offline reader against TensorBoard's EventAccumulator and tbparse, on runs written by TF1,
TF2, tensorboardX, torch and by us; fast (C) and pure-Python paths must agree exactly."""
import os
import shutil
import time

import numpy as np
import pytest

from tfevents.proto import event_pb2, summary_pb2
from tfevents.summaries import record
from tfevents.summaries.reader import scan as _reader_scan
from tfevents.summaries.reader import load_logdir, read_scalars

EA_KW = dict(size_guidance={k: 0 for k in ("compressedHistograms", "images", "audio", "scalars", "histograms",
                                             "tensors", "graph", "meta_graph", "run_metadata")})


def write_ours(out):
    """Events framed with record.encode_record from our protos: simple and tensor-style scalars,
    a histogram, a restart (START), and a run split over two files."""
    os.makedirs(out, exist_ok=True)

    def ev(**kw):
        return record.encode_record(event_pb2.Event(**kw).SerializeToString())

    meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"),
                                       data_class=summary_pb2.DATA_CLASS_SCALAR)
    a = [ev(wall_time=100.0, file_version="brain.Event:2")]
    for step in range(10):
        s = summary_pb2.Summary()
        s.value.add(tag="loss", simple_value=1.0 / (step + 1))
        v = s.value.add(tag="acc")
        v.tensor.dtype = 2  # DT_DOUBLE, rank 0
        v.tensor.double_val.append(step / 10)
        if step == 0:
            v.metadata.CopyFrom(meta)
        s.value.add(tag="h", histo=summary_pb2.HistogramProto(min=0, max=step, num=3, sum=step, sum_squares=step,
                                                              bucket_limit=[0.5, step + 1.0], bucket=[1, 2]))
        a.append(ev(wall_time=100.0 + step, step=step, summary=s))
    with open(os.path.join(out, "events.out.tfevents.0000000100.host.1.0"), "wb") as f:
        f.write(b"".join(a))
    b = [ev(wall_time=200.0, file_version="brain.Event:2"),
         ev(wall_time=200.5, step=6, session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START))]
    for step in range(6, 12):
        s = summary_pb2.Summary()
        s.value.add(tag="loss", simple_value=-step)
        b.append(ev(wall_time=201.0 + step, step=step, summary=s))
    with open(os.path.join(out, "events.out.tfevents.0000000200.host.1.0"), "wb") as f:
        f.write(b"".join(b))


def write_with_summary_writer(out):
    """Our SummaryWriter: every kind, then a resumed run (purge_step) in a second file."""
    from tfevents.summaries import SummaryWriter
    rng = np.random.RandomState(4)
    with SummaryWriter(out) as w:
        for step in range(10):
            w.add_scalar("loss", 1.0 / (step + 1), step)
            if step % 3 == 0:
                w.add_histogram("h", rng.randn(100), step)
                w.add_image("img", rng.rand(3, 6, 4), step)
                w.add_audio("snd", rng.rand(400) * 2 - 1, step, sample_rate=8000)
                w.add_text("t", "ours %d" % step, step)
                w.add_pr_curve("pr", rng.randint(0, 2, 30), rng.rand(30), step)
    time.sleep(1.05)  # a new file name (names have one-second resolution)
    with SummaryWriter(out, purge_step=6) as w:
        for step in range(6, 9):
            w.add_scalar("loss", -float(step), step)


@pytest.fixture(scope="session")
def runs(tmp_path_factory, request):
    """The peers' runs (tf1, tf2, tbx, torch: conftest's ``peer_logdir``), copied beside ``ours`` and ``writer``."""
    out = str(tmp_path_factory.mktemp("written"))
    if os.environ.get("TFEVENTS_TEST_RUNS"):  # reuse runs written before (for quick iterations)
        out = os.environ["TFEVENTS_TEST_RUNS"]
        if os.path.isdir(out):
            return out
    shutil.copytree(request.getfixturevalue("peer_logdir"), out, dirs_exist_ok=True)
    write_ours(os.path.join(out, "ours"))
    try:
        import tfevents.summaries.writer  # noqa: F401  (landed separately)
    except ImportError:
        pass
    else:
        write_with_summary_writer(os.path.join(out, "writer"))
    return out


def run_dirs(root):
    return sorted({os.path.dirname(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs if "tfevents" in f})


def _ea(path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    return EventAccumulator(path, **EA_KW).Reload()


def _make_ndarray(t):
    from tensorboard.util import tensor_util
    return tensor_util.make_ndarray(t)


def test_every_writer_matches_event_accumulator(runs):
    checked = {"scalars": 0, "histograms": 0, "images": 0, "audio": 0, "tensors": 0, "graph": 0, "run_metadata": 0}
    for d in run_dirs(runs):
        ea = _ea(d)
        ours = load_logdir(d, restarts="legacy", on_error="raise")
        assert ours.runs[0] == "."  # (EventAccumulator reads one directory; we read the subdirectories too)
        tags = ea.Tags()
        for tag in tags["scalars"]:
            got, want = ours.scalars[(".", tag)], ea.Scalars(tag)
            np.testing.assert_array_equal(got.step, [e.step for e in want])
            np.testing.assert_array_equal(got.wall_time, [e.wall_time for e in want])
            np.testing.assert_array_equal(got.value, [e.value for e in want])
            checked["scalars"] += 1
        for tag in tags["histograms"]:
            got, want = ours.histograms[(".", tag)], ea.Histograms(tag)
            np.testing.assert_array_equal(got.step, [e.step for e in want])
            for name in ("min", "max", "num", "sum", "sum_squares"):
                np.testing.assert_array_equal(getattr(got, name), [getattr(e.histogram_value, name) for e in want])
            for lim, cnt, e in zip(got.bucket_limits, got.bucket_counts, want):
                np.testing.assert_array_equal(lim, e.histogram_value.bucket_limit)
                np.testing.assert_array_equal(cnt, e.histogram_value.bucket)
            checked["histograms"] += 1
        for tag in tags["images"]:
            got, want = ours.images[(".", tag)], ea.Images(tag)
            assert [(r.step, r.wall_time, r.width, r.height, r.data) for r in got] == \
                   [(e.step, e.wall_time, e.width, e.height, e.encoded_image_string) for e in want]
            assert got[0].decode().shape == (want[0].height, want[0].width, got[0].decode().shape[2])
            checked["images"] += 1
        for tag in tags["audio"]:
            got, want = ours.audio[(".", tag)], ea.Audio(tag)
            assert [(r.step, r.sample_rate, r.data, r.content_type) for r in got] == \
                   [(e.step, e.sample_rate, e.encoded_audio_string, e.content_type) for e in want]
            assert got[0].decode().shape[0] == want[0].length_frames
            checked["audio"] += 1
        for tag in tags["tensors"]:
            want = ea.Tensors(tag)
            plugin = ea.SummaryMetadata(tag).plugin_data.plugin_name
            arrays = [_make_ndarray(e.tensor_proto) for e in want]
            steps = [e.step for e in want]
            if plugin == "scalars":
                got = ours.scalars[(".", tag)]
                np.testing.assert_array_equal(got.value, [a.item() for a in arrays])
            elif plugin == "text":
                got = ours.text[(".", tag)]
                assert [r.step for r in got] == steps
                for r, a in zip(got, arrays):
                    expect = np.vectorize(lambda b: b.decode())(a) if a.ndim else a.item().decode()
                    np.testing.assert_array_equal(r.text, expect)
            elif plugin == "pr_curves":
                got = ours.pr_curves[(".", tag)]
                assert [r.step for r in got] == steps
                for r, a in zip(got, arrays):
                    np.testing.assert_array_equal(r.data, a)
            elif plugin == "histograms":  # TF2: [k, 3] (left, right, count)
                got = ours.histograms[(".", tag)]
                np.testing.assert_array_equal(got.step, steps)
                for lim, cnt, a in zip(got.bucket_limits, got.bucket_counts, arrays):
                    np.testing.assert_array_equal(lim, a[:, 1])
                    np.testing.assert_array_equal(cnt, a[:, 2])
            elif plugin == "images":  # TF2: [w, h, png, ...]
                got = ours.images[(".", tag)]
                assert [r.data for r in got] == [b for a in arrays for b in a[2:]]
                assert got[0].decode().shape[:2] == (int(arrays[0][1]), int(arrays[0][0]))
            elif plugin == "audio":  # TF2: [k, 2] (wav, label)
                got = ours.audio[(".", tag)]
                assert [r.data for r in got] == [row[0] for a in arrays for row in a]
                assert got[0].sample_rate == 16000
                assert got[0].decode().shape == (300, 1)
            elif plugin == "hparams":
                assert ours.hparams["."].hparams or ours.hparams["."].metrics
            else:
                continue
            checked["tensors"] += 1
        if tags["graph"]:
            from tfevents.proto import graph_pb2
            assert graph_pb2.GraphDef.FromString(ours.graphs["."]) == \
                graph_pb2.GraphDef.FromString(ea.Graph().SerializeToString())
            checked["graph"] += 1
        for tag in tags["run_metadata"]:
            assert ours.run_metadata[(".", tag)] == ea.RunMetadata(tag).SerializeToString()
            checked["run_metadata"] += 1
    assert all(checked.values()), checked  # every kind was compared at least once


def test_summary_writer_resume_reads_like_tensorboard(runs):
    d = os.path.join(runs, "writer")
    if not os.path.isdir(d):
        pytest.skip("tfevents.summaries.SummaryWriter is not available")
    ea = _ea(d)
    loss = load_logdir(d, restarts="legacy").scalars[(".", "loss")]
    assert loss.step.tolist() == [e.step for e in ea.Scalars("loss")] == list(range(9))
    assert loss.value[6:].tolist() == [-6.0, -7.0, -8.0]
    assert load_logdir(d).scalars[(".", "loss")].step.tolist() == list(range(9))


def test_scalars_match_tbparse(runs):
    """tbparse reads each event file on its own (so a restart never purges across files): compare
    file by file. It also skips tensor-style scalars of some writers, and fails on TF2's 2-D text
    tensor (make_ndarray(...).item()), so it is compared on what it returns, without the tf2 run
    (whose scalars are compared with EventAccumulator above)."""
    tbparse = pytest.importorskip("tbparse")
    ours = load_logdir(runs, kinds=["scalars"], restarts="none")
    compared = 0
    for run, files in ours.files.items():
        if run.split("/")[0] == "tf2":
            continue
        for path in files:
            df = tbparse.SummaryReader(path, pivot=False, extra_columns={"wall_time"}).scalars
            mine = load_logdir(path, kinds=["scalars"], restarts="legacy").scalars
            for tag, want in df.groupby("tag", sort=True):
                got = mine[(".", tag)]
                np.testing.assert_array_equal(got.step, want["step"].to_numpy())
                np.testing.assert_array_equal(got.wall_time, want["wall_time"].to_numpy())
                np.testing.assert_array_equal(got.value, want["value"].to_numpy())
                compared += len(got.step)
    assert compared > 100


def test_fast_and_pure_paths_agree(runs, monkeypatch):
    if not _reader_scan.have_fast_path():
        pytest.skip("the _fastscan extension is not built")
    fast = load_logdir(runs, restarts="none", workers=1)
    monkeypatch.setattr(_reader_scan, "native", None)
    pure = load_logdir(runs, restarts="none", workers=1)
    assert fast.runs == pure.runs and sorted(fast.scalars) == sorted(pure.scalars)
    for key in fast.scalars:
        for col in ("step", "wall_time", "value"):
            np.testing.assert_array_equal(getattr(fast.scalars[key], col), getattr(pure.scalars[key], col))
    for kind in ("histograms", "images", "audio", "text", "pr_curves"):
        assert sorted(getattr(fast, kind)) == sorted(getattr(pure, kind))
    assert fast.hparams == pure.hparams and fast.graphs == pure.graphs


def test_runs_tags_filters_and_layout(runs):
    lg = load_logdir(runs, tags="^loss$", runs="^(tbx|torch)$")
    assert lg.runs == ["tbx", "torch"]
    assert sorted(lg.scalars) == [("tbx", "loss"), ("torch", "loss")]
    assert not lg.histograms and not lg.images
    everything = load_logdir(runs)
    # tensorboardX add_scalars and add_hparams write runs in subdirectories, as TensorBoard shows them
    assert "tbx/group/a" in everything.runs and any(r.startswith("torch/") for r in everything.runs)
    assert everything.hparams["tf2"].hparams == {"lr": 0.01, "opt": "adam", "deep": True}
    torch_hp = [r for r in everything.hparams if r.startswith("torch/")]
    assert everything.hparams[torch_hp[0]].hparams == {"lr": 0.2, "act": "relu"}
    assert everything.hparams[torch_hp[0]].metrics == ["hparam/loss"]
    assert everything.session_logs["tf1"][-1][2:] == ("CHECKPOINT", "/ck/1")
    # a single event file is a run of its own
    f = sorted(everything.files["tbx"])[0]
    assert list(read_scalars(f)) == [(".", "loss")]
    with pytest.raises(FileNotFoundError):
        load_logdir(os.path.join(runs, "nope"))
    with pytest.raises(ValueError, match="tags"):
        load_logdir(runs, tags="(")


def test_default_restarts_is_data_server_and_parallel_load(runs):
    """'tensorboard' = the Rust data server's rule: START ignored, step going back evicts."""
    d = os.path.join(runs, "ours")
    s = load_logdir(d, workers=2).scalars[(".", "loss")]
    np.testing.assert_array_equal(s.step, np.arange(12))
    np.testing.assert_array_equal(s.value[6:], -np.arange(6, 12))
    legacy = read_scalars(d, restarts="legacy")[(".", "loss")]
    np.testing.assert_array_equal(legacy.step, np.arange(12))


def test_kinds_filter(runs):
    d = os.path.join(runs, "tf1")
    only = load_logdir(d, kinds=["graphs", "histograms"])
    assert "." in only.graphs and (".", "weights") in only.histograms
    assert not only.scalars and not only.images and not only.run_metadata
    with pytest.raises(ValueError, match="unknown kind"):
        load_logdir(d, kinds=["scalar"])
