"""EventFileWriter: stores serialized Events from a background thread, in a local event file or an object store.

The writer only queues and frames (``record.encode_records``); what goes in an Event is the
builders' business, and where the framed bytes go is its *sink*'s: ``file_sink.LocalFileSink``
appends to one ``events.out.tfevents.*`` file of a local logdir; ``object_sink.ObjectStoreSink``
stores new immutable objects in a run folder given as an fsspec URL (``s3://``, ``gs://``,
``memory://``, ...; ``storage_options`` as the reader takes them). Its contract:

* The file ``events.out.tfevents.<%010d secs>.<hostname>.<pid>.<n>[suffix]`` is created (with
  its first event, ``file_version="brain.Event:2"``) when the writer is; ``n`` is a per-process
  counter and the file is opened with ``O_EXCL``, so two writers never share a name, even in the
  same second. (In an object store: the first object, see ``object_sink``.)
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
* ``flush(timeout=None)`` returns once every event queued before it is written and flushed to the
  OS (in an object store: stored as an object); in an object store it waits at most ``timeout``
  seconds (None: ``object_sink.STORE_TIMEOUT``, 30 s), then raises TimeoutError naming the run and
  the steps not stored, which stay held and retried.
* An error the caller must hear of (a local disk's I/O error, an encoding error, an object store's
  permanent error) is raised by its next call on the writer, after that call's own event is queued
  (the call that hears of it loses nothing), or by ``flush()`` or ``close()``, whichever comes
  first: each looks after it has written, so an error the thread keeps while they wait is theirs.
  An object store that is slow or down is never raised into ``add_*``: its records wait in memory
  (capped, see ``object_sink``) and a ``StoreWarning`` is issued at the next call. The bytes that
  could not be written are kept and retried, so a disk that was full and gets space back loses
  nothing.
* ``close(timeout=None)`` writes everything and is idempotent; adding after ``close()`` raises
  ValueError (``flush()`` is then a no-op); ``reopen()`` starts a new file. In an object store it waits
  as ``flush()``; if it times out the writer is closed all the same and the records go on being
  retried in the background until the process ends (the exit hook waits for them, below).
* Writers still open at interpreter exit are flushed and closed, within ``TFEVENTS_EXIT_TIMEOUT``
  seconds in all (``EXIT_TIMEOUT``, 30 s, when unset): once a writer to a URL exists, SIGTERM (whose
  default handler would end the process without running ``atexit``) first does the same, then
  what it did before (see ``_flush_on_sigterm``). What could not be stored by then is named on
  stderr (run, number of events, steps) and the process ends.
* If the file is deleted while the writer runs, the next write starts a new file (as
  TensorFlow's EventsWriter does) instead of writing into an unlinked inode.
* In a forked child, inherited writers leave the parent's queued events to the parent and
  write what the child logs to a new file of the child's.
"""
from __future__ import annotations

import atexit
import collections
import math
import os
import sys
import threading
import time
import warnings
import weakref
from typing import Callable, Iterable, List, Optional, Tuple

from .. import record
from .file_sink import LocalFileSink, event_file_name

__all__ = ["EventFileWriter", "DeferredEvent", "event_file_name"]

