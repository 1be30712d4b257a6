"""The TF1 ``FileWriter`` methods of ``SummaryWriter`` that write graphs: ``add_graph`` (a tfevents.core or TensorFlow
graph, a GraphDef or its bytes; a ``torch.nn.Module`` goes to torch's tracing), ``add_meta_graph`` and
``add_run_metadata``, each as one Event; and the hooks the constructor uses for a graph given to it
(``_graph_def_bytes``, ``_meta_graph_of``, which ``tfevents.core``'s FileWriter overrides to add the collections)."""
from __future__ import annotations

import time
from typing import Any, Optional

from ..tags import check_tag as _check_tag
from .call_values import as_step, message_bytes
from .media_methods import is_torch_module


class GraphMethods:
    """Mixed into ``SummaryWriter`` (which provides ``_open_writer``, ``_add_torch_graph`` and
    ``_run_metadata_tags``)."""

    def add_graph(self, graph: Any = None, global_step: Any = None, graph_def: Any = None, *args: Any,
                  **kwargs: Any) -> None:
        """Write a graph for TensorBoard's Graphs dashboard.

        ``graph``: anything with ``as_graph_def()`` (a tfevents.core or TensorFlow graph), or a
        GraphDef proto (ours, TensorBoard's, TensorFlow's) or its bytes. ``graph_def``: TF1's
        older argument, used when ``graph`` is None. A ``torch.nn.Module`` takes torch's arguments instead,
        ``add_graph(model, input_to_model=None, verbose=False, use_strict_trace=True)``: it is traced with
        ``torch.jit.trace`` and written as ``torch.utils.tensorboard`` writes it.
        """
        from tfevents.proto import event_pb2  # lazy: the scalar path writes bytes without protobuf

        if is_torch_module(graph):      # the positional arguments are torch's, each in its own place
            torch_args = zip(("input_to_model", "verbose", "use_strict_trace"), (global_step, graph_def) + args)
            self._add_torch_graph(graph, **{name: a for name, a in torch_args if a is not None}, **kwargs)
            return
        data = self._graph_def_bytes(graph if graph is not None else graph_def)
        event = event_pb2.Event(wall_time=time.time(), step=as_step(global_step), graph_def=data)
        self._open_writer().add_serialized_event(event.SerializeToString())

    def add_meta_graph(self, meta_graph_def: Any, global_step: Optional[int] = None) -> None:
        """Write a MetaGraphDef proto (or its bytes)."""
        from tfevents.proto import event_pb2  # lazy: the scalar path writes bytes without protobuf

        data = message_bytes(meta_graph_def, "meta_graph_def", "MetaGraphDef")
        event = event_pb2.Event(wall_time=time.time(), step=as_step(global_step), meta_graph_def=data)
        self._open_writer().add_serialized_event(event.SerializeToString())

    def add_run_metadata(self, run_metadata: Any, tag: str, global_step: Optional[int] = None) -> None:
        """Write a RunMetadata (step stats for the Graphs dashboard) under ``tag``; a tag is usable once."""
        from tfevents.proto import event_pb2  # lazy: the scalar path writes bytes without protobuf

        tag = _check_tag(tag)
        if tag in self._run_metadata_tags:
            raise ValueError("The provided tag %r was already used for this event type" % tag)
        data = message_bytes(run_metadata, "run_metadata", "RunMetadata")
        self._run_metadata_tags.add(tag)
        event = event_pb2.Event(wall_time=time.time(), step=as_step(global_step))
        event.tagged_run_metadata.tag = tag
        event.tagged_run_metadata.run_metadata = data
        self._open_writer().add_serialized_event(event.SerializeToString())

    @staticmethod
    def _graph_def_bytes(graph: Any) -> bytes:
        if graph is None:
            raise ValueError("add_graph needs a graph or a graph_def")
        if hasattr(graph, "as_graph_def"):
            try:
                graph = graph.as_graph_def(add_shapes=True)
            except TypeError:
                graph = graph.as_graph_def()
        elif type(graph).__module__.startswith("torch") or hasattr(graph, "forward"):
            raise TypeError("add_graph takes a graph with as_graph_def(), a GraphDef or a torch.nn.Module, got %s"
                            % type(graph).__name__)
        return message_bytes(graph, "graph", "GraphDef")

    @staticmethod
    def _meta_graph_of(graph_def: bytes) -> Any:
        """``MetaGraphDef(graph_def=...)``, which TF1's FileWriter writes after a graph given to it."""
        from tfevents.proto import graph_pb2, meta_graph_pb2  # lazy: the scalar path writes bytes without protobuf

        meta = meta_graph_pb2.MetaGraphDef()
        meta.graph_def.CopyFrom(graph_pb2.GraphDef.FromString(graph_def))
        return meta
