"""Whole-tensor summaries (``add_tensor``) and the JSON of ``export_scalars_to_json``.

:func:`tensor` stores a value of any numeric, bool or string dtype as it is, as
``torch.utils.tensorboard``'s ``add_tensor`` (``summary.tensor_proto``) does: the TF DataType of the
dtype, its shape, the values in the dtype's typed repeated field (``float_val``, ``int_val``, ...),
plugin name ``tensor``. ``tf.make_ndarray`` and the tfevents reader give the array back.
Two fields differ from torch's, where torch writes what TensorFlow cannot read back: float16 and
bfloat16 go to ``half_val`` as their 16-bit patterns (torch stores float32 bit patterns there), and
uint8 to ``int_val`` (torch uses ``uint32_val``, which ``tf.make_ndarray`` ignores for DT_UINT8).

:func:`scalars_to_json` is the text tensorboardX's ``export_scalars_to_json`` writes:
``json.dump`` of ``{writer_id: [[walltime, step, value], ...], ...}``.
"""
from __future__ import annotations

import json
from typing import Any, List, Mapping, Optional

import numpy as np

from tfevents.proto import summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2

from .common import as_array, clean_tag, plugin_metadata, single_value

__all__ = ["tensor", "tensor_proto", "scalar_record", "scalars_to_json", "TENSOR_PLUGIN_NAME"]

TENSOR_PLUGIN_NAME = "tensor"  # torch.utils.tensorboard.summary.tensor_proto's plugin name
_MAX_BYTES = 1 << 31  # protobuf's hard limit of 2 GB per message (torch refuses tensors from this size on)

# numpy dtype -> (TF DataType, TensorProto field), as tf.make_tensor_proto and torch's _TENSOR_TYPE_MAP.
_FIELDS = {
    np.dtype(np.float16): (types_pb2.DT_HALF, "half_val"),  # the uint16 bit patterns
    np.dtype(np.float32): (types_pb2.DT_FLOAT, "float_val"),
    np.dtype(np.float64): (types_pb2.DT_DOUBLE, "double_val"),
    np.dtype(np.int8): (types_pb2.DT_INT8, "int_val"),
    np.dtype(np.int16): (types_pb2.DT_INT16, "int_val"),
    np.dtype(np.int32): (types_pb2.DT_INT32, "int_val"),
    np.dtype(np.int64): (types_pb2.DT_INT64, "int64_val"),
    np.dtype(np.uint8): (types_pb2.DT_UINT8, "int_val"),
    np.dtype(np.uint16): (types_pb2.DT_UINT16, "int_val"),
    np.dtype(np.uint32): (types_pb2.DT_UINT32, "uint32_val"),
    np.dtype(np.uint64): (types_pb2.DT_UINT64, "uint64_val"),
    np.dtype(np.bool_): (types_pb2.DT_BOOL, "bool_val"),
    np.dtype(np.complex64): (types_pb2.DT_COMPLEX64, "scomplex_val"),  # real, imag interleaved
    np.dtype(np.complex128): (types_pb2.DT_COMPLEX128, "dcomplex_val"),
}


def _shape(shape: Any) -> tensor_shape_pb2.TensorShapeProto:
    return tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=int(n)) for n in shape])


def _torch_bfloat16_bits(value: Any) -> Optional[np.ndarray]:
    """The uint16 bit patterns of a torch bfloat16 tensor (``as_array`` widens those to float32); else None."""
    if type(value).__module__.startswith("torch") and str(getattr(value, "dtype", "")) == "torch.bfloat16":
        import torch
        return value.detach().cpu().contiguous().view(torch.int16).numpy().view(np.uint16)
    return None


def _to_bytes(item: Any) -> bytes:
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode("utf-8")
    raise TypeError("tensor of strings must hold only str or bytes, found %s" % type(item).__name__)


def _as_tensor_array(value: Any) -> np.ndarray:
    if isinstance(value, (str, bytes)):
        return np.array(value, dtype=object)
    module = type(value).__module__ or ""
    if module.startswith("torch") and hasattr(value, "dtype"):
        dtype = str(value.dtype)
        if dtype in ("torch.complex32", "torch.chalf") or "qint" in dtype or "quint" in dtype or "float8" in dtype:
            raise TypeError("tensor of dtype %s is not supported (convert it to a float or complex64 tensor)"
                            % dtype)
    return as_array(value, "tensor", keep_bfloat16=True)


