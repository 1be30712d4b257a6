"""``tfevents runs rm LOGDIR (RUN... | --where QUERY) [--archived] [--yes]``: delete runs.

It first lists exactly the runs it would delete, how (the whole directory; the run's own files only, when sub-runs
that stay live below it; a symlink, its target kept) and how much data; it deletes only with ``--yes``, else says
"nothing deleted; --yes to delete". The rules are ``tfevents.summaries.runs.prune``'s: never anything outside the
logdir, a symlink removed and never followed, the logdir itself never deleted. ``--where`` leaves archived runs out
unless ``--archived``.
"""
from __future__ import annotations

import argparse
import sys

from ...plain_text import printable
from .common import FAILURE, CommandError, add_logdir_argument, add_where_arguments, chosen_runs, fail, human_bytes

ACTION = "rm"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_logdir_argument(parser)
    parser.add_argument("runs", metavar="RUN", nargs="*", help="runs to delete, as `tfevents runs ls` names them")
    add_where_arguments(parser, "with --where, archived runs may be chosen too (else they are left out)")
    parser.add_argument("--yes", action="store_true", help="delete (without it, only list what would be deleted)")


def describe(plan) -> str:
    """One line of the listing for a :class:`~tfevents.summaries.runs.prune.RunRemoval`."""
    if plan.action == "directory":
        what = "the directory (%s)" % human_bytes(plan.bytes)
    elif plan.action == "files":
        what = "its own %d file%s (%s); keeps the runs below: %s" % (
            len(plan.paths), "" if len(plan.paths) == 1 else "s", human_bytes(plan.bytes),
            ", ".join(plan.kept_runs) if plan.kept_runs else "none")
    elif plan.action == "symlink":
        what = "the symlink (its target %s is kept)" % plan.target
    elif plan.action == "behind_link":
        what = "seen through the symlink %s: gone with it, its files kept" % plan.within
    else:
        what = "with the directory of %s" % plan.within
    return printable("  %s  %s" % (plan.run, what))


def run(args) -> int:
    from tfevents.summaries.runs.prune import (RunPathError, UnknownRunError,  # lazy: the reader (CLI start-up)
                                               UnsafePathError, plan_removal, remove_runs)
    try:
        names = chosen_runs(args)
        if not names:
            print("no runs chosen; nothing deleted")
            return 0
        try:
            plans = (remove_runs if args.yes else plan_removal)(args.logdir, names)
        except (UnknownRunError, RunPathError) as err:
            raise CommandError(printable(err)) from None
        except FileNotFoundError as err:
            raise CommandError(printable(err)) from None
        except (UnsafePathError, OSError) as err:
            raise CommandError(printable(err), FAILURE) from None
    except CommandError as err:
        return fail(err, ACTION)
    total = sum(p.bytes for p in plans)
    verb = "deleted" if args.yes else "would delete"
    print("%s %d run%s (%s) in %s:" % (verb, len(plans), "" if len(plans) == 1 else "s", human_bytes(total),
                                       printable(args.logdir)))
    for plan in plans:
        print(describe(plan))
    if not args.yes:
        print("nothing deleted; --yes to delete")
    sys.stdout.flush()
    return 0
