"""A run's labels, notes and archived flag, kept in a sidecar beside its event files (issue 35, point 4).

::

    change_run_info("runs/lr0.1", add_labels=["baseline"], notes="diverged after step 9k", archived=True)
    read_run_info("runs/lr0.1")    # RunInfo(labels=('baseline',), notes='diverged after step 9k', archived=True)

**The state is a fold of changes.** Nothing stores "the labels are X": each call records a *change* (labels to add,
labels to remove, the notes to set, the archived flag to set), stamped with ``time.time_ns()`` and a random id, and
the state is every change of the run applied in (time, id) order to ``RunInfo()``: a removed label goes, an added
one is appended unless there already (labels keep the order they were first added in), the last notes and the last
archived flag win. Two writers that label a run at the same moment each add a change; neither overwrites the
other's, so concurrent writers lose nothing, which storing a state (read, modify, write back) cannot promise on an
object store, where nothing can be locked. A change made after reading others is stamped later than all of them (a
clock behind them is moved past them), and one process's changes are stamped in the order made. Changes are
deduplicated by (time, id), so a change found twice (in the file and as its own object, after a copy) counts once.

**Where the changes are kept.** The sidecar's names start with ``.runinfo`` (``SIDECAR_PREFIX``) and never contain
``tfevents``: TensorBoard, its Rust data server, tbparse and our reader take any file whose name contains
``tfevents`` as an event file, so they all pass the sidecar by, and a folder holding only a sidecar is not a run.

* On a local disk: one small JSON file per run, ``<run_dir>/.runinfo.json``, holding the list of changes. A change
  takes an exclusive ``fcntl.flock`` on the run directory (its own fd: the lock cannot be taken on the file, which
  is replaced), reads the file, appends the change and replaces the file atomically (``atomic.atomic_write``: a
  temporary file in the same folder, fsync, ``os.replace``), then unlocks. Readers take no lock: they see the old
  file or the new one, never a part. Four processes labelling one run at once serialise on the lock and lose
  nothing. (``flock`` locks nothing across the hosts of an NFS mount; each change is still whole, but two hosts
  writing the same run at the same instant can lose one change there.)
* On an object store (``fs`` given, or ``run_dir`` an fsspec URL such as ``s3://bucket/exp/run`` or
  ``memory://...``): an object is never rewritten. Each change is a new object
  ``<run_dir>/.runinfo.<time_ns:020d>.<id>.json`` (the same format, one change), which no other writer can name.
  Reading lists the run folder (or takes the caller's listing, ``names``) and folds every such object and a
  ``.runinfo.json`` if there is one (a run copied up from a local disk). A run folder with no objects yet (a
  writer that has not stored its first) reads as no information; a change there is stored all the same. A
  process decodes each change object once (it never changes) and keeps it; ``.runinfo.json`` is read each time.

Reading a local run folder reads both kinds of file too, so a run copied down from an object store keeps its
changes. A run without a sidecar reads as ``RunInfo()``. A sidecar that is not valid JSON, or not this format, is a
ValueError naming the file; a change to a local run whose file is corrupt raises the same error and leaves the file
as it is (it is never silently replaced).

Labels are non-empty strings without control characters (Unicode category Cc, or the line and paragraph
separators): they are shown in tables, terminals and pages. Notes are any string. Both are data, never markup.

The file format (``version`` 1)::

    {"format": "tfevents.runinfo", "version": 1, "changes": [
     {"time_ns": 1795838565527904000, "id": "9f0c2d4e1a7b3c55", "add_labels": ["baseline"], "remove_labels": [],
      "notes": "diverged", "archived": true}]}

``notes`` and ``archived`` are present only in a change that sets them.
"""
from __future__ import annotations

import errno
import json
import os
import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from .atomic import atomic_write

try:
    import fcntl
except ImportError:        # Windows: no flock; a local change there raises (see _change_local)
    fcntl = None

__all__ = ["SIDECAR_PREFIX", "STATE_NAME", "RunInfo", "is_run_info_file", "read_run_info", "change_run_info",
           "check_label", "check_labels"]

SIDECAR_PREFIX = ".runinfo"
STATE_NAME = SIDECAR_PREFIX + ".json"          # the local file of changes (also read on object stores)
FORMAT = "tfevents.runinfo"
VERSION = 1

_CHANGE_OBJECT = re.compile(r"\.runinfo\.(\d{20})\.([0-9a-f]+)\.json\Z")
_LINE_SEPARATORS = {"\u2028", "\u2029"}
_LOCAL_PROTOCOLS = {"file", "local"}

_CACHED_OBJECTS = 65536  # change objects kept decoded (they are immutable); beyond this the cache starts anew
_object_cache: Dict[Tuple[Any, str], List["_Change"]] = {}   # (fsspec filesystem, object path) -> its changes

