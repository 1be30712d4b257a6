"""Logdir.to_pandas(kind=...), to_arrow() and to_polars() (summaries/reader/tables.py) against the typed records,
field by field, on the runs of TF1, TF2, tensorboardX and torch (and our writer's videos); scalars against tbparse."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from tfevents.summaries import SummaryWriter
from tfevents.summaries.reader import load_logdir
from tfevents.summaries.reader.tables import TABLE_KINDS

pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")

RECORD_KINDS = ("images", "audio", "videos", "text", "pr_curves", "tensors")
PR_ROWS = ("true_positives", "false_positives", "true_negatives", "false_negatives", "precision", "recall")


@pytest.fixture(scope="module")
def logdir(peer_logdir, tmp_path_factory):
    """The peers' runs, and one of ours with videos (the peers write none)."""
    root = tmp_path_factory.mktemp("videos")
    with SummaryWriter(str(root / "ours")) as w:
        rng = np.random.RandomState(0)
        for step in range(2):
            w.add_video("clip", rng.randint(0, 255, (1, 3, 3, 6, 5)).astype(np.uint8), step, fps=4)
    lg = load_logdir(peer_logdir, on_error="skip")
    videos = load_logdir(str(root), on_error="skip")
    lg.videos.update(videos.videos)
    return lg


def _expected_rows(lg, kind, media):
    """``[{column: value}]`` from the typed records, in (run, tag) order: the reference the tables must equal."""
    rows = []
    if kind == "histograms":
        for (run, tag), h in sorted(lg.histograms.items()):
            for i in range(len(h)):
                row = {"run": run, "tag": tag}
                for f in ("step", "wall_time", "min", "max", "num", "sum", "sum_squares"):
                    row[f] = getattr(h, f)[i]
                row["bucket_limits"], row["bucket_counts"] = h.bucket_limits[i], h.bucket_counts[i]
                rows.append(row)
        return rows
    for (run, tag), records in sorted(getattr(lg, kind).items()):
        for r in records:
            row = {"run": run, "tag": tag}
            for f in dataclasses.fields(r):
                if f.name == "data" and kind == "pr_curves":
                    row.update({name: r.data[i] for i, name in enumerate(PR_ROWS)})
                elif f.name == "value" and kind == "tensors":
                    row.update(dtype=str(r.value.dtype), shape=tuple(r.value.shape), value=r.value)
                elif f.name != "data" or media:
                    row[f.name] = getattr(r, f.name)
                if f.name == "data" and kind in ("images", "audio", "videos"):
                    row["size"] = len(r.data)  # the encoded bytes' length, with or without them
            rows.append(row)
    return rows


def _same(got, want, where):
    if isinstance(want, np.ndarray):
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=where)
        if want.dtype != object:
            assert np.asarray(got).dtype == want.dtype, where
    elif isinstance(want, float) and math.isnan(want):
        assert isinstance(got, float) and math.isnan(got), where
    elif isinstance(want, (int, float)) and not isinstance(want, bool):  # a column of ints and floats is float
        assert got == want and isinstance(got, (int, float)), (where, got, want)
    else:
        assert got == want and type(got) is type(want), (where, got, want)


def _flat(want):
    """What the Arrow column holds for a record's field: arrays flattened to lists of Python values."""
    if isinstance(want, np.ndarray):
        return np.ravel(want).tolist()
    if isinstance(want, tuple):
        return list(want)
    if isinstance(want, (np.floating, np.integer)):
        return want.item()
    return want


