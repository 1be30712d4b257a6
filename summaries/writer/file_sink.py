"""Where an EventFileWriter's framed records go when its logdir is a local path: one appended file.

A *sink* takes the framed bytes of a batch of Events (``record.encode_records``) from the writer
and stores them. Its interface, shared with ``object_sink.ObjectStoreSink``:

* ``write(data, force, due)``: store ``data`` after whatever an earlier failed write left behind.
  On failure raise OSError and keep the bytes for the next call. ``force`` (flush and close) means
  the bytes are to be stored now (``sync`` waits for them); ``due``, that the writer's ``flush_secs``
  passed without a write. A local file stores the bytes at once either way; an object store only
  holds them here and uploads from a thread of its own.
* ``holding``: true while bytes are kept that are not stored yet.
* ``due_at``: the ``time.monotonic()`` time at which the sink wants ``write(b"", False)`` called
  even if no event is queued (``math.inf``: never).
* ``sync(deadline)``: return once everything written is stored (a local file: at once; an object
  store waits for its uploads, TimeoutError at ``deadline``); ``stop()``: no further attempt.
* ``path``: the file (or object) being written; ``close()``; ``forget_parent()`` in a forked child.

The local file is ``events.out.tfevents.<%010d secs>.<hostname>.<pid>.<n>[suffix]``; ``n`` is a
per-process counter and the file is opened with ``O_EXCL``, so two writers never share a name,
even in the same second. It is created, with its ``file_version`` event first, when the sink is.
If it is deleted while the writer runs, the next write starts a new file (as TensorFlow's
EventsWriter does) instead of writing into an unlinked inode.
"""
from __future__ import annotations

import itertools
import math
import os
import time
from typing import Optional

from .. import record
from .event_bytes import file_version_event

__all__ = ["LocalFileSink", "event_file_name"]

_counter = itertools.count()          # per-process file counter (next() is atomic under the GIL)


def event_file_name(filename_suffix: str = "", now: Optional[float] = None) -> str:
    """``events.out.tfevents.<%010d secs>.<hostname>.<pid>.<counter><suffix>`` (counter per process)."""
    import socket   # (not at module import: keeps ``import tfevents.summaries`` light)

    secs = int(time.time() if now is None else now)
    return "events.out.tfevents.%010d.%s.%d.%d%s" % (
        secs, socket.gethostname(), os.getpid(), next(_counter), filename_suffix)


class LocalFileSink:
    """Appends framed records to one event file in the directory ``logdir`` (created if missing).

    ``keep_open``: hold the file descriptor between writes (False reopens the file in append
    mode for each batch: many writers, e.g. ``add_scalars`` sub-runs, hold no descriptors).
    """

    due_at = math.inf

    def __init__(self, logdir: str, suffix: str = "", keep_open: bool = True) -> None:
        self._logdir = logdir
        self._suffix = suffix
        self._keep_open = keep_open
        self._fd: Optional[int] = None
        self.path = ""
        self._unwritten = b""          # framed bytes a failed write left behind, retried first
        self.write(b"", True)          # creates the file with its file_version event

    @property
    def holding(self) -> bool:
        return bool(self._unwritten)

    def write(self, data: bytes, force: bool = False, due: bool = False) -> None:
        """Append framed bytes (after any left over from a failed write) and hand them to the OS."""
        data = self._unwritten + data if self._unwritten else data
        self._unwritten = data
        header = self._ensure_file()
        if header:
            data = self._unwritten = header + data
        fd = self._fd
        done = 0
        try:
            view = memoryview(data)
            while done < len(data):
                done += os.write(fd, view[done:])
            self._unwritten = b""
        except OSError as e:
            self._unwritten = data[done:]
            raise OSError(e.errno, "%s: could not write %d bytes of events (kept for a retry)"
                          % (e.strerror, len(self._unwritten)), self.path) from e
        finally:
            if not self._keep_open:
                self._close_fd()

    def _ensure_file(self) -> bytes:
        """Open the event file, starting a new one if none exists yet or it was deleted.

        Returns the file_version record to write first when the file is new, else b"".
        """
        if self.path and os.path.exists(self.path):
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            return b""
        self._close_fd()
        os.makedirs(self._logdir, exist_ok=True)
        while True:
            path = os.path.join(self._logdir, event_file_name(self._suffix))
            try:
                self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o666)
                break
            except FileExistsError:   # same name from another process (pid reuse): next counter
                continue
        self.path = path
        return record.encode_record(file_version_event(time.time()))

    def sync(self, deadline: float) -> None:
        """Nothing to wait for: ``write`` handed the bytes to the OS."""

    def stop(self) -> None:
        """Nothing runs in the background."""

    def close(self) -> None:
        self._close_fd()

    def forget_parent(self) -> None:
        """In a forked child: drop the parent's unwritten bytes and file; the next write starts the child's file."""
        self._unwritten = b""
        fd, self._fd, self.path = self._fd, None, ""
        if fd is not None:
            os.close(fd)

    def _close_fd(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