_stamp_lock = threading.Lock()
_last_stamp = 0          # this process's last stamp: its changes are stamped in the order made


@dataclass(frozen=True)
class RunInfo:
    """A run's user metadata: ``labels`` in the order first added (no duplicates), ``notes``, ``archived``."""

    labels: Tuple[str, ...] = ()
    notes: str = ""
    archived: bool = False


@dataclass(frozen=True)
class _Change:
    """One recorded change: its stamp (``time_ns``, ``id``) and what it does (None: leaves that field)."""

    time_ns: int
    id: str
    add_labels: Tuple[str, ...] = ()
    remove_labels: Tuple[str, ...] = ()
    notes: Optional[str] = None
    archived: Optional[bool] = None

    @property
    def key(self) -> Tuple[int, str]:
        return self.time_ns, self.id

    def as_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"time_ns": self.time_ns, "id": self.id, "add_labels": list(self.add_labels),
                               "remove_labels": list(self.remove_labels)}
        if self.notes is not None:
            out["notes"] = self.notes
        if self.archived is not None:
            out["archived"] = self.archived
        return out


def is_run_info_file(name: str) -> bool:
    """Whether the basename ``name`` is a sidecar: ``.runinfo.json`` or a change object
    ``.runinfo.<time_ns:020d>.<id>.json`` (not an atomic write's temporary ``.runinfo.json.tmp<hex>``)."""
    return name == STATE_NAME or _CHANGE_OBJECT.match(name) is not None


def read_run_info(run_dir: str, fs: Any = None, names: Optional[Iterable[str]] = None) -> RunInfo:
    """The labels, notes and archived flag of the run in ``run_dir``; ``RunInfo()`` when it has no sidecar.

    Args:
        run_dir: the run's folder: a local path, or an fsspec URL (``s3://bucket/exp/run``, ``memory://...``).
        fs: the fsspec filesystem of ``run_dir`` (then ``run_dir`` may be a path on it); None: a local path, or a
            URL opened with fsspec's defaults.
        names: the basenames in ``run_dir``, when the caller has listed it already (no second listing is made;
            a listing without a sidecar reads nothing). None: the folder is listed here.

    Raises ValueError naming the file for a sidecar that is not valid JSON or not this format, and
    FileNotFoundError for a local ``run_dir`` that does not exist.
    """
    fs, path = _resolve(run_dir, fs)
    return _fold(_read_changes(run_dir, fs, path, names))


def change_run_info(run_dir: str, *, add_labels: Sequence[str] = (), remove_labels: Sequence[str] = (),
                    notes: Optional[str] = None, archived: Optional[bool] = None, fs: Any = None) -> RunInfo:
    """Record one change to the run in ``run_dir``; return the state after it.

    ``add_labels`` are appended unless present, ``remove_labels`` removed if present; ``notes`` (any string; ""
    clears them) and ``archived`` replace the current values, None leaves them. A call that changes nothing
    records nothing. ``run_dir`` and ``fs`` as for ``read_run_info``. A local ``run_dir`` must exist
    (FileNotFoundError); on an object store the change is stored whether or not the run has objects yet.

    The state returned folds the changes read when this one was made, and this one: on an object store, a change
    another writer stores at the same moment may be missing from it (it is not lost: the next read has it).

    Raises ValueError for a label that is empty or holds a control character, a label both added and removed,
    and for a corrupt sidecar (naming the file; a local one is left as it is); TypeError for a str given as a
    list of labels, notes that are not a str, or archived not a bool.
    """
    adding = check_labels(add_labels, "add_labels")
    removing = check_labels(remove_labels, "remove_labels")
    both = [label for label in adding if label in removing]
    if both:
        raise ValueError("labels both added and removed in one change: %s" % ", ".join(map(repr, both)))
    if notes is not None and not isinstance(notes, str):
        raise TypeError("notes must be a str, got %s" % type(notes).__name__)
    if archived is not None and not isinstance(archived, bool):
        raise TypeError("archived must be True, False or None, got %r" % (archived,))
    fs, path = _resolve(run_dir, fs)
    if not (adding or removing or notes is not None or archived is not None):
        return _fold(_read_changes(run_dir, fs, path, None))

    def change_after(seen: List[_Change]) -> _Change:
        return _Change(_stamp(max((c.time_ns for c in seen), default=0)), secrets.token_hex(8), adding,
                       removing, notes, archived)

    if fs is None:
        return _change_local(path, change_after)
    return _change_object_store(run_dir, fs, path, change_after)


# ---------------------------------------------------------------- labels and stamps

