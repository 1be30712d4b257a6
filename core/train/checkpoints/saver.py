"""``tf.train.Saver``: save and restore variable values, keep the last ``max_to_keep`` checkpoints and a
TF-style ``checkpoint`` state file (``latest_checkpoint``).

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

Every file is written under a temporary name, fsynced and ``os.replace``-d into place (the data file before the
index); only then is the ``checkpoint`` state file (TF's text format, also replaced atomically) updated, and
only then are checkpoints beyond ``max_to_keep`` deleted (all their files). A crash before that leaves the
previous checkpoint and the state file pointing to it intact. ``P.meta`` (a MetaGraphDef with the GraphDef)
is written the same way when ``write_meta_graph``. As in TF, a V2 save makes the prefix's directory when only that
one level is missing (TF's SaveV2 kernel does); a deeper missing path, or any for V1, is a ValueError ("Parent
directory of ... doesn't exist, can't save.").

The state file ``<dir>/checkpoint``::

    model_checkpoint_path: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-100"
    all_model_checkpoint_paths: "model.ckpt-200"
"""
from __future__ import annotations

import json
import os
import re
import time
import zipfile
from typing import Any, Optional

import numpy as np

from tfevents.summaries.atomic import atomic_write
from ...framework import dtypes as _dtypes
from ...framework.errors import DataLossError, InvalidArgumentError, NotFoundError
from ...framework.graph import control_dependencies, get_default_graph, name_scope
from ...framework.tensor_shape import TensorShape
from ...framework.registry import (apply_op, constant, convert_to_tensor, create_op, register, shape_broadcast,
                                   shape_same)
from ...control_flow import group, with_dependencies
from ...ops import array_ops, math_ops
from ...ops.state_ops import assign, placeholder_with_default
from ...variables import Variable, global_variables
from . import tensor_bundle
from google.protobuf import text_format

from tfevents.proto import meta_graph_pb2
from ...framework.meta_graph import create_meta_graph_def, register_proto_function
from ...framework.dtypes import as_dtype
from ..training_util import global_step as read_step

FORMAT, VERSION, SUFFIX = "tfevents.checkpoint", 1, ".npz"
V1, V2 = 1, 2          # SaverDef.CheckpointFormatVersion


class SaverDef:
    """The checkpoint format versions of ``tf.train.SaverDef`` (``write_version=SaverDef.V2``)."""

    LEGACY, V1, V2 = 0, V1, V2


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


# ---------------------------------------------------------------------------------------------------------
# MetaGraphDef files


def export_meta_graph(filename: Optional[str] = None, graph_def: Any = None, saver_def: Any = None,
                      collection_list: Any = None, as_text: bool = False, graph: Any = None,
                      **kwargs: Any) -> Any:
    """``tf.train.export_meta_graph``: ``create_meta_graph_def(...)`` (the GraphDef, the SaverDef if given,
    the graph's collections), also written to ``filename`` if given (binary, or text format with
    ``as_text``). ``import_meta_graph`` (TF's or core's) rebuilds the graph, the variables and a Saver."""
    ignored = {"meta_info_def", "clear_extraneous_savers", "strip_default_attrs", "save_debug_info"}
    unsupported = sorted(k for k, v in kwargs.items() if k not in ignored and v)
    if unsupported:
        raise TypeError("export_meta_graph got unsupported arguments: %s" % ", ".join(unsupported))
    meta = create_meta_graph_def(graph_def, saver_def, collection_list, graph)
    if filename:
        data = text_format.MessageToString(meta).encode("utf-8") if as_text else meta.SerializeToString()
        atomic_write(filename, data)
    return meta


# ---------------------------------------------------------------------------------------------------------
# the SaveV2 / RestoreV2 ops (TF's graph of a Saver; RestoreV2 also backs init_from_checkpoint)


def _text(x: Any) -> str:
    x = x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x
    return x.decode("utf-8") if isinstance(x, bytes) else str(x)


def _names_and_slices(tensor_names, shape_and_slices) -> list:
    names = [_text(n) for n in np.reshape(tensor_names, [-1])]
    slices = [_text(s) for s in np.reshape(shape_and_slices, [-1])]
    if any(slices):
        raise NotImplementedError("slices (partitioned variables) are not supported: %s" % slices)
    return names


