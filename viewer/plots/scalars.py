"""Scalar charts as TensorBoard draws them: every run overlaid in its own colour, the raw series faint
behind the smoothed one, non-finite points as markers, and long series downsampled per pixel column
keeping each column's first, last, minimum and maximum (so spikes survive)."""
from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from tfevents.summaries.reader.x_axis import scalars_on_x

from .. import logdir_data
from ..colors import run_colors
from ..smoothing import DEFAULT_SMOOTHING, Smoothing, minmax_indices, smoothing_of
from ..smoothing import smooth as smooth_series
from . import matplotlib_figures
from .matplotlib_figures import literal

X_AXES = ("step", "relative", "wall")
RAW_ALPHA = 0.25
MARKERS = {"nan": ("X", "NaN"), "+inf": ("^", "+inf"), "-inf": ("v", "-inf")}
LINESTYLES = ("-", "--", ":", "-.")


def chart_groups(tags, group: Optional[str] = None) -> dict[str, list[str]]:
    """``{chart title: [tags]}``: one chart per tag, or per value of ``group``'s first capture group
    (the whole match if it has none) for tags the regex matches; other tags keep their own chart."""
    pattern = logdir_data.compile_pattern(group, "group")
    charts: dict[str, list[str]] = {}
    for tag in sorted(set(tags)):
        key = tag
        if pattern is not None:
            m = pattern.search(tag)
            if m:
                key = m.group(1) if pattern.groups and m.group(1) is not None else m.group(0)
        charts.setdefault(key, []).append(tag)
    return charts


def plot_scalars(source: Any, tags: Optional[str] = None, runs: Optional[str] = None, *,
                 smoothing: float = DEFAULT_SMOOTHING, x: str = "step", logy: bool = False,
                 group: Optional[str] = None, max_points: int = 2000, ncols: Optional[int] = None,
                 colors: Optional[Mapping[str, str]] = None, logx: bool = False,
                 smooth: "Optional[str | Smoothing]" = None):
    """One matplotlib Figure with a chart per tag (or per ``group`` regex value), every run overlaid.

    ``source``: a logdir path, a Logdir, or ``{(run, tag): series}`` with ``.step``, ``.wall_time``,
    ``.value`` arrays. ``tags`` / ``runs``: regexes (``re.search``). ``smoothing``: TensorBoard's weight
    in [0, 1]. ``x``: ``step``, ``relative`` (time since the run's first point), ``wall``, or any scalar tag of
    the runs (e.g. ``samples_seen``: each point at the x its run logged for that tag at its step, interpolated
    between the tag's steps, never extrapolated; points without an x are dropped, their count under the chart:
    ``tfevents.summaries.reader.x_axis``). ``logx`` / ``logy``: logarithmic axes (x <= 0 not drawn on log x).
    ``smooth``: another smoothing than TensorBoard's EMA, ``"KIND:PARAM"`` or a Smoothing (``twema:0.6``,
    ``window:25``, ``gaussian:2.5`` in x units: ``tfevents.viewer.smoothing``), replacing ``smoothing``.
    """
    charts, colors, on_x = _prepare(source, tags, runs, group, colors, x)
    fig, axes = matplotlib_figures.grid(len(charts), ncols)
    if not charts:
        matplotlib_figures.empty(axes[0], "no scalars match")
        return fig
    for ax, (title, series) in zip(axes, charts.items()):
        draw_chart(ax, title, series, colors, smoothing=smoothing, x=x, logy=logy, max_points=max_points,
                   **_x_of(on_x, title), logx=logx, smooth=smooth)
    return fig


