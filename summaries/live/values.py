"""How the live loader keeps and serves a value: each tag's first value fixes its data class and metadata as
the Rust data server's ``data_compat`` does (``initial_metadata``); images, audio and graphs are kept as blob
sequences (``blob_sequence``), histograms compacted (``compact_histogram``) and served as the [k, 3] tensor
(``tensor_bytes``)."""
from __future__ import annotations

import functools
from typing import Optional, Tuple

from tfevents.proto import summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
from ..reader.decode import RawHistogram, histo_row
from ..reader.kinds import KINDS, UNKNOWN, kind_of_old_style, plugin_data_class
from .packing import CompactHistogram

__all__ = ["RUN_GRAPH_TAG", "GRAPH_STRING_PLUGINS", "NULL_TENSOR", "initial_metadata", "blob_sequence",
           "scalar_tensor_bytes", "compact_histogram", "tensor_bytes"]

RUN_GRAPH_TAG = "__run_graph__"
GRAPH_STRING_PLUGINS = frozenset({"graph_run_metadata", "graph_run_metadata_graph", "graph_keras_model"})


@functools.lru_cache(maxsize=None)
def _blank(plugin: str, data_class: int, content: bytes = b"") -> bytes:
    md = summary_pb2.SummaryMetadata(data_class=data_class)
    md.plugin_data.plugin_name = plugin
    md.plugin_data.content = content
    return md.SerializeToString()


# what an old-style value's plugin content says: ImagePluginData / AudioPluginData {converted_to_tensor: true}
_CONVERTED = {"images": b"\x10\x01", "audio": b"\x18\x01"}


def initial_metadata(first_what: str, metadata: Optional[bytes]) -> Tuple[bytes, int, str]:
    """(SummaryMetadata bytes, data class, plugin name) of a series from its first value's kind ('simple_value',
    'image', 'audio', 'histo', 'tensor'; 'graph', 'run_metadata' for those events) and metadata: the Rust
    server's rules (``data_compat.rs``), with the kinds table's plugins and data classes."""
    md = summary_pb2.SummaryMetadata.FromString(metadata) if metadata else None
    if md is not None and md.data_class != UNKNOWN:
        return metadata, md.data_class, md.plugin_data.plugin_name
    old_style = kind_of_old_style(first_what)
    if old_style is not None:
        kind = KINDS[old_style]
        return _blank(kind.plugin, kind.data_class, _CONVERTED.get(kind.plugin, b"")), kind.data_class, kind.plugin
    if md is None:
        return b"", UNKNOWN, ""
    plugin = md.plugin_data.plugin_name
    md.data_class = plugin_data_class(plugin)
    return md.SerializeToString(), md.data_class, plugin


# ---------------------------------------------------------------- values in the form they are served

def blob_sequence(what: str, payload, plugin: str) -> Optional[list]:
    """The blobs of one value of a blob-sequence series, or None (the Rust server's DataLoss)."""
    if what == "image":
        return [str(payload.width).encode(), str(payload.height).encode(), payload.encoded_image_string]
    if what == "audio":
        return [payload.encoded_audio_string]
    if what == "tensor" and payload.dtype == types_pb2.DT_STRING:
        dims = [d.size for d in payload.tensor_shape.dim]
        values = list(payload.string_val)
        if len(dims) == 1:
            return values
        if len(dims) == 2 and dims[1] == 2 and plugin == "audio":
            return values[0::2]
        if not dims and len(values) == 1 and plugin in GRAPH_STRING_PLUGINS:
            return values
    return None


# a summary value with no value set is served as this empty float tensor, as the Rust server does
NULL_TENSOR = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_shape=tensor_shape_pb2.TensorShapeProto(
    dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=0)])).SerializeToString()


def scalar_tensor_bytes(value: float) -> bytes:
    return tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[value],
                                  tensor_shape=tensor_shape_pb2.TensorShapeProto()).SerializeToString()


# ---------------------------------------------------------------- series and runs

def compact_histogram(value) -> CompactHistogram:
    """A histogram as the scan left it (a RawHistogram, a HistogramProto or a ``histo_row`` tuple), compacted."""
    if isinstance(value, RawHistogram):
        return CompactHistogram.of_event(value.payload) or CompactHistogram(value.row())
    return CompactHistogram(value if isinstance(value, tuple) else histo_row(value))


def tensor_bytes(value) -> Optional[bytes]:
    """A kept tensor value as serialized TensorProto bytes (histograms are rebuilt as the Rust server's tensor; one
    a reader meets before the loader compacted it is compacted here)."""
    if isinstance(value, bytes):
        return value
    if not isinstance(value, CompactHistogram):
        value = compact_histogram(value)
    return value.tensor_bytes()
