"""``tfevents runs label|unlabel|note|archive|unarchive``: a run's labels, notes and archived flag, kept in its
sidecar (``tfevents.summaries.run_info``: a change recorded, never a state overwritten, so concurrent writers lose
nothing).

::

    tfevents runs label LOGDIR RUN... LABEL      # the last positional is the label
    tfevents runs unlabel LOGDIR RUN... LABEL
    tfevents runs note LOGDIR RUN TEXT           # an empty TEXT clears the note
    tfevents runs archive LOGDIR RUN...
    tfevents runs unarchive LOGDIR RUN...

Each takes ``--where QUERY`` instead of the RUN names (``label LOGDIR --where Q LABEL``). ``--where`` leaves archived
runs out unless ``--archived``, but for ``unarchive``, which is about them. An unknown run is a usage error (exit
status 2) naming it and the nearest runs.
"""
from __future__ import annotations

import argparse
import os
from typing import List, Tuple

from ...plain_text import printable
from .common import (FAILURE, CommandError, add_logdir_argument, add_where_arguments, chosen_runs, fail, nearest)

# action -> what follows the RUN names: the label, the text, or nothing
TRAILING = {"label": "LABEL", "unlabel": "LABEL", "note": "TEXT", "archive": None, "unarchive": None}


def add_arguments(parser: argparse.ArgumentParser, action: str) -> None:
    add_logdir_argument(parser)
    last = TRAILING[action]
    runs = "RUN" if action == "note" else "RUN..."
    parser.usage = "%(prog)s [-h] [--archived] LOGDIR (" + runs + " | --where QUERY)" + (" " + last if last else "")
    parser.add_argument("items", metavar=runs + (" " + last if last else ""), nargs="*",
                        help="the runs (as `tfevents runs ls` names them)" + (", then the %s" % last.lower()
                                                                              if last else ""))
    add_where_arguments(parser, "with --where, archived runs may be chosen too (else they are left out)")


def _split(args) -> Tuple[List[str], str]:
    """(RUN names, the trailing LABEL or TEXT) from the positionals."""
    last = TRAILING[args.runs_action]
    items = list(args.items)
    if last is None:
        return items, ""
    if not items:
        raise CommandError("%s needs a %s (the last argument)" % (args.runs_action, last))
    if args.runs_action == "note" and args.where is None and len(items) != 2:
        raise CommandError("note takes one RUN and the TEXT (quote the text), or --where QUERY and the TEXT")
    return items[:-1], items[-1]


def run_dir(logdir: str, run: str) -> str:
    """The directory (or URL) of run ``run`` of ``logdir``."""
    if run == ".":
        return logdir
    if "://" in logdir or logdir.startswith("memory:"):
        return logdir.rstrip("/") + "/" + run
    return os.path.join(logdir, *run.split("/"))


def _check_runs(logdir: str, names: List[str]) -> None:
    from tfevents.summaries.reader.walk import discover  # lazy: the reader (CLI start-up)
    try:
        known = [r for r, _ in discover(logdir).runs]
    except FileNotFoundError as err:
        raise CommandError(printable(err)) from None
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CommandError("; ".join("no run %s in %s%s" % (printable(repr(n)), printable(logdir), nearest(n, known))
                                     for n in unknown))


def run(args) -> int:
    from tfevents.summaries.run_info import change_run_info, check_label  # lazy: json, fcntl (CLI start-up)
    action = args.runs_action
    try:
        names, value = _split(args)
        args.runs = names
        if action in ("label", "unlabel"):
            try:
                check_label(value)
            except ValueError as err:
                raise CommandError(printable(err)) from None
        chosen = chosen_runs(args, archived=True if action == "unarchive" else None)
        if names:
            _check_runs(args.logdir, chosen)
        change = {"label": {"add_labels": [value]}, "unlabel": {"remove_labels": [value]}, "note": {"notes": value},
                  "archive": {"archived": True}, "unarchive": {"archived": False}}[action]
        done = []
        for name in chosen:
            try:
                info = change_run_info(run_dir(args.logdir, name), **change)
            except ValueError as err:
                raise CommandError(printable(err), FAILURE) from None
            except OSError as err:
                raise CommandError(printable(err), FAILURE) from None
            done.append((name, info))
    except CommandError as err:
        return fail(err, action)
    if not done:
        print("no runs chosen; nothing changed")
    for name, info in done:
        print(printable("%s  labels: %s%s%s" % (name, ", ".join(info.labels) or "-",
                                                "  archived" if info.archived else "",
                                                "  note: %s" % info.notes if info.notes else "")))
    return 0
