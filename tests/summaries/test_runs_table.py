"""The run table (issue 35, point 1): one row per run, equal to what numpy and PyYAML compute.

The logdir mixes runs written by TF1, TF2 (``hp.hparams``), tensorboardX and torch (``add_hparams`` sub-runs) —
the session's ``peer_logdir``, copied — with runs written here: ours (NaN values, a NaN-only series, a restart), a
real Lightning ``TensorBoardLogger`` run (its ``hparams.yaml`` with nested keys, a tuple and a plain ``1e-3``, and
its HParams events), two runs below a Hydra job's ``.hydra/config.yaml``, and one run whose three sources disagree
(resolved as summaries/runs/hparams.py says: ``hparams.yaml``, then HParams events, then Hydra's config).
"""
from __future__ import annotations

import math
import os
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
import yaml

from tfevents.summaries import SummaryWriter, load_logdir, runs_table
from tfevents.summaries.reader import ReadWarning
from tfevents.summaries.run_info import change_run_info
from tfevents.summaries.runs import QueryError, parse, table_to_arrow, table_to_polars
from tfevents.summaries.runs.hparams import HParamsFileError

HYDRA_JOB = "hydra/outputs/2026-11-28/04-00-00"
HYDRA_CONFIG = """\
seed: 7
model:
  depth: 6
  name: resnet
optim:
  lr: 1e-3        # YAML 1.1 (PyYAML) reads this as a string; YAML 1.2 (OmegaConf) as a float
  wd: '1e-4'      # quoted: a string in both
  betas: [0.9, 0.999]
"""
CONFLICT_YAML = "lr: 0.02\nbatch: 64\nname: from-yaml\nloss:\n  min: 3\n"
CONFLICT_HYDRA = "lr: 0.01\nbatch: 32\nepochs: 10\ndepth: 2\n"
CONFLICT_EVENTS = {"lr": 0.05, "depth": 5.0, "opt": "sgd"}
LIGHTNING_HPARAMS = {"lr": 1e-3, "wd": "1e-3", "layers": (64, 32), "model": {"depth": 4, "act": "relu"},
                     "dropout": None}


def _flat(d, prefix=""):
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, prefix + str(k) + "."))
        else:
            out[prefix + str(k)] = v
    return out


def _write_ours(logdir):
    """Two runs of our writer: 'ours/plain' (a NaN value, a NaN-only tag, a tag the other run lacks) and
    'ours/restarted' (a second event file going back to step 5: one restart)."""
    rng = np.random.RandomState(5)
    with SummaryWriter(os.path.join(logdir, "ours/plain")) as w:
        values = rng.rand(30)
        values[7] = np.nan
        for step, v in enumerate(values):
            w.add_scalar("val/acc", float(v), step * 10)
            w.add_scalar("diverged", float("nan"), step)
        w.add_scalar("only_here", 2.5, 3)
    run = os.path.join(logdir, "ours/restarted")
    with SummaryWriter(run, filename_suffix=".a") as w:
        for step in range(10):
            w.add_scalar("loss", 1.0 / (step + 1), step)
            w.add_scalar("val/acc", 0.5 + step / 100, step)
    with SummaryWriter(run, filename_suffix=".b") as w:
        for step in range(5, 12):
            w.add_scalar("loss", 2.0 / (step + 1), step)
            w.add_scalar("val/acc", 0.25 + step / 100, step)


def _write_lightning(logdir):
    from lightning.pytorch.loggers import TensorBoardLogger
    logger = TensorBoardLogger(logdir, name="lightning_logs")
    logger.log_hyperparams(LIGHTNING_HPARAMS)
    for step in range(6):
        logger.log_metrics({"train/loss": 1.0 / (step + 2)}, step)
    logger.finalize("success")
    return os.path.relpath(logger.log_dir, logdir)


