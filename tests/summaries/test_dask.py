"""tfevents.summaries.dask on a real distributed.LocalCluster (2 worker processes): read_scalars and read_logdir
equal load_logdir on the interop logdirs (TF1, TF2, tensorboardX, torch), ours, restarts, corrupt and truncated
files, and on 200 runs in the moto S3 server read by the workers straight from S3; the --dask Parquet export
read back with DuckDB equals the CSV export row for row."""
import csv
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
duckdb = pytest.importorskip("duckdb")
pd = pytest.importorskip("pandas")

from tfevents.proto import event_pb2, summary_pb2  # noqa: E402
from tfevents.summaries import record  # noqa: E402
from tfevents.summaries import dask as tfdask  # noqa: E402
from tfevents.summaries.reader import ReadWarning, load_logdir  # noqa: E402
from tfevents.viewer.cli import main  # noqa: E402

START = event_pb2.SessionLog.START
MODES = ("tensorboard", "python", "legacy", "none")


@pytest.fixture(scope="module")
def client():
    """One LocalCluster of 2 worker processes for the module; its client is the current one."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=4, processes=True, dashboard_address=":0",
                                  silence_logs=40) as cluster, distributed.Client(cluster) as c:
        yield c


# ---------------------------------------------------------------- logdirs

def _ev(wall, step=0, **kw):
    return record.encode_record(event_pb2.Event(wall_time=wall, step=step, **kw).SerializeToString())


def _scalars(tag_values, step, wall):
    s = summary_pb2.Summary()
    for tag, value in tag_values:
        s.value.add(tag=tag, simple_value=value)
    return _ev(wall, step, summary=s)


def _file(tags, steps, wall0, start=None, version=True):
    out = [_ev(wall0, file_version="brain.Event:2")] if version else []
    if start is not None:
        out.append(_ev(wall0, start, session_log=event_pb2.SessionLog(status=START)))
    out += [_scalars([(t, s * 0.5 + i) for i, t in enumerate(tags)], s, wall0 + s) for s in steps]
    return b"".join(out)


def _write_ours(path):
    from tfevents.summaries import SummaryWriter
    rng = np.random.RandomState(1)
    with SummaryWriter(path) as w:
        for step in range(6):
            w.add_scalar("loss", 1.0 / (step + 1), step)
            w.add_scalar("lr", 0.1 * 0.9 ** step, step)
            w.add_histogram("weights", rng.randn(200), step)
        w.add_image("sample", rng.rand(3, 8, 6), 5)
        w.add_text("config", "lr=0.1", 0)
        w.add_video("clip", rng.rand(1, 3, 3, 8, 8), 4)
        w.add_tensor("raw", np.arange(6, dtype=np.int32).reshape(2, 3), 2)
        w.add_pr_curve("pr", rng.rand(20) > 0.5, rng.rand(20), 3)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """ours (our SummaryWriter, several kinds), restarts (a START after points it purges, a second file restarting
    at 7, a run without file_version whose steps go back), a corrupted record and a truncated tail.
    Returns (logdir, {what: (file, offset)})."""
    root = tmp_path_factory.mktemp("mixed")
    _write_ours(str(root / "ours"))
    files = {
        "restart/events.out.tfevents.0000001000.h.1.0": _file(["x", "y"], range(0, 6), 1000.0)
        + _ev(1100.0, 3, session_log=event_pb2.SessionLog(status=START)) + _file(["x", "y"], range(3, 10), 1100.0,
                                                                                 version=False),
        "restart/events.out.tfevents.0000002000.h.1.0": _file(["x", "y"], range(7, 13), 2000.0, start=7),
        "old/events.out.tfevents.0000003000.h.1.0": _file(["a"], [0, 1, 2, 3, 4, 2, 3, 5], 3000.0, version=False),
        "run with space/sub/events.out.tfevents.0000004000.h.1.0": _file(["z"], range(4), 4000.0),
    }
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    good = _file(["loss", "acc"], range(10), 5000.0)
    offsets = list(record_offsets(good))
    corrupt = bytearray(good)
    corrupt[offsets[4] + 14] ^= 0x40  # a payload byte of the record at offsets[4]
    (root / "corrupt").mkdir()
    (root / "corrupt" / "events.out.tfevents.0000005000.h.1.0").write_bytes(bytes(corrupt))
    (root / "corrupt" / "events.out.tfevents.0000006000.h.1.0").write_bytes(_file(["loss"], range(10, 14), 6000.0))
    (root / "truncated").mkdir()
    (root / "truncated" / "events.out.tfevents.0000007000.h.1.0").write_bytes(good[:offsets[-1] + 7])
    where = {"corrupted": (str(root / "corrupt" / "events.out.tfevents.0000005000.h.1.0"), offsets[4]),
             "truncated": (str(root / "truncated" / "events.out.tfevents.0000007000.h.1.0"), offsets[-1])}
    return str(root), where


def record_offsets(data):
    pos = 0
    while pos < len(data):
        yield pos
        pos += record.HEADER_SIZE + int.from_bytes(data[pos:pos + 8], "little") + record.FOOTER_SIZE


# ---------------------------------------------------------------- comparing with load_logdir

def _record_rows(kind, key, value):
    """Expected rows of one (run, tag) of ``kind``, taken from load_logdir's records (independently of tfevents.summaries.dask)."""
    if kind == "histograms":
        s = value
        return [(int(s.step[i]), s.wall_time[i], s.min[i], s.max[i], s.num[i], s.sum[i], s.sum_squares[i],
                 s.bucket_limits[i].tolist(), s.bucket_counts[i].tolist()) for i in range(len(s))]
    get = {"images": lambda r: (r.sample, r.width, r.height, r.colorspace, len(r.data)),
           "videos": lambda r: (r.sample, r.width, r.height, len(r.data)),
           "audio": lambda r: (r.sample, r.sample_rate, r.num_channels, r.content_type, r.length_frames, r.label,
                               len(r.data)),
           "text": lambda r: (r.text.tolist() if isinstance(r.text, np.ndarray) else r.text,),
           "pr_curves": lambda r: tuple(row.tolist() for row in r.data),
           "tensors": lambda r: (str(r.value.dtype), tuple(r.value.shape), r.value.tolist())}[kind]
    return [(r.step, r.wall_time) + get(r) for r in value]


