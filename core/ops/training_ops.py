"""The fused optimizer update ops (TF's ``training_ops``): ``ApplyGradientDescent``, ``ApplyMomentum``, ...
and their ``SparseApply*`` row-wise variants.

Each update is written once as numpy math over whole arrays (``_momentum``, ``_adam``, ...) that updates its
variable/slot arguments in place. The dense op runs it on the variables' buffers; the sparse op runs it on the
gathered rows ``var[indices]`` (and the slots' rows) and writes them back, so only the touched rows change,
as in TF's kernels. Input order and attrs are TF's (``ApplyAdam(var, m, v, beta1_power, beta2_power, lr,
beta1, beta2, epsilon, grad)``), so the GraphDef matches.

Dense updates of contiguous float32/float64 arrays run as one fused pass in C when the optional extension
``tfevents.core.runtime._kernels`` is built (core/runtime/_kernels.c: ApplyGradientDescent, ApplyMomentum, ApplyAdagrad,
ApplyAdam, ApplyRMSProp), operation for operation the same arithmetic as the numpy version here, which stays the
fallback (other dtypes, views, and every run with ``TFEVENTS_CORE_KERNELS=0`` in the environment).
"""
from __future__ import annotations

import inspect
from typing import Callable, Optional, Sequence

import numpy as np

from ..framework import dtypes
from ..runtime.kernels import load_kernels
from ..framework.registry import apply_op, register, shape_same

_kernels = load_kernels()        # None: the numpy updates below do all the work

# ---------------------------------------------------------------------------------------------------------
# update math (in place on the arrays named like TF's inputs)


def _gradient_descent(var, alpha, delta, **_):
    """var -= alpha * delta"""
    var -= alpha * delta


def _momentum(var, accum, lr, grad, momentum, use_nesterov=False, **_):
    """accum = momentum * accum + g; var -= lr * accum  (Nesterov: var -= lr * g + lr * momentum * accum)"""
    accum *= momentum
    accum += grad
    if use_nesterov:
        var -= grad * lr + accum * momentum * lr
    else:
        var -= accum * lr


def _adagrad(var, accum, lr, grad, update_slots=True, **_):
    """accum += g**2; var -= lr * g / sqrt(accum)"""
    if update_slots:
        accum += grad * grad
    var -= grad * lr / np.sqrt(accum)


def _adadelta(var, accum, accum_update, lr, rho, epsilon, grad, **_):
    """accum = rho*accum + (1-rho)*g**2; u = sqrt(accum_update+eps)/sqrt(accum+eps)*g; var -= lr*u;
    accum_update = rho*accum_update + (1-rho)*u**2"""
    accum *= rho
    accum += grad * grad * (1 - rho)
    update = np.sqrt(accum_update + epsilon) / np.sqrt(accum + epsilon) * grad
    var -= update * lr
    accum_update *= rho
    accum_update += update * update * (1 - rho)


def _adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, use_nesterov=False, **_):
    """alpha = lr*sqrt(1-beta2_power)/(1-beta1_power); m += (g-m)(1-beta1); v += (g**2-v)(1-beta2);
    var -= alpha*m/(sqrt(v)+epsilon)  (Nesterov: m replaced by (1-beta1)*g + beta1*m)"""
    alpha = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    m += (grad - m) * (1 - beta1)
    v += (grad * grad - v) * (1 - beta2)
    step = (grad * (1 - beta1) + beta1 * m) if use_nesterov else m
    var -= step * alpha / (np.sqrt(v) + epsilon)


def _ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, l2_shrinkage=None, **_):
    """n = accum + g**2; sigma = (n**-p - accum**-p)/lr; linear += g' - sigma*var (g' = g + 2*l2_shrinkage*var);
    var = (l1*sign(linear) - linear) / (n**-p/lr + 2*l2) where |linear| > l1, else 0; accum = n"""
    new_accum = accum + grad * grad
    shrunk = grad if l2_shrinkage is None else grad + 2 * l2_shrinkage * var
    if lr_power == -0.5:
        new_pow, old_pow = np.sqrt(new_accum), np.sqrt(accum)
    else:
        new_pow, old_pow = new_accum ** -lr_power, accum ** -lr_power
    linear += shrunk - (new_pow - old_pow) / lr * var
    quadratic = new_pow / lr + 2 * l2
    var[...] = np.where(np.abs(linear) > l1, (np.clip(linear, -l1, l1) - linear) / quadratic, 0)
    accum[...] = new_accum


