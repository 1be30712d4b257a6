"""Linear algebra: eye, diag, matrix ops, cholesky, trace, tensordot, einsum, norm.

Names in ``__all__`` are exported as ``tf.<name>``."""
from __future__ import annotations

__all__: list = []
