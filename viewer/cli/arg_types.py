"""argparse ``type=`` checkers the subcommands share: a clear message for a bad number, never a traceback."""
from __future__ import annotations

import argparse


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
