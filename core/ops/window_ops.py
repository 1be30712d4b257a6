"""Window geometry shared by the convolution and pooling ops (core/ops/conv_ops.py, pool_ops.py): TF's output
sizes and SAME padding, im2col/col2im (C kernels with a numpy fallback), the argument normalisation of the
tf.nn wrappers, and the SpaceToBatchND/BatchToSpaceND ops with TF's ``with_space_to_batch`` composite that
dilated convolutions and pools are built from. Nothing here is exported as ``tf.nn.*``."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..framework import errors
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, constant, constant_shape, constant_value, convert_to_tensor, register
from ..runtime.kernels import load_kernels

__all__: list = []

_kernels = load_kernels()
_c_im2col = getattr(_kernels, "im2col", None)     # None when the kernels are not built (or older)
_c_col2im = getattr(_kernels, "col2im", None)


# ---------------------------------------------------------------------------------------------------------
# geometry (shared with pool_ops)


def output_size(size: Optional[int], k: int, stride: int, dilation: int, padding: str,
                pads: Sequence[int] = (0, 0)) -> tuple:
    """``(out, pad_before, pad_after)`` along one spatial dim (``out`` None when ``size`` is).

    SAME: ``out = ceil(size / stride)``, ``pad_total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)``
    with the extra padding at the end; VALID: no padding; EXPLICIT: ``pads``."""
    eff = (k - 1) * dilation + 1
    if size is None:
        return None, None, None
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + eff - size, 0)
        return out, total // 2, total - total // 2
    before, after = (0, 0) if padding == "VALID" else (int(pads[0]), int(pads[1]))
    out = (size + before + after - eff) // stride + 1
    if out < 0 or size + before + after - eff < 0:
        raise ValueError("Computed output size would be negative: %d [input_size: %d, effective_filter_size: %d, "
                         "stride: %d]" % ((size + before + after - eff) // stride + 1, size, eff, stride))
    return out, before, after


def spatial(values: Sequence[int], data_format: str) -> tuple:
    """The (H, W) entries of a 4-entry ``strides``/``ksize``/``dilations`` attr in ``data_format``."""
    return (values[2], values[3]) if data_format.startswith("NC") else (values[1], values[2])


def explicit_pads(explicit_paddings: Sequence[int], data_format: str) -> tuple:
    """((top, bottom), (left, right)) from the flat 8-entry ``explicit_paddings`` attr."""
    if not explicit_paddings:
        return (0, 0), (0, 0)
    p = [int(v) for v in explicit_paddings]
    h = 2 if data_format.startswith("NC") else 1
    return (p[2 * h], p[2 * h + 1]), (p[2 * h + 2], p[2 * h + 3])


class Geometry:
    """One 2-D window op on an NHWC input: kernel, strides, dilations, padding and the output size."""

    __slots__ = ("kh", "kw", "sh", "sw", "dh", "dw", "oh", "ow", "pt", "pb", "pl", "pr", "h", "w")

    def __init__(self, h, w, kh, kw, strides, dilations, padding, explicit):
        self.h, self.w, self.kh, self.kw = h, w, kh, kw
        (self.sh, self.sw), (self.dh, self.dw) = strides, dilations
        (ph, pw) = explicit
        self.oh, self.pt, self.pb = output_size(h, kh, self.sh, self.dh, padding, ph)
        self.ow, self.pl, self.pr = output_size(w, kw, self.sw, self.dw, padding, pw)

    @classmethod
    def of(cls, in_shape_nhwc, kh, kw, attrs: dict) -> "Geometry":
        """The geometry of a conv op from its attrs; TF builds strides/dilations in the batch or depth
        dimension into the graph and fails when the op runs, so does this."""
        fmt = attrs.get("data_format", "NHWC")
        ci = 1 if fmt.startswith("NC") else 3
        for name in ("strides", "dilations"):
            v = attrs.get(name) or (1, 1, 1, 1)
            if v[0] != 1 or v[ci] != 1:
                raise errors.UnimplementedError(
                    None, "Current implementation does not yet support %s in the batch and depth "
                    "dimensions." % name)
        return cls(in_shape_nhwc[1], in_shape_nhwc[2], kh, kw, spatial(attrs["strides"], fmt),
                   spatial(attrs.get("dilations") or (1, 1, 1, 1), fmt), attrs["padding"],
                   explicit_pads(attrs.get("explicit_paddings", ()), fmt))

    @property
    def padded(self) -> bool:
        return bool(self.pt or self.pb or self.pl or self.pr)


def to_nhwc(x: np.ndarray, data_format: str) -> np.ndarray:
    return x.transpose(0, 2, 3, 1) if data_format.startswith("NC") else x


def from_nhwc(x: np.ndarray, data_format: str) -> np.ndarray:
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2)) if data_format.startswith("NC") else x


def nhwc_shape(shape: Sequence[int], data_format: str) -> tuple:
    n, a, b, c = (int(d) for d in shape)
    return (n, b, c, a) if data_format.startswith("NC") else (n, a, b, c)


def pad(x: np.ndarray, g: Geometry, value: float = 0) -> np.ndarray:
    """``x`` (NHWC) with ``g``'s spatial padding filled with ``value``; ``x`` itself when there is none."""
    if not g.padded:
        return x
    n, h, w, c = x.shape
    out = np.full((n, h + g.pt + g.pb, w + g.pl + g.pr, c), value, x.dtype)
    out[:, g.pt:g.pt + h, g.pl:g.pl + w] = x
    return out


