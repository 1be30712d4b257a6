"""``tfevents plot LOGDIR -o out.png|svg|pdf``: scalar charts of every run, TensorBoard-smoothed; with
``--aggregate REGEX``, of every group of runs (seeds): its mean or median line over a std or min–max band."""
from __future__ import annotations

import argparse
import os
import sys

from .. import logdir_data
from ..plain_text import printable
from ..plots import matplotlib_figures
from ..reports.rerender_on_change import watch
from . import run_choice
from .arg_types import add_smoothing_options

FORMATS = ("png", "svg", "pdf")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logdir", help="directory of runs (event files are found recursively): a local path or an "
                                       "fsspec URL (s3://, gs://, ...; credentials as fsspec finds them)")
    parser.add_argument("-o", "--output", required=True, help="output file: .png, .svg or .pdf")
    parser.add_argument("--tags", metavar="REGEX", help="only tags matching this regex (re.search)")
    parser.add_argument("--runs", metavar="REGEX", help="only runs matching this regex (re.search)")
    run_choice.add_arguments(parser)
    add_smoothing_options(parser, "TensorBoard's smoothing weight in [0, 1] (default 0.6; 0 = raw)")
    parser.add_argument("--x", metavar="AXIS", default="step",
                        help="x axis: step, relative (time since each run's first point), wall (time), or any scalar "
                             "tag of the runs, e.g. samples_seen (its value at each point's step, interpolated "
                             "between the steps it was logged at; points outside its range are dropped and counted "
                             "under the chart)")
    parser.add_argument("--logy", action="store_true", help="logarithmic y axis")
    parser.add_argument("--logx", action="store_true", help="logarithmic x axis (points at x <= 0 not drawn)")
    parser.add_argument("--group", metavar="REGEX",
                        help="one chart per value of this regex's first group (e.g. '^([^/]*)/')")
    parser.add_argument("--ncols", type=int, default=None, help="charts per row")
    parser.add_argument("--aggregate", metavar="REGEX",
                        help="draw groups of runs instead of runs: REGEX's first group (else the run name with the "
                             "match removed) names a run's group, e.g. '/seed_\\d+$'; each group is its mean line "
                             "over a shaded band (--center, --band)")
    parser.add_argument("--center", choices=("mean", "median"), default="mean", help="with --aggregate: the line")
    parser.add_argument("--band", choices=("std", "minmax", "none"), default="std",
                        help="with --aggregate: the band, mean ± std (default) or min–max")
    parser.add_argument("--align", choices=("auto", "exact", "interp", "bins"), default="auto",
                        help="with --aggregate: how runs of different steps are aligned")
    parser.add_argument("--bins", type=int, default=None, help="with --align bins: the number of step bins")
    parser.add_argument("--watch", action="store_true",
                        help="keep running; re-draw whenever event files change (Ctrl-C stops)")
    parser.add_argument("--interval", type=float, default=2.0, help="--watch polling interval in seconds")
    parser.add_argument("--dpi", type=int, default=100, help="resolution of PNG output (default 100)")


def run(args) -> int:
    ext = os.path.splitext(args.output)[1].lstrip(".").lower()
    if ext not in FORMATS:
        print("tfevents plot: output must end in .png, .svg or .pdf, got %r" % args.output, file=sys.stderr)
        return 2
    problem = logdir_data.check_logdir(args.logdir, watching=args.watch)
    if problem:
        print("tfevents plot: %s" % problem, file=sys.stderr)
        return 2
    status = run_choice.where_problem(args, "tfevents plot")
    if status:
        return status
    import matplotlib
    matplotlib.use("Agg")
    if not args.watch:
        return _draw(args)
    print("watching %s -> %s (Ctrl-C to stop)" % (args.logdir, args.output), flush=True)
    watch(args.logdir, lambda: _draw(args), interval=args.interval)
    return 0


def _draw(args) -> int:
    from ..plots.scalars import plot_scalars  # lazy: numpy (CLI start-up; tfevents report imports this module)
    try:
        logdir = logdir_data.load(args.logdir, tags=logdir_data.with_x_tag(args.tags, args.x), runs=args.runs,
                                  kinds=("scalars",), **run_choice.choice(args))
        scalars = logdir_data.select(logdir_data.kind(logdir, "scalars"), args.tags, args.runs)
        if not scalars:
            print("tfevents plot: no scalars in %s match --tags %r --runs %r"
                  % (args.logdir, args.tags, args.runs), file=sys.stderr)
            return 1
        if args.x not in ("step", "relative", "wall") and not any(
                tag == args.x for _, tag in logdir_data.select(logdir_data.kind(logdir, "scalars"), None, args.runs)):
            print("tfevents plot: --x must be step, relative, wall or a scalar tag of the runs; no run logged %s"
                  % printable(args.x), file=sys.stderr)
            return 2
        if getattr(args, "aggregate", None) is not None:
            from ..plots.bands import plot_aggregate  # lazy: numpy (CLI start-up)
            fig = plot_aggregate(logdir, args.aggregate, args.tags, args.runs, center=args.center, band=args.band,
                                 align=args.align, bins=args.bins, smoothing=args.smoothing, logy=args.logy,
                                 ncols=args.ncols, x=args.x, logx=args.logx, smooth=args.smooth)
        else:
            fig = plot_scalars(logdir, args.tags, args.runs, smoothing=args.smoothing, x=args.x, logy=args.logy,
                               group=args.group, ncols=args.ncols, logx=args.logx, smooth=args.smooth)
    except ValueError as e:  # a bad regex and the like
        print("tfevents plot: %s" % e, file=sys.stderr)
        return 2
    matplotlib_figures.save(fig, args.output, dpi=args.dpi)
    n_runs = len({run for run, _ in scalars})
    n_tags = len({tag for _, tag in scalars})
    print("wrote %s (%d tags, %d runs)" % (args.output, n_tags, n_runs), flush=True)
    return 0
