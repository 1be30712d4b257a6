"""``tf.Variable`` as in TF 1.x: a VariableV2 node, an ``<name>/Assign`` initializer and a ``<name>/read``
Identity snapshot that every consumer reads."""
from __future__ import annotations

import enum
from typing import Any, Optional

import numpy as np

from .framework import dtypes
from .control_flow import cond, group, no_op
from tfevents.proto import variable_pb2
from .framework.graph import GraphKeys, Tensor, get_default_graph, get_default_session, name_scope
from .framework.meta_graph import register_proto_function
from .framework.registry import convert_to_tensor, create_op
from .framework.tensor_shape import TensorShape
from .ops import array_ops, manip_ops, math_ops, state_ops
from .ops.math_ops import cast


class VariableSynchronization(enum.Enum):
    """TF's ``tf.VariableSynchronization`` (``VariableDef.synchronization``): when a distributed variable is
    aggregated; core runs one replica, so it is only recorded."""
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """TF's ``tf.VariableAggregation`` (``VariableDef.aggregation``): how replicas' updates combine; recorded
    (``global_step`` is ``ONLY_FIRST_REPLICA``, as in TF)."""
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class Variable:
    """A mutable tensor whose value lives in each Session (TF1 ``RefVariable``)."""

    def __init__(self, initial_value: Any = None, trainable: bool = True, collections: Optional[list] = None,
                 validate_shape: bool = True, caching_device: Any = None, name: Optional[str] = None,
                 variable_def: Any = None, dtype: Any = None, expected_shape: Any = None,
                 import_scope: Any = None, constraint: Any = None, use_resource: Any = None,
                 synchronization: Any = None, aggregation: Any = None, shape: Any = None):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        self._trainable = trainable
        self.constraint = constraint
        self._synchronization = VariableSynchronization(synchronization or VariableSynchronization.AUTO)
        self._aggregation = VariableAggregation(aggregation or VariableAggregation.NONE)
        # TF's init_scope: a variable and its initializer never inherit control dependencies, and are made
        # outside any cond/while context (control_dependencies(None) leaves them)
        with get_default_graph().control_dependencies(None), name_scope(name, "Variable") as scope:
            if callable(initial_value):
                with name_scope("Initializer"):
                    initial_value = initial_value()
            initial_value = convert_to_tensor(initial_value, dtype=dtype, name="initial_value") \
                if not isinstance(initial_value, Tensor) else initial_value
            if initial_value.op._control_flow_context is not None:
                raise ValueError("Initializer for variable %s is from inside a control-flow construct, such as a "
                                 "loop or conditional. When creating a variable inside a loop or conditional, use "
                                 "a lambda as the initializer." % scope)
            if dtype is not None and initial_value.dtype is not dtypes.as_dtype(dtype):
                initial_value = cast(initial_value, dtype)
            self._initial_value = initial_value
            var_shape = initial_value.shape if validate_shape else TensorShape(shape)
            if validate_shape and not var_shape.is_fully_defined():
                raise ValueError("initial_value must have a shape specified: %s" % initial_value)
            self._variable = state_ops.variable_op(var_shape, initial_value.dtype, name=scope)
            self._initializer_op = state_ops.assign(
                self._variable, _guard_against_uninitialized_dependencies(scope, initial_value),
                validate_shape=validate_shape, name="Assign").op
            self._snapshot = array_ops.identity(self._variable, name="read")
        self._save_slice_info = None
        get_default_graph().add_to_collections(collections, self)

    # ---- identity
    @property
    def name(self) -> str:
        return self._variable.name

    @property
    def op(self):
        return self._variable.op

    @property
    def graph(self):
        return self._variable.graph

    @property
    def device(self) -> str:
        return self._variable.device

    @property
    def dtype(self):
        return self._variable.dtype

    @property
    def shape(self) -> TensorShape:
        return self._variable.shape

    def get_shape(self) -> TensorShape:
        return self._variable.shape

    @property
    def trainable(self) -> bool:
        return self._trainable

    def to_proto(self, export_scope: Optional[str] = None) -> Any:
        """TF's ``RefVariable.to_proto``: the ``VariableDef`` naming this variable's ops."""
        if export_scope:
            raise NotImplementedError("to_proto(export_scope=...) is not supported")
        out = variable_pb2.VariableDef(variable_name=self.name, initializer_name=self.initializer.name,
                                       snapshot_name=self.value().name, trainable=self.trainable,
                                       synchronization=self.synchronization.value,
                                       aggregation=self.aggregation.value)
        if self._initial_value is not None:
            out.initial_value_name = self._initial_value.name
        return out

    @staticmethod
    def from_proto(variable_def: Any, import_scope: Optional[str] = None) -> "Variable":
        """TF's ``Variable.from_proto``: a Variable over the existing graph ops a ``VariableDef`` names."""
        prefix = (import_scope.rstrip("/") + "/") if import_scope else ""
        return _variable_from_proto(variable_def, lambda name: prefix + name)

    @property
    def synchronization(self) -> VariableSynchronization:
        return self._synchronization

    @property
    def aggregation(self) -> VariableAggregation:
        return self._aggregation

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    def initialized_value(self) -> Tensor:
        """The variable's value once it is initialized, its initial value before (TF's cond on
        ``IsVariableInitialized``, made outside any control dependency)."""
        with get_default_graph().control_dependencies(None):
            return cond(state_ops.is_variable_initialized(self), self.read_value, lambda: self.initial_value)

    def value(self) -> Tensor:
        return self._snapshot

    def read_value(self) -> Tensor:
        return array_ops.identity(self._variable, name="read")

    def _ref(self) -> Tensor:
        return self._variable

    def _to_tensor(self) -> Tensor:
        return self._snapshot

    def _as_graph_element(self) -> Tensor:
        return self._variable

    # ---- updates
    def assign(self, value, use_locking=False, name=None, read_value=True):
        return state_ops.assign(self._variable, value, use_locking=use_locking, name=name)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return state_ops.scatter_sub(self._variable, sparse_delta.indices, sparse_delta.values, name=name)

    def eval(self, session=None):
        return self._variable.eval(session=session)

    def load(self, value, session=None):
        session = session or get_default_session()
        if session is None:
            raise ValueError("Variable.load needs a session (none given and no default session)")
        session.variable_slot(self.op).value = np.array(value, dtype=self.dtype.as_numpy_dtype)

    def set_shape(self, shape):
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    def __repr__(self) -> str:
        return "<tf.Variable '%s' shape=%s dtype=%s_ref>" % (self.name, self.shape, self.dtype.name)