def _ftrl_v2(var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power, **_):
    _ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, l2_shrinkage)


def _rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, **_):
    """ms += (g**2 - ms)(1-rho); mom = momentum*mom + lr*g/sqrt(ms+eps); var -= mom"""
    ms += (grad * grad - ms) * (1 - rho)
    mom *= momentum
    mom += grad * lr / np.sqrt(ms + epsilon)
    var -= mom


def _centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad, **_):
    """as RMSProp with mg += (g - mg)(1-rho) and the denominator sqrt(ms - mg**2 + eps)"""
    ms += (grad * grad - ms) * (1 - rho)
    mg += (grad - mg) * (1 - rho)
    mom *= momentum
    mom += grad * lr / np.sqrt(ms - mg * mg + epsilon)
    var -= mom


def _shrink(prox, threshold, l1, scale):
    """TF's proximal step: ``sign(prox) * max(|prox| - threshold, 0) / scale`` when ``l1 > 0``, else
    ``prox / scale``."""
    if l1 > 0:
        return np.sign(prox) * np.maximum(np.abs(prox) - threshold, 0) / scale
    return prox / scale


def _proximal_gradient_descent(var, alpha, l1, l2, delta=None, grad=None, **_):
    """prox = var - alpha * g; var = sign(prox) * max(|prox| - alpha*l1, 0) / (1 + alpha*l2)  (l1 > 0)"""
    g = delta if delta is not None else grad
    prox = var - g * alpha
    var[...] = _shrink(prox, alpha * l1, l1, 1 + alpha * l2)


def _proximal_adagrad(var, accum, lr, l1, l2, grad, **_):
    """accum += g**2; a = lr / sqrt(accum); prox = var - a*g; var = sign(prox) max(|prox| - a*l1, 0) / (1 + a*l2)"""
    accum += grad * grad
    rate = lr / np.sqrt(accum)
    prox = var - grad * rate
    var[...] = _shrink(prox, rate * l1, l1, 1 + l2 * rate)


def _adagrad_da(var, gradient_accumulator, gradient_squared_accumulator, grad, lr, l1, l2, global_step, **_):
    """g += grad; gg += grad**2; with T = global_step:
    var = lr * sign(-g) * max(|g| - l1*T, 0) / (l2*T*lr + sqrt(gg))  (l1 > 0; else lr * -g / (...))"""
    gradient_accumulator += grad
    gradient_squared_accumulator += grad * grad
    step = np.asarray(global_step).astype(var.dtype)
    denom = l2 * step * lr + np.sqrt(gradient_squared_accumulator)
    if l1 > 0:
        var[...] = lr * np.sign(-gradient_accumulator) * np.maximum(
            np.abs(gradient_accumulator) - l1 * step, 0) / denom
    else:
        var[...] = lr * -gradient_accumulator / denom


# ---------------------------------------------------------------------------------------------------------
# registration: one dense and one sparse op per update rule


def _dense_forward(math: Callable, inputs: Sequence[str], n_refs: int, kernel: Optional[str] = None,
                   flags: Sequence[tuple] = ()) -> Callable:
    """The op's forward: ``math`` on the variables' buffers, or first the C ``kernel`` (a ``_kernels`` function
    name, called with the inputs and then the boolean attrs ``flags`` (``(name, default)`` pairs) positionally),
    which returns False when it cannot take the arrays."""
    params = list(inspect.signature(math).parameters)
    assert params[:len(inputs)] == list(inputs), (math.__name__, params, inputs)   # positional call below

    def forward(*args, **attrs):
        buffers = [slot.read() for slot in args[:n_refs]]
        if _kernels is not None and kernel is not None and getattr(_kernels, kernel)(
                *buffers, *args[n_refs:], *[attrs.get(f, default) for f, default in flags]):
            return buffers[0]
        math(*buffers, *args[n_refs:], **attrs)
        return buffers[0]
    forward.__name__ = math.__name__.strip("_")
    return forward


