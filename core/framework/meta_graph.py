"""MetaGraphDef both ways, as TF1's ``framework/meta_graph.py``: ``create_meta_graph_def`` (what a ``.meta``
file and a ``meta_graph_def`` event carry), ``read_meta_graph`` and ``import_scoped_meta_graph`` (the GraphDef and
the collections back into a graph; ``tf.train.import_meta_graph`` adds the Saver, ``tf.train.export_meta_graph``
writes the file; both in ``train/checkpoints``).

A MetaGraphDef holds the GraphDef, the SaverDef when one is given, and every collection of the graph that can be
serialized, by TF's rules (``add_collection_def``):

================================  ===============  ============================================================
collection items                  kind             each value
================================  ===============  ============================================================
of a key with a proto function    ``bytes_list``   ``to_proto(item)`` serialized: ``VariableDef`` for the
(``register_proto_function``)                      variable keys (``variables.py``), ``SaverDef`` for
                                                   ``savers`` (``saver.py``), ``CondContextDef``/
                                                   ``WhileContextDef`` for ``cond_context``/``while_context``
                                                   (``control_flow/contexts.py``)
Tensors, Operations               ``node_list``    their names
str / bytes                       ``bytes_list``   the bytes
int, float                        ``int64_list``,  the numbers
                                  ``float_list``
================================  ===============  ============================================================

A collection whose items have none of these forms is left out, as TF leaves out one it cannot serialize. Not
written, and why: ``queue_runners`` (TF's ``QueueRunnerDef``, with its error-code enum, is not mirrored in
``tfevents.proto``), ``meta_info_def.stripped_op_list`` (the ``OpDef`` of every op used: core keeps no OpDefs; TF
reads a MetaGraphDef without it) and ``tensorflow_version`` (not a TF build). On import, the control-flow
contexts are not read back: ``graph_import`` rebuilds a while loop's from the GraphDef.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterable, NamedTuple, Optional

from google.protobuf import text_format

from tfevents.proto import meta_graph_pb2
from .graph import Operation, Tensor, get_default_graph
from .graph_import import import_graph_def

NOT_SERIALIZED = ("queue_runners",)     # see the module docstring


class ProtoFunctions(NamedTuple):
    proto_type: Any
    to_proto: Callable[[Any], Any]
    from_proto: Optional[Callable[[Any, Callable[[str], str]], Any]]     # (proto, prefixed) -> item


_PROTO_FUNCTIONS: Dict[str, ProtoFunctions] = {}


def register_proto_function(key: str, proto_type: Any, to_proto: Callable[[Any], Any],
                            from_proto: Optional[Callable] = None) -> None:
    """TF's ``ops.register_proto_function``: how the items of collection ``key`` become ``proto_type`` messages
    (``to_proto(item)``) and come back (``from_proto(message, prefixed)``, ``prefixed(name)`` giving a node's
    name under the import scope; without it the collection is not restored)."""
    _PROTO_FUNCTIONS[key] = ProtoFunctions(proto_type, to_proto, from_proto)


# ---------------------------------------------------------------------------------------------------------
# export


def _add_collection_def(meta: Any, key: str, items: list) -> None:
    """One collection into ``meta.collection_def`` by the table of the module docstring."""
    if not isinstance(key, (str, bytes)) or not items or key in NOT_SERIALIZED:
        return
    col = meta.collection_def[key]
    functions = _PROTO_FUNCTIONS.get(key)
    if functions is not None:
        protos = [functions.to_proto(x) for x in items]
        if all(isinstance(p, functions.proto_type) for p in protos):
            col.bytes_list.value.extend(p.SerializeToString() for p in protos)
        else:
            del meta.collection_def[key]
    elif all(isinstance(x, (Tensor, Operation)) for x in items):
        col.node_list.value.extend(x.name for x in items)
    elif all(isinstance(x, (str, bytes)) for x in items):
        col.bytes_list.value.extend(x.encode("utf-8") if isinstance(x, str) else x for x in items)
    elif all(isinstance(x, int) and not isinstance(x, bool) for x in items):
        col.int64_list.value.extend(items)
    elif all(isinstance(x, float) for x in items):
        col.float_list.value.extend(items)
    else:
        del meta.collection_def[key]


def create_meta_graph_def(graph_def: Any = None, saver_def: Any = None, collection_list: Optional[Iterable[str]] = None,
                          graph: Any = None) -> Any:
    """TF's ``meta_graph.create_meta_graph_def``: ``graph_def`` (default: ``graph``'s, with shapes), the
    ``saver_def`` if given, and the collections of ``graph`` (default: the default graph; all its collections
    unless ``collection_list``) as the module docstring's table writes them."""
    graph = graph or get_default_graph()
    meta = meta_graph_pb2.MetaGraphDef()
    meta.graph_def.CopyFrom(graph_def if graph_def is not None else graph.as_graph_def(add_shapes=True))
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in keys:
        _add_collection_def(meta, key, graph.get_collection(key))
    return meta


