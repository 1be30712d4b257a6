"""``tfevents export PATH -o out.csv|out.parquet``: scalars in long format (run, tag, step, wall_time,
value), or ``--format tensorboard-csv -o DIR`` for TensorBoard's ``Wall time,Step,Value`` file per series."""
from __future__ import annotations

import argparse
import sys

from .cmd_inspect import add_load_arguments, load

FORMATS = ("csv", "parquet", "tensorboard-csv")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_load_arguments(parser)
    parser.add_argument("-o", "--output", required=True,
                        help="output file (.csv or .parquet), or a directory for --format tensorboard-csv")
    parser.add_argument("--format", choices=FORMATS, default=None,
                        help="default: from the output's extension (.parquet/.pq -> parquet, else csv)")


def run(args) -> int:
    from tfevents.summaries.reader.export import export_scalars
    logdir, status = load(args, "tfevents export", kinds=("scalars",))
    if logdir is None:
        return status
    if not logdir.scalars:
        print("tfevents export: no scalars in %s match --tags %r --runs %r" % (args.path, args.tags, args.runs),
              file=sys.stderr)
        return 1
    try:
        n = export_scalars(logdir.scalars, args.output, args.format)
    except ImportError as err:
        print("tfevents export: %s" % err, file=sys.stderr)
        return 2
    except OSError as err:
        print("tfevents export: cannot write %s: %s" % (args.output, err), file=sys.stderr)
        return 2
    print("tfevents export: wrote %d rows of %d series to %s" % (n, len(logdir.scalars), args.output),
          file=sys.stderr)
    return 0