def check_labels(labels: Sequence[str], what: str = "labels") -> Tuple[str, ...]:
    """``labels`` checked (``check_label``), without duplicates, in their order; ``what`` names the argument in a
    TypeError for a single str given where a list belongs."""
    if isinstance(labels, (str, bytes)):
        raise TypeError("%s must be a list of labels, not a single %s (write [%r])"
                        % (what, type(labels).__name__, labels))
    out: Dict[str, None] = {}
    for label in labels:
        check_label(label)
        out.setdefault(label, None)
    return tuple(out)


def check_label(label: Any) -> str:
    """``label`` if it is a valid label: a non-empty, not blank str without control characters; else ValueError
    (TypeError for a non-str)."""
    if not isinstance(label, str):
        raise TypeError("a label must be a str, got %s %r" % (type(label).__name__, label))
    if not label.strip():
        raise ValueError("a label must not be empty or blank, got %r" % (label,))
    bad = [c for c in label if c in _LINE_SEPARATORS or _is_control(c)]
    if bad:
        raise ValueError("a label must not hold control characters: %r holds %s"
                         % (label, ", ".join("U+%04X" % ord(c) for c in dict.fromkeys(bad))))
    return label


def _is_control(c: str) -> bool:
    """Unicode category Cc: the C0 controls, DEL and the C1 controls (terminal escapes start with these)."""
    code = ord(c)
    return code < 0x20 or 0x7F <= code < 0xA0


def _stamp(after: int) -> int:
    """``time.time_ns()``, moved past ``after`` and past this process's previous stamp."""
    global _last_stamp
    with _stamp_lock:
        stamp = max(time.time_ns(), after + 1, _last_stamp + 1)
        _last_stamp = stamp
        return stamp


def _fold(changes: Iterable[_Change]) -> RunInfo:
    """The state: ``changes`` (deduplicated by (time, id)) applied in (time, id) order to ``RunInfo()``."""
    labels: Dict[str, None] = {}
    notes, archived = "", False
    for change in sorted({c.key: c for c in changes}.values(), key=lambda c: c.key):
        for label in change.remove_labels:
            labels.pop(label, None)
        for label in change.add_labels:
            labels.setdefault(label, None)
        if change.notes is not None:
            notes = change.notes
        if change.archived is not None:
            archived = change.archived
    return RunInfo(tuple(labels), notes, archived)


# ---------------------------------------------------------------- the file format

def _encode(changes: Sequence[_Change]) -> bytes:
    """The sidecar's bytes: a change per line, so the file reads (and diffs) as a log."""
    lines = ",\n ".join(json.dumps(c.as_json(), ensure_ascii=False) for c in changes)
    return ('{"format": "%s", "version": %d, "changes": [\n %s]}\n' % (FORMAT, VERSION, lines)).encode("utf-8")


