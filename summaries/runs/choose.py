"""Choosing runs with a query: ``where=`` and ``archived=`` wherever runs are chosen (issue 35).

Every entry point goes through here, so a query means the same everywhere: ``load_logdir(where=...)``
(and so ``tfevents report/plot/export/inspect --where``, ``show(where=)``, ``aggregate(where=)``), the live loader
behind ``tfevents serve`` and ``tfevents watch`` (:func:`live_chooser`), and ``tfevents runs``.

- ``where``: a query of :mod:`.query` on the run table (:mod:`.table`: hparams, labels, notes, archived and every
  scalar tag's ``.last/.min/.max/.step``), e.g. ``lr < 0.01 and "val/acc".max > 0.9``.
- ``archived``: False leaves out the runs archived with ``tfevents runs archive`` (``not archived`` in the query);
  the views (report, plot, serve, watch, show) pass False unless asked for (``--archived``), the data API
  (``load_logdir``, ``aggregate``, ``runs_table``) keeps every run unless told.

**One read.** When the load reads what the table needs (the scalars of every tag, and hparams), the table is made
from the loaded Logdir and the Logdir is cut down to the chosen runs (:func:`restrict`): no event file is read twice.
When the load reads less (``tags=`` or ``kinds=`` leave out scalars the query asks about), the table is made by
its own pass over the logdir first (``runs_table(path)``: the scalars reduced to a row per run in the read jobs) and
the load then reads only the chosen runs.
"""
from __future__ import annotations

import os
import warnings
from typing import Any, Callable, Collection, Dict, List, Optional, Set

import numpy as np

from ..live.loader import LiveLogdir
from ..reader.load import Logdir, ReadWarning, load_logdir
from ..reader.walk import Discovery, discover
from ..run_info import RunInfo, is_run_info_file, read_run_info
from .live_table import live_runs_table
from .query import Query, parse
from .table import logdir_walk, runs_table

__all__ = ["restrict", "chosen_names", "load_chosen", "choose_in", "archived_runs", "infos_in", "run_infos",
           "choose_names", "live_chooser"]

TABLE_KINDS = ("scalars", "hparams")   # what the run table is made of


def restrict(logdir: Logdir, names: Collection[str]) -> Logdir:
    """A Logdir of ``logdir``'s records of the runs in ``names`` only (the records are shared, not copied); its
    problems are those of the chosen runs' files and those of no run (the walk's)."""
    chosen = set(names)
    out = Logdir(logdir.path, runs=[r for r in logdir.runs if r in chosen], restarts=logdir.restarts,
                 walk=logdir.walk)
    for kind, records in logdir.data.items():
        out.data[kind] = {key: value for key, value in records.items()
                          if (key[0] if isinstance(key, tuple) else key) in chosen}
    out.files = {run: files for run, files in logdir.files.items() if run in chosen}
    other_files = {f for run, files in logdir.files.items() if run not in chosen for f in files}
    out.problems = [p for p in logdir.problems if p.path not in other_files]
    out.out_of_order = {k: n for k, n in logdir.out_of_order.items() if k[0] in chosen}
    out.purged = {k: n for k, n in logdir.purged.items() if k[0] in chosen}
    return out


def _query(where: Optional[str]) -> Optional[Query]:
    return parse(where) if where is not None and where.strip() else None


def chosen_names(table, where: Optional[str] = None, archived: bool = True) -> List[str]:
    """The names of the runs of a run table that ``where`` chooses (None or blank: every run), without the archived
    ones unless ``archived``; QueryError for a bad query."""
    query = _query(where)
    keep = np.ones(len(table), dtype=bool)
    if not archived and len(table):
        keep &= ~table["archived"].to_numpy(dtype=bool)
    if query is not None:
        keep &= np.asarray(query.evaluate(table), dtype=bool)
    return [name for name, k in zip(table["name"], keep) if k]


def _reads_the_table(tags: Optional[str], kinds: Optional[Collection[str]]) -> bool:
    return tags is None and (kinds is None or set(TABLE_KINDS) <= set(kinds))


