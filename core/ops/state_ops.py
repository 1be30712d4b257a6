"""Ops bound to session state: Placeholder, VariableV2 and the assign family (Assign, AssignAdd, AssignSub,
Scatter{Update,Add,Sub,Mul,Div,Max,Min}, ScatterNd{Update,Add,Sub}), IsVariableInitialized.

A variable's value lives in the Session, in a ``VariableSlot`` (``.value`` is the numpy buffer). Ops that update
variables take the VariableV2 output at a *ref input* and receive the slot (see ``registry``).
"""
from __future__ import annotations

import threading
from typing import Any, Optional

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError, OutOfRangeError
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, convert_to_tensor, create_op, register, shape_same


def _dims(shape: TensorShape) -> str:
    if shape.dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.dims) + "]"


def _placeholder_bind(op, session):
    def unfed():
        raise InvalidArgumentError(op, "You must feed a value for placeholder tensor '%s' with dtype %s and "
                                       "shape %s" % (op.name, op.attrs["dtype"].name, _dims(op.attrs["shape"])))
    return unfed


register("Placeholder", bind=_placeholder_bind, shape=lambda op: op.attrs["shape"],
         dtype=lambda op: op.attrs["dtype"])
register("PlaceholderWithDefault", lambda x, **_: x, lambda op, g: [g], lambda op: op.attrs["shape"],
         aliases=True)


def placeholder(dtype, shape=None, name=None):
    """A value fed at run time; feeding is checked against ``dtype`` and the static ``shape``."""
    return apply_op("Placeholder", [], dict(dtype=dtypes.as_dtype(dtype), shape=TensorShape(shape)), name=name)


def placeholder_with_default(input, shape, name=None):  # noqa: A002
    """``input`` unless fed; a Python ``input`` is converted as ``<name>/input``, as TF's wrapper does."""
    with name_scope(name, "PlaceholderWithDefault") as scope:
        input = convert_to_tensor(input, name="input")
        return apply_op("PlaceholderWithDefault", [input], dict(dtype=input.dtype, shape=TensorShape(shape)),
                        name=scope)


def _variable_bind(op, session):
    return session.variable_slot(op).read


register("VariableV2", bind=_variable_bind, shape=lambda op: op.attrs["shape"],
         dtype=lambda op: op.attrs["dtype"], stateful=True, aliases=True)


def variable_op(shape, dtype, name) -> Any:
    return create_op("VariableV2", [], dict(shape=TensorShape(shape), dtype=dtypes.as_dtype(dtype),
                                            container="", shared_name=""), name=name).outputs[0]


def _assign_forward(ref, value, validate_shape=True, use_locking=True):
    old = ref.value
    if old is not None and old.shape == value.shape and old.dtype == value.dtype:
        np.copyto(old, value)
        return old
    if validate_shape and ref.op.attrs["shape"].dims is not None and \
            not ref.op.attrs["shape"].is_compatible_with(value.shape):
        raise InvalidArgumentError(ref.op, "Assign requires shapes of both tensors to match. lhs shape= %s rhs "
                                           "shape= %s (variable %s)" % (ref.op.attrs["shape"], list(value.shape),
                                                                        ref.name))
    ref.value = np.array(value, dtype=ref.op.attrs["dtype"].as_numpy_dtype, copy=True)
    return ref.value


def _assign_add_forward(ref, value, use_locking=False):
    ref.read()[...] += value
    return ref.value


def _assign_sub_forward(ref, value, use_locking=False):
    ref.read()[...] -= value
    return ref.value


_STATE = dict(ref_inputs=(0,), mutates=True, aliases=True)
register("Assign", _assign_forward, shape=lambda op: op.inputs[1].shape if not op.attrs["validate_shape"]
         else op.inputs[0].shape.merge_with(op.inputs[1].shape), **_STATE)
register("AssignAdd", _assign_add_forward, shape=shape_same, **_STATE)
register("AssignSub", _assign_sub_forward, shape=shape_same, **_STATE)


