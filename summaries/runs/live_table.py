"""The run table of a live logdir (``tfevents serve``, ``tfevents watch``): the same columns as :func:`~.table.runs_table`
(made by the same :func:`~.table.table_from_rows`), from what the live loader holds after its last pass.

What differs from the offline table, and why:

- a tag's ``.last/.min/.max`` and their steps are the loader's (``TagInfo``): min and max over every value read,
  not only the points its reservoir keeps, as offline;
- ``first_wall_time`` is the run's earliest event wall time (``LiveLogdir.start_time``, what TensorBoard lists as
  the run's start), ``last_wall_time`` the latest wall time of its scalar series;
- ``restarts`` is 0: the live loader keeps TensorBoard's reservoirs (a repeated step preempts) and does not count
  restarts;
- the side files (``hparams.yaml``, ``.hydra/config.yaml``, the run info) are read from the names the loader's last
  walk listed, each pass, so a label added while the server runs shows at the next reload.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Dict, List

from ..live.loader import SCALAR, LiveLogdir, TagInfo
from ..reader.walk import Discovery
from .table import RunRow, add_side_files, table_from_rows

__all__ = ["live_rows", "live_runs_table"]


def _step(step: int) -> float:
    return float(step) if step >= 0 else math.nan


def live_rows(live: LiveLogdir) -> List[RunRow]:
    """A :class:`~.table.RunRow` per run the loader holds (chosen or not), by name, without the side files."""
    scalars: Dict[str, List[TagInfo]] = defaultdict(list)
    for info in live.tags(data_class=SCALAR, every=True):
        scalars[info.run].append(info)
    rows = []
    for name in live.run_names(every=True):
        infos = scalars.get(name, [])
        start = live.start_time(name)
        rows.append(RunRow(
            name=name, first_wall_time=start if start is not None else math.nan,
            last_wall_time=max((i.max_wall_time for i in infos), default=math.nan),
            last_step=float(max((i.last_step for i in infos), default=math.nan)),
            files=live.file_count(name), restarts=0, hparams=dict(live.hparams(name)),
            tags={i.tag: (i.last, i.min, i.max, float(i.last_step), _step(i.min_step), _step(i.max_step))
                  for i in infos}))
    return rows


def live_runs_table(live: LiveLogdir, on_error: str = "skip"):
    """The run table (a pandas DataFrame) of every run ``live`` holds, side files included when its last pass
    walked the logdir."""
    rows = live_rows(live)
    found = live.found
    if isinstance(found, Discovery) and found.listing is not None:
        rows = add_side_files(rows, found, on_error, None)
    return table_from_rows(rows)
