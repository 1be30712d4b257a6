"""Convolutions (tf.nn.conv1d/conv2d/conv2d_transpose/depthwise/separable/atrous/convolution).

Names in ``__all__`` are exported as ``tf.nn.<name>``.

The ops (``Conv2D``, ``Conv2DBackpropInput``, ``Conv2DBackpropFilter``, ``DepthwiseConv2dNative`` and its two
backprops) compute in NHWC; NCHW inputs are transposed in and out. A convolution is im2col + BLAS matmul: the
patches of the (zero padded) input become the rows of a ``[N*OH*OW, KH*KW*C]`` matrix (``window_ops.im2col``,
in cache-sized blocks of images); the input gradient multiplies the output gradient by the filter and adds the
patch gradients back (``window_ops.col2im``). Both run in C when the optional kernels are built
(``core/runtime/_kernels.c``), else in numpy (a loop over the KH*KW kernel offsets copying strided views); the two give
the same numbers.

Dilated ``convolution``/``atrous_conv2d`` and depthwise/separable convolutions with ``rate > 1`` are TF's
composites: ``SpaceToBatchND`` + the undilated op (VALID) + ``BatchToSpaceND`` (``window_ops``).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, constant_shape, convert_to_tensor, register
from . import array_ops
from .window_ops import (Geometry, col2im, convert_padding, explicit_pads, from_nhwc, get_sequence, im2col,
                         nhwc_shape, spatial, to_nhwc, with_space_to_batch)

__all__ = ["conv1d", "conv2d", "conv2d_backprop_filter", "conv2d_backprop_input", "conv2d_transpose",
           "convolution", "atrous_conv2d", "depthwise_conv2d", "depthwise_conv2d_native",
           "separable_conv2d"]


# ---------------------------------------------------------------------------------------------------------
# Conv2D and its backprops


_CONV_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations")
_BLOCK_BYTES = 2 << 20


def _blocks(n: int, g: Geometry, c: int, itemsize: int) -> list:
    """Cache blocking: batch slices whose patch matrices take about 2 MiB (at least one image), so that im2col
    writes a block and the matmul reads it while it is still in cache (15-25% faster than one big patch matrix
    for the Deep MNIST shapes; a block is several images for small ones)."""
    per_image = max(g.oh * g.ow * g.kh * g.kw * c * itemsize, 1)
    step = max(1, _BLOCK_BYTES // per_image)
    return [slice(i, min(i + step, n)) for i in range(0, n, step)] or [slice(0, 0)]


def _conv2d_forward(x, w, **attrs):
    fmt = attrs["data_format"]
    x = to_nhwc(x, fmt)
    kh, kw, cin, cout = w.shape
    if x.shape[3] != cin:
        raise ValueError("Depth of input (%d) is not equal to the depth of the filter (%d)" % (x.shape[3], cin))
    g = Geometry.of(x.shape, kh, kw, attrs)
    out = np.empty((x.shape[0], g.oh, g.ow, cout), np.result_type(x, w))
    wm = w.reshape(-1, cout)
    for s in _blocks(x.shape[0], g, cin, x.itemsize):
        np.matmul(im2col(x[s], g).reshape(-1, kh * kw * cin), wm, out=out[s].reshape(-1, cout))
    return from_nhwc(out, fmt)


def _conv2d_backprop_input_forward(input_sizes, w, dy, **attrs):
    fmt = attrs["data_format"]
    shape = nhwc_shape(input_sizes, fmt)
    dy = to_nhwc(dy, fmt)
    kh, kw, cin, cout = w.shape
    g = Geometry.of(shape, kh, kw, attrs)
    dx = np.empty(shape, np.result_type(dy, w))
    wt = w.reshape(-1, cout).T
    for s in _blocks(shape[0], g, cin, dx.itemsize):
        dcols = np.matmul(dy[s].reshape(-1, cout), wt)
        dx[s] = col2im(dcols.reshape(-1, g.oh, g.ow, kh, kw, cin), g, dx[s].shape)
    return from_nhwc(dx, fmt)


def _conv2d_backprop_filter_forward(x, filter_sizes, dy, **attrs):
    fmt = attrs["data_format"]
    x, dy = to_nhwc(x, fmt), to_nhwc(dy, fmt)
    kh, kw, cin, cout = (int(d) for d in filter_sizes)
    g = Geometry.of(x.shape, kh, kw, attrs)
    dw = np.zeros((kh * kw * cin, cout), np.result_type(x, dy))
    for s in _blocks(x.shape[0], g, cin, x.itemsize):
        dw += np.matmul(im2col(x[s], g).reshape(-1, kh * kw * cin).T, dy[s].reshape(-1, cout))
    return dw.reshape(kh, kw, cin, cout)


def _attrs_of(op) -> dict:
    return {k: op.attrs[k] for k in ("strides", "use_cudnn_on_gpu", "padding", "explicit_paddings",
                                     "data_format", "dilations") if k in op.attrs}


def _shape_op(x: Tensor) -> Tensor:
    """A ``Shape`` op even for a static shape (TF's conv gradients take ``shape_n``, never a Const)."""
    return array_ops.shape(x, optimize=False)


def _conv2d_grad(op, grad):
    """Conv2D's gradient: Conv2DBackpropInput(shape(x), w, dy) and Conv2DBackpropFilter(x, shape(w), dy)."""
    x, w = op.inputs
    attrs = _attrs_of(op)
    return [conv2d_backprop_input(_shape_op(x), w, grad, **_as_kwargs(attrs)),
            conv2d_backprop_filter(x, _shape_op(w), grad, **_as_kwargs(attrs))]


def _conv2d_backprop_input_grad(op, grad):
    _, w, dy = op.inputs
    attrs = _as_kwargs(_attrs_of(op))
    return [None, conv2d_backprop_filter(grad, _shape_op(w), dy, **attrs), conv2d(grad, w, **attrs)]


def _conv2d_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    attrs = _as_kwargs(_attrs_of(op))
    return [conv2d_backprop_input(_shape_op(x), grad, dy, **attrs), None, conv2d(x, grad, **attrs)]


def _as_kwargs(attrs: dict) -> dict:
    """Op attrs as the keyword arguments of the Python wrappers (explicit padding as a list of pairs)."""
    kw = dict(strides=list(attrs["strides"]), data_format=attrs["data_format"],
              dilations=list(attrs["dilations"]))
    if "use_cudnn_on_gpu" in attrs:
        kw["use_cudnn_on_gpu"] = attrs["use_cudnn_on_gpu"]
    p = list(attrs.get("explicit_paddings") or [])
    kw["padding"] = [p[i:i + 2] for i in range(0, 8, 2)] if attrs["padding"] == "EXPLICIT" else attrs["padding"]
    return kw


def _window_shape(in_shape: TensorShape, kh, kw, out_channels, attrs: dict) -> TensorShape:
    """Static output shape of a 2-D window op on ``in_shape`` (in ``data_format``)."""
    fmt = attrs.get("data_format", "NHWC")
    if in_shape.dims is None:
        return TensorShape(None)
    if len(in_shape.dims) != 4:
        raise ValueError("Shape must be rank 4 but is rank %d" % len(in_shape.dims))
    n, a, b, c = in_shape.dims
    h, w, ch = (b, c, a) if fmt.startswith("NC") else (a, b, c)
    if kh is None or kw is None:
        oh = ow = None
    else:
        g = Geometry(h, w, kh, kw, spatial(attrs["strides"], fmt),
                     spatial(attrs.get("dilations") or (1, 1, 1, 1), fmt), attrs["padding"],
                     explicit_pads(attrs.get("explicit_paddings", ()), fmt))
        oh, ow = g.oh, g.ow
    out_c = ch if out_channels == "same" else out_channels
    return TensorShape([n, out_c, oh, ow] if fmt.startswith("NC") else [n, oh, ow, out_c])


def _filter_dims(shape: TensorShape) -> list:
    if shape.dims is None:
        return [None] * 4
    if len(shape.dims) != 4:
        raise ValueError("Shape must be rank 4 but is rank %d for the filter" % len(shape.dims))
    return list(shape.dims)


def _check_depth(in_shape: TensorShape, depth, fmt: str, what: str = "filter") -> None:
    if in_shape.dims is None or depth is None:
        return
    c = in_shape.dims[1 if fmt.startswith("NC") else 3]
    if c is not None and c != depth:
        raise ValueError("Depth of input (%d) is not equal to the depth of the %s (%d)" % (c, what, depth))


def _conv2d_shape(op):
    kh, kw, cin, cout = _filter_dims(op.inputs[1].shape)
    _check_depth(op.inputs[0].shape, cin, op.attrs["data_format"])
    return _window_shape(op.inputs[0].shape, kh, kw, cout, op.attrs)


register("Conv2D", _conv2d_forward, _conv2d_grad, _conv2d_shape)
register("Conv2DBackpropInput", _conv2d_backprop_input_forward, _conv2d_backprop_input_grad,
         lambda op: constant_shape(op.inputs[0]), dtype=lambda op: op.inputs[1].dtype)
register("Conv2DBackpropFilter", _conv2d_backprop_filter_forward, _conv2d_backprop_filter_grad,
         lambda op: constant_shape(op.inputs[1]))


# ---------------------------------------------------------------------------------------------------------
# depthwise convolution: out[..., c * M + m] = sum_{i,j} x_window[..., i, j, c] * w[i, j, c, m]


def _depthwise_forward(x, w, **attrs):
    fmt = attrs["data_format"]
    x = to_nhwc(x, fmt)
    kh, kw, c, m = w.shape
    if x.shape[3] != c:
        raise ValueError("input and filter must have the same depth: %d vs %d" % (x.shape[3], c))
    g = Geometry.of(x.shape, kh, kw, attrs)
    cols = im2col(x, g).reshape(-1, kh * kw, c)
    out = np.einsum("pkc,kcm->pcm", cols, w.reshape(kh * kw, c, m), optimize=True)
    return from_nhwc(out.reshape(x.shape[0], g.oh, g.ow, c * m), fmt)


def _depthwise_backprop_input_forward(input_sizes, w, dy, **attrs):
    fmt = attrs["data_format"]
    shape = nhwc_shape(input_sizes, fmt)
    kh, kw, c, m = w.shape
    g = Geometry.of(shape, kh, kw, attrs)
    dy = to_nhwc(dy, fmt).reshape(-1, c, m)
    dcols = np.einsum("pcm,kcm->pkc", dy, w.reshape(kh * kw, c, m), optimize=True)
    return from_nhwc(col2im(dcols.reshape(shape[0], g.oh, g.ow, kh, kw, c), g, shape), fmt)


def _depthwise_backprop_filter_forward(x, filter_sizes, dy, **attrs):
    fmt = attrs["data_format"]
    x = to_nhwc(x, fmt)
    kh, kw, c, m = (int(d) for d in filter_sizes)
    g = Geometry.of(x.shape, kh, kw, attrs)
    cols = im2col(x, g).reshape(-1, kh * kw, c)
    dw = np.einsum("pkc,pcm->kcm", cols, to_nhwc(dy, fmt).reshape(-1, c, m), optimize=True)
    return dw.reshape(kh, kw, c, m).astype(x.dtype, copy=False)


def _depthwise_grad(op, grad):
    x, w = op.inputs
    attrs = _dw_attrs(op)
    return [apply_op("DepthwiseConv2dNativeBackpropInput", [_shape_op(x), w, grad], dict(attrs, T=w.dtype)),
            apply_op("DepthwiseConv2dNativeBackpropFilter", [x, _shape_op(w), grad], attrs)]


def _depthwise_backprop_input_grad(op, grad):
    _, w, dy = op.inputs
    attrs = _dw_attrs(op)
    return [None, apply_op("DepthwiseConv2dNativeBackpropFilter", [grad, _shape_op(w), dy], attrs),
            apply_op("DepthwiseConv2dNative", [grad, w], attrs)]


def _depthwise_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    attrs = _dw_attrs(op)
    return [apply_op("DepthwiseConv2dNativeBackpropInput", [_shape_op(x), grad, dy],
                     dict(attrs, T=grad.dtype)), None,
            apply_op("DepthwiseConv2dNative", [x, grad], attrs)]


def _dw_attrs(op) -> dict:
    return {k: op.attrs[k] for k in _CONV_ATTRS}


def _depthwise_shape(op):
    kh, kw, c, m = _filter_dims(op.inputs[1].shape)
    _check_depth(op.inputs[0].shape, c, op.attrs["data_format"])
    return _window_shape(op.inputs[0].shape, kh, kw, None if c is None or m is None else c * m, op.attrs)


register("DepthwiseConv2dNative", _depthwise_forward, _depthwise_grad, _depthwise_shape)
register("DepthwiseConv2dNativeBackpropInput", _depthwise_backprop_input_forward, _depthwise_backprop_input_grad,
         lambda op: constant_shape(op.inputs[0]), dtype=lambda op: op.inputs[1].dtype)
register("DepthwiseConv2dNativeBackpropFilter", _depthwise_backprop_filter_forward,
         _depthwise_backprop_filter_grad, lambda op: constant_shape(op.inputs[1]))


# ---------------------------------------------------------------------------------------------------------
# the tf.nn functions


def _check_format(data_format: Optional[str]) -> str:
    fmt = data_format or "NHWC"
    if fmt not in ("NHWC", "NCHW"):
        raise ValueError("data_format must be 'NHWC' or 'NCHW', got %r" % (data_format,))
    return fmt


def _conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu=None) -> dict:
    fmt = _check_format(data_format)
    ci = 1 if fmt.startswith("NC") else 3
    padding, explicit = convert_padding(padding)
    strides = get_sequence(strides, 2, ci, "strides")
    dilations = get_sequence(dilations, 2, ci, "dilations")
    if padding == "EXPLICIT":
        bc = (0, 1) if ci == 1 else (0, 3)
        if any(explicit[2 * d] or explicit[2 * d + 1] for d in bc):
            raise ValueError("Explicit padding of the batch or depth dimension is not supported")
    if min(strides) < 1 or min(dilations) < 1:
        raise ValueError("strides and dilations must be positive")
    attrs = dict(strides=strides, padding=padding, explicit_paddings=explicit, data_format=fmt,
                 dilations=dilations)
    if use_cudnn_on_gpu is not None:
        attrs["use_cudnn_on_gpu"] = bool(use_cudnn_on_gpu)
    return attrs


