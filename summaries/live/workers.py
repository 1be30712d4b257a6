"""A first read of many new runs in worker processes (``LiveLogdir(processes=N)``, as ``tfevents serve`` makes it).

A pass on a local logdir whose runs never read before hold at least ``PROCESS_BYTES`` hands them to ``N`` worker
processes, in jobs of consecutive runs of about ``JOB_BYTES`` of files each. A job reads its runs into fresh
``LiveRun``\\ s with the loader's own ``read_run`` and sends them back; the loader installs each job's runs as it
arrives. Python's per-file work (folding each scan into the series) holds the GIL, so threads cannot share it out;
processes can.

The runs travel as a pickle of everything but their numeric arrays, whose bytes go in one buffer beside it (each
array pickled as a reference to its place): the loader's process then makes each array a view into that buffer
(~0.5 us) instead of unpickling it (~7 us: 10,000 runs of 5 scalar tags hold ~200,000 of them, ~1.5 s on the
loader's one thread).

The workers are started with ``spawn``: the server has threads (gRPC, the web server), and a forked child could
inherit a lock one of them held. If the pool cannot start or a worker dies, the jobs not done are read in-process.
"""
from __future__ import annotations

import contextlib
import copyreg
import io
import logging
import multiprocessing
import os
import pickle
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..reader.decode import Problem
from .read import read_run
from .run import LiveRun, tag_info

__all__ = ["read_in_processes", "start_pool", "pack_runs", "unpack_runs", "jobs_of", "default_processes",
           "PROCESS_BYTES", "JOB_BYTES"]

log = logging.getLogger("tfevents.serve")

PROCESS_BYTES = 256 << 20   # new runs holding less than this are read in-process (starting workers costs ~0.5 s)
JOB_BYTES = 32 << 20        # a job's runs hold about this much: ~0.15 s of work, so the workers end together
_ALIGN = 8

Job = List[Tuple[str, List[str]]]   # (run name, its files)


def default_processes() -> int:
    """The worker processes a server's first read uses unless told: the CPUs it may run on, at most 4."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(4, cpus))


def _array_at(index: int) -> np.ndarray:
    """What a packed array is pickled as: a call of this with its index, which only :class:`_Unpacker` resolves
    (to a view into its buffer)."""
    raise RuntimeError("a packed array is rebuilt by unpack_runs only")


def _array_packer(parts: List[bytes], specs: List[tuple]) -> Callable[[np.ndarray], tuple]:
    """What a pickler's ``dispatch_table`` calls for an ndarray: a numeric array's bytes go to ``parts`` (padded to
    a multiple of 8 bytes), its ``(dtype, shape, offset)`` to ``specs``, and it is pickled as ``_array_at(index)``.
    (A closure, not a method of the pickler: a pickler holding its own method would be a reference cycle, left with
    everything its memo holds to the garbage collector.)"""
    offset = 0

    def reduce_array(a: np.ndarray):
        nonlocal offset
        if a.dtype.kind not in "biuf":
            return a.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
        data = a.tobytes()
        specs.append((a.dtype.str, a.shape, offset))
        parts.append(data)
        pad = -len(data) % _ALIGN
        if pad:
            parts.append(bytes(pad))
        offset += len(data) + pad
        return _array_at, (len(specs) - 1,)

    return reduce_array


def _array_viewer(buffer: bytearray, specs: Sequence[tuple]) -> Callable[[int], np.ndarray]:
    """``_array_at(index)`` resolved: a slice of ``buffer`` read as the array's dtype (slicing costs less than
    ``np.frombuffer``). A closure, for the reason :func:`_array_packer` gives."""
    as_dtype: Dict[str, np.ndarray] = {}

    def view(at: int) -> np.ndarray:
        dtype, shape, offset = specs[at]
        whole = as_dtype.get(dtype)
        if whole is None:
            whole = as_dtype[dtype] = np.frombuffer(buffer, dtype=dtype,
                                                    count=len(buffer) // np.dtype(dtype).itemsize)
        start = offset // whole.itemsize
        if len(shape) == 1:
            return whole[start:start + shape[0]]
        count = 1
        for n in shape:
            count *= n
        return whole[start:start + count].reshape(shape)

    return view


class _Unpacker(pickle.Unpickler):
    """Resolves ``_array_at`` to ``view`` (:func:`_array_viewer`), every other class as pickle does."""

    def __init__(self, file, view: Callable[[int], np.ndarray]):
        super().__init__(file)
        self.view = view

    def find_class(self, module: str, name: str):
        if module == __name__ and name == "_array_at":
            return self.view
        return super().find_class(module, name)


def pack_runs(runs: List[LiveRun]) -> Tuple[bytes, bytes, List[tuple]]:
    """``(pickle, buffer, specs)`` of ``runs``: their numeric arrays' bytes one after the other in ``buffer`` (each
    at an offset a multiple of 8) and described by ``specs`` (dtype, shape, offset), the rest pickled. Through
    ``dispatch_table``, so only arrays cost a Python call; the pickler's memo keeps an array referenced twice one
    array."""
    out = io.BytesIO()
    parts: List[bytes] = []
    specs: List[tuple] = []
    packer = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    packer.dispatch_table = {**copyreg.dispatch_table, np.ndarray: _array_packer(parts, specs)}
    packer.dump(runs)
    return out.getvalue(), b"".join(parts), specs


def unpack_runs(pickled: bytes, buffer: bytes, specs: Sequence[tuple]) -> List[LiveRun]:
    """The runs :func:`pack_runs` packed, their numeric arrays writable views into one copy of ``buffer``."""
    return _Unpacker(io.BytesIO(pickled), _array_viewer(bytearray(buffer), specs)).load()


def _read_runs(capacity: Mapping[str, int], plugins: Optional[FrozenSet[str]], check_crc: bool,
               job: Job) -> Tuple[List[LiveRun], List[Problem]]:
    """A job's runs read from their start, and the problems found."""
    problems: List[Problem] = []
    runs = []
    for name, files in job:
        run = LiveRun(name, capacity, plugins=plugins)
        read_run(None, run, files, check_crc, problems.append)
        for tag, s in run.series.items():   # listed here, off the server's thread: its first listing finds them
            if s.reservoir.stats[0]:
                tag_info(name, tag, s)
        runs.append(run)
    return runs, problems


