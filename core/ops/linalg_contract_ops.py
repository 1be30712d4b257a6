"""Tensor contractions: ``tensordot`` (TF's transpose/reshape/MatMul composite) and ``einsum`` (TF's ``Einsum``
op: equation parsing, static shapes, and its gradient as einsums of the output gradient).

Part of the linear algebra family: ``linalg_ops`` re-exports both names (its ``__all__`` is ``tf.<name>``)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, broadcast_shapes, constant, convert_to_tensor, register
from . import array_ops, broadcast_gradients, math_ops, reduction_ops
from .linalg_ops import _dims, eye

__all__ = ["tensordot", "einsum"]


# ---- tensordot


def tensordot(a: Any, b: Any, axes: Any, name: Optional[str] = None) -> Tensor:
    """Contract ``a``'s ``axes[0]`` with ``b``'s ``axes[1]`` (an int ``n``: the last n of ``a``, first n of ``b``):
    transpose + reshape to matrices, ``MatMul``, reshape back (TF's composite)."""
    with name_scope(name, "Tensordot") as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        ra, rb = a.shape.ndims, b.shape.ndims
        if ra is None or rb is None:
            raise NotImplementedError("tensordot needs operands of known rank")
        if isinstance(axes, (int, np.integer)):
            if axes < 0:
                raise ValueError("'axes' must be at least 0, got %d." % axes)
            if axes > min(ra, rb):
                raise ValueError("'axes' must not be larger than the number of dimensions of tensor %s.  Received "
                                 "%d, vs tensor dimensions %d." % (a if axes > ra else b, axes, min(ra, rb)))
            a_axes, b_axes = list(range(ra - axes, ra)), list(range(axes))
        else:
            axes = list(axes)
            if len(axes) != 2:
                raise ValueError("'axes' must be an integer or have length 2, got %s." % (axes,))
            a_axes, b_axes = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in axes)
            if len(a_axes) != len(b_axes):
                raise ValueError("Different number of contraction axes 'a' and 'b', %d != %d."
                                 % (len(a_axes), len(b_axes)))
            a_axes = [int(x) % ra for x in a_axes]
            b_axes = [int(x) % rb for x in b_axes]
        a_mat, a_free, a_static = _tensordot_reshape(a, a_axes, flipped=False)
        b_mat, b_free, b_static = _tensordot_reshape(b, b_axes, flipped=True)
        product = math_ops.matmul(a_mat, b_mat)
        if isinstance(a_free, list) and isinstance(b_free, list):
            if product.shape.is_fully_defined() and product.shape.as_list() == a_free + b_free:
                return product
            return array_ops.reshape(product, a_free + b_free, name=scope)
        a_free = a_free if isinstance(a_free, Tensor) else constant(a_free, dtype=dtypes.int32)
        b_free = b_free if isinstance(b_free, Tensor) else constant(b_free, dtype=dtypes.int32)
        out = array_ops.reshape(product, array_ops.concat([a_free, b_free], 0), name=scope)
        out.set_shape(a_static + b_static)
        return out


def _tensordot_reshape(x: Tensor, axes: list, flipped: bool):
    """``x`` as a matrix [free, contracted] (``flipped``: [contracted, free]), its free dims (a list, or an int32
    tensor when some are unknown) and their static values (TF's _tensordot_reshape)."""
    dims = _dims(x)
    free = [i for i in range(len(dims)) if i not in axes]
    free_dims = [dims[i] for i in free]
    if None not in dims:
        perm = axes + free if flipped else free + axes
        n_free = int(np.prod(free_dims)) if free_dims else 1
        n_axes = int(np.prod([dims[i] for i in axes])) if axes else 1
        new_shape = [n_axes, n_free] if flipped else [n_free, n_axes]
        if perm != list(range(len(dims))):
            x = array_ops.transpose(x, perm)
        if [dims[i] for i in perm] != new_shape:
            x = array_ops.reshape(x, new_shape)
        return x, free_dims, free_dims
    axes_t = constant(axes, dtype=dtypes.int32, name="axes")
    free_t = constant(free, dtype=dtypes.int32, name="free")
    shape = array_ops.shape(x)
    free_t_dims, axes_t_dims = array_ops.gather(shape, free_t), array_ops.gather(shape, axes_t)
    n_free, n_axes = reduction_ops.reduce_prod(free_t_dims), reduction_ops.reduce_prod(axes_t_dims)
    if flipped:
        perm, new_shape = array_ops.concat([axes_t, free_t], 0), array_ops.stack([n_axes, n_free])
    else:
        perm, new_shape = array_ops.concat([free_t, axes_t], 0), array_ops.stack([n_free, n_axes])
    return array_ops.reshape(array_ops.transpose(x, perm), new_shape), free_t_dims, free_dims


# ---- einsum


def _einsum_parse(equation: str, n: int):
    """``(input subscripts, output subscripts)`` with spaces removed and the implicit output made explicit
    (labels used once, sorted, after the ellipsis if any input has one; numpy's rule)."""
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs = eq
        letters = lhs.replace(",", "").replace(".", "")
        out = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    ins = lhs.split(",")
    if len(ins) != n:
        raise ValueError("Expected %d inputs but got %d for equation %r" % (len(ins), n, equation))
    for sub in ins + [out]:
        if not all(c.isalpha() for c in sub.replace("...", "")) or sub.count("...") > 1:
            raise ValueError("Invalid einsum subscripts %r in equation %r" % (sub, equation))
    return ins, out


