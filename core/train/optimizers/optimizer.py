"""``tf.train.Optimizer``: TF1's base class. ``minimize = compute_gradients + apply_gradients``.

Subclasses implement TF's hooks: ``_create_slots(var_list)``, ``_prepare()`` (hyperparameters to tensors),
``_apply_dense(grad, var)``, ``_apply_sparse(grad, var)`` (an ``IndexedSlices`` with unique indices) and
``_finish(update_ops, name)``. ``apply_gradients`` builds, like TF1::

    <Name>/                       (name scope, e.g. "Adam" or "train/GradientDescent")
      learning_rate ...           (_prepare)
      update_<var>/ApplyAdam      (one per variable with a gradient)
    <Name>                        (a NoOp grouping the updates, or the global_step AssignAdd)

Slot variables are named ``<var>/<Name>``, ``<var>/<Name>_1``, ... (non-trainable, in GLOBAL_VARIABLES).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Optional


from ...framework import dtypes
from ...control_flow import group, tuple_
from ...gradients import gradients
from ...framework.graph import GraphKeys, Operation, Tensor, control_dependencies, get_default_graph, name_scope
from ...ops import array_ops, math_ops, state_ops
from ...framework.registry import IndexedSlices, constant, convert_to_tensor
from ...variables import Variable, trainable_variables
from ...variable_scope import _store, get_variable_scope
from ...ops.manip_ops import unique

GATE_NONE, GATE_OP, GATE_GRAPH = 0, 1, 2
_VALID_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64)


def _var_key(var: Variable) -> Any:
    return var.op


def _call_if_callable(value: Any) -> Any:
    return value() if callable(value) else value


def create_slot(primary: Variable, initial_value: Callable[[], Tensor], op_name: str) -> Variable:
    """A non-trainable variable named ``<primary>/<op_name>`` (made unique: ``_1``, ``_2`` ...), created
    outside any control-dependency block, as TF's ``slot_creator``."""
    graph = primary.graph
    with graph.as_default():
        scope = get_variable_scope().name        # TF opens variable_scope(None, "<var>/<op_name>") here
        with control_dependencies(None), name_scope(None):
            name = (scope + "/" if scope else "") + primary.op.name + "/" + op_name
            slot = Variable(initial_value, trainable=False, name=name)
    _store(graph)["vars"].setdefault(slot.op.name, slot)
    return slot


def deduplicate_indexed_slices(grad: IndexedSlices) -> IndexedSlices:
    """Sum the rows of repeated indices: ``unique`` + ``unsorted_segment_sum`` (TF's helper)."""
    unique_indices, positions = unique(grad.indices)
    summed = array_ops.unsorted_segment_sum(grad.values, positions, array_ops.shape(unique_indices)[0])
    return IndexedSlices(summed, unique_indices, grad.dense_shape)


