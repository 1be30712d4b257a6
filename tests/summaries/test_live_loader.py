"""The live loader behind `tfevents serve`: reservoirs with the Rust server's preemption, lossless packing,
histograms as TensorBoard converts them, and reload passes that read only appended bytes."""
import os

import numpy as np
import pytest

from tfevents.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
from tfevents.summaries import SummaryWriter, record
from tfevents.summaries.live import read as live_read
from tfevents.summaries.iterator import summary_iterator
from tfevents.summaries.live.loader import BLOB_SEQUENCE, SCALAR, TENSOR, LiveLogdir
from tfevents.summaries.live.run import LiveRun
from tfevents.summaries.live.values import tensor_bytes
from tfevents.summaries.live import packing
from tfevents.summaries.live.packing import (CompactHistogram, _edge_table, pack_columns, unpack_columns,
                                            unpack_steps_values, widen_ints)
from tfevents.summaries.live.reservoir import Reservoir, fill_at_same_steps, sample_indices
from tfevents.summaries.reader.decode import histo_row, tensor_to_ndarray


def preempted_stream(steps):
    """The points of a stream a record-by-record reservoir of unbounded capacity keeps (the Rust server's rule:
    a point with step s drops every kept point with step >= s)."""
    kept = []
    for i, s in enumerate(steps):
        while kept and steps[kept[-1]] >= s:
            kept.pop()
        kept.append(i)
    return kept


@pytest.mark.parametrize("seed", range(5))
def test_reservoir_preemption_and_sampling_do_not_depend_on_chunking(seed):
    rng = np.random.default_rng(seed)
    steps = np.concatenate([np.arange(0, 300), np.arange(120, 500), np.arange(450, 460), np.arange(40, 900)])
    walls = 1.7e9 + np.arange(len(steps)) * 0.01
    values = rng.standard_normal(len(steps)).astype(np.float32)
    expected = preempted_stream(steps.tolist())
    big = Reservoir(10 ** 6)
    big.offer(steps, walls, values)
    assert big.data[0].tolist() == steps[expected].tolist()
    assert big.data[2].tolist() == values[expected].tolist()
    results = []
    for chunks in (1, 7, len(steps)):
        r = Reservoir(100)
        for part in np.array_split(np.arange(len(steps)), chunks):
            r.offer(steps[part], walls[part], values[part])
        results.append(r.data)
    for got in results[1:]:
        for a, b in zip(results[0], got):
            assert np.array_equal(a, b)
    kept_steps, kept_walls, kept_values = results[0]
    assert len(kept_steps) == 100 and kept_steps[-1] == steps[-1]
    assert set(kept_steps.tolist()) <= set(steps[expected].tolist())
    assert np.all(np.diff(kept_steps) > 0)
    by_step = {int(s): (w, v) for s, w, v in zip(steps[expected], walls[expected], values[expected])}
    assert all(by_step[int(s)] == (w, v) for s, w, v in zip(kept_steps, kept_walls, kept_values))


def test_packing_is_lossless_and_falls_back_when_columns_do_not_fit():
    rng = np.random.default_rng(0)
    cases = [
        (np.arange(1000) * 7 + 10 ** 12, 1.7e9 + np.cumsum(rng.random(1000)), rng.random(1000).astype(np.float32)),
        (np.array([-5, 0, 2 ** 40]), np.array([0.0, 1e-300, 1e300]), np.zeros(3, np.float32)),
        (np.array([3]), np.array([np.nan]), np.array([1.5], np.float32)),
        (np.empty(0, np.int64), np.empty(0), np.empty(0, np.float32)),
    ]
    for steps, walls, values in cases:
        steps = steps.astype(np.int64)
        out = unpack_columns(pack_columns(steps, walls, values))
        assert out[0].dtype == np.int64 and np.array_equal(out[0], steps)
        assert out[1].tobytes() == walls.tobytes()   # bit for bit, NaN included
        assert np.array_equal(out[2], values)
    packed = pack_columns(*cases[0])
    assert packed[1][0].dtype == np.int8 and packed[3][0].dtype == np.int32   # steps 7 apart, walls ~0.5 s apart
    packed = pack_columns(np.arange(3) * 10 ** 5, 1.7e9 + np.arange(3) * 1e-4, np.zeros(3, np.float32))
    assert packed[1][0].dtype == np.int32 and packed[3][0].dtype == np.int16
    # walls 1 ms apart but for two 1 s gaps (a writer's flush): int16, the two gaps kept aside
    walls = 1.7e9 + np.cumsum(np.where(np.isin(np.arange(1000), [300, 700]), 1.0, 1e-3))
    packed = pack_columns(np.arange(1000), walls, np.zeros(1000, np.float32))
    assert packed[3][0].dtype == np.int16 and packed[3][1].tolist() == [299, 699]
    assert unpack_columns(packed)[1].tobytes() == walls.tobytes()
    # steps near the ends of int64: the differences wrap, and unwrap exactly
    extreme = np.array([0, 2 ** 63 - 1, -2 ** 63, 5], dtype=np.int64)
    assert np.array_equal(unpack_columns(pack_columns(extreme, np.zeros(4), np.zeros(4, np.float32)))[0], extreme)


