"""Control-flow contexts: what TF1 does to every op created inside a ``cond`` branch or a ``while_loop`` body.

While a context is entered (``graph._control_flow_context``), each new op is handed to its ``add_op`` (by
``registry.create_op``, inside the op's own name scope, so helper ops are named ``<op>/Switch`` and
``<op>/Enter`` as in TF):

- ``CondContext``: an input from outside the branch goes through a ``Switch(value, pred)`` (one per value and
  branch, its taken output), and an op without inputs gets a control edge from the branch's pivot
  (``cond/switch_t`` or ``cond/switch_f``), so nothing in the untaken branch runs.
- ``WhileContext``: an input from outside the loop enters the frame through an ``Enter(is_constant=True)``
  (one per value), an op without inputs, or with only such invariant inputs, gets a control edge from the
  loop's pivot, and control inputs from outside the frame are re-routed through an ``Identity`` inside it.

Values created inside a context are its ``values``; those entered from outside are ``external_values``.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

from tfevents.proto import control_flow_pb2
from ..framework.graph import Operation, Tensor, control_dependencies, get_default_graph
from ..framework.meta_graph import register_proto_function
from .flow_ops import enter, switch
from ..ops import array_ops


def is_loop_exit(op: Operation) -> bool:
    return op.type in ("Exit", "RefExit")


def is_loop_constant_enter(op: Operation) -> bool:
    return op.type in ("Enter", "RefEnter") and bool(op.attrs.get("is_constant"))


def output_context(op: Operation) -> Optional["ControlFlowContext"]:
    """The context an op's outputs live in: an Exit's outputs belong to the loop's outer context."""
    ctx = op._control_flow_context
    if ctx is not None and is_loop_exit(op):
        ctx = ctx.outer_context
    return ctx


def while_context_of(op: Operation) -> Optional["WhileContext"]:
    ctx = op._control_flow_context
    return ctx.get_while_context() if ctx is not None else None


class ControlFlowContext:
    """Base: nesting (``outer_context``), entering and leaving, the sets of known and external values."""

    def __init__(self):
        self.graph = get_default_graph()
        self.outer_context: Optional[ControlFlowContext] = self.graph._get_control_flow_context()
        self.nested_contexts: List[ControlFlowContext] = []
        if self.outer_context is not None:
            self.outer_context.nested_contexts.append(self)
        self.values: Set[Tensor] = set()
        self.external_values: Dict[Tensor, Tensor] = {}
        self._saved: List[Optional[ControlFlowContext]] = []

    # ---- as a MetaGraphDef collection carries it (TF's to_proto)
    def to_proto(self) -> Any:
        raise NotImplementedError

    def _values_def(self) -> Any:
        out = control_flow_pb2.ValuesDef(values=sorted(t.name for t in self.values))
        for inside, outside in self.external_values.items():
            out.external_values[inside.name] = outside.name
        return out

    def _nested_defs(self) -> list:
        out = []
        for nested in self.nested_contexts:
            proto = nested.to_proto()
            kind = "cond_ctxt" if isinstance(proto, control_flow_pb2.CondContextDef) else "while_ctxt"
            out.append(control_flow_pb2.ControlFlowContextDef(**{kind: proto}))
        return out

    def enter(self) -> None:
        self._saved.append(self.graph._get_control_flow_context())
        self.graph._set_control_flow_context(self)

    def exit(self) -> None:
        self.graph._set_control_flow_context(self._saved.pop())

    def get_while_context(self) -> Optional["WhileContext"]:
        return self.outer_context.get_while_context() if self.outer_context is not None else None

    def exit_result(self, tensors) -> None:
        """TF's ``ExitResult``: results leaving this context (a branch's, a loop's Exits) become values of the
        outer context."""
        if self.outer_context is not None:
            self.outer_context.values.update(tensors)

    def get_control_pivot(self) -> Optional[Tensor]:
        return None

    def _mark_seen(self, tensors) -> None:
        ctx = self
        while ctx is not None:
            ctx.values.update(tensors)
            ctx = ctx.outer_context

    def add_inner_op(self, op: Operation) -> None:
        """An op of an inner context: known to this one too (TF's AddInnerOp)."""
        if self.outer_context is not None:
            self.outer_context.add_inner_op(op)

    def _remove_external_control_edges(self, op: Operation):
        """Keep only the control inputs made in this op's while frame; return (internal, external)."""
        while_ctx = self.get_while_context()
        if while_ctx is None:
            return list(op.control_inputs), []
        internal, external = [], []
        for c in op.control_inputs:
            ctx = output_context(c)
            (internal if ctx is not None and ctx.get_while_context() is while_ctx else external).append(c)
        if len(internal) != len(op.control_inputs):
            op._remove_all_control_inputs()
            op._add_control_inputs(internal)
        return internal, external