class Optimizer:
    """Base class of the TF1 optimizers (``tf.train.Optimizer``)."""

    GATE_NONE = GATE_NONE
    GATE_OP = GATE_OP
    GATE_GRAPH = GATE_GRAPH

    def __init__(self, use_locking: bool, name: str):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict = {}          # slot name -> {var op: slot variable}
        self._non_slot_dict: dict = {}  # (name, graph) -> variable

    def get_name(self) -> str:
        return self._name

    # ---- the public API
    def minimize(self, loss: Tensor, global_step: Optional[Variable] = None, var_list: Optional[list] = None,
                 gate_gradients: int = GATE_OP, aggregation_method: Optional[int] = None,
                 colocate_gradients_with_ops: bool = False, name: Optional[str] = None,
                 grad_loss: Optional[Tensor] = None) -> Operation:
        """``compute_gradients`` then ``apply_gradients``; returns the training op."""
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, gate_gradients=gate_gradients,
                                                aggregation_method=aggregation_method,
                                                colocate_gradients_with_ops=colocate_gradients_with_ops,
                                                grad_loss=grad_loss)
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError("No gradients provided for any variable, check your graph for ops that do not "
                             "support gradients, between variables %s and loss %s."
                             % ([str(v) for _, v in grads_and_vars], loss))
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss: Tensor, var_list: Optional[list] = None, gate_gradients: int = GATE_OP,
                          aggregation_method: Optional[int] = None, colocate_gradients_with_ops: bool = False,
                          grad_loss: Optional[Tensor] = None) -> list:
        """``[(gradient or None, variable)]`` of ``loss`` for ``var_list`` (default: trainable variables)."""
        if callable(loss):
            loss = loss()
        if gate_gradients not in (GATE_NONE, GATE_OP, GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                             "Optimizer.GATE_GRAPH.  Not %s" % gate_gradients)
        loss = convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([convert_to_tensor(grad_loss)])
        if var_list is None:
            var_list = trainable_variables()
        else:
            var_list = _flatten(var_list)
        for v in var_list:
            if not isinstance(v, Variable):
                raise TypeError("Trying to optimize unsupported type %r: var_list must contain only "
                                "Variables" % (v,))
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients(loss, var_list, grad_ys=grad_loss, gate_gradients=(gate_gradients == GATE_OP),
                          aggregation_method=aggregation_method,
                          colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == GATE_GRAPH:      # every gradient only after all of them: TF's tuple/...
            grads = tuple_(grads)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars: Iterable, global_step: Optional[Variable] = None,
                        name: Optional[str] = None) -> Operation:
        """One update op per ``(gradient, variable)`` with a gradient; None gradients are skipped. With
        ``global_step``, the returned op increments it once after every update."""
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None:
                if not isinstance(g, IndexedSlices):
                    try:
                        g = convert_to_tensor(g)
                    except (TypeError, ValueError) as e:
                        raise TypeError("Gradient must be convertible to a Tensor or IndexedSlices, or None: "
                                        "%s (%s)" % (g, e)) from None
            if not isinstance(v, Variable):
                raise TypeError("Trying to update %r: apply_gradients takes (gradient, Variable) pairs" % (v,))
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError("No gradients provided for any variable: %s."
                             % ([str(v) for _, v in converted],))
        graph = var_list[0].graph
        with graph.as_default(), control_dependencies(None):
            self._create_slots(var_list)
        update_ops = []
        with name_scope(name, self._name) as scope:
            self._prepare()
            for grad, var in converted:
                if grad is None:
                    continue
                with name_scope("update_" + var.op.name):
                    update_ops.append(self._update_op(grad, var))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                with control_dependencies([self._finish(update_ops, "update")]):
                    apply_updates = state_ops.assign_add(global_step, 1, name=scope)
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
            train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
            return apply_updates

    def _update_op(self, grad: Any, var: Variable) -> Operation:
        if isinstance(grad, IndexedSlices):
            if var.constraint is not None:
                raise RuntimeError("Cannot use a constraint function on a sparse variable.")
            return self._apply_sparse_duplicate_indices(grad, var)
        update = self._apply_dense(grad, var)
        if var.constraint is not None:
            with control_dependencies([update]):
                return var.assign(var.constraint(var))
        return update

    # ---- slots
    def get_slot(self, var: Variable, name: str) -> Optional[Variable]:
        """The slot ``name`` of ``var`` (e.g. Adam's ``'m'``), or None."""
        named = self._slots.get(name)
        if not named:
            return None
        return named.get(_var_key(var))

    def get_slot_names(self) -> list:
        return sorted(self._slots)

    def variables(self) -> list:
        """The slot and non-slot variables of this optimizer in the current graph, sorted by name."""
        graph = get_default_graph()
        found = [v for named in self._slots.values() for v in named.values() if v.graph is graph]
        found += [v for (name, g), v in self._non_slot_dict.items() if g is graph]
        return sorted(found, key=lambda v: v.name)

    def _slot_dict(self, slot_name: str) -> dict:
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot(self, var: Variable, initial_value: Callable[[], Tensor], slot_name: str,
                          op_name: str) -> Variable:
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            named[key] = create_slot(var, initial_value, op_name)
        return named[key]

    def _zeros_slot(self, var: Variable, slot_name: str, op_name: str) -> Variable:
        return self._get_or_make_slot(var, lambda: _filled(var, 0.0), slot_name, op_name)

    def _get_or_make_slot_with_value(self, var: Variable, value: float, slot_name: str, op_name: str,
                                     initializer: str = "constant") -> Variable:
        """A slot starting at ``value``: TF's ``constant_initializer`` (a Const) or, with
        ``initializer="ones"``, its ``ones_initializer`` (a Const when small, else a Fill)."""
        return self._get_or_make_slot(var, lambda: _filled(var, value, initializer), slot_name, op_name)

    def _create_non_slot_variable(self, initial_value: Any, name: str, colocate_with: Variable) -> Variable:
        graph = colocate_with.graph
        key = (name, graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            with graph.as_default(), control_dependencies(None):
                v = Variable(initial_value, name=name, trainable=False)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name: str, graph: Any = None) -> Optional[Variable]:
        return self._non_slot_dict.get((name, graph or get_default_graph()))

    # ---- hooks
    def _create_slots(self, var_list: list) -> None:
        pass

    def _prepare(self) -> None:
        pass

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        raise NotImplementedError()

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Variable) -> Operation:
        return self._apply_sparse(deduplicate_indexed_slices(grad), var)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Operation:
        raise NotImplementedError()

    def _finish(self, update_ops: list, name_scope: str) -> Operation:
        return group(*update_ops, name=name_scope)

    # ---- helpers for subclasses
    def _tensor(self, value: Any, name: str) -> Tensor:
        """A hyperparameter (a number, tensor or callable) as a tensor named ``name`` (TF's ``_prepare``)."""
        value = _call_if_callable(value)
        if isinstance(value, Tensor) or hasattr(value, "_to_tensor"):
            return convert_to_tensor(value)
        return convert_to_tensor(value, name=name)

    @staticmethod
    def _cast(t: Tensor, var: Variable) -> Tensor:
        return math_ops.cast(t, var.dtype)

    def _assert_valid_dtypes(self, tensors: list) -> None:
        for t in tensors:
            dtype = t.dtype
            if dtype not in _VALID_DTYPES:
                raise ValueError("Invalid type %r for %s, expected: %s."
                                 % (dtype, t.name, [str(d) for d in _VALID_DTYPES]))


def _filled(var: Variable, value: float, initializer: str = "constant") -> Tensor:
    shape = var.shape.as_list()
    if value == 0.0:
        return array_ops.zeros(shape, dtype=var.dtype, name="zeros")
    if initializer == "ones" and value == 1.0:
        return array_ops.ones(shape, dtype=var.dtype, name="ones")
    return constant(value, dtype=var.dtype, shape=shape, name="Const")


def _flatten(x: Any) -> list:
    if isinstance(x, (list, tuple)):
        out = []
        for i in x:
            out.extend(_flatten(i))
        return out
    if isinstance(x, dict):
        return _flatten([x[k] for k in sorted(x)])
    return [x]