def _frame_rows(kind, df):
    cols = [c for c in tfdask.COLUMNS[kind] if c not in ("run", "tag")]
    out = {}
    for row in df.itertuples(index=False):
        d = row._asdict()
        vals = []
        for c in cols:
            v = d[c]
            vals.append(v.tolist() if isinstance(v, np.ndarray) else v)
        if kind == "tensors":
            assert isinstance(d["value"], np.ndarray) and str(d["value"].dtype) == d["dtype"]
        out.setdefault((d["run"], d["tag"]), []).append(tuple(vals))
    return out


def _assert_same(got, lg, kinds):
    """A DaskLogdir equals a Logdir: every kind's rows, the order and index, files, problems, restarts notes."""
    assert got.runs == lg.runs
    assert got.files == lg.files
    assert got.problems == lg.problems
    assert got.out_of_order == {k: v for k, v in lg.out_of_order.items() if k[1] in kinds}
    assert got.purged == {k: v for k, v in lg.purged.items() if k[1] in kinds}
    for kind in kinds:
        frame = got.frames[kind]
        df = frame.compute()
        assert frame.known_divisions or not len(df)  # an empty frame has no index to divide
        expected = getattr(lg, kind)
        assert got.keys[kind] == sorted(expected)
        pd.testing.assert_index_equal(df.index, pd.RangeIndex(len(df)), exact=True)
        if kind == "scalars":  # one schema: the same frame, dtypes (categorical run/tag, float32 value) included
            pd.testing.assert_frame_equal(df, lg.to_pandas())
            continue
        offline = lg.to_pandas(kind)
        assert list(df.columns) == list(offline.columns) and df.dtypes.to_dict() == offline.dtypes.to_dict(), kind
        assert list(dict.fromkeys(zip(df["run"], df["tag"]))) == sorted(expected)
        assert _frame_rows(kind, df) == {k: _record_rows(kind, k, v) for k, v in expected.items() if len(v)}, kind


def _read_warnings(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs)
    return result, [str(w.message) for w in caught if issubclass(w.category, ReadWarning)]


def test_interop_logdirs_every_kind(client, peer_logdir):
    kinds = sorted(tfdask.TABLE_KINDS)
    got = tfdask.read_logdir(peer_logdir, kinds=kinds, on_error="skip")
    lg = load_logdir(peer_logdir, kinds=kinds, on_error="skip")
    for kind in ("scalars", "histograms", "images", "audio", "text", "pr_curves", "tensors"):
        assert lg.tags(kind), kind  # the peers wrote each of these kinds: the comparison is not vacuous
    _assert_same(got, lg, kinds)
    for tool in ("tf1", "tf2", "tbx", "torch"):
        assert any(run.split("/")[0] == tool for run, _ in got.keys["scalars"]), tool
    df = tfdask.read_scalars(peer_logdir, tags="loss|scalar", runs="^(tf|torch)")
    pd.testing.assert_frame_equal(df.compute(), (load_logdir(peer_logdir, "loss|scalar", "^(tf|torch)",
                                                                     kinds=("scalars",)).to_pandas()))
    assert df.npartitions == len({r for r, _ in load_logdir(peer_logdir, "loss|scalar", "^(tf|torch)",
                                                            kinds=("scalars",)).scalars})


