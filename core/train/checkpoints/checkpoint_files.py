"""Checkpoint files, as ``tf.train`` reads and lists them: write and read a checkpoint in either format
(``read_checkpoint``, ``CheckpointReader``, ``load_checkpoint``, ``list_variables``, ``load_variable``,
``checkpoint_exists``), and the ``checkpoint`` state file (``update_checkpoint_state``, ``get_checkpoint_state``,
``latest_checkpoint``).

On-disk formats
---------------
By default (``write_version=SaverDef.V2``) a checkpoint with prefix ``P`` (``/dir/model.ckpt-100``) is written
in TensorFlow's own V2 format (``tensor_bundle.py``): ``P.index`` (an SSTable of the bundle header and one entry
per variable) and ``P.data-00000-of-00001`` (the raw bytes), byte for byte what TF writes for the same values,
so ``tf.train.load_checkpoint``/``list_variables`` and a TF1 ``Saver.restore`` read it and ours reads TF's.

``write_version=SaverDef.V1`` writes the portable format of earlier tfevents versions, which is still read:
ONE file ``P.npz``, an uncompressed zip that ``numpy.load(P + ".npz", allow_pickle=False)`` reads, holding

- ``manifest.json``: ``{"format": "tfevents.checkpoint", "version": 1, "variables": {name: {"entry":
  "arrays/00000.npy", "dtype": "float32", "shape": [784, 300]}, ...}}``
- ``arrays/NNNNN.npy``: one numpy ``.npy`` array per saved name (never pickled; object/string arrays are
  refused).

The state file ``<dir>/checkpoint``::

    model_checkpoint_path: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-100"
    all_model_checkpoint_paths: "model.ckpt-200"
"""
from __future__ import annotations

import json
import os
import zipfile
from typing import Optional

import numpy as np

from tfevents.summaries.atomic import atomic_write
from ...framework.dtypes import as_dtype
from ...framework.errors import DataLossError, NotFoundError
from . import tensor_bundle

FORMAT, VERSION, SUFFIX = "tfevents.checkpoint", 1, ".npz"


# ---------------------------------------------------------------------------------------------------------
# files


def write_checkpoint(prefix: str, values: dict) -> str:
    """Write ``{name: array}`` as checkpoint ``prefix`` (see the module docstring); returns the file path."""
    manifest = {"format": FORMAT, "version": VERSION, "variables": {}}
    arrays = []
    for i, (name, value) in enumerate(values.items()):
        arr = np.asarray(value)
        if arr.dtype.hasobject:
            raise TypeError("Cannot save %r: only numeric and bool variables can be checkpointed (got %s)"
                            % (name, arr.dtype))
        entry = "arrays/%05d.npy" % i
        manifest["variables"][name] = {"entry": entry, "dtype": arr.dtype.name, "shape": list(arr.shape)}
        arrays.append((entry, arr))

    def write(f):
        with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            zf.writestr("manifest.json", json.dumps(manifest, indent=1, sort_keys=True))
            for entry, arr in arrays:
                with zf.open(entry, "w", force_zip64=arr.nbytes > 2 ** 30) as out:
                    np.lib.format.write_array(out, arr, allow_pickle=False)
    path = prefix + SUFFIX
    atomic_write(path, write)
    return path


def read_checkpoint(prefix: str, names: Optional[list] = None) -> dict:
    """``{name: array}`` of checkpoint ``prefix`` in either format (all names, or ``names``; a missing one is
    NotFoundError)."""
    if tensor_bundle.bundle_exists(prefix):
        reader = tensor_bundle.BundleReader(prefix)
        return {name: reader.read(name) for name in (sorted(reader.entries) if names is None else names)}
    path = prefix + SUFFIX
    try:
        with zipfile.ZipFile(path) as zf:
            manifest = json.loads(zf.read("manifest.json"))
            if manifest.get("format") != FORMAT:
                raise ValueError("not a %s file (format %r)" % (FORMAT, manifest.get("format")))
            table = manifest["variables"]
            wanted = list(table) if names is None else names
            out = {}
            for name in wanted:
                if name not in table:
                    raise NotFoundError(None, "Key %s not found in checkpoint %s (it has: %s)"
                                        % (name, prefix, ", ".join(sorted(table)) or "no variables"))
                with zf.open(table[name]["entry"]) as f:
                    out[name] = np.lib.format.read_array(f, allow_pickle=False)
            return out
    except (zipfile.BadZipFile, KeyError, ValueError, EOFError) as e:
        raise DataLossError(None, "Unable to read checkpoint %s: %s: %s" % (path, type(e).__name__, e)) from None


