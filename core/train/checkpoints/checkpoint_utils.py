"""``tf.train.import_meta_graph`` and ``tf.train.init_from_checkpoint`` (TF1 semantics); the latter's
initializers read one tensor of a checkpoint when they run (``RestoreV2``, registered in ``saver.py``).

``import_meta_graph`` imports the MetaGraphDef's GraphDef (``graph_import.import_graph_def``), rebuilds the
collections it carries -- the variable collections as ``Variable`` objects from their ``VariableDef``
(``variable_name``, ``initializer_name``, ``snapshot_name``, ``initial_value_name``; one object per variable
shared by all its collections), ``node_list`` collections as the Tensors/Operations they name, ``int64_list`` /
``float_list`` as numbers and other ``bytes_list`` collections as the raw bytes -- and returns our ``Saver`` over
the imported global variables. A TF Saver's own ops (the ``save/`` scope named by ``saver_def``: SaveV2,
RestoreV2, ...) are not imported; our Saver does that work. Proto-valued collections we have no model of
(``while_context``, ``cond_context``, ``savers``, ``queue_runners``) are skipped.
"""
from __future__ import annotations

import os
from typing import Any, Optional

from ...framework.graph import get_default_graph, name_scope
from ...ops.state_ops import assign
from ...variables import Variable, global_variables
from .saver import Saver, _resolve, load_checkpoint, restore_v2
from tfevents.proto import meta_graph_pb2, variable_pb2
from ...framework.graph_import import import_graph_def

_VARIABLE_KEYS = ("variables", "trainable_variables", "local_variables", "model_variables",
                  "moving_average_variables", "metric_variables", "global_step")
_SKIPPED_KEYS = ("while_context", "cond_context", "savers", "queue_runners")


# ---------------------------------------------------------------------------------------------------------
# import_meta_graph


def _read_meta_graph(meta_graph_or_file: Any):
    if isinstance(meta_graph_or_file, meta_graph_pb2.MetaGraphDef):
        return meta_graph_or_file
    if hasattr(meta_graph_or_file, "SerializeToString") and hasattr(meta_graph_or_file, "graph_def"):
        return meta_graph_pb2.MetaGraphDef.FromString(meta_graph_or_file.SerializeToString())
    path = os.fspath(meta_graph_or_file)
    if not os.path.isfile(path):
        raise IOError("File %s does not exist." % path)
    data = open(path, "rb").read()
    meta = meta_graph_pb2.MetaGraphDef()
    try:
        meta.ParseFromString(data)
    except Exception:  # noqa: BLE001 - not binary: TF's text format
        from google.protobuf import text_format
        try:
            text_format.Merge(data.decode("utf-8"), meta)
        except Exception as e:  # noqa: BLE001
            raise IOError("Cannot parse file %s: neither a binary nor a text MetaGraphDef (%s)" % (path, e)) from None
    return meta


def _variable_from_def(graph: Any, vdef: Any, prefixed) -> Variable:
    """A Variable over existing graph ops named by a VariableDef (TF's ``RefVariable(variable_def=...)``)."""
    v = Variable.__new__(Variable)
    v._variable = graph.as_graph_element(prefixed(vdef.variable_name))
    if v._variable.op.type != "VariableV2":
        raise ValueError("VariableDef %s names a %s op; only VariableV2 (ref) variables can be imported"
                         % (vdef.variable_name, v._variable.op.type))
    v._initializer_op = graph.as_graph_element(prefixed(vdef.initializer_name))
    v._snapshot = graph.as_graph_element(prefixed(vdef.snapshot_name))
    v._initial_value = (graph.as_graph_element(prefixed(vdef.initial_value_name))
                        if vdef.initial_value_name else None)
    v._trainable = vdef.trainable
    v.constraint = None
    v._save_slice_info = None
    return v


def import_meta_graph(meta_graph_or_file: Any, clear_devices: bool = False, import_scope: Optional[str] = None,
                      input_map: Optional[dict] = None, restore_collections_predicate: Any = None,
                      **kwargs: Any) -> Optional[Saver]:
    """TF1 ``tf.train.import_meta_graph``: import a MetaGraphDef (a proto or a ``.meta`` file, binary or text)
    into the default graph under ``import_scope`` and return a Saver over its global variables (None if it has
    none). ``input_map`` is passed to ``import_graph_def``; ``restore_collections_predicate(key)`` picks the
    collections restored (default: all). See the module docstring for what is restored."""
    if kwargs:
        raise TypeError("import_meta_graph got unsupported arguments: %s" % ", ".join(sorted(kwargs)))
    meta = _read_meta_graph(meta_graph_or_file)
    graph = get_default_graph()
    skip = set()
    if meta.HasField("saver_def") and meta.saver_def.filename_tensor_name:
        scope = meta.saver_def.filename_tensor_name.split("/")[0] + "/"
        skip = {n.name for n in meta.graph_def.node if n.name.startswith(scope)}
    graph_def = meta.graph_def
    if clear_devices:
        graph_def = type(graph_def).FromString(graph_def.SerializeToString())
        for node in graph_def.node:
            node.device = ""
    import_graph_def(graph_def, input_map=input_map, name=import_scope or "", _skip=skip)
    prefix = (import_scope.rstrip("/") + "/") if import_scope else ""

    def prefixed(name: str) -> str:
        return prefix + name

    variables: dict = {}
    for key in sorted(meta.collection_def):
        if key in _SKIPPED_KEYS or (restore_collections_predicate is not None
                                    and not restore_collections_predicate(key)):
            continue
        col = meta.collection_def[key]
        kind = col.WhichOneof("kind")
        if kind == "node_list":
            for name in col.node_list.value:
                if name.split(":")[0] in skip:
                    continue
                graph.add_to_collection(key, graph.as_graph_element(prefixed(name)))
        elif kind == "bytes_list" and key in _VARIABLE_KEYS:
            for data in col.bytes_list.value:
                vdef = variable_pb2.VariableDef.FromString(data)
                v = variables.get(vdef.variable_name)
                if v is None:
                    v = variables[vdef.variable_name] = _variable_from_def(graph, vdef, prefixed)
                graph.add_to_collection(key, v)
        elif kind == "bytes_list":
            for data in col.bytes_list.value:
                graph.add_to_collection(key, data)
        elif kind == "int64_list":
            for value in col.int64_list.value:
                graph.add_to_collection(key, int(value))
        elif kind == "float_list":
            for value in col.float_list.value:
                graph.add_to_collection(key, float(value))
    scoped = [v for v in global_variables() if v.op.name.startswith(prefix)]
    if not scoped:
        return None
    # as TF: with the meta graph's saver_def no new save/restore ops are built (TF's own were not imported)
    saver_def = meta.saver_def if meta.HasField("saver_def") and meta.saver_def.filename_tensor_name else None
    return Saver({v.op.name[len(prefix):]: v for v in scoped}, saver_def=saver_def)


