"""Gradients through ``while_loop``, built as TF1 builds them (``control_flow_state.py``, ``control_flow_grad.py``).

For each forward loop on the path of ``tf.gradients`` a ``GradLoopState``:

- adds a counter to the forward loop (``f_count``: how many iterations ran), and a backprop loop
  (frame ``gradients/<loop>/while_context``) that counts it down (``b_count``);
- saves every forward value a gradient needs on a stack: ``StackPushV2`` in the forward loop (``f_acc``), and
  ``StackPopV2`` in the backprop loop, so iteration i of the backprop sees iteration n-1-i's values
  (``get_real_value``); loop invariants enter the backprop loop directly, constants are copied;
- turns the loop's control ops around: an ``Exit``'s gradient enters the backprop loop (``b_exit``), a loop
  ``Switch`` becomes a ``Merge`` (``b_switch``, closed by a NextIteration once the body's gradient is known), a
  ``Merge`` a ``Switch`` on the backprop predicate, an ``Enter`` an ``Exit`` (or, for an invariant, a sum over the
  iterations: ``b_acc``).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..framework import dtypes
from ..framework.graph import Tensor, control_dependencies, get_default_graph
from ..framework.tensor_shape import TensorShape
from ..framework.registry import IndexedSlices, constant, constant_value, convert_to_tensor, register, shape_same
from .contexts import (CondContext, WhileContext, is_loop_exit, output_context, while_context_of,
                       zeros_like_outside_loop)
from .flow_ops import control_trigger, enter, exit_, loop_cond, merge, next_iteration, switch
from .stack_ops import stack_pop_v2, stack_push_v2, stack_v2
from ..ops import array_ops, math_ops


def _loop_constant_enter(value: Tensor):
    op = value.op
    while op.type in ("Switch", "RefSwitch", "Identity", "RefIdentity"):
        op = op.inputs[0].op
    return op if op.type == "Enter" and op.attrs.get("is_constant") else None


def is_loop_switch(op) -> bool:
    ctx = op._control_flow_context
    return (op.type in ("Switch", "RefSwitch") and isinstance(ctx, WhileContext)
            and ctx.pivot is not None and op.inputs[1] is ctx.pivot)


class GradLoopState:
    """The gradient's view of one forward loop (TF's ``_GradLoopState``)."""

    def __init__(self, forward: WhileContext, outer: Optional["GradLoopState"]):
        self.forward_context, self.outer_grad_state = forward, outer
        self.history_map: Dict[Tensor, Tensor] = {}
        self.switch_map: Dict[Any, Tensor] = {}
        self.unused_exits: List[Tensor] = []
        self.deferred_exits: List[Tensor] = []
        self.forward_loop_exits = list(forward.loop_exits)
        self.pending_exits_count = len(forward.loop_exits)
        self._forward_sync = self._grad_sync = None
        outer_forward = forward.outer_context
        if outer_forward is not None:
            outer_forward.enter()
        count, self.forward_index = _add_forward_loop_counter(forward, outer)
        if outer_forward is not None:
            outer_forward.exit()
        if outer is not None:      # a nested loop: remember its iteration count for each outer iteration
            outer_forward.values.add(count)
            history = outer.add_forward_accumulator(count)
            outer.grad_context.enter()
            self.grad_context = WhileContext(_frame_base(forward.name), forward.parallel_iterations,
                                             forward.back_prop, forward.swap_memory, forward.maximum_iterations)
            self.grad_context.grad_state = self
            real_count = outer.add_backprop_accumulated_value(history, count)
            self.grad_index = _add_backprop_loop_counter(self.grad_context, real_count, outer)
            outer.grad_context.exit()
        else:
            if outer_forward is not None:
                outer_forward.enter()
            self.grad_context = WhileContext(_frame_base(forward.name), forward.parallel_iterations,
                                             forward.back_prop, forward.swap_memory, forward.maximum_iterations)
            self.grad_context.grad_state = self
            self.grad_index = _add_backprop_loop_counter(self.grad_context, count, None)
            if outer_forward is not None:
                outer_forward.exit()

    @property
    def forward_sync(self):
        if self._forward_sync is None:
            with control_dependencies(None):
                self._forward_sync = control_trigger(name="f_sync")
            self._forward_sync._set_control_flow_context(self.forward_context)
            self.forward_index.op._add_control_input(self._forward_sync)
        return self._forward_sync

    @property
    def grad_sync(self):
        if self._grad_sync is None:
            with control_dependencies(None):
                self._grad_sync = control_trigger(name="b_sync")
            self._grad_sync._set_control_flow_context(self.grad_context)
            self.grad_index.op._add_control_input(self._grad_sync)
            if self.grad_context.outer_context is not None:
                self.grad_context.outer_context.add_inner_op(self._grad_sync)
        return self._grad_sync

    def add_forward_accumulator(self, value: Tensor, dead_branch: bool = False) -> Tensor:
        """A stack with ``value``'s history: pushed in the forward loop once per iteration."""
        graph = value.graph
        current = graph._get_control_flow_context()
        with control_dependencies(None):
            if current is not None:
                current.enter()
            acc = stack_v2(value.dtype, name="f_acc")
            if current is not None:
                current.exit()
            entered = self.forward_context.add_value(acc)
            value_ctx = output_context(value.op)
            if value_ctx is self.forward_context:
                self.forward_context.enter()
                push = stack_push_v2(entered, value, swap_memory=self.forward_context.swap_memory)
                self.forward_context.exit()
                self.forward_index.op._add_control_input(push.op)
            else:
                if not isinstance(value_ctx, CondContext):
                    raise TypeError("value_ctxt is not a CondContext: %s" % value_ctx)
                if dead_branch:
                    value_ctx.outer_context.enter()
                    push = stack_push_v2(entered, value, swap_memory=self.forward_context.swap_memory)
                    value_ctx.outer_context.exit()
                    push.op._set_control_flow_context(value_ctx)
                else:
                    value_ctx.enter()
                    push = stack_push_v2(entered, value, swap_memory=self.forward_context.swap_memory)
                    value_ctx.exit()
                self.forward_sync._add_control_input(push.op)
            push.op._add_control_input(self.forward_index.op.inputs[0].op)
        return acc

    def add_backprop_accumulated_value(self, history: Tensor, value: Tensor, dead_branch: bool = False) -> Tensor:
        """The pop of ``history`` in the backprop loop (under a Switch when ``value`` is in a cond)."""
        history_ctx = history.op._control_flow_context
        cond_ctx = None
        ctx = value.op._control_flow_context
        while ctx is not None and ctx is not history_ctx:
            if isinstance(ctx, CondContext):
                cond_ctx = ctx
                break
            ctx = ctx.outer_context
        with control_dependencies(None):
            self.grad_context.enter()
            if cond_ctx is not None:
                state, pred = self, None
                while pred is None and state is not None:
                    pred = state.history_map.get(cond_ctx.pred)
                    state = state.outer_grad_state
                pred = cond_ctx.pred if pred is None else pred
                branch = 1 - cond_ctx.branch if dead_branch else cond_ctx.branch
                history = switch(history, pred)[branch]
            pop = stack_pop_v2(history, value.dtype)
            pop._shape = value.shape
            self.grad_context.exit()
        if self.grad_context.parallel_iterations > 1:
            self.grad_sync._add_control_input(pop.op)
        return pop

    def get_real_value(self, value: Tensor) -> Tensor:
        """``value`` (made in the forward loop) as the backprop loop sees it: its saved history popped."""
        real = self.history_map.get(value)
        if real is not None:
            return real
        current, state, history = value, self, None
        while True:
            enter_op = _loop_constant_enter(current)
            if enter_op is not None:
                current = enter_op.inputs[0]
                state = state.outer_grad_state
                if state is None:            # an invariant of every loop here: no history needed
                    real = self.grad_context.add_value(current)
                    break
            elif current.op.type == "Const":
                real = constant(constant_value(current), dtype=current.dtype)
                break
            else:
                self.grad_context.exit()
                history = state.add_forward_accumulator(current)
                self.grad_context.enter()
                break
        if real is None:
            real = state.add_backprop_accumulated_value(history, current)
            if state is not self:
                real = self.grad_context.add_value(real)
        self.history_map[value] = real
        return real

    def history_value(self, pred: Tensor) -> Tensor:
        """A cond predicate inside the loop, as saved for each iteration (TF's history_map of preds)."""
        real = self.history_map.get(pred)
        if real is None:
            self.grad_context.exit()
            history = self.add_forward_accumulator(pred)
            self.grad_context.enter()
            real = self.add_backprop_accumulated_value(history, pred)
            self.history_map[pred] = real
        return real


