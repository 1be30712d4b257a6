"""The C scanner's shortcuts must leave the rows exactly as the pure-Python path (the Event proto) reads them.

- Tags: it tries the tag that followed the previous one last time, and checks a tag's UTF-8 only when it first sees
  it. Checked with tags in a steady order, the order changing, tags repeated within an event, more values in one
  event than the scanner keeps aside (8), and tags that are not valid UTF-8 (the record is unparseable for both
  paths, even when a valid tag was seen just before).
- Lone histograms (``raw_histograms``, the live loader's mode): an event that is one histogram value is handed out
  with its step, wall time and tag, undecoded. Decoded later, every histogram TF1, TF2, tensorboardX and torch
  write is the row the proto path gives; one whose tag is not UTF-8 is still unparseable.
"""
import glob
import os

import numpy as np
import pytest

from tfevents.proto import event_pb2
from tfevents.summaries import record
from tfevents.summaries.reader import scan
from tfevents.summaries.reader.decode import RawHistogram, histo_row

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


def _values(rows):
    """{tag: [(offset, step, wall, what, payload)]} with every histogram as its histo_row tuple."""
    out = {}
    for tag, entries in rows.values.items():
        out[tag] = [(o, st, w, what, histo_row(p.proto() if isinstance(p, RawHistogram) else p)
                     if what == "histo" and not isinstance(p, tuple) else p) for o, st, w, what, p in entries]
    return out


def test_lone_histograms_left_undecoded_decode_as_the_proto_does(peer_logdir):
    described = 0
    for path in sorted(glob.glob(os.path.join(peer_logdir, "*", "**", "events.out.tfevents.*"), recursive=True)):
        with open(path, "rb") as f:
            plain = scan.scan_stream(f, path, os.path.getsize(path), on_error="skip")
            f.seek(0)
            raw = scan.scan_stream(f, path, os.path.getsize(path), on_error="skip", raw_histograms=True)
        lone = [e[4] for entries in raw.values.values() for e in entries if isinstance(e[4], RawHistogram)]
        described += len(lone)
        assert [h.row() for h in lone] == [histo_row(h.proto()) for h in lone], path   # the C reading, the proto's
        histos = {t for t, entries in plain.values.items() if any(e[3] == "histo" for e in entries)}
        plain_v, raw_v = _values(plain), _values(raw)
        assert {t: plain_v[t] for t in histos} == {t: raw_v[t] for t in histos}, path
        earliest = [min(rows.min_wall_time, rows.fast_min_wall_time) for rows in (plain, raw)]
        assert plain.metadata == raw.metadata and earliest[0] == earliest[1]
        assert [(p.offset, p.kind) for p in plain.problems] == [(p.offset, p.kind) for p in raw.problems]
    assert described > 0


def test_a_lone_histogram_with_a_bad_tag_is_unparseable_in_both_modes(tmp_path):
    e = event_pb2.Event(step=3, wall_time=1000.0)
    e.summary.value.add(tag="Xhist").histo.bucket_limit.extend([1.0, 2.0])
    e.summary.value[0].histo.bucket.extend([0.0, 4.0])
    good = e.SerializeToString()
    path = str(tmp_path / "events.out.tfevents.2.test")
    with open(path, "wb") as f:
        f.write(record.encode_records([good, good.replace(b"Xhist", b"\xffhist"), good]))
    for raw in (False, True):
        with open(path, "rb") as f:
            rows = scan.scan_stream(f, path, os.path.getsize(path), on_error="skip", raw_histograms=raw)
        assert [p.kind for p in rows.problems] == ["unparseable"] and len(rows.values["Xhist"]) == 2
