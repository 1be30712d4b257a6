"""Neural-network ops (``tf.nn``): activations, softmax and cross-entropies, bias_add, l2_loss, in_top_k,
moments, batch normalization (composite and fused) and dropout."""
from __future__ import annotations

import numpy as np

from ..framework import dtypes
from ..framework.graph import name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import (apply_op, constant, convert_to_tensor, create_op, register, shape_same,
                                  shape_scalar, ufunc_inplace)
from . import array_ops, math_ops, random_ops, reduction_ops, slicing_ops
from ..runtime.kernels import load_kernels
from .math_ops import sigmoid, tanh  # noqa: F401 - tf.nn.sigmoid / tf.nn.tanh


# relu and its gradient run as one C pass when the optional kernels are built (numpy needs a comparison
# temporary and a mixed-type loop); the numpy versions give the same numbers. The *_inplace variants may write
# into input 0 (register's ``inplace``).
_kernels = load_kernels()


def _relu_forward(x):
    if _kernels is not None and type(x) is np.ndarray:
        out = np.empty_like(x)
        if _kernels.relu(x, out):
            return out
    return np.maximum(x, 0)


_relu_numpy_inplace = ufunc_inplace(np.maximum, 0)


def _relu_inplace(x):
    if _kernels is not None and type(x) is np.ndarray and _kernels.relu(x, x):
        return x
    return _relu_numpy_inplace(x)


def _relu_grad_forward(g, features):
    if _kernels is not None and type(g) is np.ndarray and g.shape == features.shape:
        out = np.empty_like(g)
        if _kernels.relu_grad(g, features, out):
            return out
    return g * (features > 0)


def _relu_grad_inplace(g, features):
    if type(g) is np.ndarray and g.flags.writeable and g.shape == features.shape:
        if _kernels is not None and _kernels.relu_grad(g, features, g):
            return g
        return np.multiply(g, features > 0, out=g)
    return g * (features > 0)


register("Relu", _relu_forward, lambda op, g: [apply_op("ReluGrad", [g, op.outputs[0]])], shape_same,
         inplace=_relu_inplace)
register("ReluGrad", _relu_grad_forward,
         lambda op, gg: [apply_op("ReluGrad", [gg, op.inputs[1]]), array_ops.zeros_like(op.inputs[1])],
         shape_same, inplace=_relu_grad_inplace)
register("Relu6", lambda x: np.clip(x, 0, 6),
         lambda op, g: [g * math_ops.cast(math_ops.logical_and(op.inputs[0] > 0.0, op.inputs[0] < 6.0),
                                          g.dtype)], shape_same, fresh=True)
register("Elu", lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))).astype(x.dtype),
         lambda op, g: [math_ops.where(op.inputs[0] > 0.0, g, g * (op.outputs[0] + 1.0))], shape_same, fresh=True)
register("Softplus", lambda x: np.logaddexp(x, np.zeros_like(x)),
         lambda op, g: [g * math_ops.sigmoid(op.inputs[0])], shape_same, fresh=True)
# alpha is a float attr: float32 precision, as in TF
register("LeakyRelu", lambda x, alpha=0.2: np.where(x > 0, x, x * np.asarray(np.float32(alpha), x.dtype)),
         lambda op, g: [math_ops.where(op.inputs[0] > 0.0, g, g * float(np.float32(op.attrs["alpha"])))],
         shape_same)


def relu(features, name=None):
    return apply_op("Relu", [features], name=name)


def relu6(features, name=None):
    return apply_op("Relu6", [features], name=name)


def elu(features, name=None):
    return apply_op("Elu", [features], name=name)


def softplus(features, name=None):
    return apply_op("Softplus", [features], name=name)


def leaky_relu(features, alpha=0.2, name=None):
    return apply_op("LeakyRelu", [features], dict(alpha=float(alpha)), name=name)


# ---- softmax family (over the last axis)