@pytest.mark.parametrize("restarts", MODES)
def test_restarts_corruption_truncation_and_warnings(client, mixed, restarts):
    path, where = mixed
    kinds = sorted(tfdask.TABLE_KINDS)
    got, got_warnings = _read_warnings(tfdask.read_logdir, path, kinds=kinds, restarts=restarts)
    lg, lg_warnings = _read_warnings(load_logdir, path, kinds=kinds, restarts=restarts)
    _assert_same(got, lg, kinds)
    assert got_warnings == lg_warnings  # re-issued on the client, in load_logdir's order
    for kind, (file, offset) in where.items():
        assert any(file in w and "offset %d" % offset in w and kind in w for w in got_warnings), kind
    if restarts != "none":
        assert got.purged and any("purged" in w for w in got_warnings)
    assert lg.tags("videos") and lg.tags("tensors") and lg.tags("histograms")
    scalars, _ = _read_warnings(tfdask.read_scalars, path, restarts=restarts)
    pd.testing.assert_frame_equal(scalars.compute(), lg.to_pandas())


def test_on_error_policies_and_bad_arguments(client, mixed):
    path, where = mixed
    file, offset = where["corrupted"]
    with pytest.raises(record.CorruptedRecordError) as err:
        tfdask.read_scalars(path, on_error="raise")
    assert (err.value.path, err.value.offset) == (file, offset)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = tfdask.read_logdir(path, kinds=("scalars",), on_error="skip")
    assert [(p.path, p.offset) for p in quiet.problems if p.kind == "corrupted"] == [(file, offset)]
    with pytest.raises(ValueError, match="on_error"):
        tfdask.read_scalars(path, on_error="ignore")
    with pytest.raises(ValueError, match="graphs"):
        tfdask.read_logdir(path, kinds=("scalars", "graphs"))
    with pytest.raises(ValueError, match="unknown kind"):
        tfdask.read_logdir(path, kinds=("scalar",))
    with pytest.raises(ValueError, match="regex"):
        tfdask.read_scalars(path, tags="(")
    with pytest.raises(FileNotFoundError):
        tfdask.read_scalars(path + "/missing")
    with pytest.raises(AttributeError, match="not read"):
        quiet.histograms
    empty = tfdask.read_scalars(path, tags="^no such tag$", on_error="skip")
    assert len(empty.compute()) == 0 and list(empty.columns) == ["run", "tag", "step", "wall_time", "value"]
    pd.testing.assert_frame_equal(empty.compute(), load_logdir(path, tags="^no such tag$", kinds=("scalars",),
                                                               on_error="skip").to_pandas())


# ---------------------------------------------------------------- S3 (moto's server), 200 runs

N_RUNS = 200


