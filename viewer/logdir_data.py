"""The viewer's data from what a plot or report is given: a logdir path (read through
tfevents.summaries.load_logdir), an already loaded Logdir, or a plain ``{(run, tag): record}`` mapping (handy
in notebooks and tests); and the choice of its series by run and tag regexes."""
from __future__ import annotations

import os
import re
import stat
from typing import Any, Mapping, Optional

Pattern = Optional[str]


def is_url(source: Any) -> bool:
    """Whether ``source`` is an fsspec URL (``s3://``, ``gs://``, ``memory://``, ...) rather than a local path."""
    return isinstance(source, str) and ("://" in source or source.startswith("memory:"))


def exists(path: str, storage_options: Optional[dict] = None) -> bool:
    """Whether a local path or an fsspec URL names something that exists."""
    if not is_url(path):
        return os.path.exists(path)
    import fsspec  # lazy: optional dependency (the `remote` extra), only for a URL
    from tfevents.summaries.reader.walk import fsspec_url  # lazy: the reader (numpy) only for a URL
    fs, root = fsspec.core.url_to_fs(fsspec_url(path), **(storage_options or {}))
    return fs.exists(root)


def check_logdir(path: str, watching: bool = False) -> Optional[str]:
    """Why the command line cannot read ``path`` (None when it can): a local directory, or an fsspec URL that
    exists (``watching``, the ``--watch`` re-rendering, polls local files only)."""
    if not is_url(path):
        if os.path.isdir(path):
            return None
        kind = _file_kind(path)
        return "not a directory (%s): %s" % (kind, path) if kind else "no such directory: %s" % path
    if watching:
        return "--watch follows a local directory; for %s use `tfevents watch` or `tfevents serve`" % path
    try:
        return None if exists(path) else "no such logdir: %s" % path
    except ImportError:
        return "reading %s needs fsspec (pip install 'tfevents[remote]')" % path
    except Exception as e:  # credentials, network: say what fsspec said
        return "cannot read %s: %s: %s" % (path, type(e).__name__, e)


def _file_kind(path: str) -> Optional[str]:
    """What ``path`` is when it exists and is not a directory: a FIFO, a socket, a device, a file; None when it
    does not exist."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    for is_kind, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                          (stat.S_ISBLK, "a device"), (stat.S_ISREG, "a file")):
        if is_kind(mode):
            return kind
    return "a special file"


def load(source: Any, **kwargs) -> Any:
    """A Logdir for ``source``: a path or fsspec URL is read with ``load_logdir`` (``kwargs`` go to it, such as
    ``storage_options``, ``where`` and ``archived``); a loaded Logdir is cut down to the runs ``where`` and
    ``archived`` choose (``tfevents.summaries.runs.choose``); anything else is returned as is."""
    if isinstance(source, (str, os.PathLike)):
        from tfevents.summaries import load_logdir  # lazy: the reader (numpy, protobuf), only for a path
        path = os.fspath(source)
        if not is_url(path) and not os.path.exists(path):
            raise FileNotFoundError("logdir not found: %s" % path)
        return load_logdir(path, **kwargs)
    where, archived = kwargs.get("where"), kwargs.get("archived", True)
    if (where is not None or not archived) and hasattr(source, "runs") and hasattr(source, "data"):
        from tfevents.summaries.runs.choose import choose_in  # lazy: the run table, only with a choice
        return choose_in(source, where, archived, kwargs.get("storage_options"))
    return source


def kind(source: Any, attr: str) -> dict:
    """The ``{(run, tag): ...}`` (or ``{run: ...}``) mapping of one kind from a source.

    A Mapping source is taken to already be that kind's mapping; a path is read for that kind only.
    """
    if isinstance(source, Mapping):
        return dict(source)
    if isinstance(source, (str, os.PathLike)):
        source = load(source, kinds=[attr])
    return dict(getattr(source, attr, {}) or {})


def all_runs(source: Any, mapping: Mapping) -> list[str]:
    """Every run of the source, so a run keeps its colour whatever the filters and across kinds: the runs
    under the logdir's path (even those a ``runs=`` filter left out), else the runs in ``mapping``'s keys."""
    found = {k[0] if isinstance(k, tuple) else k for k in mapping}
    found |= set(getattr(source, "runs", None) or ())
    path = getattr(source, "path", None)
    if isinstance(path, str) and os.path.isdir(path):
        try:
            from tfevents.summaries.reader import list_runs  # lazy: the reader (numpy, protobuf)
            found |= {run for run, _ in list_runs(path)[1]}
        except (ImportError, OSError, ValueError):
            pass
    return sorted(found)


def compile_pattern(pattern: Pattern, what: str):
    if pattern is None or pattern == "":
        return None
    try:
        return re.compile(pattern)
    except re.error as e:
        raise ValueError("invalid %s regex %r: %s" % (what, pattern, e)) from None


def select(mapping: Mapping, tags: Pattern = None, runs: Pattern = None) -> dict:
    """Keys ``(run, tag)`` (or ``run``) whose tag / run match the regexes (``re.search``), sorted."""
    tag_re = compile_pattern(tags, "tag")
    run_re = compile_pattern(runs, "run")
    out = {}
    for key in sorted(mapping, key=lambda k: k if isinstance(k, tuple) else (k,)):
        run, tag = key if isinstance(key, tuple) else (key, None)
        if run_re is not None and not run_re.search(run):
            continue
        if tag_re is not None and tag is not None and not tag_re.search(tag):
            continue
        out[key] = mapping[key]
    return out


def with_x_tag(tags: Pattern, x: str = "step") -> Pattern:
    """The tag regex to read with when the x axis is the tag ``x``: ``tags`` or exactly ``x`` (the x tag's series
    is needed whatever ``tags`` picks; the charts still show only ``tags``' series)."""
    if tags is None or tags == "" or x in ("step", "relative", "wall"):
        return tags
    compile_pattern(tags, "tag")
    return "(?:%s)|^%s$" % (tags, re.escape(x))
