"""TF's error classes (``tf.errors``): each carries the Operation that failed (``node_def`` / ``op``)."""
from __future__ import annotations

from typing import Any


class OpError(Exception):
    """An error raised while running an op; ``op`` is the Operation (or None), ``message`` the text."""

    error_code = 2

    def __init__(self, op: Any, message: str):
        super().__init__(message)
        self.op = op
        self.message = message

    @property
    def node_def(self):
        return None if self.op is None else self.op.node_def


class CancelledError(OpError):
    error_code = 1


class UnknownError(OpError):
    error_code = 2


class InvalidArgumentError(OpError):
    error_code = 3


class NotFoundError(OpError):
    error_code = 5


class AlreadyExistsError(OpError):
    error_code = 6


class ResourceExhaustedError(OpError):
    error_code = 8


class FailedPreconditionError(OpError):
    error_code = 9


class OutOfRangeError(OpError):
    error_code = 11


class UnimplementedError(OpError):
    error_code = 12


class InternalError(OpError):
    error_code = 13


class DataLossError(OpError):
    error_code = 15
