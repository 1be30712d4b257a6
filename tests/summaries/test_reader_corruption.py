"""Corruption and truncation: every flipped byte of three records is reported at the right record
offset and every intact record after it is recovered, on the fast (C) and pure-Python paths."""
import io
import tracemalloc
import warnings

import numpy as np
import pytest

from tfevents.proto import event_pb2, summary_pb2
from tfevents.summaries import record
from tfevents.summaries.reader import scan as _reader_scan
from tfevents.summaries.reader import ReadWarning, load_logdir

PATHS = [pytest.param(True, id="fast"), pytest.param(False, id="pure")]


def _paths(fast):
    if fast and not _reader_scan.have_fast_path():
        pytest.skip("the _fastscan extension is not built")
    return fast


def _sample():
    """(file bytes, record offsets, {record index: [(tag, step, value)]})."""
    events = [event_pb2.Event(wall_time=1.0, file_version="brain.Event:2")]
    content = {0: []}
    for i in range(1, 10):
        s = summary_pb2.Summary()
        s.value.add(tag="loss", simple_value=float(i))
        content[i] = [("loss", i, float(i))]
        if i == 4:  # a record for the proto decoder: histogram next to a scalar
            s.value.add(tag="h", histo=summary_pb2.HistogramProto(min=0, max=1, num=1, bucket_limit=[1], bucket=[1]))
        if i == 6:  # tensor-style scalar
            v = s.value.add(tag="acc")
            v.tensor.dtype = 2
            v.tensor.double_val.append(0.5)
            content[i].append(("acc", i, 0.5))
        events.append(event_pb2.Event(wall_time=10.0 + i, step=i, summary=s))
    blobs = [record.encode_record(e.SerializeToString()) for e in events]
    offsets = np.cumsum([0] + [len(b) for b in blobs])[:-1].tolist()
    return b"".join(blobs), offsets, content


DATA, OFFSETS, CONTENT = _sample()


def _scan(data, fast):
    return _reader_scan.scan_stream(io.BytesIO(data), "sample", len(data), on_error="skip", fast=fast)


def _points(rows):
    out = set()
    for tag, (_, steps, _, values) in rows.scalars.items():
        out.update(zip([tag] * len(steps), np.asarray(steps).tolist(), np.asarray(values).tolist()))
    return out


def _expected(skip):
    return {p for i, pts in CONTENT.items() if i not in skip for p in pts}


@pytest.mark.parametrize("fast", PATHS)
@pytest.mark.parametrize("index", [2, 4, 9])
def test_every_flipped_byte_is_reported_and_later_records_recovered(fast, index):
    fast = _paths(fast)
    start = OFFSETS[index]
    end = OFFSETS[index + 1] if index + 1 < len(OFFSETS) else len(DATA)
    for pos in range(start, end):
        data = bytearray(DATA)
        data[pos] ^= 0xFF
        rows = _scan(bytes(data), fast)
        problems = [(p.kind, p.offset) for p in rows.problems]
        assert problems == [("corrupted", start)], (pos, problems)
        assert _points(rows) == _expected({index}), pos
        assert ("h" in rows.values) == (index != 4), pos


@pytest.mark.parametrize("fast", PATHS)
def test_truncated_tail_is_not_corruption(fast):
    fast = _paths(fast)
    last = OFFSETS[-1]
    for cut in range(last + 1, len(DATA)):
        rows = _scan(DATA[:cut], fast)
        assert [(p.kind, p.offset) for p in rows.problems] == [("truncated", last)], cut
        assert _points(rows) == _expected({9})
    assert _scan(DATA, fast).problems == []


@pytest.mark.parametrize("fast", PATHS)
def test_garbage_between_records_is_skipped(fast):
    fast = _paths(fast)
    cut = OFFSETS[5]
    data = DATA[:cut] + bytes(range(7, 250, 3)) + DATA[cut:]
    rows = _scan(data, fast)
    assert [(p.kind, p.offset) for p in rows.problems] == [("corrupted", cut)]
    assert "resumed at offset %d" % (cut + len(range(7, 250, 3))) in rows.problems[0].detail
    assert _points(rows) == _expected(set())