def _checkpoint_file(prefix: str) -> Optional[str]:
    """The file that says checkpoint ``prefix`` exists (``P.index`` for V2, ``P.npz``), or None."""
    for path in (tensor_bundle.index_path(prefix), prefix + SUFFIX):
        if os.path.isfile(path):
            return path
    return None


def checkpoint_exists(checkpoint_prefix: str) -> bool:
    """Whether a checkpoint (V2 or ``.npz``) with this prefix exists."""
    return _checkpoint_file(checkpoint_prefix) is not None


def get_checkpoint_mtimes(checkpoint_prefixes: list) -> list:
    """The modification times of the given checkpoints (of ``P.index`` for V2; whole seconds, as TF's POSIX file
    system reports them); missing ones are skipped."""
    out = []
    for prefix in checkpoint_prefixes:
        path = _checkpoint_file(prefix)
        if path is not None:
            out.append(float(os.stat(path).st_mtime_ns // 10 ** 9))
    return out


def _files(prefix: str, meta_graph_suffix: str = "meta") -> list:
    return [tensor_bundle.index_path(prefix), tensor_bundle.data_path(prefix), prefix + SUFFIX,
            prefix + "." + meta_graph_suffix]


def list_variables(ckpt_dir_or_file: str) -> list:
    """``[(name, shape)]`` of a checkpoint (a prefix, or a directory: its latest checkpoint), sorted."""
    reader = CheckpointReader(_resolve(ckpt_dir_or_file))
    return sorted(reader.get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
    name = name[:-2] if name.endswith(":0") else name
    return read_checkpoint(_resolve(ckpt_dir_or_file), [name])[name]


class CheckpointReader:
    """``tf.train.NewCheckpointReader(prefix)``: the names, shapes and values of one checkpoint."""

    def __init__(self, prefix: str):
        self._prefix = prefix
        self._bundle = None
        if tensor_bundle.bundle_exists(prefix):
            self._bundle = tensor_bundle.BundleReader(prefix)
            names = list(self._bundle.entries)
            self._shapes = {n: self._bundle.shape(n) for n in names}
            self._dtypes = {}
            for n in names:
                try:
                    self._dtypes[n] = as_dtype(self._bundle.dtype_enum(n))
                except TypeError:          # a dtype core has no DType for (int8, complex, ...): its numpy one
                    try:
                        self._dtypes[n] = self._bundle.dtype(n)
                    except NotImplementedError:
                        self._dtypes[n] = None
        elif os.path.isfile(prefix + SUFFIX):
            try:
                with zipfile.ZipFile(prefix + SUFFIX) as zf:
                    table = json.loads(zf.read("manifest.json"))["variables"]
                self._shapes = {n: list(info["shape"]) for n, info in table.items()}
                self._dtypes = {n: as_dtype(np.dtype(info["dtype"])) for n, info in table.items()}
            except (zipfile.BadZipFile, KeyError, ValueError, TypeError) as e:
                raise DataLossError(None, "Unable to read checkpoint %s%s: %s: %s"
                                    % (prefix, SUFFIX, type(e).__name__, e)) from None
        else:
            raise NotFoundError(None, "Unsuccessful TensorSliceReader constructor: Failed to find any matching "
                                      "files for %s (no %s.index or %s%s)" % (prefix, prefix, prefix, SUFFIX))

    def get_variable_to_shape_map(self) -> dict:
        return {n: list(s) for n, s in self._shapes.items()}

    def get_variable_to_dtype_map(self) -> dict:
        return dict(self._dtypes)

    def has_tensor(self, name: str) -> bool:
        return name in self._shapes

    def get_tensor(self, name: str) -> np.ndarray:
        if self._bundle is not None:
            value = self._bundle.read(name)
            return value.item() if value.dtype == object and value.ndim == 0 else value   # bytes, as TF
        return read_checkpoint(self._prefix, [name])[name]


NewCheckpointReader = CheckpointReader


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """``tf.train.load_checkpoint``: a reader of a checkpoint prefix, or of a directory's latest checkpoint."""
    return CheckpointReader(_resolve(ckpt_dir_or_file))


def _resolve(ckpt_dir_or_file: str) -> str:
    if os.path.isdir(ckpt_dir_or_file):
        latest = latest_checkpoint(ckpt_dir_or_file)
        if latest is None:
            raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given directory %s"
                             % ckpt_dir_or_file)
        return latest
    for suffix in (SUFFIX, ".index"):
        if ckpt_dir_or_file.endswith(suffix) and not checkpoint_exists(ckpt_dir_or_file):
            return ckpt_dir_or_file[:-len(suffix)]
    return ckpt_dir_or_file


# ---------------------------------------------------------------------------------------------------------
# the "checkpoint" state file


class CheckpointState:
    """TF's CheckpointState: ``model_checkpoint_path`` and ``all_model_checkpoint_paths``."""

    def __init__(self, model_checkpoint_path: str = "", all_model_checkpoint_paths: Optional[list] = None):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths or [])

    def __repr__(self) -> str:
        return "CheckpointState(%r, %r)" % (self.model_checkpoint_path, self.all_model_checkpoint_paths)


def _quote(s: str) -> str:
    return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) < 2 or s[0] != '"' or s[-1] != '"':
        raise ValueError("expected a quoted string, got %r" % s)
    out, i, body = [], 0, s[1:-1]
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            i += 1
            c = {"n": "\n", "t": "\t"}.get(body[i], body[i])
        out.append(c)
        i += 1
    return "".join(out)


