"""fsspec URLs: a logdir in memory:// and in S3 (moto's server on 127.0.0.1) reads like a local one."""

import numpy as np
import pytest

from tfevents.proto import event_pb2, summary_pb2
from tfevents.summaries import record
from tfevents.summaries.reader import load_logdir, read_scalars


def _file(tag, steps, wall0, start=None):
    evs = [event_pb2.Event(wall_time=wall0, file_version="brain.Event:2")]
    if start is not None:
        evs.append(event_pb2.Event(wall_time=wall0, step=start,
                                   session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START)))
    for s in steps:
        summ = summary_pb2.Summary()
        summ.value.add(tag=tag, simple_value=s * 0.5)
        evs.append(event_pb2.Event(wall_time=wall0 + s, step=s, summary=summ))
    return b"".join(record.encode_record(e.SerializeToString()) for e in evs)


FILES = {
    "train/events.out.tfevents.0000000001.h.1.0": _file("loss", range(5), 1.0),
    "train/events.out.tfevents.0000000002.h.1.0": _file("loss", range(3, 8), 100.0, start=3),
    "eval/events.out.tfevents.0000000001.h.2.0": _file("acc", range(4), 1.0),
    "events.out.tfevents.0000000001.h.3.0": _file("root", [1], 1.0),
    "notes.txt": b"not an event file",
}


def _check(lg):
    assert lg.runs == [".", "eval", "train"]
    loss = lg.scalars[("train", "loss")]
    np.testing.assert_array_equal(loss.step, np.arange(8))
    np.testing.assert_array_equal(loss.wall_time[3:], 100.0 + np.arange(3, 8))
    assert lg.scalars[("eval", "acc")].value.tolist() == [0.0, 0.5, 1.0, 1.5]
    assert not [p for p in lg.problems if p.kind != "purged"]


def _local_reference(tmp_path):
    for name, data in FILES.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return load_logdir(str(tmp_path), on_error="skip")


def test_memory_filesystem(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    for name, data in FILES.items():
        with fs.open("/tfevents-test/logs/" + name, "wb") as f:
            f.write(data)
    try:
        lg = load_logdir("memory://tfevents-test/logs", on_error="skip")
        _check(lg)
        ref = _local_reference(tmp_path)
        assert sorted(lg.scalars) == sorted(ref.scalars)
        one = read_scalars("memory://tfevents-test/logs/eval/events.out.tfevents.0000000001.h.2.0")
        assert list(one) == [(".", "acc")]
        sub = load_logdir("memory://tfevents-test/logs", runs="^train$", on_error="skip")
        assert sub.runs == ["train"]
    finally:
        fs.rm("/tfevents-test", recursive=True)


def test_s3_with_moto(s3_endpoint, monkeypatch):
    import s3fs
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    opts = {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": s3_endpoint}}
    fs = s3fs.S3FileSystem(**opts)
    fs.mkdir("tfevents-bucket")
    for name, data in FILES.items():
        fs.pipe("tfevents-bucket/logs/" + name, data)
    lg = load_logdir("s3://tfevents-bucket/logs", on_error="skip", storage_options=opts)
    _check(lg)
    scalars = read_scalars("s3://tfevents-bucket/logs", tags="acc", storage_options=opts)
    assert list(scalars) == [("eval", "acc")]
