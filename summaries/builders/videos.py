"""Video summaries: a batch of clips tiled into one animated GIF in ``Summary.Image``
(tensorboardX/torch ``add_video``; TensorBoard's Images dashboard plays it).

The frames are laid out as tensorboardX's ``_prepare_video`` does, and the GIF is written with
Pillow exactly as tensorboardX's moviepy path ends up writing it (moviepy -> imageio -> Pillow),
without needing moviepy. Pillow is imported only when a GIF is encoded.
"""
from __future__ import annotations

import io
import math
from typing import Any, Union

import numpy as np

from tfevents.proto import summary_pb2

from .common import ShapeError, as_array, clean_tag, require_finite, single_value
from .media import _PNG_MODE, _to_uint8, make_grid

__all__ = ["video", "video_frames", "video_grid_shape", "encode_gif"]


def video_grid_shape(batch: int) -> tuple:
    """``(rows, cols)`` of the grid a batch of ``batch`` clips is tiled into (tensorboardX/torch
    ``_prepare_video``): the batch is padded with black clips up to the next power of two P,
    ``rows = 2 ** ((batch.bit_length() - 1) // 2)`` and ``cols = P // rows``
    (1 -> 1x1, 2 -> 1x2, 3 -> 1x4, 4 -> 2x2, 5..8 -> 2x4, 16 -> 4x4)."""
    padded = batch if batch & (batch - 1) == 0 else 2 ** batch.bit_length()
    rows = 2 ** ((batch.bit_length() - 1) // 2)
    return rows, padded // rows


def _check_video_format(dataformats: Any, ndim: int) -> str:
    if not isinstance(dataformats, str):
        raise TypeError("dataformats must be a str such as 'NTCHW', got %s" % type(dataformats).__name__)
    fmt = dataformats.upper()
    if sorted(fmt) != sorted("NTCHW"):
        raise ValueError("dataformats %r is not a layout of NTCHW (each of N, T, C, H, W once)" % (dataformats,))
    if ndim != 5:
        raise ShapeError("video tensor must have 5 dimensions (%s), got %d" % (dataformats, ndim))
    return fmt


def video_frames(vid_tensor: Any, dataformats: str = "NTCHW") -> np.ndarray:
    """The GIF's frames, uint8 ``[T, rows*H, cols*W, C]``: clip n of the batch sits in grid cell
    ``(n // cols, n % cols)`` of every frame (:func:`video_grid_shape`), padding cells black.

    ``vid_tensor``: uint8 in 0..255 (kept) or float in [0, 1] (``uint8(clip(255 x, 0, 255))``, as
    torch; tensorboardX does not clip), laid out as ``dataformats``, any order of NTCHW.
    C is 1 (gray), 3 (RGB) or 4 (RGBA).
    """
    array = as_array(vid_tensor, "vid_tensor")
    fmt = _check_video_format(dataformats, array.ndim)
    nthwc = array.transpose([fmt.index(axis) for axis in "NTHWC"])
    n, t, h, w, c = nthwc.shape
    if c not in _PNG_MODE:
        raise ValueError("video tensor must have 1, 3 or 4 channels (gray, RGB, RGBA), got %d (shape %s, "
                         "dataformats %r)" % (c, array.shape, dataformats))
    if 0 in nthwc.shape:
        raise ValueError("video tensor is empty (shape %s, dataformats %r)" % (array.shape, dataformats))
    if nthwc.dtype != np.uint8 and nthwc.dtype.kind != "f":
        raise TypeError("video tensor must be uint8 (0..255) or float (0..1), got dtype %s" % nthwc.dtype)
    require_finite(nthwc, "video tensor")
    pixels = _to_uint8(nthwc)
    rows, cols = video_grid_shape(n)
    if rows * cols > n:
        pixels = np.concatenate([pixels, np.zeros((rows * cols - n, t, h, w, c), np.uint8)])
    # Tile all T frames at once: time and channel ride along as one channel axis of make_grid.
    stacked = pixels.transpose(0, 2, 3, 1, 4).reshape(rows * cols, h, w, t * c)
    grid = make_grid(stacked, ncols=cols)
    return np.ascontiguousarray(grid.reshape(rows * h, cols * w, t, c).transpose(2, 0, 1, 3))


def encode_gif(frames: np.ndarray, fps: Union[int, float]) -> bytes:
    """Animated GIF bytes of uint8 ``[T, H, W, C]`` frames (C = 1, 3 or 4), looping forever, each
    frame shown ``1000 / fps`` ms (GIF stores whole centiseconds: ``int(100 / fps)``).

    Written as imageio's Pillow plugin writes moviepy's ``write_gif``: ``Image.fromarray`` per frame,
    saved with ``save_all``; Pillow quantizes each RGB frame to an adaptive 256-colour palette (gray
    is written as a gray GIF, exact) and merges consecutive identical frames into one with their
    summed duration. Alpha is dropped, as moviepy drops it: GIF has only on/off transparency.
    """
    from PIL import Image

    if frames.shape[3] == 1:
        frames = frames[:, :, :, 0]
    elif frames.shape[3] == 4:
        frames = frames[:, :, :, :3]
    images = [Image.fromarray(np.ascontiguousarray(f)) for f in frames]
    out = io.BytesIO()
    images[0].save(out, format="GIF", save_all=len(images) > 1, append_images=images[1:],
                   duration=1000 / fps, loop=0)
    return out.getvalue()


def _check_fps(fps: Any) -> float:
    if isinstance(fps, (bool, np.bool_)) or not isinstance(fps, (int, float, np.integer, np.floating)):
        raise TypeError("fps must be a number, got %s" % type(fps).__name__)
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError("fps must be a positive finite number of frames per second, got %r" % (fps,))
    return float(fps)


def video(tag: str, vid_tensor: Any, fps: Union[int, float] = 4,
          dataformats: str = "NTCHW") -> summary_pb2.Summary:
    """Summary with a batch of video clips as one animated GIF (tensorboardX/torch ``add_video``).

    ``vid_tensor``: ``[N, T, C, H, W]`` (or another order named by ``dataformats``), uint8 in
    0..255 or float in [0, 1]; every frame tiles the N clips into a grid (:func:`video_frames`).
    ``fps``: frames per second, a positive number (GIF timing has 10 ms steps; above 100 fps the
    delay rounds to 0, which browsers play at their default speed, as with tensorboardX).
    The ``Summary.Image`` holds the grid's height and width, ``colorspace`` = C (as tensorboardX
    writes it, though an RGBA video is played without its alpha, see :func:`encode_gif`) and the GIF.
    Errors: TypeError for other dtypes or a non-number fps, ValueError for a rank other than 5, a
    bad ``dataformats``, a channel count other than 1, 3, 4, an empty tensor, NaN/Inf or fps <= 0.
    """
    tag = clean_tag(tag)
    rate = _check_fps(fps)
    frames = video_frames(vid_tensor, dataformats)
    _, height, width, channels = frames.shape
    img = summary_pb2.Summary.Image(height=height, width=width, colorspace=channels,
                                    encoded_image_string=encode_gif(frames, rate))
    return single_value(tag, image=img)
