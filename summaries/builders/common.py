"""Shared pieces of the summary builders: argument checks, array conversion, tensor protos.

Every builder validates with these so that a bad argument raises the same kind of error with
the argument's name in it, whichever builder it was passed to.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

import numpy as np

from tfevents.proto import summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2

from ..tags import check_tag, clean_tag

__all__ = [
    "check_tag", "clean_tag", "check_int", "as_array", "as_numeric_array", "require_finite",
    "plugin_metadata", "string_tensor", "float32_tensor", "single_value",
]


def check_int(value: Any, name: str, minimum: Optional[int] = None) -> int:
    """An integer argument (bool refused) with an optional lower bound."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError("%s must be an int, got %s" % (name, type(value).__name__))
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError("%s must be >= %d, got %d" % (name, minimum, value))
    return value


def as_array(value: Any, name: str) -> np.ndarray:
    """A numpy view of ``value``: numpy arrays and scalars, Python numbers and (nested) lists,
    torch tensors (detached, moved to CPU), and anything with ``__array__`` (JAX, TF eager)."""
    module = type(value).__module__ or ""
    if module.startswith("torch") and hasattr(value, "detach"):
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":  # numpy has no bfloat16
            value = value.float()
        value = value.numpy()
    elif hasattr(value, "numpy") and not isinstance(value, np.ndarray) and module.startswith("tensorflow"):
        value = value.numpy()
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as err:  # ragged nested lists and the like
        raise ValueError("%s could not be converted to an array: %s" % (name, err)) from None
    return array


def as_numeric_array(value: Any, name: str) -> np.ndarray:
    """``as_array`` restricted to real numbers (bool, int, float); TypeError otherwise."""
    array = as_array(value, name)
    if array.dtype.kind not in "biuf":
        raise TypeError("%s must hold real numbers, got dtype %s" % (name, array.dtype))
    return array


def require_finite(array: np.ndarray, name: str) -> None:
    """Raise ValueError naming ``name`` and the count of NaN/Inf entries, if there are any."""
    if array.dtype.kind == "f":
        bad = np.count_nonzero(~np.isfinite(array))
        if bad:
            raise ValueError("%s contains %d non-finite value(s) (NaN or Inf) out of %d"
                             % (name, bad, array.size))


def single_value(tag: str, metadata: Optional[summary_pb2.SummaryMetadata] = None,
                 **value_fields: Any) -> summary_pb2.Summary:
    """A Summary holding one Value."""
    value = summary_pb2.Summary.Value(tag=tag, **value_fields)
    if metadata is not None:
        value.metadata.CopyFrom(metadata)
    return summary_pb2.Summary(value=[value])


def plugin_metadata(plugin_name: str, content: bytes = b"", display_name: Optional[str] = None,
                    description: Optional[str] = None) -> summary_pb2.SummaryMetadata:
    """SummaryMetadata naming the TensorBoard plugin that reads the value."""
    metadata = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=plugin_name, content=content))
    if display_name:
        metadata.display_name = display_name
    if description:
        metadata.summary_description = description
    return metadata


def _shape_proto(shape: Iterable[int]) -> tensor_shape_pb2.TensorShapeProto:
    return tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=int(n)) for n in shape])


def string_tensor(values: Iterable[bytes], shape: Iterable[int]) -> tensor_pb2.TensorProto:
    """DT_STRING tensor; strings travel in ``string_val`` as ``tf.make_tensor_proto`` writes them."""
    return tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, tensor_shape=_shape_proto(shape),
                                  string_val=list(values))


def float32_tensor(array: np.ndarray) -> tensor_pb2.TensorProto:
    """DT_FLOAT tensor with the values packed little-endian in ``tensor_content``
    (the layout ``tf.make_tensor_proto`` produces for a float32 numpy array)."""
    array = np.ascontiguousarray(array, dtype="<f4")
    return tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_shape=_shape_proto(array.shape),
                                  tensor_content=array.tobytes())
