"""How a Session runs TF1 control flow: dead values for conds, one unit per while-loop frame.

**Dead values.** ``Switch(data, pred)`` forwards ``data`` to the output ``pred`` selects; the other output is
``DEAD``. An op with a dead input (or a dead control input) is not run and its outputs are dead; ``Merge``
forwards its first live input. The plan generator (``codegen.py``) emits these checks only for the ops
downstream of a Switch, so a graph without control flow runs exactly as before.

**Loop frames.** The ops of a ``while_loop`` (its Enter/Merge/Switch/LoopCond/NextIteration/Exit ops and
everything in its body, inner loops included) become one ``LoopRegion`` in the enclosing plan: its inputs are
the values entering the frame, its outputs are the Exits' values. The region compiles one *iteration plan* for
the frame, whose feeds are the loop Merges' values and the invariant Enters' values and whose fetches are the
LoopCond, each NextIteration's input and each Exit's input, and runs it until LoopCond is false::

    merges = initial values (the loop-variable Enters' inputs)
    loop:  pred, nexts, exits = iteration(merges, invariants)
           if not pred: return exits
           merges = nexts

Inner loops are regions of the iteration plan, and so on down.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Set, Tuple

import numpy as np


class _Dead:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<dead>"


DEAD = _Dead()
SWITCH_TYPES = frozenset({"Switch", "RefSwitch"})


def switch(data: Any, pred: Any) -> Tuple[Any, Any]:
    if data is DEAD or pred is DEAD:
        return DEAD, DEAD
    return (DEAD, data) if pred else (data, DEAD)


def ref_switch(slot: Any, pred: Any, need_false: bool, need_true: bool) -> Tuple[Any, Any]:
    """A ``RefSwitch`` of a variable (its ``VariableSlot``): the value on the taken side, read only when that
    side is read, as TF forwards the reference unread (an uninitialized variable on a side nobody reads, as in
    ``initialized_value()``'s cond, is no error)."""
    if pred is DEAD:
        return DEAD, DEAD
    if pred:
        return DEAD, (slot.read() if need_true else None)
    return (slot.read() if need_false else None), DEAD


def merge(*inputs: Any) -> Tuple[Any, Any]:
    for i, x in enumerate(inputs):
        if x is not DEAD:
            return x, np.int32(i)
    return DEAD, DEAD


def frame_of(op) -> Optional[Any]:
    """The innermost while context an op belongs to (None outside every loop)."""
    ctx = op._control_flow_context
    return ctx.get_while_context() if ctx is not None else None


def _outer_frame(frame) -> Optional[Any]:
    outer = frame.outer_context
    return outer.get_while_context() if outer is not None else None


def group_frames(needed: Set[Any], parent: Optional[Any], compiler: Any) -> Tuple[list, Dict[Any, Any]]:
    """The units of one plan level: the ops of ``parent``'s frame (None: the top level) and one LoopRegion per
    loop directly inside it. Returns (units, owner) where ``owner`` maps a member op to its region."""
    if parent is None and all(op._control_flow_context is None for op in needed):
        return list(needed), {}
    members: Dict[Any, set] = {}
    units = []
    for op in needed:
        frame = frame_of(op)
        if frame is parent:
            units.append(op)
            continue
        top = frame
        while True:
            outer = _outer_frame(top)
            if outer is parent:
                break
            if outer is None:
                raise ValueError("op %s is not inside loop %s" % (op.name, parent.name))
            top = outer
        members.setdefault(top, set()).add(op)
    owner = {}
    for frame, ops in members.items():
        region = LoopRegion(frame, ops, compiler)
        units.append(region)
        for op in ops:
            owner[op] = region
    return units, owner


class _RegionDef:
    """What the plan generator asks of an op's OpDef, for a LoopRegion."""

    ref_inputs = ()
    mutates = True
    stateful = True
    inplace = None
    aliases = True
    fresh = False
    forward = None
    type = "WhileLoop"

    def __init__(self, region: "LoopRegion"):
        self.bind = lambda op, session: region.run


def plan_filename(frame: Any) -> str:
    """The file name a loop frame's generated plan is compiled under (tracebacks find its lines by it)."""
    return "<tfevents loop %s>" % frame.name


class LoopRegion:
    """One while frame (with the loops nested in it) as a single unit of a plan."""

    type = "WhileLoop"
    device = ""

    def __init__(self, frame: Any, members: Set[Any], compiler: Any):
        self.frame, self.members, self.compiler = frame, members, compiler
        self._filename = plan_filename(frame)
        self.name = frame.name
        self.attrs: dict = {}
        self._id = min(op._id for op in members)
        self.opdef = _RegionDef(self)
        exits = sorted((op for op in members if op.type == "Exit" and op._control_flow_context is frame),
                       key=lambda op: op._id)
        self.outputs = [op.outputs[0] for op in exits]
        inputs, controls = [], []
        for op in sorted(members, key=lambda op: op._id):
            refs = op.opdef.ref_inputs
            for i, t in enumerate(op.inputs):
                if i not in refs and t.op not in members and t not in inputs:
                    inputs.append(t)
            for c in op.control_inputs:
                if c not in members and c not in controls:
                    controls.append(c)
        self.inputs, self.control_inputs = inputs, controls
        self._compile_iteration()

    def _compile_iteration(self) -> None:
        frame, members = self.frame, self.members
        mine = [op for op in members if op._control_flow_context is not None and frame_of(op) is frame]
        merges = sorted((op for op in mine if op.type == "Merge" and op.inputs[-1].op.type == "NextIteration"),
                        key=lambda op: op._id)
        enters = sorted((op for op in mine if op.type == "Enter" and op.attrs.get("is_constant")),
                        key=lambda op: op._id)
        conds = [op for op in mine if op.type == "LoopCond"]
        if len(conds) != 1:
            raise ValueError("while loop %s has %d LoopCond ops" % (frame.name, len(conds)))
        exits = [t.op for t in self.outputs]
        self._index = {t: i for i, t in enumerate(self.inputs)}
        self._initial = [self._index[m.inputs[0].op.inputs[0]] for m in merges]
        self._invariants = [self._index[e.inputs[0]] for e in enters]
        fed = [m.outputs[0] for m in merges] + [m.outputs[1] for m in merges] + [e.outputs[0] for e in enters]
        fetches = [conds[0].outputs[0]] + [m.inputs[-1] for m in merges] + [x.outputs[0] for x in exits]
        self._n_merges = len(merges)
        self._fast = self._compile_split(merges, conds[0], exits, fed)
        if not self._fast:             # the general plan, with dead-value checks throughout
            self._plan = self.compiler.compile_frame(fed, fetches, frame)

    def _compile_split(self, merges: list, loop_cond: Any, exits: list, fed: list) -> bool:
        """The fast path, where a loop has TF's shape (each variable: Merge -> Switch(Merge, LoopCond) -> Exit):
        a *condition plan* computing LoopCond, and a *body plan* fed the Switches' taken outputs, so the body runs
        without dead-value checks (only conds inside it keep theirs) and an Exit's value is its Merge's."""
        pred = loop_cond.outputs[0]
        switch_of = {}
        for op in self.members:
            if op.type == "Switch" and op.inputs[1] is pred and op.inputs[0].op in merges:
                switch_of[op.inputs[0].op] = op
        if len(switch_of) != len(merges):
            return False
        self._exit_merges = []
        for x in exits:
            source = x.inputs[0]
            if source.op.type != "Switch" or source.value_index != 0 or source.op.inputs[1] is not pred:
                return False
            self._exit_merges.append(merges.index(source.op.inputs[0].op))
        body_fed = fed + [switch_of[m].outputs[1] for m in merges]
        body_fetches = [m.inputs[-1] for m in merges]
        compiler = self.compiler
        cond_ops = compiler.needed_ops([pred], [], set(fed))
        body_ops = compiler.needed_ops(body_fetches, [], set(body_fed))
        if any(op.opdef.stateful for op in cond_ops & body_ops):
            return False                  # (a stateful op both need would run twice)
        # a variable whose next value is a new array made by the body, and whose Merge the body does not read,
        # is the loop's own: its last reader may update it in place (an accumulator adds into its buffer)
        owned, self._owned = set(), []
        for i, m in enumerate(merges):
            taken = switch_of[m].outputs[1]
            if (m.inputs[-1].op.inputs[0].op.opdef.fresh
                    and not any(t in op.inputs for op in body_ops for t in m.outputs)):
                owned.add(taken)
                self._owned.append(i)
        self._cond_plan = compiler.compile_frame(fed, [pred], self.frame)
        self._body_plan = compiler.compile_frame(body_fed, body_fetches, self.frame, owned=frozenset(owned))
        return True

    def run(self, *values: Any) -> Any:
        if any(v is DEAD for v in values):
            return DEAD if len(self.outputs) == 1 else (DEAD,) * len(self.outputs)
        n = self._n_merges
        merges = [values[i] for i in self._initial]
        invariants = [values[i] for i in self._invariants]
        indices = [np.int32(0)] * n
        after_first = [np.int32(1)] * n
        if self._fast:
            return self._run_split(merges, indices, after_first, invariants)
        plan = self._plan
        while True:
            try:
                out = plan.fn(merges + indices + invariants)
            except Exception as e:  # noqa: BLE001 - re-raised naming the op of the loop that failed
                raise self.compiler.op_error(plan, e, self._filename) from e
            pred = out[0]
            if pred is DEAD:
                raise ValueError("the condition of while loop %s is dead" % self.frame.name)
            if not pred:
                exits = out[1 + n:]
                return exits[0] if len(exits) == 1 else tuple(exits)
            merges = list(out[1:1 + n])
            indices = after_first

    def _run_split(self, merges: list, indices: list, after_first: list, invariants: list) -> Any:
        cond, body = self._cond_plan, self._body_plan
        for i in self._owned:            # the initial values are the caller's: the loop works on copies
            v = merges[i]
            if type(v) is np.ndarray and v.flags.writeable:
                merges[i] = v.copy()
        while True:
            feeds = merges + indices + invariants
            try:
                pred = cond.fn(feeds)[0]
                if not pred:
                    exits = [merges[i] for i in self._exit_merges]
                    return exits[0] if len(exits) == 1 else tuple(exits)
                merges = list(body.fn(feeds + merges))
            except Exception as e:  # noqa: BLE001 - re-raised naming the op of the loop that failed
                plan = body if pred else cond
                raise self.compiler.op_error(plan, e, self._filename) from e
            indices = after_first