def tensor_proto(value: Any) -> tensor_pb2.TensorProto:
    """A TensorProto holding ``value``: dtype, shape and the values in the dtype's typed field.

    Numeric dtypes as listed in ``_FIELDS`` (float16 and bfloat16 as their 16-bit patterns in
    ``half_val``, as TensorFlow stores them), bool, and strings (str is UTF-8 encoded into
    ``string_val``). TypeError for any other dtype; ValueError from 2 GB of data on.
    """
    bits = _torch_bfloat16_bits(value)
    if bits is None:
        array = _as_tensor_array(value)
        if array.dtype.name == "bfloat16":  # ml_dtypes' numpy bfloat16 (TensorFlow, JAX)
            bits = array.view(np.uint16)
    if bits is not None:
        return tensor_pb2.TensorProto(dtype=types_pb2.DT_BFLOAT16, tensor_shape=_shape(bits.shape),
                                      half_val=bits.ravel().tolist())
    if array.dtype.kind in "USO":
        values = [_to_bytes(item) for item in array.ravel().tolist()]
        return tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, tensor_shape=_shape(array.shape), string_val=values)
    if array.dtype.newbyteorder("=") not in _FIELDS:
        raise TypeError("tensor must hold bool, int, uint, float (16, 32, 64 bit), complex or str values, "
                        "got dtype %s" % array.dtype)
    if array.nbytes >= _MAX_BYTES:
        raise ValueError("tensor of shape %s and dtype %s holds %d bytes, over protobuf's 2 GB limit"
                         % (array.shape, array.dtype, array.nbytes))
    array = array.astype(array.dtype.newbyteorder("="), copy=False)
    dtype, field = _FIELDS[array.dtype]
    flat = array.ravel()
    if field == "half_val":
        flat = flat.view(np.uint16)
    elif field in ("scomplex_val", "dcomplex_val"):
        flat = flat.view(flat.real.dtype)  # real, imag, real, imag, ...
    return tensor_pb2.TensorProto(dtype=dtype, tensor_shape=_shape(array.shape), **{field: flat.tolist()})


def tensor(tag: str, tensor: Any) -> summary_pb2.Summary:
    """Summary with ``tensor`` stored whole (torch's ``add_tensor``; TensorBoard lists it under its
    tag but has no dashboard for plugin ``tensor``).

    ``tensor``: a numpy array or scalar, a torch/TF/JAX tensor, a Python number, bool, str or a
    (nested) list of them; any shape, empty included. See :func:`tensor_proto` for the dtypes; Python
    numbers get numpy's int64/float64 (``tf.make_tensor_proto`` narrows them to int32/float32). The
    metadata's plugin name is ``tensor`` with empty content, as torch writes it.
    """
    tag = clean_tag(tag)
    return single_value(tag, metadata=plugin_metadata(TENSOR_PLUGIN_NAME), tensor=tensor_proto(tensor))


# ------------------------------------------------------------------------------- scalars as JSON

def scalar_record(walltime: Any, global_step: Any, value: Any) -> List[Any]:
    """One entry ``[walltime, step, value]`` of tensorboardX's ``scalar_dict``: walltime and step as
    given (an int stays an int; step may be None), numpy numbers made Python ones (tensorboardX's
    ``json.dump`` fails on those), value ``float`` of a one-element number/array/tensor."""
    if isinstance(walltime, (bool, str, bytes)) or not isinstance(walltime, (int, float, np.integer, np.floating)):
        raise TypeError("walltime must be a number (seconds since the epoch), got %s" % type(walltime).__name__)
    if global_step is not None:
        if isinstance(global_step, (bool, np.bool_)) or not isinstance(global_step, (int, np.integer)):
            raise TypeError("global_step must be an int or None, got %s" % type(global_step).__name__)
        global_step = int(global_step)
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError("value must be a number, got %s" % type(value).__name__)
    array = as_array(value, "value")
    if array.dtype.kind not in "biuf":
        raise TypeError("value must be a real number, got dtype %s" % array.dtype)
    if array.size != 1:
        raise ValueError("value must hold exactly one number, got shape %s" % (array.shape,))
    walltime = int(walltime) if isinstance(walltime, (int, np.integer)) else float(walltime)
    return [walltime, global_step, float(array.reshape(()))]


def scalars_to_json(scalar_dict: Mapping[str, Any]) -> str:
    """The JSON tensorboardX's ``export_scalars_to_json(path)`` writes for ``scalar_dict``
    ``{writer_id: [[walltime, step, value], ...]}`` (``json.dump`` defaults: one line, ``NaN``/
    ``Infinity`` written as such, as Python's ``json`` reads them). Each record is normalized with
    :func:`scalar_record` (numpy numbers become Python ones), so bad entries raise here, not halfway
    through writing the file."""
    if not isinstance(scalar_dict, Mapping):
        raise TypeError("scalar_dict must be a dict, got %s" % type(scalar_dict).__name__)
    clean = {}
    for key, records in scalar_dict.items():
        if not isinstance(key, str):
            raise TypeError("scalar_dict keys must be str, got %s %r" % (type(key).__name__, key))
        if not isinstance(records, (list, tuple)):
            raise TypeError("scalar_dict[%r] must be a list of [walltime, step, value], got %s"
                            % (key, type(records).__name__))
        rows = []
        for record in records:
            if not isinstance(record, (list, tuple)) or len(record) != 3:
                raise ValueError("scalar_dict[%r] holds %r, not a [walltime, step, value] record" % (key, record))
            rows.append(scalar_record(*record))
        clean[key] = rows
    return json.dumps(clean)
