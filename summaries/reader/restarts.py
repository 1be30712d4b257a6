"""Restarts: which points of a run TensorBoard drops when a job restarts from a checkpoint.

A restarted job logs steps it has logged before. TensorBoard has three behaviours, all
reproduced here on columns (``keys`` order the points of a run as they were written: file index,
then byte offset; ``steps`` are the points' steps):

``'python'`` -- the plugin event accumulator (``tensorboard --load_fast=false``). Once a file
    version >= 2 has been read, every ``SessionLog.START`` at step s except the run's first
    purges every point read before it with step >= s, in every series. Before any file version
    (very old files), an event whose step is below the previous summary event's step purges the
    earlier points with step >= its step, in the series of that event's tags only.
``'legacy'`` -- the legacy ``EventAccumulator`` (what tbparse uses): the same, except that the
    first START purges too, and only its old-style stores are purged (simple_value scalars,
    histo, image, audio): tensor-style series (TF2, new-style torch) are never purged.
``'rust'`` -- the Rust data server (``--load_fast=true``, the default where it is available,
    hence ``'tensorboard'``): START is ignored; in each series a point evicts the kept points
    with step >= its own step, so each series ends strictly increasing, and the last point
    written for a step wins. Events whose wall time is NaN are dropped.
``'none'`` -- keep every point.

Sources: tensorboard/backend/event_processing/plugin_event_accumulator.py
(``_CheckForRestartAndMaybePurge``, ``_seen_session_start``), event_accumulator.py, and
tensorboard/data/server/run.rs + reservoir.rs (``StageReservoir::preempt``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Hashable, Iterable, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["MODES", "Purge", "restart_masks", "normalize_mode"]

MODES = ("tensorboard", "rust", "python", "legacy", "none")
_ALIASES = {"tensorboard": "rust", "rustboard": "rust", "data_server": "rust", "plugin": "python",
            "event_accumulator": "legacy", None: "none", False: "none"}


def normalize_mode(mode) -> str:
    mode = _ALIASES.get(mode, mode)
    if mode not in ("rust", "python", "legacy", "none"):
        raise ValueError("restarts must be one of %s, got %r" % (", ".join(MODES), mode))
    return mode


@dataclass
class Purge:
    """Points dropped from a run: by the SessionLog.START at ``key`` (``cause='start'``), by an
    out-of-order event (``'out_of_order'``), or by a series' step going back (``'step_back'``)."""

    cause: str
    key: int                    # the key of the event that caused it
    step: int                   # its step: points with step >= this were dropped
    counts: Dict[Hashable, int]  # series -> points dropped


@dataclass
class Series:
    """A series' order keys and steps (and wall times, for the rust mode's NaN rule)."""

    keys: np.ndarray
    steps: np.ndarray
    wall_times: Optional[np.ndarray] = None


def _version_at(file_versions: Sequence[Tuple[int, float]], keys: np.ndarray) -> np.ndarray:
    """The file version in force when each key is read (NaN before any file_version event)."""
    if not file_versions:
        return np.full(len(keys), np.nan)
    fv = sorted(file_versions)
    fv_keys = np.array([k for k, _ in fv], dtype=np.int64)
    fv_vals = np.array([v for _, v in fv], dtype=np.float64)
    idx = np.searchsorted(fv_keys, keys, side="right") - 1  # an event sees versions read up to itself
    out = np.where(idx >= 0, fv_vals[np.maximum(idx, 0)], np.nan)
    return out


def _apply(masks, series, names, key, step) -> Dict[Hashable, int]:
    counts = {}
    for name in names:
        s = series[name]
        hit = (s.keys < key) & (s.steps >= step) & masks[name]
        n = int(np.count_nonzero(hit))
        if n:
            masks[name] &= ~hit
            counts[name] = n
    return counts


def restart_masks(mode: str, series: Dict[Hashable, Series], file_versions: Sequence[Tuple[int, float]],
                  starts: Sequence[Tuple[int, int]], legacy_exempt: Iterable[Hashable] = ()
                  ) -> Tuple[Dict[Hashable, np.ndarray], List[Purge]]:
    """Keep-masks per series under ``mode``, and what was purged.

    ``series`` maps a name (e.g. ``(kind, tag)``; ``name[-1]`` is the tag for by-tag purges) to
    its keys and steps; ``file_versions`` lists ``(key, version)`` of file_version events;
    ``starts`` lists ``(key, step)`` of SessionLog.START events, all in one run's key space;
    ``legacy_exempt`` names the tensor-style series, which the legacy mode never purges.
    """
    mode = normalize_mode(mode)
    masks = {name: np.ones(len(s.keys), dtype=bool) for name, s in series.items()}
    purges: List[Purge] = []
    if mode == "none":
        return masks, purges
    if mode == "rust":
        for name, s in series.items():
            keep = masks[name]
            if s.wall_times is not None:
                keep &= ~np.isnan(s.wall_times)
            steps = s.steps[keep]
            if len(steps) < 2:
                continue
            # a point survives iff every later point has a larger step
            later_min = np.minimum.accumulate(steps[::-1])[::-1]
            survive = np.ones(len(steps), dtype=bool)
            survive[:-1] = steps[:-1] < later_min[1:]
            if not survive.all():
                idx = np.flatnonzero(keep)
                keep[idx[~survive]] = False
                first = int(np.flatnonzero(~survive)[0])
                back = first + 1 + int(np.argmax(steps[first + 1:] <= steps[first]))
                purges.append(Purge("step_back", int(s.keys[idx[back]]), int(steps[back]),
                                    {name: int(np.count_nonzero(~survive))}))
        return masks, purges

    directives = []  # (key, step, names or None for all series, cause)
    if starts:
        start_arr = sorted(starts)
        versions = _version_at(file_versions, np.array([k for k, _ in start_arr], dtype=np.int64))
        seen_start = False
        for (key, step), version in zip(start_arr, versions):
            if not version >= 2:  # NaN (no version yet) or old: START is not looked at
                continue
            if mode == "python" and not seen_start:
                seen_start = True  # a run's first START is its start, not a restart
                continue
            directives.append((key, step, None, "start"))
    # out-of-order steps matter only for events read before any version-2 file_version
    names = list(series)
    if names:
        all_keys = np.concatenate([series[n].keys for n in names])
        all_steps = np.concatenate([series[n].steps for n in names])
        owner = np.concatenate([np.full(len(series[n].keys), i) for i, n in enumerate(names)])
        old = ~(_version_at(file_versions, all_keys) >= 2)
        if old.any():
            order = np.argsort(all_keys, kind="stable")
            k, st, ow, od = all_keys[order], all_steps[order], owner[order], old[order]
            event_start = np.ones(len(k), dtype=bool)
            event_start[1:] = k[1:] != k[:-1]
            ev_idx = np.flatnonzero(event_start)
            ev_steps = st[ev_idx]
            prev = np.concatenate([[-1], ev_steps[:-1]])
            back = (ev_steps < prev) & od[ev_idx]
            bounds = np.append(ev_idx, len(k))
            for e in np.flatnonzero(back):
                tags = {names[i][-1] for i in ow[bounds[e]:bounds[e + 1]]}
                directives.append((int(k[ev_idx[e]]), int(ev_steps[e]),
                                   [n for n in names if n[-1] in tags], "out_of_order"))
    exempt = set(legacy_exempt) if mode == "legacy" else set()
    for key, step, targets, cause in sorted(directives, key=lambda d: d[0]):
        targets = names if targets is None else targets
        counts = _apply(masks, series, [n for n in targets if n not in exempt], key, step)
        purges.append(Purge(cause, key, step, counts))
    return masks, purges
