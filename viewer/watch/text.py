"""The dashboard's short texts: numbers in a few characters, problems in one line, words fitted to a width
without cutting one."""
from __future__ import annotations

import math
from typing import Sequence

from tfevents.summaries.reader.decode import Problem

from ..plain_text import printable

__all__ = ["number", "fit_words", "problem_text"]


def number(value: float) -> str:
    """``value`` in at most 9 characters (4 significant digits; ``nan``, ``inf`` as such)."""
    if value != value:
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return "%.4g" % value


def fit_words(words: Sequence[str], width: int, sep: str = "  ") -> str:
    """The longest prefix of ``words`` joined by ``sep`` that fits in ``width`` columns, ending in ``…`` when words
    were left out: a word is shown whole or not at all."""
    out = ""
    for i, word in enumerate(words):
        candidate = word if not out else out + sep + word
        more = i + 1 < len(words)
        if len(candidate) + (2 if more else 0) > width:
            return (out + " …") if out else "…"
        out = candidate
    return out


def problem_text(problem: Problem, logdir: str) -> str:
    """One line for a problem, the most telling words first: its kind, the run (the file's directory relative to
    the logdir), the offset, then the file's name, so a narrow status line drops the name first. Names from the
    logdir have their control characters escaped (``printable``)."""
    return printable(_problem_words(problem, logdir))


def _problem_words(problem: Problem, logdir: str) -> str:
    where = problem.path
    root = logdir.rstrip("/") + "/"
    if where.startswith(root):
        where = where[len(root):]
    if problem.kind == "restart":      # path is the run
        return "restart in %s: %s" % (where, problem.detail)
    run, _, name = where.rpartition("/")
    text = "%s record in %s" % (problem.kind, run or ".") if problem.offset is not None else \
        "%s: %s" % (problem.kind, run or ".")
    if problem.offset is not None:
        text += " at offset %d" % problem.offset
    return text + " (%s)" % name