def load_chosen(path, where: Optional[str] = None, archived: bool = True, **load: Any) -> Logdir:
    """``load_logdir(path, **load)`` with only the runs ``where`` and ``archived`` choose (module docstring)."""
    query = _query(where)   # a bad query fails before anything is read
    if query is None and archived:
        return load_logdir(path, **load)
    kinds = load.get("kinds")
    if query is not None and load.get("tags") is None and kinds is not None and "scalars" in kinds:
        load["kinds"] = tuple(kinds) + ("hparams",) * ("hparams" not in kinds)   # tiny: one read, not two
    if query is not None and not _reads_the_table(load.get("tags"), load.get("kinds")):
        table = runs_table(path, on_error="raise" if load.get("on_error") == "raise" else "skip",
                           **{k: load[k] for k in ("runs", "restarts", "workers", "storage_options") if k in load})
        return restrict(load_logdir(path, **load), chosen_names(table, where, archived))
    return choose_in(load_logdir(path, **load), where, archived, load.get("storage_options"))


def infos_in(found: Discovery) -> Dict[str, RunInfo]:
    """The labels, notes and archived flag of each run of a walk (``discover(..., listing=True)``) that has any:
    only the runs whose folder lists a run info file are read; one that cannot be read is left out (a
    ReadWarning)."""
    listing = found.listing or {}
    out = {}
    for run, files in found.runs:
        names = listing.get(run, ())
        if files and any(is_run_info_file(n) for n in names):
            folder = files[0].rsplit("/", 1)[0] if found.fs is not None else os.path.dirname(files[0])
            try:
                out[run] = read_run_info(folder, fs=found.fs, names=names)
            except (OSError, ValueError) as err:
                warnings.warn("run info of %r: %s" % (run, err), ReadWarning, stacklevel=3)
    return out


def run_infos(source, storage_options: Optional[Dict[str, Any]] = None) -> Dict[str, RunInfo]:
    """:func:`infos_in` of a loaded Logdir's own walk (``Logdir.walk``), or of one walk of a path (no event file is
    read); ``{}`` when the folder is gone."""
    try:
        if isinstance(source, Logdir):
            return infos_in(logdir_walk(source, storage_options))
        return infos_in(discover(os.fspath(source), storage_options=storage_options, listing=True))
    except FileNotFoundError:   # a Logdir whose folder has gone since it was read: no run info there now
        return {}


def archived_runs(source, storage_options: Optional[Dict[str, Any]] = None) -> Set[str]:
    """The runs of a path or loaded Logdir archived with ``tfevents runs archive`` (:func:`run_infos`)."""
    return {run for run, info in run_infos(source, storage_options).items() if info.archived}


def choose_in(logdir: Logdir, where: Optional[str] = None, archived: bool = True,
              storage_options: Optional[Dict[str, Any]] = None) -> Logdir:
    """An already loaded Logdir cut down to the runs ``where`` and ``archived`` choose (its table made from what it
    holds: a query on a scalar tag it did not load finds no such column)."""
    if _query(where) is None:
        if archived:
            return logdir
        hidden = archived_runs(logdir, storage_options)
        return restrict(logdir, [r for r in logdir.runs if r not in hidden]) if hidden else logdir
    table = runs_table(logdir, on_error="skip", storage_options=storage_options)
    return restrict(logdir, chosen_names(table, where, archived))


def choose_names(path, where: Optional[str] = None, archived: bool = True, runs: Optional[str] = None,
                 **table_options: Any) -> List[str]:
    """The names of the runs under ``path`` (matching the ``runs`` regex) that ``where`` and ``archived`` choose,
    without loading their series: the run table's pass when there is a query, else one walk and the run info
    files."""
    if _query(where) is not None:
        return list(runs_table(path, runs=runs, where=where, archived=archived, **table_options)["name"])
    found = discover(os.fspath(path), runs, table_options.get("storage_options"), listing=not archived)
    hidden = set() if archived else {run for run, info in infos_in(found).items() if info.archived}
    return [run for run, _ in found.runs if run not in hidden]


def live_chooser(where: Optional[str] = None, archived: bool = True
                 ) -> Optional[Callable[[LiveLogdir], List[str]]]:
    """``choose`` for :class:`~tfevents.summaries.live.loader.LiveLogdir`: after each pass, the runs the query and
    the archive choose among every run the loader holds (None when neither chooses: every run is shown)."""
    if _query(where) is None:
        return None if archived else _unarchived_live_runs
    return lambda live: chosen_names(live_runs_table(live), where, archived)


def _unarchived_live_runs(live: LiveLogdir) -> List[str]:
    """The runs ``live`` holds but those archived, from its last walk."""
    names = live.run_names(every=True)
    if live.found is None:
        return names
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReadWarning)   # each pass would say it again
        hidden = {run for run, info in infos_in(live.found).items() if info.archived}
    return [run for run in names if run not in hidden]
