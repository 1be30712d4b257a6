"""``aggregate(logdir, by=...)``: the runs of each group (seeds, ranks, equal HParams) reduced to statistics per
step, for every scalar tag.

::

    from tfevents.summaries import aggregate
    df = aggregate("runs/", by=r"/seed_\\d+$")            # group, tag, step, mean, std, min, max, median, count
    df = aggregate("runs/", by=["lr", "optimizer"])      # runs with equal HParams values together
    aggregate("runs/", by=r"/rank_\\d+$", write="reduced/")  # fold distributed ranks; event files per statistic

For each group and tag, the runs that logged the tag are aligned (:mod:`.align`: the same steps as
tensorboard-reducer when every run logged the same steps, else linear interpolation onto the union of steps inside
each run's range, or ``align="bins", bins=N``) and each step's values are reduced (:mod:`.stats`: NaN skipped,
``count`` the runs a row covers, ``std`` with ``ddof=1``). The table is also ``df.attrs["groups"]``
(``{group: [run, ...]}``) and ``df.attrs["align"]`` (``{(group, tag): alignment used}``).

``x="samples_seen"`` (any scalar tag, or ``relative``/``wall`` time) aligns the runs on that x instead of the step:
each point takes the x its run logged for that tag at its step, interpolated between the steps the tag was logged
at, never extrapolated (``tfevents.summaries.reader.x_axis``; points without an x are dropped, their count per
(group, tag) in ``attrs["dropped"]``), and the runs are aligned on the union of their x values as above; the table
then has an ``x`` column (float64) instead of ``step``, and ``attrs["x"]`` names it.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..reader.load import Logdir, load_logdir
from ..reader.x_axis import BUILTIN_X, series_x
from .align import ALIGNS, align_series, one_per_step, one_per_x, resolve_align
from .grouping import GroupBy, group_runs
from .stats import STATS, check_stats, reduce_columns
from .write import write_aggregate

HPARAMS_TAG_PREFIX = "_hparams_/"   # the HParams plugin's summaries: session_start_info, experiment, ...

__all__ = ["aggregate", "aggregate_columns", "AggregateTable"]


@dataclass
class AggregateTable:
    """The aggregation as columns: ``group``, ``tag`` (object), ``step`` (int64; ``x`` float64 on another x
    axis), one array per statistic, in (group, tag, step) order; ``groups`` ``{group: [run, ...]}``; ``align``
    ``{(group, tag): alignment used}``; ``x`` the x axis (``step`` or a tag); ``dropped`` ``{(group, tag): points
    without an x}``."""

    stats: Tuple[str, ...]
    columns: Dict[str, np.ndarray]
    groups: Dict[str, List[str]] = field(default_factory=dict)
    align: Dict[Tuple[str, str], str] = field(default_factory=dict)
    x: str = "step"
    dropped: Dict[Tuple[str, str], int] = field(default_factory=dict)

    @property
    def x_column(self) -> str:
        """The name of the x column: ``step``, or ``x`` on another axis."""
        return "step" if self.x == "step" else "x"

    def __len__(self) -> int:
        return len(self.columns[self.x_column])

    def series(self, group: str, tag: str) -> Dict[str, np.ndarray]:
        """``{"step": ..., stat: ...}`` of one (group, tag) (``"x"`` instead of ``"step"`` on another x axis)."""
        rows = (self.columns["group"] == group) & (self.columns["tag"] == tag)
        return {name: column[rows] for name, column in self.columns.items() if name not in ("group", "tag")}

    def to_pandas(self):
        """The table as a DataFrame (group, tag, step, statistics), ``attrs`` holding ``groups`` and ``align``."""
        import pandas as pd
        df = pd.DataFrame(self.columns, columns=["group", "tag", self.x_column, *self.stats])
        df.attrs["groups"] = self.groups
        df.attrs["align"] = self.align
        if self.x != "step":
            df.attrs["x"] = self.x
            df.attrs["dropped"] = self.dropped
        return df


def _check_options(align: str, bins: Optional[int]) -> None:
    if align not in ALIGNS:
        raise ValueError("align must be one of %s, got %r" % (", ".join(ALIGNS), align))
    if align == "bins":
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
            raise ValueError("align='bins' needs bins=N, a positive integer (got %r)" % (bins,))
    elif bins is not None:
        raise ValueError("bins=%r is only for align='bins' (align is %r)" % (bins, align))


def aggregate_columns(logdir: Union[str, "os.PathLike[str]", Logdir], by: GroupBy, tags: Optional[str] = None,
                      stats: Sequence[str] = STATS, *, align: str = "auto", bins: Optional[int] = None,
                      runs: Optional[str] = None, restarts: str = "tensorboard", on_error: str = "warn",
                      workers: Optional[int] = None, x: str = "step", where: Optional[str] = None,
                      archived: bool = True) -> AggregateTable:
    """:func:`aggregate` without pandas: an :class:`AggregateTable` of numpy columns."""
    stats = check_stats(stats)
    _check_options(align, bins)
    if not isinstance(x, str) or not x:
        raise ValueError("x must be step, relative, wall or a scalar tag, got %r" % (x,))
    x_tag = x not in BUILTIN_X
    x_series: Dict[str, object] = {}
    if isinstance(logdir, Logdir):
        loaded = logdir
        if where is not None or not archived:
            from ..runs.choose import choose_in  # lazy: runs/ sits above compare/ (the run table)
            loaded = choose_in(loaded, where, archived)
        if x_tag:
            x_series = {run: s for (run, tag), s in loaded.scalars.items() if tag == x}
        if tags is not None or runs is not None:
            keep_tag = re.compile(tags).search if tags is not None else (lambda _: True)
            keep_run = re.compile(runs).search if runs is not None else (lambda _: True)
            scalars = {k: s for k, s in loaded.scalars.items() if keep_run(k[0]) and keep_tag(k[1])}
        else:
            scalars = loaded.scalars
    else:
        kinds, read_tags = ("scalars",), tags
        if isinstance(by, (list, tuple)):   # the HParams summaries too, whatever the tags chosen
            kinds = ("scalars", "hparams")
            read_tags = None if tags is None else "(?:%s)|^%s" % (tags, re.escape(HPARAMS_TAG_PREFIX))
        if x_tag and read_tags is not None:   # the x tag too, whatever the tags chosen
            read_tags = "(?:%s)|^%s$" % (read_tags, re.escape(x))
        loaded = load_logdir(logdir, read_tags, runs, kinds=kinds, restarts=restarts, on_error=on_error,
                             workers=workers, where=where, archived=archived)
        scalars = loaded.scalars
        if x_tag:
            x_series = {run: s for (run, tag), s in scalars.items() if tag == x}
        if read_tags != tags:
            scalars = {k: s for k, s in scalars.items() if re.search(tags, k[1])}
    by_run: Dict[str, Dict[str, object]] = {}
    for (run, tag), series in scalars.items():
        by_run.setdefault(run, {})[tag] = series
    groups = group_runs(by_run, by, loaded.hparams)
    x_name = "step" if x == "step" else "x"
    parts: Dict[str, list] = {name: [] for name in ("group", "tag", x_name, *stats)}
    used: Dict[Tuple[str, str], str] = {}
    dropped: Dict[Tuple[str, str], int] = {}
    for group, members in groups.items():
        for tag in sorted({t for run in members for t in by_run[run]}):
            if x == "step":
                series = [one_per_step(s.step, s.value)
                          for s in (by_run[run].get(tag) for run in members) if s is not None]
            else:
                series = []
                for run in members:
                    s = by_run[run].get(tag)
                    if s is None:
                        continue
                    xv = series_x(s, x, x_series.get(run))
                    lost = int(np.isnan(xv).sum())
                    if lost:
                        dropped[(group, tag)] = dropped.get((group, tag), 0) + lost
                    series.append(one_per_x(xv, s.value))
            series = [s for s in series if len(s[0])]
            if not series:
                continue
            used[(group, tag)] = resolve_align(series, align)
            steps, matrix = align_series(series, used[(group, tag)], bins)
            reduced = reduce_columns(matrix, stats)
            parts["group"].append(np.full(len(steps), group, dtype=object))
            parts["tag"].append(np.full(len(steps), tag, dtype=object))
            parts[x_name].append(steps)
            for stat in stats:
                parts[stat].append(reduced[stat])
    empty = {"group": np.zeros(0, object), "tag": np.zeros(0, object), "step": np.zeros(0, np.int64),
             "count": np.zeros(0, np.int64)}
    columns = {name: np.concatenate(chunks) if chunks else empty.get(name, np.zeros(0))
               for name, chunks in parts.items()}
    return AggregateTable(stats, columns, groups, used, x, dropped)


def aggregate(logdir: Union[str, "os.PathLike[str]", Logdir], by: GroupBy, tags: Optional[str] = None,
              stats: Sequence[str] = STATS, *, align: str = "auto", bins: Optional[int] = None,
              runs: Optional[str] = None, write: Optional[Union[str, "os.PathLike[str]"]] = None,
              overwrite: bool = False, restarts: str = "tensorboard", on_error: str = "warn",
              workers: Optional[int] = None, x: str = "step", where: Optional[str] = None, archived: bool = True):
    """Runs grouped by ``by`` reduced to ``stats`` per (group, tag, step), as a pandas DataFrame.

    ``logdir``: a path or URL (read with :func:`load_logdir`: ``tags``, ``runs``, ``restarts``, ``on_error`` and
    ``workers`` as there), or a :class:`Logdir` already loaded (``tags``/``runs`` then filter it).
    ``by``: a regex (its first group, or the run name with the match removed, names a run's group), a list of
    HParams names, or a callable ``run -> group`` (:mod:`.grouping`). ``stats``: any of
    mean, std, min, max, median, count. ``align``: 'auto', 'exact', 'interp' or 'bins' with ``bins=N``
    (:mod:`.align`). ``write``: a directory that receives one TensorBoard run per group and statistic,
    ``<write>/<group>-<stat>`` (std as ``<group>-mean+std`` and ``<group>-mean-std`` when mean is computed too), as
    tensorboard-reducer writes them (:mod:`.write`; ``overwrite=True`` replaces earlier event files there).
    ``x``: the axis the runs are aligned on, ``step`` or another (module docstring: an ``x`` column then, and no
    ``write``, event files having steps). ``where``: a run query choosing the runs grouped (``'lr < 0.01 and
    "val/acc".max > 0.9'``: :mod:`tfevents.summaries.runs.query`); ``archived=False`` leaves out the archived runs.
    """
    if write is not None and x != "step":
        raise ValueError("write= needs x='step' (event files are indexed by step), got x=%r" % (x,))
    table = aggregate_columns(logdir, by, tags, stats, align=align, bins=bins, runs=runs, restarts=restarts,
                              on_error=on_error, workers=workers, x=x, where=where, archived=archived)
    if write is not None:
        write_aggregate(table, write, overwrite=overwrite)
    return table.to_pandas()