def _pick(new, new_name, old, old_name):
    """TF's ``deprecated_argument_lookup``: one of two spellings of an argument."""
    if new is not None:
        if old is not None:
            raise ValueError("Cannot specify both '%s' and '%s'" % (old_name, new_name))
        return new
    return old


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu: bool = True,  # noqa: A002
           data_format: str = "NHWC", dilations=(1, 1, 1, 1), name: Optional[str] = None,
           filters=None) -> Tensor:
    """2-D convolution (cross-correlation) of NHWC/NCHW ``input`` with ``filter`` ``[KH, KW, C, O]``:
    ``out[n, i, j, o] = sum_{di, dj, c} in_pad[n, i*sh + di*dh, j*sw + dj*dw, c] * filter[di, dj, c, o]``."""
    filter = _pick(filters, "filters", filter, "filter")
    attrs = _conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu)
    input = convert_to_tensor(input)
    return apply_op("Conv2D", [input, convert_to_tensor(filter, dtype=input.dtype)], attrs, name=name)


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None, padding=None,  # noqa: A002
                          use_cudnn_on_gpu: bool = True, data_format: str = "NHWC", dilations=(1, 1, 1, 1),
                          name: Optional[str] = None, filters=None) -> Tensor:
    """The gradient of conv2d with respect to its input, shaped ``input_sizes`` (a 1-D int32 tensor)."""
    filter = _pick(filters, "filters", filter, "filter")
    attrs = _conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu)
    with name_scope(name, "Conv2DBackpropInput") as scope:
        sizes = convert_to_tensor(input_sizes, name="input_sizes")
        filter = convert_to_tensor(filter)
        dy = convert_to_tensor(out_backprop, dtype=filter.dtype)
        return apply_op("Conv2DBackpropInput", [sizes, filter, dy], dict(attrs, T=filter.dtype), name=scope)


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu: bool = True, data_format: str = "NHWC", dilations=(1, 1, 1, 1),
                           name: Optional[str] = None) -> Tensor:
    """The gradient of conv2d with respect to its filter, shaped ``filter_sizes``."""
    attrs = _conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu)
    with name_scope(name, "Conv2DBackpropFilter") as scope:
        input = convert_to_tensor(input)
        sizes = convert_to_tensor(filter_sizes, name="filter_sizes")
        dy = convert_to_tensor(out_backprop, dtype=input.dtype)
        return apply_op("Conv2DBackpropFilter", [input, sizes, dy], attrs, name=scope)


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format: str = "NHWC", name: Optional[str] = None, input=None, filters=None,  # noqa: A002
                     dilations=None) -> Tensor:
    """The transpose of conv2d (a "deconvolution"): ``Conv2DBackpropInput(output_shape, filter, value)``;
    ``filter`` is ``[KH, KW, out_channels, in_channels]``."""
    value = _pick(input, "input", value, "value")
    filter = _pick(filters, "filters", filter, "filter")
    fmt = _check_format(data_format)
    with name_scope(name, "conv2d_transpose") as scope:
        value = convert_to_tensor(value, name="value")
        filter = convert_to_tensor(filter, dtype=value.dtype, name="filter")
        axis = 1 if fmt.startswith("NC") else 3
        vd, fd = value.shape.dims, filter.shape.dims
        if vd is not None and fd is not None and vd[axis] is not None and fd[3] is not None and vd[axis] != fd[3]:
            raise ValueError("input channels does not match filter's input channels, %d != %d" % (vd[axis], fd[3]))
        sizes = convert_to_tensor(output_shape, name="input_sizes") if not isinstance(output_shape, Tensor) \
            else output_shape
        if sizes.shape.ndims is not None and sizes.shape.as_list() != [4]:
            raise ValueError("output_shape must have shape (4,), got %s" % (sizes.shape,))
        out_c = constant_shape(sizes).dims
        if out_c is not None and fd is not None and out_c[axis] is not None and fd[2] is not None \
                and out_c[axis] != fd[2]:
            raise ValueError("output_shape does not match filter's output channels, %d != %d"
                             % (out_c[axis], fd[2]))
        attrs = _conv_attrs(strides, padding, fmt, dilations, True)
        return apply_op("Conv2DBackpropInput", [sizes, filter, value], dict(attrs, T=filter.dtype), name=scope)


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None, data_format=None,
           name: Optional[str] = None, input=None, dilations=None) -> Tensor:  # noqa: A002
    """1-D convolution of ``[N, W, C]`` (NWC) or ``[N, C, W]`` (NCW) with ``filters`` ``[K, C, O]``: TF's
    ExpandDims + Conv2D + Squeeze."""
    value = _pick(input, "input", value, "value")
    with name_scope(name, "conv1d") as scope:
        if data_format in (None, "NHWC", "NWC"):
            fmt, start, ci = "NHWC", -3, 2
        elif data_format in ("NCHW", "NCW"):
            fmt, start, ci = "NCHW", -2, 1
        else:
            raise ValueError("`data_format` must be 'NWC' or 'NCW'. Received: data_format=%s" % (data_format,))
        strides = [1] + get_sequence(stride, 1, ci, "stride")
        dil = [1] + get_sequence(dilations, 1, ci, "dilations")
        value = array_ops.expand_dims(value, start)
        filters = array_ops.expand_dims(filters, 0)
        attrs = _conv_attrs(strides, padding, fmt, dil, True if use_cudnn_on_gpu is None else use_cudnn_on_gpu)
        result = apply_op("Conv2D", [value, convert_to_tensor(filters, dtype=value.dtype)], attrs, name=scope)
        return array_ops.squeeze(result, [start])