def _einsum_shape(op):
    ins, out = _einsum_parse(op.attrs["equation"], len(op.inputs))
    sizes, ell = {}, TensorShape([])
    for sub, t in zip(ins, op.inputs):
        dims = _dims(t)
        if dims is None:
            return TensorShape(None)
        pre, _, post = sub.partition("...")
        n_ell = len(dims) - len(pre) - len(post)
        labelled = list(zip(pre, dims[:len(pre)])) + list(zip(post, dims[len(dims) - len(post):]))
        for c, d in labelled:
            if d is not None:
                if sizes.get(c) not in (None, d):
                    raise ValueError("Expected dimension %d at axis of input for label %r but got %d"
                                     % (sizes[c], c, d))
                sizes[c] = d
            else:
                sizes.setdefault(c, None)
        if "..." in sub:
            ell = broadcast_shapes(ell, TensorShape(dims[len(pre):len(pre) + n_ell]))
    pre, _, post = out.partition("...")
    mid = list(ell.dims) if "..." in out and ell.dims is not None else ([] if "..." not in out else None)
    if mid is None:
        return TensorShape(None)
    return TensorShape([sizes.get(c) for c in pre] + mid + [sizes.get(c) for c in post])


def _expand_missing(g: Tensor, sub: str, kept: str) -> Tensor:
    """Insert size-1 axes into ``g`` (subscripts ``kept``) where ``sub`` has labels that ``kept`` lacks."""
    pre, _, post = sub.partition("...")
    for i, c in enumerate(pre):
        if c not in kept:
            g = array_ops.expand_dims(g, i)
    for r, c in enumerate(reversed(post), start=1):
        if c not in kept:
            g = array_ops.expand_dims(g, -r)
    return g


def _einsum_grad(op, g):
    """d/d input i: the einsum of ``g`` with the other inputs onto input i's labels; labels only input i has
    (summed away) are broadcast back, broadcast ellipsis dimensions summed, and a label repeated within an operand
    (a diagonal, ``'ii->i'``) is embedded back with identity matrices (TF's _EinsumGrad)."""
    ins, out = _einsum_parse(op.attrs["equation"], len(op.inputs))
    grads = []
    for i, (sub, x) in enumerate(zip(ins, op.inputs)):
        others = [s for j, s in enumerate(ins) if j != i]
        other_inputs = [t for j, t in enumerate(op.inputs) if j != i]
        unique = "".join(dict.fromkeys(sub.replace("...", "\0"))).replace("\0", "...")
        if unique == sub:
            grads.append(_einsum_operand_grad(g, out, others, other_inputs, sub, x))
            continue
        if "..." in sub:
            raise NotImplementedError("einsum gradient for repeated labels with an ellipsis (%r)" % sub)
        diagonal = apply_op("Einsum", [x], dict(equation=sub + "->" + unique, N=1))
        gd = _einsum_operand_grad(g, out, others, other_inputs, unique, diagonal)
        grads.append(_embed_diagonal(gd, unique, sub, x))
    return grads


def _einsum_operand_grad(g, out, others, other_inputs, sub, x):
    """The gradient for one operand whose labels are distinct (``sub``), shaped like ``x``."""
    seen = set(out.replace("...", "")) | set("".join(others).replace("...", ""))
    kept = "".join(c for c in sub if c == "." or c in seen)
    gi = apply_op("Einsum", [g] + other_inputs, dict(equation=",".join([out] + others) + "->" + kept,
                                                     N=1 + len(other_inputs)))
    gi = _expand_missing(gi, sub, kept)
    if len(kept.replace("...", "")) != len(sub.replace("...", "")):
        gi = gi * array_ops.ones_like(x)
    if "..." in sub:
        gi = broadcast_gradients.unbroadcast(gi, x)
    return gi


def _embed_diagonal(gd: Tensor, unique: str, sub: str, x: Tensor) -> Tensor:
    """``gd`` (labels ``unique``) placed on the diagonals of ``x``'s repeated labels: each repeat becomes a
    fresh label tied to the first by an identity matrix (``'ii'``: ``einsum('i,ia->ia', gd, eye)``)."""
    free = iter(c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in sub)
    dims, full, eyes, factors = _dims(x), "", [], []
    for pos, c in enumerate(sub):
        if c not in full:                      # (fresh labels are never in sub)
            full += c
            continue
        if dims is None or dims[pos] is None:
            raise NotImplementedError("einsum gradient for repeated labels of unknown size")
        fresh = next(free)
        eyes.append(c + fresh)
        factors.append(eye(dims[pos], dtype=x.dtype))
        full += fresh
    return apply_op("Einsum", [gd] + factors, dict(equation=",".join([unique] + eyes) + "->" + full,
                                                   N=1 + len(factors)))


register("Einsum", lambda *xs, equation: np.einsum(equation, *xs), _einsum_grad, _einsum_shape)


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> Tensor:
    """Einstein summation (TF's ``Einsum`` op, the equation written with its explicit output): ``'ij,jk->ik'``
    is a matmul, ``'ij->ji'`` a transpose, ``'...ij,...jk->...ik'`` a batched matmul."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError("Invalid keyword arguments for this function: %s" % ", ".join(sorted(kwargs)))
    with name_scope(name, "einsum"):
        inputs = [convert_to_tensor(x) for x in inputs]
        ins, out = _einsum_parse(equation, len(inputs))
        return apply_op("Einsum", inputs, dict(equation=",".join(ins) + "->" + out, N=len(inputs)),
                        name="Einsum")
