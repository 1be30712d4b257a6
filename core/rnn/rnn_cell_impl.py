"""``tf.nn.rnn_cell``: TF 1.x's RNN cells (tf-keras's ``legacy_cells.py``, what ``tf.compat.v1.nn.rnn_cell`` is).

A cell is a ``tf.layers.Layer``: ``output, new_state = cell(inputs, state)`` builds the cell's variables on the first
call, in the variable scope ``<current scope>/<cell name>`` (``rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel``),
and reuses them on every later call, so a driver (``static_rnn``, ``dynamic_rnn``'s loop body) just calls it once per
step. Kernels have TF's layout: ``[input_depth + hidden, gates * hidden]`` over ``concat([inputs, h], 1)``, gates in
TF's order (LSTM ``i, j, f, o``; GRU ``r, u``), so weights move between TF and tfevents.core by variable name.

``RNNCell`` is subclassable as in TF1: define ``state_size``, ``output_size`` and ``call(inputs, state)`` (which may
create variables with ``tf.get_variable``; they are shared by later calls).
"""
from __future__ import annotations

import collections
import contextlib
import inspect
from typing import Any, Callable, Iterator, Optional

from ..framework import dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..initializers import Constant, Zeros
from ..layers._utils import check_ndim
from ..layers.base import Layer
from ..ops import activation_ops, array_ops, math_ops, nn_ops, slicing_ops
from ..framework.registry import constant, constant_value, convert_to_tensor
from ..variable_scope import VariableScope, get_variable_scope, variable_scope
from ..variables import global_variables
from . import _nest as nest
from ..ops.clip_ops import clip_by_value

__all__ = ["RNNCell", "LayerRNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
           "LSTMStateTuple", "assert_like_rnncell"]

_BIAS_VARIABLE_NAME = "bias"
_WEIGHTS_VARIABLE_NAME = "kernel"


# ---------------------------------------------------------------------------------------------------------
# helpers


def assert_like_rnncell(cell_name: str, cell: Any) -> None:
    """TypeError unless ``cell`` has ``output_size``, ``state_size``, ``zero_state`` and is callable."""
    conditions = [hasattr(cell, "output_size"), hasattr(cell, "state_size"),
                  hasattr(cell, "get_initial_state") or hasattr(cell, "zero_state"), callable(cell)]
    errors = ["'output_size' property is missing", "'state_size' property is missing",
              "either 'zero_state' or 'get_initial_state' method is required", "is not callable"]
    if not all(conditions):
        missing = [e for e, ok in zip(errors, conditions) if not ok]
        raise TypeError("The argument %r (%s) is not an RNNCell: %s." % (cell_name, cell, ", ".join(missing)))


@contextlib.contextmanager
def reenter_variable_scope(scope: VariableScope, **kwargs) -> Iterator[VariableScope]:
    """``with tf.variable_scope(scope_object):`` as TF 1.x does it: a new name scope named after the scope's last
    component, opened under the current name scope (``rnn/rnn/``), around the scope itself."""
    last = scope.name.split("/")[-1]
    with (name_scope(last) if last else contextlib.nullcontext()):
        with variable_scope(scope, auxiliary_name_scope=False, **kwargs) as entered:
            yield entered


def _check_supported_dtypes(dtype: Any) -> None:
    if dtype is None:
        return
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or getattr(dtype, "is_complex", False)):
        raise ValueError("RNN cell only supports floating point inputs, but received dtype: %s" % dtype.name)


def _check_rnn_cell_input_dtypes(inputs: Any) -> None:
    for t in nest.flatten(inputs):
        _check_supported_dtypes(t.dtype)


# Keras's activation names and the tf.nn functions they stand for
_ACTIVATIONS = {"tanh": math_ops.tanh, "sigmoid": math_ops.sigmoid, "relu": nn_ops.relu, "relu6": nn_ops.relu6,
                "elu": nn_ops.elu, "selu": activation_ops.selu, "softplus": nn_ops.softplus,
                "softsign": activation_ops.softsign, "softmax": nn_ops.softmax}


def _get_activation(activation: Any) -> Callable:
    """A callable, a Keras activation name (``"relu"``, ``"tanh"``, ...) or None (``tanh``)."""
    if not activation:
        return math_ops.tanh
    if callable(activation):
        return activation
    if isinstance(activation, str):
        if activation == "linear":
            return lambda x: x
        if activation in _ACTIVATIONS:
            return _ACTIVATIONS[activation]
    raise ValueError("Unknown activation function: %r. Pass a callable or one of %s."
                     % (activation, ", ".join(tuple(_ACTIVATIONS) + ("linear",))))


