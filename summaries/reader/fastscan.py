"""The reader's optional C extension (``_fastscan.c``), loaded once, as ``core/runtime/kernels.py`` is for core's.

``native`` is the compiled module: the scanner behind ``scan.py``'s fast path (framing, checksums and scalar
events in bulk, without the GIL), the wire-format histogram row (``decode.RawHistogram.row``) and the compaction
of a kept histogram (``live/packing.py``). Without a C compiler at install time it is None and every caller takes
its pure-Python path, which the tests hold to the same answers.
"""
from __future__ import annotations

try:
    from . import _fastscan as native
except ImportError:  # built without a C compiler: the pure-Python path reads everything
    native = None

__all__ = ["native", "have_fast_path"]


def have_fast_path() -> bool:
    """Whether the C extension is built (so ``scan.py`` reads in bulk)."""
    return native is not None