def _sparse_forward(math: Callable, inputs: Sequence[str], n_refs: int) -> Callable:
    refs = inputs[:n_refs]

    def forward(*args, **attrs):
        kw = dict(zip(inputs, args))
        indices = np.asarray(kw.pop("indices"))
        buffers = [kw[name].read() for name in refs]
        n = buffers[0].shape[0]
        if indices.size and (indices.min() < 0 or indices.max() >= n):
            bad = indices[(indices < 0) | (indices >= n)][0]
            raise IndexError("Index %d in indices is not in [0, %d) (variable %s)" % (bad, n, kw[refs[0]].name))
        for name, buf in zip(refs, buffers):
            kw[name] = buf[indices]                      # gathered copies of the touched rows
        math(**kw, **attrs)
        for name, buf in zip(refs, buffers):
            buf[indices] = kw[name]
        return buffers[0]
    forward.__name__ = "sparse" + math.__name__
    return forward


_UPDATE = dict(mutates=True, aliases=True, shape=shape_same)


def _register(op_type: str, math: Callable, inputs: str, n_refs: int, sparse_inputs: str = "",
              kernel: Optional[str] = None, flags: Sequence[tuple] = ()) -> None:
    names = inputs.split()
    register(op_type, _dense_forward(math, names, n_refs, kernel, flags), ref_inputs=range(n_refs), **_UPDATE)
    if sparse_inputs:
        register("Sparse" + op_type, _sparse_forward(math, sparse_inputs.split(), n_refs),
                 ref_inputs=range(n_refs), **_UPDATE)


_register("ApplyGradientDescent", _gradient_descent, "var alpha delta", 1, kernel="apply_gradient_descent")
_register("ApplyMomentum", _momentum, "var accum lr grad momentum", 2, "var accum lr grad indices momentum",
          kernel="apply_momentum", flags=(("use_nesterov", False),))
_register("ApplyAdagrad", _adagrad, "var accum lr grad", 2, "var accum lr grad indices",
          kernel="apply_adagrad", flags=(("update_slots", True),))
_register("ApplyAdadelta", _adadelta, "var accum accum_update lr rho epsilon grad", 3,
          "var accum accum_update lr rho epsilon grad indices")
_register("ApplyAdam", _adam, "var m v beta1_power beta2_power lr beta1 beta2 epsilon grad", 3,
          kernel="apply_adam", flags=(("use_nesterov", False),))
_register("ApplyFtrl", _ftrl, "var accum linear grad lr l1 l2 lr_power", 3,
          "var accum linear grad indices lr l1 l2 lr_power")
_register("ApplyFtrlV2", _ftrl_v2, "var accum linear grad lr l1 l2 l2_shrinkage lr_power", 3,
          "var accum linear grad indices lr l1 l2 l2_shrinkage lr_power")
_register("ApplyRMSProp", _rms_prop, "var ms mom lr rho momentum epsilon grad", 3,
          "var ms mom lr rho momentum epsilon grad indices", kernel="apply_rms_prop")
_register("ApplyCenteredRMSProp", _centered_rms_prop, "var mg ms mom lr rho momentum epsilon grad", 4,
          "var mg ms mom lr rho momentum epsilon grad indices")

_register("ApplyProximalGradientDescent", _proximal_gradient_descent, "var alpha l1 l2 delta", 1,
          "var alpha l1 l2 grad indices")
_register("ApplyProximalAdagrad", _proximal_adagrad, "var accum lr l1 l2 grad", 2, "var accum lr l1 l2 grad indices")
_register("ApplyAdagradDA", _adagrad_da, "var gradient_accumulator gradient_squared_accumulator grad lr l1 l2 "
          "global_step", 3, "var gradient_accumulator gradient_squared_accumulator grad indices lr l1 l2 global_step")


def apply_update(op_type: str, inputs: list, use_locking: bool = False, name: str = None, **attrs):
    """Create one fused update op; ``T`` (and ``Tindices`` for sparse ops) are filled in from the inputs."""
    var = inputs[0]
    full = dict(T=var.dtype, use_locking=bool(use_locking))
    if op_type.startswith("Sparse"):
        indices = next(t for t in inputs if getattr(t, "dtype", None) in (dtypes.int32, dtypes.int64))
        full["Tindices"] = indices.dtype
    full.update(attrs)
    return apply_op(op_type, inputs, full, name=name or op_type)
