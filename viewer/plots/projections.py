"""Embeddings as a 2-D PCA scatter and meshes as a rendered 3-D view, as matplotlib Figures (the report's
Embeddings and Meshes sections; usable on their own in a notebook).

``plot_embedding`` projects the points on their first two principal components (numpy SVD of the
centred matrix, as the Projector's PCA) and colours them by the first metadata column: a colour bar
when the column is numeric, a legend when it has at most 20 distinct labels, one colour otherwise.
``plot_mesh`` draws one sample of a MeshRecord with mplot3d: triangles (a ``Poly3DCollection``, each
face the mean of its vertex colours, shaded by its angle to a light) when the mesh has faces, else its
points.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import matplotlib_figures
from .matplotlib_figures import literal

MAX_POINTS = 20000  # points drawn (and projected) at most; a random but fixed subset beyond
MAX_CATEGORIES = 20
_DEFAULT_COLOR = "#1f77b4"
_DEFAULT_MESH_COLOR = (0.62, 0.70, 0.84)


def pca_2d(matrix: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``(coords [N, 2], explained variance ratio [2])`` of ``matrix`` [N, D] on its first two principal
    components (a second coordinate of zeros when D or the rank is 1)."""
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError("an embedding matrix must be [points, dimensions] and not empty, got shape %s"
                         % (x.shape,))
    x = x - x.mean(axis=0)
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    k = min(2, vt.shape[0])
    coords = np.zeros((x.shape[0], 2))
    coords[:, :k] = x @ vt[:k].T
    var = s ** 2
    ratio = np.zeros(2)
    if var.sum() > 0:
        ratio[:k] = var[:k] / var.sum()
    return coords, ratio


def _numbers(values) -> Optional[np.ndarray]:
    try:
        out = np.array([float(v) for v in values])
    except (TypeError, ValueError):
        return None
    return out if np.isfinite(out).all() else None


def plot_embedding(record: Any, title: Optional[str] = None, seed: int = 0):
    """A Figure: the PCA scatter of an EmbeddingRecord (or any object with ``matrix()`` and ``metadata()``),
    coloured by its first metadata column."""
    matrix = np.asarray(record.matrix(), dtype=np.float64)
    note = ""
    try:
        header, rows = record.metadata() if hasattr(record, "metadata") else ([], [])
    except (OSError, ValueError) as err:  # drawn uncoloured, saying why
        header, rows, note = [], [], " · metadata not read: %s" % err
    labels = [r[0] if r else "" for r in rows] if len(rows) == len(matrix) else None
    index = np.arange(len(matrix))
    if len(matrix) > MAX_POINTS:
        index = np.sort(np.random.default_rng(seed).choice(len(matrix), MAX_POINTS, replace=False))
    coords, ratio = pca_2d(matrix[index])
    fig = matplotlib_figures.new_figure(6.4, 5.0)
    ax = fig.add_subplot()
    if labels is not None:
        chosen = [labels[i] for i in index]
        numeric = _numbers(chosen)
        distinct = sorted(set(chosen))
        if numeric is not None:
            distinct.sort(key=float)
        if numeric is not None and len(distinct) > MAX_CATEGORIES:
            points = ax.scatter(coords[:, 0], coords[:, 1], c=numeric, cmap="viridis", s=12)
            fig.colorbar(points, ax=ax, label=literal(header[0]) if header else "")
        elif len(distinct) <= MAX_CATEGORIES:
            from matplotlib import colormaps
            cmap = colormaps["tab20" if len(distinct) > 10 else "tab10"]
            for i, label in enumerate(distinct):
                mask = np.array([c == label for c in chosen])
                ax.scatter(coords[mask, 0], coords[mask, 1], s=12, color=cmap(i % cmap.N),
                           label=literal(label) if label else "(empty)")
            ax.legend(title=literal(header[0]) if header else None, fontsize=7, title_fontsize=8, loc="best",
                      markerscale=1.5, ncol=2 if len(distinct) > 10 else 1)
        else:
            ax.scatter(coords[:, 0], coords[:, 1], s=12, color=_DEFAULT_COLOR)
            note = " · %d distinct %s: not coloured" % (len(distinct), header[0] if header else "labels")
    else:
        ax.scatter(coords[:, 0], coords[:, 1], s=12, color=_DEFAULT_COLOR)
        if rows:
            note = " · metadata has %d rows for %d points: not coloured" % (len(rows), len(matrix))
    ax.set_xlabel("PC 1 (%.1f%% of variance)" % (100 * ratio[0]))
    ax.set_ylabel("PC 2 (%.1f%% of variance)" % (100 * ratio[1]))
    shown = "" if len(index) == len(matrix) else " (%d of them shown)" % len(index)
    name = title or getattr(record, "tensor_name", "embedding")
    ax.set_title(literal("%s\n%d points x %d dims%s%s" % (name, matrix.shape[0], matrix.shape[1], shown, note)),
                 fontsize=9)
    ax.grid(True, alpha=0.3)
    return fig


def plot_mesh(record: Any, title: Optional[str] = None, sample: int = 0):
    """A Figure: sample ``sample`` of a MeshRecord in 3-D (mplot3d), with its vertex colours when it has them."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    vertices = np.asarray(record.vertices, dtype=np.float64)
    if vertices.ndim != 3 or vertices.shape[2] != 3:
        raise ValueError("mesh vertices must be [batch, count, 3], got shape %s" % (vertices.shape,))
    if not 0 <= sample < vertices.shape[0]:
        raise ValueError("sample %d is out of range: the mesh has %d" % (sample, vertices.shape[0]))
    v = vertices[sample]
    colors = None if record.colors is None else np.asarray(record.colors, dtype=np.float64)[sample] / 255.0
    fig = matplotlib_figures.new_figure(5.6, 5.2)
    ax = fig.add_subplot(projection="3d")
    if record.faces is not None:
        faces = np.asarray(record.faces, dtype=np.int64)[sample]
        faces = faces[(faces >= 0).all(axis=1) & (faces < len(v)).all(axis=1)]
        face_colors = colors[faces].mean(axis=1) if colors is not None else _DEFAULT_MESH_COLOR
        from matplotlib.colors import LightSource
        ax.add_collection3d(Poly3DCollection(v[faces], facecolors=face_colors, edgecolors=(0, 0, 0, 0.25),
                                             linewidths=0.3, shade=True, lightsource=LightSource(315, 35)))
        what = "%d vertices, %d faces" % (len(v), len(faces))
    else:
        ax.scatter(v[:, 0], v[:, 1], v[:, 2], c=colors if colors is not None else _DEFAULT_COLOR, s=6,
                   depthshade=False)
        what = "%d points" % len(v)
    low, high = v.min(axis=0), v.max(axis=0)
    span = np.maximum(high - low, 1e-9)
    ax.set_xlim(low[0], low[0] + span[0])
    ax.set_ylim(low[1], low[1] + span[1])
    ax.set_zlim(low[2], low[2] + span[2])
    ax.set_box_aspect(tuple(span / span.max()))
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    batch = "" if vertices.shape[0] == 1 else " · sample %d of %d" % (sample + 1, vertices.shape[0])
    ax.set_title(literal("%s\nstep %d · %s%s" % (title or "mesh", record.step, what, batch)), fontsize=9)
    return fig
