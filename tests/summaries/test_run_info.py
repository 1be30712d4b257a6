"""A run's labels, notes and archived flag (summaries/run_info.py, issue 35 point 4): round trips on a local disk,
in memory:// and on moto's S3 server; four processes labelling one run at once lose nothing (local: flock and one
file; S3: a new object per change); SummaryWriter(labels=, notes=); TensorBoard's EventMultiplexer, tbparse, our
load_logdir and the live loader see the same runs and tags with and without sidecars; corrupt sidecars and bad
labels are errors that name the problem."""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil

import numpy as np
import pytest

from _s3 import make_bucket
from tfevents.summaries import SummaryWriter, load_logdir
from tfevents.summaries.live.loader import LiveLogdir
from tfevents.summaries.run_info import (SIDECAR_PREFIX, STATE_NAME, RunInfo, change_run_info, is_run_info_file,
                                         read_run_info)

BUCKET = "tfevents-run-info"


# ------------------------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def s3(s3_endpoint):
    """``(storage_options, s3fs filesystem)`` for moto's server, with this module's bucket made."""
    return make_bucket(s3_endpoint, BUCKET)


@pytest.fixture(params=["local", "memory", "s3"])
def place(request, tmp_path):
    """``(run_dir, fs, list of the run folder's basenames)`` of an empty run in each kind of store."""
    if request.param == "local":
        run = tmp_path / "run"
        run.mkdir()
        yield str(run), None, lambda: sorted(os.listdir(run))
    elif request.param == "memory":
        fsspec = pytest.importorskip("fsspec")
        fs = fsspec.filesystem("memory")
        root = "memory://run-info-%s/run" % os.path.basename(str(tmp_path))
        yield root, None, lambda: sorted(p.rsplit("/", 1)[-1] for p in fs.ls(root, detail=False))
        fs.rm(root.rsplit("/", 1)[0], recursive=True)
    else:
        opts, fs = request.getfixturevalue("s3")
        root = "s3://%s/%s/run" % (BUCKET, os.path.basename(str(tmp_path)))
        fs.invalidate_cache()
        yield root, fs, lambda: sorted(p.rsplit("/", 1)[-1] for p in fs.ls(root, detail=False, refresh=True))


def _scalar_run(path, tags=("loss",), **kwargs):
    with SummaryWriter(path, **kwargs) as w:
        for step in range(4):
            for i, tag in enumerate(tags):
                w.add_scalar(tag, float(step * (i + 1)), step)


# ------------------------------------------------------------------------------------------- round trips

def test_label_unlabel_note_archive_round_trip(place):
    run_dir, fs, listing = place
    assert read_run_info(run_dir, fs=fs) == RunInfo()                     # no sidecar: nothing
    steps = [
        (dict(add_labels=["baseline", "seed:1", "<b>bold</b>"]), RunInfo(("baseline", "seed:1", "<b>bold</b>"))),
        (dict(add_labels=["seed:1", "lr=0.1"]), RunInfo(("baseline", "seed:1", "<b>bold</b>", "lr=0.1"))),
        (dict(remove_labels=["seed:1", "never-there"]), RunInfo(("baseline", "<b>bold</b>", "lr=0.1"))),
        (dict(notes="diverged after 9k steps\n« tabs\tand ünïcödé » 🚀"),
         RunInfo(("baseline", "<b>bold</b>", "lr=0.1"), "diverged after 9k steps\n« tabs\tand ünïcödé » 🚀")),
        (dict(archived=True), RunInfo(("baseline", "<b>bold</b>", "lr=0.1"),
                                      "diverged after 9k steps\n« tabs\tand ünïcödé » 🚀", True)),
        (dict(add_labels=["seed:1"], notes=""), RunInfo(("baseline", "<b>bold</b>", "lr=0.1", "seed:1"), "", True)),
        (dict(archived=False, remove_labels=["baseline"]), RunInfo(("<b>bold</b>", "lr=0.1", "seed:1"))),
    ]
    for n, (change, expected) in enumerate(steps, 1):
        assert change_run_info(run_dir, fs=fs, **change) == expected, change
        assert read_run_info(run_dir, fs=fs) == expected
        names = listing()
        assert all(SIDECAR_PREFIX in name and "tfevents" not in name for name in names)
        if fs is None and not run_dir.startswith("memory:"):
            assert names == [STATE_NAME]                                  # one file, replaced
            with open(os.path.join(run_dir, STATE_NAME), encoding="utf-8") as f:
                doc = json.load(f)
            assert len(doc["changes"]) == n
            stamps = [(c["time_ns"], c["id"]) for c in doc["changes"]]
            assert stamps == sorted(stamps) and len(set(stamps)) == n
        else:
            assert len(names) == n and all(is_run_info_file(name) for name in names)   # an object per change
    assert change_run_info(run_dir, fs=fs) == steps[-1][1]                # a change of nothing records nothing
    assert len(listing()) in (1, len(steps))
    assert read_run_info(run_dir, fs=fs, names=listing()) == steps[-1][1]  # the caller's listing
    assert read_run_info(run_dir, fs=fs, names=[]) == RunInfo()           # ... is all that is read


