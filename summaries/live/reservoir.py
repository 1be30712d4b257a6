"""A bounded sample of one time series that always keeps its last point, fed in vectorized chunks.

TensorBoard's Rust data server keeps each series in a reservoir: a point with step ``s`` first *preempts* every
kept point with step ``>= s`` (a job restarted from a checkpoint re-logs those steps), then the reservoir keeps
the latest point and a uniform random sample of the others, at most ``capacity`` in all. This is the same rule
on numpy chunks instead of one point at a time:

- preemption: within a chunk, point ``i`` survives iff ``step[i] < min(step[j] for later j)``; a kept point
  survives iff its step is below the chunk's smallest step. Survivors are strictly increasing in step.
- sampling: of the survivors but the last, keep the ``capacity - 1`` with the smallest priority, where the
  priority is a hash of the step (splitmix64): a uniform sample, the same whatever the chunking, so a logdir
  loaded at once or record by record keeps the same points (unless a restart re-logs fewer steps than it
  preempts in a series longer than ``capacity``: points dropped before the restart are not brought back, so the
  sample then depends on where chunks ended, as the Rust server's depends on when points arrived). The Rust
  server draws its sample from a ChaCha stream instead, so the two keep different (equally uniform) subsets of a
  series longer than ``capacity``. The C scanner applies the same rule as it reads (``_fastscan.c``:
  ``reduce_rows``), so the chunks offered here are already small.

Memory is ``capacity`` points per series whatever the number of steps.
"""
from __future__ import annotations

import threading
from typing import Sequence, Tuple

import numpy as np

from .packing import pack_columns, pack_steps, pack_walls, unpack_columns, unpack_steps_values

__all__ = ["Reservoir", "survivors", "sample_indices", "fill_at_same_steps"]

_GOLDEN, _M1, _M2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _priority(steps: np.ndarray) -> np.ndarray:
    """splitmix64 of each step: a well-mixed uint64 per step."""
    z = steps.astype(np.uint64) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


_recent = threading.local()  # per thread: ``answers``, the last few sample_indices answers, newest first
_RECENT_ANSWERS = 4          # a few, so that chunks offered tag by tag (one step set, then the merged one) still hit
_RECENT_STEPS = 1 << 20      # steps remembered beside the newest answer's, at most (8 MB a thread)


def sample_indices(steps: np.ndarray, k: int) -> np.ndarray:
    """Indices (increasing, read-only) of the ``k`` points of ``steps`` a full reservoir keeps (``k < len(steps)``):
    the last, and the ``k - 1`` others of least priority. Also the rule the data provider downsamples by.

    The sample depends on the steps alone, and a training loop logs all its tags at the same steps, so the last
    few answers are kept (per thread) and given again for equal steps: a comparison instead of a hash and a
    partition per series."""
    n = len(steps)
    if k <= 0:
        return np.empty(0, dtype=np.intp)
    if k == 1:
        return np.array([n - 1])
    answers = getattr(_recent, "answers", None)
    if answers is None:
        answers = _recent.answers = []
    for seen_steps, seen_k, chosen in answers:
        if seen_k == k and len(seen_steps) == n and not np.count_nonzero(seen_steps != steps):
            return chosen
    kept = np.zeros(n, dtype=bool)
    kept[np.argpartition(_priority(steps[:-1]), k - 2)[:k - 1]] = True
    kept[-1] = True
    chosen = kept.nonzero()[0]     # increasing: a mask read back costs less than sorting the partition's indices
    chosen.flags.writeable = False
    answers.insert(0, (np.array(steps, copy=True), k, chosen))
    older = 0     # forget the oldest answers: past _RECENT_ANSWERS, or past _RECENT_STEPS steps beside the newest
    for i in range(1, len(answers)):
        older += len(answers[i][0])
        if i == _RECENT_ANSWERS or older > _RECENT_STEPS:
            del answers[i:]
            break
    return chosen


def survivors(steps: np.ndarray) -> np.ndarray:
    """Mask of the points of one chunk (in arrival order) that no later point of the chunk preempts."""
    n = len(steps)
    if n < 2 or (steps[1:] > steps[:-1]).all():   # the common case: no step repeated, nothing preempted
        return np.ones(n, dtype=bool)
    later_min = np.empty(n, dtype=steps.dtype)
    later_min[:-1] = np.minimum.accumulate(steps[:0:-1])[::-1]
    keep = np.ones(n, dtype=bool)
    keep[:-1] = steps[:-1] < later_min[:-1]
    return keep


