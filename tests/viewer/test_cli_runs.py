"""`tfevents runs` (issue 35, points 4 and 5): ls, rm, mv and the annotations, in-process through
`tfevents.viewer.cli.main` (one real subprocess for the exit statuses), on logdirs written by our SummaryWriter and
tensorboardX, local and on moto's S3 server.

Deleting is checked file by file: every file left under the logdir (and outside it) is compared with what was there
minus exactly what should go."""
import io
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from tfevents.summaries import SummaryWriter
from tfevents.summaries.run_info import change_run_info, read_run_info
from tfevents.summaries.runs import prune
from tfevents.summaries.runs.table import runs_table
from tfevents.viewer.cli import main

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_run(path, losses, tag="loss", extra=None):
    with SummaryWriter(str(path)) as w:
        for step, value in enumerate(losses):
            w.add_scalar(tag, value, step)
            for name, values in (extra or {}).items():
                w.add_scalar(name, values[step], step)


def write_tbx_run(path, losses):
    tensorboardX = pytest.importorskip("tensorboardX")
    w = tensorboardX.SummaryWriter(str(path))
    for step, value in enumerate(losses):
        w.add_scalar("loss", value, step)
    w.close()


def tree(root):
    """Every file and symlink under ``root``, relative, never following a symlink."""
    found = set()
    for directory, dirs, files in os.walk(root, followlinks=False):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(directory, d))]:
            found.add(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
    return found


def cli(capsys, *argv):
    status = main(["runs"] + [str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def listed(out):
    """The run names of `runs rm`'s listing (its indented lines)."""
    return [line.split("  ")[1] for line in out.splitlines() if line.startswith("  ")]


@pytest.fixture
def sweep(tmp_path):
    """A logdir: a, b (tensorboardX), c/seed1, c/seed2, train with train/eval below, and outside it a folder
    `outside/o` that the run `link` is a symlink to; a checkpoint beside a's events, train's sidecars."""
    logdir = tmp_path / "logs"
    write_run(logdir / "a", [0.9, 0.5, 0.3])
    write_tbx_run(logdir / "b", [0.8, 0.7])
    write_run(logdir / "c" / "seed1", [0.4, 0.2])
    write_run(logdir / "c" / "seed2", [0.6, 0.1])
    write_run(logdir / "train", [1.0, 0.5], extra={"acc": [0.1, 0.2]})
    write_run(logdir / "train" / "eval", [1.1, 0.6])
    (logdir / "a" / "model.ckpt").write_bytes(b"w" * 1000)
    (logdir / "train" / "hparams.yaml").write_text("lr: 0.1\n")
    (logdir / "train" / "model.ckpt").write_bytes(b"w" * 10)
    change_run_info(str(logdir / "train"), add_labels=["baseline"])
    write_run(tmp_path / "outside" / "o", [0.5])
    os.symlink(str(tmp_path / "outside" / "o"), str(logdir / "link"))
    return logdir


# ---------------------------------------------------------------- rm

def test_rm_without_yes_lists_exactly_the_set_and_deletes_nothing(sweep, capsys):
    before, outside = tree(sweep), tree(sweep.parent / "outside")
    status, out, err = cli(capsys, "rm", sweep, "a", "c/seed2", "train", "link")
    assert status == 0, err
    assert listed(out) == ["a", "c/seed2", "link", "train"]
    assert "would delete 4 runs" in out
    assert out.rstrip().endswith("nothing deleted; --yes to delete")
    assert "keeps the runs below: train/eval" in out
    assert tree(sweep) == before and tree(sweep.parent / "outside") == outside


def test_rm_with_yes_deletes_exactly_the_set(sweep, capsys):
    before, outside = tree(sweep), tree(sweep.parent / "outside")
    train_own = {p for p in before if p.startswith("train/") and "/" not in p[len("train/"):]
                 and p != "train/model.ckpt"}
    assert any(".runinfo" in p for p in train_own) and "train/hparams.yaml" in train_own
    status, out, err = cli(capsys, "rm", sweep, "a", "c/seed2", "train", "link", "--yes")
    assert status == 0, err
    assert listed(out) == ["a", "c/seed2", "link", "train"] and out.startswith("deleted 4 runs")
    gone = {p for p in before if p.startswith(("a/", "c/seed2/"))} | {"link"} | train_own
    assert tree(sweep) == before - gone
    assert "train/model.ckpt" in tree(sweep) and any(p.startswith("train/eval/") for p in tree(sweep))
    assert tree(sweep.parent / "outside") == outside  # the link's target is untouched
    assert os.path.isdir(sweep / "c")  # the parent of a deleted run stays


def test_a_symlink_to_a_folder_outside_is_unlinked_not_followed(sweep, capsys):
    target = sweep.parent / "outside" / "o"
    dataset = sweep.parent / "dataset"  # no event files: a link to it inside run a is a's, not a sub-run
    dataset.mkdir()
    (dataset / "images.bin").write_bytes(b"d" * 100)
    os.symlink(str(dataset), str(sweep / "a" / "data"))
    os.symlink(str(dataset / "images.bin"), str(sweep / "c" / "seed1" / "images.bin"))
    status, out, err = cli(capsys, "rm", sweep, "link", "a", "c/seed1", "--yes")
    assert status == 0, err
    assert "link  the symlink (its target %s is kept)" % target in out
    assert not os.path.lexists(sweep / "link") and not os.path.lexists(sweep / "a")
    assert not os.path.lexists(sweep / "c" / "seed1")
    assert len(tree(target)) == 1 and tree(dataset) == {"images.bin"}
    assert (dataset / "images.bin").read_bytes() == b"d" * 100


def test_a_run_with_sub_runs_keeps_them(sweep, capsys):
    status, out, err = cli(capsys, "rm", sweep, "train", "--yes")
    assert status == 0, err
    assert sorted(p for p in tree(sweep) if p.startswith("train/")) == sorted(
        ["train/model.ckpt"] + [p for p in tree(sweep) if p.startswith("train/eval/")])
    assert [r for r, _ in _runs(sweep)] == ["a", "b", "c/seed1", "c/seed2", "link", "train/eval"]
    # the logdir's own run `.`: only its event files go, never the logdir nor its sub-runs
    write_run(sweep, [0.3])
    (sweep / "notes.txt").write_text("keep")
    before = tree(sweep)
    status, out, err = cli(capsys, "rm", sweep, ".", "--yes")
    assert status == 0, err
    assert tree(sweep) == {p for p in before if not (p.startswith("events.") and "/" not in p)}
    assert "notes.txt" in tree(sweep)


def test_a_run_and_its_sub_runs_chosen_together_go_as_one_directory(sweep, capsys):
    status, out, err = cli(capsys, "rm", sweep, "train", "train/eval", "c/seed1", "c/seed2", "--yes")
    assert status == 0, err
    assert not os.path.exists(sweep / "train")
    assert "train/eval  with the directory of train" in out
    assert {p.split("/")[0] for p in tree(sweep)} == {"a", "b", "link"}
    assert os.path.isdir(sweep / "c")


def test_a_run_reached_through_a_symlink_to_elsewhere_is_refused(tmp_path, capsys):
    logdir, far = tmp_path / "logs", tmp_path / "far"
    write_run(logdir / "a", [1.0])
    write_run(far / "r", [1.0])
    os.symlink(str(far), str(logdir / "ext"))
    before = tree(far)
    status, out, err = cli(capsys, "rm", logdir, "ext/r", "--yes")
    assert status == 1
    assert "outside the logdir" in err and "remove or move the symlink itself" in err
    assert tree(far) == before
    status, out, err = cli(capsys, "mv", logdir, "ext/r", "r2")
    assert status == 1 and tree(far) == before
    status, out, err = cli(capsys, "mv", logdir, "a", "ext/a")  # a symlinked parent leading out
    assert status == 2 and "outside the logdir" in err
    assert os.path.isdir(logdir / "a") and tree(far) == before


def test_unknown_runs_and_missing_choices_are_usage_errors(sweep, capsys):
    before = tree(sweep)
    status, out, err = cli(capsys, "rm", sweep, "a", "trian", "--yes")
    assert status == 2 and "no run 'trian'" in err and "'train'" in err
    status, out, err = cli(capsys, "rm", sweep)
    assert status == 2 and "RUN names or --where" in err
    status, out, err = cli(capsys, "rm", sweep / "nowhere", "a")
    assert status == 2 and "not a directory" in err
    assert tree(sweep) == before


def _runs(logdir):
    from tfevents.summaries.reader.walk import discover
    return discover(str(logdir)).runs


# ---------------------------------------------------------------- mv

def test_mv_renames_and_moves_inside_the_logdir(sweep, capsys):
    a_files = sorted(p[2:] for p in tree(sweep) if p.startswith("a/"))
    status, out, err = cli(capsys, "mv", sweep, "a", "sweep2/lr0.1/a")
    assert status == 0, err
    assert sorted(p[len("sweep2/lr0.1/a/"):] for p in tree(sweep) if p.startswith("sweep2/")) == a_files
    assert not os.path.exists(sweep / "a")
    # a run with sub-runs moves its own files; train/eval stays
    own = sorted(p[len("train/"):] for p in tree(sweep) if p.startswith("train/") and p.count("/") == 1
                 and p != "train/model.ckpt")
    status, out, err = cli(capsys, "mv", sweep, "train", "train_old")
    assert status == 0, err
    assert "the runs below stay: train/eval" in out
    assert sorted(p[len("train_old/"):] for p in tree(sweep) if p.startswith("train_old/")) == own
    assert read_run_info(str(sweep / "train_old")).labels == ("baseline",)
    # a symlink run moves as a link, still pointing at its target
    status, out, err = cli(capsys, "mv", sweep, "link", "deep/er/link")
    assert status == 0, err
    assert os.path.islink(sweep / "deep" / "er" / "link")
    assert os.path.samefile(sweep / "deep" / "er" / "link", sweep.parent / "outside" / "o")
    assert [r for r, _ in _runs(sweep)] == ["b", "c/seed1", "c/seed2", "deep/er/link", "sweep2/lr0.1/a",
                                            "train/eval", "train_old"]


def test_mv_keeps_a_relative_symlink_pointing_where_it_did(tmp_path, capsys):
    logdir = tmp_path / "logs"
    write_run(tmp_path / "target", [1.0])
    write_run(tmp_path / "target" / "sub", [1.0])  # a run seen through the link: it moves with the link
    logdir.mkdir()
    os.symlink("../target", str(logdir / "rel"))
    os.symlink(str(logdir), str(tmp_path / "logs-alias"))  # the logdir named through a symlink of its own
    assert cli(capsys, "mv", tmp_path / "logs-alias", "rel", "rel/inner")[0] == 2
    status, out, err = cli(capsys, "mv", tmp_path / "logs-alias", "rel", "x/y/rel")
    assert status == 0, err
    assert os.readlink(logdir / "x" / "y" / "rel") == "../../../target"
    assert os.path.samefile(logdir / "x" / "y" / "rel", tmp_path / "target")
    assert [r for r, _ in _runs(logdir)] == ["x/y/rel", "x/y/rel/sub"]
    assert len(tree(tmp_path / "target")) == 2
    status, out, err = cli(capsys, "rm", logdir, "x/y/rel", "x/y/rel/sub", "--yes")
    assert status == 0, err
    assert "x/y/rel/sub  seen through the symlink x/y/rel: gone with it, its files kept" in out
    assert not os.path.lexists(logdir / "x" / "y" / "rel") and len(tree(tmp_path / "target")) == 2


@pytest.mark.parametrize("new", ["../x", "a/../../x", "/tmp/elsewhere", os.sep + "x", "", ".", "b", "c",
                                 "a/inner"])
def test_mv_refuses_a_new_name_that_is_not_a_free_path_inside(sweep, capsys, new):
    before = tree(sweep)
    status, out, err = cli(capsys, "mv", sweep, "a", new)
    assert status == 2, (new, out)
    assert err.startswith("tfevents runs mv: ")
    assert tree(sweep) == before


def test_remove_and_move_from_python(sweep):
    plans = prune.plan_removal(str(sweep), ["c/seed1", "train"])
    assert [(p.run, p.action) for p in plans] == [("c/seed1", "directory"), ("train", "files")]
    assert plans[0].bytes == sum(os.path.getsize(sweep / "c" / "seed1" / f) for f in os.listdir(sweep / "c" / "seed1"))
    assert plans[1].kept_runs == ("train/eval",)
    with pytest.raises(prune.UnknownRunError, match="nearest: 'c/seed2', 'c/seed1'"):
        prune.remove_runs(str(sweep), ["c/seed3"])
    prune.remove_runs(str(sweep), ["c/seed1"])
    assert not os.path.exists(sweep / "c" / "seed1")
    moved = prune.move_run(str(sweep), "c/seed2", "seed2")
    assert moved.whole and [r for r, _ in _runs(sweep)][:5] == ["a", "b", "link", "seed2", "train"]


# ---------------------------------------------------------------- hostile names

def test_hostile_run_names_are_printed_escaped(tmp_path, capsys):
    logdir = tmp_path / "logs"
    evil = "evil\x1b[31m\x07"
    write_run(logdir / evil, [1.0])
    status, out, err = cli(capsys, "rm", logdir, evil)
    assert status == 0, err
    assert "\x1b" not in out and "\x07" not in out and "evil\\x1b[31m\\x07" in out
    status, out, err = cli(capsys, "mv", logdir, evil, "evil2\x1b]0;title\x07")
    assert status == 0, err
    assert "\x1b" not in out and "\\x1b]0;title\\x07" in out
    status, out, err = cli(capsys, "rm", logdir, "evil\x1b[32m")
    assert status == 2 and "\x1b" not in err


# ---------------------------------------------------------------- S3

@pytest.fixture
def s3_logdir(s3_endpoint, monkeypatch, tmp_path):
    """Runs written locally by our SummaryWriter, uploaded to moto's S3 server; the CLI's credentials and endpoint
    from the environment. Returns (URL, s3fs filesystem, storage options)."""
    s3fs = pytest.importorskip("s3fs")
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    for var, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                       ("AWS_DEFAULT_REGION", "us-east-1"), ("AWS_ENDPOINT_URL", s3_endpoint)):
        monkeypatch.setenv(var, value)
    opts = {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": s3_endpoint}}
    fs = s3fs.S3FileSystem(**opts)
    bucket = "runs-cli-%d" % (abs(hash(str(tmp_path))) % 10 ** 8)
    fs.mkdir(bucket)
    local = tmp_path / "up"
    write_run(local / "a", [0.9, 0.5])
    write_run(local / "b", [0.8])
    write_run(local / "train", [1.0])
    write_run(local / "train" / "eval", [1.1])
    (local / "a" / "model.ckpt").write_bytes(b"w" * 100)
    (local / "train" / "hparams.yaml").write_text("lr: 0.1\n")
    fs.put(str(local) + "/", bucket + "/logs/", recursive=True)
    fs.pipe(bucket + "/logs-neighbour/a/keep.txt", b"not in the logdir")  # a prefix sharing the logdir's start
    fs.invalidate_cache()
    return "s3://%s/logs" % bucket, fs, opts


def _objects(fs, url):
    fs.invalidate_cache()
    root = url[len("s3://"):]
    return {p[len(root) + 1:] for p in fs.find(root)}


def test_rm_and_mv_on_s3(s3_logdir, capsys):
    url, fs, opts = s3_logdir
    before = _objects(fs, url)
    status, out, err = cli(capsys, "rm", url, "a", "train")
    assert status == 0, err
    assert listed(out) == ["a", "train"] and _objects(fs, url) == before
    status, out, err = cli(capsys, "rm", url, "a", "train", "--yes")
    assert status == 0, err
    gone = {p for p in before if p.startswith("a/")} | {p for p in before if p.startswith("train/")
                                                       and p.count("/") == 1}
    assert _objects(fs, url) == before - gone
    assert any(p.startswith("train/eval/") for p in _objects(fs, url))
    assert fs.cat(url[len("s3://"):] + "-neighbour/a/keep.txt") == b"not in the logdir"
    # mv: every object copied, checked, then deleted
    b_before = {p[2:]: fs.cat(url[5:] + "/" + p) for p in before if p.startswith("b/")}
    status, out, err = cli(capsys, "mv", url, "b", "moved/b")
    assert status == 0, err
    assert {p[len("moved/b/"):]: fs.cat(url[5:] + "/" + p) for p in _objects(fs, url)
            if p.startswith("moved/b/")} == b_before
    assert not any(p.startswith("b/") for p in _objects(fs, url))
    assert cli(capsys, "mv", url, "moved/b", "../x")[0] == 2
    assert cli(capsys, "mv", url, "moved/b", "train/eval")[0] == 2
    # the Python API with storage options
    moved = prune.move_run(url, "train/eval", "eval", storage_options=opts)
    assert moved.whole and [p for p in _objects(fs, url) if p.startswith("eval/")]
    prune.remove_runs(url, ["eval", "moved/b"], storage_options=opts)
    assert _objects(fs, url) == set()


# ---------------------------------------------------------------- exit statuses in a real process

def test_exit_statuses_of_a_real_process(sweep):
    def status(*argv):
        proc = subprocess.run([sys.executable, "-m", "tfevents.viewer.cli", "runs"] + [str(a) for a in argv],
                              capture_output=True, text=True, cwd=REPO, timeout=120)
        return proc.returncode, proc.stdout, proc.stderr
    code, out, err = status("rm", sweep, "nope")
    assert code == 2 and "no run 'nope'" in err
    code, out, err = status("rm", sweep, "a")
    assert code == 0 and "nothing deleted; --yes to delete" in out
    code, out, err = status("mv", sweep, "a", "../a")
    assert code == 2
    code, out, err = status("ls", sweep, "--where", "loss.min <> 1")
    assert code == 2 and out == "" and "position 10" in err and err.rstrip().endswith("^")


# ---------------------------------------------------------------- annotations

def test_label_unlabel_note_archive_round_trip(sweep, capsys):
    assert cli(capsys, "label", sweep, "a", "c/seed1", "bad")[0] == 0
    assert cli(capsys, "label", sweep, "a", "keep me")[0] == 0
    assert read_run_info(str(sweep / "a")).labels == ("bad", "keep me")
    assert read_run_info(str(sweep / "c" / "seed1")).labels == ("bad",)
    assert cli(capsys, "unlabel", sweep, "a", "c/seed1", "bad")[0] == 0
    assert read_run_info(str(sweep / "a")).labels == ("keep me",)
    assert read_run_info(str(sweep / "c" / "seed1")).labels == ()
    status, out, err = cli(capsys, "note", sweep, "b", "diverged after step 9k\nrestart with lr/10")
    assert status == 0, err
    assert read_run_info(str(sweep / "b")).notes == "diverged after step 9k\nrestart with lr/10"
    assert "\\x0a" in out  # the note's newline shown escaped, on one line
    assert cli(capsys, "archive", sweep, "a", "b", ".")[0] == 2  # `.` is no run here
    assert cli(capsys, "archive", sweep, "a", "b")[0] == 0
    assert [read_run_info(str(sweep / r)).archived for r in ("a", "b", "train")] == [True, True, False]
    assert cli(capsys, "unarchive", sweep, "b")[0] == 0
    assert [read_run_info(str(sweep / r)).archived for r in ("a", "b")] == [True, False]
    # the labels survive a move; deleting takes the sidecar with the run's own files
    assert cli(capsys, "mv", sweep, "a", "archive/a")[0] == 0
    assert read_run_info(str(sweep / "archive" / "a")).labels == ("keep me",)


def test_annotation_usage_errors(sweep, capsys):
    before = tree(sweep)
    status, out, err = cli(capsys, "label", sweep, "trian", "bad")
    assert status == 2 and "no run 'trian'" in err and "nearest: 'train'" in err
    status, out, err = cli(capsys, "label", sweep, "a", "bad\x1b[31m")
    assert status == 2 and "\x1b" not in err
    status, out, err = cli(capsys, "note", sweep, "a", "b", "text")
    assert status == 2 and "one RUN" in err
    status, out, err = cli(capsys, "archive", sweep)
    assert status == 2 and "RUN names or --where" in err
    assert tree(sweep) == before


def test_labels_on_s3(s3_logdir, capsys):
    url, fs, opts = s3_logdir
    assert cli(capsys, "label", url, "a", "train/eval", "bad")[0] == 0
    assert cli(capsys, "note", url, "a", "on S3")[0] == 0
    assert cli(capsys, "archive", url, "a")[0] == 0
    info = read_run_info(url + "/a")
    assert info.labels == ("bad",) and info.notes == "on S3" and info.archived
    assert read_run_info(url + "/train/eval").labels == ("bad",)
    status, out, err = cli(capsys, "ls", url, "--format", "json", "--columns", "name,labels,archived")
    assert status == 0, err
    assert json.loads(out)["runs"] == [{"name": "b", "labels": [], "archived": False},
                                       {"name": "train", "labels": [], "archived": False},
                                       {"name": "train/eval", "labels": ["bad"], "archived": False}]
    status, out, err = cli(capsys, "ls", url, "--archived", "--where", '"bad" in labels', "--format", "csv",
                           "--columns", "name,notes")
    assert out.splitlines() == ["name,notes", "a,on S3", "train/eval,"]
    assert cli(capsys, "unlabel", url, "a", "bad")[0] == 0
    assert read_run_info(url + "/a").labels == ()
    # the sidecar objects go with the run
    assert cli(capsys, "rm", url, "a", "--yes")[0] == 0
    assert not [p for p in _objects(fs, url) if p.startswith("a/")]


# ---------------------------------------------------------------- ls

@pytest.fixture
def annotated(sweep):
    """The sweep with labels, a note, an archived run, a hostile run name and an hparams.yaml."""
    write_run(sweep / "evil\x1b[31m", [0.05, 0.01])
    change_run_info(str(sweep / "a"), add_labels=["bad"], notes="a \"quoted\" note")
    change_run_info(str(sweep / "c" / "seed1"), add_labels=["bad", "keep"])
    change_run_info(str(sweep / "c" / "seed2"), archived=True)
    (sweep / "c" / "seed1" / "hparams.yaml").write_text("lr: 0.01\noptimizer: adam\n")
    return sweep


def same_table(got, expected):
    """A table read back from csv or json equals the run table: the same columns, names, lists and numbers
    (NaN where missing)."""
    assert list(got.columns) == list(expected.columns)
    assert len(got) == len(expected)
    for column in expected.columns:
        want, have = list(expected[column]), list(got[column])
        if column == "labels":
            assert [list(v) for v in have] == [list(v) for v in want], column
        elif pd.api.types.is_numeric_dtype(expected[column]) and not pd.api.types.is_bool_dtype(expected[column]):
            np.testing.assert_array_equal(np.asarray(have, dtype=float), np.asarray(want, dtype=float), column)
        else:
            assert [None if v is None or v != v else v for v in have] == [
                None if v is None or (isinstance(v, float) and v != v) else v for v in want], column


def read_csv(text):
    frame = pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])
    frame["labels"] = [json.loads(v) for v in frame["labels"]]
    frame["notes"] = ["" if v != v else v for v in frame["notes"]]
    return frame


QUERY = 'loss.min < 0.55 and not ("keep" in labels)'


def test_ls_csv_and_json_equal_the_run_tables_selection(annotated, capsys):
    expected = runs_table(str(annotated), where=QUERY, archived=False, on_error="skip")
    assert list(expected["name"]) == ["a", "evil\x1b[31m", "link", "train"]
    status, out, err = cli(capsys, "ls", annotated, "--where", QUERY, "--format", "csv")
    assert status == 0, err
    same_table(read_csv(out), expected)
    status, out, err = cli(capsys, "ls", annotated, "--where", QUERY, "--format", "json")
    assert status == 0, err
    doc = json.loads(out)
    assert doc["logdir"] == str(annotated) and doc["columns"] == list(expected.columns)
    same_table(pd.DataFrame(doc["runs"], columns=doc["columns"]), expected)
    # archived runs only with --archived; every run without --where
    status, out, err = cli(capsys, "ls", annotated, "--format", "json", "--archived")
    assert [r["name"] for r in json.loads(out)["runs"]] == list(runs_table(str(annotated), on_error="skip")["name"])
    assert "c/seed2" in [r["name"] for r in json.loads(out)["runs"]]
    status, out, err = cli(capsys, "ls", annotated, "--format", "json")
    assert "c/seed2" not in [r["name"] for r in json.loads(out)["runs"]]


def test_ls_sort_and_columns(annotated, capsys):
    table = runs_table(str(annotated), archived=False, on_error="skip")
    status, out, err = cli(capsys, "ls", annotated, "--sort", "loss.min", "--desc", "--columns",
                           "name,loss.min,lr,labels", "--format", "json")
    assert status == 0, err
    doc = json.loads(out)
    assert doc["columns"] == ["name", "loss.min", "lr", "labels"]
    values = table["loss.min"].to_numpy()
    order = np.argsort(-values, kind="stable")  # no NaN here: every run logs loss
    assert [r["name"] for r in doc["runs"]] == list(table["name"].to_numpy()[order])
    # a column some runs lack: those come last both ways
    for desc in ([], ["--desc"]):
        status, out, err = cli(capsys, "ls", annotated, "--sort", "acc.last", *desc, "--columns", "name,acc.last",
                               "--format", "csv")
        names = list(pd.read_csv(io.StringIO(out))["name"])
        assert names[0] == "train" and len(names) == len(table)
    status, out, err = cli(capsys, "ls", annotated, "--sort", "lr", "--format", "csv", "--columns", "name,lr")
    assert list(pd.read_csv(io.StringIO(out))["name"])[:2] == ["c/seed1", "train"]  # 0.01, 0.1, then the rest


def test_ls_table_is_terminal_safe_and_fits(annotated, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    status, out, err = cli(capsys, "ls", annotated)
    assert status == 0, err
    assert "\x1b" not in out and "evil\\x1b[31m" in out
    header = out.splitlines()[0].split()
    assert header[:8] == ["name", "last", "step", "last", "wall", "time", "(UTC)", "labels"]
    assert "loss.last" in header and "acc.last" in header
    assert len(out.splitlines()) == 1 + 7  # archived c/seed2 left out
    row = next(line for line in out.splitlines() if line.startswith("c/seed1"))
    assert "bad, keep" in row
    # hparams from a file: a hostile name and value, shown escaped too
    (annotated / "evil\x1b[31m" / "hparams.yaml").write_text('"opt\\e[2J": "adam\\e]0;x\\a"\n')
    status, out, err = cli(capsys, "ls", annotated, "--columns", "name,opt\x1b[2J,labels")
    assert status == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert out.splitlines()[0].split() == ["name", "opt\\x1b[2J", "labels"]
    assert "adam\\x1b]0;x\\x07" in out
    monkeypatch.setenv("COLUMNS", "70")  # only the columns that fit
    status, out, err = cli(capsys, "ls", annotated)
    assert "loss.last" not in out.splitlines()[0] and max(len(line) for line in out.splitlines()) <= 70


def test_ls_usage_errors(annotated, capsys):
    status, out, err = cli(capsys, "ls", annotated, "--columns", "name,loss.mni")
    assert status == 2 and "unknown column 'loss.mni'" in err and "'loss.min'" in err
    status, out, err = cli(capsys, "ls", annotated, "--sort", "lss.min")
    assert status == 2 and "'loss.min'" in err
    status, out, err = cli(capsys, "ls", annotated, "--where", "loss.min <")
    assert status == 2 and out == ""
    lines = err.splitlines()
    assert "position" in lines[0] and lines[-2].strip() == "loss.min <" and lines[-1].strip().startswith("^")
    status, out, err = cli(capsys, "ls", annotated, "--where", "lr2 < 0.1")
    assert status == 2 and "unknown column 'lr2'" in err and "nearest" in err and "^^^" in err


# ---------------------------------------------------------------- --where on rm and the annotations

def test_rm_where_lists_and_deletes_exactly_the_querys_runs(annotated, capsys):
    query = "loss.last > 0.4 or loss.min < 0.15"
    chosen = list(runs_table(str(annotated), where=query, archived=False, on_error="skip")["name"])
    assert chosen == ["b", "evil\x1b[31m", "link", "train", "train/eval"]
    before = tree(annotated)
    status, out, err = cli(capsys, "rm", annotated, "--where", query)
    assert status == 0, err
    assert listed(out) == [n.replace("\x1b", "\\x1b") for n in chosen] and tree(annotated) == before
    status, out, err = cli(capsys, "rm", annotated, "--where", query, "--archived")  # c/seed2 (0.1, archived) too
    assert len(listed(out)) == len(chosen) + 1 and "c/seed2" in listed(out)
    status, out, err = cli(capsys, "rm", annotated, "--where", query, "--yes")
    assert status == 0, err
    assert "train/eval  with the directory of train" in out
    assert list(runs_table(str(annotated), archived=True, on_error="skip")["name"]) == ["a", "c/seed1", "c/seed2"]
    assert {p.split("/")[0] for p in tree(annotated)} == {"a", "c"}
    status, out, err = cli(capsys, "rm", annotated, "--where", "lr >")
    assert status == 2 and "^" in err
    status, out, err = cli(capsys, "rm", annotated, "a", "--where", "lr > 0")
    assert status == 2 and "not both" in err


def test_annotations_with_where(annotated, capsys):
    assert cli(capsys, "label", annotated, "--where", "loss.min < 0.25", "good")[0] == 0
    assert sorted(runs_table(str(annotated), where='"good" in labels', on_error="skip")["name"]) == [
        "c/seed1", "evil\x1b[31m"]  # not c/seed2 (0.1): archived
    assert cli(capsys, "archive", annotated, "--where", '"bad" in labels')[0] == 0
    assert read_run_info(str(annotated / "a")).archived and read_run_info(str(annotated / "c" / "seed1")).archived
    assert cli(capsys, "unarchive", annotated, "--where", "loss.min < 0.25")[0] == 0  # archived runs are its subject
    assert [read_run_info(str(annotated / r)).archived for r in ("a", "c/seed1", "c/seed2")] == [True, False, False]
    assert cli(capsys, "note", annotated, "--where", 'name == "b"', "tensorboardX run")[0] == 0
    assert read_run_info(str(annotated / "b")).notes == "tensorboardX run"
    status, out, err = cli(capsys, "unlabel", annotated, "--where", "lr >", "good")
    assert status == 2 and "^" in err