# ---------------------------------------------------------------- the fast paths against plain references

def splitmix64(step: int) -> int:
    """The priority of a step, on Python ints (the reservoir's docstring: splitmix64 of the step as uint64)."""
    z = (step + 0x9E3779B97F4A7C15) % 2 ** 64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2 ** 64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2 ** 64
    return z ^ (z >> 31)


def reference_offer(kept: list, chunk: list, capacity: int) -> list:
    """The reservoir's rule on lists of (step, wall, value), point by point: non-finite walls dropped; a point of
    the chunk survives iff its step is below every later step of the chunk, a kept point iff its step is below
    the chunk's smallest; then the last and the ``capacity - 1`` others of least priority."""
    chunk = [p for p in chunk if np.isfinite(p[1])]
    if not chunk:
        return kept
    survivors, later_min = [], None
    for p in reversed(chunk):
        if later_min is None or p[0] < later_min:
            survivors.append(p)
        later_min = p[0] if later_min is None else min(later_min, p[0])
    merged = [p for p in kept if p[0] < later_min] + survivors[::-1]
    if len(merged) <= capacity:
        return merged
    least = set(sorted(range(len(merged) - 1), key=lambda i: splitmix64(merged[i][0]))[:capacity - 1])
    return [p for i, p in enumerate(merged[:-1]) if i in least] + merged[-1:]


I64 = np.iinfo(np.int64)


def random_steps(rng, n: int, start: int) -> np.ndarray:
    kind = rng.integers(6)
    if kind == 0:
        steps = start + np.arange(n)                                   # a training loop
    elif kind == 1:
        steps = start + np.cumsum(rng.integers(1, 400, n))             # gaps, some too wide for int8
    elif kind == 2:
        steps = np.sort(start + rng.integers(0, n + 1, n))             # steps logged twice: preempted, never lower
    elif kind == 3:
        steps = start + rng.integers(-60, 60, n)                       # restarts: preemption inside the chunk
    elif kind == 4:
        steps = np.sort(rng.integers(I64.min, I64.max, n, endpoint=True))   # differences that wrap around
    else:
        steps = rng.choice([I64.min, I64.min + 1, -1, 0, 1, I64.max - 1, I64.max], n)
    return steps.astype(np.int64)


def random_walls(rng, n: int) -> np.ndarray:
    walls = 1.7e9 + np.cumsum(rng.choice([1e-3, 0.01, 1.0, 300.0], n) * rng.random(n))
    if rng.random() < 0.3:                       # a flush's long gap, a clock stepping back, huge or tiny times
        walls[rng.random(n) < 0.05] = rng.choice([0.0, 1e-300, 1e300, -5.0, 1.7e9 - 100])
    if rng.random() < 0.3:
        walls[rng.random(n) < 0.1] = rng.choice([np.nan, np.inf, -np.inf])
    if n and rng.random() < 0.2:
        walls[rng.integers(n)] = np.nan
    return walls


@pytest.mark.parametrize("seed", range(6))
def test_reservoir_offers_keep_what_the_plain_rule_keeps(seed):
    """Random chunks (preemption within and across them, non-finite walls, steps at the ends of int64) offered to
    reservoirs of the typical sizes: every kept step, wall time (bit for bit) and value, and the stats, are the
    plain rule's, and the packed columns unpack to the same arrays."""
    rng = np.random.default_rng(seed)
    for trial in range(12):
        capacity = int(rng.choice([1, 2, 7, 100, 1000]))
        objects = trial % 4 == 3                 # histograms, images: object arrays, kept unpacked
        r = Reservoir(capacity, object if objects else np.float32)
        kept, start = [], 0
        for _ in range(int(rng.integers(1, 5))):
            n = int(rng.choice([0, 1, 3, 100, 1200, 6000]))
            steps, walls = random_steps(rng, n, start), random_walls(rng, n)
            values = rng.standard_normal(n).astype(np.float32)
            if objects:
                values = np.array([("v", float(v)) for v in values] + [None], dtype=object)[:-1]
            r.offer(steps, walls, values)
            kept = reference_offer(kept, list(zip(steps.tolist(), walls.tolist(), values.tolist())), capacity)
            got_steps, got_walls, got_values = r.data
            assert got_steps.dtype == np.int64 and got_steps.tolist() == [p[0] for p in kept]
            assert got_walls.tobytes() == np.array([p[1] for p in kept], np.float64).tobytes()
            assert got_values.dtype == (object if objects else np.float32)
            assert got_values.tolist() == [p[2] for p in kept]
            assert r.stats == ((len(kept), kept[-1][0], max(p[1] for p in kept)) if kept else (0, None, None))
            if kept:                             # next chunk: after the last kept step, at it (re-logged), or before
                start = min(kept[-1][0] + int(rng.choice([1, 1, 1, 0, -5])), 2 ** 62)


