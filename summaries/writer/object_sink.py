"""Where an EventFileWriter's framed records go when its logdir is an fsspec URL: new immutable objects.

Object stores (S3, GCS, Azure, ...) cannot append. TensorFlow's writer and tensorboardX's re-upload the
whole file at every flush (quadratic in the run's length). Here each upload is a NEW object in the run's
folder holding only the records not stored yet, named

    events.out.tfevents.<%010d secs>.<hostname>.<pid>.<n>.<%08d seq>[suffix]

(the first five parts as a local file's, fixed for the writer; ``seq`` counts its objects from 0), so
that name order is write order. Every object starts with its own ``file_version`` event and is a valid
event file on its own. TensorBoard reads a run's event files in name order (the Python loader's
``DirectoryWatcher`` advances through the sorted names; the Rust data server keeps them in a
``BTreeMap`` by name) and takes a file_version equal to the first one's without a word, and the Rust
server ignores file_version events, so the objects read as one run, in order. Object 0, holding only
the file_version event, is stored when the writer is created, so a wrong bucket or missing credentials
are an error there and not minutes later.

Uploads happen on a thread of the sink's own (``tfevents-upload``, started when there is something to
store, ended when nothing is held), never on the writer's shared thread nor under the writer's lock: a
store that is slow or down never blocks ``add_*``, the other writers, or the framing of new records.

When an object is stored:

* at ``flush()`` and ``close()`` (``write(..., force=True)`` then ``sync(deadline)``): at once; they
  wait until it is stored or their deadline passes (``timeout``, ``STORE_TIMEOUT`` by default), then
  raise TimeoutError naming the run and the steps not stored, which stay held and retried;
* otherwise when the records held reach ``object_bytes`` or the oldest of them has waited ``max_secs``
  (the writer's ``flush_secs``). A long run thus makes at most
  ``1 + bytes / object_bytes + duration / max_secs + explicit flushes`` objects.

Failures. One attempt is bounded: ``ATTEMPT_TIMEOUT + bytes / MIN_UPLOAD_RATE`` seconds, enforced around the
call for an async filesystem (s3fs, gcsfs, adlfs: fsspec cancels the request), and for ``s3://`` botocore's
connect and read timeouts are ``CONNECT_TIMEOUT`` and ``READ_TIMEOUT`` unless ``storage_options`` set them
(``config_kwargs``). A failed attempt is retried after a backoff (``RETRY_FIRST_DELAY`` doubling up to
``RETRY_MAX_DELAY``; at most ``WAITED_RETRY_DELAY`` while a flush or close waits); the records stay held, with
those added meanwhile, and the caller is warned once per outage (``StoreWarning``, at its next call: a
transient failure is never raised into ``add_*``). A *permanent* error (``is_permanent``: no such bucket,
access denied, bad or missing credentials, an invalid request) is not waited on: it is raised at once by
the constructor, ``flush()`` and ``close()``, and by the next ``add_*`` call (which keeps its value).

Memory cap. While the store is down the records held grow; past ``max_held_bytes`` (``DEFAULT_MAX_HELD_BYTES``)
the oldest held batches are dropped, counted (``dropped_events``, ``dropped_steps()``) and warned about,
so the records held stay at most ``max_held_bytes`` plus the newest batch (one upload in flight holds a
copy of what it sends besides). Why drop the oldest rather than block the caller: blocking would make an
outage stall training (the one thing the writer must not do), and once the bound of the block passed it
would have to drop anyway; refusing the newest would lose the value of the very call. Dropped records
are reported with their steps by ``flush()``/``close()`` failures and at exit.

A retry reuses the name of the object that failed (with the records added since), so an upload that
failed after the store had kept it is replaced, never duplicated.

fsspec (the ``remote`` extra) and the filesystem's package are imported only when a URL is given.
"""
from __future__ import annotations

import collections
import errno
import math
import re
import threading
import time
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from .. import record
from .event_bytes import event_step, file_version_event
from .file_sink import event_file_name

