"""The interactive HTML report (``tfevents report``): TensorBoard's dashboards in one self-contained file.

- ``page.py``: ``render_interactive_report`` / ``write_interactive_report`` / ``watch_interactive_report``: the
  page, with its script (``*.js``), style (``report.css``) and the vendored uPlot (``vendor/``, MIT) inline
  under a hash-based Content-Security-Policy;
- ``collect.py``: what the page shows, gathered from a loaded Logdir;
- ``encode.py``: how the data travels in the page (JSON plus one base64 buffer of typed arrays).

The three functions are exported lazily (PEP 562), so importing this package imports none of its modules.
"""
from __future__ import annotations

from tfevents.summaries.lazy import lazy_exports

# public name -> submodule that defines it
_EXPORTS = {
    "render_interactive_report": "page", "write_interactive_report": "page", "watch_interactive_report": "page",
}

__all__ = ["render_interactive_report", "write_interactive_report", "watch_interactive_report"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
