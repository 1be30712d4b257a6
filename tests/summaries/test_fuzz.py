"""Fuzzing the readers with hypothesis: mutated event files must fail only in documented ways.

A valid event file holding every kind (scalars, histogram, image, audio, text, PR curve, hparams,
a plain tensor, a graph, run metadata, a SessionLog) is mutated: bit flips, truncations, forged
record lengths up to 2**64-1 (with the length checksum forged too, so the reader believes them),
overwritten spans, inserted bytes, spliced records, files of pure random bytes, and damaged payloads
re-framed with correct checksums (so the protobuf and tensor decoders see hostile bytes). For each file:

* ``summary_iterator`` yields Events and then either stops or raises ``TruncatedRecordError`` /
  ``CorruptedRecordError`` (``DataLossError``) -- nothing else;
* the reader (``scan_file`` on the C fast path and on the pure-Python path, then ``load_logdir``)
  never raises with ``on_error='skip'``, and records each problem as truncated / corrupted /
  unparseable with the file and an offset inside it;
* nothing hangs (SIGALRM guard) and the peak of Python-tracked memory (tracemalloc: Python
  objects, numpy arrays, the C extension's PyMem buffers) stays within a small multiple of the
  file's size.

Examples: 200 mutated files by default (~12 s); ``TFEVENTS_SOAK=1`` runs 6000.
"""
import contextlib
import os
import signal
import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfevents.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
from tfevents.summaries import SummaryWriter, record
from tfevents.summaries.reader import scan as _reader_scan
from tfevents.summaries.iterator import summary_iterator
from tfevents.summaries.reader import load_logdir

SOAK = os.environ.get("TFEVENTS_SOAK", "") not in ("", "0")
EXAMPLES = 6000 if SOAK else 200
MEMORY_FACTOR, MEMORY_SLACK = 8, 1 << 20   # peak <= 8 x file size + 1 MB (first-use caches of protobuf)
PATHS = [True, False] if _reader_scan.have_fast_path() else [False]
COUNTS = {"files": 0, "bytes": 0}


def _seed_file(directory):
    from tfevents.summaries import builders
    from tfevents.proto import config_pb2, graph_pb2

    rng = np.random.default_rng(0)
    with SummaryWriter(directory) as w:
        graph = graph_pb2.GraphDef(node=[graph_pb2.NodeDef(name="a", op="Const")])
        w.add_graph(graph)
        w.add_run_metadata(config_pb2.RunMetadata(), "rm", 1)
        for step in range(6):
            w.add_scalar("loss", 1.0 / (step + 1), step)
            w.add_scalar("acc", step * 0.1, step)
        w.add_histogram("h", rng.normal(size=200), 3)
        w.add_image("img", rng.random((3, 4, 4)), 3)
        w.add_audio("snd", rng.uniform(-1, 1, 64), 3, sample_rate=8000)
        w.add_text("txt", "hello *world*", 3)
        w.add_pr_curve("pr", rng.integers(0, 2, 20), rng.random(20), 3, num_thresholds=5)
        w.add_hparams({"lr": 0.1, "opt": "adam"}, {"loss": 0.5})
        t = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[1, 2, 3, 4],
                                   tensor_shape=tensor_shape_pb2.TensorShapeProto(
                                       dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=4)]))
        w.add_summary(summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="tensor", tensor=t)]), 4)
        w.add_session_log(event_pb2.SessionLog(status=event_pb2.SessionLog.START), 5)
        w.add_summary(builders.scalar("last", 2.0), 6)
    (name,) = os.listdir(directory)
    with open(os.path.join(directory, name), "rb") as f:
        return f.read()


@pytest.fixture(scope="module")
def seed(tmp_path_factory):
    data = _seed_file(str(tmp_path_factory.mktemp("seed")))
    offsets = [o for o, _ in record.iter_records(_BytesFile(data))]
    return data, offsets


class _BytesFile:
    """A tiny seekable reader over bytes (io.BytesIO without a name)."""

    def __init__(self, data):
        import io
        self._f = io.BytesIO(data)
        self.read, self.seek, self.tell = self._f.read, self._f.seek, self._f.tell


def _forge_length(data, offset, length, fix_crc):
    header = struct.pack("<Q", length)
    crc = record.masked_crc32c(header) if fix_crc else struct.unpack_from("<I", data, offset + 8)[0]
    return data[:offset] + header + struct.pack("<I", crc) + data[offset + 12:]


