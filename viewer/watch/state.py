"""What ``tfevents watch`` shows, kept current by the live loader (no terminal code here).

``WatchState.reload()`` runs one pass of :class:`tfevents.summaries.live.LiveLogdir` (the loader behind ``tfevents
serve``: each pass reads only the bytes appended since the last one, each series a reservoir of at most
``samples`` points, so memory does not grow with the steps logged). Only scalars are kept: every other plugin gets
a reservoir of 0 points. ``series(run, tag)`` gives a series' columns; ``line(...)`` the x and smoothed y a chart
draws and the last/min/max its legend prints; ``problems`` what the status line reports: the loader's (corrupt
records with file and offset, unreadable files) and the restarts seen between passes.

A restart is seen when a series' last step goes back between two passes (the job was restarted from a
checkpoint and re-logs steps the reservoir then preempts, as TensorBoard does). A restart that re-logs past
the old last step within one refresh interval is preempted all the same but not reported.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from tfevents.summaries.live import loader as live
from tfevents.summaries.reader.decode import Problem
from tfevents.summaries.reader.x_axis import x_at_steps

from ..colors import run_colors
from ..smoothing import Smoothing, smoothing_of
from ..smoothing import smooth as smooth_series

__all__ = ["WatchState", "Line", "Stats", "X_AXES"]

X_AXES = ("step", "relative")


@dataclass(frozen=True)
class Stats:
    """A series' last point (step and raw value), its smoothed last value and the raw min and max of every value it
    logged (NaN left out; NaN when none)."""

    step: int
    last: float
    smoothed: float
    min: float
    max: float


@dataclass(frozen=True)
class Line:
    """What a chart draws for one run: x (step, seconds since the run's start, or a tag's value) and the smoothed
    y; ``dropped`` the points left out for want of an x (on a tag's axis)."""

    run: str
    x: np.ndarray
    y: np.ndarray
    stats: Stats
    dropped: int = 0


class WatchState:
    """The scalars of a live logdir, refreshed by :meth:`reload` (call it from one thread at a time)."""

    def __init__(self, path: str, samples: int = 1000, storage_options: Optional[dict] = None,
                 threads: Optional[int] = None, choose: Optional[Callable] = None):
        self.path = os.fspath(path)
        # with a choice of runs (--where), the HParams series are kept too: a query may ask for an hparam
        self.live = live.LiveLogdir(self.path, samples_per_plugin={"scalars": samples},
                                    plugins=("scalars",) + ("hparams",) * (choose is not None),
                                    storage_options=storage_options, on_problem=lambda p: None, threads=threads,
                                    choose=choose)
        self.restarts: List[Problem] = []
        self._last_steps: Dict[Tuple[str, str], int] = {}
        self.colors: Dict[str, str] = {}

    @property
    def passes(self) -> int:
        return self.live.passes

    @property
    def problems(self) -> List[Problem]:
        """The loader's problems (corrupt records, unreadable files) then the restarts seen, in order found."""
        return list(self.live.problems) + self.restarts

    def reload(self) -> None:
        """One pass of the live loader; notes the series whose last step went back (a restart)."""
        self.live.reload()
        for info in self.live.tags(data_class=live.SCALAR):
            before = self._last_steps.get((info.run, info.tag))
            if before is not None and info.last_step < before:
                self.restarts.append(Problem(info.run, None, "restart", "%s went back from step %d to %d"
                                             % (info.tag, before, info.last_step)))
            self._last_steps[(info.run, info.tag)] = info.last_step
        self.colors = run_colors(self.live.run_names(every=True))   # a run keeps its colour whatever is chosen

    def runs(self) -> List[str]:
        return self.live.run_names()

    def tags(self, pattern: Optional[str] = None) -> List[str]:
        """The scalar tags of every run, sorted, those matching the regex ``pattern`` (``re.search``) only.
        ``re.error`` for a bad pattern."""
        regex = re.compile(pattern) if pattern else None
        found = {info.tag for info in self.live.tags(data_class=live.SCALAR)}
        return sorted(t for t in found if regex is None or regex.search(t))

    def series(self, run: str, tag: str) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``(step, wall_time, value)`` of a run's scalar tag as kept now, or None."""
        points = self.live.points(run, tag)  # the loader keeps points of scalar series only
        return tuple(points) if points is not None and len(points.step) else None

    def start_time(self, run: str) -> Optional[float]:
        return self.live.start_time(run)

    def line(self, run: str, tag: str, smoothing: "float | Smoothing", x: str = "step") -> Optional[Line]:
        """A run's line in the chart of ``tag``: x by ``x`` (``step``, or ``relative``: seconds since the run's
        first event), y smoothed by TensorBoard's rule with weight ``smoothing``, or by ``smoothing`` when it is a
        Smoothing (any kind, on that x); None when the run has no such series."""
        found = self.live.tags([run], [tag], data_class=live.SCALAR)
        cols = self.series(run, tag) if found else None
        if cols is None:
            return None
        steps, walls, values = cols
        values = values.astype(np.float64)
        spec = smoothing if isinstance(smoothing, Smoothing) else smoothing_of(smoothing)
        dropped = 0
        if x == "relative":
            start = self.start_time(run)
            xs = walls - (start if start is not None else walls[0])
        elif x == "step":
            xs = steps.astype(np.float64)
        else:   # a scalar tag: tfevents.summaries.reader.x_axis's rule on the points the reservoirs keep
            x_cols = self.series(run, x) if self.live.tags([run], [x], data_class=live.SCALAR) else None
            xs = x_at_steps(steps, x_cols[0], x_cols[2]) if x_cols is not None else np.full(len(steps), np.nan)
            keep = ~np.isnan(xs)
            dropped = int(len(keep) - keep.sum())
            if not keep.any():
                return None
            if dropped:
                steps, xs, values = steps[keep], xs[keep], values[keep]
        smoothed = smooth_series(xs, values, *spec)
        info = found[0]   # the whole series' min and max, not the sample's (the loader counts every point)
        stats = Stats(int(steps[-1]), float(values[-1]), float(smoothed[-1]), info.min, info.max)
        return Line(run, xs, smoothed, stats, dropped)