@pytest.mark.parametrize("media", [False, True])
@pytest.mark.parametrize("kind", ("histograms",) + RECORD_KINDS)
def test_records_tables_equal_the_records_field_by_field(logdir, kind, media):
    want = _expected_rows(logdir, kind, media)
    assert want, kind  # the runs hold this kind: the comparison is not vacuous
    df = logdir.to_pandas(kind, media=media)
    assert sorted(df.columns) == sorted(want[0]) and len(df) == len(want)
    assert list(df.columns[:4]) == ["run", "tag", "step", "wall_time"]
    assert isinstance(df["run"].dtype, pd.CategoricalDtype) and isinstance(df["tag"].dtype, pd.CategoricalDtype)
    for i, row in enumerate(df.to_dict("records")):
        for name, value in want[i].items():
            _same(row[name] if not isinstance(value, (np.floating, np.integer)) else type(value)(row[name]),
                  value, "%s row %d %s" % (kind, i, name))
    table = logdir.to_arrow(kind, media=media)
    assert pa.types.is_dictionary(table.schema.field("run").type)
    arrow_rows = table.to_pylist()
    polars_rows = logdir.to_polars(kind, media=media).to_dicts()
    assert len(arrow_rows) == len(polars_rows) == len(want)
    for i, (a, p) in enumerate(zip(arrow_rows, polars_rows)):
        for name, value in want[i].items():
            expected = _flat(value)
            if kind == "tensors" and name == "value":
                if value.dtype == object:
                    assert a["value"] is None and a["strings"] == np.ravel(value).tolist()
                else:
                    back = np.frombuffer(a["value"], np.dtype(a["dtype"]).newbyteorder("<")).reshape(a["shape"])
                    np.testing.assert_array_equal(back, value)
                    assert back.dtype == value.dtype and a["strings"] is None
                assert p["value"] == a["value"] and p["strings"] == a["strings"]
                continue
            if kind == "text" and name == "text" and "shape" in a:
                expected = np.ravel(value).tolist() if isinstance(value, np.ndarray) else [value]
                assert a["shape"] == list(np.shape(value))
            assert a[name] == expected or (expected != expected and a[name] != a[name]), (kind, i, name)
            assert p[name] == a[name] or (expected != expected and p[name] != p[name]), (kind, i, name)


def test_media_bytes_only_on_request(logdir):
    for kind in ("images", "audio", "videos"):
        assert "data" not in logdir.to_pandas(kind).columns
        df = logdir.to_pandas(kind, media=True)
        first = next(r for _, records in sorted(getattr(logdir, kind).items()) for r in records)
        assert df["data"].iloc[0] == first.data and isinstance(df["data"].iloc[0], bytes)


def test_scalars_columns_dtypes_and_zero_copy_arrow(logdir):
    df = logdir.to_pandas()
    keys = sorted(logdir.scalars)
    assert list(df.columns) == ["run", "tag", "step", "wall_time", "value"]
    assert df["run"].dtype == pd.CategoricalDtype(sorted({r for r, _ in keys}))
    assert df["step"].dtype == np.int64 and df["wall_time"].dtype == np.float64
    assert len(df) == sum(len(s) for s in logdir.scalars.values())
    start = 0
    for run, tag in keys:
        s = logdir.scalars[(run, tag)]
        part = df.iloc[start:start + len(s)]
        start += len(s)
        assert (part["run"] == run).all() and (part["tag"] == tag).all()
        np.testing.assert_array_equal(part["step"].to_numpy(), s.step)
        np.testing.assert_array_equal(part["wall_time"].to_numpy(), s.wall_time)
        np.testing.assert_array_equal(part["value"].to_numpy(), s.value)
    table = logdir.to_arrow()
    assert table.num_rows == len(df) and table.column("value").type == pa.from_numpy_dtype(df["value"].dtype)
    for chunk, (run, tag) in zip(table.to_batches(), keys):
        s = logdir.scalars[(run, tag)]
        for name in ("step", "wall_time", "value"):  # the series' own memory, not a copy
            column = chunk.column(name)
            if len(s) and getattr(s, name).dtype == column.type.to_pandas_dtype():
                assert column.buffers()[1].address == getattr(s, name).ctypes.data, name
        assert set(chunk.column("run").to_pylist()) == {run} and set(chunk.column("tag").to_pylist()) == {tag}
    pd.testing.assert_frame_equal(table.to_pandas(), df, check_categorical=False)
    polars = logdir.to_polars()
    assert polars.schema["run"] == pl.Categorical and polars.height == len(df)
    assert polars["value"].to_list() == df["value"].tolist()