class CondContext(ControlFlowContext):
    """One branch of a ``tf.cond``: ``pred`` (the ``pred_id`` Identity), ``pivot`` (``switch_t``/``switch_f``)
    and ``branch`` (1 for true, 0 for false)."""

    def __init__(self, pred: Tensor, pivot: Tensor, branch: int, name: str = "cond_text"):
        super().__init__()
        self.name = self.graph.unique_name(name)
        self.pred, self.pivot, self.branch = pred, pivot, branch
        self.values.update([pred, pivot])
        self.external_values[pred] = pred
        pivot.op._set_control_flow_context(self)

    def to_proto(self) -> Any:
        """TF's ``CondContextDef``: name, predicate, pivot, branch, values and nested contexts."""
        return control_flow_pb2.CondContextDef(
            context_name=self.name, pred_name=self.pred.name, pivot_name=self.pivot.name, branch=self.branch,
            values_def=self._values_def(), nested_contexts=self._nested_defs())

    def get_control_pivot(self) -> Tensor:
        return self.pivot

    def add_value(self, val: Tensor) -> Tensor:
        """``val`` as seen inside this branch: itself if made here, else the taken output of a Switch."""
        if val in self.values:
            return self.external_values.get(val, val)
        self.values.add(val)
        result = val
        if self.outer_context is not None:
            result = self.outer_context.add_value(val)
            self.values.add(result)
            self.external_values[result] = result
        with control_dependencies(None):                    # (outside any context) then joins this branch
            result = switch(result, self.pred)[self.branch]
            if self.outer_context is not None:
                self.outer_context.add_inner_op(result.op)
        result.op._set_control_flow_context(self)
        self.graph.prevent_fetching(result.op)
        self._mark_seen([result])
        self.external_values[val] = result
        return result

    def add_op(self, op: Operation) -> None:
        if not op.inputs:
            self._remove_external_control_edges(op)
            if not any(c._control_flow_context is self for c in op.control_inputs):
                op._add_control_input(self.pivot.op)
        else:
            for i, x in enumerate(op.inputs):
                if op.type == "Merge" and x.op.type == "NextIteration":
                    continue                     # a loop's back edge
                real = self.add_value(x)
                if real is not x:
                    op._update_input(i, real)
            self._remove_external_control_edges(op)
        self._mark_seen(op.outputs)
        if self.outer_context is not None or not is_loop_exit(op):
            self.graph.prevent_fetching(op)
        if self.outer_context is not None:
            self.outer_context.add_inner_op(op)

    def process_output(self, val: Tensor) -> Tensor:
        """A branch result as the Merge sees it (``lambda: x`` of an outside ``x`` gets its own Switch)."""
        if val in self.values:
            return self.external_values.get(val, val)
        self.values.add(val)
        real = val
        if self.outer_context is not None:
            real = self.outer_context.add_value(val)
            self.values.add(real)
            self.external_values[real] = real
        real = switch(real, self.pred)[self.branch]
        self.external_values[val] = real
        return real