def _save_v2(prefix, tensor_names, shape_and_slices, *tensors, dtypes=()):
    """TF's SaveV2 kernel: the tensors as a V2 checkpoint (tensor bundle) at ``prefix``; as TF's BundleWriter it
    makes the prefix's directory when only that level is missing (a sharded save's ``<prefix>_temp/``)."""
    names = _names_and_slices(tensor_names, shape_and_slices)
    directory = os.path.dirname(_text(prefix))
    if directory and not os.path.isdir(directory):
        os.mkdir(directory)
    tensor_bundle.write_bundle(_text(prefix), {n: np.asarray(t) for n, t in zip(names, tensors)})


def _restore_v2(prefix, tensor_names, shape_and_slices, dtypes=()):
    names = _names_and_slices(tensor_names, shape_and_slices)
    values = read_checkpoint(_text(prefix), names)
    out = []
    for name, dtype in zip(names, dtypes):
        arr = values[name]
        if arr.dtype != dtype.as_numpy_dtype:
            raise ValueError("RestoreV2: tensor %s in checkpoint %s is %s, expected %s"
                             % (name, _text(prefix), arr.dtype, dtype.name))
        out.append(np.array(arr, copy=True))
    return out[0] if len(out) == 1 else tuple(out)      # the registry's convention for one output


def _merge_v2_checkpoints(checkpoint_prefixes, destination_prefix, delete_old_dirs=True, allow_missing_files=False):
    """TF's MergeV2Checkpoints: the shards' tensors as one bundle at ``destination_prefix``; the shards' files
    are removed (and their directory, when ``delete_old_dirs`` and it is left empty)."""
    prefixes = [_text(p) for p in np.reshape(checkpoint_prefixes, [-1])]
    merged: dict = {}
    for prefix in prefixes:
        if not tensor_bundle.bundle_exists(prefix):
            if allow_missing_files:
                continue
            raise NotFoundError(None, "MergeV2Checkpoints: no checkpoint at %s" % prefix)
        merged.update(read_checkpoint(prefix))
    tensor_bundle.write_bundle(_text(destination_prefix), merged)
    for prefix in prefixes:
        for path in (tensor_bundle.data_path(prefix), tensor_bundle.index_path(prefix)):
            if os.path.exists(path):
                os.remove(path)
        if delete_old_dirs:
            try:
                os.rmdir(os.path.dirname(prefix) or ".")
            except OSError:
                pass


def _sharded_filename(basename, shard, num_shards):
    return np.array("%s-%05d-of-%05d" % (_text(basename), int(shard), int(num_shards)), dtype=object)


def _string_join(*inputs, separator=""):
    parts = np.broadcast_arrays(*[np.asarray(x, dtype=object) for x in inputs])
    out = np.empty(parts[0].shape, dtype=object)
    for index in np.ndindex(out.shape):
        out[index] = separator.encode().join(p[index] if isinstance(p[index], bytes) else str(p[index]).encode()
                                             for p in parts)
    return out


def _static_regex_full_match(x, pattern=""):
    regex = re.compile(pattern)
    values = np.asarray(x, dtype=object)
    return np.vectorize(lambda v: regex.fullmatch(_text(v)) is not None, otypes=[bool])(values) if values.size \
        else np.zeros(values.shape, bool)


register("SaveV2", _save_v2, num_outputs=0, stateful=True)
register("MergeV2Checkpoints", _merge_v2_checkpoints, num_outputs=0, stateful=True)
register("ShardedFilename", _sharded_filename, dtype=_dtypes.string, shape=lambda op: TensorShape([]))
register("StringJoin", _string_join, dtype=_dtypes.string, shape=shape_broadcast)
register("StaticRegexFullMatch", _static_regex_full_match, dtype=_dtypes.bool, shape=shape_same)
register("RestoreV2", _restore_v2, num_outputs=lambda attrs: len(attrs["dtypes"]),
         dtype=lambda op: list(op.attrs["dtypes"]), stateful=True)


def _strings(values: Any, name: str):
    return constant(np.array(values, dtype=object), dtype=_dtypes.string, name=name)


def save_v2(prefix: Any, tensor_names: list, shape_and_slices: list, tensors: list, name: Optional[str] = None):
    """The ``SaveV2`` op (TF's ``io_ops.save_v2``): its string inputs as ``SaveV2/tensor_names``, ..."""
    with name_scope(name, "SaveV2") as scope:
        prefix = convert_to_tensor(prefix, dtype=_dtypes.string, name="prefix")
        inputs = [prefix, _strings(tensor_names, "tensor_names"), _strings(shape_and_slices, "shape_and_slices")]
        return create_op("SaveV2", inputs + list(tensors), dict(dtypes=[t.dtype for t in tensors]), name=scope)


