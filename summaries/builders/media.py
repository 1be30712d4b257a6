"""Image, image-grid, matplotlib-figure and audio summaries (``Summary.Image`` / ``Summary.Audio``).

Pillow encodes the PNGs and matplotlib renders figures; both are imported only when used.
WAV files are written with the standard library's ``wave`` module.
"""
from __future__ import annotations

import io
import sys
import wave
from typing import Any, Sequence, Union

import numpy as np

from tfevents.proto import summary_pb2

from .common import ShapeError, as_array, clean_tag, require_finite, single_value

__all__ = ["image", "images", "figure", "audio", "to_hwc", "make_grid", "encode_png", "encode_wav"]

# PNG mode and Summary.Image.colorspace for 1, 3 and 4 channels.
_PNG_MODE = {1: "L", 3: "RGB", 4: "RGBA"}
_MAX_AUDIO_CHANNELS = 8  # 7.1 surround; more usually means a transposed [channels, frames] array


def _check_dataformats(dataformats: Any, ndim: int, allowed: Sequence[str]) -> str:
    if not isinstance(dataformats, str):
        raise TypeError("dataformats must be a str such as 'CHW', got %s" % type(dataformats).__name__)
    fmt = dataformats.upper()
    if sorted(fmt) not in [sorted(a) for a in allowed]:
        raise ValueError("dataformats %r is not a layout of one of %s" % (dataformats, ", ".join(allowed)))
    if ndim != len(fmt):
        raise ShapeError("image tensor has %d dimensions but dataformats %r has %d" % (ndim, dataformats, len(fmt)))
    return fmt


def make_grid(nhwc: np.ndarray, ncols: int = 8) -> np.ndarray:
    """Tile ``[N, H, W, C]`` images row by row into one ``[rows*H, cols*W, C]`` image,
    ``cols = min(N, ncols)``, empty cells zero (torchvision/tensorboardX ``make_grid`` without padding)."""
    n, h, w, c = nhwc.shape
    cols = min(n, ncols)
    rows = -(-n // cols)
    grid = np.zeros((rows, cols, h, w, c), dtype=nhwc.dtype)
    grid.reshape(rows * cols, h, w, c)[:n] = nhwc
    return grid.transpose(0, 2, 1, 3, 4).reshape(rows * h, cols * w, c)


def to_hwc(tensor: Any, dataformats: str) -> np.ndarray:
    """An ``[H, W, C]`` array (C in 1, 3, 4) from an image tensor laid out as ``dataformats``:
    a layout of HW, CHW or NCHW (a batch is tiled into a grid, 8 images per row), or NHW."""
    array = as_array(tensor, "tensor")
    fmt = _check_dataformats(dataformats, array.ndim, ("HW", "CHW", "NHW", "NCHW"))
    if "C" not in fmt:
        array, fmt = array[..., None], fmt + "C"
    if "N" not in fmt:
        array, fmt = array[None], "N" + fmt
    nhwc = array.transpose([fmt.index(axis) for axis in "NHWC"])
    n, h, w, c = nhwc.shape
    if c not in _PNG_MODE:
        raise ValueError("image tensor must have 1, 3 or 4 channels (gray, RGB, RGBA), got %d (shape %s, "
                         "dataformats %r)" % (c, array.shape, dataformats))
    if n == 0 or h == 0 or w == 0:
        raise ValueError("image tensor is empty (shape %s, dataformats %r)" % (array.shape, dataformats))
    return nhwc[0] if n == 1 else make_grid(nhwc)


def _to_uint8(hwc: np.ndarray) -> np.ndarray:
    """uint8 kept; floats read as [0, 1]: ``uint8(clip(x * 255, 0, 255))`` (truncating, as
    tensorboardX/torch; values outside [0, 1] saturate)."""
    if hwc.dtype == np.uint8:
        return hwc
    if hwc.dtype.kind != "f":
        raise TypeError("image tensor must be uint8 (0..255) or float (0..1), got dtype %s" % hwc.dtype)
    require_finite(hwc, "image tensor")
    return (hwc.astype(np.float32) * 255.0).clip(0, 255).astype(np.uint8)


def encode_png(hwc: np.ndarray) -> bytes:
    """PNG bytes of a uint8 ``[H, W, C]`` image (C = 1, 3 or 4)."""
    from PIL import Image

    channels = hwc.shape[2]
    pixels = hwc[:, :, 0] if channels == 1 else hwc
    out = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels)).save(out, format="PNG")
    return out.getvalue()


def _image_summary(tag: str, hwc: np.ndarray) -> summary_pb2.Summary:
    pixels = _to_uint8(hwc)
    height, width, channels = pixels.shape
    img = summary_pb2.Summary.Image(height=height, width=width, colorspace=channels,
                                    encoded_image_string=encode_png(pixels))
    return single_value(tag, image=img)


def image(tag: str, tensor: Any, dataformats: str = "CHW") -> summary_pb2.Summary:
    """Summary with one PNG image (tensorboardX/torch ``add_image``).

    ``tensor``: uint8 in 0..255 (kept) or float in [0, 1] (``uint8(clip(255 x, 0, 255))``), laid out as
    ``dataformats``: any order of CHW, HWC or HW; with an N axis (NCHW, NHWC, NHW) the batch is
    tiled into one grid image. 1 channel is written as a grayscale PNG, 3 as RGB, 4 as RGBA.
    Errors: TypeError for other dtypes, ValueError for a rank that does not match
    ``dataformats``, another channel count, an empty image or NaN/Inf pixels.
    """
    tag = clean_tag(tag)
    return _image_summary(tag, to_hwc(tensor, dataformats))