class WhileContext(ControlFlowContext):
    """One ``tf.while_loop`` frame (``name`` is its ``frame_name``, e.g. ``while/while_context``)."""

    def __init__(self, name: str, parallel_iterations: int = 10, back_prop: bool = True,
                 swap_memory: bool = False, maximum_iterations: Any = None):
        super().__init__()
        self.name = self.graph.unique_name(name)
        self.parallel_iterations = parallel_iterations
        self.back_prop, self.swap_memory = back_prop, swap_memory
        self.maximum_iterations = maximum_iterations
        self.pivot: Optional[Tensor] = None             # LoopCond
        self.pivot_for_pred: Optional[Tensor] = None    # the first Merge
        self.pivot_for_body: Optional[Tensor] = None    # the first body Identity
        self.loop_enters: List[Tensor] = []
        self.loop_exits: List[Tensor] = []
        self.grad_state = None                          # set on a backprop loop's context

    def get_while_context(self) -> "WhileContext":
        return self

    def to_proto(self) -> Any:
        """TF's ``WhileContextDef``: name, settings, pivots, the loop's Enter and Exit tensors, values and nested
        contexts."""
        out = control_flow_pb2.WhileContextDef(
            context_name=self.name, parallel_iterations=self.parallel_iterations, back_prop=self.back_prop,
            swap_memory=self.swap_memory, pivot_name=self.pivot.name, pivot_for_pred_name=self.pivot_for_pred.name,
            pivot_for_body_name=self.pivot_for_body.name, loop_exit_names=[t.name for t in self.loop_exits],
            loop_enter_names=[t.name for t in self.loop_enters], values_def=self._values_def(),
            nested_contexts=self._nested_defs())
        if isinstance(self.maximum_iterations, Tensor):
            out.maximum_iterations_name = self.maximum_iterations.name
        return out

    def get_control_pivot(self) -> Optional[Tensor]:
        return self.pivot_for_body if self.pivot_for_body is not None else self.pivot_for_pred

    def add_value(self, val: Tensor) -> Tensor:
        """``val`` as seen inside this frame: itself if made here, else an invariant ``Enter`` of it (or, in a
        backprop loop, the forward loop's saved value of it for the current iteration)."""
        if val in self.values or val.op._control_flow_context is self:
            return self.external_values.get(val, val)
        self.values.add(val)
        current = self.graph._get_control_flow_context()
        grad_ctx = current.get_while_context() if current is not None else None
        if grad_ctx is not None and grad_ctx.grad_state is not None:
            forward = while_context_of(val.op)
            if is_loop_exit(val.op) and forward is not None:
                forward = forward.outer_context.get_while_context() if forward.outer_context else None
            if forward is grad_ctx.grad_state.forward_context:
                real = grad_ctx.grad_state.get_real_value(val)
                self.external_values[val] = real
                return real
        result = val
        if self.outer_context is not None:
            result = self.outer_context.add_value(val)
        with control_dependencies(None):
            result = enter(result, self.name, is_constant=True, parallel_iterations=self.parallel_iterations)
            if self.outer_context is not None:
                self.outer_context.add_inner_op(result.op)
        result.op._set_control_flow_context(self)
        self.graph.prevent_feeding(result)
        self.values.add(result)
        self.external_values[val] = result
        return result

    def add_op(self, op: Operation) -> None:
        if op.type in ("Shape", "Size", "Rank") and op.inputs:
            # in a backprop loop, a shape of a forward value is computed in the forward frame (TF's rule):
            # the saved history is then the small shape, not the tensor
            current = self.graph._get_control_flow_context()
            grad_state = current.get_while_context().grad_state if current is not None else None
            if grad_state is not None and while_context_of(op.inputs[0].op) is grad_state.forward_context:
                forward_ctx = op.inputs[0].op._control_flow_context
                op._set_control_flow_context(forward_ctx)
                forward_ctx._add_op_internal(op)
                return
        self._add_op_internal(op)

    def _add_op_internal(self, op: Operation) -> None:
        if not op.inputs:
            internal, external = self._remove_external_control_edges(op)
            if not internal:
                op._add_control_input(self.get_control_pivot().op)
        else:
            for i, x in enumerate(op.inputs):
                real = self.add_value(x)
                if real is not x:
                    op._update_input(i, real)
            _, external = self._remove_external_control_edges(op)
            if not op.control_inputs and all(is_loop_constant_enter(t.op) for t in op.inputs):
                op._add_control_input(self.get_control_pivot().op)   # only invariants: run once per iteration
        self.values.update(op.outputs)
        if external:
            # control inputs from outside the frame become data inputs of an Identity inside it
            with control_dependencies(None):
                self.enter()
                try:
                    pulled = [array_ops.identity(x.outputs[0]).op for x in external if x.outputs]
                finally:
                    self.exit()
            op._add_control_inputs(pulled)
        if self.outer_context is not None or not is_loop_exit(op):
            self.graph.prevent_fetching(op)
            for t in op.outputs:
                self.graph.prevent_feeding(t)
        if self.outer_context is not None:
            self.outer_context.add_inner_op(op)


def zeros_like_outside_loop(op: Any, index: int) -> Any:
    """Zeros for output ``index`` of ``op`` that has no gradient; for a Switch in a cond, made under a Switch of
    its input so that they are live exactly when that output would have been."""
    value = op.outputs[index]
    ctx = op._control_flow_context
    if op.type not in ("Switch", "RefSwitch") or not isinstance(ctx, CondContext):
        return array_ops.zeros_like(value, optimize=False)
    switched = switch(op.inputs[0], ctx.pred)[1 - ctx.branch]
    pivot = array_ops.identity(switched)
    shape = array_ops.shape(switched, optimize=False)
    with control_dependencies([pivot]):
        return array_ops.zeros(shape, dtype=value.dtype)


register_proto_function("cond_context", control_flow_pb2.CondContextDef, to_proto=CondContext.to_proto)
register_proto_function("while_context", control_flow_pb2.WhileContextDef, to_proto=WhileContext.to_proto)
