"""The optional C extension ``tfevents.core.runtime._kernels`` (``_kernels.c``: fused optimizer updates, relu and its
gradient, im2col/col2im, the max-pool gradient), loaded once; ``None`` when it is not built or
``TFEVENTS_CORE_KERNELS=0`` is set. Every op using it has a numpy fallback giving the same numbers."""
from __future__ import annotations

import os
from types import ModuleType
from typing import Optional


def load_kernels() -> Optional[ModuleType]:
    """The C kernels module, or None (not built, or turned off by ``TFEVENTS_CORE_KERNELS=0``)."""
    if os.environ.get("TFEVENTS_CORE_KERNELS", "1") == "0":
        return None
    try:
        from . import _kernels  # lazy: an optional compiled extension
    except ImportError:
        return None
    return _kernels
