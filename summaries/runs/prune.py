"""Deleting and moving runs inside a logdir, safely (issue 35, point 5): the file-system side of ``tfevents runs rm``
and ``tfevents runs mv``, for local paths and fsspec URLs (``s3://``...) alike.

A run is named as the reader names it (``tfevents.summaries.reader.walk.discover``): its directory relative to the
logdir, ``.`` for the logdir itself. A name that is not a run of the logdir is an :class:`UnknownRunError` naming
the nearest runs.

What deleting a run deletes (:func:`plan_removal` says it, :func:`remove_runs` does it):

- **the whole directory** (``action="directory"``) when nothing below it is a run that stays: no sub-runs, or only
  sub-runs deleted with it (those are listed with ``action="inside"``). Everything in the directory goes
  (checkpoints too).
- **its own files only** (``action="files"``) when sub-runs that stay live below it (run ``train`` with
  ``train/eval``), and always for the run ``.`` (the logdir itself is never deleted, nor anything in it but the
  run's own files): its event files, its ``.runinfo*`` sidecars (labels, notes, archive) and ``hparams.yaml``, in
  the run's directory itself; the sub-runs are left as they are.
- **the link** (``action="symlink"``) when the run's directory is a symbolic link (local disks): the link is
  removed (``os.unlink``), its target is untouched, wherever it is.

The folders above a deleted run stay, even when nothing is left in them (``sweep/`` after its last ``sweep/seed1``).

Never anything outside the logdir: each run's path is resolved (``os.path.realpath``) and must be inside the
resolved logdir, else :class:`UnsafePathError` (a run reached through a symlink to elsewhere is deleted by removing
that link, never through it). Deleting never follows a symlink: a directory is removed by ``shutil.rmtree``, which
unlinks the links it meets. On an object store there are no links: a run is the objects under its prefix, and
"inside the logdir" is a prefix check on every object deleted (exactly the objects listed, never a recursive
delete of a prefix).

:func:`move_run` renames or moves a run inside the logdir: NEW is relative to the logdir, must not exist and must
stay inside it (no ``..`` out, no absolute path, no symlinked parent leading out: :class:`RunPathError`); parent
directories are created. The same split as deleting: a run without sub-runs moves with its whole directory
(``os.rename``; a symlink run moves as a link, a relative target rewritten so it points where it did), a run with
sub-runs (or ``.``) moves its own files into NEW. On an object store every object is copied (fsspec ``copy``),
each copy checked (size, and the ETag when both are single-part), and only then are the originals deleted.
"""
from __future__ import annotations

import difflib
import os
import posixpath
import shutil
import stat
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from ..reader.walk import discover, fsspec_url, is_event_file, is_url
from ..run_info import SIDECAR_PREFIX
from .hparams import LIGHTNING_FILE

__all__ = ["RunRemoval", "RunMove", "UnknownRunError", "UnsafePathError", "RunPathError", "plan_removal",
           "remove_runs", "move_run", "is_own_file"]



class UnknownRunError(ValueError):
    """A run name that is not a run of the logdir: ``.names`` (the unknown ones), message with the nearest runs."""

    def __init__(self, names: Sequence[str], known: Sequence[str]):
        self.names = list(names)
        parts = []
        for name in self.names:
            near = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
            parts.append("no run %r in the logdir%s" % (name, "; nearest: " + ", ".join(repr(n) for n in near)
                                                        if near else ""))
        super().__init__("; ".join(parts) or "no such run")


class UnsafePathError(ValueError):
    """A run whose files are not inside the logdir (reached through a symlink): it is not touched."""


class RunPathError(ValueError):
    """A new run name that is not a free path inside the logdir (``..`` out, absolute, existing, into itself)."""


@dataclass(frozen=True)
class RunRemoval:
    """What deleting one run deletes: ``action`` is ``directory`` (``paths`` holds the directory, or on an object
    store every object), ``files`` (its own files only; ``kept_runs`` are the sub-runs left below), ``symlink``
    (``paths`` holds the link; ``target`` is kept), ``inside`` (deleted with the directory of ``within``) or
    ``behind_link`` (seen through the symlink run ``within``: gone from the logdir with the link, its files kept).
    ``bytes`` is the data deleted (a link counts 0)."""

    run: str
    action: str
    paths: Tuple[str, ...] = ()
    bytes: int = 0
    kept_runs: Tuple[str, ...] = ()
    within: Optional[str] = None
    target: Optional[str] = None