def test_sample_indices_depend_on_the_steps_and_k_alone():
    """Asked in turn about step sets that share their length, their last step, or all but one step, and about
    different k: each answer is the plain rule's (the answers remembered for equal steps never leak across)."""
    base = np.arange(3000, dtype=np.int64) * 3
    sets = [base, base + 1, np.concatenate([[-7], base[1:]]), np.concatenate([base[:1500], base[1500:] + 1]),
            base[::-1].copy()]
    sets[4][-1] = base[-1]
    asked = [(steps, k) for steps in sets for k in (2, 10, 1000)]
    for steps, k in asked + [(steps, k) for k in (2, 10, 1000) for steps in sets]:   # each k, then each set, in turn
        plain = sorted(sorted(range(len(steps) - 1), key=lambda i: splitmix64(int(steps[i])))[:k - 1])
        assert sample_indices(steps, k).tolist() == plain + [len(steps) - 1]


def reference_narrow(diffs: list):
    """(dtype, indices of the differences that do not fit it) of least ``itemsize * n + 12 * exceptions``; on a
    tie int64 (kept whole) first, then the narrower; int8 when there are none (one point)."""
    if not diffs:
        return np.int8, []
    best, best_cost = (np.int64, []), 8 * len(diffs)
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        outside = [i for i, d in enumerate(diffs) if not info.min <= d <= info.max]
        cost = info.bits // 8 * len(diffs) + 12 * len(outside)
        if cost < best_cost:
            best, best_cost = (dtype, outside), cost
    return best


@pytest.mark.parametrize("code", ["C", "numpy"])
def test_packed_columns_take_the_cheapest_form_and_unpack_bit_for_bit(code, monkeypatch):
    """Against a direct reference, with the C scanner module's narrow_ints and with the numpy code."""
    if code == "numpy":
        monkeypatch.setattr(packing, "native", None)
    elif packing.native is None:
        pytest.skip("the _fastscan extension is not built (no C compiler at install): the numpy code packs alone")
    rng = np.random.default_rng(7)
    for trial in range(400):
        n = int(rng.choice([1, 2, 5, 40, 1000]))
        steps = random_steps(rng, n, int(rng.integers(-10 ** 6, 10 ** 6)))
        if trial % 3 == 0:                       # narrow differences but for a few wide ones, at the types' ends too
            wide = rng.choice([-2 ** 40, 2 ** 40, -2 ** 31 - 1, -2 ** 31, 2 ** 31 - 1, 2 ** 31, -32769, -32768, 32767,
                               32768, -129, -128, 127, 128], n)
            narrow = rng.integers(-128, 128, n) if trial % 2 else rng.integers(-32768, 32768, n)
            steps = np.cumsum(np.where(rng.random(n) < rng.choice([0.01, 0.05, 0.3]), wide, narrow)).astype(np.int64)
        walls = random_walls(rng, n)
        packed = pack_columns(steps, walls, rng.random(n).astype(np.float32))
        for first, column, whole in ((packed[0], packed[1], steps), (packed[2], packed[3], walls)):
            ints = whole.view(np.int64)
            diffs = [(b - a + 2 ** 63) % 2 ** 64 - 2 ** 63 for a, b in zip(ints.tolist(), ints.tolist()[1:])]
            dtype, outside = reference_narrow(diffs)
            if dtype is np.int64:
                assert first is None and column is whole
                continue
            small, where, wide = column
            assert first == ints[0] and small.dtype == dtype
            assert (where.tolist() if where is not None else []) == outside
            assert small.tolist() == [0 if i in set(outside) else d for i, d in enumerate(diffs)]
            assert wide is None or wide.tolist() == [diffs[i] for i in outside]
            assert widen_ints(column).tolist() == diffs
        out = unpack_columns(packed)
        assert out[0].dtype == np.int64 and out[0].tobytes() == steps.tobytes()
        assert out[1].tobytes() == walls.tobytes()
        step_values = unpack_steps_values(packed)   # (what a density reads: the wall times left packed)
        assert step_values[0].tobytes() == steps.tobytes() and step_values[1] is out[2]


