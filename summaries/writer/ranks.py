"""Which process of a distributed job writes, and where: ``SummaryWriter(..., rank=None, ranks="zero")``.

Under ``torchrun``, SLURM, Open MPI or JAX every process builds the same writer. The rank is found
(:func:`detect_rank`) from, in this order:

1. ``rank=`` given to the writer (an int >= 0);
2. ``torch.distributed``, if torch is already imported and a process group is initialized
   (``get_rank()`` / ``get_world_size()``: the ``torch.multiprocessing.spawn`` case, where no
   variable is set);
3. ``RANK`` / ``WORLD_SIZE`` (torchrun, ``torch.distributed.launch``);
4. ``SLURM_PROCID`` / ``SLURM_NTASKS``;
5. ``OMPI_COMM_WORLD_RANK`` / ``OMPI_COMM_WORLD_SIZE`` (Open MPI's ``mpirun``);
6. ``PMI_RANK`` / ``PMI_SIZE`` (MPICH, Intel MPI);
7. ``jax.process_index()`` / ``jax.process_count()``, only if ``jax`` is already imported;

else the process is rank 0 of 1. ``ranks=`` then says what a rank does (:func:`rank_subdir`):

* ``"zero"`` (default): rank 0 writes ``logdir``; every other rank gets a silent writer
  (:func:`silent_subclass`: every method returns at once, no file or directory is made);
* ``"all"``: rank N writes its own run ``<logdir>/rank_<N>`` (``reader.ranks.fold_ranks`` folds
  them back into mean/min/max series);
* a collection of ints: the ranks listed write ``<logdir>/rank_<N>``, the others are silent.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Collection, Dict, NamedTuple, Optional, Union

__all__ = ["RankInfo", "detect_rank", "check_ranks", "rank_subdir", "silent_subclass", "SilentFileWriter", "ENV_VARIABLES"]

Ranks = Union[str, Collection[int]]

# (rank variable, world-size variable, launcher), in the order they are read
ENV_VARIABLES = (
    ("RANK", "WORLD_SIZE", "torchrun"),
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI"),
    ("PMI_RANK", "PMI_SIZE", "PMI"),
)


class RankInfo(NamedTuple):
    """This process's ``rank``, the job's ``world_size`` (None if unknown) and where they came from."""

    rank: int
    world_size: Optional[int]
    source: str


def _env_int(environ: Dict[str, str], name: str, minimum: int) -> Optional[int]:
    text = environ.get(name)
    if text is None or text.strip() == "":
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError("environment variable %s=%r is not an integer" % (name, text)) from None
    if value < minimum:
        raise ValueError("environment variable %s=%r must be >= %d" % (name, text, minimum))
    return value


def _from_torch() -> Optional[RankInfo]:
    """torch.distributed's rank, if torch is imported and a process group is initialized (never imports torch)."""
    if "torch" not in sys.modules:
        return None
    dist = sys.modules.get("torch.distributed")
    if dist is None or not getattr(dist, "is_available", lambda: False)() or not dist.is_initialized():
        return None
    return RankInfo(dist.get_rank(), dist.get_world_size(), "torch.distributed")


def _from_jax() -> Optional[RankInfo]:
    """JAX's process index, if jax is already imported (never imports it)."""
    jax = sys.modules.get("jax")
    if jax is None or not hasattr(jax, "process_index"):
        return None
    return RankInfo(int(jax.process_index()), int(jax.process_count()), "jax.process_index()")


def detect_rank(rank: Optional[int] = None, environ: Optional[Dict[str, str]] = None) -> RankInfo:
    """This process's rank and world size (see the module docstring for the order of the sources)."""
    environ = os.environ if environ is None else environ
    if rank is not None:
        if isinstance(rank, bool) or not isinstance(rank, int):
            try:
                rank = int(rank.__index__())
            except (AttributeError, TypeError):
                raise TypeError("rank must be an int or None, got %s" % type(rank).__name__) from None
        if rank < 0:
            raise ValueError("rank must be >= 0, got %d" % rank)
        world = next((_env_int(environ, size, 1) for _, size, _ in ENV_VARIABLES if size in environ), None)
        return RankInfo(rank, world, "rank=")
    found = _from_torch()
    if found is not None:
        return found
    for rank_name, size_name, launcher in ENV_VARIABLES:
        value = _env_int(environ, rank_name, 0)
        if value is None:
            continue
        world = _env_int(environ, size_name, 1)
        if world is not None and value >= world:
            raise ValueError("environment variable %s=%d is not below %s=%d (%s)"
                             % (rank_name, value, size_name, world, launcher))
        return RankInfo(value, world, "%s (%s)" % (rank_name, launcher))
    found = _from_jax()
    if found is not None:
        return found
    return RankInfo(0, None, "default (no distributed environment found)")