@dataclass(frozen=True)
class RunMove:
    """A run moved: ``moved`` is every ``(source, destination)`` path renamed or copied; ``whole`` says whether the
    run's directory moved (else its own files only, ``kept_runs`` left in place); ``bytes`` the data moved."""

    old: str
    new: str
    moved: Tuple[Tuple[str, str], ...]
    whole: bool
    bytes: int = 0
    kept_runs: Tuple[str, ...] = field(default=())


def is_own_file(name: str) -> bool:
    """Whether a file of this name in a run's directory belongs to that run itself: event files, ``.runinfo*``
    sidecars (``tfevents.summaries.run_info``'s, with any temporary file a write left) and ``hparams.yaml`` (what
    deleting or moving a run with sub-runs takes)."""
    return is_event_file(name) or name.startswith(SIDECAR_PREFIX) or name == LIGHTNING_FILE


# ------------------------------------------------------------------ the logdir and its runs

class _Logdir:
    """The logdir as found: its runs, and for object stores ``fs``, ``root`` and every object with its size."""

    def __init__(self, logdir: str, storage_options: Optional[dict]):
        self.path = os.fspath(logdir)
        self.remote = is_url(self.path)
        if not self.remote and not os.path.isdir(self.path):
            raise FileNotFoundError("not a directory: %s" % self.path)
        found = discover(self.path, storage_options=storage_options)
        self.runs: List[str] = [run for run, _ in found.runs]
        self.fs = found.fs
        if self.remote:
            import fsspec  # lazy: fsspec only for URLs (a dependency of the reader's remote path, already loaded)
            _, root = fsspec.core.url_to_fs(fsspec_url(self.path), **(storage_options or {}))
            self.root = root.rstrip("/")
            self.fs.invalidate_cache()
            listing = {p: info for p, info in self.fs.find(self.root, detail=True).items()
                       if p.startswith(self.root + "/") and info.get("type", "file") == "file"}
            self.objects: Dict[str, int] = {p: int(info.get("size") or 0) for p, info in listing.items()}
            self.etags = {p: info.get("ETag") for p, info in listing.items()}
        else:
            self.root = os.path.realpath(self.path)

    def check_names(self, names: Iterable[str]) -> List[str]:
        names = list(dict.fromkeys(names))
        unknown = [n for n in names if n not in self.runs]
        if unknown:
            raise UnknownRunError(unknown, self.runs)
        return names

    def below(self, run: str) -> List[str]:
        """The runs below ``run`` (every other run for ``.``)."""
        return [r for r in self.runs if r != run and (run == "." or r.startswith(run + "/"))]

    # local paths
    def local_path(self, run: str) -> str:
        return self.path if run == "." else os.path.join(self.path, *run.split("/"))

    def inside(self, real: str, strictly: bool = True) -> bool:
        return real.startswith(self.root.rstrip(os.sep) + os.sep) or (not strictly and real == self.root)

    # object stores
    def prefix(self, run: str) -> str:
        return self.root if run == "." else self.root + "/" + run