def test_series_packed_at_the_same_steps_unpack_to_one_read_only_array():
    """A sweep's runs logged at the same steps: one array of steps for all of them (a density of 10,000 runs reads
    it, not 10,000 copies), which nothing can write; other steps, another array; a column with a difference kept
    aside, or longer than SHARED_STEPS_MAX_POINTS, unpacked each time, read-only too."""
    rng = np.random.default_rng(11)
    steps = np.arange(0, 3000, 3, dtype=np.int64)
    runs = [pack_columns(steps.copy(), 1.7e9 + np.arange(1000.0) * rng.random(), rng.random(1000).astype(np.float32))
            for _ in range(3)]
    got = [unpack_steps_values(packed)[0] for packed in runs]
    assert got[0] is got[1] is got[2] and got[0].tolist() == steps.tolist()
    assert unpack_columns(runs[0])[0] is got[0]
    with pytest.raises(ValueError):
        got[0][0] = 5
    other = unpack_steps_values(pack_columns(steps + 1, np.zeros(1000), np.zeros(1000, np.float32)))[0]
    assert other is not got[0] and other.tolist() == (steps + 1).tolist()
    gap = np.r_[steps, 10 ** 12]   # a difference beyond int32: kept aside
    long = np.arange(packing.SHARED_STEPS_MAX_POINTS + 1, dtype=np.int64)
    for column in (gap, long):
        packed = pack_columns(column, np.zeros(len(column)), np.zeros(len(column), np.float32))
        a, b = unpack_steps_values(packed)[0], unpack_steps_values(packed)[0]
        assert a is not b and a.tolist() == column.tolist() and not a.flags.writeable


def test_steps_and_values_of_many_runs_are_each_runs(tmp_path):
    for run, n in (("a", 5), ("b", 7), ("c", 0)):
        with SummaryWriter(str(tmp_path / run)) as w:
            for step in range(n):
                w.add_scalar("loss", 1.0 / (step + 1), step * 2)
            w.add_scalar("other", 3.0, 1)
    live = LiveLogdir(str(tmp_path))
    live.reload()
    names = ["a", "b", "c", "no such run"]
    got = live.steps_and_values_of(names, "loss")
    alone = [live.steps_and_values(run, "loss") for run in names]
    assert [g is None for g in got] == [a is None for a in alone] == [False, False, True, True]
    for g, a in zip(got[:2], alone[:2]):
        assert g[0].tolist() == a[0].tolist() and g[1].tolist() == a[1].tolist()
    assert got[1][0].tolist() == [0, 2, 4, 6, 8, 10, 12]


def test_compact_histograms_rebuild_the_rust_servers_tensor_for_any_limits():
    """Runs and subsets of TensorFlow's default edges, custom limits, counts float32 cannot hold, NaN counts,
    mismatched lengths: the rebuilt tensor is the row's, bit for bit; default edges are kept as table indices.
    (Not covered, as before: a -0.0 limit or count comes back as 0.0.)"""
    table, rng = _edge_table(), np.random.default_rng(3)
    for trial in range(600):
        kind = trial % 4
        if kind == 0:                            # a run of the default edges (our writer, tensorboardX, torch)
            a = int(rng.integers(0, len(table) - 1))
            limits = table[a:int(rng.integers(a + 1, min(len(table), a + 700) + 1))]
        elif kind == 1:                          # default edges with the empty buckets merged (TF1): never a run
            limits = np.sort(rng.choice(table[::2], int(rng.integers(2, 60)), replace=False))
        elif kind == 2:
            limits = np.sort(rng.standard_normal(int(rng.integers(0, 40))))
        else:                                    # none, one or two default edges
            limits = table[int(rng.integers(0, 20)):][:int(rng.integers(0, 3))]
        k = len(limits)
        counts = np.where(rng.random(k) < 0.8, 0.0, rng.integers(1, 10 ** 4, k).astype(np.float64))
        if k and rng.random() < 0.3:
            counts[int(rng.integers(k))] = rng.choice([0.5, 2.0 ** 25 + 1, 1e300, np.nan])
        lo, hi = float(rng.standard_normal()), float(rng.standard_normal())
        mismatched = rng.random() < 0.05         # one count too few or too many: not a valid histogram
        stored_counts = (counts[:-1] if k else np.ones(1)) if mismatched else counts
        row = (lo, hi, 1.0, 2.0, 3.0, limits.tobytes(), stored_counts.tobytes())
        with np.errstate(over="ignore"):         # 1e300 as float32, tried and refused
            compact = CompactHistogram(row)
        if mismatched:
            assert compact.tensor_bytes() is None
            continue
        expected = np.array([[left, right, c] for left, right, c in zip(
            [lo] + limits[:-1].tolist(), limits[:-1].tolist() + [hi], counts)]).reshape(-1, 3)
        got = tensor_to_ndarray(tensor_pb2.TensorProto.FromString(compact.tensor_bytes()))
        assert got.shape == expected.shape and got.tobytes() == expected.tobytes(), (kind, trial)
        if kind == 0:
            assert isinstance(compact.edges, slice)
        elif kind == 1:
            assert isinstance(compact.edges, bytes) and len(compact.edges) == 2 * k   # uint16 indices