def _softmax_forward(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e


def _log_softmax_forward(x):
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _softmax_grad(op, g):
    """d softmax: (g - sum(g * y, -1)) * y."""
    y = op.outputs[0]
    return [(g - reduction_ops.reduce_sum(g * y, -1, keepdims=True)) * y]


register("Softmax", _softmax_forward, _softmax_grad, shape_same, fresh=True)
register("LogSoftmax", _log_softmax_forward,
         lambda op, g: [g - reduction_ops.reduce_sum(g, -1, keepdims=True) * math_ops.exp(op.outputs[0])],
         shape_same, fresh=True)


def softmax(logits, axis=None, name=None, dim=None):
    return apply_op("Softmax", [logits], name=name)


def log_softmax(logits, axis=None, name=None, dim=None):
    return apply_op("LogSoftmax", [logits], name=name)


def _sce_forward(features, labels):
    """loss = -sum(labels * log_softmax(features)), backprop = softmax(features) - labels."""
    shifted = features - np.maximum.reduce(features, axis=-1, keepdims=True)
    e = np.exp(shifted)
    s = np.add.reduce(e, axis=-1, keepdims=True)
    shifted -= np.log(s)                                   # log_softmax
    loss = np.add.reduce(labels * shifted, axis=-1)
    np.negative(loss, out=loss)
    e /= s
    e -= labels
    return loss, e


def _broadcast_mul(vec, mat):
    """TF's ``_BroadcastMul``: ``expand_dims(vec, -1) * mat``."""
    return array_ops.expand_dims(vec, -1) * mat


def _is_zeros(t) -> bool:
    return t is None or getattr(t, "_is_zeros_tensor", False)


def _softmax_jacobian_product(grad_grad, logits):
    """The second-derivative term of TF's cross-entropy gradients (``grad_grad`` through the softmax; TF writes
    the row-wise dot product as a batched matmul of expanded dims, here a ``Sum``)."""
    softmax = apply_op("Softmax", [logits])
    return (grad_grad - reduction_ops.reduce_sum(grad_grad * softmax, -1, keepdims=True)) * softmax


def _sce_grad(op, grad_loss, grad_grad):
    """TF's ``_SoftmaxCrossEntropyWithLogitsGrad``."""
    grad = _broadcast_mul(grad_loss, op.outputs[1])
    logits = op.inputs[0]
    if not _is_zeros(grad_grad):
        grad += _softmax_jacobian_product(grad_grad, logits)
    return [grad, _broadcast_mul(grad_loss, -apply_op("LogSoftmax", [logits]))]


def _sce_shape(op):
    s = op.inputs[0].shape
    return [s[:-1] if s.dims is not None else TensorShape(None), s]


register("SoftmaxCrossEntropyWithLogits", _sce_forward, _sce_grad, _sce_shape, num_outputs=2, fresh=True)


def _sparse_sce_forward(features, labels):
    shifted = features - features.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=-1, keepdims=True)
    rows = np.arange(features.shape[0])
    labels = labels.astype(np.int64, copy=False)
    if labels.size and (labels.min() < 0 or labels.max() >= features.shape[-1]):
        raise ValueError("Received a label value of %d which is outside the valid range of [0, %d)."
                         % (labels.max() if labels.max() >= features.shape[-1] else labels.min(),
                            features.shape[-1]))
    loss = (np.log(s[:, 0]) - shifted[rows, labels]).astype(features.dtype, copy=False)
    e /= s
    e[rows, labels] -= 1
    return loss, e


def _sparse_sce_grad(op, grad_loss, grad_grad):
    """TF's ``_SparseSoftmaxCrossEntropyWithLogitsGrad``."""
    grad = _broadcast_mul(grad_loss, op.outputs[1])
    if not _is_zeros(grad_grad):
        grad += _softmax_jacobian_product(grad_grad, op.inputs[0])
    return [grad, None]


register("SparseSoftmaxCrossEntropyWithLogits", _sparse_sce_forward, _sparse_sce_grad, _sce_shape,
         num_outputs=2, fresh=True)