def _frame_base(name: str) -> str:
    """``while/while_context`` -> ``while/while_context``; the graph's name scope (``gradients/``) is added by
    ``unique_name`` when the backprop context is made."""
    return name


def _add_forward_loop_counter(ctx: WhileContext, outer: Optional[GradLoopState]):
    n = constant(0, name="f_count")
    if outer is not None:
        n.op._add_control_input(outer.forward_index.op.inputs[0].op)
    ctx.enter()
    try:
        ctx.values.add(n)
        entered = enter(n, ctx.name, is_constant=False, parallel_iterations=ctx.parallel_iterations, name="f_count")
        entered.op._set_control_flow_context(ctx)
        ctx.loop_enters.append(entered)
        m = merge([entered, entered])[0]
        s = switch(m, ctx.pivot)
        index = math_ops.add(s[1], 1, name="Add")
        nxt = next_iteration(index)
        m.op._update_input(1, nxt)
        total = exit_(s[0], name="f_count")
        ctx.loop_exits.append(total)
        ctx.exit_result([total])
    finally:
        ctx.exit()
    return total, nxt


def _add_backprop_loop_counter(ctx: WhileContext, count: Tensor, outer: Optional[GradLoopState]):
    one = constant(1, name="b_count")
    ctx.enter()
    try:
        ctx.values.add(count)
        entered = enter(count, ctx.name, is_constant=False, parallel_iterations=ctx.parallel_iterations,
                        name="b_count")
        entered.op._set_control_flow_context(ctx)
        ctx.loop_enters.append(entered)
        m = merge([entered, entered])[0]
        ctx.pivot_for_pred = m
        pred = math_ops.greater_equal(m, one)
        ctx.pivot = loop_cond(pred, name="b_count")
        s = switch(m, ctx.pivot)
        index = math_ops.subtract(s[1], one)
        ctx.pivot_for_body = index
        nxt = next_iteration(index)
        m.op._update_input(1, nxt)
        final = exit_(s[0], name="b_count")
        ctx.loop_exits.append(final)
        ctx.exit_result([final])
        if outer is not None:
            outer.grad_sync._add_control_input(final.op)
    finally:
        ctx.exit()
    return nxt