@st.composite
def mutated(draw, seed_data, offsets):
    data = bytearray(seed_data)
    kind = draw(st.sampled_from(["flip", "truncate", "forge", "overwrite", "insert", "splice", "random", "mix",
                                 "payload", "payload"]))
    if kind == "random":
        return draw(st.binary(min_size=0, max_size=4096))
    if kind == "payload":   # damage inside records whose checksums are then made right: the decoders' turn
        return _mutate_payloads(draw, seed_data)
    steps = [kind] if kind != "mix" else draw(st.lists(
        st.sampled_from(["flip", "truncate", "forge", "overwrite", "insert", "splice"]), min_size=2, max_size=4))
    for step in steps:
        n = len(data)
        if n == 0:
            break
        if step == "flip":
            for _ in range(draw(st.integers(1, 8))):
                pos = draw(st.integers(0, n - 1))
                data[pos] ^= 1 << draw(st.integers(0, 7))
        elif step == "truncate":
            del data[draw(st.integers(0, n - 1)):]
        elif step == "forge":
            usable = [o for o in offsets if o + 12 <= n]
            if usable:
                offset = draw(st.sampled_from(usable))
                length = draw(st.one_of(
                    st.sampled_from([2**64 - 1, 2**63, 2**63 - 1, 2**32, 2**32 - 1, n, n + 1, 0]),
                    st.integers(0, 2**64 - 1), st.integers(0, 4 * n)))
                data = bytearray(_forge_length(bytes(data), offset, length, draw(st.booleans())))
        elif step == "overwrite":
            pos = draw(st.integers(0, n - 1))
            data[pos:pos + 16] = draw(st.binary(min_size=1, max_size=16))
        elif step == "insert":
            pos = draw(st.integers(0, n))
            data[pos:pos] = draw(st.binary(min_size=1, max_size=64))
        elif step == "splice":   # a record copied (or cut) somewhere else: duplicated / misaligned data
            a, b = sorted(draw(st.integers(0, n)) for _ in range(2))
            piece = bytes(data[a:b])
            pos = draw(st.integers(0, n))
            data[pos:pos] = piece
    return bytes(data)


def _mutate_payloads(draw, seed_data):
    payloads = [p for _, p in record.iter_records(_BytesFile(seed_data))]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(payloads) - 1))
        p = bytearray(payloads[i])
        how = draw(st.sampled_from(["flip", "overwrite", "truncate", "insert", "varint"]))
        pos = draw(st.integers(0, max(0, len(p) - 1)))
        if how == "flip" and p:
            p[pos] ^= 1 << draw(st.integers(0, 7))
        elif how == "overwrite":
            p[pos:pos + 8] = draw(st.binary(min_size=1, max_size=8))
        elif how == "truncate":
            del p[pos:]
        elif how == "insert":
            p[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        else:   # a huge varint (a length or a count) dropped into the message
            p[pos:pos + 1] = b"\xff" * draw(st.integers(1, 10)) + b"\x01"
        payloads[i] = bytes(p)
    return b"".join(record.encode_record(p) for p in payloads)


class _Hang(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds):
    def alarm(signum, frame):
        raise _Hang("reader did not finish in %d s" % seconds)
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@contextlib.contextmanager
def _memory_bound(size, what):
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        yield
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    limit = MEMORY_FACTOR * size + MEMORY_SLACK
    assert peak <= limit, "%s: peak %d bytes for a %d-byte file (limit %d)" % (what, peak, size, limit)


def check_file(path):
    """Every reader on one (possibly damaged) file: documented errors only, bounded time and memory."""
    size = os.path.getsize(path)
    with _time_limit(20):
        with _memory_bound(size, "summary_iterator"):
            n_events = 0
            try:
                for event in summary_iterator(path):
                    assert isinstance(event, event_pb2.Event)
                    n_events += 1
            except record.DataLossError as err:
                assert isinstance(err, (record.TruncatedRecordError, record.CorruptedRecordError))
                assert err.path == path and 0 <= err.offset < size
        for fast in PATHS:
            with _memory_bound(size, "scan_file(fast=%s)" % fast):
                rows = _reader_scan.scan_file(path, on_error="skip", fast=fast)
            for p in rows.problems:
                assert p.kind in ("truncated", "corrupted", "unparseable"), p
                assert p.path == path and 0 <= p.offset < size, p
            if n_events and not rows.problems:
                assert rows.records == n_events
        with _memory_bound(size, "load_logdir"):
            logdir = load_logdir(os.path.dirname(path), on_error="skip", workers=1)
        for p in logdir.problems:
            assert p.kind in ("truncated", "corrupted", "unparseable", "purged"), p
    COUNTS["files"] += 1
    COUNTS["bytes"] += size


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def test_mutated_event_files_fail_only_in_documented_ways(seed, fuzz_dir):
    seed_data, offsets = seed
    path = str(fuzz_dir / "events.out.tfevents.1.fuzz")

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not SOAK,
              suppress_health_check=list(HealthCheck))
    @given(mutated(seed_data, offsets))
    def run(data):
        with open(path, "wb") as f:
            f.write(data)
        check_file(path)

    before = COUNTS["files"]
    run()
    print("\nfuzz: %d files (%d bytes) checked" % (COUNTS["files"] - before, COUNTS["bytes"]))
    assert COUNTS["files"] - before >= EXAMPLES // 2


