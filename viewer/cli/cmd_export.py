"""``tfevents export PATH -o out.csv|out.parquet``: scalars in long format (run, tag, step, wall_time,
value), or ``--format tensorboard-csv -o DIR`` for TensorBoard's ``Wall time,Step,Value`` file per series.

``--summary`` writes instead one row per run and scalar tag: count, first and last step, the last value and the
minimum and maximum with their steps (``Logdir.summary()``). ``--aggregate REGEX`` writes the runs grouped by the
regex (its first group, or the run name with the match removed: ``/seed_\\d+$`` folds seeds, ``/rank_\\d+$`` ranks)
reduced per tag and step to mean, std, min, max, median and count (``tfevents.summaries.aggregate``; ``--align``,
``--bins``, ``--stats``). Both write CSV or Parquet by the output's extension.

``--smooth KIND:PARAM`` adds to the long table a ``smoothed`` column: each series smoothed as the charts smooth it
(``tfevents.viewer.smoothing.smooth``: ``twema:0.6``, ``window:25``, ``gaussian:2.5`` in x units, ``ema:0.6``), on
its ``--x`` values, else on its steps.

``--dask SCHEDULER -o OUT_DIR`` reads the runs on a Dask cluster (``local``, ``local:N`` for a LocalCluster of
N worker processes, or a scheduler address such as ``tcp://host:8786``) and has the workers write
hive-partitioned Parquet, ``OUT_DIR/run=<escaped run>/part-NNNNN.parquet`` (run names percent-encoded: see
``tfevents.summaries.dask.escape_run``), with Dask's progress bar on the terminal. OUT_DIR may be an fsspec URL;
it must be new or empty, and reachable by every worker.
"""
from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from typing import Optional

from ..plain_text import printable
from . import run_choice
from .arg_types import smoothing_spec
from .cmd_inspect import add_load_arguments, load, report_problems

FORMATS = ("csv", "parquet", "tensorboard-csv")
PROG = "tfevents export"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_load_arguments(parser)
    parser.add_argument("-o", "--output", required=True,
                        help="output file (.csv or .parquet), or a directory for --format tensorboard-csv and --dask")
    parser.add_argument("--format", choices=FORMATS, default=None,
                        help="default: parquet with --dask, else from the output's extension "
                             "(.parquet/.pq -> parquet, else csv)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--summary", action="store_true",
                      help="one row per run and scalar tag: last, min and max values with their steps")
    what.add_argument("--aggregate", metavar="REGEX", default=None,
                      help="runs grouped by REGEX (its first group names the group, else the run name with the "
                           "match removed), reduced per tag and step: group, tag, step, mean, std, min, max, median, "
                           "count")
    parser.add_argument("--align", choices=("auto", "exact", "interp", "bins"), default="auto",
                        help="with --aggregate: how runs of different steps are aligned (default: the same steps "
                             "as they are, else linear interpolation inside each run's range)")
    parser.add_argument("--bins", type=int, default=None, help="with --align bins: the number of step bins")
    parser.add_argument("--stats", default=None, metavar="LIST",
                        help="with --aggregate: comma-separated statistics (default: mean,std,min,max,median,count)")
    parser.add_argument("--x", metavar="TAG", default=None,
                        help="add an x column: step, relative, wall, or any scalar tag of the run (e.g. "
                             "samples_seen: its value at each point's step, interpolated between the steps it was "
                             "logged at; points outside its range are dropped and counted)")
    parser.add_argument("--smooth", metavar="KIND:PARAM", type=smoothing_spec, default=None,
                        help="add a smoothed column to the long table: twema:W (W&B's time-weighted EMA), window:N or "
                             "window-centred:N (running average of N points), gaussian:SIGMA (in x units) or ema:W "
                             "(TensorBoard's), each series on its --x values, else its steps")
    what.add_argument("--dask", metavar="SCHEDULER", default=None,
                        help="read on a Dask cluster and write partitioned Parquet to the directory -o: "
                             "'local', 'local:N' (a LocalCluster of N worker processes) or a scheduler "
                             "address (tcp://host:8786); needs the dask extra")