def test_scalars_values_float32_only_when_exact(tmp_path):
    tf = pytest.importorskip("tensorflow")
    from tensorboard.compat.proto import summary_pb2 as tb_summary
    meta = tb_summary.SummaryMetadata(plugin_data=tb_summary.SummaryMetadata.PluginData(plugin_name="scalars"),
                                      data_class=tb_summary.DATA_CLASS_SCALAR)
    with tf.summary.create_file_writer(str(tmp_path / "double")).as_default():  # tf.summary.scalar casts to float32
        tf.summary.write("x", tf.constant(0.1, tf.float64), step=0, metadata=meta)
    with SummaryWriter(str(tmp_path / "simple")) as w:
        w.add_scalar("x", 0.1, 0)
    lg = load_logdir(str(tmp_path), on_error="skip")
    assert lg.scalars[("simple", "x")].value.dtype == np.float32
    assert lg.scalars[("double", "x")].value.dtype == np.float64
    assert lg.scalars[("double", "x")].value[0] == 0.1  # TF writes the double's value: nothing is rounded
    assert lg.to_pandas()["value"].dtype == np.float64 and lg.to_arrow().column("value").type == pa.float64()
    only_simple = load_logdir(str(tmp_path), runs="simple", on_error="skip").to_pandas()
    assert only_simple["value"].dtype == np.float32


def test_scalars_equal_tbparse(peer_logdir):
    """tbparse reads each event file on its own (a restart never purges across files), skips some writers'
    tensor-style scalars and fails on TF2's text tensor: compared file by file on the tags it returns, as in test_reader.test_scalars_match_tbparse, DataFrame against DataFrame."""
    tbparse = pytest.importorskip("tbparse")
    ours = load_logdir(peer_logdir, kinds=["scalars"], restarts="none", on_error="skip")
    compared = 0
    for run, files in ours.files.items():
        if run.split("/")[0] == "tf2":
            continue
        for path in files:
            want = tbparse.SummaryReader(path, pivot=False, extra_columns={"wall_time"}).scalars
            got = load_logdir(path, kinds=["scalars"], restarts="legacy", on_error="skip").to_pandas()
            if want.empty:
                assert got.empty
                continue
            want = want.sort_values("tag", kind="stable").reset_index(drop=True)
            got = got.astype({"tag": "str", "value": np.float64})[["step", "tag", "value", "wall_time"]]
            got = got[got["tag"].isin(set(want["tag"]))].reset_index(drop=True)  # tbparse skips tensor-style ones
            pd.testing.assert_frame_equal(got, want[["step", "tag", "value", "wall_time"]], check_dtype=False)
            assert got["step"].dtype == want["step"].dtype and got["value"].dtype == want["value"].dtype
            compared += len(got)
    assert compared > 100


def test_hparams_one_row_per_run(logdir):
    df = logdir.to_pandas("hparams")
    records = sorted(logdir.hparams.items())
    assert df["run"].tolist() == [run for run, _ in records] and len(records) >= 2
    for i, (run, rec) in enumerate(records):
        for name, value in rec.hparams.items():
            assert df[name].iloc[i] == value, (run, name)
        for tag in rec.metrics:
            s = logdir.scalars.get((run, tag))
            got = df[tag].iloc[i]
            if s is not None:
                assert got == s.value[-1], (run, tag)
        assert df["status"].iloc[i] == rec.status or rec.status is None and pd.isna(df["status"].iloc[i])
    assert {"lr", "bs", "act", "hparam/acc", "hparam/loss"} <= set(df.columns)
    assert logdir.to_arrow("hparams").num_rows == logdir.to_polars("hparams").height == len(records)


def test_bad_kind_and_pivot(logdir):
    with pytest.raises(ValueError, match="no table for kind 'meshes'"):
        logdir.to_pandas("meshes")
    with pytest.raises(ValueError, match="pivot=True is for scalars"):
        logdir.to_pandas("images", pivot=True)
    assert set(TABLE_KINDS) >= {"scalars", "hparams", *RECORD_KINDS}
    pivot = logdir.to_pandas(pivot=True)
    assert pivot.shape[1] == len(logdir.scalars)