def images(tag: str, tensor: Any, dataformats: str = "NCHW") -> summary_pb2.Summary:
    """Summary with a batch of images tiled into one PNG grid (tensorboardX/torch ``add_images``):
    8 images per row, row-major, the empty cells of the last row black (transparent for RGBA).
    ``dataformats`` is a layout of NCHW or NHW. Same value rules as :func:`image`."""
    tag = clean_tag(tag)
    fmt = dataformats.upper() if isinstance(dataformats, str) else dataformats
    if isinstance(fmt, str) and "N" not in fmt:
        raise ValueError("images() needs a batch layout with an N axis (NCHW, NHWC, NHW), got %r" % dataformats)
    return _image_summary(tag, to_hwc(tensor, dataformats))


def _render_figure(fig: Any, close: bool) -> np.ndarray:
    """RGB ``[H, W, 3]`` uint8 pixels of a matplotlib Figure drawn on an Agg canvas."""
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise TypeError("figure must be a matplotlib.figure.Figure or a list of them, got %s"
                        % type(fig).__name__)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    rgb = np.array(canvas.buffer_rgba())[:, :, :3]
    if close and "matplotlib.pyplot" in sys.modules:  # only pyplot keeps figures alive
        sys.modules["matplotlib.pyplot"].close(fig)
    return rgb


def figure(tag: str, figure: Any, close: bool = True) -> summary_pb2.Summary:
    """Summary with a matplotlib Figure rendered by the Agg canvas (RGB, alpha dropped, as
    tensorboardX ``add_figure``); a list of figures of equal size is tiled into a grid.
    ``close`` closes the figures in pyplot afterwards."""
    tag = clean_tag(tag)
    if isinstance(figure, (list, tuple)):
        if not figure:
            raise ValueError("figure list is empty")
        rendered = [_render_figure(f, close) for f in figure]
        if len({r.shape for r in rendered}) != 1:
            raise ValueError("figures in a list must render to the same size, got %s"
                             % sorted({r.shape[:2] for r in rendered}))
        return _image_summary(tag, make_grid(np.stack(rendered)))
    return _image_summary(tag, _render_figure(figure, close))


def encode_wav(pcm: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM WAV bytes of int16 samples ``[frames, channels]``."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(pcm.shape[1])
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(np.ascontiguousarray(pcm, dtype="<i2").tobytes())
    return out.getvalue()


def audio(tag: str, samples: Any, sample_rate: Union[int, float] = 44100) -> summary_pb2.Summary:
    """Summary with a 16-bit PCM WAV clip (``content_type='audio/wav'``).

    ``samples``: float, shape ``[frames]`` (mono) or ``[frames, channels]`` (1..8 channels); a
    ``[1, frames]`` array, torch.utils.tensorboard's documented layout, is read as mono. Values are
    in [-1, 1]; outside they are clipped. Quantized as TensorFlow's ``encode_wav``:
    ``int16(clip(round_half_away(32768 x), -32768, 32767))``. ``sample_rate`` in Hz, a positive
    integer. Errors: TypeError for non-float samples, ValueError for rank > 2, more than 8 channels,
    no frames or NaN/Inf.
    """
    tag = clean_tag(tag)
    array = as_array(samples, "samples")
    if array.dtype.kind != "f":
        raise TypeError("audio samples must be floats in [-1, 1], got dtype %s" % array.dtype)
    if array.ndim == 1:
        array = array[:, None]
    elif array.ndim == 2 and array.shape[0] == 1 and array.shape[1] > 1:
        array = array.T
    if array.ndim != 2:
        raise ValueError("audio samples must have shape [frames] or [frames, channels], got %s" % (array.shape,))
    frames, channels = array.shape
    if frames == 0 or channels == 0:
        raise ValueError("audio samples are empty (shape %s)" % (array.shape,))
    if channels > _MAX_AUDIO_CHANNELS:
        raise ValueError("audio samples have %d channels (shape %s); expected [frames, channels] with at most %d "
                         "channels -- pass samples.T for a [channels, frames] array"
                         % (channels, array.shape, _MAX_AUDIO_CHANNELS))
    require_finite(array, "audio samples")
    if isinstance(sample_rate, (bool, np.bool_)) or not isinstance(sample_rate, (int, float, np.integer, np.floating)):
        raise TypeError("sample_rate must be a number, got %s" % type(sample_rate).__name__)
    if not (sample_rate > 0 and float(sample_rate).is_integer()):
        raise ValueError("sample_rate must be a positive whole number of Hz, got %r" % (sample_rate,))
    scaled = np.clip(array.astype(np.float32), -1.0, 1.0) * np.float32(32768.0)  # exact: a power of 2
    scaled += np.copysign(np.float32(0.5), scaled)  # exact too (|scaled| <= 2**15): round half away via trunc
    pcm = np.minimum(np.trunc(scaled, out=scaled), 32767).astype(np.int16)
    clip = summary_pb2.Summary.Audio(sample_rate=float(sample_rate), num_channels=channels, length_frames=frames,
                                     encoded_audio_string=encode_wav(pcm, int(sample_rate)),
                                     content_type="audio/wav")
    return single_value(tag, audio=clip)