def test_histograms_compact_losslessly_into_the_rust_servers_tensor(peer_logdir, tmp_path):
    """Every TF1-style histogram the peers (TF1, tensorboardX, torch) and we write, compacted and rebuilt, is the
    [k, 3] tensor of the Rust data server's data_compat.rs: lefts ``[min] + limits[:-1]``, rights ``limits[:-1] +
    [max]``, counts (TensorBoard's Python data_compat trims empty end buckets instead; tests/viewer/test_serve.py checks
    the served histograms against the Rust server itself)."""
    with SummaryWriter(str(tmp_path / "ours")) as w:
        w.add_histogram("h", np.random.default_rng(1).normal(size=500), 0)
        w.add_histogram("wide", np.array([0.0, 0.0, 1e30, -3e-5]), 1)
        edges = _edge_table()[700:720].tolist()   # default edges; counts that float32 cannot hold, and a -0.0 limit
        w.add_histogram_raw("fractions", -1, 1, 3, 0, 1, edges, [0.1] + [0.0] * 18 + [2.0], 2)
        w.add_histogram_raw("negative_zero", -1, 1, 3, 0, 1, [-0.0, 1.0], [1.0, 2.0], 3)
    paths = [os.path.join(d, f) for root in (peer_logdir, str(tmp_path)) for d, _, fs in os.walk(root)
             for f in fs if "tfevents" in f]
    kinds = set()
    for path in paths:
        for event in summary_iterator(path):
            for value in event.summary.value:
                if value.WhichOneof("value") != "histo":
                    continue
                h = value.histo
                limits, counts = list(h.bucket_limit), list(h.bucket)
                expected = np.array([[lo, hi, c] for lo, hi, c in zip([h.min] + limits[:-1], limits[:-1] + [h.max],
                                                                        counts)]).reshape(-1, 3)
                compact = CompactHistogram(histo_row(h))
                got = tensor_to_ndarray(tensor_pb2.TensorProto.FromString(compact.tensor_bytes()))
                assert got.shape == expected.shape and got.tobytes() == expected.tobytes(), path
                kinds.add(type(compact.edges).__name__)
                # the C scanner's compaction of the same histogram as a lone event: the same object, or none
                from_c = CompactHistogram.of_event(event_pb2.Event(step=1, wall_time=1.0, summary=summary_pb2.Summary(
                    value=[summary_pb2.Summary.Value(tag="t", histo=h)])).SerializeToString())
                if from_c is not None:
                    assert [getattr(from_c, a) for a in ("lo", "hi", "k", "edges", "nonzero")] == \
                        [getattr(compact, a) for a in ("lo", "hi", "k", "edges", "nonzero")], path
                    assert from_c.counts.dtype == compact.counts.dtype, path
                    assert from_c.counts.tobytes() == compact.counts.tobytes(), path
                    kinds.add("float64 counts" if from_c.counts.dtype == np.float64 else "from C")
                else:   # declined: limits that are not default edges byte for byte (-0.0 is 0.0 only by value)
                    negative_zero = any(x == 0 and np.signbit(x) for x in h.bucket_limit)
                    assert not isinstance(compact.edges, slice) or negative_zero, path
                    kinds.add("declined" if negative_zero else "not default edges")
    assert kinds == {"slice", "bytes", "from C", "float64 counts", "declined", "not default edges"}


def test_reload_reads_only_appended_bytes_and_retries_a_partial_record(tmp_path):
    run = tmp_path / "run"
    with SummaryWriter(str(run)) as w:
        for step in range(5):
            w.add_scalar("loss", float(step), step)
            w.add_histogram("h", np.arange(10.0) + step, step)
    (path,) = [str(run / f) for f in os.listdir(run)]
    data = open(path, "rb").read()
    live = LiveLogdir(str(tmp_path), on_problem=lambda p: problems.append(p))
    problems = []
    cut = len(data) - 7                                   # inside the last record: still being written
    open(path, "wb").write(data[:cut])
    live.reload()
    series = live.runs["run"].series
    assert series["loss"].data_class == SCALAR and series["h"].data_class == TENSOR
    assert series["loss"].reservoir.data[0].tolist() == [0, 1, 2, 3, 4][:len(series["loss"].reservoir)]
    before = len(series["h"].reservoir) + len(series["loss"].reservoir)
    with open(path, "ab") as f:                           # the writer finishes the record
        f.write(data[cut:])
    live.reload()
    assert series["loss"].reservoir.data[0].tolist() == [0, 1, 2, 3, 4]
    assert series["h"].reservoir.data[0].tolist() == [0, 1, 2, 3, 4]
    assert len(series["h"].reservoir) + len(series["loss"].reservoir) == before + 1
    assert problems == []                                 # a partial record is not a problem
    assert live.runs["run"].files[path].offset == len(data)
    with SummaryWriter(str(run), filename_suffix=".b") as w:   # a second file, found by the next pass
        w.add_scalar("loss", 9.0, 9)
    live.reload()
    assert series["loss"].reservoir.data[0].tolist() == [0, 1, 2, 3, 4, 9]
    tensor = tensor_bytes(series["h"].reservoir.data[2][-1])
    assert isinstance(tensor, bytes) and len(tensor) > 30


