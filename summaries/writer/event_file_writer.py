"""EventFileWriter: appends serialized Events to one ``events.out.tfevents.*`` file from a background thread.

The writer only queues and frames (``record.encode_records``); what goes in an Event is the
builders' business. Its contract:

* The file ``events.out.tfevents.<%010d secs>.<hostname>.<pid>.<n>[suffix]`` is created (with
  its first event, ``file_version="brain.Event:2"``) when the writer is; ``n`` is a per-process
  counter and the file is opened with ``O_EXCL``, so two writers never share a name, even in the
  same second.
* ``add_*`` only appends to an in-memory queue. One background thread per process (shared by
  every writer) appends the queued events to the file and hands them to the OS when
  ``max_queue`` events are pending (like TensorFlow's ``tf.summary.create_file_writer``; at
  most one such write per 0.1 s per writer, so a tight logging loop hands work to the thread
  10 times a second, not every max_queue events) or ``flush_secs`` have passed since the last
  write. If the thread falls far behind, the caller writes itself (bounded memory).
* ``add_deferred_event(make)`` queues an Event whose bytes ``make()`` builds later, on the thread
  that writes (the background thread, or the caller in ``flush``/``close``), in its place among
  the other events: image and histogram encoding leave the training thread this way. An error
  in ``make()`` drops that one event and is raised like an I/O error (below), the events around
  it are written. Deferred events hold their inputs: past ``max_deferred_bytes`` of them
  pending, the caller builds them itself (bounded memory).
* ``flush()`` returns once every event queued before it is written and flushed to the OS.
* An I/O error in the background thread is raised to the caller by its next call on the
  writer. The bytes that could not be written are kept and retried, so a disk that was full and
  gets space back loses nothing.
* ``close()`` writes everything and is idempotent; adding after ``close()`` raises ValueError
  (``flush()`` is then a no-op);
  ``reopen()`` starts a new file. Writers still open at interpreter exit are flushed and closed.
* If the file is deleted while the writer runs, the next write starts a new file (as
  TensorFlow's EventsWriter does) instead of writing into an unlinked inode.
* In a forked child, inherited writers leave the parent's queued events to the parent and
  write what the child logs to a new file of the child's.
"""
from __future__ import annotations

import atexit
import collections
import itertools
import math
import os
import threading
import time
import weakref
from typing import Callable, Iterable, List, Optional, Tuple

from .. import record
from .event_bytes import file_version_event

__all__ = ["EventFileWriter", "DeferredEvent", "event_file_name"]

_counter = itertools.count()          # per-process file counter (next() is atomic under the GIL)
_live_writers: "weakref.WeakSet[EventFileWriter]" = weakref.WeakSet()
_CALLER_WRITES_AT = 65536             # pending events beyond which add_* writes in the caller's thread
_MIN_INTERVAL = 0.1                   # seconds between two max_queue-triggered writes of a writer
MAX_DEFERRED_BYTES = 256 << 20        # inputs of deferred events pending beyond which the caller builds them


def event_file_name(filename_suffix: str = "", now: Optional[float] = None) -> str:
    """``events.out.tfevents.<%010d secs>.<hostname>.<pid>.<counter><suffix>`` (counter per process)."""
    import socket   # (not at module import: keeps ``import tfevents.summaries`` light)

    secs = int(time.time() if now is None else now)
    return "events.out.tfevents.%010d.%s.%d.%d%s" % (
        secs, socket.gethostname(), os.getpid(), next(_counter), filename_suffix)


class DeferredEvent:
    """A queued Event whose bytes are built when it is written: ``make()`` returns them (None: nothing to
    write); ``nbytes`` is what it holds in memory until then."""

    __slots__ = ("make", "nbytes")

    def __init__(self, make: Callable[[], Optional[bytes]], nbytes: int = 0) -> None:
        self.make = make
        self.nbytes = nbytes


