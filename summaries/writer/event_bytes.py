"""Hand-encoded ``Event`` bytes for the writer's hot paths (no protobuf object per event).

A scalar point is ``Event{wall_time, step, summary: Summary{value: [Value{tag, simple_value}]}}``;
on the wire (REFERENCE.md §2, fields in number order, as protobuf serializes them)::

    09 <wall_time: float64 LE>                  Event.wall_time = 1 (omitted when +0.0)
    10 <step: varint, two's complement>         Event.step = 2      (omitted when 0)
    2a <len> 0a <len> 0a <len> <tag utf-8>     Event.summary = 5 > Summary.value = 1 > Value.tag = 1
              15 <simple_value: float32 LE>     Value.simple_value = 2 (a oneof member: always written)

Everything from ``2a`` up to ``15`` depends only on the tag, so it is built once per tag
(:func:`scalar_packer`) and an event costs one ``struct.pack`` call.
The output is byte-identical to ``Event.SerializeToString()`` (tests/summaries/test_summary_writer.py).
"""
from __future__ import annotations

import struct
from math import copysign as _copysign
from typing import Callable, NamedTuple

__all__ = [
    "varint", "scalar_prefix", "scalar_packer", "ScalarPacker", "scalar_event", "event_header", "summary_event",
    "file_version_event", "event_step", "FILE_VERSION",
]

FILE_VERSION = "brain.Event:2"

_wall = struct.Struct("<Bd")      # 0x09 tag byte + double
_f32 = struct.Struct("<f").pack
_INF = float("inf")
_WALL_TAG = 0x09
_STEP_TAG = b"\x10"
_U64 = 1 << 64
# step < 128 is one varint byte: precomputed "10 xx" for each (step 0 is omitted)
_SMALL_STEPS = [b""] + [bytes((0x10, i)) for i in range(1, 128)]


def varint(n: int) -> bytes:
    """Base-128 varint of an int64 (negative numbers as 10-byte two's complement)."""
    if n < 0:
        n += _U64
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _len_delimited(field_byte: int, body: bytes) -> bytes:
    return bytes((field_byte,)) + varint(len(body)) + body


def scalar_prefix(tag: str) -> bytes:
    """The bytes of Event.summary from its field key up to the simple_value key (``15``)."""
    tag_field = _len_delimited(0x0A, tag.encode("utf-8")) if tag else b""   # proto3 omits ""
    value = tag_field + b"\x15"  # + 4 float bytes, added per event
    value_len = len(value) + 4
    summary_len_prefix = b"\x0a" + varint(value_len)
    summary_len = len(summary_len_prefix) + value_len
    return b"\x2a" + varint(summary_len) + summary_len_prefix + value


def event_header(wall_time: float, step: int) -> bytes:
    """``wall_time`` and ``step`` fields of an Event, as protobuf writes them (zeros omitted)."""
    if wall_time or _copysign(1.0, wall_time) < 0:   # +0.0 is the default: omitted
        head = _wall.pack(_WALL_TAG, wall_time)
    else:
        head = b""
    if 0 <= step < 128:
        return head + _SMALL_STEPS[step]
    return head + _STEP_TAG + varint(step)


def _f32_bytes(value: float) -> bytes:
    try:
        return _f32(value)
    except OverflowError:   # |value| rounds beyond float32: the C cast protobuf uses gives +-inf
        return _f32(_INF if value > 0 else -_INF)


class ScalarPacker(NamedTuple):
    """What :func:`scalar_event` needs of a tag: its prefix and one ``struct`` per step-varint size."""

    prefix: bytes
    pack1: Callable[..., bytes]   # (0x09, wall_time, 0x10, b0, prefix, value)
    pack2: Callable[..., bytes]   # (0x09, wall_time, 0x10, b0, b1, prefix, value)
    pack3: Callable[..., bytes]   # (0x09, wall_time, 0x10, b0, b1, b2, prefix, value)


def scalar_packer(tag: str) -> ScalarPacker:
    """The per-tag encoder state of :func:`scalar_event` (build once per tag, reuse)."""
    prefix = scalar_prefix(tag)
    return ScalarPacker(prefix, *(struct.Struct("<Bd%dB%dsf" % (1 + k, len(prefix))).pack for k in (1, 2, 3)))


def scalar_event(wall_time: float, step: int, packer: ScalarPacker, value: float) -> bytes:
    """Serialized ``Event(wall_time, step, summary=Summary(value=[Value(tag, simple_value=value)]))``.

    ``packer`` is :func:`scalar_packer` of the tag; ``step`` an int in int64 range. One
    ``struct.pack`` builds the whole Event when the step is 1..2**21-1 (a 1-3 byte varint).
    """
    if wall_time and 0 < step < 0x200000:
        try:
            if step < 0x80:
                return packer.pack1(0x09, wall_time, 0x10, step, packer.prefix, value)
            if step < 0x4000:
                return packer.pack2(0x09, wall_time, 0x10, (step & 0x7F) | 0x80, step >> 7, packer.prefix, value)
            return packer.pack3(0x09, wall_time, 0x10, (step & 0x7F) | 0x80, ((step >> 7) & 0x7F) | 0x80,
                                step >> 14, packer.prefix, value)
        except OverflowError:   # |value| beyond float32: handled below
            pass
    return event_header(wall_time, step) + packer.prefix + _f32_bytes(value)


def summary_event(wall_time: float, step: int, summary: bytes) -> bytes:
    """Serialized ``Event(wall_time, step, summary=<serialized Summary>)``."""
    return event_header(wall_time, step) + _len_delimited(0x2A, summary)


def file_version_event(wall_time: float, step: int = 0) -> bytes:
    """Serialized ``Event(wall_time, step, file_version="brain.Event:2")``, the first event of a file."""
    return event_header(wall_time, step) + _len_delimited(0x1A, FILE_VERSION.encode())


def event_step(payload: bytes) -> int:
    """The ``step`` of a serialized Event (0 when absent), read from its first fields: serializers write fields
    in number order, so ``step`` (2) follows ``wall_time`` (1) and the first field numbered above 2 ends the look."""
    offset, size = 0, len(payload)
    while offset < size:
        key, offset = _read_varint(payload, offset)
        field, wire_type = key >> 3, key & 7
        if field == 2 and wire_type == 0:
            step = _read_varint(payload, offset)[0]
            return step - _U64 if step >= 1 << 63 else step
        if field > 2 or wire_type not in (0, 1):
            return 0
        offset = offset + 8 if wire_type == 1 else _read_varint(payload, offset)[1]
    return 0


def _read_varint(data: bytes, offset: int):
    """``(value, offset after it)`` of the base-128 varint at ``offset``."""
    value = shift = 0
    while offset < len(data):
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            break
        shift += 7
    return value, offset
