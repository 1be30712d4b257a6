"""What a caller passes to the writer, checked and normalised once: steps, scalar values, wall times, protos.

Each raises TypeError or ValueError naming the argument and what it got, in the call (never on the writer's
thread).
"""
from __future__ import annotations

import math
import operator
import time
from typing import Any

__all__ = ["as_step", "as_scalar_value", "as_walltime", "message_bytes"]

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def as_step(step: Any) -> int:
    """``global_step`` as an int64: ints, numpy/torch integers, whole finite floats; None is 0."""
    if step is None:
        return 0
    try:
        n = operator.index(step)
    except TypeError:
        if isinstance(step, (str, bytes)):
            raise TypeError("global_step must be an integer, got %s %r" % (type(step).__name__, step)) from None
        try:
            f = float(step)
        except (TypeError, ValueError):
            raise TypeError("global_step must be an integer, got %s" % type(step).__name__) from None
        if not math.isfinite(f):
            raise ValueError("global_step must be a finite integer, got %r" % (f,)) from None
        if not f.is_integer():
            raise ValueError("global_step must be a whole number, got %r" % (f,)) from None
        n = int(f)
    if not _INT64_MIN <= n <= _INT64_MAX:
        raise ValueError("global_step %d is outside the int64 range" % n)
    return n


def as_scalar_value(value: Any, tag: str) -> float:
    """A scalar as a Python float: numbers, numpy scalars, 0-d (one-element) arrays and tensors."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError("add_scalar(%r): value must be a number, got %s" % (tag, type(value).__name__))
    try:
        return float(value)
    except (TypeError, ValueError):
        pass
    try:   # a one-element array of rank >= 1 (numpy 2 refuses float() on it)
        return float(value.item())
    except (AttributeError, TypeError, ValueError, RuntimeError):
        shape = getattr(value, "shape", None)
        raise TypeError("add_scalar(%r): value must be a real number or a one-element array/tensor, got %s%s"
                        % (tag, type(value).__name__, "" if shape is None else " of shape %s" % (tuple(shape),))
                        ) from None


def as_walltime(walltime: Any) -> float:
    if walltime is None:
        return time.time()
    if isinstance(walltime, (str, bytes)):
        raise TypeError("walltime must be seconds since the epoch (a number), got %s %r"
                        % (type(walltime).__name__, walltime))
    try:
        return float(walltime)
    except (TypeError, ValueError):
        raise TypeError("walltime must be seconds since the epoch (a number), got %s"
                        % type(walltime).__name__) from None


def message_bytes(message: Any, what: str, expected: str) -> bytes:
    """Bytes of a proto (ours, TensorBoard's or TensorFlow's) of type ``expected``, or of bytes given."""
    if isinstance(message, (bytes, bytearray, memoryview)):
        return bytes(message)
    descriptor = getattr(message, "DESCRIPTOR", None)
    if descriptor is None or not hasattr(message, "SerializeToString"):
        raise TypeError("%s must be a %s proto or its serialized bytes, got %s"
                        % (what, expected, type(message).__name__))
    if descriptor.name != expected:
        raise TypeError("%s must be a %s, got a %s" % (what, expected, descriptor.full_name))
    return message.SerializeToString()
