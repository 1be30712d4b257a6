"""The reader's result types: columnar series and per-step records (decoded on demand)."""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

import numpy as np

from .embedding_files import read_bytes, read_matrix, read_metadata

__all__ = ["ScalarSeries", "HistogramSeries", "ImageRecord", "AudioRecord", "TextRecord", "PrCurveRecord",
           "TensorRecord", "HParamsRecord", "VideoRecord", "MeshRecord", "EmbeddingRecord"]


@dataclass
class ScalarSeries:
    """One (run, tag) scalar series as columns: ``step`` int64, ``wall_time`` float64, ``value`` float32 when
    every value is one (always for ``simple_value``, which the Event stores as float32; 4 bytes a point instead of
    8), else float64 (a double or int64 tensor's values)."""

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

    ROWS = ("true_positives", "false_positives", "true_negatives", "false_negatives", "precision", "recall")
    """The names of ``data``'s rows, in order (a table's columns)."""

    @property
    def precision(self) -> np.ndarray:
        return self.data[4]

    @property
    def recall(self) -> np.ndarray:
        return self.data[5]


@dataclass
class TensorRecord:
    """A tensor summary of a plugin the reader has no special type for (``add_tensor``, unknown plugins):
    ``value`` keeps the stored dtype and shape (strings as bytes objects, bfloat16 widened to float32)."""

    step: int
    wall_time: float
    value: np.ndarray


@dataclass
class VideoRecord:
    """One video: an image summary whose encoded data is a GIF (tensorboardX/torch ``add_video``; the
    batch of clips tiled into one grid per frame). Every GIF goes to ``Logdir.videos``, a single-frame
    one too (an ``add_video`` of one frame writes one), since ``add_image`` never writes GIFs.
    ``data`` is the GIF; frames are decoded on demand."""

    step: int
    wall_time: float
    width: int
    height: int
    data: bytes
    sample: int = 0

    def _gif(self):
        from PIL import Image
        return Image.open(io.BytesIO(self.data))

    def frames(self) -> np.ndarray:
        """The frames as uint8 ``[T, H, W, 3]`` RGB, each fully composited (Pillow). A gray or RGBA video
        comes back as RGB, as the GIF holds it; consecutive identical frames are one GIF frame (Pillow
        merges them when writing, summing their durations: see :attr:`durations`)."""
        from PIL import ImageSequence
        with self._gif() as gif:
            return np.stack([np.asarray(f.convert("RGB"), dtype=np.uint8) for f in ImageSequence.Iterator(gif)])

    @property
    def num_frames(self) -> int:
        """The GIF's frame count."""
        with self._gif() as gif:
            return int(getattr(gif, "n_frames", 1))

    @property
    def durations(self) -> List[int]:
        """Each frame's display time in milliseconds (GIF stores whole centiseconds)."""
        from PIL import ImageSequence
        with self._gif() as gif:
            return [int(f.info.get("duration", 0) or 0) for f in ImageSequence.Iterator(gif)]

    @property
    def fps(self) -> Optional[float]:
        """Frames per second, ``1000 / shortest frame duration`` (merged identical frames last a multiple of
        it); None when the GIF gives no duration. GIF timing has 10 ms steps, so fps=30 reads back as 33.3."""
        positive = [d for d in self.durations if d > 0]
        return 1000.0 / min(positive) if positive else None


@dataclass
class MeshRecord:
    """One mesh or point cloud at one step, regrouped from the ``<name>_VERTEX/_FACE/_COLOR`` tensors by
    the name in their MeshPluginData (as TensorBoard's mesh plugin does; tensorboardX tags them
    ``<name>_1/_2/_3``). ``vertices`` float32 ``[B, N, 3]``; ``faces`` int32 ``[B, F, 3]`` vertex indices or
    None (a point cloud); ``colors`` uint8 ``[B, N, 3]`` RGB or None; ``config`` the scene's JSON
    configuration (``{}`` when none was given). B is the number of samples."""

    step: int
    wall_time: float
    vertices: np.ndarray
    faces: Optional[np.ndarray] = None
    colors: Optional[np.ndarray] = None
    config: Dict[str, Any] = field(default_factory=dict)


@dataclass
class EmbeddingRecord:
    """One embedding of a run's ``projector_config.pbtxt`` (TensorBoard's Projector; tensorboardX/torch
    ``add_embedding``, ``tensorboard.plugins.projector.visualize_embeddings``). Files are read on demand,
    through the filesystem the logdir was read with.

    ``tensor_name`` as TensorBoard names it (a trailing ``:0`` dropped; the tensor file's base name when
    the config gives none); ``tensor_shape`` from the config, else None (see :attr:`shape`); the paths are
    resolved against the config's directory as TensorBoard resolves them (None when not given);
    ``single_image_dim`` the (width, height) of one sprite cell. An entry without ``tensor_path`` names a
    tensor in ``model_checkpoint_path``, which the reader does not load: its :meth:`matrix` raises.
    """

    tensor_name: str
    config_path: str
    tensor_shape: Optional[tuple] = None
    tensor_path: Optional[str] = None
    metadata_path: Optional[str] = None
    sprite_path: Optional[str] = None
    single_image_dim: Optional[tuple] = None
    model_checkpoint_path: str = ""
    fs: Any = field(default=None, repr=False, compare=False)  # fsspec filesystem, None for local files

    def matrix(self) -> np.ndarray:
        """The embedding as float32 ``[N, D]``: the TSV tensor file (blank lines skipped), or, when the
        file is not UTF-8 text, raw little-endian float32 of ``tensor_shape`` (TensorBoard's binary form).
        ValueError when the tensor lives only in a checkpoint or the file is malformed; OSError when it
        cannot be read."""
        return read_matrix(self)

    def metadata(self) -> tuple:
        """``(header, rows)`` of the metadata file by TensorBoard's rule: a first line holding a tab is the
        header row, else the file is one column of labels, named ``label``; blank lines are skipped.
        ``([], [])`` when the embedding has no metadata."""
        return read_metadata(self)

    def sprite(self) -> Optional[np.ndarray]:
        """The sprite image as uint8 ``[H, W, C]`` (Pillow), or None when the embedding has none."""
        if self.sprite_path is None:
            return None
        return ImageRecord(0, 0.0, 0, 0, 0, read_bytes(self, self.sprite_path)).decode()

    @property
    def shape(self) -> tuple:
        """``tensor_shape`` when the config gives it, else the shape of :meth:`matrix`."""
        return tuple(self.tensor_shape) if self.tensor_shape else self.matrix().shape


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