class _Worker(threading.Thread):
    """The one background thread of a process: writes each registered writer when it is due.

    ``next_look`` is when it will next look at the writers (-inf while it is busy looking);
    a writer asking for a write wakes it only if that is later than the write is due.
    """

    def __init__(self) -> None:
        super().__init__(name="tfevents-writer", daemon=True)
        self.cond = threading.Condition(threading.Lock())
        self.writers: "set[EventFileWriter]" = set()
        self.next_look = -math.inf

    def register(self, writer: "EventFileWriter") -> None:
        with self.cond:
            self.writers.add(writer)
            self.cond.notify()

    def unregister(self, writer: "EventFileWriter") -> None:
        with self.cond:
            self.writers.discard(writer)

    def run(self) -> None:
        while True:
            with self.cond:
                while True:
                    now = time.monotonic()
                    self.next_look = min((w._next_look(now) for w in self.writers), default=math.inf)
                    if self.next_look <= now:
                        break
                    self.cond.wait(None if self.next_look == math.inf else self.next_look - now)
                self.next_look = -math.inf
                writers = list(self.writers)
            now = time.monotonic()
            for writer in writers:
                if writer._is_due(now):
                    writer._background_write()


_worker: Optional[_Worker] = None
_worker_lock = threading.Lock()


def _get_worker() -> _Worker:
    """The process's writer thread, started on first use."""
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = _Worker()
            _worker.start()
        return _worker


