"""The demo's data and pictures: the synthetic MNIST stand-in, the confusion matrix, the filter grid, the
configuration as markdown."""
from __future__ import annotations

from dataclasses import asdict
from typing import Tuple

import numpy as np

from .config import CNN_DENSE, CNN_FILTERS, IMAGE_SIDE, LAYERS, N_CLASSES, DemoConfig

def synthetic_mnist(n: int, seed: int, noise: float = 0.7, max_shift: int = 3) -> Tuple[np.ndarray, np.ndarray]:
    """``n`` flattened 28x28 float32 images in [0, 1] and their int32 labels, a seeded stand-in for MNIST.

    Each class has a fixed prototype of blobby strokes (random pixels, 3x3 box-filtered, thresholded); an
    example is its class prototype shifted by up to ``max_shift`` pixels each way, times a random contrast in
    [0.6, 1], plus Gaussian noise of deviation ``noise``, clipped to [0, 1]. The shifts keep the classes from
    being linearly separable, so accuracy climbs over several epochs, as on MNIST.
    """
    side = IMAGE_SIDE
    proto_rng = np.random.default_rng(1234)             # the same prototypes for every data set
    dots = (proto_rng.random((N_CLASSES, side + 2, side + 2)) < 0.12).astype(np.float32)
    blurred = sum(dots[:, i:i + side, j:j + side] for i in range(3) for j in range(3)) / 9.0
    prototypes = (blurred > 0.2).astype(np.float32)
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, N_CLASSES, size=n).astype(np.int32)
    shifts = rng.integers(-max_shift, max_shift + 1, size=(n, 2))
    images = np.empty((n, side, side), np.float32)
    for i in range(n):
        images[i] = np.roll(prototypes[labels[i]], tuple(shifts[i]), axis=(0, 1))
    images *= rng.uniform(0.6, 1.0, size=(n, 1, 1)).astype(np.float32)
    images += rng.standard_normal((n, side, side), dtype=np.float32) * np.float32(noise)
    return np.clip(images, 0.0, 1.0).reshape(n, side * side), labels


def filter_grid(kernel: np.ndarray, cell: int = 4) -> np.ndarray:
    """A conv kernel [h, w, 1, n] as one HWC uint8 image: the n filters in a near-square grid, each scaled to
    [0, 255] on its own and enlarged ``cell`` times, with a 1-pixel gap."""
    h, w, _, n = kernel.shape
    filters = np.moveaxis(kernel[:, :, 0, :], -1, 0)                         # [n, h, w]
    lo = filters.min(axis=(1, 2), keepdims=True)
    span = filters.max(axis=(1, 2), keepdims=True) - lo
    filters = (filters - lo) / np.where(span > 0, span, 1)
    filters = filters.repeat(cell, axis=1).repeat(cell, axis=2)
    cols = int(np.ceil(np.sqrt(n)))
    rows = -(-n // cols)
    fh, fw = h * cell + 1, w * cell + 1
    grid = np.ones((rows * fh + 1, cols * fw + 1), np.float32) * 0.5
    for i in range(n):
        r, c = divmod(i, cols)
        grid[1 + r * fh:1 + r * fh + h * cell, 1 + c * fw:1 + c * fw + w * cell] = filters[i]
    return (grid[:, :, None] * 255).round().astype(np.uint8)


def confusion_matrix(labels: np.ndarray, predictions: np.ndarray, n: int = N_CLASSES) -> np.ndarray:
    """``m[i, j]``: how many examples of class i were predicted as j."""
    m = np.zeros((n, n), np.int64)
    np.add.at(m, (labels, predictions), 1)
    return m


def confusion_figure(matrix: np.ndarray, title: str):
    """A matplotlib Figure of ``matrix`` with counts in the cells (Agg canvas, no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.2, 4.0), dpi=80)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.imshow(matrix, cmap="Blues")
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title(title, fontsize=10)
    ax.set_xticks(range(len(matrix)))
    ax.set_yticks(range(len(matrix)))
    threshold = matrix.max() / 2.0 if matrix.size else 0
    for (i, j), count in np.ndenumerate(matrix):
        if count:
            ax.text(j, i, str(count), ha="center", va="center", fontsize=7,
                    color="white" if count > threshold else "black")
    fig.tight_layout()
    return fig


def config_markdown(config: DemoConfig, total_steps: int) -> str:
    rows = ["| option | value |", "|---|---|"]
    for name, value in asdict(config).items():
        rows.append("| %s | %s |" % (name, value))
    rows.append("| initial learning rate | %g |" % config.initial_learning_rate())
    rows.append("| total steps | %d |" % total_steps)
    if config.model == "cnn":
        network = "CNN conv 5x5x%d, max pool, conv 5x5x%d, max pool, dense %d, dense 10 (He init, relu)" % (
            CNN_FILTERS + (CNN_DENSE,))
    else:
        network = "MLP 784-%s-10 (He init, relu)" % "-".join(map(str, LAYERS))
    return network + " on a synthetic MNIST stand-in, trained with tfevents.core.\n\n" + "\n".join(rows)
