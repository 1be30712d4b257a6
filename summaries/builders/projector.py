"""Embedding Projector files (tensorboardX/torch ``add_embedding``): TSV tensors and metadata, a
sprite PNG and ``projector_config.pbtxt``, laid out in the logdir as tensorboardX writes them.

The projector reads no event files: TensorBoard's plugin finds ``<run>/projector_config.pbtxt``
(a ``ProjectorConfig`` in text format) and the files its ``embeddings`` entries name, relative to
the run directory. One call writes::

    <logdir>/<global_step, zero-padded to 5 digits>/<tag, with % / \\ escaped>/tensors.tsv
                                                                            /metadata.tsv  (metadata)
                                                                            /sprite.png    (label_img)
    <logdir>/projector_config.pbtxt   (the existing entries kept, this one added or replaced)

Every file is replaced atomically, the config last, so TensorBoard never sees an entry whose
files are missing or half written. Pillow is imported only for a sprite.
"""
from __future__ import annotations

import math
import operator
import os
import posixpath
import threading
import warnings
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np
from google.protobuf import text_format

from tfevents.proto import plugin_projector_pb2

from ..atomic import atomic_write
from .common import ShapeError, as_array, as_numeric_array, check_tag, require_finite
from .media import encode_png, make_grid

__all__ = ["write_embedding", "embedding_subdir", "PROJECTOR_FILENAME", "MAX_SPRITE_SIZE"]

PROJECTOR_FILENAME = "projector_config.pbtxt"  # tensorboard.plugins.projector.metadata.PROJECTOR_FILENAME
MAX_SPRITE_SIZE = 8192  # pixels a side that TensorBoard's frontend loads (tensorboardX#516)
_FORBIDDEN_IN_CELLS = ("\t", "\n", "\r")
_CONFIG_LOCK = threading.Lock()  # one read-modify-write of a projector_config.pbtxt at a time


def embedding_subdir(tag: str, global_step: int) -> str:
    """``'<step>/<tag>'`` relative to the logdir: ``str(step).zfill(5)``, and the tag with ``%``, ``/``
    and ``\\`` written as ``%25``, ``%2f``, ``%5c`` (tensorboardX's ``_encode``), so any tag is one
    directory."""
    encoded = tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")
    if encoded in (".", "..") or "\0" in encoded:
        raise ValueError("tag %r cannot name an embedding directory" % (tag,))
    return "%s/%s" % (str(global_step).zfill(5), encoded)


# ------------------------------------------------------------------------------------------ tensors

def _tensor_tsv(mat: Any) -> Tuple[bytes, int]:
    """tensors.tsv of a ``[N, D]`` matrix (one row a line, values ``str(x.item())``, tab-separated) and N."""
    array = as_numeric_array(mat, "mat")
    if array.dtype.kind == "b":
        raise TypeError("mat must hold numbers, got dtype bool")
    if array.ndim != 2:
        raise ValueError("mat must be 2-D [points, dimensions], got shape %s" % (array.shape,))
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError("mat is empty (shape %s)" % (array.shape,))
    require_finite(array, "mat")
    lines = ["\t".join(map(str, row)) + "\n" for row in array.tolist()]
    return "".join(lines).encode("ascii"), array.shape[0]


# ----------------------------------------------------------------------------------------- metadata

def _is_row(item: Any) -> bool:
    if isinstance(item, (list, tuple)):
        return True
    if isinstance(item, np.ndarray) or (type(item).__module__ or "").startswith("torch"):
        return getattr(item, "ndim", 0) >= 1
    return False