_live_writers: "weakref.WeakSet[EventFileWriter]" = weakref.WeakSet()
_unfinished_sinks: set = set()        # object-store sinks of writers whose close() timed out: still uploading
_CALLER_WRITES_AT = 65536             # pending events beyond which add_* writes in the caller's thread
_MIN_INTERVAL = 0.1                   # seconds between two max_queue-triggered writes of a writer
MAX_DEFERRED_BYTES = 256 << 20        # inputs of deferred events pending beyond which the caller builds them
EXIT_TIMEOUT = 30.0                   # seconds, in all, to store what is held at exit or on SIGTERM ...
EXIT_TIMEOUT_VARIABLE = "TFEVENTS_EXIT_TIMEOUT"   # ... unless this environment variable says otherwise


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
    _unfinished_sinks.clear()            # the parent's uploads: the parent waits for them
    for writer in list(_live_writers):
        writer._forget_parent()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class EventFileWriter:
    """Writes serialized Events to a new event file in ``logdir`` (created if missing), or to new objects in
    the run folder ``logdir`` names as an fsspec URL.

    Args:
        logdir: directory of the run: a local path, or a URL (``s3://bucket/exp1``; ``file://`` is local).
        max_queue: events pending in memory before they are written and flushed to the OS
            (``max_queue_size``, TensorBoard's name for it, is accepted too).
        flush_secs: at most this many seconds between a queued event and its write.
        filename_suffix: appended to the file name.
        keep_open: hold the file descriptor between writes (False reopens the file in append
            mode for each batch: many writers, e.g. ``add_scalars`` sub-runs, hold no descriptors).
        storage_options: for a URL, the fsspec filesystem's options (credentials, endpoint, ...).
        object_bytes: for a URL, the bytes of records held before an object is stored whatever
            the time (else every ``flush_secs``, at ``flush()`` and at ``close()``).
        max_held_bytes: for a URL, the records held unstored (the store down) beyond which the oldest
            are dropped, counted and warned about (None: 64 MiB; see ``object_sink``).
    """

    def __init__(self, logdir: str, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str = "", keep_open: bool = True, *,
                 max_queue_size: Optional[int] = None, storage_options: Optional[dict] = None,
                 object_bytes: Optional[int] = None, max_held_bytes: Optional[int] = None,
                 max_deferred_bytes: int = MAX_DEFERRED_BYTES) -> None:
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
        self._object_bytes = object_bytes
        self._max_held_bytes = max_held_bytes
        self._fs = None                  # the fsspec filesystem of a URL logdir
        self._object_sink = None         # its module, imported for a logdir that may be a URL
        if ":" in self._logdir:          # a URL, or a path that looks like one: object_sink decides
            from . import object_sink  # lazy: object stores only (fsspec behind it); a local writer never loads it
            url = object_sink.logdir_url(self._logdir)
            if url is not None:
                local = object_sink.local_path_of(url)
                if local is not None:
                    self._logdir = local
                else:
                    self._object_sink = object_sink
                    self._fs, self._root = object_sink.open_filesystem(url, storage_options)
                    _flush_before_threads_stop()
                    _flush_on_sigterm()
        self._max_deferred_bytes = max_deferred_bytes
        self._io_lock = threading.RLock()
        self._open()

    # ---------------------------------------------------------------- lifecycle
    def _open(self) -> None:
        self._pending: "collections.deque[bytes]" = collections.deque()
        self._error: Optional[BaseException] = None   # what the caller must hear of: an error, or a Warning
        self._error_lock = threading.Lock()
        self._deferred_lock = threading.Lock()
        self._deferred_pending = 0        # DeferredEvents queued and not yet built ...
        self._deferred_bytes = 0          # ... and the bytes they hold
        self._write_requested = False
        self._wake_at = self._max_queue   # pending count at which add_* calls _request_write
        self._last_write = -math.inf
        self._closed = False
        self._next_write = time.monotonic() + self._flush_secs
        with self._io_lock:             # creates the file (the first object) with its file_version event
            if self._fs is None:
                self._sink = LocalFileSink(self._logdir, self._suffix, self._keep_open)
            else:
                self._sink = self._object_sink.ObjectStoreSink(
                    self._fs, self._root, self._logdir, self._suffix, self._flush_secs, self._object_bytes,
                    self._max_held_bytes, report=self._keep_error)
        self._worker: Optional[_Worker] = _get_worker()
        self._worker.register(self)
        _live_writers.add(self)

    def get_logdir(self) -> str:
        return self._logdir

    def get_filename(self) -> str:
        """Path of the file being written (for a URL logdir: the URL of the last object stored)."""
        return self._sink.path

    @property
    def storage(self) -> Optional[tuple]:
        """``(fsspec filesystem, run folder on it)`` for a URL logdir, None for a local folder."""
        return None if self._fs is None else (self._fs, self._root)

    @property
    def closed(self) -> bool:
        return self._closed

    def reopen(self) -> None:
        """Start writing a new event file in the same directory (after ``close()``; no-op if open)."""
        if self._closed:
            self._open()

    def flush(self, timeout: Optional[float] = None) -> None:
        """Write every queued event and hand it to the OS (store it as an object); returns when that is done.

        In an object store, waits at most ``timeout`` seconds (None: ``object_sink.STORE_TIMEOUT``), then raises
        TimeoutError naming the run and steps not stored (they stay held and retried). Raises an error the
        writer's thread kept (see the module docstring). A no-op after ``close()`` (which wrote everything), as
        in TF1 and torch.
        """
        if self._closed:
            return
        self._store_all(self._deadline(timeout))
        self._check()

    def close(self, timeout: Optional[float] = None) -> None:
        """Flush and close the file. Idempotent. Raises OSError if queued events could not be written (in an
        object store: TimeoutError after ``timeout`` seconds, as ``flush``; the writer is closed all the same and
        what it holds is retried until the process ends), or an error the writer's thread kept."""
        if self._closed:
            return
        deadline = self._deadline(timeout)
        self._closed = True
        if self._worker is not None:
            self._worker.unregister(self)
        try:
            self._store_all(deadline)
        finally:
            self._sink.close()
            self._pending.clear()
            _live_writers.discard(self)
            if self._fs is not None and self._sink.holding:   # still uploading: the exit hooks wait for it
                _unfinished_sinks.add(self._sink)
        error = self._take_error()
        if error is not None and not isinstance(error, Warning):
            raise error

    def _deadline(self, timeout: Optional[float]) -> float:
        if timeout is None:
            timeout = self._object_sink.STORE_TIMEOUT if self._fs is not None else math.inf
        return time.monotonic() + max(0.0, timeout)

    def _store_all(self, deadline: float) -> None:
        """Frame everything queued and hand it to the sink (under the I/O lock, waited for until ``deadline``),
        then wait until the sink has stored it (outside the lock: the writer's thread and callers go on)."""
        wait = deadline - time.monotonic()
        if not self._io_lock.acquire(timeout=-1 if wait == math.inf else max(0.0, wait)):
            raise TimeoutError("%s: the writer was still busy writing after the timeout" % (self._logdir,))
        try:
            self._write_pending(force=True)
        finally:
            self._io_lock.release()
        self._sink.sync(deadline)

    def __enter__(self) -> "EventFileWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return "EventFileWriter(%r%s)" % (self._sink.path or self._logdir, ", closed" if self._closed else "")

    # ---------------------------------------------------------------- adding
    def add_event(self, event) -> None:
        """Queue an Event proto (ours, TensorBoard's or TensorFlow's)."""
        self.add_serialized_event(event.SerializeToString())

    def add_serialized_event(self, payload: bytes) -> None:
        """Queue one serialized Event (the hot path: an append and a length check)."""
        if self._error is not None or self._closed:
            self._add_checked(payload)
            return
        pending = self._pending
        pending.append(payload)
        if len(pending) >= self._wake_at:
            self._request_write(len(pending))

    def add_serialized_events(self, payloads: Iterable[bytes]) -> None:
        """Queue several serialized Events, in order."""
        if self._closed:
            self._check()
        pending = self._pending
        pending.extend(payloads)
        if len(pending) >= self._wake_at:
            self._request_write(len(pending))
        if self._error is not None:
            self._check()

    def add_deferred_event(self, make: Callable[[], Optional[bytes]], nbytes: int = 0) -> None:
        """Queue an Event that ``make()`` builds when it is written (see the module docstring); the thread
        is asked to write soon, so that what ``make`` holds (``nbytes``) is freed soon."""
        if self._closed:
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
        if self._error is not None:
            self._check()

    def _add_checked(self, payload: bytes) -> None:
        """``add_serialized_event`` when there is something to tell the caller: a closed writer refuses
        ``payload``; otherwise it is queued first, then the error is raised (or the warning issued), so the
        call that hears of it loses nothing."""
        if self._closed:
            self._check()
        pending = self._pending
        pending.append(payload)
        if len(pending) >= self._wake_at:
            self._request_write(len(pending))
        self._check()

    def _check(self) -> None:
        """Tell the caller what it must hear about: a closed writer or an error kept by the writer's thread
        (raised), or a ``StoreWarning`` (issued)."""
        if self._closed:
            raise ValueError("cannot write to a closed event writer (%s); call reopen() first"
                             % (self._sink.path or self._logdir))
        error = self._take_error()
        if isinstance(error, Warning):
            warnings.warn(error, stacklevel=3)
        elif error is not None:
            raise error

    def _keep_error(self, error: Optional[BaseException]) -> None:
        """Keep ``error`` for the caller's next call (any thread): an error is kept over a warning and over a
        later error (the first is the cause); a warning over an earlier warning. None withdraws a warning."""
        with self._error_lock:
            if self._error is None or isinstance(self._error, Warning):
                self._error = error

    def _take_error(self) -> Optional[BaseException]:
        with self._error_lock:
            error, self._error = self._error, None
        return error

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
        """When the thread must look at this writer next: the flush_secs deadline or the
        sink's (an object store's upload or retry); for a requested write, ``_MIN_INTERVAL``
        after the previous write (at once if that is past); and once ``_MIN_INTERVAL`` after
        each write, so that requests within it need no wake-up. A loop adding events as fast
        as it can so costs one thread hand-off per interval, not one per max_queue events."""
        due = min(self._next_write, self._sink.due_at)
        follow_up = self._last_write + _MIN_INTERVAL
        if self._write_requested or now < follow_up:
            return min(due, follow_up)
        return due

    def _is_due(self, now: float) -> bool:
        return (now >= self._next_write or now >= self._sink.due_at
                or (self._write_requested and now >= self._last_write + _MIN_INTERVAL))

    def _give_up(self) -> None:
        """At the end of the process, once what could not be stored is reported: closed, no further attempt."""
        self._closed = True
        if self._worker is not None:
            self._worker.unregister(self)
        _live_writers.discard(self)
        self._sink.stop()

    def _forget_parent(self) -> None:
        """In a forked child: see ``_after_fork_in_child``."""
        self._io_lock = threading.RLock()     # the parent's may have been held at the fork
        self._pending.clear()
        self._error = None
        self._error_lock = threading.Lock()
        self._deferred_lock = threading.Lock()
        self._deferred_pending = self._deferred_bytes = 0
        self._write_requested, self._wake_at = False, self._max_queue
        self._worker = None
        self._sink.forget_parent()

    # ---------------------------------------------------------------- writing (under _io_lock)
    def _background_write(self) -> None:
        """Called by the worker thread: write, and keep any error for the caller's next call."""
        with self._io_lock:
            if self._closed:
                return
            try:
                self._write_pending(deadline=time.monotonic() >= self._next_write)
            except Exception as e:  # noqa: BLE001 - surfaced to the caller
                self._keep_error(e)

    def _write_pending(self, force: bool = False, deadline: bool = False) -> None:
        """Frame the queued events and hand them to the sink: ``force`` (flush, close) to be stored
        when this returns; ``deadline``: flush_secs passed without a write (an object store stores what
        it holds then)."""
        self._write_requested = False
        self._wake_at = self._max_queue
        self._next_write = time.monotonic() + self._flush_secs
        pending = self._pending
        n = len(pending)
        sink = self._sink
        if n == 0 and not sink.holding:
            return
        self._last_write = time.monotonic()
        popleft = pending.popleft
        payloads = [popleft() for _ in range(n)]
        error = None
        if self._deferred_pending:
            payloads, error = self._build_deferred(payloads)
        sink.write(record.encode_records(payloads) if payloads else b"", force, deadline)
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