def windows(xp: np.ndarray, g: Geometry) -> np.ndarray:
    """Read-only strided view ``[N, OH, OW, KH, KW, C]`` of the windows of the padded input ``xp``."""
    n, _, _, c = xp.shape
    s = xp.strides
    return np.lib.stride_tricks.as_strided(
        xp, (n, g.oh, g.ow, g.kh, g.kw, c),
        (s[0], s[1] * g.sh, s[2] * g.sw, s[1] * g.dh, s[2] * g.dw, s[3]), writeable=False)


def offset_slices(g: Geometry, i: int, j: int) -> tuple:
    """The strided slice of the padded input that kernel offset (i, j) reads for every output pixel."""
    return (slice(None), slice(i * g.dh, i * g.dh + (g.oh - 1) * g.sh + 1, g.sh),
            slice(j * g.dw, j * g.dw + (g.ow - 1) * g.sw + 1, g.sw))


def _c_geometry(g: Geometry) -> tuple:
    return (g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.pt, g.pl, g.oh, g.ow)


def im2col(x: np.ndarray, g: Geometry) -> np.ndarray:
    """The patches of NHWC ``x`` as a C-contiguous ``[N, OH, OW, KH, KW, C]`` array (zeros where padded)."""
    n, h, w, c = x.shape
    if g.kh == g.kw == g.sh == g.sw == 1 and not g.padded:
        return np.ascontiguousarray(x).reshape(n, h, w, 1, 1, c)
    cols = np.empty((n, g.oh, g.ow, g.kh, g.kw, c), x.dtype)
    if _c_im2col is not None and cols.size and _c_im2col(np.ascontiguousarray(x), cols, *_c_geometry(g)):
        return cols
    cols[...] = windows(pad(x, g), g)
    return cols


def col2im(cols: np.ndarray, g: Geometry, shape: Sequence[int]) -> np.ndarray:
    """Adjoint of ``im2col``: the ``[N, OH, OW, KH, KW, C]`` patch gradients summed into an NHWC array."""
    n, h, w, c = shape
    if g.kh == g.kw == g.sh == g.sw == 1 and not g.padded:
        return cols.reshape(n, h, w, c)
    cols = np.ascontiguousarray(cols)
    if _c_col2im is not None and cols.size:
        out = np.empty((n, h, w, c), cols.dtype)
        if _c_col2im(cols, out, *_c_geometry(g)):
            return out
    xp = np.zeros((n, h + g.pt + g.pb, w + g.pl + g.pr, c), cols.dtype)
    for i in reversed(range(g.kh)):          # last offset first: the C kernel's order of the sums
        for j in reversed(range(g.kw)):
            xp[offset_slices(g, i, j)] += cols[:, :, :, i, j]
    return np.ascontiguousarray(xp[:, g.pt:g.pt + h, g.pl:g.pl + w]) if g.padded else xp