def _write_hydra(logdir):
    job = os.path.join(logdir, HYDRA_JOB)
    os.makedirs(os.path.join(job, ".hydra"))
    with open(os.path.join(job, ".hydra", "config.yaml"), "w") as f:
        f.write(HYDRA_CONFIG)
    with open(os.path.join(job, ".hydra", "overrides.yaml"), "w") as f:
        f.write("- seed=7\n")
    for version in (0, 1):
        with SummaryWriter(os.path.join(job, "lightning_logs", "version_%d" % version)) as w:
            for step in range(8):
                w.add_scalar("loss", (version + 1) / (step + 1), step)


def _write_conflict(logdir):
    from torch.utils.tensorboard.summary import hparams
    run = os.path.join(logdir, "conflict", "job", "run")
    with SummaryWriter(run) as w:
        for summary in hparams(CONFLICT_EVENTS, {"loss": 0.0}):   # as Lightning writes its HParams events
            w.add_summary(summary)
        for step in range(4):
            w.add_scalar("loss", 4.0 - step, step)
    with open(os.path.join(run, "hparams.yaml"), "w") as f:
        f.write(CONFLICT_YAML)
    os.makedirs(os.path.join(logdir, "conflict", ".hydra"))
    with open(os.path.join(logdir, "conflict", ".hydra", "config.yaml"), "w") as f:
        f.write(CONFLICT_HYDRA)


@pytest.fixture(scope="module")
def mixed(peer_logdir, tmp_path_factory):
    """``(logdir, the Lightning run's name)``: the peers' runs and ours, labelled and archived as the tests expect."""
    logdir = str(tmp_path_factory.mktemp("runs_table") / "logs")
    for kind in ("tf1", "tf2", "tbx", "torch"):
        shutil.copytree(os.path.join(peer_logdir, kind), os.path.join(logdir, kind))
    _write_ours(logdir)
    lightning = _write_lightning(logdir)
    _write_hydra(logdir)
    _write_conflict(logdir)
    change_run_info(os.path.join(logdir, "ours/plain"), add_labels=["bad", "seed-1"], notes="NaN at step 70")
    change_run_info(os.path.join(logdir, "tf1"), archived=True)
    return logdir, lightning


def _expected_hparams(logdir, lightning, reference):
    """{run: {hparam: value}}: the HParams events as the reader has them, the YAML files as PyYAML reads them (with
    the YAML 1.2 floats and the precedence the module docstring states, spelled out per case)."""
    out = {run: dict(rec.hparams) for run, rec in reference.hparams.items()}
    # Lightning: its hparams.yaml (read back by Lightning's own loader, PyYAML's full_load) over its events
    from lightning.pytorch.core.saving import load_hparams_from_yaml
    from_yaml = _flat(load_hparams_from_yaml(os.path.join(logdir, lightning, "hparams.yaml"), use_omegaconf=False))
    assert from_yaml["wd"] == "1e-3" and from_yaml["layers"] == (64, 32)   # the YAML 1.1 quirk, a python tuple
    from_yaml["wd"] = 1e-3
    from_yaml["layers"] = [64, 32]
    events = {k.replace("/", "."): v for k, v in reference.hparams[lightning].hparams.items()}
    assert events["layers"] == "(64, 32)" and events["model.depth"] == 4   # Lightning's sanitized values
    out[lightning] = {**events, **from_yaml}
    # Hydra: both runs of the job take its config
    hydra = _flat(yaml.safe_load(HYDRA_CONFIG))
    assert hydra["optim.lr"] == "1e-3" and hydra["optim.wd"] == "1e-4"
    hydra["optim.lr"] = 1e-3
    for version in (0, 1):
        out["%s/lightning_logs/version_%d" % (HYDRA_JOB, version)] = dict(hydra)
    # the conflict: hparams.yaml, then the events, then the Hydra config above
    out["conflict/job/run"] = {**_flat(yaml.safe_load(CONFLICT_HYDRA)), **CONFLICT_EVENTS,
                               **_flat(yaml.safe_load(CONFLICT_YAML))}
    return {run: hp for run, hp in out.items() if hp}