def run(args) -> int:
    if args.x is not None and (args.summary or args.dask is not None):
        print("%s: --x goes with the long table and --aggregate (not --summary or --dask)" % PROG, file=sys.stderr)
        return 2
    if getattr(args, "smooth", None) is not None and (args.summary or args.aggregate is not None
                                                      or args.dask is not None or args.format == "tensorboard-csv"):
        print("%s: --smooth adds a smoothed column to the long table, csv or parquet (not --summary, --aggregate, "
              "--dask or --format tensorboard-csv)" % PROG, file=sys.stderr)
        return 2
    status = run_choice.where_problem(args, PROG)
    if status:
        return status
    if args.dask is not None:
        return run_dask(args)
    if args.summary or args.aggregate is not None:
        return run_table(args)
    if args.align != "auto" or args.bins is not None or args.stats is not None:
        print("%s: --align, --bins and --stats go with --aggregate" % PROG, file=sys.stderr)
        return 2
    from tfevents.summaries.reader.export import export_scalars, write_table  # lazy: numpy (CLI start-up)
    logdir, status = _load_scalars(args)
    if logdir is None:
        return status
    scalars, xs = logdir.scalars, None
    if args.x is not None:
        scalars, xs = _on_x(logdir.scalars, args)
        if scalars is None:
            return 2
    try:
        if getattr(args, "smooth", None) is not None:
            n = write_table(smoothed_columns(scalars, xs, args.smooth), args.output, args.format)
        else:
            n = export_scalars(scalars, args.output, args.format, x=xs)
    except ValueError as err:
        print("%s: %s" % (PROG, err), file=sys.stderr)
        return 2
    except ImportError as err:
        print("%s: %s" % (PROG, err), file=sys.stderr)
        return 2
    except OSError as err:
        print("%s: cannot write %s: %s" % (PROG, args.output, err), file=sys.stderr)
        return 2
    print("%s: wrote %d rows of %d series to %s" % (PROG, n, len(scalars), args.output), file=sys.stderr)
    return 0


def smoothed_columns(scalars, xs, spec) -> dict:
    """The long table's columns (run, tag, step, wall_time, value, and x when ``xs``), series in (run, tag) order,
    and ``smoothed``: each series' values smoothed by ``spec`` (a Smoothing) on its x values ``xs[key]``, else its
    steps."""
    import numpy as np  # lazy: numpy (CLI start-up)
    from ..smoothing import smooth  # lazy: numpy (CLI start-up)
    keys = sorted(scalars)
    counts = [len(scalars[k].step) for k in keys]

    def joined(arrays, dtype):
        arrays = [np.asarray(a, dtype) for a in arrays]
        return np.concatenate(arrays) if arrays else np.zeros(0, dtype)
    cols = {"run": np.repeat(np.array([k[0] for k in keys], dtype=object), counts),
            "tag": np.repeat(np.array([k[1] for k in keys], dtype=object), counts),
            "step": joined((scalars[k].step for k in keys), np.int64),
            "wall_time": joined((scalars[k].wall_time for k in keys), np.float64),
            "value": joined((scalars[k].value for k in keys), np.float64)}
    if xs is not None:
        cols["x"] = joined((xs[k] for k in keys), np.float64)
    cols["smoothed"] = joined((smooth(xs[k] if xs is not None else scalars[k].step, scalars[k].value, *spec)
                               for k in keys), np.float64)
    return cols


def _on_x(scalars, args):
    """``(series kept, their x values)`` on ``--x``: the series ``--tags`` picks, their x from the run's x tag;
    ``(None, None)`` having said why when no run logged that tag."""
    from tfevents.summaries.reader.x_axis import scalars_on_x  # lazy: numpy (CLI start-up)
    picked = scalars if args.tags is None else {k: s for k, s in scalars.items() if re.search(args.tags, k[1])}
    if args.x not in ("step", "relative", "wall") and not any(tag == args.x for _, tag in scalars):
        print("%s: --x must be step, relative, wall or a scalar tag of the runs; no run logged %s"
              % (PROG, printable(args.x)), file=sys.stderr)
        return None, None
    on = scalars_on_x(picked, args.x, scalars)
    if on.dropped:
        print("%s: %d points without an x value for %s dropped (outside its logged steps, or runs that did not "
              "log it)" % (PROG, on.total_dropped, printable(args.x)), file=sys.stderr)
    return on.series, on.x


def _load_scalars(args):
    """``(Logdir, 0)`` with the scalars ``--tags``/``--runs`` pick (and ``--x``'s tag), or ``(None, exit status)``
    having said why."""
    if getattr(args, "x", None) not in (None, "step", "relative", "wall") and args.tags is not None:
        # the x tag is read too, whatever --tags picks (_on_x keeps only --tags' series)
        args = argparse.Namespace(**{**vars(args), "tags": "(?:%s)|^%s$" % (args.tags, re.escape(args.x))})
    logdir, status = load(args, PROG, kinds=("scalars",))
    if logdir is None:
        return None, status
    if not logdir.scalars:
        print("%s: no scalars in %s match --tags %r --runs %r" % (PROG, args.path, args.tags, args.runs),
              file=sys.stderr)
        return None, 1
    return logdir, 0


