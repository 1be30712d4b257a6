"""Op families; importing this package registers every op (forward, gradient, TF name)."""
from . import math_ops, array_ops, nn_ops, state_ops, random_ops  # noqa: F401
