"""``summary_iterator(path)``: the Events of one event file, in order (``tf.compat.v1.train.summary_iterator``).

Reads through ``record.iter_records``, so both checksums are verified. A damaged file is never cut
short silently: a record torn by the end of the file raises ``TruncatedRecordError`` and a bad
checksum ``CorruptedRecordError`` (both ``DataLossError``), naming the file and the byte offset
where the bad record starts. TensorFlow's reader reports the same offset for a truncated record
or a bad length checksum; for a bad payload checksum it reports the payload's offset (12 bytes
later), and it stops without an error at a partial 12-byte header, where this one raises.
A record whose checksums hold but whose bytes are not an Event raises ``CorruptedRecordError``.
"""
from __future__ import annotations

import os
from typing import BinaryIO, Iterator, Union

from .record import CorruptedRecordError, iter_records

__all__ = ["summary_iterator"]


def summary_iterator(path: Union[str, os.PathLike, BinaryIO], check_crc: bool = True) -> Iterator["Event"]:
    """Yield each record of an event file as a ``tfevents.proto.event_pb2.Event``.

    ``path``: a file path or a binary file object. ``check_crc=False`` skips the payload
    checksum (the length checksum is always checked).
    """
    from google.protobuf.message import DecodeError

    from tfevents.proto.event_pb2 import Event  # lazy: protobuf loads on the first file read

    name = os.fspath(path) if isinstance(path, (str, bytes, os.PathLike)) else getattr(path, "name", None)
    for offset, payload in iter_records(path, check_crc=check_crc):
        try:
            event = Event.FromString(payload)
        except DecodeError as e:
            raise CorruptedRecordError(name, offset, "payload is not an Event proto (%s)" % e) from None
        yield event
