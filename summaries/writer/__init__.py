"""Writing event files: ``SummaryWriter`` (TF1 ``FileWriter`` + tensorboardX/torch ``add_*``) and below it the
``EventFileWriter`` that only frames and queues.

- ``summary_writer.py``: the user API (scalars, histograms, images, text, audio, PR curves, hparams, the writer's
  life); ``graph_methods.py``: its graph, meta graph and run metadata methods; ``media_methods.py``: its
  video/boxes/mesh/embedding/torch graph/... methods; ``call_values.py``: the checks of what a caller passes;
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
