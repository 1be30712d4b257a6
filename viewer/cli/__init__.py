"""The ``tfevents`` command line: ``main`` (the console script) and one module per subcommand.

Each subcommand lives in its own module ``tfevents.viewer.cli.cmd_<name>`` that defines
``add_arguments(parser)`` and ``run(args) -> int``; modules are imported only when their
subcommand runs, so ``tfevents --version`` and ``tfevents inspect`` stay fast.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Optional, Sequence

from tfevents.summaries import __version__ as _SOURCE_VERSION

# subcommand -> one-line help
COMMANDS = {
    "inspect": "list runs, tags, kinds, step ranges, restarts and corruption of event files",
    "export": "export scalars to CSV or Parquet",
    "plot": "plot scalars to PNG, SVG or PDF",
    "report": "write a self-contained HTML report of a logdir",
    "serve": "TensorBoard's UI on tfevents' reader (a gRPC data provider; faster, smaller than its own)",
    "api": "tfevents' HTTP JSON API over a logdir as it is written (the `dashboard` extra)",
    "watch": "a full-screen terminal dashboard that follows a logdir as it is written (the `watch` extra)",
    "runs": "list, label, annotate, archive, delete and move runs (ls, rm, mv, label, note, archive...)",
    "demo": "train the example MLP with tfevents.core and log every kind of summary",
}


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("tfevents")
    except Exception:  # not installed as a distribution (e.g. run from a source tree)
        return _SOURCE_VERSION


COMMAND_MODULE = __name__ + ".cmd_"   # + subcommand name: the module that defines it


def _command_module(name: str):
    return importlib.import_module(COMMAND_MODULE + name)


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tfevents", description="Write, read and view TensorFlow event files.")
    parser.add_argument("--version", action="version", version="tfevents " + _version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Only the chosen subcommand's module is imported to add its arguments.
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, help_text in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            try:
                _command_module(name).add_arguments(p)
            except ModuleNotFoundError as e:
                if e.name != COMMAND_MODULE + name:
                    raise
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        module = _command_module(args.command)
    except ModuleNotFoundError as e:
        if e.name != COMMAND_MODULE + args.command:
            raise
        parser.error("'%s' is not available in this version" % args.command)
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `tfevents inspect … | head`
        return 0