@atexit.register
def _close_all_at_exit() -> None:
    """Write what is still queued in writers the program did not close, and wait for the uploads of those whose
    ``close()`` timed out, until the exit deadline (``_exit_deadline``); say on stderr what could not be stored."""
    deadline = _exit_deadline()
    for writer in list(_live_writers):
        try:
            writer.close(timeout=deadline - time.monotonic())
        except Exception as e:  # noqa: BLE001 - nothing to raise to at exit; say what was lost
            _report_unstored(writer, "exit", e)
        finally:
            _live_writers.discard(writer)
    _wait_for_unfinished_sinks("exit", deadline, give_up=True)


_sigterm_hooked = False
_exit_hooked = False
_exit_deadline_at: Optional[float] = None


def _exit_timeout() -> float:
    """``TFEVENTS_EXIT_TIMEOUT`` (seconds; ``EXIT_TIMEOUT`` when unset or not a number)."""
    value = os.environ.get(EXIT_TIMEOUT_VARIABLE, "")
    try:
        return max(0.0, float(value)) if value.strip() else EXIT_TIMEOUT
    except ValueError:
        return EXIT_TIMEOUT


def _exit_deadline() -> float:
    """The one deadline of the exit hooks: ``_exit_timeout()`` seconds after the first of them started."""
    global _exit_deadline_at
    if _exit_deadline_at is None:
        _exit_deadline_at = time.monotonic() + _exit_timeout()
    return _exit_deadline_at