def _cell(value: Any, where: str) -> str:
    """One metadata value as text: str kept, bytes decoded as UTF-8, numbers and numpy scalars as
    ``str()`` prints them, a 0-d numpy/torch tensor as its value."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("%s: bytes that are not UTF-8: %r" % (where, value)) from None
    elif isinstance(value, np.ndarray) or (type(value).__module__ or "").startswith("torch"):
        value = as_array(value, where)[()]
    elif value is None or isinstance(value, (list, tuple, dict, set)):
        raise TypeError("%s must be a str or a number, got %s" % (where, type(value).__name__))
    text = value if isinstance(value, str) else str(value)
    if any(c in text for c in _FORBIDDEN_IN_CELLS):
        raise ValueError("%s contains a tab or line break, which would break the TSV: %r" % (where, text))
    return text


def _items(value: Any, name: str) -> List[Any]:
    """The elements of a list/tuple, or of a numpy/torch array along its first axis."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, np.ndarray) or (type(value).__module__ or "").startswith("torch"):
        array = as_array(value, name)
        if array.ndim == 0:
            raise TypeError("%s must be a sequence, got a 0-d array" % name)
        return list(array)
    raise TypeError("%s must be a list, tuple or array, got %s" % (name, type(value).__name__))


def _metadata_tsv(metadata: Any, metadata_header: Optional[Sequence[Any]], num_points: int) -> bytes:
    """metadata.tsv: one line per point; with several columns a header row first."""
    rows = []
    for i, item in enumerate(_items(metadata, "metadata")):
        where = "metadata[%d]" % i
        if _is_row(item):
            rows.append([_cell(v, "%s[%d]" % (where, j)) for j, v in enumerate(_items(item, where))])
        else:
            rows.append([_cell(item, where)])
    if len(rows) != num_points:
        raise ValueError("metadata has %d rows but mat has %d points (one label or row per point)"
                         % (len(rows), num_points))
    columns = len(rows[0])
    for i, row in enumerate(rows):
        if not row:
            raise ValueError("metadata[%d] is an empty row" % i)
        if len(row) != columns:
            raise ValueError("metadata[%d] has %d values, metadata[0] has %d (every row needs one per column)"
                             % (i, len(row), columns))
    header = []
    if metadata_header is not None:
        header = [_cell(v, "metadata_header[%d]" % j) for j, v in enumerate(_items(metadata_header,
                                                                                    "metadata_header"))]
    if header and len(header) != columns:
        raise ValueError("metadata_header has %d names but the metadata rows have %d columns"
                         % (len(header), columns))
    for i, row in enumerate(rows):
        if not "".join(row).strip():
            raise ValueError("metadata[%d] is blank (%r): TensorBoard's projector skips blank lines, so the labels "
                             "would no longer line up with the points" % (i, row if columns > 1 else row[0]))
    if columns > 1:
        if header and not "".join(header).strip():
            raise ValueError("metadata_header is blank: TensorBoard's projector would skip it")
        if not header:
            raise ValueError("metadata rows have %d columns: pass metadata_header with their names "
                             "(TensorBoard reads a multi-column metadata.tsv only with a header row)" % columns)
        rows.insert(0, header)
    # One column: no header row -- TensorBoard takes a first line without a tab as a point's label.
    return "".join("\t".join(row) + "\n" for row in rows).encode("utf-8")


# ------------------------------------------------------------------------------------------- sprite

def check_sprite_shape(shape: Tuple[int, ...], num_points: int) -> None:
    """``label_img``'s shape: ``[N, C, H, W]``, N = ``num_points``, C = 1 or 3, square non-empty images
    (ValueError; a non-square image is a ``ShapeError``, an AssertionError too, as the peers ``assert`` it)."""
    if len(shape) != 4:
        raise ValueError("label_img must be 4-D [N, C, H, W], got shape %s" % (shape,))
    n, channels, height, width = shape
    if n != num_points:
        raise ValueError("label_img has %d images but mat has %d points (one image per point)" % (n, num_points))
    if channels not in (1, 3):
        raise ValueError("label_img must have 1 or 3 channels on axis 1 ([N, C, H, W]), got shape %s%s"
                         % (shape, " (for [N, H, W, C] pass label_img.transpose(0, 3, 1, 2))"
                            if shape[3] in (1, 3) else ""))
    if height != width or height == 0:
        raise ShapeError("label_img images must be square and non-empty (TensorBoard's projector needs "
                         "square sprite cells), got H=%d, W=%d" % (height, width))