def _add_backprop_accumulator(ctx: WhileContext, op, grad: Tensor) -> Tensor:
    """The sum over all iterations of the gradient of a loop invariant (``b_acc``)."""
    ctx.exit()
    shape = grad.shape
    outer = ctx.outer_context
    if shape.is_fully_defined():
        if outer is not None:
            outer.enter()
        acc = constant(0, dtype=grad.dtype, shape=shape.as_list(), name="b_acc")
        if outer is not None:
            outer.exit()
    else:
        value = op.inputs[0]
        if isinstance(outer, WhileContext) and outer.grad_state is not None:
            forward = ctx.grad_state.forward_context
            forward.outer_context.enter()
            zeros_shape = array_ops.shape(value, optimize=False)
            forward.outer_context.exit()
            outer_state = ctx.grad_state.outer_grad_state
            history = outer_state.add_forward_accumulator(zeros_shape)
            outer.enter()
            real_shape = outer_state.add_backprop_accumulated_value(history, zeros_shape)
            acc = array_ops.zeros(real_shape, grad.dtype)
            outer.exit()
        else:
            if outer is not None:
                outer.enter()
            acc = array_ops.zeros(array_ops.shape(value, optimize=False), grad.dtype)
            if outer is not None:
                outer.exit()
    ctx.enter()
    ctx.values.add(acc)
    entered = enter(acc, ctx.name, is_constant=False, parallel_iterations=ctx.parallel_iterations, name="b_acc")
    entered.op._set_control_flow_context(ctx)
    ctx.loop_enters.append(entered)
    m = merge([entered, entered], name="b_acc")[0]
    s_false, s_true = switch(m, ctx.pivot)
    total = math_ops.add(s_true, grad, name="Add")
    m.op._update_input(1, next_iteration(total))
    result = exit_(s_false, name="b_acc")
    ctx.loop_exits.append(result)
    ctx.exit_result([result])
    return result


