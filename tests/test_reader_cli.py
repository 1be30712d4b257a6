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
    from tfevents.viewer.cmd_inspect import ProgressBar
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
