"""summary_iterator: Events of a file; damaged files raise DataLossError with the file and TF's offsets."""
import glob
import io
import os

import pytest

from tfevents.proto import event_pb2
from tfevents.summaries import (CorruptedRecordError, DataLossError, SummaryWriter, TruncatedRecordError, record,
                                summary_iterator)

HEADER = record.HEADER_SIZE


@pytest.fixture
def event_file(logdir):
    with SummaryWriter(logdir) as w:
        for step in range(5):
            w.add_scalar("loss", step * 0.5, step)
    (path,) = glob.glob(os.path.join(logdir, "*tfevents*"))
    return path


def _offsets(path):
    return [offset for offset, _ in record.iter_records(path)]


def test_yields_event_protos(event_file):
    events = list(summary_iterator(event_file))
    assert all(type(e) is event_pb2.Event for e in events)
    assert events[0].file_version == "brain.Event:2"
    assert [(e.step, e.summary.value[0].simple_value) for e in events[1:]] == [(s, s * 0.5) for s in range(5)]
    with open(event_file, "rb") as f:   # a binary file object works too
        assert list(summary_iterator(f)) == events


def test_reads_what_tensorflow_writes_like_tensorflow(logdir, tf):
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default():
        for step in range(3):
            tf.summary.scalar("x", step * 2.0, step=step)
            tf.summary.histogram("h", [1.0, 2.0, step], step=step)
        tf.summary.text("t", "hello", step=0)
    writer.close()
    (path,) = glob.glob(os.path.join(logdir, "*tfevents*"))
    theirs = [e.SerializeToString() for e in tf.compat.v1.train.summary_iterator(path)]
    ours = [e.SerializeToString() for e in summary_iterator(path)]
    assert ours == theirs and len(ours) == 1 + 3 * 2 + 1


def _damage(path, kind, offsets):
    """Write a damaged copy of ``path``; returns (copy, offset of the damaged record)."""
    data = bytearray(open(path, "rb").read())
    bad = offsets[3]
    if kind == "truncated payload":
        data = data[:bad + HEADER + 5]
    elif kind == "truncated after header":
        data = data[:bad + HEADER]
    elif kind == "truncated footer":
        data, bad = data[:len(data) - 1], offsets[-1]
    elif kind == "flipped payload byte":
        data[bad + HEADER + 3] ^= 0x40
    elif kind == "flipped length byte":
        data[bad] ^= 0x01
    elif kind == "flipped length checksum":
        data[bad + 9] ^= 0x10
    elif kind == "flipped payload checksum":
        data[offsets[4] - 1] ^= 0x01
    damaged = path + ".damaged"
    open(damaged, "wb").write(bytes(data))
    return damaged, bad


CASES = [  # kind, our error class, TF's offset relative to the record start
    ("truncated payload", TruncatedRecordError, 0),
    ("truncated after header", TruncatedRecordError, 0),
    ("truncated footer", TruncatedRecordError, 0),
    ("flipped length byte", CorruptedRecordError, 0),
    ("flipped length checksum", CorruptedRecordError, 0),
    # TF reports a bad payload checksum at the payload's offset (record start + 12)
    ("flipped payload byte", CorruptedRecordError, HEADER),
    ("flipped payload checksum", CorruptedRecordError, HEADER),
]


@pytest.mark.parametrize("kind,error,tf_shift", CASES, ids=[c[0] for c in CASES])
def test_damaged_file_raises_with_file_and_offset_like_tensorflow(event_file, tf, kind, error, tf_shift):
    offsets = _offsets(event_file)
    damaged, bad = _damage(event_file, kind, offsets)
    good = list(summary_iterator(event_file))

    seen = []
    with pytest.raises(error) as info:
        for event in summary_iterator(damaged):
            seen.append(event)
    assert isinstance(info.value, DataLossError)
    assert info.value.path == damaged and info.value.offset == bad
    message = str(info.value)
    assert damaged in message and "%s record at %d" % (error.kind, bad) in message
    assert seen == good[:offsets.index(bad)]                  # everything before it was read

    tf_seen = []
    with pytest.raises(tf.errors.DataLossError) as tf_info:
        for event in tf.compat.v1.train.summary_iterator(damaged):
            tf_seen.append(event.SerializeToString())
    assert "%s record at %d" % (error.kind, bad + tf_shift) in str(tf_info.value)
    assert tf_seen == [e.SerializeToString() for e in seen]


def test_partial_header_raises_where_tensorflow_stops_silently(event_file, tf):
    offsets = _offsets(event_file)
    data = open(event_file, "rb").read()
    damaged = event_file + ".cut"
    open(damaged, "wb").write(data[:offsets[2] + 5])
    with pytest.raises(TruncatedRecordError, match="truncated record at %d" % offsets[2]):
        list(summary_iterator(damaged))
    assert len(list(tf.compat.v1.train.summary_iterator(damaged))) == 2


def test_valid_record_that_is_not_an_event(tmp_path):
    path = str(tmp_path / "events.out.tfevents.bad")
    good = event_pb2.Event(step=1).SerializeToString()
    with open(path, "wb") as f:
        f.write(record.encode_record(good) + record.encode_record(b"\xff\xff\xff"))
    with pytest.raises(CorruptedRecordError, match="at %d.*not an Event" % len(record.encode_record(good))):
        list(summary_iterator(path))


def test_check_crc_false_skips_the_payload_checksum(event_file):
    data = bytearray(open(event_file, "rb").read())
    data[-1] ^= 0x01    # last payload checksum
    stream = io.BytesIO(bytes(data))
    assert len(list(summary_iterator(stream, check_crc=False))) == 6
    with pytest.raises(CorruptedRecordError):
        list(summary_iterator(io.BytesIO(bytes(data))))


def test_empty_file_yields_nothing(tmp_path):
    path = tmp_path / "events.out.tfevents.empty"
    path.write_bytes(b"")
    assert list(summary_iterator(str(path))) == []
