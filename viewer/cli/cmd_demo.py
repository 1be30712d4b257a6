"""``tfevents demo``: train the example MLP (or ``--model cnn``, a small CNN) with tfevents.core (``tfevents.core.demo``), log every kind of
summary under ``--logdir``, write the HTML report into it and say how to open TensorBoard on it."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from typing import List

from .arg_types import positive_float, positive_int

# The demo's matrices are small (batch x 784 x 300): one BLAS thread is faster than a pool, and much faster on
# a busy machine, where a pool's threads spin against each other. Only effective before numpy is imported,
# and never overriding the user's own setting.
if "numpy" not in sys.modules:
    for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, "1")


SEED_RUNS = r"/seed_\d+"   # the part of a sweep trial's run naming its seed: lr_<rate>/seed_<s>/train -> lr_<rate>/train


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tfevents.core.demo import MODELS, SWEEP_FACTORS, DemoConfig, OPTIMIZERS  # lazy: numpy after BLAS settings

    d = DemoConfig()
    parser.add_argument("--logdir", default=d.logdir, help="where the runs train/ and test/ go (default %(default)s)")
    parser.add_argument("--model", choices=MODELS, default=d.model,
                        help="mlp: 784-300-100-10; cnn: conv 5x5x16, pool, conv 5x5x32, pool, dense 256, "
                             "logging its first layer's filters too (default %(default)s)")
    parser.add_argument("--epochs", type=positive_int, default=d.epochs, help="epochs (default %(default)s)")
    parser.add_argument("--optimizer", choices=sorted(OPTIMIZERS), default=d.optimizer,
                        help="tf.train optimizer (default %(default)s)")
    parser.add_argument("--learning-rate", type=positive_float, default=None,
                        help="initial learning rate, decayed linearly to a hundredth of it over the run "
                             "(default: per optimizer, momentum %s)" % OPTIMIZERS["momentum"][2])
    parser.add_argument("--batch-size", type=positive_int, default=d.batch_size, help="default %(default)s")
    parser.add_argument("--train-size", type=positive_int, default=d.n_train,
                        help="synthetic training examples (default %(default)s)")
    parser.add_argument("--test-size", type=positive_int, default=d.n_test,
                        help="synthetic test examples (default %(default)s)")
    parser.add_argument("--clip-norm", type=positive_float, default=d.clip_norm,
                        help="clip_by_global_norm threshold (default %(default)s)")
    parser.add_argument("--max-norm", type=positive_float, default=d.max_norm,
                        help="max-norm bound on each unit's incoming weights (default %(default)s)")
    parser.add_argument("--ema-decay", type=float, default=d.ema_decay,
                        help="ExponentialMovingAverage decay (default %(default)s)")
    parser.add_argument("--log-every", type=positive_int, default=d.log_every,
                        help="training scalars every N steps (default %(default)s)")
    parser.add_argument("--seed", type=int, default=d.seed, help="data and initialization seed (default %(default)s)")
    parser.add_argument("--sweep", nargs="?", const="default", default=None, metavar="RATES",
                        help="train one trial per learning rate, each under LOGDIR/lr_<rate>, for TensorBoard's "
                             "HParams table: RATES is a comma-separated list (default: the initial learning rate "
                             "times %s)" % ", ".join("%g" % f for f in SWEEP_FACTORS))
    parser.add_argument("--seeds", type=positive_int, default=1, metavar="N",
                        help="with --sweep: N trials per learning rate, LOGDIR/lr_<rate>/seed_<s> for the seeds "
                             "--seed, --seed + 1, ...; the report draws each rate's seeds as bands (tfevents plot/report "
                             "--aggregate '/seed_\\d+')")
    parser.add_argument("--no-report", action="store_true", help="do not write LOGDIR/report.html")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def _console_command(name: str, module: str) -> str:
    """How to run the console script ``name``: ``name`` if it is on PATH (and is the one next to this Python),
    else the one next to this Python, else ``python -m module``."""
    found = shutil.which(name)
    beside = os.path.join(os.path.dirname(sys.executable), name)
    if found and (not os.path.exists(beside) or os.path.samefile(found, beside)):
        return name
    if os.path.exists(beside):
        return beside
    return "%s -m %s" % (os.path.basename(sys.executable), module)


def _learning_rates(text: str, config) -> List[float]:
    from tfevents.core.demo import sweep_learning_rates  # lazy: numpy after BLAS settings

    if text == "default":
        return sweep_learning_rates(config)
    rates = []
    for item in text.split(","):
        rates.append(positive_float(item.strip()))
    if len(set(rates)) != len(rates):
        raise argparse.ArgumentTypeError("--sweep names a learning rate twice: %s" % text)
    return rates


def run(args) -> int:
    from tfevents.core.demo import DemoConfig, run_demo, run_sweep  # lazy: numpy after BLAS settings

    config = DemoConfig(logdir=args.logdir, model=args.model, epochs=args.epochs, optimizer=args.optimizer,
                        learning_rate=args.learning_rate, batch_size=args.batch_size, n_train=args.train_size,
                        n_test=args.test_size, clip_norm=args.clip_norm, max_norm=args.max_norm,
                        ema_decay=args.ema_decay, log_every=args.log_every, seed=args.seed)
    try:
        config.check()
        rates = None if args.sweep is None else _learning_rates(args.sweep, config)
        if args.seeds != 1 and rates is None:
            raise ValueError("--seeds goes with --sweep")
    except (ValueError, argparse.ArgumentTypeError) as e:
        print("tfevents demo: %s" % e, file=sys.stderr)
        return 2
    if os.path.exists(config.logdir) and not os.path.isdir(config.logdir):
        print("tfevents demo: --logdir %s exists and is not a directory" % config.logdir, file=sys.stderr)
        return 2
    network = "CNN" if config.model == "cnn" else "MLP 784-300-100-10"
    print("training %s with %s for %d epochs; logging to %s%s"
          % (network, config.optimizer, config.epochs, config.logdir,
             "" if rates is None else " (learning rates %s)" % ", ".join("%g" % r for r in rates)),
          file=sys.stderr, flush=True)
    progress = None if args.quiet else sys.stderr
    results = [run_demo(config, progress)] if rates is None else run_sweep(config, rates, progress, seeds=args.seeds)
    for result in results:
        trial = "" if rates is None else "learning rate %g%s: " % (
            result.config.initial_learning_rate(), "" if args.seeds == 1 else " seed %d" % result.config.seed)
        print("%stest accuracy %.4f (moving-average weights %.4f) after %d steps in %.1f s; checkpoint %s"
              % (trial,
                 result.metrics["hparam/test_accuracy"], result.metrics["hparam/test_accuracy_ema"], result.steps,
                 result.seconds, result.checkpoint_path))
    logdir = os.path.abspath(config.logdir)
    if not args.no_report:
        from ..reports.interactive.page import write_interactive_report  # lazy: numpy after BLAS settings
        seeds = {} if args.seeds == 1 else {"aggregate": SEED_RUNS}   # each rate's seeds as bands
        report = write_interactive_report(logdir, os.path.join(logdir, "report.html"),
                                          title="tfevents demo: %s" % config.logdir, **seeds)
        print("report: %s" % report)
    print("graph dumps: %s" % ", ".join(f for r in results for f in r.graph_files))
    print("to look at the runs live, in tfevents' dashboard (http://localhost:6007) and TensorBoard's UI "
          "(http://localhost:6006):\n    %s serve %s\n"
          "or in TensorBoard alone (http://localhost:6006):\n    %s --logdir %s"
          % (_console_command("tfevents", "tfevents.viewer.cli"), config.logdir,
             _console_command("tensorboard", "tensorboard.main"), config.logdir))
    return 0
