"""``tf.summary`` in the graph: summary ops evaluate to serialized ``Summary`` bytes built by
``tfevents.summaries.builders``; ``FileWriter`` is ``tfevents.summaries.SummaryWriter`` whose meta graph (written
after a graph given at creation) carries the default graph's collections, as TF1's.

Names follow TF1's ``summary_scope``: the op is a (unique) name scope and the tag is that scope's name, so
``tf.summary.scalar('loss', x)`` inside an existing ``loss`` scope, or twice, is tagged ``loss_1``.
"""
from __future__ import annotations

import threading
from typing import Any, Optional

import numpy as np

from .framework import dtypes
from .framework.graph import GraphKeys, get_default_graph, name_scope
from .framework.registry import apply_op, constant, constant_value, convert_to_tensor, register, shape_scalar
from tfevents.summaries.tags import clean_tag
from tfevents.summaries import SummaryWriter, builders, summary_iterator  # noqa: F401 - tf.summary.summary_iterator
from tfevents.proto import event_pb2, graph_pb2, plugin_text_pb2, summary_pb2
from .framework.meta_graph import create_meta_graph_def


def _builders():
    return builders


def _tag_of(op) -> str:
    tag = constant_value(op.inputs[0]).reshape(-1)[0]
    return tag.decode("utf-8") if isinstance(tag, bytes) else str(tag)


def _summary_bind(build):
    def bind(op, session):
        tag = _tag_of(op)
        attrs = op.attrs
        return lambda tags, *values: build(tag, attrs, *values)
    return bind


def _scalar(tag, attrs, value):
    return _builders().scalar(tag, np.asarray(value).reshape(())).SerializeToString()


def _histogram(tag, attrs, values):
    return _builders().histogram(tag, np.asarray(values, np.float64)).SerializeToString()


def _numbered(tag, kind, n, max_outputs):
    if max_outputs == 1 or n == 1 and max_outputs == 1:
        return ["%s/%s" % (tag, kind)]
    return ["%s/%s/%d" % (tag, kind, i) for i in range(min(n, max_outputs))]


def _normalize_float_image(image):
    """TF's ImageSummary rescaling of one float image: all >= 0 -> the max maps to 255; else 0 maps to 128
    and the largest |value| to 127; then truncated to uint8."""
    finite = image[np.isfinite(image)]
    lo = float(finite.min()) if finite.size else 0.0
    hi = float(finite.max()) if finite.size else 0.0
    if lo < 0:
        top = max(abs(lo), abs(hi))
        scale, offset = (0.0 if top < 1e-6 else 127.0 / top), 128.0
    else:
        scale, offset = (0.0 if hi < 1e-6 else 255.0 / hi), 0.0
    return np.clip(np.where(np.isfinite(image), image, 0) * scale + offset, 0, 255).astype(np.uint8)


def _image(tag, attrs, images):
    images = np.asarray(images)
    if images.ndim != 4:
        raise ValueError("image summary needs a 4-D [batch, height, width, channels] tensor, got %s"
                         % (images.shape,))
    if images.dtype.kind == "f":
        images = np.stack([_normalize_float_image(im) for im in images]) if len(images) else \
            images.astype(np.uint8)
    out = b""
    tags = _numbered(tag, "image", images.shape[0], attrs["max_images"])
    for i, t in enumerate(tags):
        out += _builders().image(t, images[i], dataformats="HWC").SerializeToString()
    return out


def _audio(tag, attrs, clips, sample_rate):
    clips = np.asarray(clips, np.float32)
    if clips.ndim == 2:
        clips = clips[:, :, None]
    out = b""
    tags = _numbered(tag, "audio", clips.shape[0], attrs["max_outputs"])
    for i, t in enumerate(tags):
        out += _builders().audio(t, clips[i], int(sample_rate)).SerializeToString()
    return out


def _text(tag, attrs, text, serialized_metadata=None):
    summary = _builders().text(tag, text if np.ndim(text) else text.reshape(-1)[0] if hasattr(text, "reshape")
                               else text)
    for value in summary.value:
        value.tag = tag
    return summary.SerializeToString()


_SUMMARY = dict(shape=shape_scalar, dtype=dtypes.string, stateful=False)
register("ScalarSummary", bind=_summary_bind(_scalar), **_SUMMARY)
register("HistogramSummary", bind=_summary_bind(_histogram), **_SUMMARY)
register("ImageSummary", bind=_summary_bind(_image), **_SUMMARY)
register("AudioSummaryV2", bind=_summary_bind(_audio), **_SUMMARY)
register("TensorSummaryV2", bind=_summary_bind(_text), **_SUMMARY)
register("MergeSummary", lambda *parts: b"".join(parts), **_SUMMARY)


def _summary_op(op_type: str, name: str, inputs: list, attrs: Optional[dict], collections, family=None):
    base = clean_tag(name, "name")
    if family:
        base = clean_tag(family, "family") + "/" + base
    with name_scope(base) as scope:
        tag = scope.rstrip("/")
        # the op's first input: ScalarSummary's is `tags`, the others' `tag` (TF's generated wrappers' names)
        tags = constant(np.array(tag, dtype=object), dtype=dtypes.string,
                        name="tags" if op_type == "ScalarSummary" else "tag")
        inputs = [convert_to_tensor(x) for x in inputs]
        attrs = dict(attrs or {})
        if op_type != "AudioSummaryV2":
            attrs["T"] = inputs[0].dtype
        out = apply_op(op_type, [tags] + inputs, attrs, name=scope)
    for key in (collections if collections is not None else [GraphKeys.SUMMARIES]):
        get_default_graph().add_to_collection(key, out)
    return out


