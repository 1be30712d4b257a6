"""The files an embedding names (tensor, metadata, sprite), read through the event files' filesystem (local, or
fsspec for URLs): TensorBoard's TSV tensor or raw float32 of ``tensor_shape``, its metadata header rule. Used by
``EmbeddingRecord`` (``types.py``) on demand and by the Projector config loader (``projector.py``)."""
from __future__ import annotations

import os
import posixpath
from typing import Any, List, Optional, Tuple

import numpy as np

__all__ = ["read_matrix", "read_metadata", "read_bytes", "read_file", "file_exists", "join_path"]


# ------------------------------------------------------------------------------------ files

def join_path(fs, *parts: str) -> str:
    return posixpath.join(*parts) if fs is not None else os.path.join(*parts)


def file_exists(fs, path: str) -> bool:
    try:
        return fs.isfile(path) if fs is not None else os.path.isfile(path)
    except (OSError, ValueError):
        return False


def read_file(fs, path: str, limit: Optional[int] = None) -> bytes:
    if fs is None:
        with open(path, "rb") as f:
            return f.read() if limit is None else f.read(limit)
    if limit is None:
        return fs.cat_file(path)
    with fs.open(path, "rb") as f:
        return f.read(limit)


def read_bytes(record: Any, path: str) -> bytes:
    """A file of ``record``, read through its filesystem; FileNotFoundError naming the embedding."""
    try:
        return read_file(record.fs, path)
    except FileNotFoundError:
        raise FileNotFoundError("embedding %r (%s): file %s does not exist"
                                % (record.tensor_name, record.config_path, path)) from None


# ------------------------------------------------------------------------------------ tensors

def _parse_tsv(text: str, path: str) -> np.ndarray:
    """TensorBoard's ``_read_tensor_tsv_file``: a line with its newline stripped, if not empty, is a
    point's tab-separated float values."""
    rows = [line.split("\t") for line in text.split("\n") if line]
    try:
        return np.array(rows, dtype=np.float32).reshape(len(rows), -1)
    except ValueError:
        pass
    width = len(rows[0]) if rows else 0
    number = 0
    for number, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        cells = line.split("\t")
        try:
            [float(c) for c in cells]
        except ValueError as err:
            raise ValueError("%s line %d is not tab-separated numbers: %s" % (path, number, err)) from None
        if len(cells) != width:
            raise ValueError("%s line %d has %d values, the first line %d" % (path, number, len(cells), width))
    raise ValueError("%s is not a [points, dimensions] table of numbers" % path)


def _binary(data: bytes, shape, path: str) -> np.ndarray:
    if shape is None or len(shape) != 2:
        raise ValueError("%s is not UTF-8 text (TSV); read as raw float32 it needs a 2-D tensor_shape in the "
                         "projector config, which gives %s" % (path, list(shape or [])))
    n = int(shape[0]) * int(shape[1])
    if len(data) != 4 * n:
        raise ValueError("%s holds %d bytes; tensor_shape %s needs %d float32 values (%d bytes)"
                         % (path, len(data), list(shape), n, 4 * n))
    return np.frombuffer(data, dtype="<f4").astype(np.float32).reshape(int(shape[0]), int(shape[1]))


def read_matrix(record: Any) -> np.ndarray:
    """The float32 ``[N, D]`` matrix of ``record`` (see :meth:`EmbeddingRecord.matrix`)."""
    if record.tensor_path is None:
        raise ValueError("embedding %r of %s has no tensor_path: its tensor lives only in the checkpoint %r, "
                         "which the reader does not load" % (record.tensor_name, record.config_path,
                                                             record.model_checkpoint_path or "(none named)"))
    data = read_bytes(record, record.tensor_path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _binary(data, record.tensor_shape, record.tensor_path)
    return _parse_tsv(text, record.tensor_path)


def read_metadata(record: Any) -> Tuple[List[str], List[List[str]]]:
    """``(header, rows)`` of ``record``'s metadata file (see :meth:`EmbeddingRecord.metadata`)."""
    if record.metadata_path is None:
        return [], []
    data = read_bytes(record, record.metadata_path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError("metadata file %s is not UTF-8 text: %s" % (record.metadata_path, err)) from None
    lines = [line.rstrip("\r") for line in text.split("\n") if line.strip()]
    if lines and "\t" in lines[0]:
        return lines[0].split("\t"), [line.split("\t") for line in lines[1:]]
    return ["label"], [[line] for line in lines]
