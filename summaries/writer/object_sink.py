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

When an object is stored (see ``ObjectStoreSink.write``):

* ``flush()`` and ``close()`` (``force``): at once, retried ``RETRY_ATTEMPTS`` times with backoff
  (``RETRY_FIRST_DELAY`` doubling); still failing, OSError, the records kept for the next try.
* otherwise, when the records held reach ``object_bytes`` or the oldest of them has waited
  ``max_secs`` (the writer's ``flush_secs``). A long run thus makes at most
  ``1 + bytes / object_bytes + duration / max_secs + explicit flushes`` objects. A failed upload is
  retried by the writer thread after a backoff (doubling up to ``RETRY_MAX_DELAY``), the records kept
  (with those added meanwhile);
  after ``RAISE_AFTER`` failures in a row the caller hears of it on its next call.

A retry reuses the name of the object that failed (with the records added since), so an upload that
failed after the store had kept it is replaced, never duplicated.

fsspec (the ``remote`` extra) and the filesystem's package are imported only when a URL is given.
"""
from __future__ import annotations

import math
import re
import time
from typing import Optional, Tuple

from .. import record
from .event_bytes import file_version_event
from .file_sink import event_file_name

__all__ = ["ObjectStoreSink", "DEFAULT_OBJECT_BYTES", "join_url", "local_path_of", "logdir_url", "open_filesystem"]

DEFAULT_OBJECT_BYTES = 8 << 20   # records held before an object is stored, whatever the time
RETRY_ATTEMPTS = 5               # attempts of a forced upload before it raises
RETRY_FIRST_DELAY = 0.25         # seconds before the second attempt; doubles for each further one
RETRY_MAX_DELAY = 60.0           # longest wait between two background attempts
RAISE_AFTER = 5                  # background failures in a row before the caller hears of it

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]+):(/*)")
# schemes of fsspec's filesystems that a path written without "//" was surely meant to be
_KNOWN_SCHEMES = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "hdfs", "webhdfs", "memory", "http",
                  "https", "ftp", "sftp", "ssh", "oci", "oss", "r2", "lakefs", "hf", "dbfs", "wandb"}
_LOCAL_SCHEMES = {"file", "local"}


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


def open_filesystem(url: str, storage_options: Optional[dict] = None) -> Tuple[object, str]:
    """``(fsspec filesystem, path on it)`` of ``url``; ImportError naming the package when fsspec or the
    URL's filesystem is not installed, ValueError for a protocol fsspec does not know."""
    try:
        import fsspec
        from fsspec.registry import known_implementations
    except ImportError:
        raise ImportError("logging to %s needs fsspec: pip install 'tfevents[remote]' (and the package of the "
                          "URL's filesystem, e.g. s3fs for s3://, gcsfs for gs://)" % url) from None
    protocol = url.split("://", 1)[0].split("::")[-1].lower()
    try:
        fsspec.get_filesystem_class(protocol)
    except ImportError as err:
        known = known_implementations.get(protocol, {})
        package = known.get("class", "").split(".", 1)[0] or "the package of the %s:// filesystem" % protocol
        raise ImportError("logging to %s needs the package %s, which is not installed: pip install %s (%s)"
                          % (url, package, package, known.get("err") or err)) from None
    except ValueError:
        raise ValueError("logdir %s: fsspec knows no filesystem for the protocol %r" % (url, protocol)) from None
    return fsspec.core.url_to_fs(url, **(storage_options or {}))


class ObjectStoreSink:
    """Stores framed records as new objects under ``root`` on the fsspec filesystem ``fs``.

    ``url`` names the run folder in messages; ``max_secs``: longest a record waits before it is stored
    (the writer's ``flush_secs``); ``object_bytes``: records held before an object is stored at once.
    """

    def __init__(self, fs, root: str, url: str, suffix: str = "", max_secs: float = 120.0,
                 object_bytes: Optional[int] = None) -> None:
        object_bytes = DEFAULT_OBJECT_BYTES if object_bytes is None else object_bytes
        if int(object_bytes) < 1:
            raise ValueError("object_bytes must be >= 1, got %r" % (object_bytes,))
        self._fs = fs
        self._root = root.rstrip("/")
        self._url = url.rstrip("/")
        self._suffix = suffix
        self._max_secs = float(max_secs)
        self._object_bytes = int(object_bytes)
        self._chunks: list = []
        self._size = 0
        self._since = math.inf       # monotonic time the oldest record held arrived
        self._failures = 0           # failed uploads in a row
        self._retry_at = -math.inf   # no background attempt before this
        self._base = event_file_name()
        self._seq = 0
        self.path = ""                # URL of the last object stored
        self.due_at = math.inf
        self.objects = 0              # objects stored by this sink
        self._upload_retrying()       # object 0: the file_version event alone

    @property
    def holding(self) -> bool:
        return bool(self._chunks)

    def write(self, data: bytes, force: bool = False, due: bool = False) -> None:
        """Hold ``data``; store what is held as a new object if ``force``d (retrying), or in one attempt if
        ``due`` (the writer's flush_secs passed), full, or old enough (see the module)."""
        now = time.monotonic()
        if data:
            if not self._chunks:
                self._since = now
            self._chunks.append(data)
            self._size += len(data)
        if not self._chunks:
            return
        if force:
            self._upload_retrying()
        elif due or self._failures or self._size >= self._object_bytes or now >= self._since + self._max_secs:
            if now >= self._retry_at:
                self._upload_in_background(now)
        else:
            self.due_at = max(self._since + self._max_secs, self._retry_at)

    def close(self) -> None:
        """Nothing is open between uploads; ``write(b"", True)`` before stores what is held."""

    def forget_parent(self) -> None:
        """In a forked child: drop the parent's records; the child's objects get a name of its own."""
        self._chunks, self._size, self._since = [], 0, math.inf
        self._failures, self._retry_at, self.due_at = 0, -math.inf, math.inf
        self._base, self._seq = event_file_name(), 0

    # ------------------------------------------------------------------ uploading
    def _object_name(self) -> str:
        return "%s.%08d%s" % (self._base, self._seq, self._suffix)

    def _upload(self) -> None:
        """One attempt: the file_version event and every record held, as the next object."""
        name = self._object_name()
        chunks = self._chunks
        data = b"".join([record.encode_record(file_version_event(time.time()))] + chunks)
        self._fs.pipe_file(self._root + "/" + name, data)
        # records added during the upload (none: the writer holds its lock) would stay held
        del chunks[:]
        self._size, self._since = 0, math.inf
        self._failures, self._retry_at, self.due_at = 0, -math.inf, math.inf
        self._seq += 1
        self.objects += 1
        self.path = self._url + "/" + name

    def _failed(self, now: float) -> float:
        """Count a failure; the delay before the next attempt."""
        self._failures += 1
        delay = min(RETRY_MAX_DELAY, RETRY_FIRST_DELAY * 2 ** (self._failures - 1))
        self._retry_at = now + delay
        self.due_at = self._retry_at
        return delay

    def _error(self, err: BaseException, attempts: int) -> OSError:
        return OSError(getattr(err, "errno", None), "could not store %d bytes of events as %s/%s after %d attempt%s "
                       "(kept; retried at the next write): %s: %s"
                       % (self._size, self._url, self._object_name(), attempts, "" if attempts == 1 else "s",
                          type(err).__name__, err))

    def _upload_in_background(self, now: float) -> None:
        """One attempt from the writer thread; on failure a later attempt is scheduled (``due_at``)."""
        try:
            self._upload()
        except Exception as err:  # noqa: BLE001 - any failure of the store: keep the records, retry later
            self._failed(now)
            if self._failures % RAISE_AFTER == 0:
                raise self._error(err, self._failures) from err

    def _upload_retrying(self) -> None:
        """Store what is held now: up to ``RETRY_ATTEMPTS`` attempts with backoff, then OSError."""
        for attempt in range(1, RETRY_ATTEMPTS + 1):
            try:
                self._upload()
                return
            except (PermissionError, FileNotFoundError) as err:   # no bucket, no right: waiting will not help
                self._failed(time.monotonic())
                raise self._error(err, attempt) from err
            except Exception as err:  # noqa: BLE001 - any failure of the store: keep the records, retry
                delay = self._failed(time.monotonic())
                if attempt == RETRY_ATTEMPTS:
                    raise self._error(err, attempt) from err
                time.sleep(delay)


def join_url(url: str, *parts: str) -> str:
    """``url`` with ``parts`` appended by "/" (``os.path.join`` would do the same on POSIX only)."""
    return "/".join([url.rstrip("/")] + [p.strip("/") for p in parts])