# ------------------------------------------------------------------------------------------ the whole pass


class LoopGradients:
    """The GradLoopStates of one ``tf.gradients`` call (TF's ``ControlFlowState``), with the hooks the
    backward pass calls around each op."""

    def __init__(self):
        self.states: Dict[WhileContext, GradLoopState] = {}

    @classmethod
    def for_path(cls, between: set, between_list: list) -> Any:
        """A state per loop one of whose Exits is on the path, in TF's order (``between_list``: breadth first
        back from the ys, so an outer loop comes before the loops inside it). Every Exit of such a loop joins
        ``between``, and every loop-variable Enter (TF gives an unused one a pending count of 1: its gradient,
        an Exit of the backprop loop, is built whenever its Merge's is). ``NO_LOOPS`` when no loop is on it."""
        state = None
        for op in list(between_list):
            if not is_loop_exit(op):
                continue
            forward = while_context_of(op)
            state = state or cls()
            if forward in state.states:
                continue
            outer_forward = forward.outer_context.get_while_context() if forward.outer_context else None
            grad_state = GradLoopState(forward, state.states.get(outer_forward))
            state.states[forward] = grad_state
            for x in grad_state.forward_loop_exits:
                if x.op not in between:
                    between.add(x.op)
                    between_list.append(x.op)
        if state is not None:
            read_on_path = {t for op in between for t in op.inputs}
            for grad_state in state.states.values():
                for e in grad_state.forward_context.loop_enters:
                    if e in read_on_path:
                        between.add(e.op)
        return state if state is not None else NO_LOOPS

    def grad_state_of(self, op, before: bool) -> Optional[GradLoopState]:
        forward = while_context_of(op)
        if before and is_loop_exit(op) and forward is not None:
            # the gradients reaching an Exit are summed in the context the Exit's value lives in: the outer one
            outer = forward.outer_context
            forward = outer.get_while_context() if outer is not None else None
        return self.states.get(forward) if forward is not None else None

    def enter(self, op, before: bool) -> None:
        state = self.grad_state_of(op, before)
        if state is not None:
            state.grad_context.enter()

    def exit(self, op, before: bool) -> None:
        state = self.grad_state_of(op, before)
        if state is not None:
            state.grad_context.exit()

    @staticmethod
    def ready_early(op, pending_count: int) -> bool:
        """A loop Switch is processed once any of its gradients is in (its NextIteration's comes later)."""
        return pending_count > 0 and is_loop_switch(op)

    @staticmethod
    def waits_for_other_exits(op) -> bool:
        """An Exit whose gradients are in waits for its loop's other Exits (``gradients._defer_exit``)."""
        return op.type == "Exit"

    def process_unused_exits(self, pending: dict, to_ops: set) -> List[Tensor]:
        """Exits nothing on the path reads: they get zero gradients once their loop's other exits are in."""
        out = []
        for state in self.states.values():
            for y in state.forward_loop_exits:
                if pending.get(y.op, 0) == 0:
                    state.pending_exits_count -= 1
                    if y.op not in to_ops:
                        state.unused_exits.append(y)
                    if state.pending_exits_count == 0:
                        out.extend(state.unused_exits)
        return out

    def zeros_like_for_exit(self, val: Tensor) -> Tensor:
        forward = val.op._control_flow_context
        outer_forward = forward.outer_context.get_while_context() if forward.outer_context else None
        outer_state = self.states.get(outer_forward) if outer_forward is not None else None
        if outer_state is not None:
            if val.shape.is_fully_defined():
                outer_state.grad_context.enter()
                result = array_ops.zeros(val.shape.as_list(), val.dtype)
                outer_state.grad_context.exit()
                return result
            forward.outer_context.enter()
            shape = array_ops.shape(val, optimize=False)
            forward.outer_context.exit()
            history = outer_state.add_forward_accumulator(shape)
            outer_state.grad_context.enter()
            real_shape = outer_state.add_backprop_accumulated_value(history, shape)
            result = array_ops.zeros(real_shape, val.dtype)
            outer_state.grad_context.exit()
            return result
        if val.shape.is_fully_defined():
            return array_ops.zeros(val.shape.as_list(), val.dtype)
        return array_ops.zeros_like(val)

    def zeros_like(self, op, index: int):
        """Zeros for an output of ``op`` that has no gradient, made in the backprop loop (TF's ZerosLike): a
        constant when the shape is static, else the forward shape's history; for a cond's Switch, under a Switch
        of the saved predicate, so they exist exactly when that side was taken."""
        if is_loop_switch(op):
            return None
        dead_branch = op.type in ("Switch", "RefSwitch")
        state = self.states.get(while_context_of(op))
        if state is None:
            return zeros_like_outside_loop(op, index)
        ctx = op._control_flow_context
        val = op.outputs[index]
        if val.shape.is_fully_defined():
            result = constant(0, dtype=val.dtype, shape=val.shape.as_list())
            if dead_branch:
                result = switch(result, state.history_map.get(ctx.pred))[1 - ctx.branch]
            return result
        if dead_branch:
            ctx.outer_context.enter()
            val = switch(op.inputs[0], ctx.pred)[1 - ctx.branch]
            zeros_shape = array_ops.shape(val, optimize=False)
            ctx.outer_context.exit()
            val.op._set_control_flow_context(ctx)
            zeros_shape.op._set_control_flow_context(ctx)
        else:
            ctx.enter()
            zeros_shape = array_ops.shape(val, optimize=False)
            ctx.exit()
        state.grad_context.exit()
        history = state.add_forward_accumulator(zeros_shape, dead_branch=dead_branch)
        state.grad_context.enter()
        real_shape = state.add_backprop_accumulated_value(history, zeros_shape, dead_branch)
        return array_ops.zeros(real_shape, val.dtype)

    def post_processing(self) -> None:
        """A loop variable whose next value does not depend on its current one: zeros for iterations > 0."""
        for state in self.states.values():
            for b_merge in state.switch_map.values():
                m = b_merge.op
                if m.inputs[0] is m.inputs[1]:
                    dtype, shape = m.inputs[0].dtype, m.inputs[0].shape
                    if shape.is_fully_defined():
                        state.grad_context.enter()
                        nxt = next_iteration(constant(0, dtype=dtype, shape=shape.as_list()))
                        state.grad_context.exit()
                    else:
                        outer = state.grad_context.outer_context
                        if outer is not None:
                            outer.enter()
                        zeros = array_ops.zeros(array_ops.shape(m.inputs[0].op.inputs[0], optimize=False), dtype)
                        if outer is not None:
                            outer.exit()
                        state.grad_context.enter()
                        nxt = next_iteration(zeros)
                        state.grad_context.exit()
                    m._update_input(1, nxt)