def _tree_bytes(path: str) -> int:
    """Bytes of the regular files under ``path``, never following a symlink."""
    total = 0
    for directory, dirs, files in os.walk(path, followlinks=False):
        for name in files:
            try:
                st = os.lstat(os.path.join(directory, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                total += st.st_size
    return total


def _local_own_files(directory: str) -> List[Tuple[str, int]]:
    """The run's own files directly in ``directory`` (links to files included, as links), with their sizes."""
    found = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) or not is_own_file(entry.name):
                continue
            st = entry.stat(follow_symlinks=False)
            found.append((entry.path, st.st_size if stat.S_ISREG(st.st_mode) else 0))
    return sorted(found)


def _local_resolved(lg: _Logdir, run: str) -> str:
    """The real directory of a run that is not itself a link; UnsafePathError when it is not inside the logdir."""
    real = os.path.realpath(lg.local_path(run))
    if run == "." and real == lg.root:
        return real
    if not lg.inside(real):
        raise UnsafePathError("run %r is at %s, outside the logdir %s (reached through a symlink); nothing of it "
                              "is touched: remove or move the symlink itself" % (run, real, lg.root))
    return real


def _link_parent_checked(lg: _Logdir, run: str) -> str:
    path = lg.local_path(run)
    parent = os.path.realpath(os.path.dirname(path))
    if not lg.inside(parent, strictly=False):
        raise UnsafePathError("the symlink of run %r is in %s, outside the logdir %s (through another symlink); "
                              "it is not touched" % (run, parent, lg.root))
    return os.path.join(parent, os.path.basename(path))


# ------------------------------------------------------------------ deleting

def _plan(lg: _Logdir, names: Sequence[str]) -> List[RunRemoval]:
    chosen = set(names)
    plans: Dict[str, RunRemoval] = {}
    for run in sorted(names):
        ancestors = [a for a in plans if a == "." or run.startswith(a + "/")]
        covering = next((a for a in ancestors if plans[a].action in ("directory", "symlink")), None)
        if covering is not None:
            action = "inside" if plans[covering].action == "directory" else "behind_link"
            plans[run] = RunRemoval(run, action, within=covering)
            continue
        kept = tuple(r for r in lg.below(run) if r not in chosen)
        if lg.remote:
            plans[run] = _plan_remote(lg, run, kept)
        else:
            plans[run] = _plan_local(lg, run, kept)
    return [plans[n] for n in sorted(names)]


def _plan_local(lg: _Logdir, run: str, kept: Tuple[str, ...]) -> RunRemoval:
    path = lg.local_path(run)
    if run != "." and os.path.islink(path):
        link = _link_parent_checked(lg, run)
        return RunRemoval(run, "symlink", (link,), 0, target=os.readlink(link))
    real = _local_resolved(lg, run)
    if run != "." and not kept:
        return RunRemoval(run, "directory", (real,), _tree_bytes(real))
    files = _local_own_files(real)
    return RunRemoval(run, "files", tuple(p for p, _ in files), sum(s for _, s in files), kept_runs=kept)


def _plan_remote(lg: _Logdir, run: str, kept: Tuple[str, ...]) -> RunRemoval:
    prefix = lg.prefix(run) + "/"
    if run != "." and not kept:
        objects = sorted(p for p in lg.objects if p.startswith(prefix))
        return RunRemoval(run, "directory", tuple(objects), sum(lg.objects[p] for p in objects))
    objects = sorted(p for p in lg.objects
                     if p.startswith(prefix) and "/" not in p[len(prefix):] and is_own_file(p[len(prefix):]))
    return RunRemoval(run, "files", tuple(objects), sum(lg.objects[p] for p in objects), kept_runs=kept)


def plan_removal(logdir: str, names: Iterable[str], *, storage_options: Optional[dict] = None) -> List[RunRemoval]:
    """What :func:`remove_runs` would delete for these runs, one :class:`RunRemoval` per run in name order;
    nothing is deleted. UnknownRunError for a name that is not a run, UnsafePathError for a run outside the
    logdir, FileNotFoundError when the logdir is not a directory."""
    lg = _Logdir(logdir, storage_options)
    return _plan(lg, lg.check_names(names))


def remove_runs(logdir: str, names: Iterable[str], *, storage_options: Optional[dict] = None) -> List[RunRemoval]:
    """Delete these runs as the module docstring says, after checking every one (nothing is deleted when one name
    is unknown or unsafe); returns what was deleted (:func:`plan_removal`'s list)."""
    lg = _Logdir(logdir, storage_options)
    plans = _plan(lg, lg.check_names(names))
    if lg.remote:
        doomed = [p for plan in plans for p in plan.paths]
        outside = [p for p in doomed if not p.startswith(lg.root + "/")]
        if outside:  # cannot happen by construction: the last guard before deleting
            raise UnsafePathError("objects outside the logdir %s: %s" % (lg.root, outside[:3]))
        if doomed:
            lg.fs.rm(doomed)
            lg.fs.invalidate_cache()
        return plans
    for plan in plans:
        if plan.action == "symlink":
            os.unlink(plan.paths[0])
        elif plan.action == "directory":
            directory = plan.paths[0]
            if os.path.islink(directory) or not lg.inside(os.path.realpath(directory)):
                raise UnsafePathError("%s changed while deleting; not deleted" % directory)
            shutil.rmtree(directory)
        elif plan.action == "files":
            for path in plan.paths:
                os.unlink(path)
    return plans


# ------------------------------------------------------------------ moving

def _check_new_name(lg: _Logdir, old: str, new: str) -> str:
    """``new`` as a clean relative run name; RunPathError when it is not a path inside the logdir."""
    text = os.fspath(new)
    if not text or text.strip() != text:
        raise RunPathError("the new run name %r is empty or has spaces at its ends" % text)
    if text.startswith(("/", "\\")) or os.path.isabs(text) or is_url(text) or (len(text) > 1 and text[1] == ":"):
        raise RunPathError("the new run name %r is not relative to the logdir: give a path inside it" % text)
    parts = text.replace("\\", "/").split("/")
    if ".." in parts:
        raise RunPathError("the new run name %r leaves the logdir (..): a run moves inside its logdir only" % text)
    clean = posixpath.normpath("/".join(parts))
    if clean in (".", ""):
        raise RunPathError("the new run name %r is the logdir itself" % text)
    if clean == old:
        raise RunPathError("run %r is already there" % old)
    return clean


def _plan_move(lg: _Logdir, old: str, new: str) -> Tuple[bool, Tuple[str, ...]]:
    """(whole directory?, kept sub-runs) for moving ``old`` to ``new``."""
    kept = tuple(lg.below(old))
    whole = old != "." and not kept
    if whole and new.startswith(old + "/"):
        raise RunPathError("cannot move run %r into itself (%r)" % (old, new))
    return whole, kept


def _move_local(lg: _Logdir, old: str, new: str) -> RunMove:
    whole, kept = _plan_move(lg, old, new)
    dst = os.path.join(lg.path, *new.split("/"))
    if os.path.lexists(dst):
        raise RunPathError("%r already exists in the logdir: the new name must be free" % new)
    # the deepest existing ancestor of the destination must resolve inside the logdir (no symlinked way out)
    ancestor = os.path.dirname(dst)
    while not os.path.lexists(ancestor):
        ancestor = os.path.dirname(ancestor)
    if not lg.inside(os.path.realpath(ancestor), strictly=False):
        raise RunPathError("%r would be outside the logdir: %s resolves to %s" % (new, ancestor,
                                                                                  os.path.realpath(ancestor)))
    src = lg.local_path(old)
    if old != "." and os.path.islink(src):  # the link moves, with whatever is seen through it
        if new.startswith(old + "/"):
            raise RunPathError("cannot move run %r into itself (%r)" % (old, new))
        link = _link_parent_checked(lg, old)
        target = os.readlink(link)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.isabs(target):  # keep a relative link pointing where it did (both folders resolved)
            target = os.path.relpath(os.path.join(os.path.dirname(link), target),
                                     os.path.realpath(os.path.dirname(dst)))
        os.symlink(target, dst, target_is_directory=True)
        os.unlink(link)
        return RunMove(old, new, ((link, dst),), True)
    real = _local_resolved(lg, old)
    if whole:
        size = _tree_bytes(real)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.rename(real, dst)
        return RunMove(old, new, ((real, dst),), True, size)
    files = _local_own_files(real)
    os.makedirs(dst)
    moved = []
    for path, _ in files:
        target = os.path.join(dst, os.path.basename(path))
        os.rename(path, target)
        moved.append((path, target))
    return RunMove(old, new, tuple(moved), False, sum(s for _, s in files), kept)


def _same_object(lg: _Logdir, src: str, dst: str) -> bool:
    lg.fs.invalidate_cache(dst)
    try:
        info = lg.fs.info(dst)
    except FileNotFoundError:
        return False
    if int(info.get("size") or 0) != lg.objects[src]:
        return False
    a, b = (lg.etags.get(src) or "").strip('"'), (info.get("ETag") or "").strip('"')
    return not (a and b and "-" not in a and "-" not in b and a != b)


def _move_remote(lg: _Logdir, old: str, new: str) -> RunMove:
    whole, kept = _plan_move(lg, old, new)
    src_prefix, dst_prefix = lg.prefix(old) + "/", lg.prefix(new)
    if any(p == dst_prefix or p.startswith(dst_prefix + "/") for p in lg.objects):
        raise RunPathError("%r already exists in the logdir: the new name must be free" % new)
    if whole:
        sources = sorted(p for p in lg.objects if p.startswith(src_prefix))
    else:
        sources = sorted(p for p in lg.objects if p.startswith(src_prefix) and "/" not in p[len(src_prefix):]
                         and is_own_file(p[len(src_prefix):]))
    pairs = [(p, dst_prefix + "/" + p[len(src_prefix):]) for p in sources]
    done = []
    try:
        for src, dst in pairs:
            lg.fs.copy(src, dst)
            done.append(dst)
            if not _same_object(lg, src, dst):
                raise OSError("the copy of %s at %s differs from it (size or checksum); nothing moved" % (src, dst))
    except BaseException:
        if done:
            lg.fs.rm(done)
        raise
    if sources:
        lg.fs.rm(sources)
    lg.fs.invalidate_cache()
    return RunMove(old, new, tuple(pairs), whole, sum(lg.objects[p] for p in sources), kept)


def move_run(logdir: str, old: str, new: str, *, storage_options: Optional[dict] = None) -> RunMove:
    """Rename or move run ``old`` to ``new`` (relative to the logdir) as the module docstring says.
    UnknownRunError for an ``old`` that is not a run, RunPathError for a ``new`` that is not a free path inside the
    logdir, UnsafePathError for a run outside it; OSError from the file system (an object copy that does not
    match its source: the copies are deleted, the run stays where it was)."""
    lg = _Logdir(logdir, storage_options)
    lg.check_names([old])
    new = _check_new_name(lg, old, new)
    return _move_remote(lg, old, new) if lg.remote else _move_local(lg, old, new)