def depthwise_conv2d_native(input, filter, strides, padding, data_format: str = "NHWC",  # noqa: A002
                            dilations=(1, 1, 1, 1), name: Optional[str] = None) -> Tensor:
    """Depthwise 2-D convolution: ``filter`` ``[KH, KW, C, M]``, output channel ``c * M + m`` convolves input
    channel ``c`` with ``filter[:, :, c, m]``."""
    attrs = _conv_attrs(strides, padding, data_format, dilations)
    input = convert_to_tensor(input)
    return apply_op("DepthwiseConv2dNative", [input, convert_to_tensor(filter, dtype=input.dtype)], attrs,
                    name=name)


def _static_filter_shape(f: Tensor) -> list:
    dims = f.shape.dims
    return None if dims is None or None in dims[:2] else [int(d) for d in dims]


def depthwise_conv2d(input, filter, strides, padding, rate=None, name: Optional[str] = None,  # noqa: A002
                     data_format: Optional[str] = None, dilations=None) -> Tensor:
    """Depthwise convolution with an optional atrous ``rate`` (TF's composite, name scope ``depthwise``)."""
    rate = _pick(dilations, "dilations", rate, "rate")
    with name_scope(name, "depthwise") as scope:
        input = convert_to_tensor(input, name="tensor_in")
        filter = convert_to_tensor(filter, dtype=input.dtype, name="filter_in")

        def op(x, _, pad):
            return depthwise_conv2d_native(x, filter, strides, pad, data_format=data_format or "NHWC", name=scope)
        return with_space_to_batch(input, [1, 1] if rate is None else rate, padding, op,
                                   _static_filter_shape(filter), data_format=data_format)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None,  # noqa: A002
                     name: Optional[str] = None, data_format: Optional[str] = None, dilations=None) -> Tensor:
    """A depthwise convolution (``[KH, KW, C, M]``) followed by a 1x1 convolution (``[1, 1, C*M, O]``)."""
    rate = _pick(dilations, "dilations", rate, "rate")
    with name_scope(name, "separable_conv2d") as scope:
        input = convert_to_tensor(input, name="tensor_in")
        depthwise_filter = convert_to_tensor(depthwise_filter, dtype=input.dtype, name="depthwise_filter")
        pointwise_filter = convert_to_tensor(pointwise_filter, dtype=input.dtype, name="pointwise_filter")
        pd = pointwise_filter.shape.dims
        if pd is not None and (len(pd) != 4 or pd[0] not in (None, 1) or pd[1] not in (None, 1)):
            raise ValueError("pointwise_filter must be [1, 1, in, out], got %s" % (pointwise_filter.shape,))

        def op(x, _, pad):
            return depthwise_conv2d_native(x, depthwise_filter, strides, pad, data_format=data_format or "NHWC",
                                           name="depthwise")
        depthwise = with_space_to_batch(input, [1, 1] if rate is None else rate, padding, op,
                                        _static_filter_shape(depthwise_filter), data_format=data_format)
        return conv2d(depthwise, pointwise_filter, [1, 1, 1, 1], padding="VALID", data_format=data_format or "NHWC",
                      name=scope)


