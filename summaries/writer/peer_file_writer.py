"""The peers' ``FileWriter`` (tensorboardX's and torch's) over one of our SummaryWriters: ``writer.file_writer``
and ``writer._get_file_writer()``, through which frameworks write protos themselves."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from .call_values import message_bytes
from .event_file_writer import EventFileWriter

__all__ = ["PeerFileWriter"]


class PeerFileWriter:
    """tensorboardX's and torch's ``FileWriter`` over a SummaryWriter's run: what ``writer.file_writer`` and
    ``writer._get_file_writer()`` return, for the code that writes protos through it (Lightning's
    ``TensorBoardLogger.log_hyperparams``, Ray Tune's ``TBXLoggerCallback``). Writes go to the run's event file
    (reopened after a ``close()``); ``event_writer`` is our EventFileWriter underneath, and what this class does not
    define is read from it (``get_filename()``, ``closed``, ``storage``: ``file_writer`` used to be it)."""

    def __init__(self, writer: Any) -> None:   # the SummaryWriter (which imports this module)
        self._writer = writer

    @property
    def event_writer(self) -> EventFileWriter:
        return self._writer._file_writer

    def __getattr__(self, name: str) -> Any:
        if name == "_writer" or name.startswith("__"):    # not made by __init__ (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self._writer._file_writer, name)

    def get_logdir(self) -> str:
        return self._writer.get_logdir()

    def add_event(self, event: Any, step: Optional[int] = None, walltime: Optional[float] = None) -> None:
        """``event`` with its wall time set (``walltime``, else now) and its step when ``step`` is given, as the
        peers write it; the caller's proto is not changed."""
        from tfevents.proto import event_pb2  # lazy: the scalar path writes bytes without protobuf

        copy = event_pb2.Event.FromString(message_bytes(event, "event", "Event"))
        copy.wall_time = self._writer._walltime_of(walltime)
        if step is not None or self._writer._default_step is not None:
            copy.step = self._writer._step_of(step)
        self._writer.add_event(copy)

    def add_summary(self, summary: Any, global_step: Optional[int] = None, walltime: Optional[float] = None) -> None:
        self._writer.add_summary(summary, global_step, walltime)

    def add_graph(self, graph_profile: Sequence[Any], walltime: Optional[float] = None) -> None:
        """``(GraphDef, RunMetadata)``: the graph event and the run metadata tagged ``step1``, as torch's."""
        from tfevents.proto import event_pb2  # lazy: the scalar path writes bytes without protobuf

        from ..builders.torch_graph import TORCH_RUN_METADATA_TAG  # lazy: numpy

        graph_def, run_metadata = graph_profile
        self.add_event(event_pb2.Event(graph_def=message_bytes(graph_def, "graph", "GraphDef")), None, walltime)
        tagged = event_pb2.TaggedRunMetadata(tag=TORCH_RUN_METADATA_TAG,
                                             run_metadata=message_bytes(run_metadata, "run_metadata", "RunMetadata"))
        self.add_event(event_pb2.Event(tagged_run_metadata=tagged), None, walltime)

    def add_onnx_graph(self, graph: Any, walltime: Optional[float] = None) -> None:
        """A GraphDef (the peers' ONNX and OpenVINO graphs are GraphDefs) as a graph event."""
        from tfevents.proto import event_pb2  # lazy: the scalar path writes bytes without protobuf

        self.add_event(event_pb2.Event(graph_def=message_bytes(graph, "graph", "GraphDef")), None, walltime)

    add_openvino_graph = add_onnx_graph

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def reopen(self) -> None:
        self._writer.reopen()

    def __repr__(self) -> str:
        return "PeerFileWriter(%r)" % self.get_logdir()
