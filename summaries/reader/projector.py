"""The reader's side of TensorBoard's Projector: ``projector_config.pbtxt`` of a run -> EmbeddingRecords.

TensorBoard's projector plugin reads no event files. For each run directory (and the logdir itself when
it is not a run) it parses ``<dir>/projector_config.pbtxt`` -- or, when present,
``<dir>/plugins/org_tensorflow_tensorboard_projector/projector_config.pbtxt``, which then replaces it
(``tensorboard.plugins.projector.visualize_embeddings`` writes there) -- a ``ProjectorConfig`` in text
format. Each ``embeddings`` entry names its tensor and the files holding it, its metadata and sprite,
relative to the config's directory; a path resolving outside that directory is refused. The tensor
file is TSV (one point a line), or raw float32 of ``tensor_shape`` when it is not UTF-8 text.

Loading checks what is cheap (the config parses, the files exist, the tensor file's first line is
numbers); matrices, metadata and sprites are read when asked for. Files go through the same
filesystem as the event files (local, or fsspec for URLs).
"""
from __future__ import annotations

import os
import posixpath
from typing import Any, Callable, Dict, List, Optional, Tuple

from google.protobuf import text_format

from tfevents.proto import plugin_projector_pb2

from .decode import Problem
from .embedding_files import file_exists, join_path, read_file
from .types import EmbeddingRecord

__all__ = ["load_embeddings", "config_path", "PROJECTOR_FILENAME"]

PROJECTOR_FILENAME = "projector_config.pbtxt"
PLUGIN_ASSETS_DIR = ("plugins", "org_tensorflow_tensorboard_projector")
_PEEK_BYTES = 1 << 16  # of the tensor file, checked at load time


def _resolve(fs, fpath: str, config_path: str) -> str:
    """``fpath`` of a config entry as an absolute path: TensorBoard's ``_rel_to_abs_asset_path``
    (relative to the config's directory, ``~`` expanded, symlinks resolved; ValueError outside it)."""
    message = "asset path %r resolves outside the config directory" % (fpath,)
    if fs is None:
        config_dir = os.path.realpath(os.path.dirname(os.path.expanduser(config_path)))
        candidate = os.path.expanduser(fpath)
        if not os.path.isabs(candidate):
            candidate = os.path.join(config_dir, candidate)
        candidate = os.path.realpath(candidate)
        try:
            inside = os.path.commonpath([config_dir, candidate]) == config_dir
        except ValueError:
            inside = False
    else:
        config_dir = posixpath.normpath(posixpath.dirname(config_path))
        if "://" in fpath:
            fpath = fs._strip_protocol(fpath)
            candidate = posixpath.normpath(fpath)
        else:
            candidate = posixpath.normpath(fpath if posixpath.isabs(fpath) else posixpath.join(config_dir, fpath))
        inside = candidate == config_dir or candidate.startswith(config_dir.rstrip("/") + "/")
    if not inside:
        raise ValueError(message)
    return candidate


def _check_tensor_file(fs, path: str) -> Optional[str]:
    """Why the start of a tensor file is not an embedding, or None (only its first line is parsed)."""
    head = read_file(fs, path, _PEEK_BYTES)
    cut = head.rfind(b"\n") if len(head) == _PEEK_BYTES else len(head)
    try:
        text = head[:cut if cut > 0 else len(head)].decode("utf-8")
    except UnicodeDecodeError:
        return None  # binary float32: checked against tensor_shape when read
    first = next((line for line in text.split("\n") if line), None)
    if first is None:
        return "the tensor file is empty"
    try:
        [float(c) for c in first.split("\t")]
    except ValueError as err:
        return "the tensor file's first line is not tab-separated numbers (%s)" % err
    return None


# ------------------------------------------------------------------------------------ configs

def config_path(fs, directory: str) -> Optional[str]:
    """The config TensorBoard takes for ``directory``: the plugin-assets one when present, else
    ``<directory>/projector_config.pbtxt``; None when neither exists."""
    found = None
    for candidate in (join_path(fs, directory, PROJECTOR_FILENAME),
                      join_path(fs, directory, *PLUGIN_ASSETS_DIR, PROJECTOR_FILENAME)):
        if file_exists(fs, candidate):
            found = candidate
    return found


def load_embeddings(fs: Any, directory: str, accept: Optional[Callable[[str], bool]] = None
                    ) -> Tuple[Dict[str, EmbeddingRecord], List[Problem]]:
    """``({tensor_name: EmbeddingRecord}, problems)`` of the projector config of one run directory.

    ``accept(tensor_name)`` chooses embeddings (the reader's ``tags=``). A config that cannot be read or
    parsed, a path outside the config's directory, a missing file or a tensor file that does not start
    with numbers is a Problem naming the file; the entry is kept when it can still be read in part.
    """
    path = config_path(fs, directory)
    if path is None:
        return {}, []
    problems: List[Problem] = []
    config = plugin_projector_pb2.ProjectorConfig()
    try:
        text_format.Parse(read_file(fs, path).decode("utf-8"), config)
    except OSError as err:
        return {}, [Problem(path, None, "unreadable", "projector config: %s" % err)]
    except (text_format.ParseError, UnicodeDecodeError) as err:
        return {}, [Problem(path, None, "unparseable", "not a ProjectorConfig in text format: %s" % err)]
    out: Dict[str, EmbeddingRecord] = {}
    for entry in config.embeddings:
        name = entry.tensor_name
        if name.endswith(":0"):
            name = name[:-2]
        if not name and entry.tensor_path:
            name = posixpath.basename(entry.tensor_path.replace("\\", "/"))
        if not name or name in out or (accept is not None and not accept(name)):
            continue  # nameless defaults for checkpoint tensors; TensorBoard serves the first of a name
        record = EmbeddingRecord(name, path, tensor_shape=tuple(entry.tensor_shape) or None,
                                 model_checkpoint_path=config.model_checkpoint_path, fs=fs)
        resolved = {}
        for field_name, value in (("tensor_path", entry.tensor_path), ("metadata_path", entry.metadata_path),
                                  ("sprite_path", entry.sprite.image_path)):
            if not value:
                continue
            try:
                resolved[field_name] = _resolve(fs, value, path)
            except ValueError as err:
                problems.append(Problem(path, None, "unparseable", "embedding %r: %s; not read" % (name, err)))
                continue
            if not file_exists(fs, resolved[field_name]):
                problems.append(Problem(resolved[field_name], None, "unreadable", "%s of embedding %r (%s) does "
                                        "not exist" % (field_name.replace("_", " "), name, path)))
        if entry.tensor_path and "tensor_path" not in resolved:
            continue  # refused: TensorBoard skips it too
        record.tensor_path = resolved.get("tensor_path")
        record.metadata_path = resolved.get("metadata_path")
        record.sprite_path = resolved.get("sprite_path")
        if record.sprite_path is not None and len(entry.sprite.single_image_dim) == 2:
            record.single_image_dim = tuple(int(d) for d in entry.sprite.single_image_dim)
        if record.tensor_path is not None and file_exists(fs, record.tensor_path):
            try:
                why = _check_tensor_file(fs, record.tensor_path)
            except OSError as err:
                why = "cannot be read: %s" % err
            if why:
                problems.append(Problem(record.tensor_path, None, "unparseable", "tensor file of embedding %r: %s"
                                        % (name, why)))
        out[name] = record
    return out, problems
