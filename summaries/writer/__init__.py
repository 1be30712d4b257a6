"""Writing event files: ``SummaryWriter`` (TF1 ``FileWriter`` + tensorboardX/torch ``add_*``) and below it the
``EventFileWriter`` that only frames and queues.

- ``summary_writer.py``: the user API's core (the writer's life, scalars, queueing and encoding in the
  background); its methods by concern, mixed in: ``media_methods.py`` (every kind a builder makes: histograms,
  images, text, audio, PR curves, video, boxes, meshes, embeddings, ...), ``graph_methods.py`` (graph, meta graph,
  run metadata), ``hparams_methods.py`` (``add_hparams``: a trial and its metrics); ``call_values.py``: the checks of what a caller passes;
  ``peer_file_writer.py``: the peers' ``file_writer``; ``ranks.py``: which ranks write, and the silent writers;
- ``event_file_writer.py``: one ``events.out.tfevents.*`` file, a background thread, flush/close/fork, the exit and
  SIGTERM hooks; its sinks: ``file_sink.py`` (a local file), ``object_sink.py`` (new objects in an object store);
- ``event_bytes.py``: hand-encoded Event bytes for the hot paths; ``graph_io.py``: ``write_graph``.
"""
from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {"SummaryWriter": "summary_writer", "FileWriter": "summary_writer",
            "EventFileWriter": "event_file_writer", "write_graph": "graph_io"}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