def _concat(prefix: Any, suffix: Any, static: bool = False) -> Any:
    """``[prefix..., suffix...]`` from ints, TensorShapes or int32 tensors: a 1-D tensor, or (``static``) a list
    with ``None`` for unknown entries (TF's ``rnn_cell_impl._concat``)."""
    def part(x):
        if isinstance(x, Tensor):
            static_value = constant_value(x)
            if x.shape.ndims == 0:
                x = array_ops.expand_dims(x, 0)
            elif x.shape.ndims != 1:
                raise ValueError("Prefix or suffix tensor must be either a scalar or vector, but received tensor: "
                                 "%s" % (x,))
            if static_value is not None:
                static_value = [int(v) for v in (static_value.reshape(-1))]
            else:
                static_value = [None] * (x.shape.dims[0] or 0) if x.shape.dims else None
            return x, static_value
        shape = TensorShape(x)
        static_value = shape.as_list() if shape.ndims is not None else None
        tensor = constant(shape.as_list(), dtype=dtypes.int32) if shape.is_fully_defined() else None
        return tensor, static_value

    p, p_static = part(prefix)
    s, s_static = part(suffix)
    if static:
        if p_static is None or s_static is None:
            return None
        return list(p_static) + list(s_static)
    if p is None or s is None:
        raise ValueError("Prefix or suffix can't be None. Received prefix = %s and suffix = %s" % (prefix, suffix))
    return array_ops.concat((p, s), 0)


def _zero_state_tensors(state_size: Any, batch_size: Any, dtype: Any) -> Any:
    """Zeros shaped ``[batch_size] + s`` for every ``s`` in the (nested) ``state_size``."""
    def zeros(s):
        value = array_ops.zeros(_concat(batch_size, s), dtype=dtype)
        static = _concat(batch_size, s, static=True)
        if static is not None:
            value.set_shape(static)
        return value
    return nest.map_structure(zeros, state_size)


_LSTMStateTuple = collections.namedtuple("LSTMStateTuple", ("c", "h"))


class LSTMStateTuple(_LSTMStateTuple):
    """An LSTM state ``(c, h)``: the cell state and the output (``state_size``, ``zero_state`` and new states)."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError("Inconsistent dtypes for internal state: %s vs %s" % (c.dtype, h.dtype))
        return c.dtype


# ---------------------------------------------------------------------------------------------------------
# base classes


class RNNCell(Layer):
    """An RNN cell: ``(output, next_state) = cell(inputs, state)``; subclasses define ``state_size``,
    ``output_size`` and ``call(inputs, state)``.

    Without ``scope``, the cell keeps the variable scope current at its first call and re-enters it on every later
    call (TF's ``rnncell_scope``); its variables live in ``<that scope>/<cell name>``.
    """

    def __init__(self, trainable: bool = True, name: Optional[str] = None, dtype: Any = None, **kwargs):
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._is_tf_rnn_cell = True
        self._rnncell_scope: Optional[VariableScope] = None

    def __call__(self, inputs: Any, state: Any, scope: Any = None):
        """Run the cell on ``inputs`` ``[batch, input_size]`` from ``state``; returns ``(output, new_state)``."""
        if scope is not None:
            with variable_scope(scope) as entered:
                return self._layer_call(inputs, state, scope=entered)
        if self._rnncell_scope is None:
            self._rnncell_scope = get_variable_scope()
        with reenter_variable_scope(self._rnncell_scope):
            return self._layer_call(inputs, state)

    def _layer_call(self, inputs: Any, state: Any, scope: Any = None):
        """``tf.layers.Layer.__call__`` for a cell: build once, then ``call`` in the layer's scopes."""
        self._set_scope(scope)
        reuse = True if self.built else self._reuse
        with variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as entered:
            self._current_scope = entered
            with name_scope(entered.original_name_scope):
                inputs = nest.map_structure(convert_to_tensor, inputs)
                first = nest.flatten(inputs)[0]
                if self._dtype is None:
                    self._dtype = first.dtype.base_dtype
                self._check_input(inputs)
                if not self.built:
                    self.build(nest.map_structure(lambda t: t.shape, inputs))
                    self.built = True
                known = set(id(v) for v in self.weights)
                created = set(id(v) for v in global_variables())
                kwargs = {"scope": entered} if _call_takes_scope(self.call) else {}
                outputs = self.call(inputs, state, **kwargs)
                for v in global_variables():     # variables a subclass made with tf.get_variable in `call`
                    if id(v) not in created and id(v) not in known:
                        (self._trainable_weights if v.trainable else self._non_trainable_weights).append(v)
        if not isinstance(outputs, (tuple, list)) or len(outputs) != 2:
            raise TypeError("%s.call must return a pair (output, new_state), got %r" % (type(self).__name__, outputs))
        return tuple(outputs)

    @property
    def state_size(self) -> Any:
        """Size(s) of the state: an int, a TensorShape, or a (nested) tuple of them."""
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self) -> Any:
        """Size of the output: an int or a TensorShape."""
        raise NotImplementedError("Abstract method")

    def get_initial_state(self, inputs: Any = None, batch_size: Any = None, dtype: Any = None) -> Any:
        """``zero_state`` with the batch size and dtype of ``inputs`` (or the ones given)."""
        if inputs is not None:
            inputs = convert_to_tensor(inputs, name="inputs")
            static_batch = inputs.shape.dims[0] if inputs.shape.dims else None
            if batch_size is not None:
                given = constant_value(batch_size) if isinstance(batch_size, Tensor) else batch_size
                if static_batch != (int(given) if given is not None else None):
                    raise ValueError("batch size from input tensor is different from the input param. Input "
                                     "tensor batch: %s, batch_size: %s" % (static_batch, batch_size))
            if dtype is not None and inputs.dtype != dtypes.as_dtype(dtype):
                raise ValueError("dtype from input tensor is different from the input param. Input tensor dtype: "
                                 "%s, dtype: %s" % (inputs.dtype.name, dtypes.as_dtype(dtype).name))
            batch_size = static_batch or array_ops.shape(inputs)[0]
            dtype = inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError("batch_size and dtype cannot be None while constructing initial state: "
                             "batch_size=%s, dtype=%s" % (batch_size, dtype))
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """Zeros shaped ``[batch_size, s]`` for each ``s`` in ``state_size`` (a tensor or a nested tuple of them)."""
        with name_scope(type(self).__name__ + "ZeroState"):
            return _zero_state_tensors(self.state_size, batch_size, dtype)