def _flatten_outer_dims(logits):
    """TF's ``_flatten_outer_dims``: ``reshape(logits, [-1, last dim])`` with the last dim taken from the
    shape at run time (Rank, Sub, Slice, ConcatV2), the static shape kept when known."""
    rank = array_ops.rank(logits)
    last_dim_size = slicing_ops.slice_(array_ops.shape(logits), [math_ops.subtract(rank, 1)], [1])
    output = array_ops.reshape(logits, array_ops.concat([[-1], last_dim_size], 0))
    dims = logits.shape.dims
    if dims is not None and None not in dims[:-1]:
        output.set_shape([int(np.prod(dims[:-1], dtype=np.int64)), dims[-1]])
    return output


def _move_dim_to_end(tensor, dim_index, rank):
    return array_ops.transpose(tensor, array_ops.concat(
        [array_ops.range_(dim_index), array_ops.range_(dim_index + 1, rank), [dim_index]], 0))


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, dim=-1, name=None, axis=None):
    """Per-example ``-sum(labels * log_softmax(logits))`` along ``axis``; differentiable in labels too. TF's
    graph: both flattened to 2-D, ``SoftmaxCrossEntropyWithLogits`` named after the scope, the cost reshaped to
    the logits' shape without ``axis``."""
    axis = dim if axis is None else axis
    axis = -1 if axis is None else axis
    with name_scope(name, "softmax_cross_entropy_with_logits") as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        precise_logits = math_ops.cast(logits, dtypes.float32) if logits.dtype is dtypes.float16 else logits
        labels = math_ops.cast(labels, precise_logits.dtype)
        input_rank = array_ops.rank(precise_logits)
        shape = logits.shape
        if axis != -1:
            precise_logits = _move_dim_to_end(precise_logits, axis, input_rank)
            labels = _move_dim_to_end(labels, axis, input_rank)
        input_shape = array_ops.shape(precise_logits)
        precise_logits = _flatten_outer_dims(precise_logits)
        labels = _flatten_outer_dims(labels)
        cost, _ = apply_op("SoftmaxCrossEntropyWithLogits", [precise_logits, labels], name=scope)
        output_shape = slicing_ops.slice_(input_shape, [0], [math_ops.subtract(input_rank, 1)])
        cost = array_ops.reshape(cost, output_shape)
        if shape.dims is not None:
            dims = list(shape.dims)
            del dims[axis]
            cost.set_shape(dims)
        return math_ops.cast(cost, logits.dtype) if logits.dtype is dtypes.float16 else cost


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1, name=None, axis=None):
    """TF1's (deprecated) version: labels get no gradient (``labels_stop_gradient`` in a
    ``softmax_cross_entropy_with_logits_sg`` scope, the op named after that scope)."""
    axis = dim if axis is None else axis
    with name_scope(name, "softmax_cross_entropy_with_logits_sg") as scope:
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=axis, name=scope)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Per-example cross-entropy against integer class ``labels``."""
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits"):
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels)
        if labels.dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError("labels must be int32 or int64, got %s" % labels.dtype.name)
        labels_shape = array_ops.shape(labels)      # TF takes it first (for its checks): a node of every graph
        if logits.shape.ndims == 2 or logits.shape.ndims is None:
            loss, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels], dict(Tlabels=labels.dtype))
            return loss
        # labels of rank r, logits of rank r + 1: flattened to [-1, classes] and the losses shaped like labels
        classes = logits.shape.dims[-1]
        flat_logits = array_ops.reshape(logits, [-1, classes if classes is not None else array_ops.shape(logits)[-1]])
        flat_labels = array_ops.reshape(labels, [-1])
        loss, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", [flat_logits, flat_labels],
                           dict(Tlabels=labels.dtype))
        loss = array_ops.reshape(loss, labels_shape)
        loss.set_shape(labels.shape)
        return loss


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """``max(x, 0) - x * z + log(1 + exp(-|x|))`` (TF's stable form)."""
    with name_scope(name, "logistic_loss"):
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(labels, logits.dtype)
        zeros = array_ops.zeros_like(logits)
        relu_logits = math_ops.where(logits >= zeros, logits, zeros)
        neg_abs = math_ops.where(logits >= zeros, -logits, logits)
        return math_ops.add(relu_logits - logits * labels, math_ops.log1p(math_ops.exp(neg_abs)))


# ---- bias_add, l2_loss, in_top_k


def _channels_first(x, data_format):
    """A bias of shape [C] as x's channel axis (axis 1 for NCHW / NC..., the last axis otherwise)."""
    return data_format == "NCHW" and np.ndim(x) > 2


def _bias_add_forward(value, bias, data_format="NHWC"):
    if _channels_first(value, data_format):
        return value + bias.reshape((-1,) + (1,) * (value.ndim - 2))
    return np.add(value, bias)


def _bias_add_grad_forward(g, data_format="NHWC"):
    if _channels_first(g, data_format):
        return np.add.reduce(np.moveaxis(g, 1, -1).reshape(-1, g.shape[1]), axis=0)
    return np.add.reduce(g.reshape(-1, g.shape[-1]), axis=0) if g.ndim > 1 else g


def _bias_add_grad_grad(op, gg):
    x = op.inputs[0]
    if op.attrs.get("data_format") == "NCHW" and x.shape.ndims is not None and x.shape.ndims > 2:
        gg = array_ops.reshape(gg, [-1] + [1] * (x.shape.ndims - 2))
    return [array_ops.broadcast_to(gg, array_ops.shape(x))]


def _bias_grad_shape(op):
    dims = op.inputs[0].shape.dims
    if dims is None:
        return TensorShape(None)
    return TensorShape([dims[1] if op.attrs.get("data_format") == "NCHW" and len(dims) > 2 else dims[-1]])


register("BiasAdd", _bias_add_forward,
         lambda op, g: [g, apply_op("BiasAddGrad", [g], dict(data_format=op.attrs.get("data_format", "NHWC")))],
         shape_same, inplace=ufunc_inplace(np.add))
register("BiasAddGrad", _bias_add_grad_forward, _bias_add_grad_grad, _bias_grad_shape)


def bias_add(value, bias, data_format=None, name=None):
    """``value + bias`` with ``bias`` [C] added along the channel axis: the last one (``NHWC``, default) or axis 1
    (``NCHW``, for inputs of rank 3 and more)."""
    if data_format not in (None, "NHWC", "N..C", "NCHW", "NC.."):
        raise ValueError("data_format must be NHWC or NCHW, got %r" % (data_format,))
    value = convert_to_tensor(value)
    fmt = "NCHW" if data_format in ("NCHW", "NC..") else "NHWC"
    return apply_op("BiasAdd", [value, convert_to_tensor(bias, dtype=value.dtype)], dict(data_format=fmt),
                    name=name)


def _l2_loss(x):
    """``sum(x ** 2) / 2`` as a BLAS dot product (one pass, no squared temporary: 4x faster than numpy's sum of
    squares on a 10,000-word softmax's gradient; float accumulation as in TF's kernel)."""
    x = np.asarray(x)
    flat = x.reshape(-1) if x.flags.c_contiguous else np.ravel(x)
    if flat.dtype.kind == "f":
        return np.asarray(np.dot(flat, flat) * 0.5, dtype=x.dtype)
    return np.asarray(np.sum(np.square(x)) * 0.5, dtype=x.dtype)


register("L2Loss", _l2_loss, lambda op, g: [op.inputs[0] * g], shape_scalar, fresh=True)


def l2_loss(t, name=None):
    """``sum(t ** 2) / 2``."""
    return apply_op("L2Loss", [t], name=name)


def _in_top_k_forward(predictions, targets, k):
    targets = targets.astype(np.int64, copy=False)
    target_scores = predictions[np.arange(predictions.shape[0]), targets]
    rank = (predictions > target_scores[:, None]).sum(axis=1)
    return (rank < int(k)) & np.isfinite(target_scores)


def _in_top_k_shape(op):
    """[batch]: predictions' first dimension merged with the targets' (TF's InTopKV2 shape function)."""
    predictions, targets = op.inputs[0].shape, op.inputs[1].shape
    batch = TensorShape([None])
    if predictions.ndims is not None:
        batch = batch.merge_with(TensorShape([predictions.dims[0]]))
    if targets.ndims is not None:
        batch = batch.merge_with(targets)
    return batch


register("InTopKV2", _in_top_k_forward, None, _in_top_k_shape, dtype=dtypes.bool)


def in_top_k(predictions, targets, k, name=None):
    """True where the target class is among the top ``k`` predictions (ties count in the target's favour). TF's
    graph: ``in_top_k/InTopKV2`` with ``k`` its Const ``in_top_k/InTopKV2/k``."""
    with name_scope(name, "in_top_k"):
        with name_scope(name, "InTopKV2") as scope:
            predictions = convert_to_tensor(predictions, name="predictions")
            targets = convert_to_tensor(targets, name="targets")
            return apply_op("InTopKV2", [predictions, targets, convert_to_tensor(k, dtype=targets.dtype, name="k")],
                            dict(T=targets.dtype), name=scope)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``x / sqrt(max(sum(x**2, axis), epsilon))``."""
    axis = dim if axis is None else axis
    with name_scope(name, "l2_normalize") as scope:
        x = convert_to_tensor(x)
        square_sum = reduction_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        inv = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(x, inv, name=scope)


# ---- moments and batch normalization


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """Mean and (biased) variance of ``x`` over ``axes``."""
    keep = bool(keep_dims if keep_dims is not None else keepdims)
    with name_scope(name, "moments"):
        x = convert_to_tensor(x)
        mean = reduction_ops.reduce_mean(x, axes, keepdims=True, name="mean")
        variance = reduction_ops.reduce_mean(math_ops.squared_difference(x, array_ops.stop_gradient(mean)), axes,
                                        keepdims=True, name="variance")
        if not keep:
            mean = array_ops.squeeze(mean, list(axes))
            variance = array_ops.squeeze(variance, list(axes))
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``(x - mean) * scale / sqrt(variance + eps) + offset``, as TF computes it."""
    with name_scope(name, "batchnorm"):
        inv = math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        scaled = x * math_ops.cast(inv, x.dtype)          # TF's order: x * inv, then mean * inv, offset - ...
        shift = (offset - mean * inv) if offset is not None else -mean * inv
        return scaled + math_ops.cast(shift, x.dtype)


_CHANNELS_FIRST = ("NCHW", "NCDHW")
_FUSED_DATA_FORMATS = ("NHWC", "NCHW", "NDHWC", "NCDHW")


def _channel_axis(ndim: int, data_format: str) -> int:
    return 1 if data_format in _CHANNELS_FIRST else ndim - 1


def _fused_batch_norm_forward(x, scale, offset, mean, variance, epsilon=0.0001, exponential_avg_factor=1.0,
                              data_format="NHWC", is_training=True):
    """TF's CPU kernel: ``(y, batch_mean, batch_variance, reserve_space_1, reserve_space_2, reserve_space_3)``.

    Training normalizes by the batch moments; ``batch_variance`` is Bessel-corrected, each folded into the
    running input with ``exponential_avg_factor`` (1: the batch's alone), and the reserve spaces hold the batch
    mean and biased variance the gradient reads. Inference normalizes by ``mean``/``variance`` and hands them on
    (reserve spaces zero). Computed in the parameters' dtype (float32 for half inputs)."""
    axis = _channel_axis(x.ndim, data_format)
    reduced = tuple(i for i in range(x.ndim) if i != axis)
    broadcast = [1] * x.ndim
    broadcast[axis] = -1
    param_dtype = scale.dtype
    xf = x.astype(param_dtype, copy=False)
    if is_training:
        n = x.size // max(x.shape[axis], 1)
        batch_mean = xf.mean(axis=reduced)
        batch_var = xf.var(axis=reduced)
        unbiased = batch_var * (n / max(n - 1, 1))
        running_mean, running_var = batch_mean, unbiased
        if exponential_avg_factor != 1.0:
            keep = 1.0 - exponential_avg_factor
            running_mean = keep * mean + exponential_avg_factor * batch_mean
            running_var = keep * variance + exponential_avg_factor * unbiased
        norm_mean, norm_var = batch_mean, batch_var
        reserve_1, reserve_2 = batch_mean, batch_var
    else:
        norm_mean, norm_var = mean, variance
        running_mean, running_var = mean, variance
        reserve_1 = reserve_2 = np.zeros_like(mean)
    inv = 1.0 / np.sqrt(norm_var + epsilon)
    y = (xf - norm_mean.reshape(broadcast)) * (inv * scale).reshape(broadcast) + offset.reshape(broadcast)
    return (y.astype(x.dtype), running_mean.astype(param_dtype), running_var.astype(param_dtype),
            reserve_1.astype(param_dtype), reserve_2.astype(param_dtype), np.zeros((), param_dtype))


def _fused_batch_norm_grad_forward(y_backprop, x, scale, reserve_space_1, reserve_space_2, *reserve_space_3,
                                   epsilon=0.0001, data_format="NHWC", is_training=True):
    """TF's CPU kernel: ``(x_backprop, scale_backprop, offset_backprop, reserve_space_4, reserve_space_5)`` with
    ``x̂ = (x - mean) / sqrt(var + eps)`` (mean and variance: the batch's from the reserve spaces in training,
    the population's in inference): ``dscale = Σ dy·x̂``, ``doffset = Σ dy``, ``dx = scale / sqrt(var + eps) ·
    (dy - doffset/N - x̂·dscale/N)`` in training and ``scale / sqrt(var + eps) · dy`` in inference."""
    del reserve_space_3
    axis = _channel_axis(x.ndim, data_format)
    reduced = tuple(i for i in range(x.ndim) if i != axis)
    broadcast = [1] * x.ndim
    broadcast[axis] = -1
    param_dtype = scale.dtype
    dy, xf = y_backprop.astype(param_dtype, copy=False), x.astype(param_dtype, copy=False)
    inv = (1.0 / np.sqrt(reserve_space_2 + epsilon)).reshape(broadcast)
    x_hat = (xf - reserve_space_1.reshape(broadcast)) * inv
    offset_backprop = dy.sum(axis=reduced)
    scale_backprop = (dy * x_hat).sum(axis=reduced)
    if is_training:
        n = x.size // max(x.shape[axis], 1)
        x_backprop = (scale.reshape(broadcast) * inv) * (dy - (offset_backprop / n).reshape(broadcast)
                                                         - x_hat * (scale_backprop / n).reshape(broadcast))
    else:
        x_backprop = dy * (scale.reshape(broadcast) * inv)
    empty = np.zeros([0], param_dtype)
    return (x_backprop.astype(x.dtype), scale_backprop.astype(param_dtype), offset_backprop.astype(param_dtype),
            empty, empty.copy())


def _fused_batch_norm_gradient(grad_op_type: str, with_param_type: bool):
    """TF's ``_BaseFusedBatchNormGrad``: one ``FusedBatchNormGrad*`` op. Training reads the reserve spaces;
    inference the population mean and variance (inputs 3 and 4), channels-first data transposed to
    channels-last around it."""
    def gradient(op, grad_y, *unused):
        x, scale = op.inputs[0], op.inputs[1]
        data_format, is_training = op.attrs["data_format"], op.attrs["is_training"]
        attrs = dict(epsilon=op.attrs["epsilon"], data_format=data_format, is_training=is_training)
        if with_param_type:
            attrs["U"] = scale.dtype
        if is_training:
            grads = create_op(grad_op_type, [grad_y, x, scale] + list(op.outputs[3:]), attrs).outputs
            return [grads[0], grads[1], grads[2], None, None]
        to_last = from_last = None
        if data_format in _CHANNELS_FIRST:
            ndim = 5 if data_format == "NCDHW" else 4
            to_last = [0] + list(range(2, ndim)) + [1]
            from_last = [0, ndim - 1] + list(range(1, ndim - 1))
            x, grad_y = array_ops.transpose(x, to_last), array_ops.transpose(grad_y, to_last)
        attrs["data_format"] = "NHWC" if data_format in ("NHWC", "NCHW") else "NDHWC"
        grads = create_op(grad_op_type, [grad_y, x, scale, op.inputs[3], op.inputs[4]] + list(op.outputs[5:]),
                          attrs).outputs
        dx = grads[0] if from_last is None else array_ops.transpose(grads[0], from_last)
        return [dx, grads[1], grads[2], None, None]
    return gradient


def _no_second_derivative(op, *grads):
    raise NotImplementedError("%s (%s) has no gradient in tfevents.core: second derivatives of fused batch "
                              "normalization are not supported" % (op.name, op.type))


def _register_fused_batch_norm(op_type: str, grad_op_type: str, version: int) -> None:
    """``FusedBatchNorm`` (version 1) or ``FusedBatchNormV3`` and its gradient op: the same kernels, V3 with a
    third reserve space and the parameters' dtype ``U``."""
    n = 6 if version == 3 else 5

    def forward(*args, **attrs):
        return _fused_batch_norm_forward(*args, **attrs)[:n]

    register(op_type, forward, _fused_batch_norm_gradient(grad_op_type, version == 3),
             lambda op: [op.inputs[0].shape] + [op.inputs[1].shape] * 4 + [TensorShape(None)] * (n - 5),
             dtype=lambda op: [op.inputs[0].dtype] + [op.inputs[1].dtype] * (n - 1), num_outputs=n)
    register(grad_op_type, _fused_batch_norm_grad_forward, _no_second_derivative,
             lambda op: [op.inputs[1].shape, op.inputs[2].shape, op.inputs[2].shape, TensorShape([0]),
                         TensorShape([0])],
             dtype=lambda op: [op.inputs[0].dtype] + [op.inputs[2].dtype] * 4, num_outputs=5)


_register_fused_batch_norm("FusedBatchNorm", "FusedBatchNormGrad", version=1)
_register_fused_batch_norm("FusedBatchNormV3", "FusedBatchNormGradV3", version=3)


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC",
                     is_training=True, name=None, exponential_avg_factor=1.0):
    """``(y, running_mean, running_variance)`` of one ``FusedBatchNormV3`` (``tf.compat.v1.nn.fused_batch_norm``):
    in training the batch moments (the variance Bessel-corrected) folded into ``mean``/``variance`` with
    ``exponential_avg_factor``; in inference ``mean``/``variance`` themselves."""
    if data_format not in _FUSED_DATA_FORMATS:
        raise ValueError("data_format must be one of %s, got %r" % (", ".join(_FUSED_DATA_FORMATS), data_format))
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError("Both `mean` and `variance` must be a 1D tensor when `is_training` is False or "
                         "`exponential_avg_factor` != 1.0. Received: `mean` %r and `variance` %r" % (mean, variance))
    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    if mean is None:
        mean = constant(np.zeros([0], np.float32))
    if variance is None:
        variance = constant(np.zeros([0], np.float32))
    outputs = create_op("FusedBatchNormV3", [x, scale, offset, mean, variance],
                        dict(epsilon=float(epsilon), exponential_avg_factor=float(exponential_avg_factor),
                             data_format=data_format, is_training=bool(is_training), U=scale.dtype),
                        name=name).outputs
    return outputs[0], outputs[1], outputs[2]


# ---- dropout


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """``x * floor(keep_prob + U[0,1)) / keep_prob``: keeps each entry with probability ``keep_prob``."""
    with name_scope(name, "dropout"):
        x = convert_to_tensor(x)
        if keep_prob is None:
            if rate is None:
                raise ValueError("dropout needs keep_prob or rate")
            keep_prob = 1.0 - rate if not hasattr(rate, "op") else 1.0 - rate
        keep_prob = convert_to_tensor(keep_prob, dtype=x.dtype, name="keep_prob")
        shape = noise_shape if noise_shape is not None else array_ops.shape(x)
        random_tensor = keep_prob + random_ops.random_uniform(shape, seed=seed, dtype=x.dtype)
        binary = math_ops.floor(random_tensor)
        ret = math_ops.divide(x, keep_prob) * binary
        ret.set_shape(x.shape)
        return ret
