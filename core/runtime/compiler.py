"""The plan compiler: from fetches and feeds to a plan, the one interface between the Session, the loop frames and
the plan generator.

``Session.run`` resolves what the user fetches and feeds, then asks ``compile_step`` for the step's plan; a loop
frame (``frames.LoopRegion``) asks ``needed_ops`` which ops its condition and body need, ``compile_frame`` for
the plan of one iteration, and ``op_error`` to name the op a failed iteration was running. Each plan is the ops
the fetches need (``needed_ops``), grouped into loop units (``frames.group_frames``), ordered (``plan.schedule``)
and generated into straight-line code (``codegen.generate``).
"""
from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence

from ..framework import errors
from ..framework.graph import Operation, Tensor
from . import frames
from .codegen import generate
from .plan import Plan, schedule, waits_for


class PlanCompiler:
    """Compiles the plans of one Session (bound callables keep that session's variables and op state)."""

    def __init__(self, session: Any):
        self.session = session

    def needed_ops(self, fetch_tensors: Iterable[Tensor], targets: Iterable[Operation], fed: set) -> set:
        """Every op that computing ``fetch_tensors`` and running ``targets`` needs, given the ``fed`` tensors
        (a fed tensor's op does not run; a ref input does not make its variable run: ``waits_for``)."""
        needed, stack = set(), [t.op for t in fetch_tensors if t not in fed] + list(targets)
        while stack:
            op = stack.pop()
            if op in needed:
                continue
            needed.add(op)
            for i, t in enumerate(op.inputs):
                if waits_for(op, i, t) and t not in fed:
                    stack.append(t.op)
            # a control input whose outputs are all fed counts as done (TF: a fed placeholder is satisfied)
            stack.extend(c for c in op.control_inputs if not c.outputs or not all(o in fed for o in c.outputs))
        return needed

    def compile_step(self, fed: List[Tensor], fetch_tensors: List[Tensor], targets: List[Operation],
                     parts: Sequence[Optional[tuple]], trace: bool, single: bool) -> Plan:
        """The plan of one ``Session.run``: ``parts`` says how its values make the fetches (see ``generate``)."""
        units, owner = frames.group_frames(self.needed_ops(fetch_tensors, targets, set(fed)), None, self)
        order = schedule(units, owner)
        for op in order:
            if op.type == "Placeholder":
                op.opdef.bind(op, self.session)()          # raises: the placeholder is needed but not fed
        return generate(self.session, order, fed, fetch_tensors, parts, trace, single=single, owner=owner)

    def compile_frame(self, fed: List[Tensor], fetch_tensors: List[Tensor], frame: Any,
                      owned: frozenset = frozenset()) -> Plan:
        """The raw plan ``fn(feed values) -> fetched values`` of one iteration of a loop ``frame``; ``owned``:
        fed tensors whose buffers the loop owns, so an op reading them last may overwrite them."""
        units, owner = frames.group_frames(self.needed_ops(fetch_tensors, [], set(fed)), frame, self)
        return generate(self.session, schedule(units, owner), fed, fetch_tensors,
                        [("tensor", i) for i in range(len(fetch_tensors))], False, single=False, owner=owner,
                        raw_only=True, filename=frames.plan_filename(frame), owned=owned)

    @staticmethod
    def op_error(plan: Plan, e: Exception, filename: str = "<tfevents plan>") -> Exception:
        """``e`` raised while ``plan`` ran, as TF reports it: an ``OpError`` naming the node whose generated line
        failed (``e`` itself when it is an OpError already or no plan line is in its traceback)."""
        if isinstance(e, errors.OpError):
            return e
        op = None
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                op = plan.line_ops.get(tb.tb_lineno, op)
            tb = tb.tb_next
        if op is None:
            return e
        return errors.InvalidArgumentError(op, "%s: %s\n\t [[node %s (%s)]]" % (type(e).__name__, e, op.name,
                                                                               op.type))
