"""`tfevents inspect --values`, `tfevents export --summary` and `tfevents export --aggregate`: the last, minimum
and maximum of every run's scalars with their steps equal numpy on the loaded columns (runs of TF1, TF2,
tensorboardX, torch and tfevents), and the aggregated table equals tfevents.summaries.aggregate."""
import json

import numpy as np
import pandas as pd
import pytest

from tfevents.summaries import SummaryWriter, aggregate, load_logdir
from tfevents.viewer.cli import main
from tfevents.viewer.sparkline import BLOCKS, sparkline

KINDS = ("tf1", "tf2", "tbx", "torch", "ours")


@pytest.fixture(scope="module")
def runs(peer_logdir, tmp_path_factory):
    """{kind: path}: the peers' runs and ours (NaN values, a tie, two seeds of one configuration)."""
    root = tmp_path_factory.mktemp("ours_values")
    for seed in range(2):
        with SummaryWriter(str(root / "cfg" / ("seed_%d" % seed))) as w:
            for step, value in enumerate([3.0, float("nan"), 1.0, 5.0, 1.0, 5.0 + seed, 2.0]):
                w.add_scalar("loss", value, step * 10)
    paths = {kind: "%s/%s" % (peer_logdir, kind) for kind in KINDS[:-1]}
    paths["ours"] = str(root)
    return paths


def _expected(logdir):
    """{(run, tag): (last, last step, min, argmin step, max, argmax step)} from numpy."""
    out = {}
    for key, s in logdir.scalars.items():
        v = s.value
        out[key] = (v[-1], s.step[-1], np.nanmin(v), s.step[np.nanargmin(v)], np.nanmax(v), s.step[np.nanargmax(v)])
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_inspect_values_json_equals_numpy(runs, kind, capsys):
    assert main(["inspect", runs[kind], "--values", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    expected = _expected(load_logdir(runs[kind]))
    got = {(r["run"], r["tag"]): (r["last"], r["last_value_step"], r["min"], r["min_step"], r["max"], r["max_step"])
           for r in doc["values"]}
    assert set(got) == set(expected)
    for key, want in expected.items():
        assert got[key] == pytest.approx(want, rel=0, abs=0), key
    for r in doc["values"]:
        assert r["sparkline"] and set(r["sparkline"]) <= set(BLOCKS + " ")


@pytest.mark.parametrize("kind", KINDS)
def test_export_summary_equals_numpy(runs, kind, tmp_path):
    out = tmp_path / "summary.csv"
    assert main(["export", runs[kind], "--summary", "-o", str(out)]) == 0
    df = pd.read_csv(out, keep_default_na=False, na_values=["nan"])
    expected = _expected(load_logdir(runs[kind]))
    assert len(df) == len(expected)
    for row in df.itertuples(index=False):
        got = (row.last, row.last_value_step, row.min, row.min_step, row.max, row.max_step)
        assert got == expected[(str(row.run), str(row.tag))], (row.run, row.tag)


def test_inspect_values_table(runs, capsys):
    assert main(["inspect", runs["ours"], "--values"]) == 0
    out = capsys.readouterr().out
    s = load_logdir(runs["ours"]).scalars[("cfg/seed_1", "loss")]
    run_block = out.split("run cfg/seed_1")[1]
    line = next(l for l in run_block.splitlines() if l.strip().startswith("loss ") and "@" not in l
                and "scalars" not in l)
    cells = line.split(None, 7)
    assert cells[:7] == ["loss", "2", "60", "1", "20", "6", "50"]   # last 2 @60, min 1 @20 (first of a tie), max 6 @50
    assert cells[7] == sparkline(s.value) == "▄ ▁▇▁█▂"


def test_an_all_nan_series_reads_the_same_in_export_and_inspect(tmp_path, capsys):
    """Its last value is NaN at its last step; it has no min or max: NaN with no step (-1 in the tables, ``-`` in
    the table inspect prints, NaN null in its JSON)."""
    with SummaryWriter(str(tmp_path / "logs" / "diverged")) as w:
        for step in (0, 5, 9):
            w.add_scalar("loss", float("nan"), step)
    logdir = str(tmp_path / "logs")
    out = tmp_path / "summary.csv"
    assert main(["export", logdir, "--summary", "-o", str(out)]) == 0
    (row,) = pd.read_csv(out, keep_default_na=False, na_values=["nan"]).itertuples(index=False)
    assert row.last_value_step == 9 and row.min_step == row.max_step == -1
    assert np.isnan(row.last) and np.isnan(row.min) and np.isnan(row.max)
    capsys.readouterr()
    assert main(["inspect", logdir, "--values", "--json"]) == 0
    (doc,) = json.loads(capsys.readouterr().out)["values"]
    assert (doc["last"], doc["last_value_step"], doc["min"], doc["min_step"], doc["max"], doc["max_step"]) == \
        (None, 9, None, -1, None, -1)
    assert main(["inspect", logdir, "--values"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.split()[:1] == ["loss"] and "scalars" not in l)
    assert line.split()[1:7] == ["nan", "9", "nan", "-", "nan", "-"], line


def test_sparkline():
    assert sparkline([0, 1, 2, 3, 4, 5, 6, 7]) == BLOCKS
    assert sparkline(np.arange(100.0), width=8) == BLOCKS
    assert sparkline([1.0, 1.0, 1.0]) == "▄▄▄"
    assert sparkline([0.0, np.nan, 1.0]) == "▁ █"
    assert sparkline([]) == ""


def test_export_aggregate_equals_the_api(runs, tmp_path):
    out = tmp_path / "agg.parquet"
    assert main(["export", runs["ours"], "--aggregate", r"/seed_\d+$", "-o", str(out)]) == 0
    pd.testing.assert_frame_equal(pd.read_parquet(out), aggregate(runs["ours"], by=r"/seed_\d+$"),
                                  check_dtype=False)
    csv_out = tmp_path / "agg.csv"
    assert main(["export", runs["ours"], "--aggregate", r"/seed_\d+$", "--align", "bins", "--bins", "3",
                 "--stats", "mean,count", "-o", str(csv_out)]) == 0
    df = pd.read_csv(csv_out)
    want = aggregate(runs["ours"], by=r"/seed_\d+$", align="bins", bins=3, stats=("mean", "count"))
    assert list(df.columns) == ["group", "tag", "step", "mean", "count"]
    np.testing.assert_array_equal(df["mean"], want["mean"])
    assert main(["export", runs["ours"], "--aggregate", "x", "--stats", "mode", "-o", str(csv_out)]) == 2
    assert main(["export", runs["ours"], "--align", "bins", "-o", str(csv_out)]) == 2
