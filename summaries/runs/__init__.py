"""Runs as a table that users find, annotate and prune (issue 35).

- ``query.py``: the run query language, one parser for every entry point: ``parse(text) -> Query``,
  ``Query.evaluate(table)`` (a bool per run) and ``Query.select(table)`` (the run names), ``QueryError`` (its
  position in the query and, for an unknown column, the nearest names); e.g.
  ``lr < 0.01 and optimizer == "adam" and "val/acc".max > 0.9 and not archived``.
- ``table.py``: the run table, ``runs_table(source, runs=, where=, archived=)`` (a DataFrame, one row per run: wall
  times, last step, files, restarts, labels, notes, archived, hparams, each scalar tag's last/min/max and steps),
  ``table_from_rows`` of ``RunRow`` objects, ``table_to_arrow`` / ``table_to_polars``.
- ``hparams.py``: a run's hyperparameters from HParams events, Lightning's ``hparams.yaml`` and Hydra's
  ``.hydra/config.yaml`` (their precedence, YAML 1.2 floats), nested keys joined with dots.
- ``choose.py``: choosing runs with a query wherever runs are chosen (``load_logdir(where=, archived=)``, the
  views' ``--where``, ``serve``/``watch``'s live choice: ``live_chooser``), in one read when the load reads what the
  table needs; ``live_table.py``: the run table of a live logdir (the served dashboard's ``where=``).
- ``prune.py``: deleting and moving runs inside a logdir, locally and on object stores (``plan_removal``,
  ``remove_runs``, ``move_run``: ``tfevents runs rm`` and ``mv``).
"""
from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {"parse": "query", "Query": "query", "QueryError": "query",
            **{name: "table" for name in ("runs_table", "table_from_rows", "RunRow", "table_to_arrow",
                                          "table_to_polars")},
            "HParamsFileError": "hparams",
            **{name: "prune" for name in ("plan_removal", "remove_runs", "move_run")},
            **{name: "choose" for name in ("load_chosen", "choose_in", "live_chooser")}}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