def _guard_against_uninitialized_dependencies(name: str, initial_value: Tensor) -> Tensor:
    """TF's ``_try_guard_against_uninitialized_dependencies``: ``initial_value`` with every variable it reads
    replaced by that variable's ``initialized_value()``; the ops on the way are copied as
    ``<op name>_<variable scope>`` (a RefSwitch as a Switch). Unchanged when it reads no variable of the
    collections, or its graph has a cycle (a loop)."""
    if _has_cycle(initial_value.op, {}):
        return initial_value
    return _safe_initial_value_from_tensor(name, initial_value, {})


def _has_cycle(op, state: dict) -> bool:
    if state.get(op) == "started":
        return True
    if state.get(op) == "finished":
        return False
    state[op] = "started"
    for i in [t.op for t in op.inputs] + list(op.control_inputs):
        if _has_cycle(i, state):
            return True
    state[op] = "finished"
    return False


def _safe_initial_value_from_tensor(name: str, tensor: Tensor, op_cache: dict) -> Tensor:
    op = tensor.op
    if op not in op_cache:
        op_cache[op] = _safe_initial_value_from_op(name, op, op_cache)
    return op_cache[op].outputs[tensor.value_index]


def _safe_initial_value_from_op(name: str, op, op_cache: dict):
    if op.type in ("IsVariableInitialized", "VarIsInitializedOp", "ReadVariableOp", "If"):
        return op
    if op.type in ("VariableV2", "VarHandleOp"):
        initialized = _find_initialized_value_for_variable(op)
        return op if initialized is None else initialized.op
    new_inputs = [_safe_initial_value_from_tensor(name, t, op_cache) for t in op.inputs]
    if all(a is b for a, b in zip(new_inputs, op.inputs)):
        return op
    op_type = "Switch" if op.type == "RefSwitch" else op.type
    new_name = (op.name + "_" + name).replace(":", "_")       # ends in "/": used as it is
    return create_op(op_type, new_inputs, dict(op.attrs), name=new_name)