def test_object_store_changes_are_never_rewritten(s3):
    opts, fs = s3
    root = "%s/immutable/run" % BUCKET
    change_run_info(root, add_labels=["a"], fs=fs)
    (first,) = fs.ls(root, detail=False, refresh=True)
    before = fs.info(first)
    change_run_info(root, remove_labels=["a"], fs=fs)
    change_run_info("s3://" + root, add_labels=["b"], fs=fs)             # a URL on the given fs
    objects = fs.ls(root, detail=False, refresh=True)
    assert len(objects) == 3 and first in objects
    assert fs.info(first)["ETag"] == before["ETag"] and fs.cat(first) == fs.cat(first)
    assert [json.loads(fs.cat(o))["changes"][0]["add_labels"] for o in sorted(objects)] == [["a"], [], ["b"]]
    assert read_run_info("s3://" + root, fs=fs) == RunInfo(("b",))


def test_a_run_copied_between_disk_and_object_store_keeps_its_changes(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    local = tmp_path / "run"
    local.mkdir()
    change_run_info(str(local), add_labels=["a", "b"], notes="from disk")
    root = "memory://copied-run/run"
    fs.put(str(local / STATE_NAME), root + "/" + STATE_NAME)               # uploaded: .runinfo.json is read there
    assert read_run_info(root) == RunInfo(("a", "b"), "from disk")
    assert change_run_info(root, remove_labels=["a"], archived=True) == RunInfo(("b",), "from disk", True)
    back = tmp_path / "back"
    fs.get(root + "/", str(back), recursive=True)                          # and down again, objects and all
    assert STATE_NAME in os.listdir(back) and len(os.listdir(back)) == 2
    assert read_run_info(str(back)) == RunInfo(("b",), "from disk", True)
    assert change_run_info(str(back), add_labels=["c"]) == RunInfo(("b", "c"), "from disk", True)
    shutil.copy(str(back / STATE_NAME), str(local / STATE_NAME))           # a change found twice counts once
    for name in os.listdir(back):
        if name != STATE_NAME:
            shutil.copy(str(back / name), str(local / name))
    assert read_run_info(str(local)) == RunInfo(("b", "c"), "from disk", True)
    fs.rm("/copied-run", recursive=True)


def test_is_run_info_file():
    assert is_run_info_file(".runinfo.json")
    assert is_run_info_file(".runinfo.01795838663615416071.5d90387b5b75b0cb.json")
    for name in (".runinfo.json.tmp9f0c", "runinfo.json", ".runinfo.1.ab.json", "events.out.tfevents.1.h",
                 ".runinfo.01795838663615416071.5d90387b5b75b0cb.json.tmp1", "run/.runinfo.json"):
        assert not is_run_info_file(name), name


# ------------------------------------------------------------------------------------------- four writers at once

def _label_25(run_dir, opts, worker, barrier):
    """One of four processes: wait for the others, then add 25 labels of its own, one change each."""
    fs = None
    if opts is not None:
        import s3fs
        fs = s3fs.S3FileSystem(**opts)
    barrier.wait()
    for i in range(25):
        change_run_info(run_dir, add_labels=["w%d-%02d" % (worker, i)], fs=fs)


def _four_processes_label(run_dir, opts=None):
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(4)
    procs = [ctx.Process(target=_label_25, args=(run_dir, opts, worker, barrier)) for worker in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]


def test_four_processes_labelling_one_local_run_lose_nothing(tmp_path):
    run = tmp_path / "run"
    _scalar_run(str(run))
    change_run_info(str(run), add_labels=["first"], notes="before")
    _four_processes_label(str(run))
    info = read_run_info(str(run))
    expected = {"w%d-%02d" % (w, i) for w in range(4) for i in range(25)}
    assert info.labels[0] == "first" and set(info.labels[1:]) == expected and len(info.labels) == 101
    assert info.notes == "before"
    for w in range(4):                                        # each process's labels in the order it added them
        mine = [label for label in info.labels if label.startswith("w%d-" % w)]
        assert mine == sorted(mine)
    with open(str(run / STATE_NAME), encoding="utf-8") as f:
        changes = json.load(f)["changes"]
    assert len(changes) == 101                                # each change appended once, under the lock
    assert [c["time_ns"] for c in changes] == sorted(c["time_ns"] for c in changes)
    assert sorted(n for n in os.listdir(run) if "tfevents" not in n) == [STATE_NAME]   # no temporary file left


def test_four_processes_labelling_one_s3_run_lose_nothing(s3):
    opts, fs = s3
    run_dir = "s3://%s/concurrent/run" % BUCKET
    _four_processes_label(run_dir, opts)
    fs.invalidate_cache()
    info = read_run_info(run_dir, fs=fs)
    assert sorted(info.labels) == sorted("w%d-%02d" % (w, i) for w in range(4) for i in range(25))
    objects = fs.ls(run_dir, detail=False, refresh=True)
    assert len(objects) == 100 and all(is_run_info_file(o.rsplit("/", 1)[-1]) for o in objects)


# ------------------------------------------------------------------------------------------- the writer's kwargs

def test_summary_writer_labels_and_notes(tmp_path):
    run = str(tmp_path / "run")
    _scalar_run(run, labels=["baseline", "lr=0.1", "baseline"], notes="first try")
    assert read_run_info(run) == RunInfo(("baseline", "lr=0.1"), "first try")
    plain = str(tmp_path / "plain")
    _scalar_run(plain)
    assert not os.path.exists(os.path.join(plain, STATE_NAME))                 # None: nothing recorded
    ours, theirs = load_logdir(run), load_logdir(plain)                        # the same events
    assert ours.runs == theirs.runs == ["."] and sorted(ours.scalars) == sorted(theirs.scalars)
    np.testing.assert_array_equal(ours.scalars[(".", "loss")].value, theirs.scalars[(".", "loss")].value)
    SummaryWriter(run, labels=["resumed"]).close()                              # a reopened run keeps its others
    assert read_run_info(run) == RunInfo(("baseline", "lr=0.1", "resumed"), "first try")
    SummaryWriter(run, notes="second try").close()
    assert read_run_info(run) == RunInfo(("baseline", "lr=0.1", "resumed"), "second try")
    SummaryWriter(plain, labels=[]).close()
    assert not os.path.exists(os.path.join(plain, STATE_NAME))
    ranked = str(tmp_path / "ranked")
    _scalar_run(ranked, labels=["rank"], rank=1, ranks="all")                  # the rank's own run folder
    assert read_run_info(os.path.join(ranked, "rank_1")) == RunInfo(("rank",))
    silent = str(tmp_path / "silent")
    SummaryWriter(silent, labels=["x"], rank=1).close()                          # a rank that does not write
    assert not os.path.exists(silent)


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(labels="baseline"), TypeError, r"not a single str \(write \['baseline'\]\)"),
    (dict(labels=[""]), ValueError, "empty or blank"),
    (dict(labels=["bad\x1b[31m"]), ValueError, "control characters.*U\\+001B"),
    (dict(notes=3), TypeError, "notes must be a str"),
])
def test_summary_writer_rejects_bad_labels_before_making_the_run(tmp_path, kwargs, error, match):
    with pytest.raises(error, match=match):
        SummaryWriter(str(tmp_path / "run"), **kwargs)
    assert not os.path.exists(str(tmp_path / "run"))


