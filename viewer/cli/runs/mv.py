"""``tfevents runs mv LOGDIR OLD NEW``: rename or move run OLD to NEW inside the logdir.

NEW is relative to the logdir, must not exist and must stay inside it (``../x`` and absolute paths are refused,
exit status 2); parent directories are created. A run without sub-runs moves with its directory (local:
``os.rename``; an object store: every object copied, checked, then the originals deleted); a run with sub-runs
below (or ``.``) moves its own files (event files, ``.runinfo*`` sidecars, ``hparams.yaml``) and leaves the sub-runs
where they are (``tfevents.summaries.runs.prune.move_run``).
"""
from __future__ import annotations

import argparse

from ...plain_text import printable
from .common import FAILURE, CommandError, add_logdir_argument, fail, human_bytes

ACTION = "mv"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_logdir_argument(parser)
    parser.add_argument("old", metavar="OLD", help="the run to move, as `tfevents runs ls` names it")
    parser.add_argument("new", metavar="NEW", help="its new name: a path relative to the logdir that does not exist")


def run(args) -> int:
    from tfevents.summaries.runs.prune import (RunPathError, UnknownRunError,  # lazy: the reader (CLI start-up)
                                               UnsafePathError, move_run)
    try:
        try:
            moved = move_run(args.logdir, args.old, args.new)
        except (UnknownRunError, RunPathError, FileNotFoundError) as err:
            raise CommandError(printable(err)) from None
        except (UnsafePathError, OSError) as err:
            raise CommandError(printable(err), FAILURE) from None
    except CommandError as err:
        return fail(err, ACTION)
    if moved.whole:
        print(printable("moved run %s to %s (%s)" % (moved.old, moved.new, human_bytes(moved.bytes))))
    else:
        print(printable("moved run %s's own %d file%s (%s) to %s; the runs below stay: %s" % (
            moved.old, len(moved.moved), "" if len(moved.moved) == 1 else "s", human_bytes(moved.bytes), moved.new,
            ", ".join(moved.kept_runs) or "none")))
    return 0
