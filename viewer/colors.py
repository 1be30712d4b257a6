"""A stable colour per run: the same run gets the same colour in every chart of a logdir."""
from __future__ import annotations

import colorsys
from typing import Iterable

# matplotlib's tab10 (distinct, colour-blind friendlier than the old default cycle)
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")


def run_colors(runs: Iterable[str]) -> dict[str, str]:
    """``{run: '#rrggbb'}`` by the run's position in the sorted run list.

    The first ten runs take the tab10 palette; further runs get hues spaced by the golden angle, so
    colours stay distinct and a run keeps its colour in every figure drawn from the same run list.
    """
    out = {}
    for i, run in enumerate(sorted(set(runs))):
        out[run] = PALETTE[i] if i < len(PALETTE) else _golden_hue(i - len(PALETTE))
    return out


def _golden_hue(k: int) -> str:
    h = (0.13 + k * 0.618033988749895) % 1.0
    s, v = (0.75, 0.80) if k % 2 == 0 else (0.55, 0.60)
    r, g, b = colorsys.hsv_to_rgb(h, s, v)
    return "#%02x%02x%02x" % (round(r * 255), round(g * 255), round(b * 255))