def scalar_figures(source: Any, tags: Optional[str] = None, runs: Optional[str] = None, *,
                   smoothing: float = DEFAULT_SMOOTHING, x: str = "step", logy: bool = False,
                   group: Optional[str] = None, max_points: int = 2000,
                   colors: Optional[Mapping[str, str]] = None, size=(7.0, 4.2), logx: bool = False,
                   smooth: "Optional[str | Smoothing]" = None) -> dict:
    """``{chart title: Figure}``, one Figure per tag or group (as in the HTML report)."""
    charts, colors, on_x = _prepare(source, tags, runs, group, colors, x)
    out = {}
    for title, series in charts.items():
        fig = matplotlib_figures.new_figure(*size)
        draw_chart(fig.add_subplot(), title, series, colors, smoothing=smoothing, x=x, logy=logy,
                   max_points=max_points, **_x_of(on_x, title), logx=logx, smooth=smooth)
        out[title] = fig
    return out


def _prepare(source, tags, runs, group, colors, x="step"):
    """``(charts, colors, on_x)``: ``on_x`` ``{chart title: (xs, dropped)}`` when ``x`` is a tag, else None."""
    if not isinstance(source, Mapping):
        source = logdir_data.load(source, tags=logdir_data.with_x_tag(tags, x), runs=runs, kinds=["scalars"])
    mapping = logdir_data.kind(source, "scalars")
    colors = dict(colors or run_colors(logdir_data.all_runs(source, mapping)))
    chosen = logdir_data.select(mapping, tags, runs)
    for run, _ in chosen:
        colors.setdefault(run, run_colors([run])[run])
    by_tag: dict[str, list] = {}
    for (run, tag), s in chosen.items():
        by_tag.setdefault(tag, []).append((run, tag, s))
    charts = {title: [item for t in members for item in by_tag[t]]
              for title, members in chart_groups(by_tag, group).items()}
    if x in X_AXES:
        return charts, colors, None
    on_x = {}
    for title, items in list(charts.items()):
        on = scalars_on_x({(run, tag): s for run, tag, s in items}, x, mapping)
        charts[title] = [(run, tag, on.series[(run, tag)]) for run, tag, _ in items if (run, tag) in on.series]
        on_x[title] = (on.x, on.total_dropped)
    return charts, colors, on_x


def _x_of(on_x, title) -> dict:
    return {} if on_x is None else {"xs": on_x[title][0], "dropped": on_x[title][1]}


def x_values(series, x: str) -> np.ndarray:
    if x == "step":
        return np.asarray(series.step, dtype=np.float64)
    wall = np.asarray(series.wall_time, dtype=np.float64)
    if x == "relative":
        return wall - wall[0] if wall.size else wall
    if x == "wall":
        return wall
    raise ValueError("x must be one of %s, got %r" % (", ".join(X_AXES), x))


