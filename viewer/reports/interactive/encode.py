"""How the interactive report carries its data: one binary buffer of typed arrays (each 8-byte aligned, so
the page views them in place with no copy), zlib-compressed when large, written as base64, plus a JSON
document that names each array by ``[dtype, byte offset, length]``. Both go into non-executed
``<script type="application/...">`` blocks."""
from __future__ import annotations

import base64
import json
import zlib
from typing import Any, Dict, List, Mapping, Optional

import numpy as np

_FLOAT32_MAX = float(np.finfo(np.float32).max)
COMPRESS_ABOVE = 64 * 1024   # smaller buffers are not worth an asynchronous inflate in the page

# numpy dtype -> the page's TypedArray name (report.js ``ARRAYS``)
DTYPES = {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32", np.dtype(np.int32): "i32",
          np.dtype(np.uint8): "u8"}


class Blob:
    """Typed arrays packed into one little-endian buffer; ``add`` returns the reference the page decodes."""

    def __init__(self) -> None:
        self._parts: List[bytes] = []
        self._size = 0

    def add(self, array: Any, dtype: Any = None) -> list:
        """Append ``array`` (converted to ``dtype``) and return ``[dtype name, offset, length]``."""
        arr = np.ascontiguousarray(np.asarray(array, dtype=dtype)).ravel()
        if arr.dtype not in DTYPES:
            raise TypeError("the report cannot embed arrays of dtype %s" % arr.dtype)
        arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        ref = [DTYPES[arr.dtype], self._size, int(arr.size)]
        data = arr.tobytes()
        self._parts.append(data)
        self._size += len(data)
        pad = (-self._size) % 8
        if pad:
            self._parts.append(b"\0" * pad)
            self._size += pad
        return ref

    def add_values(self, values: Any) -> list:
        """Float values as float32 when that loses nothing (event files store scalars as float32), else
        float64."""
        v = np.asarray(values, dtype=np.float64)
        f32 = v.astype(np.float32)
        with np.errstate(invalid="ignore"):
            exact = np.array_equal(f32.astype(np.float64), v, equal_nan=True)
        return self.add(f32 if exact else v)

    def add_steps(self, steps: Any) -> list:
        """Integer steps as int32 when they fit, else float64 (exact up to 2**53)."""
        s = np.asarray(steps)
        if s.size == 0 or (np.issubdtype(s.dtype, np.integer) and s.min() >= -2**31 and s.max() < 2**31):
            return self.add(s, np.int32)
        return self.add(s, np.float64)

    def encoded(self) -> tuple:
        """``(base64 text, encoding)``: a buffer over ``COMPRESS_ABOVE`` bytes is zlib-compressed
        (``"deflate"``, which the page inflates with the browser's DecompressionStream), else ``"raw"``."""
        data = b"".join(self._parts)
        if len(data) > COMPRESS_ABOVE:
            return base64.b64encode(zlib.compress(data, 6)).decode("ascii"), "deflate"
        return base64.b64encode(data).decode("ascii"), "raw"

    @property
    def size(self) -> int:
        return self._size


def script_json(document: Any) -> str:
    """JSON safe to place inside ``<script type="application/json">``: no ``<`` (so no ``</script>`` or
    ``<!--`` can end or change the block), no bare NaN/Infinity (the page's JSON.parse rejects them)."""
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                      default=_default)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    raise TypeError("the report cannot embed a %s" % type(value).__name__)


def finite_or_none(value: Any) -> Any:
    """A JSON-safe number: NaN and infinities become their names as strings (JSON has no literal for them)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    try:
        f = float(value)
    except (TypeError, ValueError):
        return str(value)
    if f != f:
        return "NaN"
    if f in (float("inf"), float("-inf")):
        return "Infinity" if f > 0 else "-Infinity"
    return f


def short_number(value: Any) -> Optional[float]:
    """A finite number in the fewest JSON digits that read back as the same float32 when it is one (what event files
    store: ``0.1f`` as ``0.1``, not ``0.10000000149011612``), else as itself; None for None, NaN or an infinity."""
    if value is None:
        return None
    f = float(value)
    if not np.isfinite(f):
        return None
    if abs(f) > _FLOAT32_MAX:
        return f
    single = np.float32(f)
    return float(str(single)) if float(single) == f else f


def short_numbers(values: Any) -> List[Optional[float]]:
    """:func:`short_number` of each of ``values`` (NaN for None), in a few array operations: numpy's ``astype(str)``
    writes each float32 in its shortest digits (Dragon4, as ``str(np.float32(x))``) in C, ~3x sooner than one
    call a value."""
    f = np.asarray(values, dtype=np.float64)
    out: List[Optional[float]] = f.tolist()
    finite = np.isfinite(f)
    with np.errstate(over="ignore"):
        single = f.astype(np.float32)
    exact = finite & (single.astype(np.float64) == f)   # (beyond float32's range the cast is inf: not equal)
    for i in np.flatnonzero(~finite).tolist():
        out[i] = None
    at = np.flatnonzero(exact).tolist()
    for i, text in zip(at, single[at].astype(str).tolist()):
        out[i] = float(text)
    return out


def run_entry(name: str, color: str, hparams: Mapping[str, Any], stats: Optional[Dict[str, list]],
              info: Any = None) -> Dict[str, Any]:
    """A run of the page's list (report and served dashboard alike): its name and colour, its ``hparams`` when it
    logged any, ``stats``: per scalar tag ``[last, min, max]`` (:func:`short_number`s), which the run list sorts
    by, and its ``labels`` and ``notes`` when it has any (``info``: its ``tfevents.summaries.run_info.RunInfo``)."""
    entry: Dict[str, Any] = {"name": name, "color": color}
    if info is not None and info.labels:
        entry["labels"] = list(info.labels)
    if info is not None and info.notes:
        entry["notes"] = info.notes
    if hparams:
        entry["hparams"] = {k: v if isinstance(v, (bool, str)) else short_number(v)
                            if isinstance(v, (int, float, np.number)) else str(v) for k, v in hparams.items()}
    if stats:
        entry["stats"] = stats
    return entry