def _call_takes_scope(fn: Callable) -> bool:
    try:
        return "scope" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class LayerRNNCell(RNNCell):
    """A cell that creates its variables in ``build`` (``add_weight``), like any layer: called directly in the
    current variable scope, without ``RNNCell``'s scope capture."""

    def __call__(self, inputs: Any, state: Any, scope: Any = None, *args, **kwargs):
        return self._layer_call(inputs, state, scope=scope)

    def _check_input(self, inputs) -> None:
        """Keras's ``InputSpec(ndim=2)``, checked on every call."""
        check_ndim(self, inputs, 2)

    def _input_depth(self, input_shape) -> int:
        depth = input_shape.dims[-1] if input_shape.dims else None
        if depth is None:
            raise ValueError("Expected inputs.shape[-1] to be known, received shape: %s" % (input_shape,))
        _check_supported_dtypes(self._dtype)
        return int(depth)


# ---------------------------------------------------------------------------------------------------------
# cells


class BasicRNNCell(LayerRNNCell):
    """``output = new_state = activation(concat([inputs, state], 1) @ kernel + bias)``."""

    def __init__(self, num_units: int, activation: Any = None, reuse: Any = None, name: Optional[str] = None,
                 dtype: Any = None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        _check_supported_dtypes(self._dtype)
        self._num_units = int(num_units)
        self._activation = _get_activation(activation)

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, input_shape) -> None:
        depth = self._input_depth(input_shape)
        self._kernel = self.add_weight(_WEIGHTS_VARIABLE_NAME, shape=[depth + self._num_units, self._num_units])
        self._bias = self.add_weight(_BIAS_VARIABLE_NAME, shape=[self._num_units], initializer=Zeros())
        self.built = True

    def call(self, inputs, state):
        _check_rnn_cell_input_dtypes([inputs, state])
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._kernel)
        gate_inputs = nn_ops.bias_add(gate_inputs, self._bias)
        output = self._activation(gate_inputs)
        return output, output