def run_table(args) -> int:
    """``--summary`` and ``--aggregate``: a table of the scalars to CSV or Parquet."""
    from tfevents.summaries.compare import aggregate_columns  # lazy: numpy (CLI start-up)
    from tfevents.summaries.compare.stats import STATS  # lazy: numpy (CLI start-up)
    from tfevents.summaries.reader.export import write_table  # lazy: numpy (CLI start-up)
    from tfevents.summaries.reader.summary import summary_columns  # lazy: numpy (CLI start-up)
    if args.format == "tensorboard-csv":
        print("%s: --summary and --aggregate write one table: csv or parquet" % PROG, file=sys.stderr)
        return 2
    logdir, status = _load_scalars(args)
    if logdir is None:
        return status
    if args.summary:
        columns, what = summary_columns(logdir.scalars), "series"
    else:
        stats = tuple(args.stats.split(",")) if args.stats else STATS
        try:
            table = aggregate_columns(logdir, args.aggregate, stats=stats, align=args.align, bins=args.bins,
                                      **({"tags": args.tags, "x": args.x} if args.x is not None else {}))
        except (ValueError, TypeError) as err:
            print("%s: %s" % (PROG, err), file=sys.stderr)
            return 2
        columns, what = table.columns, "groups (%s)" % ", ".join(printable(g) for g in table.groups)
    try:
        n = write_table(columns, args.output, args.format)
    except ImportError as err:
        print("%s: %s" % (PROG, err), file=sys.stderr)
        return 2
    except OSError as err:
        print("%s: cannot write %s: %s" % (PROG, args.output, err), file=sys.stderr)
        return 2
    print("%s: wrote %d rows of %s to %s" % (PROG, n, what, args.output), file=sys.stderr)
    return 0


def _output_problem(out: str):
    """Why ``out`` cannot take a partitioned export (it exists and is not an empty directory), or None."""
    if "://" in out:
        import fsspec
        fs, root = fsspec.core.url_to_fs(out)
        if fs.exists(root) and (not fs.isdir(root) or fs.ls(root)):
            return "%s exists and is not an empty directory" % out
        return None
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        return "%s exists and is not an empty directory (old partitions would mix with new ones)" % out
    return None


def _chosen_runs_regex(args) -> Optional[str]:
    """``--runs``, or with ``--where`` (or archived runs to leave out) a regex of exactly the chosen runs' names
    (the Dask reader takes a regex; the choice is made before, on the run table)."""
    if args.where is None and args.archived:
        return args.runs
    from tfevents.summaries.runs.choose import choose_names  # lazy: the run table, only with a choice
    names = choose_names(args.path, args.where, args.archived, runs=args.runs, restarts=args.restarts)
    return "^(?:%s)$" % "|".join(re.escape(name) for name in names) if names else "(?!)"


def run_dask(args) -> int:
    """``--dask``: read on the cluster, have the workers write ``run=<escaped>/part-*.parquet``."""
    fmt = args.format or "parquet"
    if fmt != "parquet":
        print("%s: --dask writes partitioned Parquet; use --format parquet (not %s)" % (PROG, fmt), file=sys.stderr)
        return 2
    try:
        from tfevents.summaries import dask as tfdask  # lazy: dask, an optional dependency
        from tfevents.summaries.reader.walk import is_url  # lazy: numpy, protobuf; only with --dask
    except ImportError as err:
        print("%s: %s" % (PROG, err), file=sys.stderr)
        return 2
    problem = _output_problem(args.output)
    if problem:
        print("%s: %s" % (PROG, problem), file=sys.stderr)
        return 2
    show = args.progress if args.progress is not None else sys.stdout.isatty()
    local = args.dask == "local" or args.dask.startswith("local:")
    try:
        # a remote logdir keeps a worker waiting on the network: threads then, one per process for local files
        client = tfdask.connect(args.dask, silence_logs=logging.ERROR,
                                threads_per_worker=4 if is_url(args.path) else 1) if local \
            else tfdask.connect(args.dask)
    except ValueError as err:
        print("%s: %s" % (PROG, err), file=sys.stderr)
        return 2
    except OSError as err:  # includes the TimeoutError of a scheduler that does not answer
        print("%s: cannot reach the Dask scheduler %s: %s" % (PROG, args.dask, err), file=sys.stderr)
        return 2
    cluster = client.cluster if local else None
    try:
        try:
            runs = _chosen_runs_regex(args)
            logdir = tfdask.read_logdir(args.path, args.tags, runs, kinds=("scalars",), restarts=args.restarts,
                                        on_error="skip", check_crc=args.checksum, progress=show)
        except (FileNotFoundError, ValueError) as err:
            print("%s: %s" % (PROG, err), file=sys.stderr)
            return 2
        status = report_problems(PROG, logdir.problems, args.on_error)
        if status:
            return status
        keys = logdir.keys["scalars"]
        if not keys:
            print("%s: no scalars in %s match --tags %r --runs %r" % (PROG, args.path, args.tags, args.runs),
                  file=sys.stderr)
            return 1
        too_long = [run for run in sorted({run for run, _ in keys}) if len(tfdask.escape_run(run).encode()) > 255]
        if too_long:
            print("%s: run name too long for a partition directory once escaped: %s" % (PROG, printable(too_long[0])),
                  file=sys.stderr)
            return 2
        try:
            n = tfdask.write_parquet(logdir.scalars, args.output, progress=show)
        except OSError as err:
            print("%s: cannot write %s: %s" % (PROG, args.output, err), file=sys.stderr)
            return 2
        runs = len({run for run, _ in keys})
        print("%s: wrote %d rows of %d series in %d runs to %s (run=<run>/part-*.parquet)"
              % (PROG, n, len(keys), runs, args.output), file=sys.stderr)
        return 0
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
