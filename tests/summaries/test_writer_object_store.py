"""SummaryWriter to an object store: a run logged to ``s3://`` (moto's S3 server on 127.0.0.1, the real S3 API)
or ``memory://`` is stored as new immutable objects and reads back, through our reader, TF's summary_iterator
and TensorBoard, equal to the same run logged to a local folder; what flush() stored survives SIGKILL, what is
held is stored at exit and on SIGTERM, failed uploads are retried without loss, and a URL that cannot be
written is a clear error, never a local folder."""
from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

from _s3 import make_bucket
from _tensorboard import TensorBoardServer, tensorboard_without_tensorflow_command

fsspec = pytest.importorskip("fsspec")

WALL = 1_700_000_000.0
BUCKET = "tfevents-writer"
VERTICES = np.random.default_rng(3).random((1, 5, 3))
FACES = np.array([[[0, 1, 2], [2, 3, 4]]])


def _graph_def():
    from tfevents.proto import graph_pb2
    graph = graph_pb2.GraphDef()
    graph.node.add(name="x", op="Placeholder").attr["dtype"].type = 1
    graph.node.add(name="y", op="Identity", input=["x"])
    return graph


def log_every_kind(w) -> None:
    """Every summary kind, with a flush() between the parts, so that an object store holds the run in several
    objects. Values come from a seeded generator; wall times are given wherever the method takes one."""
    from tfevents.proto import config_pb2, event_pb2
    rng = np.random.default_rng(5)
    w.add_graph(_graph_def())
    for step in range(3):
        wall = WALL + step
        w.add_scalar("loss", 1.0 / (step + 1), step, walltime=wall)
        w.add_scalars("lr", {"a": 0.1 * step, "b": 0.2 * step}, step, walltime=wall)
        w.add_histogram("weights", rng.normal(size=200) + step, step, walltime=wall)
        w.add_text("notes", "step **%d**" % step, step, walltime=wall)
        w.flush()
    w.add_histogram_raw("raw", 0.0, 3.0, 6, 9.0, 19.0, [1.0, 2.0, 3.0], [1, 2, 3], global_step=1, walltime=WALL)
    w.add_image("image", rng.random((3, 6, 5)), 1, walltime=WALL)
    w.add_images("images", rng.integers(0, 256, (2, 4, 3, 3), dtype=np.uint8), 1, walltime=WALL, dataformats="NHWC")
    w.add_audio("sound", np.sin(np.linspace(0, 40, 800)) * 0.5, 1, sample_rate=8000, walltime=WALL)
    labels = rng.random(40) < 0.5
    w.add_pr_curve("pr", labels, np.clip(labels * 0.3 + rng.random(40) * 0.7, 0, 1), 1, num_thresholds=11,
                   walltime=WALL)
    w.flush()
    w.add_video("clip", rng.integers(0, 255, (1, 3, 3, 8, 8), dtype=np.uint8), 2, walltime=WALL)
    w.add_image_with_boxes("boxes", rng.random((3, 16, 16)), np.array([[1, 1, 9, 9]]), 2, labels=["x"], walltime=WALL)
    w.add_mesh("cloud", VERTICES, faces=FACES, global_step=2, walltime=WALL)
    w.add_tensor("tensor", np.arange(6, dtype=np.int32).reshape(2, 3), 2, walltime=WALL)
    w.add_custom_scalars_multilinechart(["loss"], category="training", title="loss")
    run_metadata = config_pb2.RunMetadata()
    run_metadata.step_stats.dev_stats.add(device="/device:CPU:0").node_stats.add(node_name="y")
    w.add_run_metadata(run_metadata, "step1", 1)
    w.add_session_log(event_pb2.SessionLog(status=event_pb2.SessionLog.CHECKPOINT, checkpoint_path="ckpt"), 2,
                      walltime=WALL)
    w.add_hparams({"lr": 0.01, "optimizer": "adam"}, {"hparam/accuracy": 0.75})
    w.add_embedding(rng.random((4, 3)), metadata=["a", "b", "c", "d"], global_step=2, tag="feat")


