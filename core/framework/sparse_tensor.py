"""``tf.SparseTensor``: a sparse tensor as three dense tensors (TF's COO form), what ``embedding_lookup_sparse``
takes as ids and weights.

``indices`` is an int64 ``[N, rank]`` matrix of coordinates (in row-major order), ``values`` the ``[N]`` entries at
those coordinates and ``dense_shape`` the int64 ``[rank]`` shape of the dense tensor it stands for. As in TF, the
three are built under a ``SparseTensor`` name scope (``SparseTensor/indices``, ``SparseTensor/dense_shape``).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from . import dtypes
from .graph import Tensor, name_scope
from .tensor_shape import TensorShape
from .registry import constant_value, convert_to_tensor

__all__ = ["SparseTensor", "SparseTensorValue"]


class SparseTensorValue(NamedTuple):
    """A SparseTensor's numpy value (what ``Session.run`` of its three parts gives)."""
    indices: np.ndarray
    values: np.ndarray
    dense_shape: np.ndarray


class SparseTensor:
    """A sparse tensor: ``values[i]`` sits at coordinates ``indices[i]`` of a tensor shaped ``dense_shape``."""

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        with name_scope(None, "SparseTensor"):
            self._indices = _int64(indices, "indices")
            self._values = convert_to_tensor(values, name="values")
            self._dense_shape = _int64(dense_shape, "dense_shape")
        ind, val, shp = self._indices.shape, self._values.shape, self._dense_shape.shape
        if ind.ndims is not None and ind.ndims != 2:
            raise ValueError("SparseTensor indices must be a [N, rank] matrix, got shape %s" % ind)
        if val.ndims is not None and val.ndims != 1:
            raise ValueError("SparseTensor values must be a vector, got shape %s" % val)
        if shp.ndims is not None and shp.ndims != 1:
            raise ValueError("SparseTensor dense_shape must be a vector, got shape %s" % shp)
        n_ind = ind.dims[0] if ind.dims is not None else None
        n_val = val.dims[0] if val.dims is not None else None
        if n_ind is not None and n_val is not None and n_ind != n_val:
            raise ValueError("SparseTensor has %d indices but %d values" % (n_ind, n_val))
        rank = ind.dims[1] if ind.dims is not None else None
        if rank is not None and shp.dims is not None and shp.dims[0] is not None and rank != shp.dims[0]:
            raise ValueError("SparseTensor indices have rank %d but dense_shape has %d entries"
                             % (rank, shp.dims[0]))

    @classmethod
    def from_value(cls, value: SparseTensorValue) -> "SparseTensor":
        return cls(value.indices, value.values, value.dense_shape)

    indices = property(lambda self: self._indices, doc="int64 [N, rank] coordinates")
    values = property(lambda self: self._values, doc="[N] values")
    dense_shape = property(lambda self: self._dense_shape, doc="int64 [rank] shape")
    dtype = property(lambda self: self._values.dtype)
    graph = property(lambda self: self._values.graph)
    op = property(lambda self: self._values.op)

    def get_shape(self) -> TensorShape:
        """The static dense shape (known entries of a constant ``dense_shape``)."""
        value = constant_value(self._dense_shape)
        if value is not None:
            return TensorShape([int(d) for d in value])
        n = self._dense_shape.shape.dims[0] if self._dense_shape.shape.dims else None
        return TensorShape(None if n is None else [None] * n)

    shape = property(get_shape)

    def __repr__(self) -> str:
        return "SparseTensor(indices=%r, values=%r, dense_shape=%r)" % (self._indices, self._values,
                                                                        self._dense_shape)


def _int64(x: Any, name: str) -> Tensor:
    if isinstance(x, Tensor):
        if x.dtype is not dtypes.int64:
            raise TypeError("SparseTensor %s must be int64, got %s (%r)" % (name, x.dtype.name, x))
        return x
    return convert_to_tensor(np.asarray(x, dtype=np.int64), name=name)