class Reservoir:
    """Steps (int64), wall times (float64) and values (a numpy array: float32 scalars, or objects) of one
    series, at most ``capacity`` points (0: nothing is kept). Numeric columns are stored packed
    (:func:`~.packing.pack_columns`); ``data`` unpacks them. The stored state is replaced whole on every offer,
    so a reader sees one consistent snapshot; ``stats`` is ``(points, last step, max wall time)``."""

    __slots__ = ("capacity", "_stored", "_packed", "stats")

    def __init__(self, capacity: int, value_dtype=np.float32):
        self.capacity = int(capacity)
        self._packed = value_dtype != object
        self._store(np.empty(0, np.int64), np.empty(0, np.float64), np.empty(0, value_dtype))

    def _store(self, steps: np.ndarray, walls: np.ndarray, values: np.ndarray) -> None:
        stats = (len(steps), int(steps[-1]), float(np.maximum.reduce(walls))) if len(steps) else (0, None, None)
        stored = pack_columns(steps, walls, values) if self._packed else (steps, walls, values)
        self._stored, self.stats = stored, stats

    @property
    def data(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        stored = self._stored
        return unpack_columns(stored) if self._packed else stored

    @property
    def steps_values(self) -> Tuple[np.ndarray, np.ndarray]:
        """``data``'s steps and values, the wall times left packed."""
        stored = self._stored
        return unpack_steps_values(stored) if self._packed else (stored[0], stored[2])

    def __len__(self) -> int:
        return self.stats[0]

    @property
    def last_value(self):
        """The value of the last point kept (None when there is none), read without unpacking the columns."""
        values = self._stored[-1]   # the values are stored as they are, last in the tuple, packed or not
        return values[-1] if len(values) else None

    def offer(self, steps: np.ndarray, walls: np.ndarray, values: np.ndarray) -> None:
        """Add a chunk of points in the order they were logged (points with a non-finite wall time are
        dropped, as the Rust server drops their events)."""
        if self.capacity <= 0 or not len(steps):
            return
        steps = np.asarray(steps, dtype=np.int64)
        walls = np.asarray(walls, dtype=np.float64)
        # (np.count_nonzero answers these two checks ~1 us sooner than .all())
        finite = np.isfinite(walls)
        if np.count_nonzero(finite) < len(walls):
            steps, walls, values = steps[finite], walls[finite], values[finite]
            if not len(steps):
                return
        if len(steps) > 1 and np.count_nonzero(steps[1:] <= steps[:-1]):   # a step not above the one before
            keep = survivors(steps)
            steps, walls, values = steps[keep], walls[keep], values[keep]
        count, last_step, _ = self.stats
        if count:
            old_steps, old_walls, old_values = self.data
            # old steps are increasing: those below the chunk's first survive (all of them when it follows the last)
            kept = count if steps[0] > last_step else int(np.searchsorted(old_steps, steps[0], side="left"))
            steps = np.concatenate([old_steps[:kept], steps])
            walls = np.concatenate([old_walls[:kept], walls])
            values = np.concatenate([old_values[:kept], values.astype(old_values.dtype, copy=False)])
        if len(steps) > self.capacity:
            chosen = sample_indices(steps, self.capacity)
            steps, walls, values = steps[chosen], walls[chosen], values[chosen]
        self._store(steps, walls, values)


def fill_at_same_steps(reservoirs: Sequence[Reservoir], steps: np.ndarray, walls: np.ndarray,
                       values: np.ndarray) -> None:
    """``reservoirs[i].offer(steps, walls[i], values[i])`` for each ``i``, for empty packed reservoirs of one
    capacity whose chunks share their steps (a training loop logs its tags at the same steps; the first pass over
    a run), with what depends on the steps alone worked out once: preemption, the sample, and the packed steps,
    which the reservoirs then share (held once, not once per series). ``walls`` (float64) and ``values`` (float32)
    are 2-D, a row per reservoir; a row with a wall time that is not finite is offered on its own."""
    steps = np.asarray(steps, dtype=np.int64)
    if not len(reservoirs) or reservoirs[0].capacity <= 0 or not len(steps):
        return
    finite = np.isfinite(walls).all(axis=1)
    if np.count_nonzero(finite) < len(reservoirs):
        for i in np.flatnonzero(~finite):
            reservoirs[i].offer(steps, walls[i], values[i])
        rows = np.flatnonzero(finite)
        reservoirs, walls, values = [reservoirs[i] for i in rows], walls[rows], values[rows]
        if not reservoirs:
            return
    if len(steps) > 1 and np.count_nonzero(steps[1:] <= steps[:-1]):
        keep = survivors(steps)
        steps, walls, values = steps[keep], walls[:, keep], values[:, keep]
    if len(steps) > reservoirs[0].capacity:
        chosen = sample_indices(steps, reservoirs[0].capacity)
        steps, walls, values = steps[chosen], walls[:, chosen], values[:, chosen]
    packed_steps = pack_steps(steps)
    count, last_step = len(steps), int(steps[-1])
    max_walls = np.maximum.reduce(walls, axis=1).tolist()
    for r, row_walls, row_values, max_wall in zip(reservoirs, walls, values, max_walls):
        r._stored = packed_steps + pack_walls(np.array(row_walls)) + (np.array(row_values),)
        r.stats = (count, last_step, max_wall)