def test_a_replaced_file_is_read_again_from_its_start(tmp_path):
    run = tmp_path / "run"
    with SummaryWriter(str(run)) as w:
        for step in range(20):
            w.add_scalar("loss", float(step), step)
    (path,) = [str(run / f) for f in os.listdir(run)]
    live = LiveLogdir(str(tmp_path))
    live.reload()
    os.remove(path)
    live.reload()
    assert "run" not in live.runs                         # a run whose files are gone is dropped
    with SummaryWriter(str(run)) as w:                    # a shorter file under a new name
        for step in range(3):
            w.add_scalar("loss", 10.0 + step, step)
    live.reload()
    loss = live.runs["run"].series["loss"].reservoir.data
    assert loss[0].tolist() == [0, 1, 2] and loss[2].tolist() == [10.0, 11.0, 12.0]
    (path,) = [str(run / f) for f in os.listdir(run)]
    head = open(path, "rb").read()
    with open(path + ".tmp", "wb") as f:                  # replaced in place by a shorter copy
        f.write(head[:len(head) // 2])
    os.replace(path + ".tmp", path)
    live.reload()
    assert live.runs["run"].files[path].offset <= len(head) // 2


def _event(step, wall, *values):
    return event_pb2.Event(step=step, wall_time=wall, summary=summary_pb2.Summary(value=list(values)))


def _scalar(tag, value):
    return summary_pb2.Summary.Value(tag=tag, simple_value=value)


def _tensor_scalar(tag, value, plugin, data_class=0):
    md = summary_pb2.SummaryMetadata(data_class=data_class)
    md.plugin_data.plugin_name = plugin
    return summary_pb2.Summary.Value(tag=tag, metadata=md, tensor=tensor_pb2.TensorProto(
        dtype=types_pb2.DT_FLOAT, float_val=[value], tensor_shape=tensor_shape_pb2.TensorShapeProto()))


def _histogram(tag, step):
    h = summary_pb2.HistogramProto(min=0.0, max=step + 1.0, num=2, sum=step + 1.0, sum_squares=(step + 1.0) ** 2,
                                   bucket_limit=[0.5, step + 2.0], bucket=[1.0, 1.0])
    return summary_pb2.Summary.Value(tag=tag, histo=h)


def _reducible_events(mixed: bool):
    """Events that exercise the scanner's reduction: long scalar series (simple values and TF2-style tensors) with
    restarts that re-log the steps they preempt and wall times that are not finite,
    a long histogram series (lone histograms, one an event), and a rank-0 tensor series of another data class
    (never reduced); ``mixed`` adds a tag logged first as a histogram and then as scalars, and a
    tag whose scalars sometimes share an event with a histogram (some rows come from the proto decoder): the scans
    the reduction cannot stand for. Returns the events and the index of the first restart's first event."""
    events, restart = [], None
    wall = 1.7e9
    steps = list(range(0, 3000)) + list(range(1500, 5000)) + list(range(4000, 7000))   # restarts at 1500, 4000
    for i, step in enumerate(steps):
        wall += 0.01
        w = float("nan") if i == 2000 else float("inf") if i == 2500 else wall
        if i == 3000:
            restart = len(events)
        events.append(_event(step, w, _scalar("loss", float(i)), _tensor_scalar("acc", i / 10, "scalars"),
                             _tensor_scalar("custom", float(i), "custom", data_class=2)))
        if i % 3 == 0:
            events.append(_event(step, w, _histogram("weights", step)))
        if mixed and i < 3000:
            events.append(_event(step, wall, _histogram("first_histogram", step) if i < 50 else
                                 _scalar("first_histogram", float(i))))
        if mixed:   # a histogram in one event in 7: all of it goes to the proto decoder
            events.append(_event(step, wall, _scalar("sometimes_merged", float(i)),
                                 *([_histogram("h", step)] if i % 7 == 0 else [])))
    return events, restart


@pytest.mark.parametrize("hold", [None, 96 << 10])
def test_the_scanners_reduction_leaves_the_reservoirs_as_every_row_would(tmp_path, monkeypatch, hold):
    """The C scanner drops the rows a scalar reservoir would not keep as it reads; a live logdir must end up with
    the same series, points and start time as one that offers every row. Small reads make many feeds per scan (rows
    are filtered on arrival between them); a small ``HOLD_BYTES`` makes several scans per file."""
    monkeypatch.setattr(live_read, "READ_BYTES", 16 << 10)
    if hold is not None:
        monkeypatch.setattr(live_read, "HOLD_BYTES", hold)
    reduced, inexact = set(), []
    scan = live_read.scan_stream

    def spying_scan(*args, **kwargs):
        rows = scan(*args, **kwargs)
        reduced.update(rows.reduced | rows.reduced_histograms)
        return rows
    monkeypatch.setattr(live_read, "scan_stream", spying_scan)
    exact = LiveRun.reduction_exact

    def spying_exact(self, rows, decided):
        ok = exact(self, rows, decided)
        inexact.extend([] if ok else sorted(rows.reduced))
        return ok
    monkeypatch.setattr(LiveRun, "reduction_exact", spying_exact)

    records = {}
    for name in ("clean", "mixed"):
        (tmp_path / name).mkdir()
        events, restart = _reducible_events(mixed=name == "mixed")
        records[str(tmp_path / name / "events.out.tfevents.1.host")] = (
            [record.encode_record(e.SerializeToString()) for e in events], restart)
    live, every_row = LiveLogdir(str(tmp_path), threads=1), LiveLogdir(str(tmp_path), threads=1)

    def reload_both():
        live.reload()
        with monkeypatch.context() as m:   # the same loader, told no series is a scalar reservoir's
            m.setattr(LiveRun, "reservoir_capacity", lambda self, *args: 0)
            every_row.reload()
        for name in ("clean", "mixed"):
            a, b = live.runs[name], every_row.runs[name]
            assert a.start_time == b.start_time and sorted(a.series) == sorted(b.series)
            for tag, s in a.series.items():
                t = b.series[tag]
                assert (s.data_class, s.metadata, s.plugin) == (t.data_class, t.metadata, t.plugin), tag
                (s1, w1, v1), (s2, w2, v2) = s.reservoir.data, t.reservoir.data
                assert s1.tolist() == s2.tolist() and w1.tobytes() == w2.tobytes(), (name, tag)
                if s.data_class == SCALAR:
                    assert v1.tobytes() == v2.tobytes(), (name, tag)
                else:
                    assert [tensor_bytes(v) for v in v1] == [tensor_bytes(v) for v in v2], (name, tag)

    for first in (True, False):   # a pass, then one after the rest was appended, from the first restart on
        for path, (recs, cut) in records.items():
            with open(path, "ab") as f:
                f.write(b"".join(recs[:cut] if first else recs[cut:]))
        reduced.clear()
        reload_both()
        assert {"loss", "acc", "weights"} <= reduced and "custom" not in reduced  # reduced in this pass,
    assert {"first_histogram", "sometimes_merged"} & set(inexact)  # and these scans read again
    clean, mixed = live.runs["clean"], live.runs["mixed"]
    assert len(clean.series["loss"].reservoir) == 1000 and clean.series["loss"].reservoir.data[0][-1] == 6999
    assert len(clean.series["weights"].reservoir) == 100 and clean.series["weights"].data_class == TENSOR
    assert mixed.series["first_histogram"].data_class == TENSOR and clean.series["custom"].data_class == TENSOR


@pytest.mark.parametrize("seed", range(4))
def test_filling_reservoirs_at_shared_steps_is_offering_each(seed):
    """fill_at_same_steps (the first pass over a run, whose tags share their steps) leaves each reservoir as its
    own offer would, sharing the packed steps: preemption, a sample or none, rows with wall times not finite."""
    rng = np.random.default_rng(seed)
    n = [40, 1500, 1001, 3000][seed]
    steps = np.sort(rng.choice(10 * n, n, replace=False)).astype(np.int64)
    if seed % 2:
        steps = np.concatenate([steps, steps[n // 3: n // 2]])   # a restart re-logs some steps
    walls = 1.7e9 + np.cumsum(rng.random((6, len(steps))), axis=1)
    walls[2, 7] = np.nan
    walls[4, -1] = np.inf
    values = rng.standard_normal((6, len(steps))).astype(np.float32)
    together = [Reservoir(1000) for _ in range(6)]
    fill_at_same_steps(together, steps, walls, values)
    for i, r in enumerate(together):
        alone = Reservoir(1000)
        alone.offer(steps, walls[i], values[i])
        assert r.stats == alone.stats, i
        for a, b in zip(r.data, alone.data):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), i
    shared = [r for i, r in enumerate(together) if i not in (2, 4)]
    assert all(r._stored[1] is shared[0]._stored[1] for r in shared)   # the packed steps, held once


def test_a_scan_whose_only_reduced_tag_is_a_histogram_of_another_reservoir_is_read_again(tmp_path, monkeypatch):
    """The scanner reduces a tag's lone histograms to the histogram reservoir's 100, but the tag's first event (a
    histogram with metadata, which the proto decoder reads) makes it a series of another plugin that keeps 500:
    the scan must be read again unreduced, though no scalar was reduced."""
    (tmp_path / "run").mkdir()
    md = summary_pb2.SummaryMetadata(data_class=2)
    md.plugin_data.plugin_name = "custom"
    first = _histogram("w", 0)
    first.metadata.CopyFrom(md)
    events = [_event(0, 1.7e9, first)] + [_event(step, 1.7e9 + step, _histogram("w", step)) for step in range(1, 800)]
    with open(tmp_path / "run" / "events.out.tfevents.1.host", "wb") as f:
        f.write(b"".join(record.encode_record(e.SerializeToString()) for e in events))
    live, every_row = (LiveLogdir(str(tmp_path), {"custom": 500}, threads=1) for _ in range(2))
    live.reload()
    with monkeypatch.context() as m:
        m.setattr(LiveRun, "reservoir_capacity", lambda self, *args: 0)
        every_row.reload()
    a, b = live.runs["run"].series["w"], every_row.runs["run"].series["w"]
    assert a.plugin == "custom" and len(b.reservoir) == 500
    assert a.reservoir.data[0].tolist() == b.reservoir.data[0].tolist()
    assert [tensor_bytes(v) for v in a.reservoir.data[2]] == [tensor_bytes(v) for v in b.reservoir.data[2]]


# ---------------------------------------------------------------- the read API (what serve and watch see)

def test_read_api_answers_with_plain_values_equal_to_the_offline_reader(tmp_path):
    from tfevents.summaries import load_logdir
    rng = np.random.default_rng(0)
    for run, lr in (("a", 0.1), ("b", 0.01)):
        with SummaryWriter(str(tmp_path / run)) as w:
            w.add_hparams({"lr": lr, "opt": "adam", "deep": True}, {"hp/loss": 1.0})
            for step in range(1500):
                w.add_scalar("loss", float(rng.standard_normal()), step)
            for step in range(3):
                w.add_image("img", rng.integers(0, 255, (3, 4, 5), dtype=np.uint8), step)
    live = LiveLogdir(str(tmp_path), threads=1)
    live.reload()
    offline = load_logdir(str(tmp_path), on_error="skip")
    assert live.run_names() == sorted(offline.runs) and sorted(r for r, _ in live.run_starts()) == live.run_names()
    starts = dict(live.run_starts())
    assert starts["a"] == pytest.approx(float(np.min(offline.scalars[("a", "loss")].wall_time)), abs=1.0)
    assert live.start_time("nope") is None
    assert {"scalars", "images", "hparams"} <= set(live.plugin_names())
    (info,) = live.tags(["a"], ["loss"], plugin="scalars", data_class=SCALAR)
    series = offline.scalars[("a", "loss")]
    assert (info.run, info.tag, info.count, info.last_step) == ("a", "loss", 1000, 1499)
    assert info.max_wall_time == pytest.approx(float(series.wall_time.max()))
    assert summary_pb2.SummaryMetadata.FromString(info.metadata).plugin_data.plugin_name == "scalars"
    assert live.tags(["a"], ["loss"], plugin="images") == [] and live.tags(["zzz"]) == []
    points = live.points("a", "loss")
    whole = {int(s): v for s, v in zip(series.step, series.value)}
    assert points.step[-1] == 1499 and len(points.step) == 1000
    assert [whole[s] for s in points.step.tolist()] == points.value.tolist()    # kept points are the logged ones
    few = live.points("a", "loss", num_points=10)
    assert few.step.tolist() == points.step[sample_indices(points.step, 10)].tolist() and few.step[-1] == 1499
    assert live.points("a", "nope") is None
    steps, values = live.steps_and_values("a", "loss")
    assert steps.tolist() == points.step.tolist() and values.tobytes() == points.value.tobytes()
    assert live.steps_and_values("a", "nope") is None
    (image,) = live.tags(["b"], ["img"], data_class=BLOB_SEQUENCE)
    assert image.max_length == 3 and image.last_step == 2   # width, height, PNG
    png = offline.images[("b", "img")][-1].data
    assert live.blob("b", "img", 2, 2) == png
    for args, message in ((("zzz", "img", 2, 2), "no such run"), (("b", "nope", 2, 2), "no such tag"),
                          (("b", "img", 7, 0), "no step 7"), (("b", "img", 2, 9), "no index 9")):
        with pytest.raises(LookupError, match=message):
            live.blob(*args)
    (hparams_run,) = [r for r in offline.hparams if r == "a" or r.startswith("a/")]
    assert live.hparams(hparams_run) == {"lr": 0.1, "opt": "adam", "deep": True}
    assert live.hparams("zzz") == {}


def test_plugins_keeps_only_the_named_plugins(tmp_path):
    with SummaryWriter(str(tmp_path / "a")) as w:
        for step in range(5):
            w.add_scalar("loss", 1.0, step)
            w.add_histogram("w", np.arange(10.0), step)
    live = LiveLogdir(str(tmp_path), plugins=("scalars",), threads=1)
    live.reload()
    assert [(i.tag, i.count) for i in live.tags()] == [("loss", 5)]   # the histograms' series keeps nothing