def check_ranks(ranks: Any) -> Union[str, frozenset]:
    """``"zero"``, ``"all"`` or a frozenset of ranks; TypeError/ValueError otherwise."""
    if isinstance(ranks, str):
        if ranks not in ("zero", "all"):
            raise ValueError('ranks must be "zero", "all" or a list of ranks, got %r' % ranks)
        return ranks
    try:
        chosen = list(ranks)
    except TypeError:
        raise TypeError('ranks must be "zero", "all" or a list of ranks, got %s' % type(ranks).__name__) from None
    for r in chosen:
        if isinstance(r, bool) or not hasattr(r, "__index__") or int(r.__index__()) < 0:
            raise ValueError("ranks must hold integers >= 0, got %r" % (r,))
    return frozenset(int(r.__index__()) for r in chosen)


def rank_subdir(ranks: Ranks = "zero", rank: Optional[int] = None) -> Optional[str]:
    """Where this process writes, relative to the logdir: ``""`` (the logdir itself), ``"rank_<N>"``, or
    None (a silent writer).

    ``"zero"``: ``""`` for rank 0, None for the others; ``"all"``: ``"rank_<N>"``; a collection:
    ``"rank_<N>"`` for the ranks in it, None for the others.
    """
    chosen = check_ranks(ranks)
    me = detect_rank(rank).rank
    if chosen == "zero":
        return "" if me == 0 else None
    if chosen == "all" or me in chosen:
        return "rank_%d" % me
    return None


class SilentFileWriter:
    """The peers' ``FileWriter`` of a writer that writes nothing (``_get_file_writer()`` of a silent writer, as
    tensorboardX's ``DummyFileWriter``): ``get_logdir()``, and every other method returns None."""

    def __init__(self, logdir: Optional[str]) -> None:
        self._logdir = logdir

    def get_logdir(self) -> Optional[str]:
        return self._logdir

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


def silent_subclass(base: type) -> type:
    """A subclass of ``base`` whose every public method returns None at once and does nothing.

    ``__init__`` keeps only ``logdir`` (for ``get_logdir``, ``log_dir``, ``logdir`` and ``repr``); ``with`` works;
    other properties (``file_writer``) are None; ``_get_file_writer()`` is a ``SilentFileWriter``. Nothing touches
    the file system.
    """
    def nothing(self: Any, *args: Any, **kwargs: Any) -> None:
        return None

    def __init__(self: Any, logdir: Any = None, *args: Any, **kwargs: Any) -> None:
        self._logdir = os.fspath(logdir) if logdir is not None else kwargs.get("log_dir")

    namespace: Dict[str, Any] = {}
    for klass in base.__mro__:
        for name, attr in vars(klass).items():
            if name.startswith("_") or name in namespace:
                continue
            if isinstance(attr, property):
                namespace[name] = property(nothing)
            elif callable(attr) or isinstance(attr, (staticmethod, classmethod)):
                namespace[name] = nothing
    namespace.update(
        __module__=base.__module__,
        __new__=lambda cls, *args, **kwargs: object.__new__(cls),
        __init__=__init__,
        __doc__="A %s of a rank that does not write (see tfevents.summaries.writer.ranks)." % base.__name__,
        get_logdir=lambda self: self._logdir,
        log_dir=property(lambda self: self._logdir),
        logdir=property(lambda self: self._logdir),
        _get_file_writer=lambda self: SilentFileWriter(self._logdir),
        __enter__=lambda self: self,
        __exit__=nothing,
        __del__=nothing,
        __repr__=lambda self: "%s(%r, silent rank)" % (base.__name__, self._logdir),
    )
    return type("Silent" + base.__name__, (base,), namespace)
