"""Nested structures of tensors (lists, tuples, namedtuples, dicts), flattened and rebuilt as TF's ``nest``:
dicts in sorted key order, None is a leaf."""
from __future__ import annotations

from typing import Any, Callable, Iterator, List


def is_nested(x: Any) -> bool:
    return isinstance(x, (list, tuple, dict))


def _children(x: Any) -> list:
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


def flatten(x: Any) -> List[Any]:
    if not is_nested(x):
        return [x]
    out: list = []
    for c in _children(x):
        out.extend(flatten(c))
    return out


def _pack(structure: Any, it: Iterator) -> Any:
    if not is_nested(structure):
        return next(it)
    if isinstance(structure, dict):
        values = {k: _pack(structure[k], it) for k in sorted(structure)}
        return type(structure)((k, values[k]) for k in structure)
    items = [_pack(c, it) for c in structure]
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*items)
    return type(structure)(items)


def pack_sequence_as(structure: Any, flat: List[Any]) -> Any:
    flat = list(flat)
    n = len(flatten(structure))
    if n != len(flat):
        raise ValueError("The structure has %d elements, but the flat sequence has %d" % (n, len(flat)))
    return _pack(structure, iter(flat))


def map_structure(fn: Callable, *structures: Any) -> Any:
    for s in structures[1:]:
        assert_same_structure(structures[0], s)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)])


def assert_same_structure(a: Any, b: Any) -> None:
    if is_nested(a) != is_nested(b):
        raise ValueError("The two structures don't have the same nested structure: %r and %r" % (a, b))
    if not is_nested(a):
        return
    if isinstance(a, dict) != isinstance(b, dict) or (isinstance(a, dict) and sorted(a) != sorted(b)):
        raise ValueError("The two structures don't have the same keys: %r and %r" % (a, b))
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        raise ValueError("The two structures don't have the same number of elements: %d and %d"
                         % (len(ca), len(cb)))
    for x, y in zip(ca, cb):
        assert_same_structure(x, y)
