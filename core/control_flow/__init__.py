"""TF1 control flow: ``cond``/``case`` (only the taken branch runs), ``smart_cond`` (a ``cond`` only when the
predicate is not known while building), ``while_loop``, and grouping helpers (``group``, ``tuple``,
``with_dependencies``, ``no_op``). Graphs are TF's: Switch/Merge for conds, Enter/Merge/Switch/LoopCond/
NextIteration/Exit frames for loops (``contexts.py``); the Session runs them (``core/runtime/frames.py``).
``TensorArray`` (``tensor_array.py``) and ``map_fn``/``scan``/``foldl``/``foldr`` (``functional_ops.py``) are built
on them as in TF1."""
from . import cond_grad as _cond_grad, while_grad as _while_grad  # noqa: F401 - they register the flow ops
from .cond import case, cond, smart_cond, smart_constant_value
from .flow_ops import control_trigger, merge, switch
from .functional_ops import foldl, foldr, map_fn, scan
from .grouping import group, no_op, tuple_, with_dependencies
from .tensor_array import TensorArray
from .while_loop import while_loop

__all__ = ["TensorArray", "case", "cond", "control_trigger", "foldl", "foldr", "group", "map_fn", "merge", "no_op",
           "scan", "smart_cond", "smart_constant_value", "switch", "tuple_", "while_loop", "with_dependencies"]
