"""Comparing runs: seeds aggregated into statistics per step, event files of those statistics.

- ``aggregate.py``: ``aggregate(logdir, by=...)`` (the entry point): runs grouped, each (group, tag) aligned and
  reduced, a long table (group, tag, step, one column per statistic);
- ``grouping.py``: runs -> groups (a regex, HParams names, or a callable);
- ``align.py``: one (group, tag)'s series -> a (runs x steps) matrix: same steps, the union of steps, linear
  interpolation inside each run's range, or step bins;
- ``stats.py``: a matrix's columns -> mean, std, min, max, median, count (missing values skipped);
- ``write.py``: the table as event files, one run per group and statistic (tensorboard-reducer's layout).
"""
from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {"aggregate": "aggregate", "aggregate_columns": "aggregate", "AggregateTable": "aggregate",
            "group_runs": "grouping", "write_aggregate": "write", "STATS": "stats", "ALIGNS": "align"}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