def _sprite_png(label_img: Any, num_points: int) -> Tuple[bytes, int, int]:
    """sprite.png of ``[N, C, H, W]`` images and the (width, height) of one image.

    ceil(sqrt(N)) images a row, row-major, in a square RGB image whose unused bottom rows are black
    (tensorboardX's and torch's ``make_sprite``); one channel is repeated into three.
    """
    array = as_array(label_img, "label_img")
    check_sprite_shape(array.shape, num_points)
    n, channels, height, width = array.shape
    if array.dtype == np.uint8:
        pixels = array
    elif array.dtype.kind == "f":
        require_finite(array, "label_img")
        # float64 products, as tensorboardX's float64 canvas: uint8(clip(255 x, 0, 255)), truncated
        pixels = (array.astype(np.float64) * 255.0).clip(0, 255).astype(np.uint8)
    else:
        raise TypeError("label_img must be uint8 (0..255) or float (0..1), got dtype %s" % array.dtype)
    per_row = math.isqrt(n - 1) + 1  # ceil(sqrt(n)), exactly
    side = per_row * width
    if side > MAX_SPRITE_SIZE:
        raise ValueError("the sprite of %d images of %dx%d pixels would be %d pixels wide; TensorBoard loads "
                         "at most %d (use fewer or smaller images)" % (n, width, height, side, MAX_SPRITE_SIZE))
    nhwc = pixels.transpose(0, 2, 3, 1)
    if channels == 1:
        nhwc = np.repeat(nhwc, 3, axis=3)
    grid = make_grid(nhwc, ncols=per_row)
    square = np.zeros((side, side, 3), dtype=np.uint8)
    square[:grid.shape[0]] = grid
    return encode_png(square), width, height


# ------------------------------------------------------------------------------------------- config

def _add_to_config(logdir: str, entry: plugin_projector_pb2.EmbeddingInfo, fs: Any = None) -> None:
    """Put ``entry`` in ``<logdir>/projector_config.pbtxt``: in place of the entries with its
    tensor_path (the first of them), else at the end; other entries and fields kept. (``fs``: the
    fsspec filesystem ``logdir`` is on, None for a local folder.)"""
    path = posixpath.join(logdir, PROJECTOR_FILENAME) if fs is not None else os.path.join(logdir, PROJECTOR_FILENAME)
    with _CONFIG_LOCK:
        config = plugin_projector_pb2.ProjectorConfig()
        try:
            if fs is not None:
                text_format.Parse(fs.cat_file(path).decode("utf-8"), config)
            else:
                with open(path, "r", encoding="utf-8") as f:
                    text_format.Parse(f.read(), config)
        except FileNotFoundError:
            pass
        except (text_format.ParseError, UnicodeDecodeError) as err:
            raise ValueError("%s is not a ProjectorConfig in text format (%s); fix or remove it"
                             % (path, err)) from None
        entries = list(config.embeddings)
        same = [i for i, e in enumerate(entries) if e.tensor_path == entry.tensor_path]
        if same:
            entries[same[0]] = entry
            entries = [e for i, e in enumerate(entries) if i not in same[1:]]
        else:
            entries.append(entry)
        del config.embeddings[:]
        config.embeddings.extend(entries)
        _write_file(path, text_format.MessageToString(config).encode("utf-8"), fs)


def _write_file(path: str, content: bytes, fs: Any = None) -> None:
    """Replace the file ``path`` atomically (on ``fs``, an fsspec filesystem: one upload, atomic in an object store)."""
    if fs is None:
        atomic_write(path, content)
    else:
        fs.pipe_file(path, content)