def convolution(input, filter, padding, strides=None, dilation_rate=None, name: Optional[str] = None,  # noqa: A002
                data_format: Optional[str] = None, filters=None, dilations=None) -> Tensor:
    """N-D convolution (N = 1 or 2 here): conv1d/Conv2D, or SpaceToBatchND + Conv2D + BatchToSpaceND when
    dilated (TF's ``convolution_internal``; strides must then be 1)."""
    filter = _pick(filters, "filters", filter, "filter")
    dilation_rate = _pick(dilations, "dilations", dilation_rate, "dilation_rate")
    with name_scope(name, "convolution") as scope:
        input = convert_to_tensor(input, name="input")
        filter = convert_to_tensor(filter, dtype=input.dtype, name="filter")
        rank = input.shape.ndims if input.shape.ndims is not None else filter.shape.ndims
        if rank is None:
            raise ValueError("convolution needs the rank of input or filter")
        n = rank - 2
        if n not in (1, 2):
            raise NotImplementedError("convolution supports 1-D and 2-D inputs")
        ci = 1 if data_format is not None and data_format.startswith("NC") else n + 1
        strides = get_sequence(strides, n, ci, "strides")
        dil = get_sequence(dilation_rate, n, ci, "dilations")
        if all(d == 1 for d in dil):
            if n == 1:
                return conv1d(input, filter, strides, padding, data_format=data_format, dilations=dil,
                              name=scope)
            return conv2d(input, filter, strides, padding, data_format=data_format or "NHWC", dilations=dil,
                          name=scope)
        if n != 2:
            raise NotImplementedError("dilated 1-D convolution is not supported")
        sp_strides = strides[2:] if ci == 1 else strides[1:-1]
        if any(s != 1 for s in sp_strides):
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1; received: "
                             "strides=%s and dilation_rate=%s" % (sp_strides, dil))
        rate = dil[2:] if ci == 1 else dil[1:-1]

        def op(x, _, pad):
            return conv2d(x, filter, [1, 1, 1, 1], pad, data_format=data_format or "NHWC", name=scope)
        return with_space_to_batch(input, rate, padding, op, _static_filter_shape(filter), data_format=data_format)


def atrous_conv2d(value, filters, rate: int, padding: str, name: Optional[str] = None) -> Tensor:
    """Dilated ("atrous") 2-D convolution: ``convolution`` with ``dilation_rate=[rate, rate]``."""
    return convolution(value, filters, padding, dilation_rate=np.broadcast_to(rate, (2,)).tolist(), name=name)