def canonical(value, drop=("wall_time", "start_time", "end_time", "config_path", "fs")):
    """A record, series or mapping as nested plain values, without what differs between two stores of one run
    (wall times the methods take none of, where files are)."""
    if dataclasses.is_dataclass(value):
        return tuple((f.name, canonical(getattr(value, f.name))) for f in dataclasses.fields(value)
                     if f.name not in drop)
    if isinstance(value, dict):
        return tuple(sorted((canonical(k), canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(canonical(v) for v in value)
    if isinstance(value, np.ndarray):
        return (str(value.dtype), value.shape, value.tolist() if value.dtype == object else value.tobytes())
    return value


KINDS = ("runs", "scalars", "histograms", "images", "audio", "text", "pr_curves", "tensors", "videos", "meshes",
         "hparams", "graphs", "run_metadata", "session_logs")


def assert_same_run(remote, local) -> None:
    for kind in KINDS:
        assert canonical(getattr(remote, kind)) == canonical(getattr(local, kind)), kind
        assert getattr(local, kind), kind   # every kind was logged
    for key, series in local.scalars.items():   # wall times as given (add_hparams takes none)
        if key[1] != "hparam/accuracy":
            np.testing.assert_array_equal(remote.scalars[key].wall_time, series.wall_time)
    assert sorted(remote.embeddings) == sorted(local.embeddings)
    for key, embedding in local.embeddings.items():
        np.testing.assert_array_equal(remote.embeddings[key].matrix(), embedding.matrix())
        assert remote.embeddings[key].metadata() == embedding.metadata()
    assert not remote.problems and not local.problems


# ------------------------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def s3(s3_endpoint):
    """``(storage_options, s3fs filesystem)`` for moto's server, with the bucket made."""
    return make_bucket(s3_endpoint, BUCKET)


@pytest.fixture(scope="module")
def runs(s3, tmp_path_factory):
    """The run logged to a local folder and to ``s3://<bucket>/every/exp``: ``(local logdir, s3 logdir URL)``."""
    from tfevents.summaries import SummaryWriter
    local = str(tmp_path_factory.mktemp("local") / "exp")
    with SummaryWriter(local) as w:
        log_every_kind(w)
    with SummaryWriter("s3://%s/every/exp" % BUCKET, storage_options=s3[0]) as w:
        log_every_kind(w)
    return os.path.dirname(local), "s3://%s/every" % BUCKET


def objects(fs, folder):
    """The event objects directly in ``folder``, in name order."""
    return sorted(p for p in fs.ls(folder, detail=False) if "tfevents" in p.rsplit("/", 1)[-1])


# ------------------------------------------------------------------------------------------- readers

def test_the_run_is_new_objects_each_an_event_file(runs, s3):
    """One object per flush (and the first, the file_version alone, made with the writer), named in write
    order; each starts with a file_version event, so each is an event file on its own."""
    from tfevents.summaries import summary_iterator
    fs = s3[1]
    names = objects(fs, BUCKET + "/every/exp")
    assert len(names) == 1 + 3 + 1 + 1, names        # created, three flushes, one flush, close
    assert [n.rsplit(".", 1)[1] for n in names] == ["%08d" % i for i in range(len(names))]
    with tempfile.TemporaryDirectory() as tmp:
        for i, name in enumerate(names):
            path = os.path.join(tmp, "%d.tfevents" % i)
            fs.get(name, path)
            events = list(summary_iterator(path))
            assert events[0].file_version == "brain.Event:2"
            assert (len(events) == 1) == (i == 0)


def test_our_reader_reads_the_s3_run_as_the_local_run(runs, s3):
    from tfevents.summaries.reader import load_logdir
    local, url = runs
    assert_same_run(load_logdir(url, storage_options=s3[0]), load_logdir(local))


def test_memory_url_works_the_same(runs):
    from tfevents.summaries import SummaryWriter
    from tfevents.summaries.reader import load_logdir
    try:
        with SummaryWriter("memory://tfevents-writer-test/exp") as w:
            log_every_kind(w)
        assert len(objects(fsspec.filesystem("memory"), "/tfevents-writer-test/exp")) == 6
        assert_same_run(load_logdir("memory://tfevents-writer-test"), load_logdir(runs[0]))
    finally:
        fsspec.filesystem("memory").rm("/tfevents-writer-test", recursive=True)


def test_tf_summary_iterator_over_the_objects_reads_the_local_file(runs, s3, tf, tmp_path):
    """TF's own iterator, object by object in name order, yields the local file's events (wall times aside
    where a method takes none); every object starts with its own file_version event."""
    local, url = runs
    fs = s3[1]

    def events(paths):
        out = []
        for path in paths:
            got = list(tf.compat.v1.train.summary_iterator(path))
            assert got[0].file_version == "brain.Event:2", path
            for event in got[1:]:
                event.wall_time = 0
                out.append(event.SerializeToString(deterministic=True))
        return out

    downloaded = []
    for i, name in enumerate(objects(fs, BUCKET + "/every/exp")):
        downloaded.append(str(tmp_path / ("%02d.tfevents" % i)))
        fs.get(name, downloaded[-1])
    (local_file,) = [str(p) for p in pathlib.Path(local, "exp").glob("*tfevents*")]
    assert events(downloaded) == events([local_file])


# ------------------------------------------------------------------------------------------- TensorBoard

def _answers(server, run):
    """What TensorBoard's HTTP API answers about ``run``: tags of each dashboard, scalar and histogram
    points without wall times, the bytes of the first image, the text."""
    def tags(plugin):
        return server.json("/data/plugin/%s/tags" % plugin).get(run)

    scalars = server.json("/data/plugin/scalars/scalars", run=run, tag="loss")
    histograms = server.json("/data/plugin/histograms/histograms", run=run, tag="weights")
    (image,) = server.json("/data/plugin/images/images", run=run, tag="image", sample=0)
    return {
        "tags": {p: tags(p) for p in ("scalars", "histograms", "images", "audio", "text", "pr_curves", "mesh")},
        "scalars": [row[1:] for row in scalars],
        "histograms": [row[1:] for row in histograms],
        "image": server.get("/data/plugin/images/individualImage?" + image["query"]),
        "text": server.json("/data/plugin/text/text", run=run, tag="notes/text_summary"),
    }


def test_tensorboard_reads_the_s3_run_as_the_local_run(runs, s3, s3_endpoint, tmp_path):
    """TensorBoard's Python loader reads ``s3://`` itself (as TensorBoard without TensorFlow does: its
    stub's boto3 client, the endpoint in S3_ENDPOINT; TensorFlow 2.x's gfile has no s3 any more), beside
    the local run; its Rust data server (which reads only local disks and gs://) reads a copy of the objects
    beside the local run. Both answer the same for the two runs."""
    local, url = runs
    s3[1].get(BUCKET + "/every/exp", str(tmp_path / "copy" / "s3"), recursive=True)
    import shutil
    shutil.copytree(os.path.join(local, "exp"), tmp_path / "copy" / "local")
    env = {"S3_ENDPOINT": s3_endpoint, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1"}
    spec = "local:%s,s3:%s/exp" % (os.path.join(local, "exp"), url)
    with TensorBoardServer(spec, logdir_spec=True, command=tensorboard_without_tensorflow_command(), env=env,
                           timeout=90) as python_loader, \
            TensorBoardServer(str(tmp_path / "copy"), load_fast=True, timeout=90) as rust_server:
        # --logdir_spec names the runs "<name>/<run>"
        for server, runs in ((python_loader, ("local/.", "s3/.")), (rust_server, ("local", "s3"))):
            server.wait_for("both runs", lambda: server.json("/data/plugin/scalars/tags"),
                            done=lambda tags: set(runs) <= set(tags))
            # polled together until both runs are loaded alike: a loader may list a run's tags before it has
            # read all of that run's files (the hparams sub-run's scalar arrives a reload later)
            local_answer, s3_answer = server.wait_for(
                "both runs loaded", lambda: [_answers(server, run) for run in runs],
                done=lambda answers: answers[0] == answers[1] and all(
                    len(a["scalars"]) == 3 and all(a["tags"].values()) for a in answers))
            assert s3_answer == local_answer
            assert s3_answer["scalars"] == [[s, float(np.float32(1.0 / (s + 1)))] for s in range(3)]


# ------------------------------------------------------------------------------------------- object count

def test_object_count_of_100000_scalars_is_bounded(s3):
    """At the default settings (flush_secs 120, object_bytes 8 MiB) 100,000 scalars logged as fast as they
    come make 2 objects: the first (made with the writer) and the one close() stores."""
    from tfevents.summaries import SummaryWriter
    from tfevents.summaries.reader import read_scalars
    url = "s3://%s/count/exp" % BUCKET
    with SummaryWriter(url, storage_options=s3[0]) as w:
        for step in range(100_000):
            w.add_scalar("loss", step * 0.5, step)
    assert len(objects(s3[1], BUCKET + "/count/exp")) == 2
    series = read_scalars(url, storage_options=s3[0])[(".", "loss")]
    np.testing.assert_array_equal(series.step, np.arange(100_000))


def test_small_settings_bound_the_objects_by_bytes_and_time(s3):
    """object_bytes and flush_secs bound a run's objects: at most 1 + bytes / object_bytes + seconds /
    flush_secs + 1 (the close)."""
    import time
    from tfevents.summaries import SummaryWriter
    from tfevents.summaries.reader import read_scalars
    url = "s3://%s/small/exp" % BUCKET
    started = time.monotonic()
    with SummaryWriter(url, flush_secs=0.5, object_bytes=64 << 10, storage_options=s3[0]) as w:
        for step in range(20_000):
            w.add_scalar("loss", step * 0.5, step)
            if step % 2000 == 0:
                time.sleep(0.1)
    seconds = time.monotonic() - started
    names = objects(s3[1], BUCKET + "/small/exp")
    size = sum(s3[1].size(n) for n in names)
    assert 3 <= len(names) <= 2 + size / (64 << 10) + seconds / 0.5, (len(names), size, seconds)
    np.testing.assert_array_equal(read_scalars(url, storage_options=s3[0])[(".", "loss")].step, np.arange(20_000))


# ------------------------------------------------------------------------------------------- failures

class FlakyS3:
    """Makes an s3fs filesystem class whose uploads fail ``fail`` times (then succeed), registered in fsspec
    as ``flakys3://``: the real S3 client underneath, the failure where the network would fail."""

    @staticmethod
    def register():
        import s3fs

        class FlakyS3FileSystem(s3fs.S3FileSystem):
            protocol = ("flakys3",)
            fail = 0
            failed = 0

            async def _pipe_file(self, path, data, **kwargs):
                if FlakyS3FileSystem.fail > 0:
                    FlakyS3FileSystem.fail -= 1
                    FlakyS3FileSystem.failed += 1
                    raise OSError("injected: 503 Slow Down")
                return await super()._pipe_file(path, data, **kwargs)

        fsspec.register_implementation("flakys3", FlakyS3FileSystem, clobber=True)
        return FlakyS3FileSystem


def test_uploads_that_fail_twice_then_succeed_lose_nothing(s3):
    import time
    import warnings
    from tfevents.summaries import SummaryWriter
    from tfevents.summaries.reader import read_scalars
    flaky = FlakyS3.register()
    url = "flakys3://%s/flaky/exp" % BUCKET
    w = SummaryWriter(url, flush_secs=0.3, storage_options=s3[0])
    for step in range(100):
        w.add_scalar("loss", float(step), step)
    flaky.fail = 2
    w.flush()                                   # retried with backoff; returns once stored
    assert flaky.failed == 2 and flaky.fail == 0
    for step in range(100, 200):
        w.add_scalar("loss", float(step), step)
    flaky.fail = 2                              # the writer thread's uploads (every flush_secs) fail twice
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (flaky.fail or w.file_writer._sink.holding or w.file_writer._pending):
        time.sleep(0.05)
    assert flaky.failed == 4 and not w.file_writer._sink.holding
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # an outage that ended and cost nothing: neither error nor warning
        w.add_scalar("loss", 200.0, 200)
    w.close()
    steps = read_scalars("s3://%s/flaky/exp" % BUCKET, storage_options=s3[0])[(".", "loss")].step
    np.testing.assert_array_equal(steps, np.arange(201))


_CHILD = textwrap.dedent("""
    import json, sys, time
    from tfevents.summaries import SummaryWriter
    url, opts, mode = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    w = SummaryWriter(url, storage_options=opts)
    for step in range(1000):
        w.add_scalar("loss", float(step), step)
    if mode == "flush":
        w.flush()
    for step in range(1000, 2000):
        w.add_scalar("loss", float(step), step)
    print("ready", flush=True)
    if mode == "exit":
        sys.exit(0)
    for _ in range(1200):   # a loop, as training is: one time.sleep(120) would miss a signal landing just before it
        time.sleep(0.1)
""")
# (CPython runs a Python signal handler at the main thread's next check; a signal that arrives after the check
# before time.sleep and before its clock_nanosleep begins waits for the whole sleep to end: the parent sends
# SIGTERM right after reading "ready", so one in ~10 runs hung there for 120 s.)


def _child(url, opts, mode):
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, url, json.dumps(opts), mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n", proc.stderr.read() if proc.poll() is not None else ""
    return proc


def test_sigkill_after_flush_loses_nothing_flushed(s3):
    from tfevents.summaries.reader import read_scalars
    url = "s3://%s/killed/exp" % BUCKET
    proc = _child(url, s3[0], "flush")
    proc.kill()
    proc.wait(timeout=30)
    steps = read_scalars(url, storage_options=s3[0])[(".", "loss")].step
    np.testing.assert_array_equal(steps[:1000], np.arange(1000))   # the flushed; perhaps more if uploaded


@pytest.mark.parametrize("mode", ["sigterm", "exit"])
def test_what_is_held_is_stored_on_sigterm_and_at_exit(s3, mode):
    """Nothing flushed: SIGTERM (the process then dies of it, as without the writer) and a normal exit store
    all 2000 points."""
    import signal
    from tfevents.summaries.reader import read_scalars
    url = "s3://%s/%s/exp" % (BUCKET, mode)
    proc = _child(url, s3[0], mode)
    if mode == "sigterm":
        proc.send_signal(signal.SIGTERM)
    try:
        assert proc.wait(timeout=60) == (-signal.SIGTERM if mode == "sigterm" else 0), proc.stderr.read()
    finally:
        if proc.poll() is None:   # no child left behind a failure
            proc.kill()
    steps = read_scalars(url, storage_options=s3[0])[(".", "loss")].step
    np.testing.assert_array_equal(steps, np.arange(2000))


# ------------------------------------------------------------------------------------------- bad URLs

def test_a_missing_bucket_is_an_error_when_the_writer_is_made(s3):
    from tfevents.summaries import SummaryWriter
    with pytest.raises(OSError, match=r"s3://tfevents-no-such-bucket/exp/events\.out\.tfevents\..*after 1 attempt"):
        SummaryWriter("s3://tfevents-no-such-bucket/exp", storage_options=s3[0])


def test_gs_without_gcsfs_is_an_error_naming_gcsfs(tmp_path, monkeypatch):
    import importlib.util
    from tfevents.summaries import SummaryWriter
    if importlib.util.find_spec("gcsfs") is not None:
        pytest.skip("gcsfs is installed here, so gs:// can be written")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ImportError, match=r"gcsfs.*pip install gcsfs"):
        SummaryWriter("gs://bucket/exp")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("logdir", ["s3:/bucket/exp", pathlib.PurePosixPath("s3://bucket/exp"), "memory:exp",
                                    "gs:/bucket/exp"])
def test_paths_that_look_like_urls_are_errors_not_local_folders(tmp_path, monkeypatch, logdir):
    from tfevents.summaries import SummaryWriter
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="looks like a URL but is not one"):
        SummaryWriter(logdir)
    assert os.listdir(tmp_path) == []


def test_file_urls_and_colons_in_local_names_stay_local(tmp_path, monkeypatch):
    from tfevents.summaries import SummaryWriter
    monkeypatch.chdir(tmp_path)
    with SummaryWriter("file://%s/exp" % tmp_path) as w, SummaryWriter("lr:0.1") as v:
        w.add_scalar("loss", 1.0, 0)
        v.add_scalar("loss", 1.0, 0)
    assert len(list((tmp_path / "exp").glob("events.out.tfevents.*"))) == 1
    assert len(list((tmp_path / "lr:0.1").glob("events.out.tfevents.*"))) == 1
