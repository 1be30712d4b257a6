"""The reader's result types: columnar series and per-step records (decoded on demand)."""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

import numpy as np

__all__ = ["ScalarSeries", "HistogramSeries", "ImageRecord", "AudioRecord", "TextRecord", "PrCurveRecord",
           "TensorRecord", "HParamsRecord"]


@dataclass
class ScalarSeries:
    """One (run, tag) scalar series as columns: ``step`` int64, ``wall_time`` and ``value`` float64."""

    step: np.ndarray
    wall_time: np.ndarray
    value: np.ndarray

    def __len__(self) -> int:
        return len(self.step)


@dataclass
class HistogramSeries:
    """Histograms of one (run, tag), one row per step.

    ``bucket_limits[i][j]`` is the right edge of bucket j at row i and ``bucket_counts[i][j]`` its
    count (bucket j holds v with ``limit[j-1] < v <= limit[j]``). For tensor-style histograms
    (TF2, new tensorboardX/torch) ``sum`` and ``sum_squares`` are estimated from bucket centers.
    """

    step: np.ndarray
    wall_time: np.ndarray
    min: np.ndarray
    max: np.ndarray
    num: np.ndarray
    sum: np.ndarray
    sum_squares: np.ndarray
    bucket_limits: List[np.ndarray]
    bucket_counts: List[np.ndarray]

    def __len__(self) -> int:
        return len(self.step)


@dataclass
class ImageRecord:
    """One image; ``data`` is the encoded PNG/JPEG/GIF. ``sample`` numbers images of one step
    (TF2 writes up to max_outputs per step). colorspace 0 means "not recorded" (TF2)."""

    step: int
    wall_time: float
    width: int
    height: int
    colorspace: int
    data: bytes
    sample: int = 0

    def decode(self) -> np.ndarray:
        """The image as uint8 HxWxC (Pillow)."""
        from PIL import Image
        with Image.open(io.BytesIO(self.data)) as im:
            im.load()
            if im.mode not in ("L", "LA", "RGB", "RGBA"):
                im = im.convert("RGBA" if "A" in im.getbands() else "RGB")
            a = np.asarray(im, dtype=np.uint8)
        return a[:, :, None] if a.ndim == 2 else a


@dataclass
class AudioRecord:
    """One audio clip; ``data`` is the encoded clip (WAV as written by TF, tensorboardX, torch)."""

    step: int
    wall_time: float
    sample_rate: float
    num_channels: int
    data: bytes
    content_type: str = "audio/wav"
    length_frames: int = 0
    label: str = ""
    sample: int = 0

    def decode(self) -> np.ndarray:
        """PCM WAV as float [frames, channels] in [-1, 1] (8/16/32-bit integer, or float WAV)."""
        import wave
        try:
            with wave.open(io.BytesIO(self.data)) as w:
                width, channels, frames = w.getsampwidth(), w.getnchannels(), w.readframes(w.getnframes())
        except wave.Error:
            return _decode_float_wav(self.data)
        if width == 1:
            a = (np.frombuffer(frames, dtype=np.uint8).astype(np.float32) - 128) / 128
        elif width == 2:
            a = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768
        elif width == 4:
            a = np.frombuffer(frames, dtype="<i4").astype(np.float32) / 2147483648
        else:
            raise ValueError("unsupported WAV sample width %d" % width)
        return a.reshape(-1, channels)


def _decode_float_wav(data: bytes) -> np.ndarray:
    """IEEE-float WAV (format 3), which the ``wave`` module refuses."""
    import struct
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("not a WAV file")
    pos, fmt, channels, bits = 12, None, 1, 32
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], struct.unpack_from("<I", data, pos + 4)[0]
        body = data[pos + 8:pos + 8 + size]
        if cid == b"fmt ":
            fmt, channels, _, _, _, bits = struct.unpack_from("<HHIIHH", body)
        elif cid == b"data":
            if fmt != 3:
                raise ValueError("unsupported WAV format %s" % fmt)
            return np.frombuffer(body, dtype="<f4" if bits == 32 else "<f8").astype(np.float32).reshape(-1, channels)
        pos += 8 + size + (size & 1)
    raise ValueError("WAV file without a data chunk")


@dataclass
class TextRecord:
    """Text at one step: a ``str``, or an ndarray of str for a text tensor with dimensions."""

    step: int
    wall_time: float
    text: Union[str, np.ndarray]


@dataclass
class PrCurveRecord:
    """A PR curve: ``data`` float64 [6, num_thresholds] = TP, FP, TN, FN, precision, recall."""

    step: int
    wall_time: float
    data: np.ndarray

    @property
    def precision(self) -> np.ndarray:
        return self.data[4]

    @property
    def recall(self) -> np.ndarray:
        return self.data[5]


@dataclass
class TensorRecord:
    """A tensor summary of a plugin the reader has no special type for."""

    step: int
    wall_time: float
    value: np.ndarray


@dataclass
class HParamsRecord:
    """A run's hyperparameters (session_start_info), the experiment's metric tags, and the outcome."""

    hparams: Dict[str, Any] = field(default_factory=dict)
    metrics: List[str] = field(default_factory=list)
    hparam_infos: Dict[str, int] = field(default_factory=dict)
    group_name: str = ""
    start_time: Optional[float] = None
    end_time: Optional[float] = None
    status: Optional[str] = None
