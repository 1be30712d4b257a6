"""What ``tfevents runs``' actions share: the LOGDIR argument, choosing runs by name or by ``--where`` query, and
turning the library's errors into messages and exit statuses.

Exit statuses: 2 for a usage error (no runs chosen, a bad query, an unknown run or column, a new name outside the
logdir), 1 for a failure of the file system or the object store, 0 otherwise. A bad query prints the
``QueryError``'s message as it is: its position and the query with a caret line under the mistake. Run names in
messages go through ``printable`` (control characters as ``\\xNN``).
"""
from __future__ import annotations

import argparse
import difflib
import sys
from typing import Iterable, List, Optional

from ...plain_text import printable

PROG = "tfevents runs"
USAGE, FAILURE = 2, 1


class CommandError(Exception):
    """Stops an action: ``message`` goes to stderr, ``status`` is the exit status."""

    def __init__(self, message: str, status: int = USAGE):
        super().__init__(message)
        self.status = status


def add_logdir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logdir", metavar="LOGDIR",
                        help="the logdir: a local directory or an fsspec URL (s3://bucket/logs; credentials and "
                             "endpoint from the environment, e.g. AWS_ENDPOINT_URL)")


def add_where_arguments(parser: argparse.ArgumentParser, archived_help: str) -> None:
    parser.add_argument("--where", metavar="QUERY", default=None,
                        help="choose runs by a query on the run table, e.g. 'loss.min < 0.1 and not archived' "
                             "or '\"bad\" in labels' (the run query language: == != < <= > >=, and, or, not, in [...], "
                             "=~ REGEX, is missing)")
    parser.add_argument("--archived", action="store_true", help=archived_help)


def nearest(name: str, known: Iterable[str], n: int = 3) -> str:
    """``; nearest: 'a', 'b'`` (difflib), or '' when nothing is near."""
    near = difflib.get_close_matches(name, list(known), n=n, cutoff=0.5)
    return "; nearest: " + ", ".join(printable(repr(x)) for x in near) if near else ""


def load_table(logdir: str, where: Optional[str], archived: bool):
    """The run table of ``logdir`` (``tfevents.summaries.runs.table.runs_table``): the runs ``where`` chooses,
    archived runs left out unless ``archived``. CommandError: a bad query (2, its message with the caret line), a
    missing logdir (2), a read failure (1)."""
    from tfevents.summaries.runs.query import QueryError  # lazy: numpy (CLI start-up)
    from tfevents.summaries.runs.table import runs_table  # lazy: pandas, the reader (CLI start-up)
    try:
        return runs_table(logdir, where=where, archived=archived, on_error="skip")
    except QueryError as err:
        raise CommandError(str(err)) from None
    except FileNotFoundError as err:
        raise CommandError(printable(err)) from None
    except OSError as err:
        raise CommandError(printable(err), FAILURE) from None


def chosen_runs(args, archived: Optional[bool] = None) -> List[str]:
    """The runs an action works on: the RUN names given, or those ``--where`` chooses (not both; one is needed).
    Archived runs are chosen by ``--where`` only with ``--archived`` (or ``archived=True``)."""
    names = list(dict.fromkeys(args.runs))
    if names and args.where is not None:
        raise CommandError("give RUN names or --where, not both")
    if not names and args.where is None:
        raise CommandError("no runs chosen: give RUN names or --where QUERY")
    if names:
        return names
    table = load_table(args.logdir, args.where, args.archived if archived is None else archived)
    return [str(n) for n in table["name"]]


def fail(err: CommandError, action: str) -> int:
    print("%s %s: %s" % (PROG, action, err), file=sys.stderr)
    return err.status


def human_bytes(n: int) -> str:
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return ("%d %s" if unit == "bytes" else "%.1f %s") % (n, unit)
        n /= 1000.0
    return ""
