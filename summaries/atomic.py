"""Atomic file replacement: write beside the target, fsync, rename over it.

A reader, or a crash at any moment, sees either the old file or the whole new one, never a part.
Used by ``write_graph``, the Saver's checkpoints, and the viewer's reports and figures.
"""
from __future__ import annotations

import os
import uuid
from typing import BinaryIO, Callable, Union

__all__ = ["atomic_write"]


def atomic_write(path: Union[str, os.PathLike], content: Union[bytes, Callable[[BinaryIO], None]],
                 durable: bool = True) -> str:
    """Replace ``path`` with ``content`` (bytes, or a function writing to a binary file); return the path.

    The temporary file ``<path>.tmp<hex>`` (as TF's ``atomic_write_string_to_file`` names it) is
    created with mode 0o666 less the umask, like ``open()``. ``durable`` fsyncs the file before the
    rename and the directory after it, so the new content survives a power cut, not only a crash.
    """
    path = os.fspath(path)
    tmp = "%s.tmp%s" % (path, uuid.uuid4().hex)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(content):
                content(f)
            else:
                f.write(content)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        _fsync_dir(os.path.dirname(path) or ".")
    return path


def _fsync_dir(directory: str) -> None:
    """Make a rename in ``directory`` durable (best effort: not every file system allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
