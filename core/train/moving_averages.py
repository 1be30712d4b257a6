"""``tf.train.ExponentialMovingAverage`` and ``assign_moving_average``.

Each averaged variable ``w`` gets a shadow variable ``w/ExponentialMovingAverage`` (not trainable, starting at
``w``'s initial value); ``apply()`` returns an op running, for every variable::

    decay = min(decay, (1 + num_updates) / (10 + num_updates))    # only when num_updates is given
    shadow -= (1 - decay) * (shadow - w)

Averages of tensors (not variables) start at zero; with ``zero_debias=True`` they are divided by
``1 - decay**t`` (Kingma & Ba's bias correction).
"""
from __future__ import annotations

from typing import Any, Optional

from ..framework import dtypes
from ..control_flow import cond, group
from ..framework.graph import GraphKeys, Tensor, add_to_collection, control_dependencies, get_default_graph, name_scope
from ..ops import array_ops, math_ops, state_ops
from ..framework.registry import convert_to_tensor
from ..variables import Variable, global_variables, moving_average_variables, trainable_variables
from .optimizers.optimizer import create_slot


def assign_moving_average(variable: Variable, value: Any, decay: Any, zero_debias: bool = True,
                          name: Optional[str] = None) -> Tensor:
    """``variable -= (1 - decay) * (variable - value)`` (zero-debiased when ``zero_debias``)."""
    with name_scope(name, "AssignMovingAvg") as scope:
        decay = convert_to_tensor(1.0 - decay, name="decay")
        if decay.dtype is not variable.dtype:
            decay = math_ops.cast(decay, variable.dtype)
        if zero_debias:
            return _zero_debias(variable, value, decay)
        return state_ops.assign_sub(variable, (variable - value) * decay, name=scope)


def _zero_debias(unbiased_var: Variable, value: Any, decay: Tensor) -> Tensor:
    """``biased -= (biased - value) * (1 - d); t += 1; unbiased = biased / (1 - d**t)``."""
    prefix = unbiased_var.op.name
    with control_dependencies(None), name_scope(None):
        biased = Variable(lambda: array_ops.zeros(unbiased_var.shape.as_list(), dtype=unbiased_var.dtype),
                          trainable=False, name=prefix + "/biased")
        local_step = Variable(lambda: array_ops.zeros([], dtype=unbiased_var.dtype), trainable=False,
                              name=prefix + "/local_step")
    update_biased = state_ops.assign_sub(biased, (biased - value) * decay)
    update_local_step = local_step.assign_add(1)
    bias_factor = 1 - math_ops.pow(1.0 - decay, update_local_step)
    return state_ops.assign(unbiased_var, update_biased / bias_factor,
                            name=get_default_graph().get_name_scope() + "/")


class ExponentialMovingAverage:
    """Shadow copies of variables (or tensors) updated by ``apply()``; see the module docstring."""

    def __init__(self, decay: Any, num_updates: Any = None, zero_debias: bool = False,
                 name: str = "ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict = {}

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list: Optional[list] = None):
        """Create the shadows (once per variable) and return the op updating all of them."""
        if var_list is None:
            var_list = trainable_variables()
        var_list = list(var_list)
        zero_debias_true = set()
        for var in var_list:
            if var.dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
                raise TypeError("The variables must be half, float, or double: %s" % var.name)
            if _key(var) in self._averages:
                continue
            if isinstance(var, Variable):
                # TF: the shadow starts from the variable's value if it is initialized, else its initial value
                with control_dependencies(None):
                    initialized_value = cond(state_ops.is_variable_initialized(var), var.read_value,
                                             lambda var=var: var.initial_value)
                avg = create_slot(var, initialized_value, self._name)
                add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
            else:
                avg = create_slot(var, lambda var=var: array_ops.zeros(var.shape.as_list(), dtype=var.dtype),
                                  self._name)
                if self._zero_debias:
                    zero_debias_true.add(avg.op)
            self._averages[_key(var)] = avg
        with name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay") \
                if not isinstance(self._decay, Tensor) else math_ops.cast(self._decay, dtypes.float32)
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = []
            for var in var_list:
                avg = self._averages[_key(var)]
                updates.append(assign_moving_average(avg, var, decay, zero_debias=avg.op in zero_debias_true))
            return group(*updates, name=scope)

    def average(self, var: Any) -> Optional[Variable]:
        """The shadow variable of ``var`` (None if ``apply`` did not see it)."""
        return self._averages.get(_key(var))

    def average_name(self, var: Any) -> str:
        """The name of ``var``'s shadow: ``<var op name>/<EMA name>`` (for a Saver restoring averages)."""
        avg = self._averages.get(_key(var))
        if avg is not None:
            return avg.op.name
        return get_default_graph().unique_name(var.op.name + "/" + self._name, mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables: Optional[list] = None) -> dict:
        """``{shadow name: variable}`` for the averaged variables and ``{name: variable}`` for the others, so
        ``Saver(ema.variables_to_restore()).restore(...)`` loads the averages into the model's variables."""
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + moving_average_variables()
        unique = list(dict.fromkeys(moving_avg_variables))
        name_map = {self.average_name(v): v for v in unique}
        averaged_names = {v.name for v in unique}
        for v in global_variables():
            if v.name not in averaged_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map


def _key(var: Any) -> Any:
    return var.op if isinstance(var, Variable) else var
