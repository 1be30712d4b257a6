"""The API's answers as JSON: strict (no NaN literals; non-finite numbers as ``json_number`` gives them) and with
``<``, ``>`` and ``&`` escaped, so no name in them can read as markup; and scalar series as binary
(``binary_series_response``), a JSON head before their columns' bytes."""
from __future__ import annotations

import json
import math
import re
import struct
from typing import Dict, List, Sequence, Tuple

import numpy as np
from starlette.responses import Response

__all__ = ["json_number", "json_list", "json_response", "base64_series_response", "binary_series_response",
           "SERIES_DTYPES"]

SERIES_DTYPES = (("step", "<f8"), ("wall_time", "<f8"), ("value", "<f4"))   # a series' columns as bytes: steps
# exact up to 2**53, wall times, values as the loader keeps them (float32)

_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def json_number(x: float):
    """``x`` as JSON can hold it: itself when finite, None for NaN, "Infinity" / "-Infinity" for ±inf."""
    if math.isfinite(x):
        return x
    return None if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def json_list(column: np.ndarray) -> list:
    values = column.tolist()
    if column.dtype.kind == "f" and not np.isfinite(column).all():
        values = [json_number(v) for v in values]
    return values


def _json_text(content) -> str:
    text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _response(text: str, status: int = 200) -> Response:
    return _answer(text.encode("utf-8"), "application/json", status)


def _answer(body: bytes, media_type: str, status: int = 200) -> Response:
    return Response(body, status, media_type=media_type,
                    headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"})


def json_response(content, status: int = 200) -> Response:
    """``content`` as strict JSON (no NaN literals), ``<>&`` escaped so no name can read as markup."""
    return _response(_json_text(content), status)


def base64_series_response(head: Dict[str, object], series: List[Tuple[str, Dict[str, str]]]) -> Response:
    """``{**head, "series": [{"run": run, **columns}, ...]}`` as :func:`json_response` writes it, for columns that
    are base64 text (``app._series`` with ``binary``): put between quotes as they are, since base64's alphabet
    (letters, digits, ``+``, ``/``, ``=``) needs no escaping, instead of json's pass over every character (half
    the time of an answer of 100 series of 1,000 points)."""
    parts = [_json_text(head)[:-1], ',"series":[']
    for i, (run, columns) in enumerate(series):
        parts.append('%s{"run":%s' % ("," if i else "", _json_text(run)))
        for name, text in columns.items():
            if not _BASE64.fullmatch(text):
                raise ValueError("%s is not base64 text" % name)
            parts.append(',%s:"%s"' % (_json_text(name), text))
        parts.append("}")
    parts.append("]}")
    return _response("".join(parts))


def binary_series_response(head: Dict[str, object], series: Sequence[Tuple[str, Sequence[np.ndarray]]]) -> Response:
    """Series ``(run, (step, wall_time, value))`` as one ``application/octet-stream`` answer, read without parsing
    a number or a base64 character (a browser takes typed-array views of it)::

        uint32 LE   H, the head's length in bytes
        H bytes     the head: {**head, "series": [{"run", "points"}, ...], "shared_steps": bool} as json_response
                    writes it (UTF-8)
        0-7 bytes   zeros, up to a multiple of 8 from the start
        S x <f8     every series' steps, one after the other in the head's order; with "shared_steps" (more than
                    one series, all at the same steps: a sweep's) the first series' only, which are every one's
        N x <f8     every series' wall times, likewise (N: the points of all)
        N x <f4     every series' values, likewise"""
    steps = [columns[0] for _, columns in series]
    shared = len(steps) > 1 and all(np.array_equal(steps[0], other) for other in steps[1:])
    content = dict(head, series=[{"run": run, "points": len(columns[0])} for run, columns in series],
                   shared_steps=shared)
    text = _json_text(content).encode("utf-8")
    parts = [struct.pack("<I", len(text)), text, bytes(-(4 + len(text)) % 8)]
    for k, (_, dtype) in enumerate(SERIES_DTYPES):
        parts += [np.ascontiguousarray(columns[k], dtype=dtype).tobytes()
                  for _, columns in (series[:1] if shared and k == 0 else series)]
    return _answer(b"".join(parts), "application/octet-stream")