def _after_fork_in_child() -> None:
    """A forked child has no writer thread and must not write the parent's queued events
    (the parent does): each inherited writer drops them and continues, if the child logs at
    all, in a new file of its own (the child's pid in the name)."""
    global _worker, _worker_lock
    _worker, _worker_lock = None, threading.Lock()
    for writer in list(_live_writers):
        writer._forget_parent()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class EventFileWriter:
    """Writes serialized Events to a new event file in ``logdir`` (created if missing).

    Args:
        logdir: directory of the run.
        max_queue: events pending in memory before they are written and flushed to the OS
            (``max_queue_size``, TensorBoard's name for it, is accepted too).
        flush_secs: at most this many seconds between a queued event and its write.
        filename_suffix: appended to the file name.
        keep_open: hold the file descriptor between writes (False reopens the file in append
            mode for each batch: many writers, e.g. ``add_scalars`` sub-runs, hold no descriptors).
    """

    def __init__(self, logdir: str, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str = "", keep_open: bool = True, *,
                 max_queue_size: Optional[int] = None, max_deferred_bytes: int = MAX_DEFERRED_BYTES) -> None:
        if max_queue_size is not None:   # TensorBoard's / tensorboardX's name
            max_queue = max_queue_size
        if int(max_queue) < 1:
            raise ValueError("max_queue must be >= 1, got %r" % (max_queue,))
        if not flush_secs > 0:
            raise ValueError("flush_secs must be > 0, got %r" % (flush_secs,))
        self._logdir = os.fspath(logdir)
        self._max_queue = int(max_queue)
        self._flush_secs = float(flush_secs)
        self._suffix = filename_suffix or ""
        self._keep_open = keep_open
        self._max_deferred_bytes = max_deferred_bytes
        self._io_lock = threading.RLock()
        self._open()

    # ---------------------------------------------------------------- lifecycle
    def _open(self) -> None:
        self._pending: "collections.deque[bytes]" = collections.deque()
        self._unwritten = b""          # framed bytes a failed write left behind, retried first
        self._error: Optional[BaseException] = None
        self._deferred_lock = threading.Lock()
        self._deferred_pending = 0        # DeferredEvents queued and not yet built ...
        self._deferred_bytes = 0          # ... and the bytes they hold
        self._write_requested = False
        self._wake_at = self._max_queue   # pending count at which add_* calls _request_write
        self._last_write = -math.inf
        self._fd: Optional[int] = None
        self._path = ""
        self._closed = False
        self._next_write = time.monotonic() + self._flush_secs
        with self._io_lock:
            self._write(b"")            # creates the file with its file_version event
        self._worker: Optional[_Worker] = _get_worker()
        self._worker.register(self)
        _live_writers.add(self)

    def get_logdir(self) -> str:
        return self._logdir

    def get_filename(self) -> str:
        """Path of the file being written."""
        return self._path

    @property
    def closed(self) -> bool:
        return self._closed

    def reopen(self) -> None:
        """Start writing a new event file in the same directory (after ``close()``; no-op if open)."""
        if self._closed:
            self._open()

    def flush(self) -> None:
        """Write every queued event and hand it to the OS; returns when that is done.

        A no-op after ``close()`` (which wrote everything), as in TF1 and torch.
        """
        if self._closed:
            return
        self._check()
        with self._io_lock:
            self._write_pending()

    def close(self) -> None:
        """Flush and close the file. Idempotent. Raises OSError if queued events could not be written."""
        if self._closed:
            return
        self._closed = True
        if self._worker is not None:
            self._worker.unregister(self)
        _live_writers.discard(self)
        with self._io_lock:
            try:
                self._write_pending()
            finally:
                self._close_fd()
                self._pending.clear()

    def __enter__(self) -> "EventFileWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return "EventFileWriter(%r%s)" % (self._path or self._logdir, ", closed" if self._closed else "")

    # ---------------------------------------------------------------- adding
    def add_event(self, event) -> None:
        """Queue an Event proto (ours, TensorBoard's or TensorFlow's)."""
        self.add_serialized_event(event.SerializeToString())

    def add_serialized_event(self, payload: bytes) -> None:
        """Queue one serialized Event (the hot path: an append and a length check)."""
        if self._error is not None or self._closed:
            self._check()
        pending = self._pending
        pending.append(payload)
        if len(pending) >= self._wake_at:
            self._request_write(len(pending))

    def add_serialized_events(self, payloads: Iterable[bytes]) -> None:
        """Queue several serialized Events, in order."""
        self._check()
        pending = self._pending
        pending.extend(payloads)
        if len(pending) >= self._wake_at:
            self._request_write(len(pending))

    def add_deferred_event(self, make: Callable[[], Optional[bytes]], nbytes: int = 0) -> None:
        """Queue an Event that ``make()`` builds when it is written (see the module docstring); the thread
        is asked to write soon, so that what ``make`` holds (``nbytes``) is freed soon."""
        if self._error is not None or self._closed:
            self._check()
        with self._deferred_lock:
            self._deferred_pending += 1
            self._deferred_bytes += nbytes
            over = self._deferred_bytes > self._max_deferred_bytes
        self._pending.append(DeferredEvent(make, nbytes))
        if over:                               # the thread is far behind: build here
            with self._io_lock:
                self._write_pending()
        else:
            self._request_write(len(self._pending))

    def _check(self) -> None:
        """Raise what the caller must hear about: a closed writer or a background I/O error."""
        if self._closed:
            raise ValueError("cannot write to a closed event writer (%s); call reopen() first"
                             % (self._path or self._logdir))
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _request_write(self, n_pending: int) -> None:
        """max_queue events are pending: have the thread write them (see ``_next_look``);
        if it is far behind, write here."""
        if not self._write_requested:
            worker = self._worker
            if worker is None:                  # in a forked child
                worker = self._worker = _get_worker()
                worker.register(self)
            with worker.cond:
                self._write_requested = True
                self._wake_at = _CALLER_WRITES_AT   # until the thread has written: no more calls
                if worker.next_look > max(self._last_write + _MIN_INTERVAL, time.monotonic()):
                    worker.cond.notify()
        elif n_pending >= _CALLER_WRITES_AT:
            with self._io_lock:
                self._write_pending()

    def _next_look(self, now: float) -> float:
        """When the thread must look at this writer next: the flush_secs deadline; for a
        requested write, ``_MIN_INTERVAL`` after the previous write (at once if that is past);
        and once ``_MIN_INTERVAL`` after each write, so that requests within it need no wake-up.
        A loop adding events as fast as it can so costs one thread hand-off per interval,
        not one per max_queue events."""
        follow_up = self._last_write + _MIN_INTERVAL
        if self._write_requested or now < follow_up:
            return min(self._next_write, follow_up)
        return self._next_write

    def _is_due(self, now: float) -> bool:
        return now >= self._next_write or (self._write_requested and now >= self._last_write + _MIN_INTERVAL)

    def _forget_parent(self) -> None:
        """In a forked child: see ``_after_fork_in_child``."""
        self._io_lock = threading.RLock()     # the parent's may have been held at the fork
        self._pending.clear()
        self._unwritten = b""
        self._error = None
        self._deferred_lock = threading.Lock()
        self._deferred_pending = self._deferred_bytes = 0
        self._write_requested, self._wake_at = False, self._max_queue
        self._worker = None
        fd, self._fd, self._path = self._fd, None, ""
        if fd is not None:
            os.close(fd)

    # ---------------------------------------------------------------- writing (under _io_lock)
    def _background_write(self) -> None:
        """Called by the worker thread: write, and keep any error for the caller's next call."""
        with self._io_lock:
            if self._closed:
                return
            try:
                self._write_pending()
            except Exception as e:  # noqa: BLE001 - surfaced to the caller
                self._error = e

    def _write_pending(self) -> None:
        self._write_requested = False
        self._wake_at = self._max_queue
        self._next_write = time.monotonic() + self._flush_secs
        pending = self._pending
        n = len(pending)
        if n == 0 and not self._unwritten:
            return
        self._last_write = time.monotonic()
        popleft = pending.popleft
        payloads = [popleft() for _ in range(n)]
        error = None
        if self._deferred_pending:
            payloads, error = self._build_deferred(payloads)
        self._write(record.encode_records(payloads))
        if error is not None:
            raise error

    def _build_deferred(self, items: List) -> Tuple[List[bytes], Optional[Exception]]:
        """The queued items with each DeferredEvent replaced by the bytes it builds (dropped if it fails or
        builds None), and the first error."""
        payloads, error = [], None
        for item in items:
            if type(item) is not DeferredEvent:
                payloads.append(item)
                continue
            try:
                payload = item.make()
            except Exception as e:  # noqa: BLE001 - raised once the other events are written
                payload, error = None, error or e
            finally:
                with self._deferred_lock:
                    self._deferred_pending -= 1
                    self._deferred_bytes -= item.nbytes
            if payload is not None:
                payloads.append(payload)
        return payloads, error

    def _write(self, data: bytes) -> None:
        """Append framed bytes (after any left over from a failed write) and hand them to the OS."""
        data = self._unwritten + data if self._unwritten else data
        self._unwritten = data
        header = self._ensure_file()
        if header:
            data = self._unwritten = header + data
        fd = self._fd
        try:
            view, done = memoryview(data), 0
            while done < len(data):
                done += os.write(fd, view[done:])
            self._unwritten = b""
        except OSError as e:
            self._unwritten = data[done:]
            raise OSError(e.errno, "%s: could not write %d bytes of events (kept for a retry)"
                          % (e.strerror, len(self._unwritten)), self._path) from e
        finally:
            if not self._keep_open:
                self._close_fd()

    def _ensure_file(self) -> bytes:
        """Open the event file, starting a new one if none exists yet or it was deleted.

        Returns the file_version record to write first when the file is new, else b"".
        """
        if self._path and os.path.exists(self._path):
            if self._fd is None:
                self._fd = os.open(self._path, os.O_WRONLY | os.O_APPEND)
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
        self._path = path
        return record.encode_record(file_version_event(time.time()))

    def _close_fd(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


@atexit.register
def _close_all_at_exit() -> None:
    """Write what is still queued in writers the program did not close."""
    for writer in list(_live_writers):
        try:
            writer.close()
        except Exception as e:  # noqa: BLE001 - nothing to raise to at exit; say what was lost
            import sys
            print("tfevents: could not write events at exit: %s" % (e,), file=sys.stderr)