def _flush_before_threads_stop() -> None:
    """Once a writer to a URL exists: store what every writer holds when the interpreter starts to exit, before
    ``concurrent.futures`` stops taking work (``threading._register_atexit`` hooks run in reverse order of
    registration, before ``atexit``'s; the filesystems' clients, e.g. aiobotocore, resolve hosts in an
    executor that refuses work once its own hook has run), until the exit deadline. A writer that could not
    store everything by then is reported and given up (its upload thread stopped), so the ``atexit`` hook, which
    then closes the others, neither waits for it again nor reports it twice."""
    global _exit_hooked
    register = getattr(threading, "_register_atexit", None)
    if _exit_hooked or register is None:
        return
    try:
        register(_store_every_writer, "exit", _exit_deadline, True)
    except RuntimeError:   # the interpreter is already exiting
        return
    _exit_hooked = True


def _flush_on_sigterm() -> None:
    """Once a writer to a URL exists: on SIGTERM, store what every writer holds first (an object store holds
    records in memory between uploads, and SIGTERM's default action ends the process without ``atexit``),
    for at most ``_exit_timeout()`` seconds, then do what SIGTERM did before: end the process by SIGTERM (same
    exit status), or call the handler that was installed. Only from the main thread (Python's signal rule),
    and not when SIGTERM is ignored; a handler installed later replaces this one."""
    global _sigterm_hooked
    if _sigterm_hooked or threading.current_thread() is not threading.main_thread():
        return
    import signal   # (not at module import: keeps ``import tfevents.summaries`` light)

    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_IGN or previous is None:   # ignored, or a handler not installed from Python
        return

    def on_sigterm(signum, frame):
        deadline = time.monotonic() + _exit_timeout()
        _store_every_writer("SIGTERM", lambda: deadline, give_up=not callable(previous))
        if callable(previous):
            previous(signum, frame)
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)
    _sigterm_hooked = True


