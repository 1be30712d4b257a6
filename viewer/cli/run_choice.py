"""``--where`` and ``--archived``: choosing runs by the run query language, declared once for every command that
chooses runs (report, plot, export, inspect, watch, serve; ``tfevents runs`` has its own).

A query is checked before anything is read: a bad one exits 2 with the parser's message (its position and a caret
under it). What the query means: ``tfevents.summaries.runs.query``; how runs are chosen with it:
``tfevents.summaries.runs.choose``. Archived runs (``tfevents runs archive``) are left out unless ``--archived``.
"""
from __future__ import annotations

import argparse
import sys
WHERE_HELP = ("only runs this run query chooses, e.g. 'lr < 0.01 and \"val/acc\".max > 0.9 and \"bad\" not in "
              "labels' (hparams, labels, notes, archived and each scalar tag's .last/.min/.max/.step; README: "
              "Run queries)")


def add_arguments(parser: argparse.ArgumentParser, *, archived: bool = True) -> None:
    parser.add_argument("--where", metavar="QUERY", help=WHERE_HELP)
    if archived:
        parser.add_argument("--archived", action="store_true",
                            help="include the runs archived with `tfevents runs archive` (left out by default)")


def where_problem(args: argparse.Namespace, prog: str) -> int:
    """0 when ``args.where`` is absent or parses; else says why on stderr and returns 2 (a usage error)."""
    where = getattr(args, "where", None)
    if where is None:
        return 0
    from tfevents.summaries.runs.query import QueryError, parse  # lazy: lark, only for a query
    try:
        parse(where)
    except QueryError as err:
        print("%s: --where: %s" % (prog, err), file=sys.stderr)
        return 2
    return 0


def choice(args: argparse.Namespace) -> dict:
    """``where=`` and ``archived=`` for the readers, from the command's arguments."""
    return {"where": getattr(args, "where", None), "archived": bool(getattr(args, "archived", False))}