# ---------------------------------------------------------------------------------------------------------
# init_from_checkpoint


def _store_vars(graph: Any) -> dict:
    """``{name: Variable}`` as TF's variable store: the get_variable store, plus every global variable."""
    out = {v.op.name: v for v in global_variables()}
    store = graph._var_store
    if store is not None:
        out.update(store["vars"])
    return out


def _set_checkpoint_initializer(variable: Variable, ckpt_file: str, tensor_name: str) -> None:
    """Make ``variable``'s initializer assign it the checkpoint's ``tensor_name`` (read by RestoreV2)."""
    graph = variable.graph
    with graph.as_default(), graph.control_dependencies(None), graph.device(variable.device):
        with name_scope(variable.op.name + "/"):
            restore = restore_v2(ckpt_file, [tensor_name], [""], [variable.dtype], name="checkpoint_initializer")[0]
            restore.set_shape(variable.shape)
            init = assign(variable._ref(), restore, name="Assign")
    variable._initializer_op = init.op
    variable._initial_value = restore


def init_from_checkpoint(ckpt_dir_or_file: str, assignment_map: Any) -> None:
    """TF1 ``tf.train.init_from_checkpoint``: replace the initializers of the variables named by
    ``assignment_map`` (``{checkpoint name or 'scope/': variable, variable name or 'scope/'}``; ``'/'`` maps
    the root) with ones that load the checkpoint's values when run."""
    ckpt_file = _resolve(os.fspath(ckpt_dir_or_file))
    variable_map = load_checkpoint(ckpt_file).get_variable_to_shape_map()
    items = assignment_map.items() if hasattr(assignment_map, "items") else assignment_map
    graph = get_default_graph()
    store_vars = _store_vars(graph)
    for tensor_name_in_ckpt, current in sorted(items, key=lambda pair: pair[0]):
        if isinstance(current, (list, tuple)):
            raise NotImplementedError("init_from_checkpoint: partitioned variables are not supported (%r)"
                                      % tensor_name_in_ckpt)
        var = current if isinstance(current, Variable) else store_vars.get(current)
        if var is not None:
            if tensor_name_in_ckpt not in variable_map:
                raise ValueError("Tensor %s is not found in %s checkpoint %s"
                                 % (tensor_name_in_ckpt, ckpt_dir_or_file, variable_map))
            if not var.get_shape().is_compatible_with(variable_map[tensor_name_in_ckpt]):
                raise ValueError("Shape of variable %s (%s) doesn't match with shape of tensor %s (%s) from "
                                 "checkpoint reader." % (var.name, var.get_shape(), tensor_name_in_ckpt,
                                                         variable_map[tensor_name_in_ckpt]))
            _set_checkpoint_initializer(var, ckpt_file, tensor_name_in_ckpt)
            continue
        if not isinstance(current, str):
            raise TypeError("assignment_map values must be Variables or names, got %r" % (current,))
        scopes = current[:current.rindex("/")] if "/" in current else ""
        if not tensor_name_in_ckpt.endswith("/"):
            raise ValueError("Assignment map with scope only name {} should map to scope only {}. Should be "
                             "'scope/': 'other_scope/'.".format(scopes, tensor_name_in_ckpt))
        scope_variables = sorted(n for n in store_vars if not scopes or n.startswith(scopes + "/"))
        for var_name in scope_variables:
            full = var_name[len(scopes):]
            if current != "/":
                full = full[1:]
            if tensor_name_in_ckpt != "/":
                full = tensor_name_in_ckpt + full
            if full.endswith("/"):
                full = full[:-1]
            if full not in variable_map:
                raise ValueError("Tensor %s (%s in %s) is not found in %s checkpoint"
                                 % (full, var_name[len(scopes) + 1:], tensor_name_in_ckpt, ckpt_dir_or_file))
            _set_checkpoint_initializer(store_vars[var_name], ckpt_file, full)

