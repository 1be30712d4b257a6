"""`tfevents inspect` and `tfevents export` on a small logdir with a restart and a corrupt record."""
import csv
import json

import numpy as np
import pytest

from tfevents.proto import event_pb2, summary_pb2
from tfevents.summaries import record
from tfevents.viewer.cli import main


def _ev(wall, step=0, **kw):
    return record.encode_record(event_pb2.Event(wall_time=wall, step=step, **kw).SerializeToString())


def _scalar(tag, step, value):
    s = summary_pb2.Summary()
    s.value.add(tag=tag, simple_value=value)
    return _ev(1000.0 + step, step, summary=s)


@pytest.fixture
def logdir(tmp_path):
    train = tmp_path / "train"
    train.mkdir()
    blobs = [_ev(1000.0, file_version="brain.Event:2")] + [_scalar("loss", s, 1.0 / (s + 1)) for s in range(6)]
    corrupt_at = sum(len(b) for b in blobs[:3])
    data = bytearray(b"".join(blobs))
    data[corrupt_at + 20] ^= 0x10  # payload of the step-2 record
    (train / "events.out.tfevents.0000001000.h.1.0").write_bytes(bytes(data))
    again = [_ev(2000.0, file_version="brain.Event:2"),
             _ev(2000.0, 4, session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START))]
    again += [_scalar("loss", s, -s) for s in range(4, 8)]
    (train / "events.out.tfevents.0000002000.h.1.0").write_bytes(b"".join(again))
    ev = tmp_path / "eval"
    ev.mkdir()
    (ev / "events.out.tfevents.0000001000.h.2.0").write_bytes(
        b"".join([_ev(1.0, file_version="brain.Event:2")] + [_scalar("acc", s, s / 10) for s in range(3)]))
    return tmp_path, corrupt_at