def get_sequence(value: Any, n: int, channel_index: int, name: str) -> list:
    """TF's ``_get_sequence``: an int or ``n`` spatial values become the ``n + 2`` entries of an op attr."""
    if value is None:
        return [1] * (n + 2)
    value = [value] if isinstance(value, (int, np.integer)) else list(value)
    value = [int(v) for v in value]
    if len(value) == n + 2:
        return value
    if len(value) == 1:
        value = value * n
    elif len(value) != n:
        raise ValueError("%s should be of length 1, %d or %d. Received: %s=%s of length %d"
                         % (name, n, n + 2, name, value, len(value)))
    return [1] + value + [1] if channel_index != 1 else [1, 1] + value


def convert_padding(padding: Any, expected_length: int = 4) -> tuple:
    """``(padding, explicit_paddings)``: a list of ``[before, after]`` pairs becomes ``"EXPLICIT"``."""
    if isinstance(padding, (list, tuple)):
        flat = []
        for i, pair in enumerate(padding):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError("When `padding` is a list, each element of `padding` must be a list/tuple of "
                                 "size 2. Received: padding=%s" % (padding,))
            flat.extend(int(p) for p in pair)
        if len(padding) != expected_length:
            raise ValueError("When padding is a list, it must be of size %d. Received: padding=%s of size %d"
                             % (expected_length, padding, len(padding)))
        return "EXPLICIT", flat
    if isinstance(padding, bytes):
        padding = padding.decode()
    if padding not in ("SAME", "VALID"):
        raise ValueError("padding must be 'SAME', 'VALID' or a list of pairs, got %r" % (padding,))
    return padding, []


# ---------------------------------------------------------------------------------------------------------
# SpaceToBatchND / BatchToSpaceND (the dilated composites' wrappers; NHWC-style: batch, spatial..., rest)


