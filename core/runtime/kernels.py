"""Kernels the runtime and the ops share.

- ``load_kernels()``: the optional C extension ``tfevents.core.runtime._kernels`` (``_kernels.c``: fused optimizer
  updates, relu and its gradient, im2col/col2im, the max-pool gradient, denormal flushing), or ``None`` when it is not
  built or ``TFEVENTS_CORE_KERNELS=0`` is set. Every op using it has a numpy fallback giving the same numbers.
- ``MATMULS``: ``MatMul``'s numpy kernel per (transpose_a, transpose_b), used by the op and by the plan's fused
  gemm accumulation.
"""
from __future__ import annotations

import os
from types import ModuleType
from typing import Optional

import numpy as np


def load_kernels() -> Optional[ModuleType]:
    """The C kernels module, or None (not built, or turned off by ``TFEVENTS_CORE_KERNELS=0``)."""
    if os.environ.get("TFEVENTS_CORE_KERNELS", "1") == "0":
        return None
    try:
        from . import _kernels  # lazy: an optional compiled extension
    except ImportError:
        return None
    return _kernels


def _matmul_transpose_b(a, b):
    """``a @ b.T``; with fewer rows in ``a`` than in ``b`` (a gradient through a weight), as ``(b @ a.T).T``:
    OpenBLAS runs that product 1.1-1.6x faster (measured for 20-64 x 100-800 by 300-800, e.g. an RNN step)."""
    if a.ndim == 2 and b.ndim == 2 and a.shape[0] < b.shape[0]:
        return np.matmul(b, a.T).T
    return np.matmul(a, b.T)


MATMULS = {(False, False): np.matmul,
           (False, True): _matmul_transpose_b,
           (True, False): lambda a, b: np.matmul(a.T, b),
           (True, True): lambda a, b: np.matmul(a.T, b.T)}