def update_checkpoint_state(save_dir: str, model_checkpoint_path: str, all_model_checkpoint_paths: list,
                            latest_filename: Optional[str] = None, save_relative_paths: bool = False) -> None:
    """Rewrite ``<save_dir>/checkpoint`` atomically. Paths are written relative to ``save_dir`` when
    ``save_relative_paths`` or when ``save_dir`` itself is relative (TF's rule)."""
    def rel(p):
        if save_relative_paths or (not os.path.isabs(save_dir) and not os.path.isabs(p)):
            return os.path.relpath(p, save_dir)
        return p
    lines = ["model_checkpoint_path: " + _quote(rel(model_checkpoint_path))]
    lines += ["all_model_checkpoint_paths: " + _quote(rel(p)) for p in all_model_checkpoint_paths]
    text = ("\n".join(lines) + "\n").encode("utf-8")
    atomic_write(os.path.join(save_dir, latest_filename or "checkpoint"), lambda f: f.write(text))


def get_checkpoint_state(checkpoint_dir: str, latest_filename: Optional[str] = None) -> Optional[CheckpointState]:
    """The parsed ``checkpoint`` file of ``checkpoint_dir`` (relative paths joined to it), or None."""
    path = os.path.join(checkpoint_dir, latest_filename or "checkpoint")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    state = CheckpointState()
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, _, value = line.partition(":")
        try:
            value = _unquote(value)
        except ValueError as e:
            raise ValueError("%s:%d: %s" % (path, n, e)) from None
        if not os.path.isabs(value):
            value = os.path.join(checkpoint_dir, value)
        if key.strip() == "model_checkpoint_path":
            state.model_checkpoint_path = value
        elif key.strip() == "all_model_checkpoint_paths":
            state.all_model_checkpoint_paths.append(value)
    if not state.model_checkpoint_path:
        raise ValueError("Invalid checkpoint state loaded from %s" % path)
    return state


def latest_checkpoint(checkpoint_dir: str, latest_filename: Optional[str] = None) -> Optional[str]:
    """The prefix of the newest checkpoint recorded in ``checkpoint_dir`` (None if none exists)."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and checkpoint_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    return None


