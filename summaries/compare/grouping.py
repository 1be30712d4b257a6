"""Runs -> groups, for :func:`tfevents.summaries.compare.aggregate`.

``by`` is one of:

- a regex (``str`` or compiled pattern), searched in each run name: its first capturing group names the group,
  or, without groups, the run name with the match removed (``/`` trimmed at both ends; ``.`` when nothing is
  left). ``r"/seed_\\d+$"`` puts ``lr0.1/seed_1`` and ``lr0.1/seed_2`` in ``lr0.1``; ``r"/rank_\\d+$"`` folds the
  sub-runs of distributed ranks (``<run>/rank_<N>``) into ``<run>``. A run the regex does not match is a group of
  its own, named by the run; a regex that matches no run at all (a typo, most often) warns (``UserWarning``), and
  leaves each run a group of its own all the same (so folding ranks still works on a logdir of one process);
- a list of HParams names: runs whose values are equal group together, named ``name=value,name=value``. A run takes
  the HParams of its own directory or, failing that, of its nearest parent run (TensorBoard's HParams dashboard
  counts a session's sub-directories as its own). Runs without a value for every name are left out (a warning
  names them);
- a callable ``run -> group name``; ``None`` leaves the run out.
"""
from __future__ import annotations

import re
import warnings
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Pattern, Sequence, Union

__all__ = ["group_runs", "GroupBy"]

GroupBy = Union[str, Pattern, Sequence[str], Callable[[str], Optional[str]]]


def _compile(pattern: Union[str, Pattern]) -> Pattern:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise ValueError("by is not a valid regex: %r (%s)" % (pattern, err)) from None


def _by_regex(rx: Pattern) -> Callable[[str], str]:
    def name(run: str) -> str:
        m = rx.search(run)
        if m is None:
            return run
        if rx.groups:
            text = m.group(1) or ""
        else:
            text = run[:m.start()] + run[m.end():]
        return text.strip("/") or "."
    return name


def _parent_runs(run: str) -> Iterable[str]:
    """``run`` and the runs above it: ``a/b/c``, ``a/b``, ``a``, ``.``."""
    parts = [] if run == "." else run.split("/")
    for i in range(len(parts), 0, -1):
        yield "/".join(parts[:i])
    yield "."


def _format_value(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _by_hparams(names: Sequence[str], hparams: Mapping[str, object]) -> Callable[[str], Optional[str]]:
    def name(run: str) -> Optional[str]:
        record = next((hparams[r] for r in _parent_runs(run) if r in hparams), None)
        values = getattr(record, "hparams", None) or {}
        if any(n not in values for n in names):
            return None
        return ",".join("%s=%s" % (n, _format_value(values[n])) for n in names)
    return name


def group_runs(runs: Iterable[str], by: GroupBy, hparams: Optional[Mapping[str, object]] = None
               ) -> Dict[str, List[str]]:
    """``{group: [run, ...]}`` (groups and runs sorted) for ``by`` (see the module docstring). ``hparams`` is
    ``Logdir.hparams`` (``{run: HParamsRecord}``), needed when ``by`` names HParams."""
    runs = sorted(runs)
    if isinstance(by, (str, re.Pattern)):
        rx = _compile(by)
        name = _by_regex(rx)
        if runs and not any(rx.search(run) for run in runs):
            shown = ", ".join(runs[:5]) + (", ..." if len(runs) > 5 else "")
            warnings.warn("by=%r matches none of the %d runs (%s): each run is a group of its own"
                          % (rx.pattern, len(runs), shown), stacklevel=3)
    elif callable(by):
        name = by
    elif isinstance(by, (list, tuple)) and by and all(isinstance(n, str) for n in by):
        name = _by_hparams(list(by), hparams or {})
    else:
        raise TypeError("by must be a regex, a non-empty list of HParams names or a callable, got %r" % (by,))
    groups: Dict[str, List[str]] = {}
    left_out = []
    for run in runs:
        group = name(run)
        if group is None:
            left_out.append(run)
            continue
        if not isinstance(group, str):
            raise TypeError("by(%r) returned %r; a group name is a str (or None to leave the run out)" % (run, group))
        groups.setdefault(group, []).append(run)
    if left_out and isinstance(by, (list, tuple)):
        warnings.warn("runs left out of the aggregation: no HParams value for %s in %s"
                      % (", ".join(by), ", ".join(left_out)), stacklevel=3)
    return {g: groups[g] for g in sorted(groups)}
