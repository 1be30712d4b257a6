"""Pooling (tf.nn.max_pool/avg_pool/pool).

Names in ``__all__`` are exported as ``tf.nn.<name>``.

``MaxPool``/``AvgPool`` and their gradients compute in NHWC (NCHW is transposed in and out). The forwards take
the maximum / sum of one strided view of the padded input per window offset (KH*KW vectorised passes).
``MaxPoolGrad`` routes each window's gradient to the first maximum in row-major window order, as TF's CPU kernel
does (overlapping windows add up); it runs in C when the optional kernels are built (``core/runtime/_kernels.c``), with
the same numbers as the numpy path (a reshape + argmax when the windows tile the input, else the windows'
argmax scattered into the padded input).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, constant_shape, convert_to_tensor, register
from . import array_ops
from ..runtime.kernels import load_kernels
from .window_ops import (Geometry, col2im, convert_padding, explicit_pads, from_nhwc, get_sequence, nhwc_shape,
                         offset_slices, pad, spatial, to_nhwc, windows, with_space_to_batch)

__all__ = ["avg_pool", "avg_pool1d", "avg_pool2d", "max_pool", "max_pool1d", "max_pool2d", "pool"]

_kernels = load_kernels()
_c_max_pool_grad = getattr(_kernels, "max_pool_grad", None)


def _geometry(shape_nhwc, ksize, strides, padding, explicit_paddings, data_format) -> Geometry:
    kh, kw = spatial(ksize, data_format)
    return Geometry(shape_nhwc[1], shape_nhwc[2], kh, kw, spatial(strides, data_format), (1, 1), padding,
                    explicit_pads(explicit_paddings, data_format))


def _tiles(shape_nhwc, g: Geometry) -> bool:
    """The windows tile the input exactly: a reshape ``[N, OH, KH, OW, KW, C]`` holds them."""
    return (not g.padded and g.kh == g.sh and g.kw == g.sw and shape_nhwc[1] == g.oh * g.kh
            and shape_nhwc[2] == g.ow * g.kw)


def _lowest(dtype) -> Any:
    return -np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min


# ---- MaxPool


def _reduce_windows(xp: np.ndarray, g: Geometry, ufunc) -> np.ndarray:
    """``ufunc`` over each window of the padded NHWC input, one strided view per kernel offset (row-major
    order): a few fast passes where a reduction over a 6-D window view is several times slower."""
    out = None
    for i in range(g.kh):
        for j in range(g.kw):
            view = xp[offset_slices(g, i, j)]
            out = view.copy() if out is None else ufunc(out, view, out=out)
    return out


def _max_pool_forward(x, ksize, strides, padding, explicit_paddings=(), data_format="NHWC"):
    x = to_nhwc(x, data_format)
    g = _geometry(x.shape, ksize, strides, padding, explicit_paddings, data_format)
    return from_nhwc(_reduce_windows(pad(x, g, _lowest(x.dtype)), g, np.maximum), data_format)


def _argmax_windows(x: np.ndarray, g: Geometry) -> np.ndarray:
    """For every output pixel and channel, the flat index into the padded input of its window's first maximum."""
    n, h, w, c = x.shape
    xp = pad(x, g, _lowest(x.dtype))
    hp, wp = xp.shape[1:3]
    win = windows(xp, g).transpose(0, 1, 2, 5, 3, 4).reshape(n, g.oh, g.ow, c, g.kh * g.kw)
    k = win.argmax(axis=-1)                                   # first maximum, row-major in the window
    rows = np.arange(g.oh)[:, None, None] * g.sh + (k // g.kw)
    cols = np.arange(g.ow)[None, :, None] * g.sw + (k % g.kw)
    return ((np.arange(n)[:, None, None, None] * hp + rows) * wp + cols) * c + np.arange(c)


def _max_pool_grad_nhwc(x, dy, g: Geometry) -> np.ndarray:
    n, h, w, c = x.shape
    if _c_max_pool_grad is not None and x.size and dy.size:
        out = np.empty_like(x)
        if _c_max_pool_grad(np.ascontiguousarray(x), np.ascontiguousarray(dy), out,
                            g.kh, g.kw, g.sh, g.sw, g.pt, g.pl, g.oh, g.ow):
            return out
    if _tiles(x.shape, g):
        win = x.reshape(n, g.oh, g.kh, g.ow, g.kw, c).transpose(0, 1, 3, 5, 2, 4).reshape(-1, g.kh * g.kw)
        dwin = np.zeros(win.shape, dy.dtype)
        dwin[np.arange(win.shape[0]), win.argmax(axis=-1)] = dy.reshape(-1)
        return dwin.reshape(n, g.oh, g.ow, c, g.kh, g.kw).transpose(0, 1, 4, 2, 5, 3).reshape(n, h, w, c)
    hp, wp = h + g.pt + g.pb, w + g.pl + g.pr
    flat = _argmax_windows(x, g).reshape(-1)
    dxp = np.zeros(n * hp * wp * c, dy.dtype)
    if g.kh <= g.sh and g.kw <= g.sw:              # windows do not overlap: every index is hit at most once
        dxp[flat] = dy.reshape(-1)
    else:                                          # in the dtype, in window order (the C kernel's sums)
        np.add.at(dxp, flat, dy.reshape(-1))
    return dxp.reshape(n, hp, wp, c)[:, g.pt:g.pt + h, g.pl:g.pl + w]


def _max_pool_grad_forward(x, y, dy, ksize, strides, padding, explicit_paddings=(), data_format="NHWC"):
    """dx: each window's output gradient added at the window's first maximum."""
    x, dy = to_nhwc(x, data_format), to_nhwc(dy, data_format)
    g = _geometry(x.shape, ksize, strides, padding, explicit_paddings, data_format)
    return from_nhwc(np.ascontiguousarray(_max_pool_grad_nhwc(x, dy, g)), data_format)


def _max_pool_grad_grad_forward(x, y, ddx, ksize, strides, padding, data_format="NHWC"):
    """d(dy): each window takes ``ddx`` at the window's first maximum (shaped like the pooled output)."""
    x, ddx = to_nhwc(x, data_format), to_nhwc(ddx, data_format)
    g = _geometry(x.shape, ksize, strides, padding, (), data_format)
    flat = _argmax_windows(x, g)
    return from_nhwc(np.ascontiguousarray(pad(ddx, g).reshape(-1)[flat]), data_format)


def _pool_attrs(op, explicit: bool = True) -> dict:
    keys = ("ksize", "strides", "padding", "data_format") + (("explicit_paddings",) if explicit else ())
    return {k: op.attrs[k] for k in keys if k in op.attrs}


def _max_pool_grad(op, grad):
    return [apply_op("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], _pool_attrs(op))]


def _max_pool_grad_grad(op, grad):
    x, y = op.inputs[0], op.inputs[1]
    return [array_ops.zeros_like(x), array_ops.zeros_like(y),
            apply_op("MaxPoolGradGrad", [x, y, grad], _pool_attrs(op, explicit=False))]


def _max_pool_grad_grad_grad(op, grad):
    x, y = op.inputs[0], op.inputs[1]
    return [array_ops.zeros_like(x), array_ops.zeros_like(y),
            apply_op("MaxPoolGrad", [x, y, grad], dict(_pool_attrs(op), explicit_paddings=[]))]


def _pool_shape(op) -> TensorShape:
    """Static output shape of MaxPool/AvgPool from the input shape and attrs."""
    attrs, s = op.attrs, op.inputs[0].shape
    if s.dims is None:
        return TensorShape(None)
    if len(s.dims) != 4:
        raise ValueError("Shape must be rank 4 but is rank %d for '%s' (op: '%s')" % (len(s.dims), op.name,
                                                                                    op.type))
    fmt = attrs.get("data_format", "NHWC")
    n, h, w, c = nhwc_shape([d if d is not None else -1 for d in s.dims], fmt)
    h, w = (None if h < 0 else h), (None if w < 0 else w)
    g = _geometry((n, h, w, c), attrs["ksize"], attrs["strides"], attrs["padding"],
                  attrs.get("explicit_paddings", ()), fmt)
    n, c = (None if n < 0 else n), (None if c < 0 else c)
    return TensorShape([n, c, g.oh, g.ow] if fmt.startswith("NC") else [n, g.oh, g.ow, c])


register("MaxPool", _max_pool_forward, _max_pool_grad, _pool_shape)
register("MaxPoolGrad", _max_pool_grad_forward, _max_pool_grad_grad, lambda op: op.inputs[0].shape)
register("MaxPoolGradGrad", _max_pool_grad_grad_forward, _max_pool_grad_grad_grad, lambda op: op.inputs[1].shape)


# ---- AvgPool: the mean over the window's input pixels (padding is not counted)


def _counts(g: Geometry, dtype) -> np.ndarray:
    """``[OH, OW, 1]``: how many input pixels each window covers."""
    def one(out, stride, k, before, size):
        start = np.arange(out) * stride - before
        return np.minimum(start + k, size) - np.maximum(start, 0)
    return (one(g.oh, g.sh, g.kh, g.pt, g.h)[:, None] * one(g.ow, g.sw, g.kw, g.pl, g.w)[None, :]).astype(
        dtype)[:, :, None]


def _avg_pool_forward(x, ksize, strides, padding, data_format="NHWC"):
    x = to_nhwc(x, data_format)
    g = _geometry(x.shape, ksize, strides, padding, (), data_format)
    out = _reduce_windows(pad(x, g), g, np.add)
    out /= _counts(g, x.dtype)
    return from_nhwc(out, data_format)


def _avg_pool_grad_forward(orig_input_shape, dy, ksize, strides, padding, data_format="NHWC"):
    """dx: each window's gradient divided by its pixel count, spread over the window."""
    shape = nhwc_shape(orig_input_shape, data_format)
    dy = to_nhwc(dy, data_format)
    g = _geometry(shape, ksize, strides, padding, (), data_format)
    scaled = dy / _counts(g, dy.dtype)
    if _tiles(shape, g):
        n, _, _, c = shape
        dx = np.broadcast_to(scaled[:, :, None, :, None, :], (n, g.oh, g.kh, g.ow, g.kw, c)).reshape(shape)
    else:
        dx = col2im(np.broadcast_to(scaled[:, :, :, None, None, :], scaled.shape[:3] + (g.kh, g.kw, shape[3])),
                    g, shape)
    return from_nhwc(np.ascontiguousarray(dx), data_format)


register("AvgPool", _avg_pool_forward,
         lambda op, g: [apply_op("AvgPoolGrad", [array_ops.shape(op.inputs[0]), g], dict(_pool_attrs(op), T=g.dtype))],
         _pool_shape)
register("AvgPoolGrad", _avg_pool_grad_forward,
         lambda op, g: [None, apply_op("AvgPool", [g], _pool_attrs(op))],
         lambda op: constant_shape(op.inputs[0]), dtype=lambda op: op.inputs[1].dtype)


# ---- the tf.nn functions


def _pool_op_attrs(ksize, strides, padding, data_format, explicit: bool) -> dict:
    fmt = data_format or "NHWC"
    if fmt not in ("NHWC", "NCHW"):
        raise ValueError("data_format must be 'NHWC' or 'NCHW', got %r" % (data_format,))
    ci = 1 if fmt.startswith("NC") else 3
    ksize = get_sequence(ksize, 2, ci, "ksize")
    strides = get_sequence(strides, 2, ci, "strides")
    if any(k == 0 for k in ksize):
        raise ValueError("`ksize` cannot be zero. Received: ksize=%s" % (ksize,))
    if ksize[0] != 1 or ksize[ci] != 1 or strides[0] != 1 or strides[ci] != 1:
        raise ValueError("Pooling is not yet supported on the batch or depth dimension")
    if explicit:
        padding, explicit_paddings = convert_padding(padding)
        if padding == "EXPLICIT" and any(explicit_paddings[i] for i in ((0, 1, 2, 3) if ci == 1 else (0, 1, 6, 7))):
            raise ValueError("Explicit padding of the batch or depth dimension is not supported")
        return dict(ksize=ksize, strides=strides, padding=padding, explicit_paddings=explicit_paddings,
                    data_format=fmt)
    padding, _ = convert_padding(padding)
    if padding == "EXPLICIT":
        raise ValueError("avg_pool does not take explicit padding")
    return dict(ksize=ksize, strides=strides, padding=padding, data_format=fmt)


def _pick(new, old):
    if new is not None and old is not None:
        raise ValueError("Cannot specify both 'value' and 'input'")
    return new if new is not None else old


def _max_pool(value, ksize, strides, padding, data_format, name, default_name: str) -> Tensor:
    with name_scope(name, default_name) as scope:
        attrs = _pool_op_attrs(ksize, strides, padding, data_format, explicit=True)
        return apply_op("MaxPool", [convert_to_tensor(value)], attrs, name=scope)


def max_pool(value, ksize, strides, padding, data_format: str = "NHWC", name: Optional[str] = None,
             input=None) -> Tensor:  # noqa: A002
    """The maximum over each ``ksize`` window (NHWC/NCHW; padding SAME, VALID or explicit pairs)."""
    return _max_pool(_pick(input, value), ksize, strides, padding, data_format, name, "MaxPool")


def max_pool2d(input, ksize, strides, padding, data_format: str = "NHWC",  # noqa: A002
               name: Optional[str] = None) -> Tensor:
    """``max_pool`` under TF2's name (name scope ``MaxPool2d``)."""
    return _max_pool(input, ksize, strides, padding, data_format, name, "MaxPool2d")


def avg_pool(value, ksize, strides, padding, data_format: str = "NHWC", name: Optional[str] = None,
             input=None) -> Tensor:  # noqa: A002
    """The mean over each ``ksize`` window; with SAME padding a window averages only its input pixels."""
    value = _pick(input, value)
    with name_scope(name, "AvgPool") as scope:
        attrs = _pool_op_attrs(ksize, strides, padding, data_format, explicit=False)
        return apply_op("AvgPool", [convert_to_tensor(value)], attrs, name=scope)


avg_pool2d = avg_pool     # tf.compat.v1.nn.avg_pool2d is TF1's avg_pool


def _pool1d(op_type, scope_name, input, ksize, strides, padding, data_format, name):  # noqa: A002
    if data_format not in ("NWC", "NCW", None):
        raise ValueError("data_format must be 'NWC' or 'NCW', got %r" % (data_format,))
    start = 2 if data_format == "NCW" else 1
    ci = 1 if data_format == "NCW" else 2
    ksize = [1] + get_sequence(ksize, 1, ci, "ksize")
    strides = [1] + get_sequence(strides, 1, ci, "strides")
    fmt = "NCHW" if data_format == "NCW" else "NHWC"
    with name_scope(name, scope_name) as scope:
        x = array_ops.expand_dims(input, start)
        attrs = _pool_op_attrs(ksize, strides, padding, fmt, explicit=op_type == "MaxPool")
        return array_ops.squeeze(apply_op(op_type, [x], attrs, name=scope), [start])


def max_pool1d(input, ksize, strides, padding, data_format: str = "NWC",  # noqa: A002
               name: Optional[str] = None) -> Tensor:
    """1-D max pooling of ``[N, W, C]`` (ExpandDims + MaxPool + Squeeze)."""
    return _pool1d("MaxPool", "MaxPool1d", input, ksize, strides, padding, data_format, name)


def avg_pool1d(input, ksize, strides, padding, data_format: str = "NWC",  # noqa: A002
               name: Optional[str] = None) -> Tensor:
    """1-D average pooling of ``[N, W, C]`` (ExpandDims + AvgPool + Squeeze)."""
    return _pool1d("AvgPool", "AvgPool1D", input, ksize, strides, padding, data_format, name)


def pool(input, window_shape, pooling_type: str, padding: str, dilation_rate=None, strides=None,  # noqa: A002
         name: Optional[str] = None, data_format: Optional[str] = None, dilations=None) -> Tensor:
    """1-D or 2-D ``"MAX"``/``"AVG"`` pooling; dilated pooling (VALID only) is SpaceToBatchND + pool +
    BatchToSpaceND, as in TF."""
    if dilations is not None:
        if dilation_rate is not None:
            raise ValueError("Cannot specify both 'dilation_rate' and 'dilations'")
        dilation_rate = dilations
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError("`pooling_type` must be 'MAX' or 'AVG'. Received: pooling_type=%s" % (pooling_type,))
    window_shape = [int(k) for k in window_shape]
    n = len(window_shape)
    if n not in (1, 2):
        raise NotImplementedError("pool supports 1-D and 2-D windows")
    dilation_rate = [1] * n if dilation_rate is None else [int(d) for d in np.broadcast_to(dilation_rate, (n,))]
    strides = [1] * n if strides is None else [int(s) for s in np.broadcast_to(strides, (n,))]
    if any(s != 1 for s in strides) and any(d != 1 for d in dilation_rate):
        raise ValueError("`strides` > 1 not supported in conjunction with `dilation_rate` > 1. Received: "
                         "strides=%s and dilation_rate=%s" % (strides, dilation_rate))
    if padding == "SAME" and any(d != 1 for d in dilation_rate):
        raise ValueError("pooling with 'SAME' padding is not implemented for `dilation_rate` > 1. Received: "
                         "padding=%s and dilation_rate=%s" % (padding, dilation_rate))
    op_type = "MaxPool" if pooling_type == "MAX" else "AvgPool"
    nc = data_format is not None and data_format.startswith("NC")
    with name_scope(name, "%s_pool" % pooling_type.lower()) as scope:
        input = convert_to_tensor(input)
        if n == 1:
            start = 2 if nc else 1
            x = array_ops.expand_dims(input, start)
            attrs = _pool_op_attrs([1] + window_shape, [1] + strides, padding, "NCHW" if nc else "NHWC",
                                   explicit=op_type == "MaxPool")
            return array_ops.squeeze(apply_op(op_type, [x], attrs, name=scope), [start])

        def op(x, _, pad_):
            attrs = _pool_op_attrs(window_shape, strides, pad_, "NCHW" if nc else "NHWC",
                                   explicit=op_type == "MaxPool")
            return apply_op(op_type, [x], attrs, name=scope)
        return with_space_to_batch(input, dilation_rate, padding, op, window_shape, data_format=data_format)