@pytest.mark.parametrize("length", [2**64 - 1, 2**63, 2**40, 2**32 + 5])
def test_forged_lengths_on_every_record_allocate_nothing_big(seed, tmp_path, length):
    seed_data, offsets = seed
    for i, offset in enumerate(offsets):
        path = str(tmp_path / ("events.out.tfevents.%d.forged" % i))
        with open(path, "wb") as f:
            f.write(_forge_length(seed_data, offset, length, fix_crc=True))
        check_file(path)
        os.unlink(path)


def _tensor_event(shape, dtype=types_pb2.DT_DOUBLE, **values):
    tensor = tensor_pb2.TensorProto(dtype=dtype, tensor_shape=tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in shape]), **values)
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="bomb", tensor=tensor)])
    return event_pb2.Event(step=1, wall_time=1.0, summary=summary).SerializeToString()


@pytest.mark.parametrize("shape,values", [
    ([1 << 27], {"double_val": [1.0]}),                  # one value padded to 2**27 (TF's fill rule)
    ([1 << 13, 1 << 14], {"double_val": [1.0, 2.0]}),
    ([1 << 27], {}),                                     # no values: zeros of that shape
    ([3, 1 << 26], {"double_val": [0.5]}),
])
def test_tiny_tensor_with_a_huge_shape_is_not_expanded(tmp_path, shape, values):
    """A ~40-byte record must not make the reader allocate gigabytes (a decompression bomb)."""
    path = str(tmp_path / "events.out.tfevents.1.bomb")
    with open(path, "wb") as f:
        f.write(record.encode_record(event_pb2.Event(file_version="brain.Event:2").SerializeToString()))
        f.write(record.encode_record(_tensor_event(shape, **values)))
    check_file(path)
    logdir = load_logdir(str(tmp_path), on_error="skip", workers=1)
    assert any(p.kind in ("corrupted", "unparseable") or "bomb" in p.detail for p in logdir.problems) or \
        all(np.asarray(r.value).size <= 1 << 20 for r in logdir.tensors.get((".", "bomb"), []))


@pytest.mark.parametrize("field", ["tag", "node_name", "display_name", "plugin_name"])
def test_invalid_utf8_in_a_scalar_is_unparseable_on_both_paths(tmp_path, field):
    """protobuf refuses a proto3 string that is not UTF-8; the C fast path must not read it anyway."""
    value = summary_pb2.Summary.Value(tag="loss", simple_value=1.0)
    if field == "display_name":
        value.metadata.display_name = "MARK"
    elif field == "plugin_name":
        value.metadata.plugin_data.plugin_name = "MARK"
    elif field == "node_name":
        value.node_name = "MARK"
    good = event_pb2.Event(step=1, summary=summary_pb2.Summary(value=[value])).SerializeToString()
    marker = b"loss" if field == "tag" else b"MARK"
    bad = good.replace(marker, b"\xff" + marker[1:])        # same length: only the bytes change
    path = str(tmp_path / "events.out.tfevents.1.utf8")
    with open(path, "wb") as f:
        f.write(record.encode_record(event_pb2.Event(file_version="brain.Event:2").SerializeToString()))
        f.write(record.encode_record(bad))
        f.write(record.encode_record(good))
    with pytest.raises(record.CorruptedRecordError, match="not an Event"):
        list(summary_iterator(path))
    for fast in PATHS:
        rows = _reader_scan.scan_file(path, on_error="skip", fast=fast)
        assert [p.kind for p in rows.problems] == ["unparseable"], fast
        assert list(rows.scalars["loss"][1]) == [1]       # the good record after it is read