# ------------------------------------------------------------------------------------------ op gradients

def cond_pred_in_loop(pred: Any) -> Any:
    """A cond's predicate as the backprop sees it: inside a backprop loop, the forward iteration's saved value."""
    ctx = get_default_graph()._get_control_flow_context()
    grad_ctx = ctx.get_while_context() if ctx is not None else None
    if grad_ctx is None or grad_ctx.grad_state is None:
        return pred
    return grad_ctx.grad_state.history_value(pred)


def loop_switch_grad(op: Any, *grads: Any) -> list:
    grad_ctx = get_default_graph()._get_control_flow_context()
    state = grad_ctx.grad_state
    b_merge = state.switch_map.get(op)
    if b_merge is not None:                 # second visit: the body's gradient closes the backprop loop
        if grads[1] is not None:
            b_merge.op._update_input(1, next_iteration(grads[1]))
        return [None, None]
    if grads[0] is not None:                # first visit: the Exit's gradient
        b_merge = merge([grads[0], grads[0]], name="b_switch")[0]
        state.switch_map[op] = b_merge
        return [b_merge, None]
    return [None, None]


def loop_merge_grad(op: Any, grad: Any) -> list:
    grad_ctx = get_default_graph()._get_control_flow_context()
    return switch(grad, grad_ctx.pivot)