def test_summary_writer_labels_on_s3(s3):
    opts, fs = s3
    logdir = "s3://%s/writer/run" % BUCKET
    _scalar_run(logdir, storage_options=opts, labels=["remote"], notes="on S3")
    assert read_run_info(logdir, fs=fs) == RunInfo(("remote",), "on S3")
    names = [p.rsplit("/", 1)[-1] for p in fs.ls(logdir, detail=False, refresh=True)]
    assert sum(map(is_run_info_file, names)) == 1
    lg = load_logdir(logdir, storage_options=opts)
    assert lg.runs == ["."] and sorted(lg.scalars) == [(".", "loss")] and not lg.problems


# ------------------------------------------------------------------------------------------- the readers pass it by

def _views(logdir):
    """The runs and (run, tag) pairs that TensorBoard's EventMultiplexer, tbparse, load_logdir and the live loader
    find in ``logdir``."""
    from tensorboard.backend.event_processing import plugin_event_multiplexer
    tbparse = pytest.importorskip("tbparse")
    multiplexer = plugin_event_multiplexer.EventMultiplexer()
    multiplexer.AddRunsFromDirectory(logdir)
    multiplexer.Reload()
    tensorboard = {(run, tag) for run, kinds in multiplexer.Runs().items() for tag in kinds["tensors"]}
    frame = tbparse.SummaryReader(logdir, pivot=False, extra_columns={"dir_name"}).scalars
    tb_parse = {(d or ".", t) for d, t in zip(frame.dir_name, frame.tag)}
    lg = load_logdir(logdir)
    ours = set(lg.scalars)
    live = LiveLogdir(logdir)
    live.reload()
    live_tags = {(run, tag) for run, r in live.runs.items() for tag in r.series}
    runs = [sorted(multiplexer.Runs()), sorted(set(frame.dir_name.replace("", ".")) if len(frame) else []),
            lg.runs, sorted(live.runs)]
    return runs, [tensorboard, tb_parse, ours, live_tags], lg.problems