def _find_initialized_value_for_variable(variable_op) -> Optional[Tensor]:
    graph = variable_op.graph
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
        for var in graph.get_collection(key):
            if getattr(var, "op", None) is variable_op and hasattr(var, "initialized_value"):
                return var.initialized_value()
    return None


def _delegate(method: str):
    def fn(self, *args):
        return getattr(self._snapshot, method)(*args)
    fn.__name__ = method
    return fn


for _m in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
           "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__",
           "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__", "__gt__", "__ge__", "__getitem__",
           "__and__", "__or__", "__invert__"):
    setattr(Variable, _m, _delegate(_m))
Variable.__array_priority__ = 100
VariableV1 = RefVariable = Variable


def global_variables(scope: Optional[str] = None) -> list:
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def trainable_variables(scope: Optional[str] = None) -> list:
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope: Optional[str] = None) -> list:
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope: Optional[str] = None) -> list:
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope: Optional[str] = None) -> list:
    return get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list, name: str = "init"):
    """A NoOp (``init``) depending on every variable's initializer."""
    var_list = list(var_list)
    if not var_list:
        return no_op(name=name)
    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer():
    return variables_initializer(global_variables(), name="init")


initialize_all_variables = global_variables_initializer


def local_variables_initializer():
    return variables_initializer(local_variables(), name="init")


def is_variable_initialized(variable):
    return state_ops.is_variable_initialized(variable)


def assert_variables_initialized(var_list=None):
    return no_op()


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A string tensor of the names of uninitialized variables."""
    var_list = global_variables() + local_variables() if var_list is None else list(var_list)
    with name_scope(name):
        if not var_list:
            return convert_to_tensor([], dtype=dtypes.string)
        inits = array_ops.stack([state_ops.is_variable_initialized(v) for v in var_list])
        uninitialized = math_ops.logical_not(inits)
        names = convert_to_tensor([v.op.name for v in var_list], dtype=dtypes.string)
        return manip_ops.boolean_mask(names, uninitialized)


# ---------------------------------------------------------------------------------------------------------
# the variable collections in a MetaGraphDef (VariableDef both ways)


def _variable_from_proto(vdef: Any, prefixed: Any) -> Variable:
    graph = get_default_graph()
    v = Variable.__new__(Variable)
    v._variable = graph.as_graph_element(prefixed(vdef.variable_name))
    if v._variable.op.type != "VariableV2":
        raise ValueError("VariableDef %s names a %s op; only VariableV2 (ref) variables can be imported"
                         % (vdef.variable_name, v._variable.op.type))
    v._initializer_op = graph.as_graph_element(prefixed(vdef.initializer_name))
    v._snapshot = graph.as_graph_element(prefixed(vdef.snapshot_name))
    v._initial_value = (graph.as_graph_element(prefixed(vdef.initial_value_name))
                        if vdef.initial_value_name else None)
    v._trainable = vdef.trainable
    v._synchronization = VariableSynchronization(vdef.synchronization)
    v._aggregation = VariableAggregation(vdef.aggregation)
    v.constraint = None
    v._save_slice_info = None
    return v


for _key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, GraphKeys.LOCAL_VARIABLES,
             GraphKeys.MODEL_VARIABLES, GraphKeys.MOVING_AVERAGE_VARIABLES, GraphKeys.METRIC_VARIABLES,
             GraphKeys.GLOBAL_STEP):
    register_proto_function(_key, variable_pb2.VariableDef,
                            to_proto=lambda v: v.to_proto() if isinstance(v, Variable) else None,
                            from_proto=_variable_from_proto)