def _space_to_batch(x, block_shape, paddings):
    block = [int(b) for b in block_shape]
    pads = np.asarray(paddings, np.int64).reshape(-1, 2)
    m = len(block)
    x = np.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - 1 - m))
    n, rest = x.shape[0], x.shape[1 + m:]
    shape = [n]
    for d, b in enumerate(block):
        shape += [x.shape[1 + d] // b, b]
    x = x.reshape(shape + list(rest))
    perm = [2 + 2 * d for d in range(m)] + [0] + [1 + 2 * d for d in range(m)] + list(range(1 + 2 * m, x.ndim))
    return np.ascontiguousarray(x.transpose(perm)).reshape(
        [n * int(np.prod(block))] + [shape[1 + 2 * d] for d in range(m)] + list(rest))


def _batch_to_space(x, block_shape, crops):
    block = [int(b) for b in block_shape]
    crops = np.asarray(crops, np.int64).reshape(-1, 2)
    m = len(block)
    n = x.shape[0] // int(np.prod(block))
    spatial_dims, rest = x.shape[1:1 + m], x.shape[1 + m:]
    x = x.reshape(block + [n] + list(spatial_dims) + list(rest))
    perm = [m]
    for d in range(m):
        perm += [m + 1 + d, d]
    perm += list(range(2 * m + 1, x.ndim))
    x = x.transpose(perm).reshape([n] + [spatial_dims[d] * block[d] for d in range(m)] + list(rest))
    index = (slice(None),) + tuple(slice(int(c0), x.shape[1 + d] - int(c1)) for d, (c0, c1) in enumerate(crops))
    return np.ascontiguousarray(x[index])


def _s2b_shape(op, sign):
    x = op.inputs[0].shape
    block = constant_shape(op.inputs[1])
    pads = constant_value(op.inputs[2])
    if x.dims is None or block.dims is None or pads is None or None in block.dims:
        return TensorShape(None if x.dims is None else [None] * len(x.dims))
    m = len(block.dims)
    pads = np.asarray(pads).reshape(-1, 2)
    prod = int(np.prod(block.dims))
    dims = list(x.dims)
    if sign > 0:
        out = [None if dims[0] is None else dims[0] * prod]
        out += [None if dims[1 + d] is None else (dims[1 + d] + int(pads[d].sum())) // block.dims[d]
                for d in range(m)]
    else:
        out = [None if dims[0] is None else dims[0] // prod]
        out += [None if dims[1 + d] is None else dims[1 + d] * block.dims[d] - int(pads[d].sum())
                for d in range(m)]
    return TensorShape(out + dims[1 + m:])


register("SpaceToBatchND", _space_to_batch,
         lambda op, g: [apply_op("BatchToSpaceND", [g, op.inputs[1], op.inputs[2]],
                                 dict(Tblock_shape=op.inputs[1].dtype, Tcrops=op.inputs[2].dtype)), None, None],
         lambda op: _s2b_shape(op, 1), type_attrs={"Tblock_shape": 1, "Tpaddings": 2})
register("BatchToSpaceND", _batch_to_space,
         lambda op, g: [apply_op("SpaceToBatchND", [g, op.inputs[1], op.inputs[2]],
                                 dict(Tblock_shape=op.inputs[1].dtype, Tpaddings=op.inputs[2].dtype)), None, None],
         lambda op: _s2b_shape(op, -1), type_attrs={"Tblock_shape": 1, "Tcrops": 2})


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None, spatial_dims=None,  # noqa: A002
                        data_format=None):
    """TF's ``with_space_to_batch``: ``op(SpaceToBatchND(input), num_spatial_dims, "VALID")`` then
    ``BatchToSpaceND``, which computes ``op`` dilated by ``dilation_rate`` (just ``op(input, ...)`` when every
    rate is 1). SAME padding pads the dilated filter's extent (``filter_shape``, static) as conv2d would."""
    rate = [int(r) for r in np.broadcast_to(np.asarray(dilation_rate), (2,))]
    if all(r == 1 for r in rate):
        return op(input, 2, padding)
    if data_format is not None and data_format.startswith("NC"):
        raise NotImplementedError("dilated convolution and pooling are supported in NHWC only")
    input = convert_to_tensor(input)
    in_dims = input.shape.dims
    if in_dims is None or in_dims[1] is None or in_dims[2] is None:
        raise NotImplementedError("dilated convolution needs a static spatial input shape")
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("filter_shape must be specified for SAME padding")
        k = np.asarray(filter_shape[:2], np.int64)
        extra = (k + (k - 1) * (np.asarray(rate) - 1)) - 1
        base = np.stack([extra // 2, extra - extra // 2], axis=1)
    elif padding == "VALID":
        base = np.zeros([2, 2], np.int64)
    else:
        raise ValueError("Invalid padding method %r" % (padding,))
    full = np.asarray(in_dims[1:3]) + base.sum(axis=1)
    pad_extra = (np.asarray(rate) - full % np.asarray(rate)) % np.asarray(rate)
    paddings = np.stack([base[:, 0], base[:, 1] + pad_extra], axis=1).astype(np.int32)
    crops = np.stack([np.zeros(2, np.int64), pad_extra], axis=1).astype(np.int32)
    block = np.asarray(rate, np.int32)
    s2b = apply_op("SpaceToBatchND", [input, constant(block, name="SpaceToBatchND/block_shape"),
                                      constant(paddings, name="SpaceToBatchND/paddings")], name="SpaceToBatchND")
    result = op(s2b, 2, "VALID")
    return apply_op("BatchToSpaceND", [result, constant(block, name="BatchToSpaceND/block_shape"),
                                       constant(crops, name="BatchToSpaceND/crops")], name="BatchToSpaceND")