def _expected_tags(reference):
    """{run: {tag: (last, min, max, step, min_step, max_step)}} by numpy from the reader's series."""
    out = {}
    for (run, tag), s in reference.scalars.items():
        v = s.value.astype(np.float64)
        known = ~np.isnan(v)
        if known.any():
            lo = np.flatnonzero(v == np.nanmin(v))[0]
            hi = np.flatnonzero(v == np.nanmax(v))[0]
            extremes = (v[lo], v[hi], s.step[lo], s.step[hi])
        else:
            extremes = (np.nan,) * 4
        out.setdefault(run, {})[tag] = (v[-1], extremes[0], extremes[1], s.step[-1], extremes[2], extremes[3])
    return out


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return list(a) == list(b)
    return a == b and type(a == b) is bool


def _missing(v) -> bool:
    return v is None or isinstance(v, float) and math.isnan(v)


@pytest.fixture(scope="module")
def table(mixed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReadWarning)   # the restarted run's purge notes
        return runs_table(mixed[0])


def test_the_table_equals_numpy_and_pyyaml(mixed, table):
    logdir, lightning = mixed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReadWarning)
        reference = load_logdir(logdir, kinds=("scalars", "hparams"))
    assert list(table["name"]) == sorted(reference.runs)
    assert {"tf1", "tf2", "ours/plain", "ours/restarted", lightning} <= set(table["name"])
    assert len(reference.hparams) >= 4  # tf2's hp.hparams, tbx's and torch's add_hparams sub-runs, Lightning, conflict
    tags = _expected_tags(reference)
    hparams = _expected_hparams(logdir, lightning, reference)
    hp_columns = {"hparams." + h if h in ("name", "files", "notes", "labels", "loss.min") else h: h
                  for hp in hparams.values() for h in hp}
    tag_names = sorted({t for run in tags.values() for t in run})
    fields = ("last", "min", "max", "step", "min_step", "max_step")
    assert list(table.columns) == (["name", "first_wall_time", "last_wall_time", "last_step", "files", "restarts",
                                    "labels", "notes", "archived"] + sorted(hp_columns)
                                   + ["%s.%s" % (t, f) for t in tag_names for f in fields])
    for column in table.columns:
        if "." in column and column.rpartition(".")[2] in fields and column not in hp_columns:
            assert table[column].dtype == np.float64, column
    for _, row in table.iterrows():
        run = row["name"]
        series = [s for (r, _), s in reference.scalars.items() if r == run]
        walls = np.concatenate([s.wall_time for s in series]) if series else np.array([np.nan])
        assert _same(row["first_wall_time"], float(np.nanmin(walls)) if series else math.nan), run
        assert _same(row["last_wall_time"], float(np.nanmax(walls)) if series else math.nan), run
        steps = [s.step.max() for s in series if len(s)]
        assert _same(row["last_step"], float(max(steps)) if steps else math.nan), run
        assert row["files"] == len(reference.files[run])
        for tag in tag_names:
            got = tuple(row["%s.%s" % (tag, f)] for f in fields)
            want = tuple(float(x) for x in tags[run][tag]) if tag in tags.get(run, {}) else (math.nan,) * 6
            assert all(_same(float(g), w) for g, w in zip(got, want)), (run, tag, got, want)
        for column, name in hp_columns.items():
            want = hparams.get(run, {}).get(name)
            if _missing(want):
                assert _missing(row[column]), (run, column, row[column])
            else:
                assert _same(row[column], want), (run, column, row[column], want)
    # the run this module wrote with a NaN value and a NaN-only tag, read as written
    plain = table.set_index("name").loc["ours/plain"]
    assert math.isnan(plain["diverged.last"]) and math.isnan(plain["diverged.min_step"])
    assert plain["diverged.step"] == 29 and plain["only_here.last"] == 2.5
    assert plain["val/acc.step"] == 290 and plain["labels"] == ["bad", "seed-1"] and plain["notes"] == "NaN at step 70"
    assert table.set_index("name").loc["tf1", "archived"]