def _exit_grad(op: Any, grad: Any) -> list:
    grad_ctx = get_default_graph()._get_control_flow_context()
    if grad_ctx is None or not grad_ctx.back_prop:
        return [None]
    if op._control_flow_context.grad_state is not None:
        raise TypeError("Second-order gradient for while loops not supported.")
    grad_ctx.values.add(grad)
    grad_ctx.enter()
    result = enter(grad, grad_ctx.name, is_constant=False, parallel_iterations=grad_ctx.parallel_iterations,
                   name="b_exit")
    result.op._set_control_flow_context(grad_ctx)
    grad_ctx.loop_enters.append(result)
    grad_ctx.exit()
    return [result]


def _enter_grad(op: Any, grad: Any) -> list:
    grad_ctx = get_default_graph()._get_control_flow_context()
    if grad_ctx is None or not grad_ctx.back_prop or grad_ctx.grad_state is None:
        return [grad]
    if op.attrs.get("is_constant"):
        if isinstance(grad, IndexedSlices):
            grad = convert_to_tensor(grad)     # (TF accumulates slices; summed densely here)
        return [_add_backprop_accumulator(grad_ctx, op, grad)]
    result = exit_(grad)
    grad_ctx.loop_exits.append(result)
    grad_ctx.exit_result([result])
    return [result]


class NoLoopGradients:
    """``LoopGradients``' hooks when no while loop is on the path (TF's ``loop_state`` None): they do nothing."""

    def process_unused_exits(self, pending: dict, to_ops: set) -> List[Tensor]:
        return []

    def enter(self, op, before: bool) -> None:
        pass

    def exit(self, op, before: bool) -> None:
        pass

    def ready_early(self, op, pending_count: int) -> bool:
        return False

    def waits_for_other_exits(self, op) -> bool:
        return False

    def zeros_like(self, op, index: int):
        return zeros_like_outside_loop(op, index)

    def post_processing(self) -> None:
        pass


NO_LOOPS = NoLoopGradients()


register("Enter", lambda data: data, _enter_grad,
         lambda op: op.inputs[0].shape if op.attrs.get("_use_input_shape", True) else TensorShape(None), aliases=True)
register("Exit", lambda data: data, _exit_grad, shape_same, aliases=True)
register("NextIteration", lambda data: data, lambda op, grad: [grad], shape_same, aliases=True)
register("LoopCond", lambda pred: pred, None, lambda op: TensorShape([]), dtype=dtypes.bool)
register("ControlTrigger", lambda: None, None, num_outputs=0)
