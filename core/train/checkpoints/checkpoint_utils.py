"""``tf.train.import_meta_graph`` and ``tf.train.init_from_checkpoint`` (TF1 semantics); the latter's
initializers read one tensor of a checkpoint when they run (``RestoreV2``, registered in ``saver.py``).

``import_meta_graph`` imports the MetaGraphDef's GraphDef and collections (``meta_graph.import_scoped_meta_graph``)
and returns our ``Saver`` over the imported global variables. A TF Saver's own ops (the ``save/`` scope named by
``saver_def``: SaveV2, RestoreV2, ...) are not imported; our Saver does that work.
"""
from __future__ import annotations

import os
from typing import Any, Optional

from ...framework.graph import get_default_graph, name_scope
from ...ops.state_ops import assign
from ...variables import Variable, global_variables
from ...framework.meta_graph import import_scoped_meta_graph, read_meta_graph
from .checkpoint_files import _resolve, load_checkpoint
from .io_ops import restore_v2
from .saver import Saver

# ---------------------------------------------------------------------------------------------------------
# import_meta_graph


def import_meta_graph(meta_graph_or_file: Any, clear_devices: bool = False, import_scope: Optional[str] = None,
                      input_map: Optional[dict] = None, restore_collections_predicate: Any = None,
                      **kwargs: Any) -> Optional[Saver]:
    """TF1 ``tf.train.import_meta_graph``: import a MetaGraphDef (a proto or a ``.meta`` file, binary or text)
    into the default graph under ``import_scope`` and return a Saver over its global variables (None if it has
    none). ``input_map`` is passed to ``import_graph_def``; ``restore_collections_predicate(key)`` picks the
    collections restored (default: all). See the module docstring for what is restored."""
    if kwargs:
        raise TypeError("import_meta_graph got unsupported arguments: %s" % ", ".join(sorted(kwargs)))
    meta = read_meta_graph(meta_graph_or_file)
    skip = frozenset()
    if meta.HasField("saver_def") and meta.saver_def.filename_tensor_name:
        scope = meta.saver_def.filename_tensor_name.split("/")[0] + "/"
        skip = frozenset(n.name for n in meta.graph_def.node if n.name.startswith(scope))
    prefix = import_scoped_meta_graph(meta, import_scope, input_map, clear_devices, restore_collections_predicate,
                                      skip)
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