@pytest.fixture(scope="module")
def s3_logdir(s3_endpoint):
    import s3fs
    opts = {"key": "testing", "secret": "testing",
            "client_kwargs": {"endpoint_url": s3_endpoint, "region_name": "us-east-1"}}
    import boto3
    boto3.client("s3", endpoint_url=opts["client_kwargs"]["endpoint_url"], aws_access_key_id="testing",
                 aws_secret_access_key="testing", region_name="us-east-1").create_bucket(Bucket="sweep")
    fs = s3fs.S3FileSystem(**opts)
    rng = np.random.RandomState(7)
    blobs = {}
    for i in range(N_RUNS):
        run = "lr=%.4f/seed-%d" % (10 ** -rng.uniform(1, 4), i)
        steps = int(rng.randint(20, 60))
        blobs["sweep/logs/%s/events.out.tfevents.0000001000.h.1.0" % run] = _file(["loss", "acc", "lr"],
                                                                                    range(steps), 1000.0)
        if i % 10 == 0:  # a restart from a checkpoint, in a second file
            blobs["sweep/logs/%s/events.out.tfevents.0000002000.h.1.0" % run] = _file(["loss", "acc"],
                                                                                        range(steps // 2, steps + 9),
                                                                                        2000.0, start=steps // 2)
    bad = "sweep/logs/lr=bad/seed-x/events.out.tfevents.0000001000.h.1.0"
    data = bytearray(_file(["loss"], range(6), 1.0))
    data[-3] ^= 1  # the last record's payload checksum
    blobs[bad] = bytes(data)
    fs.pipe(blobs)
    return "s3://sweep/logs", opts, "sweep/logs/lr=bad/seed-x/events.out.tfevents.0000001000.h.1.0"


def test_200_runs_read_by_the_workers_straight_from_s3(client, s3_logdir, monkeypatch):
    import s3fs
    url, opts, bad = s3_logdir
    lg, lg_warnings = _read_warnings(load_logdir, url, kinds=("scalars",), storage_options=opts)
    assert len(lg.runs) == N_RUNS + 1 and lg.purged

    def no_reading_here(*args, **kwargs):
        raise AssertionError("the client opened a file: only the workers may read the event files")

    monkeypatch.setattr(s3fs.S3FileSystem, "_open", no_reading_here)  # in this (the client's) process only
    with distributed.get_task_stream() as stream:
        got, got_warnings = _read_warnings(tfdask.read_logdir, url, kinds=("scalars",), storage_options=opts)
        df = tfdask.read_scalars(url, runs="seed-1", on_error="skip", storage_options=opts)
    monkeypatch.undo()
    _assert_same(got, lg, ["scalars"])
    assert got_warnings == lg_warnings and any(bad in w and "corrupted" in w for w in got_warnings)
    workers = {t["worker"] for t in stream.data if str(t["key"]).startswith("tfevents-scan")}
    assert workers == set(client.scheduler_info()["workers"]), "both workers scan files"
    ref = load_logdir(url, runs="seed-1", kinds=("scalars",), on_error="skip", storage_options=opts).to_pandas()
    pd.testing.assert_frame_equal(df.compute(), ref)
    per_run = df.groupby("run").step.max().compute()
    assert per_run.to_dict() == ref.groupby("run").step.max().to_dict()


# ---------------------------------------------------------------- the CLI: partitioned Parquet

def _csv_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["run", "tag", "step", "wall_time", "value"]
    return [tuple(r) for r in rows[1:]]


def _duckdb_rows(out_dir):
    con = duckdb.connect()
    rows = con.execute(
        "SELECT run, tag, step, wall_time, value FROM read_parquet(?, hive_partitioning = true, "
        "hive_types = {'run': 'VARCHAR'}, file_row_number = true) ORDER BY run, file_row_number",
        [os.path.join(out_dir, "*", "*.parquet")]).fetchall()
    return [(run, tag, str(step), repr(wall), repr(value)) for run, tag, step, wall, value in rows]


def test_export_parquet_partitioned_equals_csv(client, mixed, peer_logdir, tmp_path, capsys):
    path, where = mixed
    address = client.scheduler.address
    for logdir, scheduler, name in ((path, address, "mixed"), (peer_logdir, "local:1", "peers")):
        csv_out, pq_out = tmp_path / (name + ".csv"), tmp_path / (name + "-parquet")
        assert main(["export", logdir, "-o", str(csv_out), "--on-error", "skip"]) == 0
        assert main(["export", logdir, "-o", str(pq_out), "--dask", scheduler]) == 0
        expected = _csv_rows(csv_out)
        assert len(expected) > 50
        assert _duckdb_rows(str(pq_out)) == expected  # row for row
        runs = sorted({r[0] for r in expected})
        dirs = sorted(os.listdir(pq_out))
        assert dirs == sorted(tfdask.escape_run(r) for r in runs)
        assert all(os.listdir(pq_out / d)[0].startswith("part-") for d in dirs)
        back = pd.read_parquet(pq_out)  # pandas (pyarrow's hive partitioning) decodes the names too
        assert sorted(back["run"].astype(str).unique()) == runs and len(back) == len(expected)
    assert "run=run%20with%20space%2Fsub" in os.listdir(tmp_path / "mixed-parquet")
    assert tfdask.escape_run("a/b c%d=é") == "run=a%2Fb%20c%25d%3D%C3%A9"
    err = capsys.readouterr().err
    assert "warning: %s at offset %d: corrupted" % where["corrupted"] in err
    # an existing output, a corrupt record with --on-error raise, bad schedulers, csv with --dask
    assert main(["export", path, "-o", str(tmp_path / "mixed-parquet"), "--dask", address]) == 2
    assert "not an empty directory" in capsys.readouterr().err
    assert main(["export", path, "-o", str(tmp_path / "r"), "--dask", address, "--on-error", "raise"]) == 1
    assert "offset %d" % where["corrupted"][1] in capsys.readouterr().err and not (tmp_path / "r").exists()
    assert main(["export", path, "-o", str(tmp_path / "x"), "--dask", "local:zero"]) == 2
    assert main(["export", path, "-o", str(tmp_path / "x.csv"), "--dask", address, "--format", "csv"]) == 2
    assert main(["export", path, "-o", str(tmp_path / "none"), "--dask", address, "--tags", "^nothing$"]) == 1


def test_tfevents_summaries_does_not_import_dask(mixed):
    code = ("import sys, tfevents.summaries as s, tfevents.summaries.reader as r; s.SummaryWriter; "
            "r.load_logdir(sys.argv[1], on_error='skip').to_pandas(); "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')); "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code, mixed[0]], check=True)
