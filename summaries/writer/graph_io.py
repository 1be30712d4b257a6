"""``write_graph``: a GraphDef to a file, as ``tf.io.write_graph`` / ``tf.compat.v1.train.write_graph`` writes it."""
from __future__ import annotations

import os
from typing import Any, Union

from ..atomic import atomic_write

__all__ = ["write_graph"]


def _graph_def(graph_or_graph_def: Any) -> Any:
    """A GraphDef message: from a graph (``as_graph_def()``), a GraphDef proto of any package, or bytes."""
    if hasattr(graph_or_graph_def, "as_graph_def"):
        return graph_or_graph_def.as_graph_def()
    if isinstance(graph_or_graph_def, (bytes, bytearray, memoryview)):
        from tfevents.proto import graph_pb2  # lazy: protobuf loads only for a graph given as text

        return graph_pb2.GraphDef.FromString(bytes(graph_or_graph_def))
    descriptor = getattr(graph_or_graph_def, "DESCRIPTOR", None)
    if descriptor is None or descriptor.name != "GraphDef":
        raise TypeError("write_graph needs a graph (with as_graph_def()), a GraphDef or its bytes, got %s"
                        % type(graph_or_graph_def).__name__)
    return graph_or_graph_def


def write_graph(graph_or_graph_def: Any, logdir: Union[str, os.PathLike], name: str, as_text: bool = True) -> str:
    """Write a graph's GraphDef to ``<logdir>/<name>`` and return that path.

    ``as_text``: protobuf text format (``text_format.MessageToString(graph_def)``, what
    TensorFlow 2.x writes, e.g. ``graph.pbtxt``); otherwise the binary serialization
    (deterministic). ``logdir`` is created if missing. The file is written to a temporary file in
    the same directory and renamed over the target (``os.replace``), so readers never see a
    partial graph.
    """
    graph_def = _graph_def(graph_or_graph_def)
    logdir = os.fspath(logdir)
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    if as_text:
        from google.protobuf import text_format

        data = text_format.MessageToString(graph_def).encode("utf-8")
    else:
        data = graph_def.SerializeToString(deterministic=True)
    return atomic_write(path, data, durable=False)
