"""``tf.train.Saver``: save and restore variable values, keep the last ``max_to_keep`` checkpoints and a
TF-style ``checkpoint`` state file (``latest_checkpoint``).

On-disk format
--------------
A checkpoint with prefix ``P`` (``/dir/model.ckpt-100``) is ONE file, ``P.npz``: an uncompressed zip that
``numpy.load(P + ".npz", allow_pickle=False)`` reads, holding

- ``manifest.json``: ``{"format": "tfevents.checkpoint", "version": 1, "variables": {name: {"entry":
  "arrays/00000.npy", "dtype": "float32", "shape": [784, 300]}, ...}}``
- ``arrays/NNNNN.npy``: one numpy ``.npy`` array per saved name (never pickled; object/string arrays are
  refused).

``save`` writes the file under a temporary name, fsyncs it, ``os.replace``-s it into place and fsyncs the
directory; only then is the ``checkpoint`` state file (TF's text format, also replaced atomically)
updated, and only then are checkpoints beyond ``max_to_keep`` deleted. A crash at any point leaves the
previous checkpoint and the state file pointing to it intact. ``P.meta`` (a MetaGraphDef with the GraphDef)
is written the same way when ``write_meta_graph``.

The state file ``<dir>/checkpoint``::

    model_checkpoint_path: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-100"
    all_model_checkpoint_paths: "model.ckpt-200"
"""
from __future__ import annotations

import json
import os
import time
import zipfile
from typing import Any, Optional

import numpy as np

from ...summaries._atomic import atomic_write
from ..errors import DataLossError, InvalidArgumentError, NotFoundError
from ..graph import get_default_graph
from ..variables import Variable, global_variables

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
    """``{name: array}`` of checkpoint ``prefix`` (all names, or ``names``; a missing one is NotFoundError)."""
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


def checkpoint_exists(checkpoint_prefix: str) -> bool:
    return os.path.isfile(checkpoint_prefix + SUFFIX)


def list_variables(ckpt_dir_or_file: str) -> list:
    """``[(name, shape)]`` of a checkpoint (a prefix, or a directory: its latest checkpoint), sorted."""
    prefix = _resolve(ckpt_dir_or_file)
    with zipfile.ZipFile(prefix + SUFFIX) as zf:
        table = json.loads(zf.read("manifest.json"))["variables"]
    return sorted((name, info["shape"]) for name, info in table.items())


def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
    name = name[:-2] if name.endswith(":0") else name
    return read_checkpoint(_resolve(ckpt_dir_or_file), [name])[name]


class CheckpointReader:
    """``tf.train.NewCheckpointReader(prefix)``: the names, shapes and values of one checkpoint."""

    def __init__(self, prefix: str):
        if not checkpoint_exists(prefix):
            raise NotFoundError(None, "Unsuccessful TensorSliceReader constructor: Failed to find any matching "
                                      "files for %s (no %s%s)" % (prefix, prefix, SUFFIX))
        self._prefix = prefix
        self._shapes = dict(list_variables(prefix))

    def get_variable_to_shape_map(self) -> dict:
        return dict(self._shapes)

    def get_variable_to_dtype_map(self) -> dict:
        with zipfile.ZipFile(self._prefix + SUFFIX) as zf:
            table = json.loads(zf.read("manifest.json"))["variables"]
        from ..dtypes import as_dtype
        return {name: as_dtype(np.dtype(info["dtype"])) for name, info in table.items()}

    def has_tensor(self, name: str) -> bool:
        return name in self._shapes

    def get_tensor(self, name: str) -> np.ndarray:
        return read_checkpoint(self._prefix, [name])[name]


NewCheckpointReader = CheckpointReader


def _resolve(ckpt_dir_or_file: str) -> str:
    if os.path.isdir(ckpt_dir_or_file):
        latest = latest_checkpoint(ckpt_dir_or_file)
        if latest is None:
            raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given directory %s"
                             % ckpt_dir_or_file)
        return latest
    return ckpt_dir_or_file[:-len(SUFFIX)] if ckpt_dir_or_file.endswith(SUFFIX) else ckpt_dir_or_file


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


# ---------------------------------------------------------------------------------------------------------
# Saver


def _name_map(var_list: Any) -> dict:
    if var_list is None:
        var_list = global_variables()
    if isinstance(var_list, dict):
        items = list(var_list.items())
    else:
        items = []
        for v in var_list:
            if not isinstance(v, Variable):
                raise TypeError("Variable to save is not a Variable: %r" % (v,))
            items.append((v.op.name, v))
    out = {}
    for name, v in items:
        if not isinstance(v, Variable):
            raise TypeError("Variable to save is not a Variable: %r (for name %r)" % (v, name))
        if name in out:
            raise ValueError("At least two variables have the same name: %s" % name)
        out[name] = v
    return out