class GRUCell(LayerRNNCell):
    """Gated recurrent unit: gates ``r, u = split(sigmoid([x, h] @ gates/kernel + gates/bias))`` (bias 1.0 by
    default), ``c = activation([x, r * h] @ candidate/kernel + candidate/bias)``, ``h' = u * h + (1 - u) * c``."""

    def __init__(self, num_units: int, activation: Any = None, reuse: Any = None, kernel_initializer: Any = None,
                 bias_initializer: Any = None, name: Optional[str] = None, dtype: Any = None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        _check_supported_dtypes(self._dtype)
        self._num_units = int(num_units)
        self._activation = _get_activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, input_shape) -> None:
        depth = self._input_depth(input_shape)
        n = self._num_units
        bias_init = self._bias_initializer
        self._gate_kernel = self.add_weight("gates/" + _WEIGHTS_VARIABLE_NAME, shape=[depth + n, 2 * n],
                                            initializer=self._kernel_initializer)
        self._gate_bias = self.add_weight("gates/" + _BIAS_VARIABLE_NAME, shape=[2 * n],
                                          initializer=bias_init if bias_init is not None else Constant(1.0))
        self._candidate_kernel = self.add_weight("candidate/" + _WEIGHTS_VARIABLE_NAME, shape=[depth + n, n],
                                                 initializer=self._kernel_initializer)
        self._candidate_bias = self.add_weight("candidate/" + _BIAS_VARIABLE_NAME, shape=[n],
                                               initializer=bias_init if bias_init is not None else Zeros())
        self.built = True

    def call(self, inputs, state):
        _check_rnn_cell_input_dtypes([inputs, state])
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._gate_kernel)
        gate_inputs = nn_ops.bias_add(gate_inputs, self._gate_bias)
        value = math_ops.sigmoid(gate_inputs)
        r, u = array_ops.split(value=value, num_or_size_splits=2, axis=1)
        r_state = r * state
        candidate = math_ops.matmul(array_ops.concat([inputs, r_state], 1), self._candidate_kernel)
        candidate = nn_ops.bias_add(candidate, self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class BasicLSTMCell(LayerRNNCell):
    """LSTM without peepholes, clipping or projection: ``i, j, f, o = split([x, h] @ kernel + bias, 4)``,
    ``c' = c * sigmoid(f + forget_bias) + sigmoid(i) * activation(j)``, ``h' = activation(c') * sigmoid(o)``."""

    def __init__(self, num_units: int, forget_bias: float = 1.0, state_is_tuple: bool = True, activation: Any = None,
                 reuse: Any = None, name: Optional[str] = None, dtype: Any = None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        _check_supported_dtypes(self._dtype)
        self._num_units = int(num_units)
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _get_activation(activation)

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    output_size = property(lambda self: self._num_units)

    def build(self, input_shape) -> None:
        depth = self._input_depth(input_shape)
        n = self._num_units
        self._kernel = self.add_weight(_WEIGHTS_VARIABLE_NAME, shape=[depth + n, 4 * n])
        self._bias = self.add_weight(_BIAS_VARIABLE_NAME, shape=[4 * n], initializer=Zeros())
        self.built = True

    def call(self, inputs, state):
        _check_rnn_cell_input_dtypes([inputs, state])
        one = constant(1, dtype=dtypes.int32)
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(value=state, num_or_size_splits=2, axis=one)
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel)
        gate_inputs = nn_ops.bias_add(gate_inputs, self._bias)
        i, j, f, o = array_ops.split(value=gate_inputs, num_or_size_splits=4, axis=one)
        forget_bias_tensor = constant(self._forget_bias, dtype=f.dtype)
        add, multiply, sigmoid = math_ops.add, math_ops.multiply, math_ops.sigmoid
        new_c = add(multiply(c, sigmoid(add(f, forget_bias_tensor))), multiply(sigmoid(i), self._activation(j)))
        new_h = multiply(self._activation(new_c), sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(LayerRNNCell):
    """LSTM with optional peepholes (``w_f_diag``, ``w_i_diag``, ``w_o_diag``), cell clipping, and a projection
    ``projection/kernel`` ``[num_units, num_proj]`` (clipped by ``proj_clip``); the state is ``(c, m)``."""

    def __init__(self, num_units: int, use_peepholes: bool = False, cell_clip: Optional[float] = None,
                 initializer: Any = None, num_proj: Optional[int] = None, proj_clip: Optional[float] = None,
                 num_unit_shards: Optional[int] = None, num_proj_shards: Optional[int] = None,
                 forget_bias: float = 1.0, state_is_tuple: bool = True, activation: Any = None, reuse: Any = None,
                 name: Optional[str] = None, dtype: Any = None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        _check_supported_dtypes(self._dtype)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError("num_unit_shards / num_proj_shards (partitioned variables) are not supported")
        self._num_units = int(num_units)
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _get_activation(activation)
        out = num_proj if num_proj else num_units
        self._state_size = LSTMStateTuple(num_units, out) if state_is_tuple else num_units + out
        self._output_size = out

    state_size = property(lambda self: self._state_size)
    output_size = property(lambda self: self._output_size)

    def build(self, input_shape) -> None:
        depth = self._input_depth(input_shape)
        n = self._num_units
        h_depth = n if self._num_proj is None else self._num_proj
        self._kernel = self.add_weight(_WEIGHTS_VARIABLE_NAME, shape=[depth + h_depth, 4 * n],
                                       initializer=self._initializer)
        self._bias = self.add_weight(_BIAS_VARIABLE_NAME, shape=[4 * n], initializer=Zeros())
        if self._use_peepholes:
            self._w_f_diag = self.add_weight("w_f_diag", shape=[n], initializer=self._initializer)
            self._w_i_diag = self.add_weight("w_i_diag", shape=[n], initializer=self._initializer)
            self._w_o_diag = self.add_weight("w_o_diag", shape=[n], initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_weight("projection/" + _WEIGHTS_VARIABLE_NAME, shape=[n, self._num_proj],
                                                initializer=self._initializer)
        self.built = True

    def call(self, inputs, state):
        _check_rnn_cell_input_dtypes([inputs, state])
        num_proj = self._num_units if self._num_proj is None else self._num_proj
        sigmoid = math_ops.sigmoid
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = slicing_ops.slice_(state, [0, 0], [-1, self._num_units])
            m_prev = slicing_ops.slice_(state, [0, self._num_units], [-1, num_proj])
        if inputs.shape.dims is None or inputs.shape.dims[-1] is None:
            raise ValueError("Could not infer input size from inputs.get_shape()[-1].Received input shape: %s"
                             % (inputs.shape,))
        lstm_matrix = math_ops.matmul(array_ops.concat([inputs, m_prev], 1), self._kernel)
        lstm_matrix = nn_ops.bias_add(lstm_matrix, self._bias)
        i, j, f, o = array_ops.split(value=lstm_matrix, num_or_size_splits=4, axis=1)
        if self._use_peepholes:
            c = (sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev
                 + sigmoid(i + self._w_i_diag * c_prev) * self._activation(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else array_ops.concat([c, m], 1)
        return m, new_state


class MultiRNNCell(RNNCell):
    """Cells stacked in order: cell ``i`` runs in variable scope ``cell_i`` on the previous cell's output; the
    state is the tuple of the cells' states (or, ``state_is_tuple=False``, their concatenation)."""

    def __init__(self, cells: Any, state_is_tuple: bool = True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_nested(cells):
            raise TypeError("cells must be a list or tuple, but received: %s." % (cells,))
        for i, cell in enumerate(cells):
            assert_like_rnncell("cells[%d]" % i, cell)
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_nested(c.state_size) for c in self._cells):
            raise ValueError("Some cells return tuples of states, but the flag state_is_tuple is not set. State "
                             "sizes are: %s" % ([c.state_size for c in self._cells],))

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    output_size = property(lambda self: self._cells[-1].output_size)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with name_scope(type(self).__name__ + "ZeroState"):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return _zero_state_tensors(self.state_size, batch_size, dtype)

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        return [w for cell in self._cells if isinstance(cell, Layer) for w in cell.trainable_weights]

    @property
    def non_trainable_weights(self) -> list:
        weights = [w for cell in self._cells if isinstance(cell, Layer) for w in cell.non_trainable_weights]
        if not self.trainable:
            return [w for cell in self._cells if isinstance(cell, Layer) for w in cell.trainable_weights] + weights
        return weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    def call(self, inputs, state):
        cur_state_pos = 0
        cur_inp = inputs
        new_states = []
        for i, cell in enumerate(self._cells):
            with variable_scope("cell_%d" % i):
                if self._state_is_tuple:
                    if not nest.is_nested(state):
                        raise ValueError("Expected state to be a tuple of length %d, but received: %s"
                                         % (len(self.state_size), state))
                    cur_state = state[i]
                else:
                    cur_state = slicing_ops.slice_(state, [0, cur_state_pos], [-1, cell.state_size])
                    cur_state_pos += cell.state_size
                cur_inp, new_state = cell(cur_inp, cur_state)
                new_states.append(new_state)
        return cur_inp, (tuple(new_states) if self._state_is_tuple else array_ops.concat(new_states, 1))