# ---------------------------------------------------------------------------------------------------------
# import


def read_meta_graph(meta_graph_or_file: Any) -> Any:
    """A MetaGraphDef from a proto (ours or TF's) or a ``.meta`` file, binary or text format."""
    if isinstance(meta_graph_or_file, meta_graph_pb2.MetaGraphDef):
        return meta_graph_or_file
    if hasattr(meta_graph_or_file, "SerializeToString") and hasattr(meta_graph_or_file, "graph_def"):
        return meta_graph_pb2.MetaGraphDef.FromString(meta_graph_or_file.SerializeToString())
    path = os.fspath(meta_graph_or_file)
    if not os.path.isfile(path):
        raise IOError("File %s does not exist." % path)
    with open(path, "rb") as f:
        data = f.read()
    meta = meta_graph_pb2.MetaGraphDef()
    try:
        meta.ParseFromString(data)
    except Exception:  # noqa: BLE001 - not binary: TF's text format
        try:
            text_format.Merge(data.decode("utf-8"), meta)
        except Exception as e:  # noqa: BLE001
            raise IOError("Cannot parse file %s: neither a binary nor a text MetaGraphDef (%s)" % (path, e)) from None
    return meta


def import_scoped_meta_graph(meta: Any, import_scope: Optional[str] = None, input_map: Optional[dict] = None,
                             clear_devices: bool = False, restore_collections_predicate: Any = None,
                             skip: frozenset = frozenset()) -> str:
    """Import ``meta``'s GraphDef into the default graph under ``import_scope`` (but the nodes in ``skip``) and
    rebuild its collections: those with a proto function by its ``from_proto`` (one object per serialized item,
    so a variable in several collections is one Variable), ``node_list`` as the Tensors/Operations named, numbers
    as numbers, other ``bytes_list`` as the bytes; keys whose proto function has no ``from_proto`` (``savers``)
    and the kinds core does not serialize are skipped. Returns the name prefix used."""
    graph = get_default_graph()
    graph_def = meta.graph_def
    if clear_devices:
        graph_def = type(graph_def).FromString(graph_def.SerializeToString())
        for node in graph_def.node:
            node.device = ""
    import_graph_def(graph_def, input_map=input_map, name=import_scope or "", _skip=skip)
    prefix = (import_scope.rstrip("/") + "/") if import_scope else ""

    def prefixed(name: str) -> str:
        return prefix + name

    shared: dict = {}      # one object per serialized item (a variable in several collections)
    for key in sorted(meta.collection_def):
        if key in NOT_SERIALIZED or (restore_collections_predicate is not None
                                     and not restore_collections_predicate(key)):
            continue
        col = meta.collection_def[key]
        kind = col.WhichOneof("kind")
        functions = _PROTO_FUNCTIONS.get(key)
        if functions is not None:
            if functions.from_proto is None or kind != "bytes_list":
                continue
            for data in col.bytes_list.value:
                item = shared.get(data)
                if item is None:
                    item = shared[data] = functions.from_proto(functions.proto_type.FromString(data), prefixed)
                graph.add_to_collection(key, item)
        elif kind == "node_list":
            for name in col.node_list.value:
                if name.split(":")[0] not in skip:
                    graph.add_to_collection(key, graph.as_graph_element(prefixed(name)))
        elif kind == "bytes_list":
            for data in col.bytes_list.value:
                graph.add_to_collection(key, data)
        elif kind == "int64_list":
            for value in col.int64_list.value:
                graph.add_to_collection(key, int(value))
        elif kind == "float_list":
            for value in col.float_list.value:
                graph.add_to_collection(key, float(value))
    return prefix
