"""Gradient clipping as differentiable graph ops (TF1 ``clip_ops``). ``IndexedSlices`` are clipped on their
values and stay sparse; ``None`` entries of a list pass through.

- ``clip_by_value(t, lo, hi) = maximum(minimum(t, hi), lo)``
- ``clip_by_norm(t, c, axes) = t * c / max(||t||_axes, c)`` (a zero norm gives a zero-safe gradient)
- ``clip_by_average_norm(t, c) = t * c * min(size(t) / ||t||, 1 / c)``
- ``global_norm(ts) = sqrt(sum_i ||t_i||**2)``
- ``clip_by_global_norm(ts, c) = ([t * c / max(global_norm, c)], global_norm)``; a non-finite norm makes
  every output NaN (TF's ``scale + (norm - norm)``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from ..framework import dtypes
from ..framework.graph import Tensor, name_scope
from . import array_ops, math_ops, reduction_ops, nn_ops
from ..framework.registry import IndexedSlices, constant, convert_to_tensor


def _values(t: Any, name: str = "t") -> Tensor:
    return convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=name)


def _like(t: Any, values: Tensor) -> Any:
    return IndexedSlices(values, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else values


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: Optional[str] = None) -> Any:
    """Elementwise ``min(max(t, clip_value_min), clip_value_max)``."""
    with name_scope(name, "clip_by_value") as scope:
        values = _values(t)
        t_min = math_ops.minimum(values, clip_value_max)
        values.shape.assert_is_compatible_with(t_min.shape)
        t_max = math_ops.maximum(t_min, clip_value_min, name=scope)
        values.shape.assert_is_compatible_with(t_max.shape)
        return _like(t, t_max)


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: Optional[str] = None) -> Any:
    """``t * clip_norm / max(l2norm(t, axes), clip_norm)``."""
    with name_scope(name, "clip_by_norm") as scope:
        values = _values(t)
        l2sum = reduction_ops.reduce_sum(values * values, axes, keepdims=True)
        pred = l2sum > 0
        l2sum_safe = math_ops.where(pred, l2sum, array_ops.ones_like(l2sum))     # NaN-free gradient at 0
        l2norm = math_ops.where(pred, math_ops.sqrt(l2sum_safe), l2sum)
        intermediate = values * clip_norm
        values.shape.assert_is_compatible_with(intermediate.shape)
        clipped = array_ops.identity(intermediate / math_ops.maximum(l2norm, clip_norm), name=scope)
        return _like(t, clipped)


def clip_by_average_norm(t: Any, clip_norm: Any, name: Optional[str] = None) -> Tensor:
    """``t * clip_norm * min(size(t) / l2norm(t), 1 / clip_norm)``: clips the norm divided by the size."""
    with name_scope(name, "clip_by_average_norm") as scope:
        t = convert_to_tensor(t, name="t")
        n_element = math_ops.cast(array_ops.size(t), dtypes.float32)
        l2norm_inv = math_ops.rsqrt(reduction_ops.reduce_sum(t * t, array_ops.range_(0, array_ops.rank(t))))
        return array_ops.identity(t * clip_norm * math_ops.minimum(l2norm_inv * n_element,
                                                                   constant(1.0) / clip_norm), name=scope)


def _check_list(t_list: Any) -> list:
    if not isinstance(t_list, Sequence) or isinstance(t_list, str):
        raise TypeError("`t_list` should be a sequence of tensors. Received %s." % type(t_list))
    return list(t_list)


def global_norm(t_list: Sequence, name: Optional[str] = None) -> Tensor:
    """``sqrt(sum(l2norm(t)**2 for t in t_list))``, skipping None entries."""
    t_list = _check_list(t_list)
    with name_scope(name, "global_norm"):
        values = [_values(t, "t_%d" % i) if t is not None else None for i, t in enumerate(t_list)]
        half_squared_norms = [nn_ops.l2_loss(v) for v in values if v is not None]
        if not half_squared_norms:
            raise ValueError("global_norm needs at least one tensor that is not None")
        half_squared_norm = reduction_ops.reduce_sum(array_ops.stack(half_squared_norms))
        return math_ops.sqrt(half_squared_norm * constant(2.0, dtype=half_squared_norm.dtype),
                             name="global_norm")


def clip_by_global_norm(t_list: Sequence, clip_norm: Any, use_norm: Optional[Tensor] = None,
                        name: Optional[str] = None) -> tuple:
    """``([t * clip_norm / max(global_norm, clip_norm) for t in t_list], global_norm)``."""
    t_list = _check_list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    with name_scope(name, "clip_by_global_norm") as scope:
        use_norm = convert_to_tensor(use_norm)
        scale_for_finite = clip_norm * math_ops.minimum(1.0 / use_norm,
                                                        constant(1.0, dtype=use_norm.dtype) / clip_norm)
        scale = scale_for_finite + (use_norm - use_norm)     # NaN when the norm is inf or NaN
        clipped = []
        for i, t in enumerate(t_list):
            if t is None:
                clipped.append(None)
                continue
            v = _values(t, "t_%d" % i)
            clipped.append(_like(t, array_ops.identity(v * scale, name="%s_%d" % (scope, i))))
        return clipped, use_norm