def write_embedding(logdir: Union[str, "os.PathLike[str]"], mat: Any, metadata: Any = None, label_img: Any = None,
                    global_step: Optional[int] = None, tag: str = "default",
                    metadata_header: Optional[Sequence[Any]] = None, fs: Any = None) -> str:
    """Write one embedding for TensorBoard's Projector under ``logdir`` (tensorboardX ``add_embedding``);
    return its directory ``<logdir>/<step:05>/<escaped tag>`` (see :func:`embedding_subdir`). With ``fs``
    (an fsspec filesystem), ``logdir`` is a path on it and the directory is returned as a URL.

    ``mat``: ``[N, D]`` real numbers, one row a point (written as ``str(x.item())``, so float32
    values print as their exact float64 value). ``metadata``: N labels (str, numbers, numpy
    scalars, a 1-D array) -- or N rows of several columns (lists/tuples or a 2-D array) together with
    ``metadata_header``, their column names, written as the header row. A one-column metadata.tsv
    has no header row (TensorBoard would read it as a label), so a header of one name is not
    written. Labels hold no tab or line break, and no line may be blank (TensorBoard skips blank
    lines). ``label_img``: ``[N, C, H, W]`` square images, C = 1 or 3, uint8 (kept) or float in
    [0, 1] (``uint8(clip(255 x))``), tiled into ``sprite.png`` (at most 8192 pixels a side).
    ``global_step``: an integer, None = 0. ``tag``: any non-empty str (the entry's tensor name is
    ``'<tag>:<step:05>'``).

    ``projector_config.pbtxt`` keeps every earlier entry (other steps, tags, or files by other
    writers); an entry for the same directory is replaced, not duplicated. Writing into an existing
    embedding directory warns (as tensorboardX) and replaces its files. All arguments are checked
    before anything is written: TypeError/ValueError naming the argument.
    """
    if not isinstance(logdir, (str, os.PathLike)):
        raise TypeError("logdir must be a path, got %s" % type(logdir).__name__)
    logdir = os.fspath(logdir)
    if not isinstance(logdir, str) or not logdir:
        raise ValueError("logdir must be a non-empty str path, got %r" % (logdir,))
    check_tag(tag, "tag")
    if global_step is None:
        global_step = 0
    else:
        try:
            global_step = operator.index(global_step)
        except TypeError:
            raise TypeError("global_step must be an integer, got %s" % type(global_step).__name__) from None
    subdir = embedding_subdir(tag, global_step)
    tensors, num_points = _tensor_tsv(mat)
    entry = plugin_projector_pb2.EmbeddingInfo(tensor_name="%s:%s" % (tag, str(global_step).zfill(5)),
                                               tensor_path=posixpath.join(subdir, "tensors.tsv"))
    files = []
    if metadata is not None:
        files.append(("metadata.tsv", _metadata_tsv(metadata, metadata_header, num_points)))
        entry.metadata_path = posixpath.join(subdir, "metadata.tsv")
    elif metadata_header is not None:
        raise ValueError("metadata_header is given without metadata")
    if label_img is not None:
        sprite, width, height = _sprite_png(label_img, num_points)
        files.append(("sprite.png", sprite))
        entry.sprite.image_path = posixpath.join(subdir, "sprite.png")
        entry.sprite.single_image_dim.extend([width, height])
    files.append(("tensors.tsv", tensors))

    if fs is not None:
        directory = posixpath.join(logdir, subdir)
        exists, join = fs.isdir(directory), posixpath.join
    else:
        directory = os.path.join(logdir, *subdir.split("/"))
        exists, join = os.path.isdir(directory), os.path.join
    if exists:
        warnings.warn("embedding directory %s exists (same tag and global_step as before?): its files are "
                      "replaced" % directory, UserWarning, stacklevel=2)
    if fs is None:
        os.makedirs(directory, exist_ok=True)
    for name, content in files:
        _write_file(join(directory, name), content, fs)
    _add_to_config(logdir, entry, fs)
    return directory if fs is None else fs.unstrip_protocol(directory)
