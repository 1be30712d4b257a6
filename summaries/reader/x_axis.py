"""A scalar series on another x axis: a run's step, its time, or any scalar tag it logged (``samples_seen``,
``tokens``, ``epoch``), so runs of different batch sizes line up.

The rule (:func:`x_at_steps`): a point logged at step ``s`` takes, as its x, the value its run logged for the x
tag at step ``s``. Where the x tag was logged at other steps (every 10 steps, say), x is the linear
interpolation between the x tag's two points around ``s`` (``np.interp``), only inside the x tag's step range
``[first step, last step]``: nothing is extrapolated. A point left without an x (outside that range, or in a run
that never logged the x tag) is dropped and counted. The x tag's series is first put in step order with one
point per step (the last one logged for a repeated step, as everywhere in the reader), and its non-finite values
are not used.

``step``, ``relative`` (seconds since the series' first point) and ``wall`` (Unix seconds) name the built-in
axes; they take precedence over a tag of the same name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Tuple

import numpy as np

from .types import ScalarSeries

__all__ = ["BUILTIN_X", "x_at_steps", "series_x", "OnX", "scalars_on_x", "x_label"]

BUILTIN_X = ("step", "relative", "wall")


def x_at_steps(step: np.ndarray, x_step: np.ndarray, x_value: np.ndarray) -> np.ndarray:
    """float64 x of each step in ``step`` from the x tag's points ``(x_step, x_value)``: the x tag's value logged
    at that step, else its linear interpolation inside the x tag's step range, else NaN (no x: the caller drops
    the point). Module docstring: the rule."""
    step = np.asarray(step, dtype=np.int64)
    x_step = np.asarray(x_step, dtype=np.int64)
    x_value = np.asarray(x_value, dtype=np.float64)
    if len(x_step) > 1 and not bool(np.all(x_step[1:] > x_step[:-1])):   # step order, the last of a repeated step
        order = np.argsort(x_step, kind="stable")
        x_step, x_value = x_step[order], x_value[order]
        last = np.append(x_step[1:] != x_step[:-1], True)
        x_step, x_value = x_step[last], x_value[last]
    finite = np.isfinite(x_value)
    if not finite.all():
        x_step, x_value = x_step[finite], x_value[finite]
    out = np.full(len(step), np.nan)
    if not len(x_step):
        return out
    inside = (step >= x_step[0]) & (step <= x_step[-1])
    out[inside] = np.interp(step[inside].astype(np.float64), x_step.astype(np.float64), x_value)
    at = np.searchsorted(x_step, step)                                   # exactly the logged value where logged
    hit = at < len(x_step)
    hit[hit] = x_step[at[hit]] == step[hit]
    out[hit] = x_value[at[hit]]
    return out


def series_x(series: ScalarSeries, x: str, x_series: Optional[ScalarSeries] = None) -> np.ndarray:
    """float64 x of each point of ``series``: its step, ``relative`` time since its first point, ``wall`` time,
    or (any other ``x``) :func:`x_at_steps` on ``x_series``, the run's series of that tag (None: the run did not
    log it, every x NaN)."""
    if x == "step":
        return np.asarray(series.step, dtype=np.float64)
    if x in ("relative", "wall"):
        wall = np.asarray(series.wall_time, dtype=np.float64)
        return wall - wall[0] if x == "relative" and wall.size else wall
    if x_series is None:
        return np.full(len(series.step), np.nan)
    return x_at_steps(series.step, x_series.step, x_series.value)


@dataclass
class OnX:
    """Scalars on an x axis: ``series`` the kept points of each (run, tag) (a series left empty is absent),
    ``x`` their x values (float64), ``dropped`` the points dropped per (run, tag) (only those that lost some)."""

    x_name: str
    series: Dict[Tuple[str, str], ScalarSeries]
    x: Dict[Tuple[str, str], np.ndarray]
    dropped: Dict[Tuple[str, str], int]

    @property
    def total_dropped(self) -> int:
        return sum(self.dropped.values())


def scalars_on_x(scalars: Mapping[Tuple[str, str], ScalarSeries], x: str,
                 x_source: Optional[Mapping[Tuple[str, str], ScalarSeries]] = None) -> OnX:
    """Every ``(run, tag)`` series of ``scalars`` on the x axis ``x`` (module docstring: the rule), the points
    without an x dropped and counted. ``x_source``: where each run's x tag series is looked up
    (``x_source[(run, x)]``; default ``scalars`` itself, e.g. when a tag filter left the x tag out of
    ``scalars``)."""
    if not isinstance(x, str) or not x:
        raise ValueError("x must be step, relative, wall or a scalar tag, got %r" % (x,))
    source = scalars if x_source is None else x_source
    kept: Dict[Tuple[str, str], ScalarSeries] = {}
    xs: Dict[Tuple[str, str], np.ndarray] = {}
    dropped: Dict[Tuple[str, str], int] = {}
    for key, s in scalars.items():
        xv = series_x(s, x, None if x in BUILTIN_X else source.get((key[0], x)))
        ok = ~np.isnan(xv)
        if not ok.all():
            dropped[key] = int(len(ok) - ok.sum())
            if not ok.any():
                continue
            s = ScalarSeries(np.asarray(s.step)[ok], np.asarray(s.wall_time)[ok], np.asarray(s.value)[ok])
            xv = xv[ok]
        kept[key], xs[key] = s, xv
    return OnX(x, kept, xs, dropped)


def x_label(x: str) -> str:
    """The x axis' name as a chart writes it (a tag as is)."""
    return {"step": "step", "relative": "relative time", "wall": "wall time (UTC)"}.get(x, x)
