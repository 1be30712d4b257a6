"""``tf.train.Saver``: save and restore variable values, keep the last ``max_to_keep`` checkpoints and a
TF-style ``checkpoint`` state file (``latest_checkpoint``); ``export_meta_graph``. The files and the state file
are ``checkpoint_files.py``'s; the graph a V2 Saver builds (SaveV2, RestoreV2, a sharded save's
MergeV2Checkpoints) is ``io_ops.py``'s.

Every file is written under a temporary name, fsynced and ``os.replace``-d into place (the data file before the
index); only then is the ``checkpoint`` state file (TF's text format, also replaced atomically) updated, and
only then are checkpoints beyond ``max_to_keep`` deleted (all their files). A crash before that leaves the
previous checkpoint and the state file pointing to it intact. ``P.meta`` (a MetaGraphDef: the GraphDef, the
SaverDef and the collections) is written the same way when ``write_meta_graph``. As in TF, a V2 save makes the
prefix's directory when only that one level is missing (TF's SaveV2 kernel does); a deeper missing path, or any for
V1, is a ValueError ("Parent directory of ... doesn't exist, can't save.").
"""
from __future__ import annotations

import os
import time
from typing import Any, Optional

import numpy as np
from google.protobuf import text_format

from tfevents.proto import meta_graph_pb2
from tfevents.summaries.atomic import atomic_write
from ...control_flow import group, with_dependencies
from ...framework.errors import InvalidArgumentError
from ...framework.graph import get_default_graph, name_scope
from ...framework.meta_graph import create_meta_graph_def, register_proto_function
from ...ops.state_ops import placeholder_with_default
from ...variables import Variable, global_variables
from ..training_util import global_step as read_step
from . import tensor_bundle
from .checkpoint_files import (_files, checkpoint_exists, get_checkpoint_mtimes, read_checkpoint,
                               update_checkpoint_state, write_checkpoint)
from .io_ops import restore_ops, save_op, sharded_save_ops

V1, V2 = 1, 2          # SaverDef.CheckpointFormatVersion


class SaverDef:
    """The checkpoint format versions of ``tf.train.SaverDef`` (``write_version=SaverDef.V2``)."""

    LEGACY, V1, V2 = 0, V1, V2


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
                save_tensor = sharded_save_ops(self._graph, filename, items)
                restore_op = group(restore_ops(self._graph, filename, items, "restore_shard"), name="restore_all")
            else:
                save_tensor = with_dependencies([save_op(filename, items)], filename)
                restore_op = restore_ops(self._graph, filename, items, "restore_all")
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