def restore_v2(prefix: Any, tensor_names: list, shape_and_slices: list, dtypes: list, name: Optional[str] = None):
    """The ``RestoreV2`` op: the named tensors of checkpoint ``prefix``, read when the op runs (one output per
    name, a list)."""
    with name_scope(name, "RestoreV2") as scope:
        prefix = convert_to_tensor(prefix, dtype=_dtypes.string, name="prefix")
        inputs = [prefix, _strings(tensor_names, "tensor_names"), _strings(shape_and_slices, "shape_and_slices")]
        return list(create_op("RestoreV2", inputs, dict(dtypes=list(dtypes)), name=scope).outputs)


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


def _save_op(prefix: Any, items: list):
    names = [n for n, _ in items]
    return save_v2(prefix, names, [""] * len(names), [v._ref() for _, v in items])


def _restore_ops(graph: Any, filename: Any, items: list, name: str):
    """One RestoreV2 (on the CPU, TF's BulkSaverBuilder) and an Assign per variable, grouped as ``name``."""
    names = [n for n, _ in items]
    with graph.device("/device:CPU:0"):
        restored = restore_v2(filename, names, [""] * len(names), [v.dtype for _, v in items])
    assigns = [assign(v._ref(), t, validate_shape=v.shape.is_fully_defined()) for (_, v), t in zip(items, restored)]
    return group(*assigns, name=name)


def _sharded_save_ops(graph: Any, prefix: Any, items: list):
    """TF's _AddShardedSaveOpsForV2 for one device: the shard is saved under ``<prefix>_temp/part`` (``.part``
    on s3://), then MergeV2Checkpoints into ``prefix``; returns ``prefix`` after both."""
    with graph.device("/device:CPU:*"):
        suffix = math_ops.where(_regex_full_match(prefix, "^s3://.*"), constant(".part"),
                                constant(os.path.normpath("_temp/part")))
        tmp_prefix = _string_join([prefix, suffix])
    num_shards = constant(1, name="num_shards")
    with graph.device("/device:CPU:0"):
        with name_scope(None, "ShardedFilename") as scope:
            shard_name = apply_op("ShardedFilename", [tmp_prefix, constant(0, name="shard"), num_shards], name=scope)
        saved = with_dependencies([_save_op(shard_name, items)], shard_name)
        with control_dependencies([saved.op]):
            with name_scope(None, "MergeV2Checkpoints") as scope:
                prefixes = apply_op("Pack", [shard_name], dict(N=1, axis=0), name="checkpoint_prefixes")
                merge = create_op("MergeV2Checkpoints", [prefixes, prefix],
                                  dict(delete_old_dirs=True, allow_missing_files=False), name=scope)
            with control_dependencies([merge]):
                return array_ops.identity(prefix)


def _regex_full_match(x: Any, pattern: str):
    with name_scope(None, "StaticRegexFullMatch") as scope:
        return apply_op("StaticRegexFullMatch", [x], dict(pattern=pattern), name=scope)