class Saver:
    """Saves and restores variables (``var_list``: None = all global variables, a list, or
    ``{checkpoint name: variable}``)."""

    def __init__(self, var_list: Any = None, reshape: bool = False, sharded: bool = False,
                 max_to_keep: Optional[int] = 5, keep_checkpoint_every_n_hours: float = 10000.0,
                 name: Optional[str] = None, restore_sequentially: bool = False, saver_def: Any = None,
                 builder: Any = None, defer_build: bool = False, allow_empty: bool = False,
                 write_version: int = 2, pad_step_number: bool = False, save_relative_paths: bool = False,
                 filename: Optional[str] = None):
        self._var_list = var_list
        self._vars = None if defer_build else _name_map(var_list)
        if self._vars is not None and not self._vars and not allow_empty:
            raise ValueError("No variables to save")
        self._max_to_keep = max_to_keep
        self._keep_every = keep_checkpoint_every_n_hours * 3600.0
        self._next_keep_time = time.time() + self._keep_every
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._last_checkpoints: list = []      # [(prefix, time)]
        self._graph = get_default_graph()

    def build(self) -> None:
        if self._vars is None:
            self._vars = _name_map(self._var_list)

    @property
    def last_checkpoints(self) -> list:
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time: list) -> None:
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths: list) -> None:
        self._last_checkpoints = [(p, os.path.getmtime(p + SUFFIX)) for p in checkpoint_paths
                                  if checkpoint_exists(p)]

    def save(self, sess: Any, save_path: str, global_step: Any = None, latest_filename: Optional[str] = None,
             meta_graph_suffix: str = "meta", write_meta_graph: bool = True, write_state: bool = True,
             strip_default_attrs: bool = False, save_debug_info: bool = False) -> str:
        """Write the variables' values in ``sess`` to ``save_path`` (``-<global_step>`` appended when given)
        and return that checkpoint prefix."""
        self.build()
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                from .training_util import global_step as read_step
                global_step = read_step(sess, global_step)
            prefix = ("%s-%08d" if self._pad_step_number else "%s-%d") % (save_path, global_step)
        else:
            prefix = save_path
        save_dir = os.path.dirname(save_path)
        if save_dir and not os.path.isdir(save_dir):
            raise ValueError("Parent directory of %s doesn't exist, can't save." % save_path)
        values = {name: sess.variable_slot(v.op).read() for name, v in self._vars.items()}
        write_checkpoint(prefix, values)
        if write_meta_graph:
            self._write_meta_graph(sess, prefix + "." + meta_graph_suffix)
        if write_state:
            stale = self._record(prefix)
            update_checkpoint_state(save_dir or ".", prefix, self.last_checkpoints, latest_filename,
                                    self._save_relative_paths)
            # only now that the state file names the new checkpoint may old ones go
            for old in stale:
                for path in (old + SUFFIX, old + "." + meta_graph_suffix):
                    try:
                        os.remove(path)
                    except FileNotFoundError:
                        pass
        return prefix

    def restore(self, sess: Any, save_path: Optional[str]) -> None:
        """Load every variable of this Saver from checkpoint ``save_path``. Nothing is assigned unless every
        name is found with the variable's shape and dtype."""
        self.build()
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        if not checkpoint_exists(save_path):
            raise ValueError("The passed save_path is not a valid checkpoint: %s" % save_path)
        values = read_checkpoint(save_path, list(self._vars))
        for name, v in self._vars.items():
            arr, want = values[name], v.shape
            if want.dims is not None and not want.is_compatible_with(arr.shape):
                raise InvalidArgumentError(v.op, "Restoring from checkpoint failed: shape mismatch for %s: the "
                                                 "variable %s has shape %s, the checkpoint %s has %s"
                                           % (name, v.op.name, want.as_list(), save_path, list(arr.shape)))
            if arr.dtype != v.dtype.as_numpy_dtype:
                raise InvalidArgumentError(v.op, "Restoring from checkpoint failed: dtype mismatch for %s: the "
                                                 "variable %s is %s, the checkpoint %s has %s"
                                           % (name, v.op.name, v.dtype.name, save_path, arr.dtype))
        for name, v in self._vars.items():
            sess.variable_slot(v.op).value = np.array(values[name], copy=True)

    def _write_meta_graph(self, sess: Any, path: str) -> None:
        from tfevents.proto import meta_graph_pb2
        meta = meta_graph_pb2.MetaGraphDef()
        meta.graph_def.CopyFrom(sess.graph.as_graph_def())
        data = meta.SerializeToString()
        atomic_write(path, lambda f: f.write(data))

    def _record(self, prefix: str) -> list:
        """Track ``prefix`` as the newest checkpoint; return the oldest beyond ``max_to_keep`` (except one
        every ``keep_checkpoint_every_n_hours``), which the caller deletes once the state file is updated."""
        now = time.time()
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != prefix] + [(prefix, now)]
        stale = []
        if not self._max_to_keep:
            return stale
        while len(self._last_checkpoints) > self._max_to_keep:
            old, t = self._last_checkpoints.pop(0)
            if t > self._next_keep_time:
                self._next_keep_time += self._keep_every
                continue
            stale.append(old)
        return stale
