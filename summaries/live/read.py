"""Reading a run's appended bytes into its series: one file at a time, from the file's cursor, in scans that hold
at most about ``HOLD_BYTES`` each, folded in (``LiveRun.apply``) as they are read. The loader's pass calls it in its
own threads; ``workers.py`` in worker processes for a first read of many runs."""
from __future__ import annotations

import contextlib
import logging
import os
from typing import Callable, ContextManager, Dict, List, Optional

from ..reader.decode import FileRows, Problem
from ..reader.scan import have_fast_path, scan_stream
from .run import FileCursor, LiveRun

__all__ = ["read_run", "HOLD_BYTES", "SCAN_BYTES", "READ_BYTES"]

log = logging.getLogger("tfevents.serve")

HOLD_BYTES = 16 << 20  # a scan of a file stops once the rows and undecoded records it holds reach this (C path)
SCAN_BYTES = 16 << 20  # without the C scanner, a file is read in slices of this size instead
READ_BYTES = 1 << 20   # read (and framed) at a time within a scan: ~8 MB less at the peak of a 2-thread load than
#                        the offline reader's 4 MB, for the same CPU


def read_run(fs, run: LiveRun, files: List[str], check_crc: bool, report: Callable[[Problem], None],
             lock: Optional[ContextManager] = None) -> None:
    """Read what was appended to each of ``files`` (``fs``: an fsspec filesystem, None for local paths) since
    ``run``'s cursor for it, into ``run``'s series, each scan folded in under ``lock`` (the loader's, so that its
    read API never sees half a scan); problems other than a record the file ends inside go to ``report``."""
    lock = lock if lock is not None else contextlib.nullcontext()
    for path in files:
        while True:
            decided: Dict[str, int] = {}

            def keep(tag: str, metadata: Optional[bytes], first_what: str) -> int:
                decided[tag] = run.reservoir_capacity(tag, metadata, first_what)
                return decided[tag]

            rows = _scan(fs, run, path, keep, check_crc, report)
            reduced = rows is not None and (rows.reduced or rows.reduced_histograms)
            if reduced and not run.reduction_exact(rows, decided):
                rows = _scan(fs, run, path, None, check_crc, report)
            if rows is None:
                break
            for problem in rows.problems:
                if problem.kind != "truncated":
                    report(problem)
            with lock:
                run.apply(rows)
            run.files[path].offset = rows.end


def _scan(fs, run: LiveRun, path: str, keep: Optional[Callable], check_crc: bool,
          report: Callable[[Problem], None]) -> Optional[FileRows]:
    """The rows appended to ``path`` since the last pass (None when nothing was), as far as one scan holds; the
    caller moves the file's cursor to ``rows.end``. ``keep``: see ``scan_stream``."""
    cursor = run.files.get(path)
    if cursor is None:
        cursor = run.files[path] = FileCursor()
    try:
        if fs is None:
            f = open(path, "rb")
            st = os.fstat(f.fileno())
            size, inode = st.st_size, st.st_ino
        else:
            f = fs.open(path, "rb")
            size, inode = fs.size(path), None
    except OSError as err:
        report(Problem(path, None, "unreadable", str(err)))
        return None
    with f:
        if size < cursor.offset or (inode is not None and cursor.inode not in (None, inode)):
            log.info("%s shrank or was replaced; reading it again from the start", path)
            cursor.offset = 0
        cursor.inode = inode
        if size <= cursor.offset:
            return None
        start = cursor.offset
        end = size if have_fast_path() else min(size, start + SCAN_BYTES)
        rows = scan_stream(f, path, end, start=start, tail_ok=True, check_crc=check_crc, on_error="skip",
                           keep_empty=True, raw_histograms=True, chunk=READ_BYTES, keep=keep, budget=HOLD_BYTES)
        if rows.end == start and end < size:  # one record longer than a slice: read it whole
            rows = scan_stream(f, path, size, start=start, tail_ok=True, check_crc=check_crc,
                               on_error="skip", keep_empty=True, raw_histograms=True, chunk=READ_BYTES)
    if rows.end <= start:
        return None  # only a partial record so far: the next pass reads it
    return rows
