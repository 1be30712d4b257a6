"""``tfevents watch LOGDIR``: a full-screen terminal dashboard that follows a logdir as it is written.

Needs the ``watch`` extra (``pip install 'tfevents[watch]'``: Textual and textual-plotext), imported only here."""
from __future__ import annotations

import argparse
import os
import re
import sys

from .. import logdir_data
from . import run_choice
from .arg_types import add_smoothing_options, positive_float, positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logdir", help="directory of runs: a local path or an fsspec URL (s3://, gs://, ...)")
    parser.add_argument("--interval", type=positive_float, default=2.0,
                        help="seconds between reload passes (default 2; each reads only what was appended)")
    parser.add_argument("--tags", metavar="REGEX", help="the tag filter to start with (re.search)")
    parser.add_argument("--runs", metavar="REGEX", help="runs shown at start (the others can be toggled on)")
    run_choice.add_arguments(parser)
    add_smoothing_options(parser, "smoothing weight in [0, 1] to start with",
                          " (s / S step its weight, or double / halve its window or sigma)")
    parser.add_argument("--x", metavar="AXIS", default="step",
                        help="x axis to start with: step, relative, or any scalar tag of the runs (e.g. samples_seen: "
                             "its value at each point's step, interpolated between its kept points; points outside "
                             "its range are dropped and counted); the x key cycles through them")
    parser.add_argument("--logx", action="store_true", help="logarithmic x axis (x <= 0 not drawn)")
    parser.add_argument("--samples", type=positive_int, default=1000,
                        help="points kept per series (a reservoir, as `serve`; default 1000)")
    parser.add_argument("--mono", action="store_true", help="no colours (also when NO_COLOR is set)")


def run(args) -> int:
    problem = logdir_data.check_logdir(args.logdir)
    if problem:
        print("tfevents watch: %s" % problem, file=sys.stderr)
        return 2
    for pattern in (args.tags, args.runs):
        try:
            re.compile(pattern or "")
        except re.error as e:
            print("tfevents watch: invalid regex %r: %s" % (pattern, e), file=sys.stderr)
            return 2
    status = run_choice.where_problem(args, "tfevents watch")
    if status:
        return status
    try:
        from ..watch.app import WatchApp, mono_terminal  # lazy: Textual (the `watch` extra), only for this command
    except ImportError as e:
        print("tfevents watch needs Textual and textual-plotext: pip install 'tfevents[watch]' (%s)" % e,
              file=sys.stderr)
        return 2
    from ..watch.state import WatchState  # lazy: numpy and the live loader, after the extra is found
    mono = args.mono or mono_terminal()
    if mono:
        os.environ.setdefault("NO_COLOR", "1")   # Textual draws its own widgets in monochrome then
    from tfevents.summaries.runs.choose import live_chooser  # lazy: the run table, after the extra is found
    state = WatchState(args.logdir, samples=args.samples, choose=live_chooser(**run_choice.choice(args)))
    WatchApp(state, interval=args.interval, smoothing=args.smoothing, x=args.x, tags=args.tags, runs=args.runs,
             mono=mono, logx=args.logx, smooth=args.smooth).run()
    return 0