def test_sources_and_their_precedence(mixed, table):
    by_name = table.set_index("name")
    conflict = by_name.loc["conflict/job/run"]
    assert conflict["lr"] == 0.02                    # hparams.yaml over the events (0.05) and Hydra (0.01)
    assert conflict["depth"] == 5.0                  # the events over Hydra (2)
    assert conflict["epochs"] == 10 and conflict["opt"] == "sgd" and conflict["batch"] == 64
    assert conflict["hparams.name"] == "from-yaml" and conflict["hparams.loss.min"] == 3   # clashes renamed
    lightning = by_name.loc[mixed[1]]
    assert lightning["wd"] == 1e-3 and lightning["layers"] == [64, 32] and lightning["model.depth"] == 4
    assert "model/depth" not in table.columns        # Lightning's slashed event key is the YAML's dotted one
    for version in (0, 1):
        run = by_name.loc["%s/lightning_logs/version_%d" % (HYDRA_JOB, version)]
        assert run["optim.lr"] == 1e-3 and run["optim.wd"] == "1e-4" and run["optim.betas"] == [0.9, 0.999]
    assert _missing(by_name.loc["ours/plain", "seed"])  # no .hydra above it


def test_restarts(mixed):
    logdir = mixed[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReadWarning)
        counted = {mode: runs_table(logdir, runs="^ours/", restarts=mode).set_index("name")["restarts"]
                   for mode in ("tensorboard", "none")}
    assert counted["tensorboard"].to_dict() == {"ours/plain": 0, "ours/restarted": 1}
    assert counted["none"].to_dict() == {"ours/plain": 0, "ours/restarted": 1}   # seen, though nothing dropped
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReadWarning)
        kept = runs_table(logdir, runs="^ours/restarted$").iloc[0]
    assert kept["loss.last"] == np.float32(2.0 / 12) and kept["loss.max"] == 1.0 and kept["files"] == 2


QUERIES = [
    ('"val/acc".max > 0.9', lambda t: t["val/acc.max"] > 0.9),
    ("loss.min < 0.2", lambda t: t["loss.min"] < 0.2),
    ('"bad" in labels', lambda t: t["labels"].map(lambda ls: "bad" in ls)),
    ("not archived", lambda t: ~t["archived"]),
    ("lr < 0.05", lambda t: t["lr"].map(lambda v: isinstance(v, float) and v < 0.05)),
    ('model.depth == 6 and optim.wd == "1e-4"', lambda t: (t["model.depth"] == 6) & (t["optim.wd"] == "1e-4")),
    ('name =~ "^(tf|ours)/?" and last_step >= 12', lambda t: t["name"].str.match("^(tf|ours)/?")
     & (t["last_step"] >= 12)),
    ("hp_metric.last is missing and restarts == 0", lambda t: t["hp_metric.last"].isna() & (t["restarts"] == 0)),
]


@pytest.mark.parametrize("where,expected", QUERIES, ids=[q for q, _ in QUERIES])
def test_queries_pick_the_expected_runs(mixed, table, where, expected):
    want = sorted(table["name"][expected(table).fillna(False).astype(bool)])
    assert parse(where).select(table) == want
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReadWarning)
        assert list(runs_table(mixed[0], where=where)["name"]) == want
    assert want and len(want) < len(table)


def test_archived_and_runs_options(mixed, table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReadWarning)
        shown = runs_table(mixed[0], archived=False, runs="^(tf|ours)")
    assert list(shown["name"]) == sorted(n for n in table["name"] if n.startswith(("tf", "ours")) and n != "tf1")
    with pytest.raises(QueryError, match="nearest"), warnings.catch_warnings():
        warnings.simplefilter("ignore", ReadWarning)
        runs_table(mixed[0], where="los.min < 1")
    with pytest.raises(QueryError, match="position 10"):   # a syntax error, before anything is read
        runs_table(os.path.join(mixed[0], "no such folder"), where="lr < 1 and")


