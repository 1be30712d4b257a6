"""matplotlib plumbing shared by the plots (and the reports, which inline their Figures): matplotlib imported
only when a Figure is made, Agg-safe, no pyplot global state.

Figures are made with ``matplotlib.figure.Figure`` (not pyplot), so nothing is kept alive by a global
figure manager and they render with the Agg canvas; in Jupyter they display like any Figure.

Every string from the data (run names, tags, group names, HParams names and values, metadata labels) goes into a
Figure through :func:`literal`, as a title, an axis or tick label, a text or a legend label: matplotlib reads
``$...$`` as mathtext (``lr=$\\alpha_{$`` fails to draw, ``price $5 and $6`` is drawn as math) and leaves a label
starting with ``_`` out of the legend.
"""
from __future__ import annotations

import base64
import io
import math
import os

from tfevents.summaries.atomic import atomic_write


# before a leading "_": drawn as nothing, so the name shows as it is, but no longer starts with matplotlib's mark of
# an artist kept out of the legend
_ZERO_WIDTH_SPACE = "\u200b"


def literal(text) -> str:
    """``text`` as a matplotlib Text draws it as written: each ``$`` escaped from mathtext, and a leading ``_``
    behind a zero-width space (so a legend label starting with ``_`` is still shown)."""
    text = str(text).replace("$", "\\$")
    return _ZERO_WIDTH_SPACE + text if text.startswith("_") else text


def new_figure(width: float, height: float):
    from matplotlib.figure import Figure
    return Figure(figsize=(width, height), layout="constrained")


def grid(n: int, ncols: int | None = None, cell=(6.0, 3.8), sharex: bool = False):
    """A Figure with ``n`` axes in a grid of ``ncols`` columns; returns (fig, [axes])."""
    n = max(n, 1)
    ncols = ncols or min(n, 2)
    nrows = math.ceil(n / ncols)
    fig = new_figure(cell[0] * ncols, cell[1] * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=sharex).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def to_bytes(fig, fmt: str = "png", dpi: int = 100) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi)
    return buf.getvalue()


def to_data_uri(fig, dpi: int = 100) -> str:
    return "data:image/png;base64," + base64.b64encode(to_bytes(fig, "png", dpi)).decode("ascii")


def save(fig, path: str, dpi: int = 100) -> None:
    """Save by the file's extension (png, svg, pdf, ...), atomically (write a temp file, then rename)."""
    ext = os.path.splitext(path)[1].lstrip(".").lower() or "png"
    atomic_write(path, to_bytes(fig, ext, dpi), durable=False)


def empty(ax, message: str) -> None:
    ax.text(0.5, 0.5, literal(message), ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])
