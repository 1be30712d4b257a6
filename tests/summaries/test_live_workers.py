"""The live loader's first read in worker processes (``summaries/live/workers.py``): the runs they send back are the
runs the loader reads in-process, series for series, point for point, with the same problems; and later passes go
on from where the workers stopped."""
import gc
import logging
import shutil

import numpy as np
import pytest

from tfevents.summaries import SummaryWriter
from tfevents.summaries.live import loader, workers
from tfevents.summaries.live.loader import BLOB_SEQUENCE, TENSOR, LiveLogdir
from tfevents.summaries.live.reservoir import fill_at_same_steps
from tfevents.summaries.live.run import LiveRun
from tfevents.summaries.live.values import tensor_bytes


def _state(live: LiveLogdir) -> dict:
    """Everything the read API answers of ``live``, as plain values."""
    out = {"runs": live.run_names(), "starts": live.run_starts(), "plugins": live.plugin_names(),
           "problems": sorted((p.path, p.offset, p.kind) for p in live.problems), "series": {}}
    for info in live.tags():
        points = live.points(info.run, info.tag)
        if info.data_class == TENSOR:
            values = [tensor_bytes(v) for v in points.value]
        elif info.data_class == BLOB_SEQUENCE:
            values = [list(v) for v in points.value]
        else:
            values = points.value.tobytes()
        out["series"][(info.run, info.tag)] = (repr(info), info.data_class, points.step.tolist(),   # (repr: NaN
                                               points.wall_time.tobytes(), values)           # equals NaN)
    for run in live.run_names():
        out[("hparams", run)] = live.hparams(run)
        out[("files", run)] = live.file_count(run)
    return out


def _write_runs(root, first_step: int, runs=("ours/a", "ours/b", "ours/c")) -> None:
    rng = np.random.default_rng(first_step)
    for i, run in enumerate(runs):
        with SummaryWriter(str(root / run), filename_suffix=".%d" % first_step) as w:
            if first_step == 0:
                w.add_hparams({"lr": 10.0 ** -i, "opt": "adam"}, {"hp/loss": 1.0})
            for step in range(first_step, first_step + 1500):   # more than a scalar reservoir keeps
                w.add_scalar("loss", float(rng.standard_normal()), step)
                w.add_scalar("acc", float(step % 7) if step % 5 else float("nan"), step)
            for step in range(first_step, first_step + 3):
                w.add_histogram("weights", rng.normal(size=100), step)
                w.add_image("img", rng.integers(0, 255, (3, 4, 5), dtype=np.uint8), step)
                w.add_text("note", "step %d" % step, step)


@pytest.fixture
def many_jobs(monkeypatch):
    """Every new run read by workers, a run or two to a job; the jobs the loader hands out, recorded."""
    monkeypatch.setattr(loader, "PROCESS_BYTES", 0)
    monkeypatch.setattr(workers, "JOB_BYTES", 1)
    handed = []
    real = loader.read_in_processes

    def recording(jobs, *args, **kwargs):
        handed.append(jobs)
        return real(jobs, *args, **kwargs)
    monkeypatch.setattr(loader, "read_in_processes", recording)
    yield handed
    gc.unfreeze()   # what the loader froze (gc.freeze: every object of this test process), back in the collector's sight


