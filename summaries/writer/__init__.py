"""Writing event files: ``SummaryWriter`` (TF1 ``FileWriter`` + tensorboardX/torch ``add_*``) and below it the
``EventFileWriter`` that only frames and queues.

- ``summary_writer.py``: the user API; ``media_methods.py``: its video/boxes/mesh/embedding/graph/... methods;
- ``event_file_writer.py``: one ``events.out.tfevents.*`` file, a background thread, flush/close/fork;
- ``event_bytes.py``: hand-encoded Event bytes for the hot paths; ``graph_io.py``: ``write_graph``.
"""
from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {"SummaryWriter": "summary_writer", "FileWriter": "summary_writer",
            "EventFileWriter": "event_file_writer", "write_graph": "graph_io"}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
