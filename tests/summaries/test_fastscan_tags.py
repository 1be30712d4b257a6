"""The C scanner looks a value's tag up by trying the tag that followed the previous one last time, and checks a
tag's UTF-8 only when it first sees it. Both shortcuts must leave the rows exactly as the pure-Python path (the
Event proto) reads them: tags in a steady order, the order changing, tags repeated within an event, more values in
one event than the scanner keeps aside (8), and tags that are not valid UTF-8 (the record is unparseable for both
paths, even when a valid tag was seen just before)."""
import numpy as np
import pytest

from tfevents.proto import event_pb2
from tfevents.summaries import record
from tfevents.summaries.reader import scan

pytestmark = pytest.mark.skipif(not scan.have_fast_path(), reason="the _fastscan extension is not built")


def _event(step, tags, bad=None):
    """An Event at ``step`` with one simple_value per tag; the tag ``bad`` made invalid UTF-8 (a lone 0xff)."""
    e = event_pb2.Event(step=step, wall_time=1000.0 + step)
    for i, tag in enumerate(tags):
        e.summary.value.add(tag=tag, simple_value=step + i / 10)
    payload = e.SerializeToString()
    if bad is not None:
        payload = payload.replace(bad.encode(), b"\xff" + bad.encode()[1:])
    return payload


def _rows(path, fast):
    rows = scan.scan_file(path, fast=fast, on_error="skip")
    cols = {tag: [np.asarray(c).tolist() for c in cols] for tag, cols in rows.scalars.items()}
    return cols, sorted((p.offset, p.kind) for p in rows.problems)


def test_tag_lookup_shortcuts_read_as_the_proto_does(tmp_path):
    steady = ["loss", "acc", "lr", "grad/norm"]
    many = ["m%02d" % i for i in range(12)]            # more than the 8 values kept aside in one pass
    payloads = [_event(s, steady) for s in range(20)]
    payloads += [_event(s, [steady[0]]) for s in range(20, 25)]                  # one tag, again and again
    payloads += [_event(s, steady[::-1]) for s in range(25, 30)]                 # the order reversed
    payloads += [_event(s, [t]) for s in range(30, 40) for t in steady]          # one value an event
    payloads += [_event(40, ["loss", "loss", "acc"])]                            # a tag twice in one event
    payloads += [_event(s, many) for s in range(41, 44)]
    payloads += [_event(44, ["Xnew"], bad="Xnew")]                               # a new tag, not UTF-8
    payloads += [_event(45, ["loss", "Yacc"], bad="Yacc")]                       # after a known tag
    payloads += [_event(46, many[:10] + ["Zbad"], bad="Zbad")]                   # beyond the 8 kept aside
    payloads += [_event(s, steady) for s in range(47, 50)]
    path = str(tmp_path / "events.out.tfevents.1.test")
    with open(path, "wb") as f:
        f.write(record.encode_records(payloads))
    fast, pure = _rows(path, True), _rows(path, False)
    assert fast == pure
    assert [kind for _, kind in fast[1]] == ["unparseable"] * 3
    assert fast[0]["loss"][1][-1] == 49 and len(fast[0]["m11"][1]) == 3