def draw_chart(ax, title: str, series: list, colors: Mapping[str, str], *,
               smoothing: float = DEFAULT_SMOOTHING, x: str = "step", logy: bool = False,
               max_points: int = 2000, xs: Optional[Mapping] = None, dropped: int = 0, logx: bool = False,
               smooth: "Optional[str | Smoothing]" = None) -> None:
    """Draw ``[(run, tag, series)]`` into ``ax``: raw (faint) + smoothed line per run, non-finite markers.
    ``smooth`` (``"KIND:PARAM"`` or a Smoothing) replaces TensorBoard's EMA of weight ``smoothing``.
    ``x`` a tag: ``xs`` ``{(run, tag): x values}`` of those series' points and ``dropped`` the points left out
    (``tfevents.summaries.reader.x_axis.scalars_on_x``), said under the chart."""
    if x not in X_AXES and xs is None:
        raise ValueError("x must be one of %s, or a tag with its x values (xs=), got %r" % (", ".join(X_AXES), x))
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError("smoothing must be in [0, 1], got %r" % smoothing)
    spec = smoothing_of(smoothing, smooth)
    tags = sorted({t for _, t, _ in series})
    style = {t: LINESTYLES[i % len(LINESTYLES)] for i, t in enumerate(tags)}
    xs = {id(s): x_values(s, x) if x in X_AXES else np.asarray(xs[(run, tag)], dtype=np.float64)
          for run, tag, s in series}
    scale, unit = _time_scale(xs.values()) if x == "relative" else (1.0, "")
    seen_markers = set()
    for run, tag, s in series:
        xv = xs[id(s)] / scale
        yv = np.asarray(s.value, dtype=np.float64)
        color = colors[run]
        label = literal(run if len(tags) == 1 else "%s: %s" % (run, tag))

        def xv_plot(idx, xv=xv):  # wall time is drawn as dates
            return (xv[idx] * 1e6).astype("datetime64[us]") if x == "wall" else xv[idx]
        sm = yv if spec.raw else smooth_series(xs[id(s)], yv, *spec)   # x as logged (seconds for relative)
        xd = _log10_or_nan(xv) if logx else xv   # pixel columns as drawn: equal widths in log10(x) on log x
        raw = minmax_indices(xd, yv, max_points)
        if not spec.raw:
            ax.plot(xv_plot(raw.line), yv[raw.line], color=color, alpha=RAW_ALPHA, lw=1.0,
                    ls=style[tag], zorder=2)
            smo = minmax_indices(xd, sm, max_points)
            ax.plot(xv_plot(smo.line), sm[smo.line], color=color, lw=1.6, ls=style[tag], label=label,
                    zorder=3, marker="o" if smo.line.size == 1 else None)  # a lone point still shows
        else:
            ax.plot(xv_plot(raw.line), yv[raw.line], color=color, lw=1.4, ls=style[tag], label=label,
                    zorder=3, marker="o" if raw.line.size == 1 else None)
        if raw.markers.size:
            # TensorBoard draws a non-finite point at the last finite (displayed) value before it
            where = _last_finite_before(sm, raw.markers)
            bad = yv[raw.markers]
            for key, mask in (("nan", np.isnan(bad)), ("+inf", bad > 0), ("-inf", bad < 0)):
                if mask.any():
                    ax.plot(xv_plot(raw.markers[mask]), where[mask], ls="none", marker=MARKERS[key][0],
                            color=color, ms=7, mec="black", mew=0.6, zorder=4)
                    seen_markers.add(key)
    ax.set_title(literal(title), fontsize=10)
    label = {"step": "step", "relative": "relative time (%s)" % unit, "wall": "wall time (UTC)"}.get(x, x)
    if dropped:
        label += "\n(%d point%s without %s dropped)" % (dropped, "" if dropped == 1 else "s", x)
    ax.set_xlabel(literal(label))
    if logy:
        ax.set_yscale("log")
    if logx:
        ax.set_xscale("log", nonpositive="mask")
    if x == "wall":
        import matplotlib.dates as mdates
        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.grid(True, alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    for key in ("nan", "+inf", "-inf"):
        if key in seen_markers:
            from matplotlib.lines import Line2D
            handles.append(Line2D([], [], ls="none", marker=MARKERS[key][0], color="0.5", mec="black"))
            labels.append(MARKERS[key][1])
    if handles:
        # outside the plot area, so no data is hidden behind it
        ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _log10_or_nan(x: np.ndarray) -> np.ndarray:
    out = np.full(x.shape, np.nan)
    np.log10(x, out=out, where=x > 0)
    return out


def _last_finite_before(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """For each index, the last finite value before it (the first finite value if none; 0 if none)."""
    finite = np.flatnonzero(np.isfinite(values))
    if finite.size == 0:
        return np.zeros(idx.size)
    pos = np.searchsorted(finite, idx) - 1
    return values[finite[np.clip(pos, 0, None)]]


def _time_scale(xs) -> tuple[float, str]:
    span = max((float(np.nanmax(v)) for v in xs if np.size(v)), default=0.0)
    if span >= 2 * 3600:
        return 3600.0, "h"
    if span >= 120:
        return 60.0, "min"
    return 1.0, "s"

