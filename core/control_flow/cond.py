"""``tf.cond`` and ``tf.case`` with TF1's graph: only the taken branch runs.

``cond(pred, true_fn, false_fn)`` builds, in scope ``cond/``::

    Switch(pred, pred) -> switch_f = Identity(:0), switch_t = Identity(:1); pred_id = Identity(pred)
    true_fn()  inside CondContext(pred_id, switch_t, branch=1)   (outside values via Switch(v, pred_id):1)
    false_fn() inside CondContext(pred_id, switch_f, branch=0)   (outside values via Switch(v, pred_id):0)
    Merge(false_result, true_result) per result

At run time the untaken branch's values are dead (never computed) and each Merge forwards the live one.

``smart_cond`` is TF's (``tf.__internal__.smart_cond``, what Keras layers select with): the branch itself when the
predicate is known while building (a Python bool, or a tensor with a constant value), a ``cond`` otherwise.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..framework.graph import GraphKeys, Operation, Tensor, control_dependencies, name_scope
from ..framework.registry import constant_value, convert_to_tensor
from . import nest
from .contexts import CondContext
from .flow_ops import merge, switch
from .grouping import no_op, with_dependencies
from .tensor_array import from_flow, to_flow
from ..ops import array_ops


def _build_branch(context: CondContext, fn: Callable[[], Any]):
    """Run ``fn`` inside ``context``; return (its result as given, the flat tensors the Merge takes)."""
    graph = context.graph
    summaries = graph.get_collection_ref(GraphKeys.SUMMARIES)
    before = len(summaries)
    context.enter()
    try:
        original = fn()
        if len(summaries) > before:       # summaries made in a branch run only with it
            new = summaries[before:]
            del summaries[before:]
            with control_dependencies(new):
                if original is None:
                    original = no_op()
                elif not isinstance(original, Operation):
                    original = nest.map_structure(array_ops.identity, original)
        if original is None:
            return None, None
        flat = []
        for v in nest.flatten(original):
            if isinstance(v, Operation):
                flat.append(with_dependencies([v], context.pivot))
            else:
                flat.append(context.process_output(convert_to_tensor(to_flow(v))))
        context.exit_result(flat)
        return original, flat
    finally:
        context.exit()


def _unpack_if_singleton(x):
    return x[0] if isinstance(x, (list, tuple)) and len(x) == 1 else x


def cond(pred: Any, true_fn: Optional[Callable] = None, false_fn: Optional[Callable] = None, strict: bool = False,
         name: Optional[str] = None, fn1: Optional[Callable] = None, fn2: Optional[Callable] = None) -> Any:
    """``true_fn()`` if ``pred`` else ``false_fn()``; only that branch's ops run. Both must return the same
    structure of tensors (or ops) with the same dtypes; a singleton list or tuple is unpacked unless ``strict``."""
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if true_fn is None:
        raise TypeError("true_fn must not be None.")
    if false_fn is None:
        raise TypeError("false_fn must not be None.")
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    with name_scope(name, "cond") as scope:
        pred = convert_to_tensor(pred)
        if pred.dtype.base_dtype.name != "bool" or (pred.shape.ndims not in (None, 0)):
            raise ValueError("pred must be a scalar bool tensor, got %s of shape %s" % (pred.dtype.name,
                                                                                       pred.shape))
        p_false, p_true = switch(pred, pred)
        pivot_true = array_ops.identity(p_true, name="switch_t")
        pivot_false = array_ops.identity(p_false, name="switch_f")
        pred = array_ops.identity(pred, name="pred_id")
        graph = pred.graph
        for t in (p_true, pivot_true, pivot_false, pred):
            graph.prevent_fetching(t.op)

        context_t = CondContext(pred, pivot_true, branch=1)
        orig_t, res_t = _build_branch(context_t, true_fn)
        if orig_t is None:
            raise ValueError("true_fn must have a return value.")
        context_f = CondContext(pred, pivot_false, branch=0)
        orig_f, res_f = _build_branch(context_f, false_fn)
        if orig_f is None:
            raise ValueError("false_fn must have a return value.")
        if not strict:
            orig_t, orig_f = _unpack_if_singleton(orig_t), _unpack_if_singleton(orig_f)
        try:
            nest.assert_same_structure(orig_t, orig_f)
        except (ValueError, TypeError) as e:
            raise ValueError("true_fn and false_fn must return the same structure: %s" % e) from None
        for t, f in zip(res_t, res_f):
            if t.dtype.base_dtype != f.dtype.base_dtype:
                raise ValueError("Outputs of true_fn and false_fn must have the same type: %s, %s"
                                 % (t.dtype.name, f.dtype.name))
        merges = [merge([f, t], name="Merge")[0] for f, t in zip(res_f, res_t)]
        if context_t.outer_context is None:
            graph.add_to_collection("cond_context", context_t)
            graph.add_to_collection("cond_context", context_f)
        merges = nest.pack_sequence_as(orig_t, [from_flow(o, m) for o, m in zip(nest.flatten(orig_t), merges)])
        del scope
        return _unpack_if_singleton(merges) if not strict else merges


def smart_constant_value(pred: Any) -> Optional[bool]:
    """``pred``'s value if known while building: a Python bool (or 1/0), or a tensor's constant value (TF's
    ``constant_value``: a Const, through Identity...); ``None`` for a tensor known only when run."""
    if isinstance(pred, Tensor):
        value = constant_value(pred)
        return None if value is None else bool(value)
    if isinstance(pred, (bool, np.bool_)) or (isinstance(pred, (int, np.integer)) and pred in (0, 1)):
        return bool(pred)
    raise TypeError("Argument `pred` must be a Tensor, or a Python bool, or 1 or 0. Received: pred=%r of type %s"
                    % (pred, type(pred).__name__))


def smart_cond(pred: Any, true_fn: Callable, false_fn: Callable, name: Optional[str] = None) -> Any:
    """``true_fn()`` or ``false_fn()`` when ``pred``'s value is known while building (``smart_constant_value``),
    else ``cond(pred, true_fn, false_fn, name=name)``."""
    if not callable(true_fn):
        raise TypeError("Argument `true_fn` must be callable. Received %r" % (true_fn,))
    if not callable(false_fn):
        raise TypeError("Argument `false_fn` must be callable. Received %r" % (false_fn,))
    value = smart_constant_value(pred)
    if value is None:
        return cond(pred, true_fn, false_fn, name=name)
    return true_fn() if value else false_fn()


def case(pred_fn_pairs: Any, default: Optional[Callable] = None, exclusive: bool = False, strict: bool = False,
         name: str = "case") -> Any:
    """The result of the first ``fn`` whose ``pred`` is true (``default`` if none is), as nested ``cond``s
    (TF1's ``tf.case``: the last pair innermost; ``exclusive=True`` also checks that at most one is true)."""
    if isinstance(pred_fn_pairs, dict):
        pairs = list(pred_fn_pairs.items())
    else:
        pairs = list(pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError("Each entry in pred_fn_pairs must be a 2-tuple, got %r" % (pair,))
        p, fn = pair
        if not isinstance(p, Tensor):
            raise TypeError("pred must be Tensor, got %r" % (p,))
        if not callable(fn):
            raise TypeError("fn for pred %s must be callable." % p.name)
    if default is None:
        if not pairs:
            raise ValueError("pred_fn_pairs is empty and there is no default")
        *pairs, (_, default) = pairs
    with name_scope(name, "case"):
        if not pairs:
            return default()
        fn = default        # (TF also adds Asserts for ``exclusive``; tfevents has no Assert op)
        for p, f in reversed(pairs):
            fn = _cond_fn(p, f, fn, strict)
        return fn()


def _cond_fn(pred, true_fn, false_fn, strict):
    return lambda: cond(pred, true_fn, false_fn, strict=strict)
