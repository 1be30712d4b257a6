"""``tfevents report LOGDIR -o report.html``: one self-contained HTML file; ``--watch`` keeps it current.

By default the report is interactive (``viewer/reports/interactive``: uPlot charts with hover, zoom, run toggles and
a smoothing slider, data embedded; ``--aggregate REGEX``: groups of runs as bands); ``--static`` writes the
script-free report of PNG charts (``viewer/reports/static.py``)."""
from __future__ import annotations

import argparse
import sys

from .. import logdir_data
from . import run_choice
from .arg_types import add_smoothing_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logdir", help="directory of runs (event files are found recursively): a local path or an "
                                       "fsspec URL (s3://, gs://, ...; credentials as fsspec finds them)")
    parser.add_argument("-o", "--output", default="report.html", help="output HTML file (default report.html)")
    parser.add_argument("--static", action="store_true",
                        help="no JavaScript: every chart a PNG image (as before the interactive report)")
    parser.add_argument("--tags", metavar="REGEX", help="only tags matching this regex (re.search)")
    parser.add_argument("--runs", metavar="REGEX", help="only runs matching this regex (re.search)")
    run_choice.add_arguments(parser)
    add_smoothing_options(parser, "scalar smoothing weight in [0, 1] (the interactive report's starting value)",
                          "; the interactive report starts on that kind")
    parser.add_argument("--x", metavar="AXIS", default="step",
                        help="scalar x axis: step, relative, wall, or any scalar tag of the runs (e.g. samples_seen: "
                             "its value at each point's step, interpolated between the steps it was logged at; "
                             "points outside its range are dropped and counted under the chart)")
    parser.add_argument("--logy", action="store_true", help="logarithmic y axis for scalars")
    parser.add_argument("--logx", action="store_true", help="logarithmic x axis for scalars (x <= 0 not drawn)")
    parser.add_argument("--group", metavar="REGEX",
                        help="one scalar chart per value of this regex's first group (e.g. '^([^/]*)/')")
    parser.add_argument("--aggregate", metavar="REGEX",
                        help="group runs by this regex (its first group, or the run name with the match removed, "
                             "names a group: '/seed_\\d+$' for seeds, '/rank_\\d+$' for a job's ranks) and draw each "
                             "group's line over a shaded band; a control on the page switches to the individual runs")
    parser.add_argument("--center", choices=("mean", "median"), default="mean",
                        help="with --aggregate: the line drawn (the page's starting choice)")
    parser.add_argument("--band", choices=("std", "minmax", "none"), default="std",
                        help="with --aggregate: the band, mean ± std (default) or min–max (the page's starting choice)")
    parser.add_argument("--image-steps", metavar="STEPS", type=_steps,
                        help="comma-separated steps to show images at (nearest recorded), e.g. 0,500,1000")
    parser.add_argument("--title", help="page title (default: the logdir's path)")
    parser.add_argument("--watch", action="store_true",
                        help="keep running; re-render whenever event files change (Ctrl-C stops)")
    parser.add_argument("--interval", type=float, default=2.0, help="--watch polling interval in seconds")


def _steps(text: str) -> list:
    try:
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected comma-separated integers, got %r" % text) from None


def run(args) -> int:
    problem = logdir_data.check_logdir(args.logdir, watching=args.watch)
    if problem:
        print("tfevents report: %s" % problem, file=sys.stderr)
        return 2
    status = run_choice.where_problem(args, "tfevents report")
    if status:
        return status
    if args.static and args.aggregate is not None:
        print("tfevents report: --aggregate draws bands in the interactive report; without --static, or "
              "`tfevents plot --aggregate` for PNG charts", file=sys.stderr)
        return 2
    if args.static:
        import matplotlib
        matplotlib.use("Agg")
        from ..reports.static import watch_report, write_report  # lazy: numpy, plots; only the chosen report
    else:
        from ..reports.interactive.page import (watch_interactive_report as watch_report,  # lazy: numpy; only the chosen report
                                                write_interactive_report as write_report)
    options = dict(tags=args.tags, runs=args.runs, smoothing=args.smoothing, x=args.x, logy=args.logy,
                   group=args.group, title=args.title, image_steps=args.image_steps, **run_choice.choice(args))
    options["logx"] = args.logx
    if args.smooth is not None:
        options["smooth"] = args.smooth
    if args.aggregate is not None:
        options.update(aggregate=args.aggregate, center=args.center, band=args.band)
    try:
        if args.watch:
            print("watching %s -> %s (Ctrl-C to stop)" % (args.logdir, args.output), flush=True)
            watch_report(args.logdir, args.output, interval=args.interval,
                         on_render=lambda p: print("rendered %s" % p, flush=True), **options)
            return 0
        write_report(args.logdir, args.output, **options)
    except ValueError as e:
        print("tfevents report: %s" % e, file=sys.stderr)
        return 2
    print("wrote %s" % args.output)
    return 0
