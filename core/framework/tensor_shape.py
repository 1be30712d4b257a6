"""Static shapes as TF1 has them: ``TensorShape`` (unknown rank, or dims known or None) and ``Dimension`` (a known
dimension: an int with TF1's ``.value``)."""
from __future__ import annotations

from typing import Any, Optional


class Dimension(int):
    """A known dimension: an int that also has TF1's ``.value`` (unknown dimensions are None)."""

    __slots__ = ()

    @property
    def value(self) -> int:
        return int(self)

    def __repr__(self) -> str:
        return "Dimension(%d)" % int(self)


def _dim(d):
    return None if d is None else Dimension(d)


class TensorShape:
    """A static shape: ``dims`` is a tuple of int-or-None, or None when even the rank is unknown."""

    __slots__ = ("dims",)

    def __init__(self, dims: Any = None):
        if isinstance(dims, TensorShape):
            dims = dims.dims
        elif dims is not None:
            if isinstance(dims, (int,)) or hasattr(dims, "__index__") and not hasattr(dims, "__len__"):
                dims = (dims,)
            dims = tuple(None if d is None or (isinstance(d, int) and d < 0) else int(d) for d in dims)
        self.dims = dims

    @property
    def ndims(self) -> Optional[int]:
        return None if self.dims is None else len(self.dims)

    rank = ndims

    def as_list(self) -> list:
        if self.dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self.dims)

    def is_fully_defined(self) -> bool:
        return self.dims is not None and all(d is not None for d in self.dims)

    def num_elements(self) -> Optional[int]:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self.dims:
            n *= d
        return n

    def is_compatible_with(self, other: Any) -> bool:
        other = as_shape(other)
        if self.dims is None or other.dims is None:
            return True
        if len(self.dims) != len(other.dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self.dims, other.dims))

    def merge_with(self, other: Any) -> "TensorShape":
        other = as_shape(other)
        if self.dims is None:
            return other
        if other.dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError("Shapes %s and %s are not compatible" % (self, other))
        return TensorShape([a if a is not None else b for a, b in zip(self.dims, other.dims)])

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError("Shapes %s and %s are incompatible" % (self, other))

    def __len__(self) -> int:
        if self.dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self.dims)

    def __iter__(self):
        if self.dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter([_dim(d) for d in self.dims])

    def __getitem__(self, key):
        if self.dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self.dims[key])
        return _dim(self.dims[key])

    def __eq__(self, other: Any) -> bool:
        try:
            return self.dims == as_shape(other).dims
        except (TypeError, ValueError):
            return NotImplemented

    def __hash__(self):
        return hash(self.dims)

    def __repr__(self) -> str:
        return "TensorShape(%r)" % (None if self.dims is None else list(self.dims))

    def __str__(self) -> str:
        if self.dims is None:
            return "<unknown>"
        return "(" + ", ".join("?" if d is None else str(d) for d in self.dims) + ("," if len(self.dims) == 1 else "") + ")"


def as_shape(shape: Any) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape() -> TensorShape:
    return TensorShape(None)