def test_inspect_table(logdir, capsys):
    path, corrupt_at = logdir
    assert main(["inspect", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "corrupted" in err and "offset %d" % corrupt_at in err  # warned on stderr, and went on
    assert "run train  (2 files)" in out and "run eval  (1 file)" in out
    line = next(l for l in out.splitlines() if " loss " in l)
    assert line.split()[:4] == ["scalars", "loss", "7", "0..7"]  # steps 0,1,3 + 4..7 (2 corrupt, 4,5 purged)
    assert "1 step(s) go back" in line and "2 purged by restarts" in line
    assert "SessionLog.START at step 4" in out
    assert "offset %d: corrupted" % corrupt_at in out


def test_inspect_json_and_modes(logdir, capsys):
    path, corrupt_at = logdir
    assert main(["inspect", str(path), "--json", "--restarts", "none", "--on-error", "skip"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    doc = json.loads(out)
    loss = next(s for s in doc["series"] if s["tag"] == "loss")
    assert loss["count"] == 9 and loss["purged"] == 0 and loss["out_of_order"] == 1
    assert [(p["kind"], p["offset"]) for p in doc["problems"]] == [("corrupted", corrupt_at)]
    assert main(["inspect", str(path), "--on-error", "raise"]) == 1
    assert "corrupted record at %d" % corrupt_at in capsys.readouterr().err
    assert main(["inspect", str(path / "missing")]) == 2


def test_export_csv_parquet_and_tensorboard_csv(logdir, tmp_path, capsys):
    path, _ = logdir
    out = tmp_path / "out.csv"
    assert main(["export", str(path), "-o", str(out), "--runs", "train|eval"]) == 0
    rows = list(csv.reader(open(out)))
    assert rows[0] == ["run", "tag", "step", "wall_time", "value"]
    loss = [r for r in rows[1:] if r[1] == "loss"]
    assert [int(r[2]) for r in loss] == [0, 1, 3, 4, 5, 6, 7]
    assert float(loss[-1][4]) == -7.0 and float(loss[0][3]) == 1000.0
    assert main(["export", str(path), "-o", str(tmp_path / "acc.csv"), "--tags", "^acc$"]) == 0
    assert {r[1] for r in list(csv.reader(open(tmp_path / "acc.csv")))[1:]} == {"acc"}
    pq = pytest.importorskip("pyarrow.parquet")
    assert main(["export", str(path), "-o", str(tmp_path / "out.parquet")]) == 0
    table = pq.read_table(tmp_path / "out.parquet").to_pandas()
    assert list(table.columns) == ["run", "tag", "step", "wall_time", "value"]
    assert len(table) == len(rows) - 1
    np.testing.assert_array_equal(table["step"].to_numpy(), [int(r[2]) for r in rows[1:]])
    d = tmp_path / "tb"
    assert main(["export", str(path), "-o", str(d), "--format", "tensorboard-csv"]) == 0
    lines = open(d / "run-train-tag-loss.csv").read().splitlines()
    assert lines[0] == "Wall time,Step,Value" and lines[1] == "1000.0,0,1.0"
    assert main(["export", str(path), "-o", str(tmp_path / "none.csv"), "--tags", "nothing"]) == 1
    capsys.readouterr()


def test_progress_bar_reports_bytes(logdir):
    import io
    from tfevents.summaries.reader import load_logdir
    from tfevents.viewer.cli.cmd_inspect import ProgressBar
    path, _ = logdir
    stream = io.StringIO()
    bar = ProgressBar(stream, force=True)
    load_logdir(str(path), on_error="skip", progress=bar, workers=1)
    bar.close()
    text = stream.getvalue()
    assert text.count("\r") == 3 and "100%" in text.splitlines()[-1]
    quiet = io.StringIO()
    ProgressBar(quiet)(1, 10)  # not a terminal, small: no bar
    assert quiet.getvalue() == ""


def test_inspect_lists_videos_meshes_embeddings_and_tensors(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    tensorboardX = pytest.importorskip("tensorboardX")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from tfevents.summaries import SummaryWriter
    rng = np.random.default_rng(0)
    with SummaryWriter(str(tmp_path / "ours")) as w:
        for step in (1, 2):
            w.add_video("clip", rng.integers(0, 256, (2, 4, 3, 8, 8)).astype(np.uint8), step, fps=5)
        w.add_mesh("pyramid", rng.normal(size=(1, 4, 3)), colors=np.zeros((1, 4, 3)),
                   faces=np.array([[[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]]), global_step=3)
    tw = tensorboardX.SummaryWriter(str(tmp_path / "tbx"))
    tw.add_embedding(rng.normal(size=(30, 5)), metadata=["g%d" % (i // 10) for i in range(30)], tag="words",
                     global_step=1)
    tw.add_mesh("cloud", rng.normal(size=(1, 50, 3)), global_step=1)
    tw.close()
    with TorchWriter(str(tmp_path / "torch")) as pw:
        pw.add_embedding(torch.randn(40, 3), metadata=[[i, "p%d" % i] for i in range(40)],
                         metadata_header=["value", "name"], tag="numeric")
        pw.add_tensor("t", torch.zeros(2, 3, dtype=torch.float16), 4)
    assert main(["inspect", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = {tuple(line.split()[:2]): line for line in out.splitlines() if line.startswith("  ")}
    assert lines[("videos", "clip")].split()[2:4] == ["2", "1..2"]
    assert "16x8, 4 frames, 5 fps" in lines[("videos", "clip")]
    assert "vertices 1x4x3, faces 1x4x3, colors" in lines[("meshes", "pyramid")]
    assert lines[("meshes", "cloud")].rstrip().endswith("vertices 1x50x3")
    assert lines[("embeddings", "words:00001")].split()[2:4] == ["1", "-"]
    assert "30x5, metadata label" in lines[("embeddings", "words:00001")]
    assert "40x3, metadata value, name" in lines[("embeddings", "numeric:00000")]
    assert "float16 [2, 3]" in lines[("tensors", "t")]
    assert main(["inspect", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {(r["run"], r["kind"], r["tag"]): r for r in doc["series"]}
    assert rows[("tbx", "embeddings", "words:00001")]["shape"] == "30x5, metadata label"
    assert rows[("ours", "meshes", "pyramid")]["count"] == 1 and rows[("ours", "videos", "clip")]["count"] == 2
    assert ("tbx", "tensors", "cloud_1") not in rows  # mesh components are not tensors
