"""Reading one event file into :class:`FileRows`: framing, checksums, corruption recovery.

Two paths produce the same rows. The fast path (the ``_fastscan`` C extension) frames records
chunk by chunk, checks both checksums and decodes pure scalar summaries straight into columns,
handing every other record to the proto-based decoder. The pure path frames with
``record.iter_records`` and decodes every record with the proto. Both recover from corruption the
same way: the bad record is reported with its file and offset, and reading resumes at the end of
the bad record when its length was sound, else at the next offset where ``record.find_next_record``
sees a header whose length checksum holds and whose record fits in the file.
"""
from __future__ import annotations

import os
import re
import warnings
from typing import BinaryIO, Callable, Optional

import numpy as np

from .. import record
from .decode import FileRows, Problem
from .fastscan import have_fast_path, native   # the C extension, or None: the pure-Python path does everything

__all__ = ["scan_file", "scan_stream", "have_fast_path"]

CHUNK = 4 << 20  # bytes read at a time on the fast path
_WANT_GRAPHS, _WANT_RUN_METADATA, _WANT_SUMMARIES, _DESCRIBE_HISTOGRAMS = 1, 2, 4, 8
# one scalar value as the C scanner hands it out (its Row)
ROW = np.dtype([("offset", "<i8"), ("step", "<i8"), ("wall_time", "<f8"), ("value", "<f8")])


class ReadWarning(UserWarning):
    """A problem found while reading event files (corrupted or truncated record, purged points)."""


def report(problem: Problem, on_error: str) -> None:
    """Apply the ``on_error`` policy to one problem (it is always kept in the problem list)."""
    if on_error == "raise" and problem.kind == "corrupted":
        raise record.CorruptedRecordError(problem.path, problem.offset, problem.detail)
    if on_error in ("warn", "raise"):
        warnings.warn(str(problem), ReadWarning, stacklevel=4)


def _resume_offset(f: BinaryIO, offset: int, size: int) -> Optional[int]:
    """Where to resume after a corrupted record at ``offset``."""
    f.seek(offset)
    header = f.read(record.HEADER_SIZE)
    if len(header) == record.HEADER_SIZE:
        length = int.from_bytes(header[:8], "little")
        end = offset + record.HEADER_SIZE + length + record.FOOTER_SIZE
        if record.masked_crc32c(header[:8]) == int.from_bytes(header[8:], "little") and end <= size:
            return end  # the length was sound: only the payload (or its checksum) was damaged
    return record.find_next_record(f, offset + 1, size)


def _corrupted(rows: FileRows, f: BinaryIO, offset: int, size: int, detail: str, on_error: str) -> Optional[int]:
    resume = _resume_offset(f, offset, size)
    if resume is None:
        detail += "; no intact record after it"
    elif resume != offset + 1:
        detail += "; resumed at offset %d" % resume
    problem = Problem(rows.path, offset, "corrupted", detail)
    rows.problems.append(problem)
    report(problem, on_error)
    return resume


def _truncated(rows: FileRows, offset: int, size: int, on_error: str) -> None:
    problem = Problem(rows.path, offset, "truncated",
                      "file ends %d bytes into a record (still being written, or cut short)" % (size - offset))
    rows.problems.append(problem)
    report(problem, on_error)


def _scan_pure(f: BinaryIO, size: int, rows: FileRows, check_crc: bool, on_error: str, start: int = 0,
               tail_ok: bool = False) -> None:
    pos = start
    while pos is not None:
        f.seek(pos)
        rows.end = pos
        try:
            for offset, payload in record.iter_records(f, check_crc=check_crc, start=0):
                rows.records += 1
                rows.add_event(offset + pos, payload)
                rows.end = offset + pos + record.HEADER_SIZE + len(payload) + record.FOOTER_SIZE
            return
        except record.TruncatedRecordError as err:
            rows.end = err.offset + pos
            if not tail_ok:
                _truncated(rows, err.offset + pos, size, on_error)
            return
        except record.CorruptedRecordError as err:
            pos = _corrupted(rows, f, err.offset + pos, size, err.detail, on_error)
            if pos is None:
                rows.end = max(size, rows.end)


