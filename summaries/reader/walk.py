"""Finding runs and event files under a logdir, as TensorBoard's data server walks it, without hanging.

A run is each directory holding files whose name contains ``tfevents`` (its path relative to the logdir,
``.`` for the logdir itself); its files are in name order. Directory symlinks are followed (as the Rust data
server does), each directory once, so a symlink loop cannot walk forever. Only regular files are event files:
a FIFO, socket or device named like one is skipped with a problem (opening a FIFO blocks until a writer comes),
and so is a file that cannot be opened. Remote logdirs (fsspec URLs) are listed with ``fs.find``.
"""
from __future__ import annotations

import os
import re
import stat
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .decode import Problem

__all__ = ["Discovery", "discover", "fsspec_url", "is_url", "is_event_file"]


def is_url(path: str) -> bool:
    return "://" in path or path.startswith("memory:")


def fsspec_url(url: str) -> str:
    """``url`` with its protocols in lower case, the only case fsspec knows (``S3://b/x`` -> ``s3://b/x``)."""
    parts = url.split("::")
    for i, part in enumerate(parts):
        scheme, sep, rest = part.partition("://")
        parts[i] = scheme.lower() + sep + rest if sep else part.lower() if i < len(parts) - 1 else part
    return "::".join(parts)


def is_event_file(name: str) -> bool:
    return "tfevents" in os.path.basename(name)


@dataclass
class Discovery:
    """What a walk found: ``fs`` (None for local paths, else the fsspec filesystem), ``runs`` as sorted
    ``[(run, [file, ...])]``, and ``problems``: files skipped because they are not regular or not readable.

    With ``discover(..., listing=True)``: ``root``, the walked folder (for a URL, the path on ``fs``), and
    ``listing``, ``{folder relative to root ("." for root, "/"-separated): sorted names of the files in it}`` for
    every folder walked (files of every name; folders holding no file are absent). ``listing`` is None when
    ``path`` was one event file or ``listing`` was not asked for."""

    fs: object
    runs: List[Tuple[str, List[str]]]
    problems: List[Problem] = field(default_factory=list)
    root: str = ""
    listing: Optional[Dict[str, List[str]]] = None


def _check_local_file(path: str, st: os.stat_result) -> Optional[Problem]:
    """A problem if ``path`` (with its stat) cannot be read as an event file, else None."""
    if not stat.S_ISREG(st.st_mode):
        what = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
                else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file")
        return Problem(path, None, "skipped", "%s named like an event file; not read" % what)
    if not os.access(path, os.R_OK):
        return Problem(path, None, "unreadable", "permission denied")
    return None


RACY_SECONDS = 2.0   # a folder changed this recently is listed again whatever its mtime says: a file system with
#                      coarse mtimes may not show a change made within the same tick


@dataclass
class _Folder:
    """One folder as a walk listed it: ``key`` (device, inode, mtime in ns) tells whether it changed since."""

    key: tuple
    folders: List[str]
    names: List[str]
    found: List[str]
    problems: List[Problem]


def _list_folder(directory: str, key: tuple) -> _Folder:
    entries = sorted(os.scandir(directory), key=lambda e: e.name)
    folder = _Folder(key, [], [], [], [])
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=True):
                folder.folders.append(entry.path)
                continue
            folder.names.append(entry.name)
            if not is_event_file(entry.name):
                continue
            problem = _check_local_file(entry.path, entry.stat(follow_symlinks=True))
        except OSError as err:  # a dangling symlink, or an entry removed while walking
            if is_event_file(entry.name):
                folder.problems.append(Problem(entry.path, None, "unreadable", err.strerror or str(err)))
            continue
        if problem is not None:
            folder.problems.append(problem)
        else:
            folder.found.append(entry.path)
    return folder


