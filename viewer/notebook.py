"""The interactive report inside a notebook: ``show(source)`` and ``Logdir._repr_html_``.

The page is exactly what ``tfevents report`` writes (``reports/interactive/page.py``), given to an
``<iframe srcdoc="...">`` (the page HTML-escaped into the attribute), so it needs no server: it displays in
JupyterLab, classic Notebook, VS Code and Colab alike, and stays in a notebook exported by ``jupyter nbconvert
--to html``. The iframe is sandboxed to scripts (and the CSV downloads): an opaque origin, so several reports in
one notebook share no storage and no globals, and nothing a summary holds can reach the notebook. Re-running the
cell reads the logdir again.
"""
from __future__ import annotations

import html
from typing import Any, Optional

from .reports.interactive.page import render_interactive_report

__all__ = ["show", "report_view", "report_iframe", "ReportView", "DEFAULT_HEIGHT"]

DEFAULT_HEIGHT = 640   # pixels: a row of charts and the sidebar's controls without scrolling the notebook
SANDBOX = "allow-scripts allow-downloads"


def report_iframe(page: str, height: int = DEFAULT_HEIGHT) -> str:
    """An ``<iframe>`` element showing the HTML document ``page`` (through ``srcdoc``), ``height`` pixels tall."""
    height = int(height)
    if height <= 0:
        raise ValueError("height must be a positive number of pixels, got %r" % height)
    return ('<iframe srcdoc="%s" sandbox="%s" style="width: 100%%; height: %dpx; border: 1px solid #ddd" '
            'loading="eager" title="tfevents report"></iframe>' % (html.escape(page, quote=True), SANDBOX, height))


class ReportView:
    """A rendered report that Jupyter displays inline (``_repr_html_``); ``html`` is the iframe element."""

    def __init__(self, page: str, height: int = DEFAULT_HEIGHT):
        self.page = page
        self.height = height
        self.html = report_iframe(page, height)

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return "<tfevents report: %d bytes, shown inline in a notebook>" % len(self.page)


def report_view(source: Any, *, tags: Optional[str] = None, runs: Optional[str] = None,
                height: int = DEFAULT_HEIGHT, storage_options: Optional[dict] = None, where: Optional[str] = None,
                archived: bool = False, **report_options: Any) -> ReportView:
    """The interactive report of ``source`` as an object a notebook displays inline (``show``'s arguments)."""
    page = render_interactive_report(source, tags=tags, runs=runs, storage_options=storage_options, where=where,
                                     archived=archived, **report_options)
    return ReportView(page, height)


def show(source: Any, *, tags: Optional[str] = None, runs: Optional[str] = None, height: int = DEFAULT_HEIGHT,
         storage_options: Optional[dict] = None, where: Optional[str] = None, archived: bool = False,
         **report_options: Any) -> None:
    """Display the interactive report of ``source`` in the notebook cell's output.

    ``source``: a logdir path, an fsspec URL (``s3://``, ``gs://``, ... with ``storage_options`` as the reader
    takes them), or a loaded Logdir; ``tags`` / ``runs``: regexes (``re.search``) choosing what is shown;
    ``where``: a run query choosing the runs (``'lr < 0.01 and "val/acc".max > 0.9'``:
    ``tfevents.summaries.runs.query``); archived runs (``tfevents runs archive``) are left out unless ``archived``;
    ``height``: the frame's height in pixels; ``report_options``: ``render_interactive_report``'s other options
    (``smoothing``, ``smooth`` (``"twema:0.6"``, ``"window:25"``, ``"gaussian:2.5"``: the page's smoothing to start
    with), ``x`` (``step``, ``relative``, ``wall`` or any scalar tag, e.g. ``"samples_seen"``), ``logy``,
    ``logx``, ``group``, ``title``, ``aggregate``, ``center``, ``band``, ...;
    ``aggregate=r"/seed_\\d+$"`` draws each group of seeds as its mean over a band). Displays and returns nothing (as
    ``matplotlib.pyplot.show``), so a cell may call it several times; ``report_view`` returns the object instead.
    """
    try:
        from IPython.display import display
    except ImportError:
        raise RuntimeError("show() displays in a notebook (IPython); elsewhere use report_view(...).page or "
                           "`tfevents report`") from None
    display(report_view(source, tags=tags, runs=runs, height=height, storage_options=storage_options, where=where,
                        archived=archived, **report_options))


def logdir_html(logdir: Any) -> str:
    """What a Logdir shows as a notebook cell's value: its report in an iframe (``Logdir._repr_html_``)."""
    return report_iframe(render_interactive_report(logdir))
