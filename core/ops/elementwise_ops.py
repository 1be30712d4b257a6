"""Elementwise math (trigonometric, hyperbolic, special functions, predicates, integer division): tf.<name>.

Names in ``__all__`` are exported as ``tf.<name>``."""
from __future__ import annotations

__all__: list = []
