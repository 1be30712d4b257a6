"""Seeds as bands: each group of runs (``tfevents.summaries.aggregate``) drawn as its mean (or median) line over a
shaded band, mean ± std or min–max, one chart per tag, a colour per group.

    from tfevents.viewer.plots.bands import plot_aggregate
    plot_aggregate("runs/", by=r"/seed_\\d+$", band="std").savefig("bands.png")

With ``smoothing`` > 0 the line and both edges of the band are smoothed as TensorBoard smooths a series (``smooth``:
another kind, ``"KIND:PARAM"``, on the chart's x: ``tfevents.viewer.smoothing``).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from tfevents.summaries.compare.aggregate import aggregate_columns
from tfevents.summaries.reader.x_axis import x_label

from ..colors import run_colors
from ..smoothing import Smoothing, smoothing_of
from ..smoothing import smooth as smooth_series
from . import matplotlib_figures
from .matplotlib_figures import literal

CENTERS = ("mean", "median")
BANDS = ("std", "minmax", "none")
BAND_ALPHA = 0.25


def band_edges(series: Mapping[str, np.ndarray], band: str) -> tuple:
    """``(lower, upper)`` of one (group, tag): ``mean ∓ std`` (a single run: no band) or ``min``, ``max``."""
    if band == "std":
        std = np.nan_to_num(series["std"], nan=0.0)
        return series["mean"] - std, series["mean"] + std
    if band == "minmax":
        return series["min"], series["max"]
    return None, None


def _stats_for(center: str, band: str) -> tuple:
    need = {center, "count"} | ({"mean", "std"} if band == "std" else {"min", "max"} if band == "minmax" else set())
    return tuple(s for s in ("mean", "std", "min", "max", "median", "count") if s in need)


def plot_aggregate(source: Any, by, tags: Optional[str] = None, runs: Optional[str] = None, *,
                   center: str = "mean", band: str = "std", align: str = "auto", bins: Optional[int] = None,
                   smoothing: float = 0.0, logy: bool = False, ncols: Optional[int] = None,
                   colors: Optional[Mapping[str, str]] = None, x: str = "step", logx: bool = False,
                   smooth: "Optional[str | Smoothing]" = None):
    """A Figure with one chart per tag: each group's ``center`` line over its ``band`` ('std', 'minmax' or
    'none'). ``source``: a logdir path or a loaded Logdir; ``by``, ``align``, ``bins`` as
    :func:`tfevents.summaries.aggregate`; ``x`` the axis the runs are aligned on (a scalar tag too, the points without
    an x counted under the chart); ``logx`` / ``logy`` logarithmic axes."""
    if center not in CENTERS:
        raise ValueError("center must be one of %s, got %r" % (", ".join(CENTERS), center))
    if band not in BANDS:
        raise ValueError("band must be one of %s, got %r" % (", ".join(BANDS), band))
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError("smoothing must be in [0, 1], got %r" % smoothing)
    spec = smoothing_of(smoothing, smooth)
    table = aggregate_columns(source, by, tags, _stats_for(center, band), align=align, bins=bins, runs=runs,
                              on_error="skip", x=x)
    colors = dict(colors or run_colors(table.groups))
    by_tag: dict = {}
    for group, tag in table.align:
        by_tag.setdefault(tag, []).append(group)
    fig, axes = matplotlib_figures.grid(len(by_tag), ncols)
    if not by_tag:
        matplotlib_figures.empty(axes[0], "no scalars match")
        return fig
    for ax, tag in zip(axes, sorted(by_tag)):
        for group in by_tag[tag]:
            series = table.series(group, tag)
            xv = series[table.x_column]
            line = series[center]
            lower, upper = band_edges(series, band)
            if not spec.raw:
                line = smooth_series(xv, line, *spec)
                if lower is not None:
                    lower, upper = smooth_series(xv, lower, *spec), smooth_series(xv, upper, *spec)
            color = colors[group]
            if lower is not None:
                ax.fill_between(xv, lower, upper, color=color, alpha=BAND_ALPHA, lw=0, zorder=2)
            runs_in = len(table.groups[group])
            ax.plot(xv, line, color=color, lw=1.6, zorder=3, marker="o" if len(xv) == 1 else None,
                    label=literal("%s (%d run%s)" % (group, runs_in, "" if runs_in == 1 else "s")))
        ax.set_title(literal("%s: %s%s" % (tag, center, {"std": " ± std", "minmax": ", min–max", "none": ""}[band])),
                     fontsize=10)
        dropped = sum(n for (_, t), n in table.dropped.items() if t == tag)
        note = "\n(%d point%s without %s dropped)" % (dropped, "" if dropped == 1 else "s", x) if dropped else ""
        ax.set_xlabel(literal(x_label(x) + note))
        if logx:
            ax.set_xscale("log", nonpositive="mask")
        if logy:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return fig