def test_logdir_runs_table_equals_the_path_one(mixed, table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReadWarning)
        logdir = load_logdir(mixed[0])
    pd.testing.assert_frame_equal(logdir.runs_table(), table)
    pd.testing.assert_frame_equal(runs_table(logdir, where="not archived"),
                                  table[~table["archived"]].reset_index(drop=True))
    with pytest.raises(ValueError, match="restarts"):
        runs_table(logdir, restarts="python")


def test_arrow_and_polars(table):
    arrow = table_to_arrow(table)
    assert arrow.column_names == list(table.columns) and arrow.num_rows == len(table)
    assert arrow.column("labels").to_pylist() == [list(v) for v in table["labels"]]
    np.testing.assert_array_equal(arrow.column("val/acc.max").to_numpy(zero_copy_only=False),
                                  table["val/acc.max"].to_numpy())
    polars = table_to_polars(table)
    assert polars.columns == list(table.columns) and polars["name"].to_list() == list(table["name"])


def test_a_bad_yaml_file_is_reported_by_on_error(tmp_path):
    run = tmp_path / "logs" / "run"
    with SummaryWriter(str(run)) as w:
        w.add_scalar("loss", 1.0, 0)
    (run / "hparams.yaml").write_text("lr: [0.1\n")
    with pytest.warns(ReadWarning, match="hparams.yaml is not valid YAML"):
        t = runs_table(str(tmp_path / "logs"))
    assert list(t["name"]) == ["run"] and "lr" not in t.columns
    with pytest.raises(HParamsFileError, match="hparams.yaml"):
        runs_table(str(tmp_path / "logs"), on_error="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runs_table(str(tmp_path / "logs"), on_error="skip")


def test_s3_gives_the_same_table(mixed, table, s3_endpoint, monkeypatch):
    import s3fs
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    opts = {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": s3_endpoint}}
    fs = s3fs.S3FileSystem(**opts)
    fs.mkdir("runs-table")
    logdir = mixed[0]
    for directory, _, files in os.walk(logdir):
        for name in files:
            path = os.path.join(directory, name)
            fs.put_file(path, "runs-table/logs/" + os.path.relpath(path, logdir).replace(os.sep, "/"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReadWarning)
        remote = runs_table("s3://runs-table/logs", storage_options=opts)
        from_logdir = load_logdir("s3://runs-table/logs", storage_options=opts).runs_table(storage_options=opts)
    pd.testing.assert_frame_equal(remote, table)
    pd.testing.assert_frame_equal(from_logdir, table)


def test_restarts_counts_each_restart_whatever_the_rule(tmp_path):
    """Two restarts are 2 whatever the restarts= rule (it says what is dropped): the most times one scalar series
    went back in step. The reader's purge reports, by contrast, differ by rule."""
    from tfevents.proto import event_pb2
    run = tmp_path / "logs" / "job"
    for n, first in enumerate((0, 4, 8)):   # three processes: the second resumes at 4, the third at 8
        with SummaryWriter(str(run), filename_suffix=".%d" % n) as w:
            w.add_session_log(event_pb2.SessionLog(status=event_pb2.SessionLog.START), first)
            for step in range(first, first + 6):
                w.add_scalar("loss", 1.0 / (step + 1), step)
                w.add_scalar("acc", step / 20, step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReadWarning)
        counted = {mode: int(runs_table(str(tmp_path / "logs"), restarts=mode)["restarts"].iloc[0])
                   for mode in ("python", "tensorboard", "none")}
        reference = {mode: load_logdir(str(tmp_path / "logs"), restarts=mode) for mode in ("python", "tensorboard")}
        python_table = runs_table(str(tmp_path / "logs"), restarts="python")
    assert counted == {"python": 2, "tensorboard": 2, "none": 2}
    assert reference["python"].out_of_order == {("job", "scalars", "loss"): 2, ("job", "scalars", "acc"): 2}
    assert len([p for p in reference["python"].problems if p.kind == "purged"]) == 2      # one per START
    assert len([p for p in reference["tensorboard"].problems if p.kind == "purged"]) == 2  # one per series
    pd.testing.assert_frame_equal(reference["python"].runs_table(), python_table)
