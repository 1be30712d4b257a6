"""TF1 control flow: ``cond``/``case`` (only the taken branch runs), ``while_loop``, and grouping helpers
(``group``, ``tuple``, ``with_dependencies``, ``no_op``). Graphs are TF's: Switch/Merge for conds,
Enter/Merge/Switch/LoopCond/NextIteration/Exit frames for loops (``contexts.py``); the Session runs them
(``core/frames.py``)."""
from . import cond_grad as _cond_grad, while_grad as _while_grad  # noqa: F401 - register the gradients
from .cond import case, cond
from .flow_ops import control_trigger, merge, switch
from .grouping import group, no_op, tuple_, with_dependencies
from .while_loop import while_loop

__all__ = ["case", "cond", "control_trigger", "group", "merge", "no_op", "switch", "tuple_", "while_loop", "with_dependencies"]