def _scan_fast(f: BinaryIO, size: int, rows: FileRows, check_crc: bool, on_error: str, start: int = 0,
               tail_ok: bool = False, chunk: int = CHUNK, keep: Optional[Callable] = None,
               budget: Optional[int] = None) -> None:
    want = _WANT_SUMMARIES
    if rows.kinds is None or "graphs" in rows.kinds:
        want |= _WANT_GRAPHS
    if rows.kinds is None or "run_metadata" in rows.kinds:
        want |= _WANT_RUN_METADATA
    if rows.raw_histograms:   # lone histograms come described, left undecoded (FileRows.add_lone_histograms)
        want |= _DESCRIBE_HISTOGRAMS
    scanner = native.Scanner(rows.tag_filter, want, check_crc, keep)
    buf = bytearray(min(chunk, max(size - start, record.HEADER_SIZE)))
    base, filled, eof = start, 0, False  # buf[:filled] holds the file from offset base
    held = 0  # bytes of the records left to the proto decoder
    f.seek(start)
    while True:
        if not eof and filled < len(buf):
            with memoryview(buf) as view:
                n = f.readinto(view[filled:]) or 0
            filled += n
            eof = n == 0 or base + filled >= size
        with memoryview(buf) as view:
            status, used, length = scanner.feed(view[:filled], base)
        for offset, payload in scanner.take_others():
            held += len(payload)
            rows.add_event(offset, payload)
        if status == 0 and budget is not None and used and not eof and held + scanner.held_bytes >= budget:
            rows.end = base + used  # enough held for one scan: the caller reads on from here
            break
        if status == 0:
            if eof:
                rows.end = base + used
                if used < filled and not tail_ok:
                    _truncated(rows, base + used, size, on_error)
                break
            # keep the incomplete record; make room for all of it, but never beyond the file's end
            buf[:filled - used] = buf[used:filled]
            base, filled = base + used, filled - used
            need = min(max(length, filled + 1), size - base)
            if need > len(buf):
                buf.extend(bytes(need - len(buf)))
            continue
        offset = base + used
        detail = "length checksum mismatch" if status == 1 else "payload checksum mismatch"
        resume = _corrupted(rows, f, offset, size, detail, on_error)
        if resume is None:
            rows.end = size
            break
        f.seek(resume)
        base, filled, eof = resume, 0, False
    rows.records += scanner.records
    for tag, reduced, min_wall_time, payloads, histograms in scanner.take_histograms():
        if reduced:
            rows.reduced_histograms.add(tag)
        rows.fast_min_wall_time = min(rows.fast_min_wall_time, min_wall_time)
        rows.add_lone_histograms(tag, memoryview(payloads), histograms)
    for tag, meta_offset, meta, tag_rows, from_tensor, reduced, min_wall_time, extremes in scanner.columns():
        if from_tensor:
            rows.tensor_scalars.add(tag)
        if reduced:
            rows.reduced.add(tag)
            rows.reduced_extremes[tag] = extremes
        rows.fast_min_wall_time = min(rows.fast_min_wall_time, min_wall_time)
        table = np.frombuffer(tag_rows, dtype=ROW)
        rows.add_fast_columns(tag, (meta_offset, meta) if meta is not None else None,
                              table["offset"], table["step"], table["wall_time"], table["value"])


def scan_stream(f: BinaryIO, path: str, size: int, *, tag_filter: Optional[Callable[[str], bool]] = None,
                kinds: Optional[frozenset] = None, check_crc: bool = True, on_error: str = "warn",
                fast: Optional[bool] = None, start: int = 0, tail_ok: bool = False,
                keep_empty: bool = False, raw_histograms: bool = False, chunk: int = CHUNK,
                keep: Optional[Callable[[str, Optional[bytes], bool], int]] = None,
                budget: Optional[int] = None) -> FileRows:
    """Read an open, seekable binary file of ``size`` bytes into FileRows, from the record boundary ``start``.

    ``rows.end`` is where reading stopped: the end of the last whole record, or the start of a record the
    file ends inside. That record is reported as truncated unless ``tail_ok`` (a live file: its writer may
    still be writing it, so the next pass reads it from ``rows.end``). ``keep_empty`` and ``raw_histograms``: see
    :class:`FileRows`. ``chunk``: bytes read at a time on the fast path (less memory, more calls).

    For a reader that keeps reservoirs (the live loader), on the fast path: ``keep(tag, metadata, first_what)``
    gives the capacity of the reservoir a new tag's rows of its first kind go to ('simple_value' and 'tensor':
    its scalar rows; 'histo': its lone histograms, with ``raw_histograms``), 0 for none, and those rows are then
    reduced to what that reservoir would keep of them (the tag is in ``rows.reduced`` or
    ``rows.reduced_histograms`` if any were dropped; ``rows.fast_min_wall_time`` still counts them); ``budget``:
    stop, at a record boundary, once the rows and records held reach this many bytes (``rows.end`` says where).
    """
    rows = FileRows(path, tag_filter=tag_filter, kinds=kinds, keep_empty=keep_empty, raw_histograms=raw_histograms)
    if fast is None:
        fast = native is not None
    elif fast and native is None:
        raise RuntimeError("the _fastscan extension is not built")
    if fast:
        _scan_fast(f, size, rows, check_crc, on_error, start, tail_ok, chunk, keep, budget)
    else:
        _scan_pure(f, size, rows, check_crc, on_error, start, tail_ok)
    return rows.finish()


def _tag_filter(pattern: Optional[str]) -> Optional[Callable[[str], bool]]:
    if pattern is None:
        return None
    search = re.compile(pattern).search
    return lambda tag: search(tag) is not None


def scan_file(path: str, *, tags: Optional[str] = None, kinds: Optional[frozenset] = None,
              check_crc: bool = True, on_error: str = "warn", fast: Optional[bool] = None,
              fs=None) -> FileRows:
    """Read one event file (a local path, or a path on the fsspec filesystem ``fs``).

    ``tags`` is a regex (re.search) selecting tags; picklable arguments only, so this runs in
    worker processes.
    """
    try:
        if fs is None:
            f = open(path, "rb")
            size = os.fstat(f.fileno()).st_size
        else:
            f = fs.open(path, "rb")
            size = f.size if getattr(f, "size", None) is not None else fs.size(path)
    except OSError as err:
        rows = FileRows(path)
        problem = Problem(path, None, "unreadable", str(err))
        rows.problems.append(problem)
        report(problem, on_error)
        return rows
    with f:
        return scan_stream(f, path, size, tag_filter=_tag_filter(tags), kinds=kinds, check_crc=check_crc,
                           on_error=on_error, fast=fast)
