"""``--where`` / ``where=`` wherever runs are chosen, and archived runs left out of the views until asked for.

One logdir of eight runs written by tfevents' SummaryWriter (hparams through ``add_hparams``, labels and notes at
creation, one run archived with ``change_run_info``). The expected run sets come from pandas masks on
``runs_table`` (the table's columns as the query language names them), never from the query evaluator under test;
each entry point must choose exactly those: ``load_logdir``, ``aggregate``, ``report_view`` (what ``show``
displays), ``tfevents report``, ``plot``, ``export``, ``inspect``, ``watch``'s state, ``serve``'s gRPC provider
(TensorBoard's ListRuns) and the dashboard's API (``runs?where=``). A bad query exits 2 with its position.
"""
from __future__ import annotations

import contextlib
import io
import json
import time

import numpy as np
import pandas as pd
import pytest

from _report_page import page_document
from tfevents.summaries import SummaryWriter, aggregate, load_logdir
from tfevents.summaries.run_info import change_run_info
from tfevents.summaries.runs.table import runs_table
from tfevents.viewer.cli import main

RUNS = {   # name: (lr, optimizer, labels, loss values)
    "adam/lr_0.1": (0.1, "adam", ["bad"], [2.0, 1.5, 1.2]),
    "adam/lr_0.01": (0.01, "adam", [], [2.0, 0.9, 0.4]),
    "adam/lr_0.001": (0.001, "adam", ["keep", "best"], [2.0, 0.5, 0.1]),
    "sgd/lr_0.1": (0.1, "sgd", [], [2.0, 1.9, 1.8]),
    "sgd/lr_0.01": (0.01, "sgd", ["keep"], [2.0, 1.0, 0.7]),
    'odd "name"/x': (0.05, "rms'prop", [], [3.0, np.nan, 2.5]),
    "no_hparams": (None, None, [], [1.0, 0.8, 0.6]),
    "archived_run": (0.001, "adam", [], [0.05, 0.04, 0.03]),
}
QUERIES = [   # (query, the same choice as a pandas mask on the run table)
    ("lr < 0.01", lambda t: t["lr"] < 0.01),
    ('optimizer == "adam" and loss.min < 0.5', lambda t: (t["optimizer"] == "adam") & (t["loss.min"] < 0.5)),
    ('"keep" in labels or lr >= 0.1', lambda t: t["labels"].map(lambda ls: "keep" in ls) | (t["lr"] >= 0.1)),
    ("lr is missing", lambda t: t["lr"].isna()),
    ('not (lr < 0.05)', lambda t: ~(t["lr"] < 0.05)),
    ("name =~ \"^sgd/\"", lambda t: t["name"].str.match("^sgd/")),
]


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("where") / "logs"
    for name, (lr, optimizer, labels, values) in RUNS.items():
        with SummaryWriter(str(root / name), labels=labels or None, notes="run %s" % name) as w:
            for step, v in enumerate(values):
                w.add_scalar("loss", v, step)
                w.add_scalar("eval/acc", 1.0 - v / 3, step)
            if lr is not None:
                w.add_hparams({"lr": lr, "optimizer": optimizer}, {})
    change_run_info(str(root / "archived_run"), archived=True)
    return str(root)


@pytest.fixture(scope="module")
def table(logdir):
    return runs_table(logdir)


def expected(table, mask, archived=True) -> list:
    keep = mask(table).fillna(False).astype(bool)
    if not archived:
        keep &= ~table["archived"].astype(bool)
    return sorted(table["name"][keep])