def test_runs_read_by_worker_processes_equal_runs_read_in_process(peer_logdir, tmp_path, many_jobs):
    """TF1, TF2, tensorboardX and torch runs and ours (scalars past the reservoir, NaN, hparams, histograms, images,
    text), a corrupt record, then appended steps and a new run: after each pass the loader that used two worker
    processes answers every read API call exactly as the one that read in-process."""
    root = tmp_path / "logdir"
    shutil.copytree(peer_logdir, root / "peers")
    _write_runs(root, 0)
    with SummaryWriter(str(root / "ours" / "corrupt")) as w:
        for step in range(100):
            w.add_scalar("loss", float(step), step)
    (corrupt,) = (root / "ours" / "corrupt").iterdir()
    data = bytearray(corrupt.read_bytes())
    data[len(data) * 3 // 5] ^= 0xFF   # a payload byte: that record's CRC no longer matches
    corrupt.write_bytes(bytes(data))
    with_workers, in_process = LiveLogdir(str(root), processes=2), LiveLogdir(str(root), processes=1)
    with_workers.reload()
    in_process.reload()
    assert len(many_jobs) == 1 and len(many_jobs[0]) > 2   # the first pass: every run, in several jobs
    assert sum(len(job) for job in many_jobs[0]) == len(in_process.run_names())
    kept = [s for run in with_workers.runs.values() for s in run.series.values() if s.reservoir.stats[0]]
    assert kept and all(s.listed is not None for s in kept)   # listed by the workers: the first tags() reuses them
    assert {id(info) for info in with_workers.tags()} == {id(s.listed[2]) for s in kept}
    first = _state(in_process)
    assert {data_class for _, data_class, *_ in first["series"].values()} >= {TENSOR, BLOB_SEQUENCE}
    assert [kind for _, _, kind in first["problems"]] == ["corrupted"]
    assert _state(with_workers) == first

    _write_runs(root, 1500)                                   # appended: read by the pass itself
    _write_runs(root, 0, runs=("ours/late",))                 # new: by the workers again
    with_workers.reload()
    in_process.reload()
    assert [[name for name, _ in job] for job in many_jobs[1]] == [["ours/late"]]
    second = _state(in_process)
    assert second["series"][("ours/a", "loss")][2][-1] == 2999 and second != first
    assert _state(with_workers) == second


def test_packed_runs_come_back_equal_with_shared_steps_still_shared():
    """pack_runs / unpack_runs: every array equal in dtype and bytes, the packed steps that reservoirs filled
    together share (held once) still one object, and the arrays writable views of one buffer."""
    run = LiveRun("r", {})
    for tag in ("a", "b", "c"):
        run._series(tag, "simple_value", None)
    steps = np.arange(0, 3000, 3, dtype=np.int64)
    walls = 1.7e9 + np.cumsum(np.full((3, len(steps)), 0.25), axis=1)
    values = np.random.default_rng(0).normal(size=(3, len(steps))).astype(np.float32)
    fill_at_same_steps([run.series[t].reservoir for t in "abc"], steps, walls, values)
    (back,) = workers.unpack_runs(*workers.pack_runs([run]))
    for tag in "abc":
        got, want = back.series[tag].reservoir, run.series[tag].reservoir
        assert got.stats == want.stats
        for g, w in zip(got.data, want.data):
            assert g.dtype == w.dtype and g.tobytes() == w.tobytes()
    stored = [back.series[t].reservoir._stored for t in "abc"]
    assert stored[0][1] is stored[1][1] is stored[2][1]      # the shared packed steps
    arrays = [a for s in stored for part in s for a in (part if isinstance(part, tuple) else (part,))
              if isinstance(a, np.ndarray)]
    assert {id(a.base) for a in arrays if a.base is not None} and all(a.flags.writeable for a in arrays)


def test_a_pool_that_cannot_start_leaves_the_reading_to_this_process(tmp_path, monkeypatch, caplog, many_jobs):
    _write_runs(tmp_path, 0)

    class NoProcesses:
        def __init__(self, *args, **kwargs):
            raise OSError("no processes here")
    monkeypatch.setattr(workers, "ProcessPoolExecutor", NoProcesses)
    live = LiveLogdir(str(tmp_path), processes=2)
    with caplog.at_level(logging.WARNING, logger="tfevents.serve"):
        live.reload()
    assert "no processes here" in caplog.text and "reading the" in caplog.text
    expected = LiveLogdir(str(tmp_path), processes=1)
    expected.reload()
    assert _state(live) == _state(expected) and len(live.run_names()) == 3


def test_a_first_pass_over_many_runs_starts_its_workers_before_the_walk(tmp_path, monkeypatch, many_jobs):
    """A top folder of at least PRESPAWN_ENTRIES entries (a sweep): the workers start before the walk and read the
    runs; the loader then answers as the in-process one. A second pass starts none."""
    _write_runs(tmp_path, 0, runs=("a", "b", "c"))
    monkeypatch.setattr(loader, "PRESPAWN_ENTRIES", 3)
    order = []
    real_start, real_discover = loader.start_pool, loader.discover
    monkeypatch.setattr(loader, "start_pool", lambda n: order.append("workers") or real_start(n))
    monkeypatch.setattr(loader, "discover", lambda *a, **k: order.append("walk") or real_discover(*a, **k))
    live = LiveLogdir(str(tmp_path), processes=2)
    live.reload()
    assert order == ["workers", "walk"] and len(many_jobs) == 1
    expected = LiveLogdir(str(tmp_path), processes=1)
    expected.reload()
    assert _state(live) == _state(expected) and live.run_names() == ["a", "b", "c"]
    del order[:]
    live.reload()
    assert order == ["walk"]


def test_a_small_first_read_starts_no_process(tmp_path, monkeypatch):
    """Below PROCESS_BYTES (starting workers costs more than the read) the runs are read in-process, and a top folder
    of few entries starts no worker before the walk."""
    _write_runs(tmp_path, 0)
    monkeypatch.setattr(loader, "read_in_processes", lambda *a, **k: pytest.fail("workers started"))
    monkeypatch.setattr(loader, "start_pool", lambda *a, **k: pytest.fail("workers started before the walk"))
    live = LiveLogdir(str(tmp_path), processes=4)
    live.reload()
    assert live.run_names() == ["ours/a", "ours/b", "ours/c"]


def test_runs_from_workers_are_frozen_and_hold_no_reference_cycles(tmp_path, many_jobs):
    """The loader moves what each job installed out of the cyclic collector's sight (``gc.freeze``), which is sound
    only if dropping it frees it by refcounting alone: no reference cycle among the runs, nor left by unpacking
    (an unpickler holding its own method would be one, taking every object it unpickled with it)."""
    _write_runs(tmp_path, 0)
    gc.collect()
    frozen = gc.get_freeze_count()
    live = LiveLogdir(str(tmp_path), processes=2)
    live.reload()
    assert gc.get_freeze_count() > frozen and len(many_jobs[0]) == 3
    gc.unfreeze()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        gc.garbage.clear()
        del live
        gc.collect()
        ours = [o for o in gc.garbage if type(o).__module__.startswith(("tfevents.summaries.live", "pickle"))
                or isinstance(o, dict) and "reservoir" in o]
        assert not ours, ours[:5]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