def _decode(data: bytes, where: str) -> List[_Change]:
    """The changes in a sidecar's bytes; ValueError naming ``where`` when they are not this format."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise ValueError("run info file %s is corrupt: not valid JSON (%s)" % (where, err)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError("run info file %s is corrupt: not a %s document" % (where, FORMAT))
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError("run info file %s is corrupt: bad version %r" % (where, version))
    if version > VERSION:
        raise ValueError("run info file %s has format version %d; this tfevents reads version %d: upgrade tfevents"
                         % (where, version, VERSION))
    changes = doc.get("changes")
    if not isinstance(changes, list):
        raise ValueError("run info file %s is corrupt: 'changes' is not a list" % where)
    return [_decode_change(item, where, i) for i, item in enumerate(changes)]


def _decode_change(item: Any, where: str, index: int) -> _Change:
    def bad(why: str) -> ValueError:
        return ValueError("run info file %s is corrupt: change %d: %s" % (where, index, why))

    if not isinstance(item, dict):
        raise bad("not an object")
    stamp, ident = item.get("time_ns"), item.get("id")
    if not isinstance(stamp, int) or isinstance(stamp, bool) or stamp < 0:
        raise bad("time_ns %r is not a non-negative integer" % (stamp,))
    if not isinstance(ident, str) or not ident:
        raise bad("id %r is not a non-empty string" % (ident,))
    labels = {}
    for key in ("add_labels", "remove_labels"):
        value = item.get(key, [])
        if not isinstance(value, list):
            raise bad("%s is not a list" % key)
        try:
            labels[key] = tuple(check_label(label) for label in value)
        except (TypeError, ValueError) as err:
            raise bad("%s: %s" % (key, err)) from None
    notes, archived = item.get("notes"), item.get("archived")
    if notes is not None and not isinstance(notes, str):
        raise bad("notes is not a string")
    if archived is not None and not isinstance(archived, bool):
        raise bad("archived is not true or false")
    return _Change(stamp, ident, labels["add_labels"], labels["remove_labels"], notes, archived)


# ---------------------------------------------------------------- where the run is

def _resolve(run_dir: str, fs: Any) -> Tuple[Any, str]:
    """``(fsspec filesystem or None for a local folder, the run folder's path)``."""
    run_dir = os.fspath(run_dir)
    if not isinstance(run_dir, str):
        raise TypeError("run_dir must be a str path or URL, got %s" % type(run_dir).__name__)
    if fs is None:
        if not _is_url(run_dir):
            return None, run_dir
        fs, path = _open_url(run_dir)
    else:
        path = fs._strip_protocol(run_dir)
    protocols = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
    if _LOCAL_PROTOCOLS.intersection(protocols):        # file:// is a local folder: flock and one file
        return None, path
    return fs, path.rstrip("/")


def _is_url(path: str) -> bool:
    return "://" in path or path.startswith("memory:")


def _open_url(url: str) -> Tuple[Any, str]:
    import fsspec  # lazy: object stores only; fsspec is an optional dependency (the remote extra)

    scheme, sep, rest = url.partition("://")
    return fsspec.core.url_to_fs(scheme.lower() + sep + rest if sep else url)


def _read_changes(run_dir: str, fs: Any, path: str, names: Optional[Iterable[str]]) -> List[_Change]:
    if fs is None:
        return _read_local(path, names)
    return _read_object_store(run_dir, fs, path, names)


# ---------------------------------------------------------------- a local folder: one file, flock

def _read_local(run_dir: str, names: Optional[Iterable[str]]) -> List[_Change]:
    if names is None:
        if not os.path.isdir(run_dir):
            raise FileNotFoundError(errno.ENOENT, "no run folder", run_dir)
        names = os.listdir(run_dir)
    changes: List[_Change] = []
    for name in sorted(n for n in names if is_run_info_file(n)):
        changes.extend(_read_local_file(os.path.join(run_dir, name)))
    return changes


def _read_local_file(path: str) -> List[_Change]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:            # none yet, or removed since listed (runs rm, mv)
        return []
    return _decode(data, path)


def _change_local(run_dir: str, change_after: Callable[[List[_Change]], _Change]) -> RunInfo:
    if fcntl is None:
        raise OSError("changing a local run's info needs fcntl.flock, which this platform (%s) lacks" % os.name)
    try:
        fd = os.open(run_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "no run folder", run_dir) from None
    except NotADirectoryError:
        raise NotADirectoryError(errno.ENOTDIR, "not a run folder", run_dir) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        state_file = os.path.join(run_dir, STATE_NAME)
        kept = _read_local_file(state_file)             # a corrupt file raises here: it is never replaced
        copied = _read_local(run_dir, [n for n in os.listdir(run_dir) if n != STATE_NAME])   # change objects
        seen = kept + copied                            # the new stamp comes after all of them
        change = change_after(seen)
        atomic_write(state_file, _encode(kept + [change]))
    finally:
        os.close(fd)                                     # releases the lock
    return _fold(seen + [change])


# ---------------------------------------------------------------- an object store: a new object per change

def _read_object_store(run_dir: str, fs: Any, path: str, names: Optional[Iterable[str]]) -> List[_Change]:
    if names is None:
        fs.invalidate_cache(path)                    # another process may have stored a change since
        try:
            names = [entry.rstrip("/").rsplit("/", 1)[-1] for entry in fs.ls(path, detail=False)]
        except FileNotFoundError:                    # no object under the run yet
            return []
    changes: List[_Change] = []
    wanted = []
    for name in sorted(name for name in names if is_run_info_file(name)):
        cached = _object_cache.get((fs, path + "/" + name))    # a change object is never rewritten: read once
        if cached is not None:
            changes.extend(cached)
        else:
            wanted.append(name)
    if not wanted:
        return changes
    found = fs.cat([path + "/" + name for name in wanted], on_error="return")
    by_name = {key.rstrip("/").rsplit("/", 1)[-1]: data for key, data in found.items()}
    for name in wanted:
        data = by_name.get(name)
        if data is None or isinstance(data, FileNotFoundError):   # removed since listed
            continue
        where = run_dir.rstrip("/") + "/" + name
        if isinstance(data, BaseException):
            raise OSError("cannot read run info file %s: %s" % (where, data)) from data
        decoded = _decode(data, where)
        if name != STATE_NAME:
            if len(_object_cache) >= _CACHED_OBJECTS:
                _object_cache.clear()
            _object_cache[(fs, path + "/" + name)] = decoded
        changes.extend(decoded)
    return changes


def _change_object_store(run_dir: str, fs: Any, path: str,
                         change_after: Callable[[List[_Change]], _Change]) -> RunInfo:
    seen = _read_object_store(run_dir, fs, path, None)
    change = change_after(seen)
    stored = "%s/%s.%020d.%s.json" % (path, SIDECAR_PREFIX, change.time_ns, change.id)
    fs.pipe_file(stored, _encode([change]))
    _object_cache[(fs, stored)] = [change]
    return _fold(seen + [change])
