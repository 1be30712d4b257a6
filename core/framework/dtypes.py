"""TF data types: a DType wraps a numpy dtype and the DataType enum of types.proto."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from tfevents.proto import types_pb2


class DType:
    """A TensorFlow dtype (``tf.float32`` ...): name, numpy dtype and DataType enum."""

    __slots__ = ("name", "as_numpy_dtype", "as_datatype_enum")

    def __init__(self, name: str, np_dtype: Any, enum: int):
        self.name = name
        self.as_numpy_dtype = np_dtype
        self.as_datatype_enum = enum

    @property
    def is_floating(self) -> bool:
        return self.name in ("float16", "float32", "float64")

    @property
    def is_integer(self) -> bool:
        return self.name in ("int32", "int64", "uint8")

    @property
    def is_bool(self) -> bool:
        return self.name == "bool"

    @property
    def base_dtype(self) -> "DType":
        return self

    @property
    def real_dtype(self) -> "DType":
        return self

    @property
    def size(self) -> int:
        return 0 if self.name == "string" else np.dtype(self.as_numpy_dtype).itemsize

    @property
    def min(self):
        return np.finfo(self.as_numpy_dtype).min if self.is_floating else np.iinfo(self.as_numpy_dtype).min

    @property
    def max(self):
        return np.finfo(self.as_numpy_dtype).max if self.is_floating else np.iinfo(self.as_numpy_dtype).max

    def is_compatible_with(self, other) -> bool:
        return as_dtype(other) is self

    def __repr__(self) -> str:
        return "tf." + self.name

    def __reduce__(self):
        return as_dtype, (self.name,)


float16 = half = DType("float16", np.float16, types_pb2.DT_HALF)
float32 = DType("float32", np.float32, types_pb2.DT_FLOAT)
float64 = double = DType("float64", np.float64, types_pb2.DT_DOUBLE)
int32 = DType("int32", np.int32, types_pb2.DT_INT32)
int64 = DType("int64", np.int64, types_pb2.DT_INT64)
uint8 = DType("uint8", np.uint8, types_pb2.DT_UINT8)
bool = DType("bool", np.bool_, types_pb2.DT_BOOL)  # noqa: A001 - TF's public name
string = DType("string", np.object_, types_pb2.DT_STRING)
resource = DType("resource", np.object_, types_pb2.DT_RESOURCE)   # handles: stacks, TensorArrays

_ALL = (float16, float32, float64, int32, int64, uint8, bool, string, resource)
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update(half=float16, double=float64, float=float32)
_BY_ENUM = {d.as_datatype_enum: d for d in _ALL}
_BY_NP = {np.dtype(d.as_numpy_dtype): d for d in _ALL if d not in (string, resource)}


def as_dtype(value: Any) -> DType:
    """Convert a DType, name, numpy dtype, Python type or DataType enum to a DType."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        if value in _BY_NAME:
            return _BY_NAME[value]
        raise TypeError("Cannot convert %r to a tf dtype" % value)
    if isinstance(value, builtins.int) and value in _BY_ENUM:
        return _BY_ENUM[value]
    if value is float:
        return float32
    if value is int:
        return int32
    if value is builtins.bool:
        return bool
    if value in (str, bytes, np.str_, np.bytes_, np.object_):
        return string
    try:
        npd = np.dtype(value)
    except TypeError:
        raise TypeError("Cannot convert %r to a tf dtype" % (value,)) from None
    if npd.kind in "SUO":
        return string
    if npd in _BY_NP:
        return _BY_NP[npd]
    raise TypeError("Unsupported dtype %r" % (value,))


def numpy_dtype_to_tf(npd: np.dtype) -> DType:
    """DType of a numpy array (int64 and float64 stay 64-bit, as in TF)."""
    if npd.kind in "SUO":
        return string
    return _BY_NP[npd]