__all__ = ["ObjectStoreSink", "StoreWarning", "DEFAULT_OBJECT_BYTES", "DEFAULT_MAX_HELD_BYTES", "STORE_TIMEOUT",
           "describe_steps", "framed_steps", "is_permanent", "join_url", "local_path_of", "logdir_url",
           "open_filesystem", "url_with_lower_case_scheme"]

DEFAULT_OBJECT_BYTES = 8 << 20     # records held before an object is stored, whatever the time
DEFAULT_MAX_HELD_BYTES = 64 << 20  # records held unstored (the store down) beyond which the oldest are dropped
STORE_TIMEOUT = 30.0               # default seconds the constructor, flush() and close() wait for the store
ATTEMPT_TIMEOUT = 30.0             # one upload attempt may take this many seconds ...
MIN_UPLOAD_RATE = 1 << 20          # ... plus one per this many bytes of the object
CONNECT_TIMEOUT = 10.0             # s3://: botocore's connect timeout unless storage_options set it (its own: 60)
READ_TIMEOUT = 30.0                # s3://: botocore's read timeout unless storage_options set it (its own: 60)
RETRY_FIRST_DELAY = 0.25           # seconds before the second attempt; doubles for each further one ...
RETRY_MAX_DELAY = 30.0             # ... up to this
WAITED_RETRY_DELAY = 1.0           # longest delay between attempts while flush() or close() waits

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]+):(/*)")
# schemes of fsspec's filesystems that a path written without "//" was surely meant to be
_KNOWN_SCHEMES = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "hdfs", "webhdfs", "memory", "http",
                  "https", "ftp", "sftp", "ssh", "oci", "oss", "r2", "lakefs", "hf", "dbfs", "wandb"}
_LOCAL_SCHEMES = {"file", "local"}
# errors of the stores' clients that waiting does not cure (matched by class name: botocore is not imported here)
_PERMANENT_ERROR_NAMES = {"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError",
                          "UnknownCredentialError", "ParamValidationError", "NoRegionError", "ValidationError",
                          "ProfileNotFound", "InvalidConfigError", "UnknownSignatureVersionError"}
_CREDENTIAL_ERROR_NAMES = {"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError",
                           "UnknownCredentialError", "ProfileNotFound"}
# 4xx answers that are worth retrying (S3's codes; 408 and 429 by status)
_TRANSIENT_CODES = {"RequestTimeout", "SlowDown", "Throttling", "ThrottlingException", "TooManyRequestsException",
                    "RequestLimitExceeded", "PriorRequestNotComplete", "OperationAborted",
                    "XAmzContentSHA256Mismatch"}


class StoreWarning(RuntimeWarning):
    """The store failed and the records wait (and are retried), or the oldest were dropped at the memory cap."""


def is_permanent(error: BaseException) -> bool:
    """Whether waiting will not make ``error`` (or its cause) go away: no such bucket or key prefix, access
    denied, missing or bad credentials, an invalid request (an HTTP 4xx answer other than a timeout or
    throttling). Connection errors, timeouts and 5xx answers are transient."""
    seen = 0
    while error is not None and seen < 5:
        if isinstance(error, (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)):
            return True
        if _PERMANENT_ERROR_NAMES.intersection(t.__name__ for t in type(error).__mro__):
            return True
        response = getattr(error, "response", None)
        if isinstance(response, dict):
            status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            code = response.get("Error", {}).get("Code")
            if isinstance(status, int) and 400 <= status < 500:
                return status not in (408, 429) and code not in _TRANSIENT_CODES
        error, seen = error.__cause__, seen + 1
    return False


def _is_credential_error(error: BaseException) -> bool:
    while error is not None:
        if _CREDENTIAL_ERROR_NAMES.intersection(t.__name__ for t in type(error).__mro__):
            return True
        error = error.__cause__
    return False


def logdir_url(logdir: str) -> Optional[str]:
    """The URL a logdir names, or None for a local path (``file://`` URLs are local paths).

    ``<scheme>://...`` is a URL. ``<scheme>:/x`` (one slash: ``pathlib.Path`` and ``os.path.normpath``
    turn ``s3://b/x`` into ``s3:/b/x``) and ``<known scheme>:x`` are ValueErrors, never a local folder.
    A one-letter scheme is a Windows drive.
    """
    match = _SCHEME.match(logdir)
    if match is None:
        return None
    scheme, slashes = match.group(1), len(match.group(2))
    if slashes >= 2 or "::" in logdir:
        return logdir
    if slashes == 1 or scheme.lower() in _KNOWN_SCHEMES:
        rest = logdir[match.end():]
        raise ValueError(
            "logdir %r looks like a URL but is not one (did you mean %s://%s? pathlib.Path and os.path.normpath "
            "collapse '//'; pass the URL as a str). For a local folder of that name, write ./%s"
            % (logdir, scheme, rest, logdir))
    return None


def local_path_of(url: str) -> Optional[str]:
    """The path of a ``file://`` (or ``local://``) URL, else None."""
    scheme, _, rest = url.partition("://")
    return rest if scheme.lower() in _LOCAL_SCHEMES else None


def url_with_lower_case_scheme(url: str) -> str:
    """``url`` with its protocols in lower case (``S3://b/x`` -> ``s3://b/x``; fsspec knows only the lower case)."""
    parts = url.split("::")
    for i, part in enumerate(parts):
        scheme, sep, rest = part.partition("://")
        if sep:
            parts[i] = scheme.lower() + sep + rest
        elif i < len(parts) - 1:
            parts[i] = part.lower()
    return "::".join(parts)


def open_filesystem(url: str, storage_options: Optional[dict] = None) -> Tuple[object, str]:
    """``(fsspec filesystem, path on it)`` of ``url``; ImportError naming the package when fsspec or the
    URL's filesystem is not installed, ValueError for a protocol fsspec does not know. For ``s3://``, botocore's
    connect and read timeouts default to ``CONNECT_TIMEOUT`` and ``READ_TIMEOUT`` (``storage_options``'
    ``config_kwargs`` win)."""
    try:
        import fsspec
        from fsspec.registry import known_implementations
    except ImportError:
        raise ImportError("logging to %s needs fsspec: pip install 'tfevents[remote]' (and the package of the "
                          "URL's filesystem, e.g. s3fs for s3://, gcsfs for gs://)" % url) from None
    url = url_with_lower_case_scheme(url)
    protocol = url.split("://", 1)[0].split("::")[-1]
    try:
        fsspec.get_filesystem_class(protocol)
    except ImportError as err:
        known = known_implementations.get(protocol, {})
        package = known.get("class", "").split(".", 1)[0] or "the package of the %s:// filesystem" % protocol
        raise ImportError("logging to %s needs the package %s, which is not installed: pip install %s (%s)"
                          % (url, package, package, known.get("err") or err)) from None
    except ValueError:
        raise ValueError("logdir %s: fsspec knows no filesystem for the protocol %r" % (url, protocol)) from None
    options = dict(storage_options or {})
    if protocol in ("s3", "s3a"):
        config = dict(options.get("config_kwargs") or {})
        config.setdefault("connect_timeout", CONNECT_TIMEOUT)
        config.setdefault("read_timeout", READ_TIMEOUT)
        options["config_kwargs"] = config
    return fsspec.core.url_to_fs(url, **options)


def describe_steps(steps: Iterable[int], most: int = 8) -> str:
    """``steps 0-99, 200, 300-310`` (runs of consecutive steps; the first ``most`` runs, then how many more)."""
    ordered = sorted(set(steps))
    if not ordered:
        return "no steps"
    runs: List[List[int]] = []
    for step in ordered:
        if runs and step == runs[-1][1] + 1:
            runs[-1][1] = step
        else:
            runs.append([step, step])
    text = ", ".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in runs[:most])
    if len(runs) > most:
        text += " and %d more runs of steps up to %d" % (len(runs) - most, ordered[-1])
    return "step " + text if len(ordered) == 1 else "steps " + text


def framed_steps(batch: bytes) -> List[int]:
    """The step of each Event in ``batch``, framed records as ``record.encode_records`` makes them."""
    steps, offset, size = [], 0, len(batch)
    while offset + 12 <= size:
        length = int.from_bytes(batch[offset:offset + 8], "little")
        start = offset + 12
        steps.append(event_step(batch[start:start + length]))
        offset = start + length + 4
    return steps


class ObjectStoreSink:
    """Stores framed records as new objects under ``root`` on the fsspec filesystem ``fs``, from a thread of
    its own (see the module docstring for when, the retries, the cap).

    ``url`` names the run folder in messages; ``max_secs``: longest a record waits before it is stored (the
    writer's ``flush_secs``); ``object_bytes``: records held before an object is stored at once;
    ``max_held_bytes``: the memory cap; ``timeout``: how long the constructor waits for object 0;
    ``report(problem)``: called (from any thread) with what the writer's caller must hear of at its next call:
    a ``StoreWarning`` or a permanent error; ``report(None)`` withdraws a warning of an outage that ended
    without dropping anything.
    """

    due_at = math.inf      # the sink's thread stores on time itself: the writer's thread need not call it

    def __init__(self, fs, root: str, url: str, suffix: str = "", max_secs: float = 120.0,
                 object_bytes: Optional[int] = None, max_held_bytes: Optional[int] = None,
                 timeout: float = STORE_TIMEOUT,
                 report: Optional[Callable[[BaseException], None]] = None) -> None:
        object_bytes = DEFAULT_OBJECT_BYTES if object_bytes is None else object_bytes
        max_held_bytes = DEFAULT_MAX_HELD_BYTES if max_held_bytes is None else max_held_bytes
        if int(object_bytes) < 1:
            raise ValueError("object_bytes must be >= 1, got %r" % (object_bytes,))
        if int(max_held_bytes) < 1:
            raise ValueError("max_held_bytes must be >= 1, got %r" % (max_held_bytes,))
        self._fs = fs
        self._root = root.rstrip("/")
        self.url = url_with_lower_case_scheme(url).rstrip("/")   # the run's folder, in messages
        self._suffix = suffix
        self._max_secs = float(max_secs)
        self._object_bytes = int(object_bytes)
        self._max_held_bytes = int(max_held_bytes)
        self._report = report or (lambda problem: None)
        self._base = event_file_name()
        self.path = ""                # URL of the last object stored
        self.objects = 0              # objects stored by this sink
        self._start()
        self._need_object = True      # object 0: the file_version event alone
        self.write(b"", force=True)
        try:
            self.sync(time.monotonic() + timeout)
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        """The state of a new sink (and of one in a forked child)."""
        self._cond = threading.Condition(threading.Lock())   # guards everything below
        self._held: "collections.deque[bytes]" = collections.deque()   # framed batches not stored, oldest first
        self.held_bytes = 0
        self._first = 0               # number of held[0] among the batches given to this sink (= _end if none)
        self._end = 0                 # number of the next batch
        self._need_object = False     # an object must be stored even with nothing held (object 0)
        self._since = math.inf        # monotonic time the oldest batch held arrived
        self._wanted = False          # store as soon as possible (flush, close, full, flush_secs)
        self._waiters = 0             # flush()/close() calls waiting in sync()
        self._failures = 0            # failed attempts in a row
        self._retry_at = -math.inf    # no attempt before this
        self._last_error: Optional[BaseException] = None
        self._permanent: Optional[BaseException] = None
        self._dropped: Dict[int, List[int]] = {}   # batch number -> its steps, dropped at the cap, not stored
        self.dropped_events = 0       # events dropped at the cap and not stored
        self._warned_outage = self._warned_drop = False
        self._seq = 0
        self._thread: Optional[threading.Thread] = None
        self._stopped = False

    @property
    def holding(self) -> bool:
        return bool(self._held) or self._need_object

    # ------------------------------------------------------------------ the writer's side
    def write(self, data: bytes, force: bool = False, due: bool = False) -> None:
        """Hold ``data`` (a batch of framed records; never blocks on the store); ask for an upload now if
        ``force``d (flush, close: a failing store is tried again at once), ``due`` (flush_secs passed) or full."""
        with self._cond:
            now = time.monotonic()
            if data:
                if not self._held:
                    self._since = now
                self._held.append(data)
                self._end += 1
                self.held_bytes += len(data)
                self._drop_oldest_beyond_cap()
            if not self.holding:
                return
            if force:
                self._retry_at = min(self._retry_at, now)
            if force or due or self.held_bytes >= self._object_bytes:
                self._wanted = True
            if self._thread is None and not self._stopped:
                self._thread = threading.Thread(target=self._upload_loop, name="tfevents-upload", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def sync(self, deadline: float) -> None:
        """Wait until every batch written before the call is stored (or dropped at the cap); by ``deadline``
        (``time.monotonic()``), else TimeoutError naming what is not stored (it stays held and retried). A
        permanent error is raised at once."""
        with self._cond:
            mark = self._end
            self._waiters += 1
            try:
                while self._first < mark or self._need_object:
                    if self._permanent is not None:
                        raise self._store_error(self._permanent)
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError(errno.ETIMEDOUT, "%s: could not store events in time: %s are held and "
                                           "retried (%s)" % (self.url, self._describe_unstored(),
                                                             self.failure_text()))
                    self._cond.wait(remaining)
            finally:
                self._waiters -= 1

    def unstored(self) -> str:
        """What is not stored: held events and their steps, and those dropped at the cap ("" when nothing)."""
        with self._cond:
            if not self._held and not self._dropped:
                return ""
            return self._describe_unstored()

    def dropped_steps(self) -> List[int]:
        """The steps of the events dropped at the cap and not stored (one per event), in order."""
        with self._cond:
            return [step for number in sorted(self._dropped) for step in self._dropped[number]]

    def close(self) -> None:
        """Nothing is open between uploads: the thread ends when nothing is held. (``write(b"", True)`` and
        ``sync`` before store what is held; if they time out, the thread goes on trying until ``stop()``
        or the process ends.)"""

    def stop(self) -> None:
        """Give up: no further attempt (the thread ends after the one in flight)."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def forget_parent(self) -> None:
        """In a forked child: drop the parent's records; the child's objects get a name of its own."""
        self._start()
        self._base = event_file_name()

    # ------------------------------------------------------------------ the upload thread
    def _upload_loop(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._stopped or not self.holding:
                        self._thread = None
                        return
                    now = time.monotonic()
                    at = self._next_attempt_at()
                    if at <= now:
                        break
                    self._cond.wait(at - now)
                start, end = self._first, self._end
                name = self._object_name()
                body = b"".join(self._held)
                self._wanted = False
            data = record.encode_record(file_version_event(time.time())) + body
            del body
            error = None
            try:
                self._put(self._root + "/" + name, data)
            except Exception as err:  # noqa: BLE001 - any failure of the store: keep the records, retry
                error = err
            del data
            with self._cond:
                if error is None:
                    self._stored(start, end, name)
                else:
                    self._failed(error)
                self._cond.notify_all()

    def _next_attempt_at(self) -> float:
        if self._failures:
            return self._retry_at
        if self._wanted or self._need_object:
            return -math.inf
        return self._since + self._max_secs

    def _put(self, path: str, data: bytes) -> None:
        """One attempt, bounded by ``ATTEMPT_TIMEOUT + len(data) / MIN_UPLOAD_RATE`` seconds for an async
        filesystem (fsspec's ``sync`` cancels the request then)."""
        if getattr(self._fs, "async_impl", False):
            self._fs.pipe_file(path, data, timeout=ATTEMPT_TIMEOUT + len(data) / MIN_UPLOAD_RATE)
        else:
            self._fs.pipe_file(path, data)

    def _stored(self, start: int, end: int, name: str) -> None:
        """Batches ``start`` to ``end`` (those still held, and those dropped meanwhile) are stored as ``name``."""
        while self._held and self._first < end:
            self.held_bytes -= len(self._held.popleft())
            self._first += 1
        if not self._held:
            self._first = self._end
        self._since = time.monotonic() if self._held else math.inf
        for number in [n for n in self._dropped if start <= n < end]:   # in the body after all
            self.dropped_events -= len(self._dropped.pop(number))
        self._need_object = False
        if self._warned_outage and not self._warned_drop:   # the outage is over and cost nothing: withdrawn
            self._report(None)
        self._failures, self._retry_at = 0, -math.inf
        self._last_error = self._permanent = None
        self._warned_outage = self._warned_drop = False
        self._seq += 1
        self.objects += 1
        self.path = self.url + "/" + name

    def _failed(self, error: BaseException) -> None:
        """Count a failed attempt and schedule the next: ``RETRY_FIRST_DELAY * 2 ** (failures - 1)``, at most
        ``RETRY_MAX_DELAY`` (``WAITED_RETRY_DELAY`` while a flush or close waits)."""
        self._failures += 1
        self._last_error = error
        delay = min(RETRY_MAX_DELAY, RETRY_FIRST_DELAY * 2 ** min(self._failures - 1, 16))
        if self._waiters:
            delay = min(delay, WAITED_RETRY_DELAY)
        self._retry_at = time.monotonic() + delay
        if is_permanent(error):
            if self._permanent is None:
                self._report(self._store_error(error))
            self._permanent = error
        elif not self._warned_outage:
            self._warned_outage = True
            self._report(StoreWarning("%s: could not store events (%s); they are held (%d bytes now, at most %d) "
                                      "and retried with backoff" % (self.url, self.failure_text(),
                                                                     self.held_bytes, self._max_held_bytes)))

    def _drop_oldest_beyond_cap(self) -> None:
        """The memory cap: drop the oldest held batches (never the newest) while more than ``max_held_bytes``
        are held; their steps are kept for the report."""
        dropped = 0
        while self.held_bytes > self._max_held_bytes and len(self._held) > 1:
            batch = self._held.popleft()
            self.held_bytes -= len(batch)
            steps = self._dropped[self._first] = framed_steps(batch)
            self._first += 1
            self.dropped_events += len(steps)
            dropped += len(steps)
        if dropped and not self._warned_drop:
            self._warned_drop = True
            self._report(StoreWarning("%s: the store has failed since more than %d bytes of events are held: dropped "
                                      "the oldest (%d events so far; dropped_steps() names them), kept the newest "
                                      "(%s)" % (self.url, self._max_held_bytes, self.dropped_events,
                                                self.failure_text())))

    # ------------------------------------------------------------------ messages
    def _object_name(self) -> str:
        return "%s.%08d%s" % (self._base, self._seq, self._suffix)

    def failure_text(self) -> str:
        """How the attempts went: how many failed and the last error."""
        error = self._last_error
        if error is None:
            return "no attempt has failed; the upload in flight has not answered"
        return "%d attempt%s failed, the last with %s: %s" % (self._failures, "" if self._failures == 1 else "s",
                                                             type(error).__name__, error)

    def _describe_unstored(self) -> str:
        """(under the lock) ``N events (steps ...)`` held, and those dropped at the cap."""
        held = [step for batch in self._held for step in framed_steps(batch)]
        text = "%d events (%s)" % (len(held), describe_steps(held))
        if self._need_object and not held:
            text = "the run's first object (its file_version event)"
        if self._dropped:
            dropped = [step for steps in self._dropped.values() for step in steps]
            text += "; %d events (%s) were dropped at the memory cap of %d bytes" % (
                len(dropped), describe_steps(dropped), self._max_held_bytes)
        return text

    def _store_error(self, error: BaseException) -> OSError:
        """A permanent ``error`` as the OSError the caller gets: FileNotFoundError / PermissionError when it is
        one (missing credentials are a PermissionError), else OSError; the run's URL and object name first."""
        if isinstance(error, (FileNotFoundError, PermissionError)):
            kind = type(error)
        elif _is_credential_error(error):
            kind = PermissionError
        else:
            kind = OSError
        message = ("could not store %d bytes of events as %s/%s after %d attempt%s (a permanent error: not "
                   "waited on): %s: %s"
                   % (self.held_bytes, self.url, self._object_name(), self._failures,
                      "" if self._failures == 1 else "s", type(error).__name__, error))
        result = kind(getattr(error, "errno", None), message)
        result.__cause__ = error
        return result


def join_url(url: str, *parts: str) -> str:
    """``url`` with ``parts`` appended by "/" (``os.path.join`` would do the same on POSIX only)."""
    return "/".join([url.rstrip("/")] + [p.strip("/") for p in parts])

