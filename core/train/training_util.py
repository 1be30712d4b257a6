"""The global step (``create_global_step``, ``get_global_step``, ``get_or_create_global_step``,
``global_step(sess, tensor)``) and ``write_graph``."""
from __future__ import annotations

from typing import Any, Optional

from ..framework import dtypes
from ..framework.graph import GraphKeys, get_default_graph, name_scope
from ..initializers import zeros_initializer
from ..variable_scope import get_variable
from ..variables import VariableAggregation
from tfevents.summaries import write_graph as _write_graph


def get_global_step(graph: Any = None) -> Optional[Any]:
    """The ``global_step`` variable of ``graph`` (collection GLOBAL_STEP, else the tensor ``global_step:0``),
    or None."""
    graph = graph or get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise ValueError("Multiple tensors in global_step collection.")
    try:
        tensor = graph.get_tensor_by_name("global_step:0")
    except (KeyError, ValueError):
        return None
    if not tensor.dtype.is_integer:
        raise TypeError("Existing \"global_step\" does not have integer type: %s" % tensor.dtype)
    return tensor


def create_global_step(graph: Any = None) -> Any:
    """A new int64 scalar variable ``global_step`` (0, not trainable, collections GLOBAL_VARIABLES and
    GLOBAL_STEP); ValueError if one exists."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError("\"global_step\" already exists.")
    with graph.as_default(), name_scope(None):
        return get_variable(GraphKeys.GLOBAL_STEP, shape=[], dtype=dtypes.int64, initializer=zeros_initializer(),
                            trainable=False, collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP],
                            aggregation=VariableAggregation.ONLY_FIRST_REPLICA)


def get_or_create_global_step(graph: Any = None) -> Any:
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


def global_step(sess: Any, global_step_tensor: Any) -> int:
    """The value of the global step tensor (a Variable, Tensor or its name) as an int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor: Any) -> None:
    dtype = getattr(global_step_tensor, "dtype", None)
    if dtype is None or not dtype.is_integer:
        raise TypeError("Existing \"global_step\" does not have integer type: %s" % dtype)
    if global_step_tensor.get_shape().ndims not in (0, None):
        raise TypeError("Existing \"global_step\" is not scalar: %s" % global_step_tensor.get_shape())


def write_graph(graph_or_graph_def: Any, logdir: str, name: str, as_text: bool = True) -> str:
    """Write a Graph's (or GraphDef's) GraphDef to ``logdir/name`` (text or binary), atomically."""
    if hasattr(graph_or_graph_def, "as_graph_def"):
        graph_or_graph_def = graph_or_graph_def.as_graph_def()
    return _write_graph(graph_or_graph_def, logdir, name, as_text=as_text)
