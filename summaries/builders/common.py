"""Shared pieces of the summary builders: argument checks, array conversion, tensor protos.

Every builder validates with these so that a bad argument raises the same kind of error with
the argument's name in it, whichever builder it was passed to.
"""
from __future__ import annotations

import copy
import sys
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from tfevents.proto import summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2

from ..tags import check_tag, clean_tag

__all__ = [
    "ShapeError", "check_tag", "clean_tag", "check_int", "stack_arrays", "as_array", "host_copy", "library_of",
    "as_numeric_array", "require_finite",
    "plugin_metadata", "string_tensor", "float32_tensor", "single_value",
]


class ShapeError(ValueError, AssertionError):
    """A wrong shape or layout (an image's rank against its ``dataformats``, a non-square sprite): a ValueError,
    and the AssertionError that tensorboardX and torch raise there (they ``assert``), so either ``except`` works."""


def check_int(value: Any, name: str, minimum: Optional[int] = None) -> int:
    """An integer argument (bool refused) with an optional lower bound."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError("%s must be an int, got %s" % (name, type(value).__name__))
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError("%s must be >= %d, got %d" % (name, minimum, value))
    return value


def library_of(value: Any) -> str:
    """The top-level package that defines ``value``'s type (``"torch"``, ``"jaxlib"``, ``"cupy"``, ``"numpy"``, ...):
    how an array is recognized without importing its library."""
    return (type(value).__module__ or "").partition(".")[0]


def _torch_to_host(value: Any, copy: bool) -> np.ndarray:
    """A torch tensor on any device as numpy: detached, on the CPU, bfloat16 widened to float32 (numpy has no
    bfloat16; exact: its 16 bits are a float32's upper half); with ``copy`` always a new buffer, else possibly
    the tensor's own memory. The host copies are numpy's: torch's own (``clone``, ``to``) wake its intra-op
    thread pool, which costs milliseconds on a busy machine."""
    torch = sys.modules["torch"]      # imported: value is one of its tensors
    tensor = value.detach()
    if tensor.device.type != "cpu":
        tensor, copy = tensor.cpu(), False          # the device-to-host copy is a new buffer
    if tensor.dtype == torch.bfloat16:
        bits = tensor.view(torch.int16).numpy().view(np.uint16)
        return (bits.astype(np.uint32) << 16).view(np.float32)
    array = tensor.resolve_conj().resolve_neg().numpy()
    return array.copy() if copy else array


def _without_bfloat16(array: np.ndarray) -> np.ndarray:
    """ml_dtypes' bfloat16 (what JAX's bfloat16 arrays become in numpy) as float32."""
    return array.astype(np.float32) if array.dtype.name == "bfloat16" else array


def as_array(value: Any, name: str, keep_bfloat16: bool = False) -> np.ndarray:
    """A numpy view of ``value``: numpy arrays and scalars, Python numbers and (nested) lists,
    torch tensors (detached, moved to CPU, bfloat16 as float32), CuPy arrays (copied to the host),
    JAX arrays and anything with ``__array__`` (TF eager). ml_dtypes' bfloat16 (JAX's, TF's) becomes
    float32 unless ``keep_bfloat16`` (``add_tensor`` writes it as it is)."""
    library = library_of(value)
    if library == "torch" and hasattr(value, "detach"):
        value = _torch_to_host(value, copy=False)
    elif library == "cupy" and hasattr(value, "get"):
        value = value.get()
    elif hasattr(value, "numpy") and not isinstance(value, np.ndarray) and library == "tensorflow":
        value = value.numpy()
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as err:  # ragged nested lists and the like
        raise ValueError("%s could not be converted to an array: %s" % (name, err)) from None
    return array if keep_bfloat16 else _without_bfloat16(array)


def stack_arrays(items: Sequence[Any], name: str) -> np.ndarray:
    """A list of same-shaped arrays (numpy, torch, JAX, nested lists) stacked on a new first axis."""
    arrays = [as_array(item, "%s[%d]" % (name, i)) for i, item in enumerate(items)]
    if not arrays:
        raise ValueError("%s is an empty list" % name)
    shapes = sorted({array.shape for array in arrays})
    if len(shapes) > 1:
        raise ValueError("%s: the arrays of a list must have one shape, got %s" % (name, shapes))
    return np.stack(arrays)


def host_copy(value: Any) -> Any:
    """What a writer keeps of an argument to encode it later on its own thread: a copy that nothing the
    caller does next (writing into the array, freeing a device buffer) can change.

    torch tensors (any device; bfloat16 as float32) and CuPy arrays are copied to the host; JAX and
    numpy arrays are copied (bfloat16 as float32); other values (numbers, strings, lists, None) are
    deep-copied. Each library is recognized by its type's module, never imported here.
    """
    library = library_of(value)
    if library == "torch" and hasattr(value, "detach"):
        return _torch_to_host(value, copy=True)
    if library == "cupy" and hasattr(value, "get"):
        return value.get()
    if isinstance(value, np.ndarray) or library in ("jax", "jaxlib", "tensorflow"):
        return _without_bfloat16(np.array(value, copy=True))
    if value is None or isinstance(value, (str, bytes, int, float, bool, np.generic)):
        return value
    return copy.deepcopy(value)


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