def _string_join(inputs: list, separator: str = ""):
    with name_scope(None, "StringJoin") as scope:
        return apply_op("StringJoin", list(inputs), dict(N=len(inputs), separator=separator), name=scope)


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
        if write_version not in (SaverDef.V1, SaverDef.V2):
            raise ValueError("write_version must be SaverDef.V1 (%d, the .npz format) or SaverDef.V2 (%d, TF's "
                             "format), got %r" % (SaverDef.V1, SaverDef.V2, write_version))
        self._write_version = write_version
        self._last_checkpoints: list = []      # [(prefix, time)]
        self._graph = get_default_graph()
        self._sharded, self._name, self._saver_def = sharded, name, saver_def
        self._graph_ops = None                 # (filename, save tensor, restore op) once built
        if self._vars is not None:
            self._build_graph()

    def build(self) -> None:
        if self._vars is None:
            self._vars = _name_map(self._var_list)
            self._build_graph()

    def _build_graph(self) -> None:
        """TF's graph of a V2 Saver (its BulkSaverBuilder), in a ``save`` scope: ``filename`` and ``Const``
        (PlaceholderWithDefault ``"model"``), ``SaveV2`` of the variables' references (in name order) behind
        ``control_dependency``, one ``RestoreV2`` (on the CPU) and an ``Assign`` per variable grouped as
        ``restore_all``. ``save``/``restore`` themselves read and write the Session's variables directly. Not
        built for a ``saver_def`` given, for the V1 (npz) format, sharded savers, or no variables."""
        if self._saver_def is not None or self._write_version != SaverDef.V2 or not self._vars:
            return
        items = sorted(self._vars.items())
        with self._graph.as_default(), name_scope(self._name, "save"):
            filename = placeholder_with_default("model", shape=[], name="filename")
            filename = placeholder_with_default(filename, shape=[], name="Const")
            if self._sharded:
                save_tensor = _sharded_save_ops(self._graph, filename, items)
                restore_op = group(_restore_ops(self._graph, filename, items, "restore_shard"), name="restore_all")
            else:
                save_tensor = with_dependencies([_save_op(filename, items)], filename)
                restore_op = _restore_ops(self._graph, filename, items, "restore_all")
        self._graph_ops = (filename, save_tensor, restore_op)

    @property
    def saver_def(self) -> Any:
        """TF's ``SaverDef`` naming this Saver's graph (None when it built none)."""
        if self._graph_ops is None:
            return None
        filename, save_tensor, restore_op = self._graph_ops
        return meta_graph_pb2.SaverDef(filename_tensor_name=filename.name, save_tensor_name=save_tensor.name,
                                  restore_op_name=restore_op.name, max_to_keep=self._max_to_keep or 0,
                                  sharded=bool(self._sharded),
                                  keep_checkpoint_every_n_hours=self._keep_every / 3600.0,
                                  version=self._write_version)

    @property
    def last_checkpoints(self) -> list:
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time: list) -> None:
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths: list) -> None:
        self._last_checkpoints = [(p, get_checkpoint_mtimes([p])[0]) for p in checkpoint_paths
                                  if checkpoint_exists(p)]

    def save(self, sess: Any, save_path: str, global_step: Any = None, latest_filename: Optional[str] = None,
             meta_graph_suffix: str = "meta", write_meta_graph: bool = True, write_state: bool = True,
             strip_default_attrs: bool = False, save_debug_info: bool = False) -> str:
        """Write the variables' values in ``sess`` to ``save_path`` (``-<global_step>`` appended when given)
        and return that checkpoint prefix."""
        self.build()
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                global_step = read_step(sess, global_step)
            prefix = ("%s-%08d" if self._pad_step_number else "%s-%d") % (save_path, global_step)
        else:
            prefix = save_path
        save_dir = os.path.dirname(save_path)
        if save_dir and not os.path.isdir(save_dir):
            # TF's SaveV2 kernel makes one missing level (a fresh ckpt/ beside existing files); V1 makes none
            if self._write_version != SaverDef.V2 or not os.path.isdir(os.path.dirname(os.path.abspath(save_dir))):
                raise ValueError("Parent directory of %s doesn't exist, can't save." % save_path)
            os.makedirs(save_dir, exist_ok=True)
        values = {name: sess.variable_slot(v.op).read() for name, v in self._vars.items()}
        if self._write_version == SaverDef.V2:
            tensor_bundle.write_bundle(prefix, values)
        else:
            write_checkpoint(prefix, values)
        if write_meta_graph:
            self._write_meta_graph(sess, prefix + "." + meta_graph_suffix)
        if write_state:
            stale = self._record(prefix)
            update_checkpoint_state(save_dir or ".", prefix, self.last_checkpoints, latest_filename,
                                    self._save_relative_paths)
            # only now that the state file names the new checkpoint may old ones go
            for old in stale:
                for path in _files(old, meta_graph_suffix):
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

    def export_meta_graph(self, filename: Optional[str] = None, collection_list: Any = None,
                          as_text: bool = False, **kwargs: Any) -> Any:
        """TF's ``Saver.export_meta_graph``: the default graph's MetaGraphDef with this Saver's SaverDef."""
        return export_meta_graph(filename, saver_def=self.saver_def, collection_list=collection_list,
                                 as_text=as_text, **kwargs)

    def _write_meta_graph(self, sess: Any, path: str) -> None:
        export_meta_graph(path, saver_def=self.saver_def, graph=sess.graph)

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


register_proto_function("savers", meta_graph_pb2.SaverDef, to_proto=lambda saver: getattr(saver, "saver_def", None))