def cli(*args):
    """``tfevents ARGS`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def test_the_table_has_what_the_queries_ask(table):
    assert sorted(table["name"]) == sorted(RUNS)
    assert table.set_index("name").loc["archived_run", "archived"]
    assert list(table.set_index("name").loc["adam/lr_0.001", "labels"]) == ["keep", "best"]


@pytest.mark.parametrize("query,mask", QUERIES, ids=[q for q, _ in QUERIES])
def test_load_logdir_and_aggregate_choose_the_querys_runs(logdir, table, query, mask):
    want = expected(table, mask)
    assert want and len(want) < len(RUNS)
    assert sorted(load_logdir(logdir, where=query).runs) == want
    assert sorted({run for run, _ in load_logdir(logdir, where=query).scalars}) == want
    # a load that reads less than the table needs (one tag, scalars only) chooses the same runs
    assert sorted({run for run, _ in load_logdir(logdir, tags="^eval/", kinds=("scalars",), where=query).scalars}) == want
    # aggregate: each run a group of its own (the whole name is the group), so the groups are the chosen runs
    groups = aggregate(logdir, by=r"^(.*)$", tags="^loss$", where=query)["group"].unique()
    assert sorted(groups) == want
    want_live = expected(table, mask, archived=False)
    assert sorted(load_logdir(logdir, where=query, archived=False).runs) == want_live


def test_archived_runs_are_kept_by_the_data_api_and_left_out_of_the_views(logdir, table, tmp_path):
    from tfevents.viewer.notebook import report_view
    everything = sorted(RUNS)
    shown = sorted(set(RUNS) - {"archived_run"})
    assert sorted(load_logdir(logdir).runs) == everything
    assert sorted(load_logdir(logdir, archived=False).runs) == shown
    doc, _ = page_document(report_view(logdir).page)
    assert sorted(r["name"] for r in doc["runs"]) == shown
    doc, _ = page_document(report_view(logdir, archived=True).page)
    assert sorted(r["name"] for r in doc["runs"]) == everything
    out = str(tmp_path / "r.html")
    assert cli("report", logdir, "-o", out)[0] == 0
    assert sorted(r["name"] for r in page_document(open(out).read())[0]["runs"]) == shown
    assert cli("report", logdir, "-o", out, "--archived")[0] == 0
    assert sorted(r["name"] for r in page_document(open(out).read())[0]["runs"]) == everything
    status, stdout, _ = cli("plot", logdir, "-o", str(tmp_path / "p.png"))
    assert status == 0 and "%d runs" % len(shown) in stdout
    status, stdout, _ = cli("plot", logdir, "-o", str(tmp_path / "p.png"), "--archived")
    assert status == 0 and "%d runs" % len(everything) in stdout


def test_the_report_carries_labels_and_notes(logdir):
    from tfevents.viewer.notebook import report_view
    doc, _ = page_document(report_view(logdir).page)
    runs = {r["name"]: r for r in doc["runs"]}
    assert runs["adam/lr_0.001"]["labels"] == ["keep", "best"] and runs["adam/lr_0.001"]["notes"] == "run adam/lr_0.001"
    assert "labels" not in runs["sgd/lr_0.1"]


@pytest.mark.parametrize("query,mask", QUERIES[:3], ids=[q for q, _ in QUERIES[:3]])
def test_the_commands_choose_the_querys_runs(logdir, table, tmp_path, query, mask):
    want = expected(table, mask, archived=False)
    out = str(tmp_path / "r.html")
    assert cli("report", logdir, "-o", out, "--where", query)[0] == 0
    assert sorted(r["name"] for r in page_document(open(out).read())[0]["runs"]) == want
    status, stdout, _ = cli("plot", logdir, "-o", str(tmp_path / "p.png"), "--where", query)
    assert status == 0 and "%d runs" % len(want) in stdout
    csv = str(tmp_path / "e.csv")
    assert cli("export", logdir, "-o", csv, "--where", query)[0] == 0
    assert sorted(pd.read_csv(csv)["run"].unique()) == want
    status, stdout, _ = cli("inspect", logdir, "--json", "--where", query)
    assert status == 0
    assert sorted(json.loads(stdout)["runs"]) == want


def test_watch_chooses_the_querys_runs_live(logdir, table):
    pytest.importorskip("textual")
    from tfevents.summaries.runs.choose import live_chooser
    from tfevents.viewer.watch.state import WatchState
    query, mask = QUERIES[1]
    state = WatchState(logdir, choose=live_chooser(query, archived=False))
    state.reload()
    assert state.runs() == expected(table, mask, archived=False)
    state = WatchState(logdir, choose=live_chooser(None, archived=False))
    state.reload()
    assert state.runs() == sorted(set(RUNS) - {"archived_run"})


COMMAND_ARGS = {"report": ["-o", "r.html"], "plot": ["-o", "p.png"], "export": ["-o", "e.csv"], "inspect": [],
                "watch": [], "serve": []}


@pytest.mark.parametrize("command", sorted(COMMAND_ARGS))
def test_a_bad_query_exits_2_naming_its_position(logdir, tmp_path, command):
    args = [str(tmp_path / a) if "." in a else a for a in COMMAND_ARGS[command]]
    status, _, err = cli(command, logdir, *args, "--where", "lr < 0.01 and and")
    assert status == 2
    assert "position 14" in err and "^^^" in err


@pytest.mark.parametrize("command", ["report", "plot", "export", "inspect"])
def test_an_unknown_column_exits_2_with_the_nearest_names(logdir, tmp_path, command):
    args = [str(tmp_path / a) if "." in a else a for a in COMMAND_ARGS[command]]
    status, _, err = cli(command, logdir, *args, "--where", "lrr < 0.01")
    assert status == 2 and "'lrr'" in err and "'lr'" in err


def test_serve_lists_only_the_chosen_runs_to_tensorboard(logdir, table):
    import grpc
    from tensorboard.data.proto import data_provider_pb2 as pb
    from tensorboard.data.proto import data_provider_pb2_grpc as pb_grpc
    from _serve import ProviderProcess
    query, mask = QUERIES[2]
    for args, want in ((["--where", query], expected(table, mask, archived=False)),
                       (["--archived"], sorted(RUNS))):
        with ProviderProcess(logdir, *args) as provider:
            stub = pb_grpc.TensorBoardDataProviderStub(grpc.insecure_channel(provider.address))
            deadline = time.monotonic() + 30
            while True:
                runs = sorted(r.name for r in stub.ListRuns(pb.ListRunsRequest(), timeout=10).runs)
                if runs == want or time.monotonic() > deadline:   # (the first pass may still be reading)
                    break
                time.sleep(0.2)
            assert runs == want
            answer = stub.ReadScalars(pb.ReadScalarsRequest(plugin_filter=pb.PluginFilter(plugin_name="scalars"),
                                                            downsample=pb.Downsample(num_points=10)), timeout=10)
            assert sorted(r.run_name for r in answer.runs) == want


def test_the_dashboards_api_answers_where(logdir, table):
    pytest.importorskip("starlette")
    from _dashboard import ApiProcess, get, get_json, query as q
    query, mask = QUERIES[1]
    api = ApiProcess(logdir).wait_ready()
    try:
        got = get_json(api.base + "api/v1/runs?" + q(where=query))
        assert sorted(r["run"] for r in got["runs"]) == expected(table, mask, archived=False)
        got = get_json(api.base + "api/v1/scalars_of_tag?" + q(tag="loss", where=query))
        assert sorted(s["run"] for s in got["series"]) == expected(table, mask, archived=False)
        status, _, body = get(api.base + "api/v1/runs?" + q(where="lr <"))
        answer = json.loads(body)
        assert status == 400 and answer["parameter"] == "where" and "position" in answer["error"]
        status, _, body = get(api.base + "api/v1/runs?" + q(where="lrr < 1"))
        assert status == 400 and "'lr'" in json.loads(body)["error"]
    finally:
        api.stop()
