"""Images (a grid per tag at chosen steps) and precision–recall curves as matplotlib Figures, plus the
small helpers the HTML report uses to inline images and audio as data URIs."""
from __future__ import annotations

import base64
import io
import os
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .. import logdir_data
from ..colors import run_colors
from . import matplotlib_figures
from .matplotlib_figures import literal

_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"),
          (b"RIFF", "image/webp"), (b"BM", "image/bmp"))


def image_mime(data: bytes) -> str:
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    return "application/octet-stream"


def data_uri(data: bytes, mime: str) -> str:
    return "data:%s;base64,%s" % (mime, base64.b64encode(data).decode("ascii"))


def decode_image(record) -> np.ndarray:
    """uint8 HxWxC pixels of an ImageRecord (its own ``decode()`` when it has one, else Pillow)."""
    dec = getattr(record, "decode", None)
    if callable(dec):
        return np.asarray(dec())
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(record.data)))


def pick_steps(records: Sequence, steps: Optional[Sequence[int]] = None, max_count: int = 6) -> list:
    """Records at the requested steps (the nearest record for each), else up to ``max_count`` spread
    evenly over the run, always including the last one."""
    if not records:
        return []
    if steps:
        have = np.array([r.step for r in records])
        chosen = sorted({int(np.abs(have - s).argmin()) for s in steps})
        return [records[i] for i in chosen]
    n = len(records)
    idx = np.unique(np.linspace(0, n - 1, min(n, max_count)).round().astype(int))
    return [records[i] for i in idx]


def plot_images(source: Any, tags: Optional[str] = None, runs: Optional[str] = None, *,
                steps: Optional[Sequence[int]] = None, max_per_tag: int = 6):
    """A Figure with one row per (run, tag): its images at ``steps`` (nearest recorded step), or up to
    ``max_per_tag`` spread over the run."""
    if isinstance(source, (str, os.PathLike)):
        source = logdir_data.load(source, tags=tags, runs=runs, kinds=["images"])
    chosen = logdir_data.select(logdir_data.kind(source, "images"), tags, runs)
    rows = [(key, pick_steps(list(recs), steps, max_per_tag)) for key, recs in chosen.items()]
    rows = [(k, r) for k, r in rows if r]
    ncols = max((len(r) for _, r in rows), default=1)
    fig = matplotlib_figures.new_figure(2.2 * ncols + 0.6, 2.4 * max(len(rows), 1))
    if not rows:
        matplotlib_figures.empty(fig.add_subplot(), "no images match")
        return fig
    axes = fig.subplots(len(rows), ncols, squeeze=False)
    for r, ((run, tag), recs) in enumerate(rows):
        for c in range(ncols):
            ax = axes[r][c]
            ax.set_xticks([])
            ax.set_yticks([])
            if c >= len(recs):
                ax.set_axis_off()
                continue
            pixels = decode_image(recs[c])
            if pixels.ndim == 3 and pixels.shape[2] == 1:
                pixels = pixels[:, :, 0]
            ax.imshow(pixels, cmap="gray" if pixels.ndim == 2 else None, vmin=0, vmax=255,
                      interpolation="nearest")
            ax.set_title("step %d" % recs[c].step, fontsize=8)
            if c == 0:
                ax.set_ylabel(literal("%s\n(%s)" % (tag, run)), fontsize=8)
    return fig


def plot_pr_curves(source: Any, tags: Optional[str] = None, runs: Optional[str] = None, *,
                   step: Optional[int] = None, ncols: Optional[int] = None):
    """A Figure with a precision–recall chart per tag, one curve per run, at ``step`` (nearest; default the
    latest step), as TensorBoard's PR-curves dashboard shows them."""
    if not isinstance(source, Mapping):
        source = logdir_data.load(source, tags=tags, runs=runs, kinds=["pr_curves"])
    mapping = logdir_data.kind(source, "pr_curves")
    colors = run_colors(logdir_data.all_runs(source, mapping))
    chosen = logdir_data.select(mapping, tags, runs)
    by_tag: dict[str, list] = {}
    for (run, tag), recs in chosen.items():
        if recs:
            rec = pick_steps(list(recs), [step])[0] if step is not None else recs[-1]
            by_tag.setdefault(tag, []).append((run, rec))
    fig, axes = matplotlib_figures.grid(len(by_tag), ncols, cell=(4.6, 4.2))
    if not by_tag:
        matplotlib_figures.empty(axes[0], "no pr curves match")
    for ax, (tag, curves) in zip(axes, sorted(by_tag.items())):
        for run, rec in curves:
            data = np.asarray(rec.data, dtype=np.float64)
            precision, recall = data[4], data[5]
            ax.plot(recall, precision, color=colors[run], lw=1.6, marker=".", ms=3,
                    label=literal("%s (step %d)" % (run, rec.step)))
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("recall")
        ax.set_ylabel("precision")
        ax.set_title(literal(tag), fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower left")
    return fig
