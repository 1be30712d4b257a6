"""Argument normalization shared by the conv and pooling layers (Keras's ``conv_utils``)."""
from __future__ import annotations

from typing import Any


def normalize_tuple(value: Any, n: int, name: str) -> tuple:
    """An int or an iterable of ``n`` ints -> a tuple of ``n`` ints (ValueError otherwise)."""
    if isinstance(value, int):
        return (value,) * n
    try:
        values = tuple(value)
    except TypeError:
        raise ValueError("The `%s` argument must be a tuple of %d integers. Received: %s" % (name, n, value))
    if len(values) != n or not all(isinstance(v, int) or hasattr(v, "__index__") for v in values):
        raise ValueError("The `%s` argument must be a tuple of %d integers. Received: %s" % (name, n, value))
    return tuple(int(v) for v in values)


def normalize_padding(value: Any, allow_causal: bool = False) -> str:
    padding = value.lower() if isinstance(value, str) else value
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if padding not in allowed:
        raise ValueError("The `padding` argument must be a list/tuple or one of %s. Received: %s"
                         % (", ".join('"%s"' % a for a in allowed), value))
    return padding


def normalize_data_format(value: Any) -> str:
    data_format = value.lower() if isinstance(value, str) else value
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError('The `data_format` argument must be one of "channels_first", "channels_last". '
                         "Received: %s" % value)
    return data_format


def tf_data_format(data_format: str, ndim: int) -> str:
    """``channels_last``/``channels_first`` -> ``NWC``/``NCW``, ``NHWC``/``NCHW`` for ``ndim`` 3/4."""
    spatial = {3: "W", 4: "HW"}[ndim]
    return "N" + spatial + "C" if data_format == "channels_last" else "NC" + spatial


def check_ndim(layer: Any, inputs: Any, ndim: int) -> None:
    """Keras's ``InputSpec(ndim=...)`` check."""
    rank = inputs.shape.ndims
    if rank is not None and rank != ndim:
        raise ValueError("Input 0 of layer \"%s\" is incompatible with the layer: expected ndim=%d, found "
                         "ndim=%d. Full shape received: %s" % (layer.name, ndim, rank, inputs.shape))