def _check_scatter(ref, indices, updates, op_type):
    """TF's checks: indices in ``[0, rows)`` and ``updates.shape == indices.shape + ref.shape[1:]`` (or scalar)."""
    value = ref.read()
    indices = np.asarray(indices)
    rows = value.shape[0] if value.ndim else 0
    bad = np.flatnonzero((indices.reshape(-1) < 0) | (indices.reshape(-1) >= rows))
    if bad.size:
        raise InvalidArgumentError(ref.op, "%s: indices[%d] = %d is not in [0, %d) (variable %s)"
                                   % (op_type, bad[0], indices.reshape(-1)[bad[0]], rows, ref.name))
    want = indices.shape + value.shape[1:]
    if np.ndim(updates) and np.shape(updates) != want:
        raise InvalidArgumentError(ref.op, "%s: updates must have shape indices.shape + params.shape[1:] = %s, "
                                           "got %s (variable %s)" % (op_type, list(want), list(np.shape(updates)),
                                                                     ref.name))
    return value, indices


def _scatter(op_type, np_update):
    def forward(ref, indices, updates, use_locking=False):
        value, indices = _check_scatter(ref, indices, updates, op_type)
        np_update(value, indices, updates)
        return ref.value
    return forward


def _scatter_update(a, i, u):
    a[i] = u


def _scatter_div(a, i, u):
    """``a[i] /= u`` with repeats applied in turn; integers divide as C++ does (truncating)."""
    if a.dtype.kind in "iu":
        u = np.broadcast_to(u, i.shape + a.shape[1:])
        for row, den in zip(i.reshape(-1), u.reshape((-1,) + a.shape[1:])):
            a[row] = np.trunc(a[row] / den).astype(a.dtype)
    else:
        np.divide.at(a, i, u)


for _type, _fn in (("ScatterUpdate", _scatter_update), ("ScatterAdd", np.add.at), ("ScatterSub", np.subtract.at),
                   ("ScatterMul", np.multiply.at), ("ScatterDiv", _scatter_div), ("ScatterMax", np.maximum.at),
                   ("ScatterMin", np.minimum.at)):
    register(_type, _scatter(_type, _fn), shape=shape_same, **_STATE)


def _scatter_nd(op_type, np_update):
    """ScatterNd{Update,Add,Sub}: the last axis of ``indices`` indexes the leading axes of ``ref``."""
    def forward(ref, indices, updates, use_locking=True):
        value = ref.read()
        indices = np.asarray(indices, np.int64)
        k = indices.shape[-1] if indices.ndim else 0
        if indices.ndim < 1 or k > value.ndim:
            raise InvalidArgumentError(ref.op, "%s: indices must have rank >= 1 and indices.shape[-1] <= rank of "
                                               "the variable (%d), got shape %s" % (op_type, value.ndim,
                                                                                   list(indices.shape)))
        flat = indices.reshape(-1, k)
        bad = np.flatnonzero(np.any((flat < 0) | (flat >= np.array(value.shape[:k])), axis=1))
        if bad.size:
            raise InvalidArgumentError(ref.op, "%s: indices[%d] = %s does not index into shape %s (variable %s)"
                                       % (op_type, bad[0], flat[bad[0]].tolist(), list(value.shape), ref.name))
        want = indices.shape[:-1] + value.shape[k:]
        if np.ndim(updates) and np.shape(updates) != want:
            raise InvalidArgumentError(ref.op, "%s: updates must have shape %s, got %s (variable %s)"
                                       % (op_type, list(want), list(np.shape(updates)), ref.name))
        np_update(value, tuple(flat.T), np.broadcast_to(updates, want).reshape((-1,) + value.shape[k:]))
        return ref.value
    return forward


for _type, _fn in (("ScatterNdUpdate", _scatter_update), ("ScatterNdAdd", np.add.at),
                   ("ScatterNdSub", np.subtract.at)):
    register(_type, _scatter_nd(_type, _fn), shape=shape_same, **_STATE)


def _ref(ref):
    return ref._ref() if hasattr(ref, "_ref") else ref


