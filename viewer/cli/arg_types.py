"""argparse ``type=`` checkers the subcommands share: a clear message for a bad number, never a traceback."""
from __future__ import annotations

import argparse
import re


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected an integer, got %r" % text) from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1, got %d" % value)
    return value


def positive_float(text: str) -> float:
    """A number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number, got %r" % text) from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be positive, got %r" % text)
    return value


def regex(text: str) -> str:
    """A Python regular expression (kept as its text)."""
    try:
        re.compile(text)
    except re.error as err:
        raise argparse.ArgumentTypeError("not a regular expression: %s (%r)" % (err, text)) from None
    return text


SMOOTH_HELP = ("a smoothing other than TensorBoard's EMA, KIND:PARAM: twema:W (W&B's time-weighted EMA, weight in "
               "[0, 1]), window:N or window-centred:N (running average of N points), gaussian:SIGMA (in x units), "
               "ema:W (TensorBoard's, as --smoothing W)")


def smoothing_spec(text: str):
    """``--smooth KIND:PARAM``: a checked ``tfevents.viewer.smoothing.Smoothing`` (a bad kind lists the kinds, a bad
    parameter says its range)."""
    from ..smoothing import parse_smoothing  # lazy: numpy (CLI start-up)
    try:
        return parse_smoothing(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def smoothing_weight(text: str) -> float:
    """``--smoothing W``: TensorBoard's EMA weight, a number in [0, 1]."""
    try:
        w = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number: %r" % text) from None
    if not 0.0 <= w <= 1.0:
        raise argparse.ArgumentTypeError("smoothing must be in [0, 1], got %s" % text)
    return w


def add_smoothing_options(parser: argparse.ArgumentParser, smoothing_help: str, smooth_help: str = "") -> None:
    """``--smoothing W`` (TensorBoard's EMA weight, default 0.6) or ``--smooth KIND:PARAM`` (any smoothing), not
    both; ``smooth_help`` is added to ``SMOOTH_HELP``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--smoothing", type=smoothing_weight, default=0.6, help=smoothing_help)
    group.add_argument("--smooth", metavar="KIND:PARAM", type=smoothing_spec, default=None,
                       help=SMOOTH_HELP + smooth_help)
