"""``tfevents runs ACTION LOGDIR ...``: the runs of a logdir as a table to find, annotate and prune them (issue 35).

Actions, one module each in ``viewer/cli/runs/``:

- ``ls LOGDIR [--where Q] [--sort COL] [--desc] [--columns C1,C2] [--format table|csv|json] [--archived]``: the
  run table (``tfevents.summaries.runs_table``), archived runs left out unless ``--archived``;
- ``rm LOGDIR (RUN... | --where Q) [--archived] [--yes]``: lists what it would delete, deletes only with ``--yes``;
- ``mv LOGDIR OLD NEW``: renames or moves a run inside the logdir;
- ``label LOGDIR RUN... LABEL``, ``unlabel LOGDIR RUN... LABEL``, ``note LOGDIR RUN TEXT``, ``archive LOGDIR
  RUN...``, ``unarchive LOGDIR RUN...`` (each also ``--where Q`` instead of the RUN names): the run's sidecar of
  labels, notes and archive (``tfevents.summaries.run_info``).

Exit status: 0 done, 1 a failure (file system, object store), 2 a usage error (a bad query, an unknown run or
column, a new name outside the logdir).
"""
from __future__ import annotations

import argparse

from .runs import annotate, ls, mv, rm

# action -> (module, one-line help)
ACTIONS = {
    "ls": (ls, "the run table: name, last step and time, labels, metrics; --where, --sort, --columns, --format"),
    "rm": (rm, "delete runs (lists them first; deletes only with --yes)"),
    "mv": (mv, "rename or move a run inside the logdir"),
    "label": (annotate, "add a label to runs: label LOGDIR RUN... LABEL"),
    "unlabel": (annotate, "remove a label from runs: unlabel LOGDIR RUN... LABEL"),
    "note": (annotate, "set a run's note: note LOGDIR RUN TEXT (an empty TEXT clears it)"),
    "archive": (annotate, "archive runs: left out of every view unless asked for (--archived)"),
    "unarchive": (annotate, "bring archived runs back"),
}


class IntermixedParser(argparse.ArgumentParser):
    """An action's parser: options may come between the positionals (``label LOGDIR --where Q LABEL``), as
    ``parse_intermixed_args`` reads them, also when argparse calls it as a subcommand's parser."""

    _intermixing = False

    def parse_known_args(self, args=None, namespace=None):
        if self._intermixing:  # parse_known_intermixed_args calls back here
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="runs_action", metavar="ACTION", parser_class=IntermixedParser)
    for name, (module, help_text) in ACTIONS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(runs_action=name)
        if module is annotate:
            module.add_arguments(p, name)
        else:
            module.add_arguments(p)
    parser.set_defaults(runs_parser=parser)


def run(args) -> int:
    if not getattr(args, "runs_action", None):
        args.runs_parser.print_help()
        return 2
    module = ACTIONS[args.runs_action][0]
    return module.run(args)