def _update(op_type: str, ref, value, attrs: dict, name):
    """``op_type(ref, value)`` as TF's generated wrapper builds it: in the op's name scope, a Python ``value``
    converted to the variable's dtype as ``<op>/value``."""
    ref = _ref(ref)
    with name_scope(name, op_type) as scope:
        value = convert_to_tensor(value, dtype=ref.dtype, name="value")
        return apply_op(op_type, [ref, value], attrs, name=scope)


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Set the variable to ``value``; returns the new value (TF's Assign)."""
    return _update("Assign", ref, value, dict(validate_shape=validate_shape is not False,
                                              use_locking=use_locking is not False), name)


def assign_add(ref, value, use_locking=None, name=None):
    return _update("AssignAdd", ref, value, dict(use_locking=bool(use_locking)), name)


def assign_sub(ref, value, use_locking=None, name=None):
    return _update("AssignSub", ref, value, dict(use_locking=bool(use_locking)), name)


def _scatter_fn(op_type, locking_default=False):
    def fn(ref, indices, updates, use_locking=locking_default, name=None):
        ref = _ref(ref)
        with name_scope(name, op_type) as scope:       # TF's generated wrapper: <op>/indices, <op>/updates
            indices = convert_to_tensor(indices, name="indices")
            updates = convert_to_tensor(updates, dtype=ref.dtype, name="updates")
            return apply_op(op_type, [ref, indices, updates],
                            dict(T=ref.dtype, Tindices=indices.dtype, use_locking=bool(use_locking)), name=scope)
    return fn


scatter_update = _scatter_fn("ScatterUpdate", True)
scatter_add = _scatter_fn("ScatterAdd")
scatter_sub = _scatter_fn("ScatterSub")
scatter_mul = _scatter_fn("ScatterMul")
scatter_div = _scatter_fn("ScatterDiv")
scatter_max = _scatter_fn("ScatterMax")
scatter_min = _scatter_fn("ScatterMin")
scatter_nd_update = _scatter_fn("ScatterNdUpdate", True)
scatter_nd_add = _scatter_fn("ScatterNdAdd")
scatter_nd_sub = _scatter_fn("ScatterNdSub")
for _f, _t in ((scatter_update, "ref[indices] = updates"), (scatter_add, "ref[indices] += updates"),
               (scatter_sub, "ref[indices] -= updates"), (scatter_mul, "ref[indices] *= updates"),
               (scatter_div, "ref[indices] /= updates"), (scatter_max, "ref[indices] = max(ref[indices], updates)"),
               (scatter_min, "ref[indices] = min(ref[indices], updates)")):
    _f.__doc__ = "``%s`` on the variable's rows (repeated indices each apply); returns the variable." % _t
for _f, _t in ((scatter_nd_update, "="), (scatter_nd_add, "+="), (scatter_nd_sub, "-=")):
    _f.__doc__ = ("``ref[indices[..., :]] %s updates``: the last axis of ``indices`` indexes the leading axes "
                  "of the variable; returns the variable." % _t)


register("IsVariableInitialized", lambda ref, dtype=None: np.array(ref.value is not None), ref_inputs=(0,),
         shape=lambda op: TensorShape([]), dtype=dtypes.bool, stateful=True)


def is_variable_initialized(variable, name=None):
    ref = _ref(variable)
    return apply_op("IsVariableInitialized", [ref], dict(dtype=ref.dtype), name=name)


# ---- counters and assertions (input pipelines: limit_epochs, string_input_producer)

_COUNT_LOCK = threading.Lock()


def _count_up_to_bind(op, session):
    limit = op.attrs["limit"]

    def run(ref):
        with _COUNT_LOCK:
            value = ref.read()
            old = value.copy()
            if old >= limit:
                raise OutOfRangeError(op, "Reached limit of %d\n\t [[node %s]]" % (limit, op.name))
            value[...] = old + 1
            return old
    return run


register("CountUpTo", bind=_count_up_to_bind, ref_inputs=(0,), stateful=True, shape=lambda op: TensorShape([]),
         dtype=lambda op: op.attrs["T"])


def _assert_bind(op, session):
    def run(condition, *data):
        if not np.all(condition):
            raise InvalidArgumentError(op, "assertion failed: [%s]" % "] [".join(
                str(d.item() if isinstance(d, np.ndarray) and d.ndim == 0 else d) for d in data))
    return run


register("Assert", bind=_assert_bind, num_outputs=0, stateful=True)    # TF's logging_ops.Assert


def count_up_to(ref: Any, limit: int, name: Optional[str] = None) -> Tensor:
    """``ref``'s value before incrementing it; OutOfRangeError once it has reached ``limit`` (op ``CountUpTo``)."""
    ref_t = ref._ref() if hasattr(ref, "_ref") else ref
    return apply_op("CountUpTo", [ref_t], dict(limit=int(limit), T=ref_t.dtype), name=name or "CountUpTo")
