"""The checks of a builder's arguments that need no encoding: ranks, shapes, layouts, dtypes and options.

``SummaryWriter`` encodes images, audio, video, histograms, meshes, PR curves and embeddings on its thread; it runs
these first, in the call, so that an argument error is raised where the call is (inside the ``try`` a framework
put around it), not by a later call. Each takes the builder's arguments (the writer's host copies) and looks at
shapes, dtypes and options only, never at every element: NaN pixels and predictions outside [0, 1] are still found
while encoding. The builders make the same checks again (they are public and run alone too). A layout that does not
match the array's rank and a non-square sprite raise ``common.ShapeError``, a ValueError that is also the
AssertionError tensorboardX and torch raise there.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .boxes import check_boxes
from .common import as_array, check_int
from .media import _MAX_AUDIO_CHANNELS, _PNG_MODE, _check_dataformats
from .plugins import _check_num_thresholds
from .projector import check_sprite_shape
from .videos import _check_fps, _check_video_format

__all__ = ["image", "images", "image_with_boxes", "video", "audio", "histogram", "pr_curve", "mesh", "embedding"]

_IMAGE_LAYOUTS = ("HW", "CHW", "NHW", "NCHW")


def _check_pixels(array: np.ndarray, fmt: str, dataformats: str, name: str) -> None:
    """Channels, emptiness and dtype of an image or video laid out as ``fmt``, in the builders' order."""
    channels = array.shape[fmt.index("C")] if "C" in fmt else 1
    if channels not in _PNG_MODE:
        raise ValueError("%s must have 1, 3 or 4 channels (gray, RGB, RGBA), got %d (shape %s, dataformats %r)"
                         % (name, channels, array.shape, dataformats))
    if array.size == 0:
        raise ValueError("%s is empty (shape %s, dataformats %r)" % (name, array.shape, dataformats))
    if array.dtype != np.uint8 and array.dtype.kind != "f":
        raise TypeError("%s must be uint8 (0..255) or float (0..1), got dtype %s" % (name, array.dtype))


def image(tensor: Any, dataformats: str = "CHW", **_: Any) -> None:
    array = as_array(tensor, "tensor")
    fmt = _check_dataformats(dataformats, array.ndim, _IMAGE_LAYOUTS)
    _check_pixels(array, fmt, dataformats, "image tensor")


def images(tensor: Any, dataformats: str = "NCHW") -> None:
    if isinstance(dataformats, str) and "N" not in dataformats.upper():
        raise ValueError("images() needs a batch layout with an N axis (NCHW, NHWC, NHW), got %r" % dataformats)
    image(tensor, dataformats)


def image_with_boxes(img_tensor: Any, box_tensor: Any, dataformats: str = "CHW", **_: Any) -> None:
    image(img_tensor, dataformats)
    check_boxes(box_tensor)


def video(vid_tensor: Any, fps: Any = 4, dataformats: str = "NTCHW") -> None:
    _check_fps(fps)
    array = as_array(vid_tensor, "vid_tensor")
    _check_pixels(array, _check_video_format(dataformats, array.ndim), dataformats, "video tensor")


def audio(samples: Any, sample_rate: Any = 44100) -> None:
    array = as_array(samples, "samples")
    if array.dtype.kind != "f":
        raise TypeError("audio samples must be floats in [-1, 1], got dtype %s" % array.dtype)
    if array.ndim not in (1, 2) or array.size == 0:
        raise ValueError("audio samples must be a non-empty [frames] or [frames, channels] array, got shape %s"
                         % (array.shape,))
    if array.ndim == 2 and min(array.shape) > _MAX_AUDIO_CHANNELS:
        raise ValueError("audio samples have %d channels (shape %s); expected [frames, channels] with at most %d "
                         "channels -- pass samples.T for a [channels, frames] array"
                         % (array.shape[1], array.shape, _MAX_AUDIO_CHANNELS))
    if isinstance(sample_rate, (bool, np.bool_)) or not isinstance(sample_rate, (int, float, np.integer, np.floating)):
        raise TypeError("sample_rate must be a number, got %s" % type(sample_rate).__name__)
    if not (sample_rate > 0 and float(sample_rate).is_integer()):
        raise ValueError("sample_rate must be a positive whole number of Hz, got %r" % (sample_rate,))


def histogram(values: Any, bins: Any = "tensorflow", max_bins: Optional[int] = None) -> None:
    array = as_array(values, "values")
    if array.dtype.kind not in "biuf":
        raise TypeError("values must hold real numbers, got dtype %s" % array.dtype)
    if array.size == 0:
        raise ValueError("histogram values is empty (shape %s)" % (array.shape,))
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_)):
        check_int(bins, "bins", minimum=1)
    elif not isinstance(bins, str):
        edges = as_array(bins, "bins")
        if edges.dtype.kind not in "biuf" or edges.ndim != 1 or edges.size < 2:
            raise ValueError("bins must be 'tensorflow', an int or a 1-D sequence of at least 2 edges, got %r"
                             % (bins,))
    if max_bins is not None:
        check_int(max_bins, "max_bins", minimum=1)


def pr_curve(labels: Any, predictions: Any, num_thresholds: int = 127, weights: Any = None) -> None:
    _check_num_thresholds(num_thresholds)
    labels_array, predictions_array = as_array(labels, "labels"), as_array(predictions, "predictions")
    for name, array in (("labels", labels_array), ("predictions", predictions_array)):
        if array.dtype.kind not in "biuf":
            raise TypeError("%s must hold real numbers, got dtype %s" % (name, array.dtype))
    if labels_array.shape != predictions_array.shape:
        raise ValueError("labels and predictions must have the same shape, got %s and %s"
                         % (labels_array.shape, predictions_array.shape))
    if predictions_array.size == 0:
        raise ValueError("labels and predictions are empty")


def mesh(vertices: Any, colors: Any = None, faces: Any = None, config_dict: Any = None) -> None:
    vertex_array = as_array(vertices, "vertices")
    for name, value in (("vertices", vertex_array), ("colors", colors), ("faces", faces)):
        if value is None:
            continue
        shape = as_array(value, name).shape
        if len(shape) != 3 or shape[2] != 3:
            raise ValueError("%s must have shape [batch, count, 3], got %s" % (name, shape))
    if colors is not None and as_array(colors, "colors").shape != vertex_array.shape:
        raise ValueError("colors must give one RGB triple per vertex: shape %s, expected %s like vertices"
                         % (as_array(colors, "colors").shape, vertex_array.shape))


def embedding(mat: Any, metadata: Any = None, label_img: Any = None, metadata_header: Optional[Sequence[Any]] = None
              ) -> None:
    array = as_array(mat, "mat")
    if array.ndim != 2:
        raise ValueError("mat must be 2-D [points, dimensions], got shape %s" % (array.shape,))
    if metadata is not None and hasattr(metadata, "__len__") and len(metadata) != array.shape[0]:
        raise ValueError("metadata has %d rows but mat has %d points (one label or row per point)"
                         % (len(metadata), array.shape[0]))
    if metadata is None and metadata_header is not None:
        raise ValueError("metadata_header is given without metadata")
    if label_img is not None:
        check_sprite_shape(as_array(label_img, "label_img").shape, array.shape[0])
