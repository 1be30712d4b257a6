"""``tf.while_loop`` with TF1's frame graph (scope ``while/``, frame ``while/while_context``)::

    Enter(v)                 one per loop variable (is_constant=False)
    Merge(Enter, NextIteration)          the variable's value in this iteration
    LoopCond(cond(*merges))
    Switch(Merge, LoopCond) -> :0 Exit (the final value), :1 Identity (the body's input)
    NextIteration(body(*identities))     back to the Merge

Values from outside used in ``cond`` or ``body`` enter through ``Enter(is_constant=True)`` (``contexts.py``).
``maximum_iterations`` adds a leading counter variable and ``i < maximum_iterations`` to the condition, as TF1.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ..framework.graph import GraphKeys, Tensor, control_dependencies, name_scope
from ..framework.tensor_shape import TensorShape, as_shape
from ..framework.registry import constant, convert_to_tensor
from . import nest
from .contexts import WhileContext, is_loop_constant_enter
from .flow_ops import enter, exit_, loop_cond, merge, next_iteration, switch
from ..ops import array_ops, math_ops
from .tensor_array import TensorArray, from_flow, to_flow


def _check_shape(var: Tensor, invariant: TensorShape, after: Tensor) -> None:
    """A body result must fit its loop variable's shape invariant (TF's _EnforceShapeInvariant)."""
    if not invariant.is_compatible_with(after.shape) or (
            invariant.dims is not None and after.shape.dims is None):
        raise ValueError(
            "Input tensor '%s' enters the loop with shape %s, but has shape %s after one iteration. To allow the "
            "shape to vary across iterations, use the `shape_invariants` argument of tf.while_loop to specify a "
            "less-specific shape." % (var.name, invariant, after.shape))
    if invariant.dims is not None and after.shape.dims is not None:
        for a, b in zip(invariant.dims, after.shape.dims):
            if a is not None and b is None:
                raise ValueError(
                    "Input tensor '%s' enters the loop with shape %s, but has shape %s after one iteration. To "
                    "allow the shape to vary across iterations, use the `shape_invariants` argument of "
                    "tf.while_loop to specify a less-specific shape." % (var.name, invariant, after.shape))


def _build_loop(context: WhileContext, cond: Callable, body: Callable, loop_vars: Any, shape_invariants: Any):
    graph = context.graph
    flat = [convert_to_tensor(v) for v in nest.flatten(loop_vars)]
    if shape_invariants is None:
        invariants = [v.shape for v in flat]
    else:
        nest.assert_same_structure(loop_vars, shape_invariants)
        invariants = [as_shape(s) for s in nest.flatten(shape_invariants)]
        for v, s in zip(flat, invariants):
            if not s.is_compatible_with(v.shape):
                raise ValueError("The shape invariant specified for %s is not compatible with the initial shape "
                                 "of the loop variable. It enters the loop with shape %s, but the specified shape "
                                 "invariant is %s." % (v.name, v.shape, s))
    context.values.update(flat)
    real = flat
    if context.outer_context is not None:
        real = [context.outer_context.add_value(v) for v in flat]
    context.enter()
    try:
        outer_controls = graph._control_inputs_for({t.op for t in real}) if graph._control_stack else []
        with control_dependencies(None):
            enters = [enter(v, context.name, is_constant=False, parallel_iterations=context.parallel_iterations,
                            use_input_shape=shape_invariants is None) for v in real]
        pivot = None
        outer = context.outer_context
        while outer is not None and pivot is None:
            pivot = outer.get_control_pivot()
            outer = outer.outer_context
        for e, shape in zip(enters, invariants):
            e.op._set_control_flow_context(context)
            e._shape = shape
            graph.prevent_feeding(e)
            e.op._add_control_inputs(outer_controls)
            if pivot is not None and is_loop_constant_enter(e.op.inputs[0].op):
                e.op._add_control_input(pivot.op)
            if context.outer_context is not None:
                context.outer_context.add_inner_op(e.op)
        context.values = set(enters)      # (TF's _InitializeValues: the initial values are no longer known here)
        context.loop_enters = enters

        merges = [merge([e, e])[0] for e in enters]
        for m, shape in zip(merges, invariants):
            m._shape = shape
        context.pivot_for_pred = merges[0]
        c = convert_to_tensor(cond(*nest.pack_sequence_as(loop_vars, merges)))
        if c.dtype.name != "bool" or c.shape.ndims not in (None, 0):
            raise ValueError("The loop condition must be a scalar bool tensor, got %s of shape %s"
                             % (c.dtype.name, c.shape))
        context.pivot = loop_cond(c, name="LoopCond")
        switches = [switch(m, context.pivot) for m in merges]
        identities = [array_ops.identity(s[1]) for s in switches]
        context.pivot_for_body = identities[0]

        summaries = graph.get_collection_ref(GraphKeys.SUMMARIES)
        before = len(summaries)
        result = body(*nest.pack_sequence_as(loop_vars, identities))
        if not nest.is_nested(result):
            result = [result]
        if len(summaries) > before:      # summaries made in the body run with each iteration
            new = summaries[before:]
            del summaries[before:]
            with control_dependencies(new):
                result = nest.map_structure(array_ops.identity, result)
        try:
            nest.assert_same_structure(list(nest.pack_sequence_as(loop_vars, flat)) if nest.is_nested(loop_vars)
                                       else [loop_vars], list(result) if isinstance(result, (list, tuple))
                                       else result)
        except ValueError as e:
            raise ValueError("The body of the while loop must return the structure of its loop_vars: %s" % e) \
                from None
        flat_result = [convert_to_tensor(r) for r in nest.flatten(result)]
        if len(flat_result) != len(merges):
            raise ValueError("Number of inputs and outputs of 'body' are different: %d, %d"
                             % (len(merges), len(flat_result)))
        for m, r, v, shape in zip(merges, flat_result, flat, invariants):
            if r.dtype.base_dtype != v.dtype.base_dtype:
                raise ValueError("Loop variable %s has dtype %s but the body returns dtype %s"
                                 % (v.name, v.dtype.name, r.dtype.name))
            _check_shape(v, shape, r)
            m.op._update_input(1, next_iteration(r))
        exits = [exit_(s[0]) for s in switches]
        for x, shape in zip(exits, invariants):
            x._shape = shape
        context.loop_exits = exits
        context.exit_result(exits)
    finally:
        context.exit()
    return result, exits


def while_loop(cond: Callable, body: Callable, loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
               name: Optional[str] = None, maximum_iterations: Any = None, return_same_structure: bool = False):
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``; TF1's ``tf.while_loop``.

    ``loop_vars``: a (nested) structure of tensors and TensorArrays (a TensorArray is carried by its flow, and
    ``cond``/``body`` see TensorArrays again); ``cond`` and ``body`` take them as positional arguments
    (``body`` returns the same structure). ``shape_invariants``: shapes the variables may take across
    iterations (default: their initial shapes). ``maximum_iterations``: stop after that many iterations.
    A single loop variable comes back as itself unless ``return_same_structure``."""
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    flat_original = nest.flatten(loop_vars)
    if any(isinstance(v, TensorArray) for v in flat_original):
        # TF's _convert_tensorarray_to_flow / _convert_flow_to_tensorarray: a TensorArray is carried by its flow
        structure, user_cond, user_body = loop_vars, cond, body

        def as_arrays(*flows):
            return nest.pack_sequence_as(structure, [from_flow(o, f) for o, f in zip(flat_original, flows)])
        cond = lambda *flows: user_cond(*as_arrays(*nest.flatten(list(flows))))  # noqa: E731
        body = lambda *flows: nest.map_structure(  # noqa: E731
            to_flow, user_body(*as_arrays(*nest.flatten(list(flows)))))
        if shape_invariants is not None:
            nest.assert_same_structure(loop_vars, shape_invariants)
            shape_invariants = nest.pack_sequence_as(shape_invariants, [
                TensorShape([]) if isinstance(o, TensorArray) else s
                for o, s in zip(flat_original, nest.flatten(shape_invariants))])
        result = while_loop(cond, body, nest.map_structure(to_flow, loop_vars), shape_invariants,
                            parallel_iterations, back_prop, swap_memory, name, maximum_iterations,
                            return_same_structure)
        flat_result = nest.flatten(result)
        return nest.pack_sequence_as(result, [from_flow(o, r) for o, r in zip(flat_original, flat_result)])
    with name_scope(name, "while"):
        if not isinstance(loop_vars, (list, tuple)):
            loop_vars = [loop_vars]       # (TF wants a list or tuple; a lone tensor is taken as one)
        if not nest.flatten(loop_vars):
            raise ValueError("No loop variables provided")
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if maximum_iterations.shape.ndims not in (None, 0):
                raise ValueError("maximum_iterations must be a scalar, saw shape: %s" % maximum_iterations.shape)
            counter = constant(0, dtype=maximum_iterations.dtype, name="iteration_counter")
            user_cond, user_body, limit = cond, body, maximum_iterations
            if len(loop_vars) == 1 and not return_same_structure:
                loop_vars = (counter, loop_vars[0])
                cond = lambda i, lv: math_ops.logical_and(i < limit, user_cond(lv))  # noqa: E731
                body = lambda i, lv: (i + 1, user_body(lv))  # noqa: E731
            else:
                loop_vars = (counter, loop_vars)
                cond = lambda i, lv: math_ops.logical_and(i < limit, user_cond(*lv))  # noqa: E731
                body = lambda i, lv: (i + 1, user_body(*lv))  # noqa: E731
            if shape_invariants is not None:
                shape_invariants = (TensorShape([]), shape_invariants)
        context = WhileContext("while_context", parallel_iterations, back_prop, swap_memory, maximum_iterations)
        if context.outer_context is None:
            context.graph.add_to_collection("while_context", context)
        result, exits = _build_loop(context, cond, body, loop_vars, shape_invariants)
        packed = nest.pack_sequence_as(result, exits)
        if maximum_iterations is not None:
            return packed[1]
        if return_same_structure:
            return packed
        return packed[0] if len(exits) == 1 else packed