def test_tensorboard_tbparse_and_our_readers_ignore_the_sidecar(tmp_path):
    logdir = tmp_path / "logs"
    _scalar_run(str(logdir / "a"), tags=("loss", "acc"))
    _scalar_run(str(logdir / "b" / "c"), tags=("loss",))
    runs_before, tags_before, problems = _views(str(logdir))
    assert runs_before[0] == ["a", "b/c"] and all(r == runs_before[0] for r in runs_before)
    assert tags_before[0] == {("a", "loss"), ("a", "acc"), ("b/c", "loss")}
    assert all(t == tags_before[0] for t in tags_before) and not problems
    change_run_info(str(logdir / "a"), add_labels=["keep"], notes="the good one")
    change_run_info(str(logdir / "b" / "c"), archived=True)
    change_run_info(str(logdir / "b"), add_labels=["a folder, not a run"])        # a folder with only a sidecar
    (logdir / "only").mkdir()
    change_run_info(str(logdir / "only"), add_labels=["lonely"])
    change_run_info(str(logdir), notes="the logdir itself")
    sidecar_object = logdir / "only" / ".runinfo.01795838663615416071.5d90387b5b75b0cb.json"   # as if from S3
    shutil.copy(str(logdir / "only" / STATE_NAME), str(sidecar_object))
    runs_after, tags_after, problems = _views(str(logdir))
    assert runs_after == runs_before and tags_after == tags_before and not problems


# ------------------------------------------------------------------------------------------- errors

