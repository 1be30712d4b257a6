"""The API's answers as JSON: strict (no NaN literals; non-finite numbers as ``json_number`` gives them) and with
``<``, ``>`` and ``&`` escaped, so no name in them can read as markup."""
from __future__ import annotations

import json
import math

import numpy as np
from starlette.responses import Response

__all__ = ["json_number", "json_list", "json_response"]


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


def json_response(content, status: int = 200) -> Response:
    """``content`` as strict JSON (no NaN literals), ``<>&`` escaped so no name can read as markup."""
    text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Response(text.encode("utf-8"), status, media_type="application/json",
                    headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"})