def _walk_local(root: str, listing: Optional[Dict[str, List[str]]] = None, cache: Optional[dict] = None
                ) -> Tuple[Dict[str, List[str]], List[Problem]]:
    """``cache`` (a dict the caller keeps between walks, replaced in place): each folder's listing, used again
    while the folder's mtime is unchanged and older than ``RACY_SECONDS`` (adding, removing or renaming an entry
    changes it; a file growing does not, and needs no new listing)."""
    groups: Dict[str, List[str]] = {}
    problems: List[Problem] = []
    seen_dirs = set()
    stack = [root]
    listed: Dict[str, _Folder] = {}
    recent = time.time() - RACY_SECONDS
    while stack:
        directory = stack.pop()
        try:
            st = os.stat(directory)
        except OSError:
            continue  # vanished, or a dangling symlink: TensorBoard walks past these quietly
        if (st.st_dev, st.st_ino) in seen_dirs:
            continue  # a symlink loop, or a second link to a directory already walked
        seen_dirs.add((st.st_dev, st.st_ino))
        key = (st.st_dev, st.st_ino, st.st_mtime_ns)
        folder = cache.get(directory) if cache is not None else None
        if folder is None or folder.key != key or st.st_mtime >= recent:
            try:
                folder = _list_folder(directory, key)
            except OSError as err:
                if directory != root:
                    problems.append(Problem(directory, None, "unreadable", err.strerror or str(err)))
                continue
        listed[directory] = folder
        stack.extend(folder.folders)
        problems.extend(folder.problems)
        if folder.found or listing is not None and folder.names:
            # (every folder below root is root joined with names by scandir: the rest of its path is relative)
            rel = directory[len(root):].lstrip(os.sep).replace(os.sep, "/") or "."
            if folder.found:
                groups[rel] = list(folder.found)
            if listing is not None and folder.names:
                listing[rel] = list(folder.names)
    if cache is not None:
        cache.clear()
        cache.update(listed)
    return groups, problems


def discover(path: str, runs: Optional[str] = None, storage_options: Optional[dict] = None,
             listing: bool = False, cache: Optional[dict] = None) -> Discovery:
    """Walk ``path`` (a logdir, a run directory, one event file, or an fsspec URL); ``runs`` is a regex
    (re.search) on run names; ``listing``: keep every folder's file names (see :class:`Discovery`); ``cache``: a
    dict kept between walks of a local logdir, so that a folder that did not change is not listed again (the live
    loader's). FileNotFoundError when ``path`` does not exist."""
    path = os.fspath(path)
    fs = None
    root = path
    problems: List[Problem] = []
    names: Optional[Dict[str, List[str]]] = {} if listing else None
    if is_url(path):
        import fsspec
        fs, root = fsspec.core.url_to_fs(fsspec_url(path), **(storage_options or {}))
        if fs.isfile(root):
            groups = {".": [root]}
            names = None
        elif fs.isdir(root):
            root = root.rstrip("/")
            groups = {}
            for f in fs.find(root):
                if is_event_file(f) or names is not None:
                    d, _, base = f.rpartition("/")
                    rel = (os.path.relpath(d, root) if d != root else ".").replace(os.sep, "/")
                    if is_event_file(f):
                        groups.setdefault(rel, []).append(f)
                    if names is not None:
                        names.setdefault(rel, []).append(base)
        else:
            raise FileNotFoundError("no such file or directory: %s" % path)
    elif os.path.isdir(path):
        groups, problems = _walk_local(path, names, cache)
    elif os.path.exists(path):
        problem = _check_local_file(path, os.stat(path))
        if problem is not None:
            raise ValueError(str(problem))
        groups = {".": [path]}
        names = None
    else:
        raise FileNotFoundError("no such file or directory: %s" % path)
    select = re.compile(runs).search if runs is not None else None
    in_order = fs is None   # (a local walk lists each folder sorted by name already)
    found = [(run, files if in_order else sorted(files)) for run, files in sorted(groups.items())
             if select is None or select(run) is not None]
    if names is not None and not in_order:
        names = {folder: sorted(files) for folder, files in names.items()}
    return Discovery(fs, found, problems, root, names)