@pytest.mark.parametrize("content,match", [
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe", "not valid JSON"),
    (b'["a"]', "not a tfevents.runinfo document"),
    (b'{"format": "tfevents.runinfo", "version": 9, "changes": []}', "format version 9.*upgrade tfevents"),
    (b'{"format": "tfevents.runinfo", "version": 1, "changes": [{"time_ns": "1", "id": "x"}]}',
     "change 0: time_ns '1'"),
    (b'{"format": "tfevents.runinfo", "version": 1, "changes": [{"time_ns": 1, "id": "x", "add_labels": ["\\u0007"]}]}',
     "change 0: add_labels: .*control"),
])
def test_a_corrupt_local_sidecar_names_the_file_and_is_never_replaced(tmp_path, content, match):
    run = tmp_path / "run"
    run.mkdir()
    path = run / STATE_NAME
    path.write_bytes(content)
    with pytest.raises(ValueError, match=match) as err:
        read_run_info(str(run))
    assert str(path) in str(err.value) and "corrupt" in str(err.value) or "upgrade" in str(err.value)
    with pytest.raises(ValueError, match=match):
        change_run_info(str(run), add_labels=["x"])
    assert path.read_bytes() == content and os.listdir(run) == [STATE_NAME]


def test_a_corrupt_object_names_the_object(s3):
    opts, fs = s3
    run_dir = "s3://%s/corrupt/run" % BUCKET
    change_run_info(run_dir, add_labels=["ok"], fs=fs)
    bad = ".runinfo.%020d.%s.json" % (1, "00ff")
    fs.pipe(run_dir + "/" + bad, b"{truncated")
    with pytest.raises(ValueError, match="run info file %s/%s is corrupt: not valid JSON" % (run_dir, bad)):
        read_run_info(run_dir, fs=fs)
    with pytest.raises(ValueError, match=bad):
        change_run_info(run_dir, add_labels=["more"], fs=fs)


@pytest.mark.parametrize("labels,error,match", [
    ([""], ValueError, "empty or blank"),
    ([" \t"], ValueError, "empty or blank"),
    (["ok", "tab\there"], ValueError, r"'tab\\there' holds U\+0009"),
    (["new\nline"], ValueError, "U\\+000A"),
    (["\x1b]0;title\x07"], ValueError, "U\\+001B, U\\+0007"),
    (["c1\x9b31m"], ValueError, "U\\+009B"),
    (["line\u2028sep"], ValueError, "U\\+2028"),
    ([3], TypeError, "a label must be a str, got int 3"),
    ("label", TypeError, "add_labels must be a list of labels"),
])
def test_bad_labels_are_rejected_and_nothing_is_written(tmp_path, labels, error, match):
    with pytest.raises(error, match=match):
        change_run_info(str(tmp_path), add_labels=labels)
    with pytest.raises(error):
        change_run_info(str(tmp_path), remove_labels=labels)
    assert os.listdir(tmp_path) == []


def test_other_argument_errors(tmp_path):
    with pytest.raises(ValueError, match="both added and removed in one change: 'x'"):
        change_run_info(str(tmp_path), add_labels=["x", "y"], remove_labels=["x"])
    with pytest.raises(TypeError, match="notes must be a str"):
        change_run_info(str(tmp_path), notes=b"bytes")
    with pytest.raises(TypeError, match="archived must be True, False or None"):
        change_run_info(str(tmp_path), archived="yes")
    with pytest.raises(FileNotFoundError, match="no run folder.*missing"):
        change_run_info(str(tmp_path / "missing"), add_labels=["x"])
    with pytest.raises(FileNotFoundError, match="no run folder.*missing"):
        read_run_info(str(tmp_path / "missing"))
    assert os.listdir(tmp_path) == []


def test_file_urls_and_a_local_fsspec_filesystem_are_local_folders(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    assert change_run_info("file://" + str(tmp_path), add_labels=["a"]) == RunInfo(("a",))
    assert change_run_info(str(tmp_path), add_labels=["b"], fs=fsspec.filesystem("file")) == RunInfo(("a", "b"))
    assert os.listdir(tmp_path) == [STATE_NAME]                             # one file under flock, no objects
    _scalar_run("file://" + str(tmp_path / "run"), labels=["c"])
    assert read_run_info(str(tmp_path / "run")) == RunInfo(("c",))
    assert STATE_NAME in os.listdir(tmp_path / "run")