@pytest.mark.parametrize("fast", PATHS)
def test_forged_length_does_not_allocate(fast):
    fast = _paths(fast)
    header = (1 << 40).to_bytes(8, "little")
    forged = header + record.masked_crc32c(header).to_bytes(4, "little") + b"x" * 100
    data = DATA + forged
    tracemalloc.start()
    try:
        rows = _scan(data, fast)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20
    assert [(p.kind, p.offset) for p in rows.problems] == [("truncated", len(DATA))]
    assert _points(rows) == _expected(set())


def test_on_error_policies(tmp_path):
    data = bytearray(DATA)
    data[OFFSETS[3] + 14] ^= 1
    (tmp_path / "events.out.tfevents.1.h").write_bytes(bytes(data))
    with pytest.raises(record.CorruptedRecordError) as err:
        load_logdir(str(tmp_path), on_error="raise")
    assert err.value.offset == OFFSETS[3] and err.value.path.endswith("events.out.tfevents.1.h")
    with pytest.warns(ReadWarning, match="corrupted.*offset %d|offset %d.*corrupted" % (OFFSETS[3], OFFSETS[3])):
        lg = load_logdir(str(tmp_path), on_error="warn")
    assert lg.scalars[(".", "loss")].step.tolist() == [1, 2, 4, 5, 6, 7, 8, 9]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = load_logdir(str(tmp_path), on_error="skip")
    assert [(p.kind, p.offset) for p in quiet.problems] == [("corrupted", OFFSETS[3])]
    with pytest.raises(ValueError, match="on_error"):
        load_logdir(str(tmp_path), on_error="ignore")


def test_find_next_record():
    f = io.BytesIO(DATA)
    assert record.find_next_record(f, 0, len(DATA)) == 0
    assert record.find_next_record(f, 1, len(DATA)) == OFFSETS[1]
    assert record.find_next_record(f, OFFSETS[-1] + 1, len(DATA)) is None
    assert record.find_next_record(io.BytesIO(b"\0" * 3), 0) is None


@pytest.mark.parametrize("fast", PATHS)
def test_sound_checksum_bad_content_is_reported_not_fatal(fast, tmp_path):
    """A record whose checksum holds but whose payload is not an Event, and a text tensor with a
    forged shape, are reported as 'unparseable'; everything else is read."""
    fast = _paths(fast)
    from tfevents.summaries.reader import scan as scan_mod
    text_meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
    s = summary_pb2.Summary()
    v = s.value.add(tag="note", metadata=text_meta)
    v.tensor.dtype = 7
    v.tensor.string_val.append(b"hi")
    v.tensor.tensor_shape.dim.add(size=1 << 40)
    ok = summary_pb2.Summary()
    ok.value.add(tag="note", tensor=summary_pb2.Summary.Value(tag="x").tensor)
    ok.value[0].tensor.dtype = 7
    ok.value[0].tensor.string_val.append(b"fine")
    bad_text = record.encode_record(event_pb2.Event(step=20, summary=s).SerializeToString())
    good_text = record.encode_record(event_pb2.Event(step=21, summary=ok).SerializeToString())
    junk = record.encode_record(b"\xff\xff\xff")
    data = DATA + junk + bad_text + good_text
    (tmp_path / "events.out.tfevents.1.h").write_bytes(data)
    if not fast:
        orig = scan_mod.native
        scan_mod.native = None
    try:
        lg = load_logdir(str(tmp_path), on_error="skip")
    finally:
        if not fast:
            scan_mod.native = orig
    kinds = [(p.kind, p.offset) for p in lg.problems]
    assert ("unparseable", len(DATA)) in kinds and ("unparseable", len(DATA) + len(junk)) in kinds
    assert [t.text for t in lg.text[(".", "note")]] == ["fine"]
    assert lg.scalars[(".", "loss")].step.tolist() == list(range(1, 10))