def scalar(name: str, tensor: Any, collections: Optional[list] = None, family: Optional[str] = None):
    """A scalar summary of ``tensor`` (one value) tagged with the unique scope name."""
    return _summary_op("ScalarSummary", name, [tensor], None, collections, family)


def histogram(name: str, values: Any, collections: Optional[list] = None, family: Optional[str] = None):
    return _summary_op("HistogramSummary", name, [values], None, collections, family)


def image(name: str, tensor: Any, max_outputs: int = 3, collections: Optional[list] = None,
          family: Optional[str] = None):
    """Up to ``max_outputs`` images of a [batch, h, w, c] tensor, tagged ``name/image/i``."""
    return _summary_op("ImageSummary", name, [tensor], dict(max_images=int(max_outputs)), collections, family)


def audio(name: str, tensor: Any, sample_rate: Any, max_outputs: int = 3, collections: Optional[list] = None,
          family: Optional[str] = None):
    """Up to ``max_outputs`` clips of a [batch, frames(, channels)] float tensor, tagged ``name/audio/i``."""
    rate = constant(sample_rate, dtype=dtypes.float32, name="sample_rate") if not hasattr(sample_rate, "op") \
        else sample_rate
    return _summary_op("AudioSummaryV2", name, [tensor, rate], dict(max_outputs=int(max_outputs)), collections,
                       family)


def text(name: str, tensor: Any, collections: Optional[list] = None):
    """A text-plugin summary of a string tensor (TF's TensorSummaryV2 with the text plugin's metadata)."""
    metadata = summary_pb2.SummaryMetadata()
    metadata.plugin_data.plugin_name = "text"
    metadata.plugin_data.content = plugin_text_pb2.TextPluginData(version=0).SerializeToString()
    serialized = constant(np.array(metadata.SerializeToString(), dtype=object), dtype=dtypes.string,
                          name="serialized_summary_metadata")
    return _summary_op("TensorSummaryV2", name, [tensor, serialized], None, collections)


def merge(inputs: list, collections: Optional[list] = None, name: Optional[str] = None):
    """One Summary with the values of all ``inputs`` (serialized Summaries concatenate on the wire). As TF: the
    op is ``Merge/MergeSummary`` (``<name>/<name>`` when named)."""
    name = clean_tag(name, "name") if name else name
    with name_scope(name, "Merge"):
        out = apply_op("MergeSummary", list(inputs), dict(N=len(inputs)), name=name)
    for key in collections or []:
        get_default_graph().add_to_collection(key, out)
    return out


def merge_all(key: str = GraphKeys.SUMMARIES, scope: Optional[str] = None, name: Optional[str] = None):
    """``merge`` of every summary in collection ``key`` (None if there are none)."""
    summaries = get_default_graph().get_collection(key, scope)
    if not summaries:
        return None
    return merge(summaries, name=name)


class FileWriter(SummaryWriter):
    """TF1's ``tf.summary.FileWriter``: ``tfevents.summaries.SummaryWriter``; a graph given at creation is
    written as a graph event and a meta graph event, the latter with the default graph's collections (TF's
    ``create_meta_graph_def(graph_def=...)``)."""

    @staticmethod
    def _meta_graph_of(graph_def: bytes) -> Any:
        return create_meta_graph_def(graph_def=graph_pb2.GraphDef.FromString(graph_def))


class SummaryWriterCache:
    """One ``SummaryWriter`` per directory, created with the default graph (so the file starts with the graph
    and meta graph events), as TF1's ``FileWriterCache``: it stays open across sessions, so a second
    ``MonitoredTrainingSession`` on the same directory goes on writing the same file. ``MonitoredSession``
    flushes every cached writer when it closes, also after an exception; ``clear()`` closes them."""

    _cache: dict = {}
    _lock = threading.RLock()

    @classmethod
    def get(cls, logdir: str) -> Any:
        """The writer of ``logdir`` (created on first use)."""
        with cls._lock:
            writer = cls._cache.get(logdir)
            if writer is None:
                writer = cls._cache[logdir] = FileWriter(logdir, graph=get_default_graph())
            return writer

    @classmethod
    def flush(cls) -> None:
        """Flush every cached writer: what was logged is in its file."""
        with cls._lock:
            writers = list(cls._cache.values())
        for writer in writers:
            writer.flush()

    @classmethod
    def clear(cls) -> None:
        """Close every cached writer and forget them (the next ``get`` starts a new event file)."""
        with cls._lock:
            writers, cls._cache = list(cls._cache.values()), {}
        errors = []
        for writer in writers:
            try:
                writer.close()
            except OSError as e:
                errors.append(e)
        if errors:
            raise errors[0]


FileWriterCache = SummaryWriterCache


# tf.summary's other names: the reader, the protos
Summary, SummaryDescription, Event = summary_pb2.Summary, summary_pb2.SummaryDescription, event_pb2.Event
