"""Runs as a table that users find, annotate and prune (issue 35).

- ``query.py``: the run query language, one parser for every entry point: ``parse(text) -> Query``,
  ``Query.evaluate(table)`` (a bool per run) and ``Query.select(table)`` (the run names), ``QueryError`` (its
  position in the query and, for an unknown column, the nearest names); e.g.
  ``lr < 0.01 and optimizer == "adam" and "val/acc".max > 0.9 and not archived``.
"""
from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {"parse": "query", "Query": "query", "QueryError": "query"}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