def _read_job(capacity: Mapping[str, int], plugins: Optional[FrozenSet[str]], check_crc: bool,
              job: Job) -> Tuple[tuple, List[Problem]]:
    """A worker's job: :func:`_read_runs`, the runs packed (:func:`pack_runs`)."""
    runs, problems = _read_runs(capacity, plugins, check_crc, job)
    return pack_runs(runs), problems


def jobs_of(work: Sequence[Tuple[str, List[str], int]]) -> List[Job]:
    """``(run, files, bytes)`` in order, cut into jobs of consecutive runs of at least ``JOB_BYTES`` each (the
    last may hold less)."""
    jobs: List[Job] = []
    job: Job = []
    held = 0
    for name, files, size in work:
        job.append((name, files))
        held += size
        if held >= JOB_BYTES:
            jobs.append(job)
            job, held = [], 0
    if job:
        jobs.append(job)
    return jobs


def _ready() -> None:
    """A worker's first task from :func:`start_pool`: unpickling it imports this module (numpy, the reader)."""


def start_pool(processes: int) -> Optional[ProcessPoolExecutor]:
    """``processes`` worker processes started now, each importing this module (~0.4 s of CPU) while the caller
    goes on (walks the logdir); for :func:`read_in_processes`' ``pool``. None if they cannot start."""
    try:
        pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))
        for _ in range(processes):
            pool.submit(_ready)
    except OSError as err:
        log.warning("worker processes could not start (%s)", err)
        return None
    return pool


def read_in_processes(jobs: List[Job], processes: int, capacity: Mapping[str, int],
                      plugins: Optional[FrozenSet[str]], check_crc: bool,
                      done: Callable[[List[LiveRun], List[Problem]], None],
                      pool: Optional[ProcessPoolExecutor] = None) -> None:
    """Read ``jobs`` in ``processes`` worker processes (those of ``pool``, which the caller shuts down, when given),
    calling ``done(runs, problems)`` in this thread as each job's runs arrive (in the order they finish); the jobs a
    failed pool left are read in-process."""
    left = dict(enumerate(jobs))
    try:
        with contextlib.nullcontext(pool) if pool is not None else ProcessPoolExecutor(
                min(processes, len(jobs)), mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {pool.submit(_read_job, capacity, plugins, check_crc, job): i for i, job in left.items()}
            for future in as_completed(futures):
                (pickled, buffer, specs), problems = future.result()
                done(unpack_runs(pickled, buffer, specs), problems)
                del left[futures[future]]
    except (BrokenProcessPool, OSError) as err:
        log.warning("worker processes failed (%s); reading the %d jobs left in this process", err, len(left))
    for job in left.values():
        done(*_read_runs(capacity, plugins, check_crc, job))