def _store_every_writer(why: str, deadline: Callable[[], float], give_up: bool) -> None:
    """Flush every open writer (and wait for the uploads of those closed by a ``close()`` that timed out) until
    ``deadline()``; say on stderr what could not be stored, and, if ``give_up`` (the process ends), close
    those writers without trying further."""
    until = deadline()
    for writer in list(_live_writers):
        try:
            writer.flush(timeout=until - time.monotonic())
        except Exception as e:  # noqa: BLE001 - nothing to raise to in a signal handler; say what was lost
            _report_unstored(writer, why, e)
            if give_up:
                writer._give_up()
    _wait_for_unfinished_sinks(why, until, give_up)


def _wait_for_unfinished_sinks(why: str, deadline: float, give_up: bool) -> None:
    """Wait until ``deadline`` for the uploads of writers whose ``close()`` timed out; report what is left."""
    for sink in list(_unfinished_sinks):
        try:
            sink.sync(deadline)
            _unfinished_sinks.discard(sink)
        except Exception as e:  # noqa: BLE001 - nothing to raise to; say what was lost
            _report_sink(sink, why, e)
            if give_up:
                sink.stop()
                _unfinished_sinks.discard(sink)


def _report_unstored(writer: "EventFileWriter", why: str, error: BaseException) -> None:
    """One line on stderr: the run and what of it was not stored (events and steps), and why."""
    if writer._fs is not None:
        _report_sink(writer._sink, why, error, queued=len(writer._pending))
    else:
        print("tfevents: could not write events at %s: %s" % (why, error), file=sys.stderr)


def _report_sink(sink, why: str, error: BaseException, queued: int = 0) -> None:
    """One line on stderr: an object store's run, the events and steps it did not store, and why."""
    unstored = sink.unstored()
    if not unstored and not queued:
        print("tfevents: could not write events at %s: %s" % (why, error), file=sys.stderr)
        return
    print("tfevents: at %s, not stored in %s: %s%s (%s)"
          % (why, sink.url, unstored or "nothing held", "; and %d events still queued" % queued if queued else "",
             sink.failure_text()), file=sys.stderr)
