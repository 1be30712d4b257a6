"""``tf.nn.rnn_cell.DropoutWrapper``, ``ResidualWrapper`` and ``DeviceWrapper`` (tf-keras's
``legacy_cell_wrappers.py``): cells that run another cell and change its inputs, outputs or state.

A wrapper calls the wrapped cell's ``__call__`` directly, so the wrapped cell's variables are named as if it were
used unwrapped (``rnn/basic_lstm_cell/kernel``, no wrapper scope).
"""
from __future__ import annotations

import hashlib
import numbers
from typing import Any, Callable, Optional

from ..framework.graph import device as _device, name_scope
from ..framework.tensor_shape import TensorShape
from ..ops import math_ops, nn_ops, random_ops
from ..framework.registry import constant_value, convert_to_tensor
from . import _nest as nest
from .rnn_cell_impl import LSTMStateTuple, RNNCell, assert_like_rnncell

__all__ = ["DropoutWrapper", "ResidualWrapper", "DeviceWrapper"]


class _RNNCellWrapperV1(RNNCell):
    """A cell around ``cell``: same ``state_size``/``output_size``/``zero_state``/weights, its own ``__call__``."""

    def __init__(self, cell: Any, *args, **kwargs):
        super().__init__(*args, **kwargs)
        assert_like_rnncell("cell", cell)
        self.cell = cell

    def _call_wrapped_cell(self, inputs, state, cell_call_fn: Callable, **kwargs):
        raise NotImplementedError

    def __call__(self, inputs: Any, state: Any, scope: Any = None):
        """Run the wrapped cell (through its own ``__call__``, in the current scopes) with the wrapping logic."""
        return self._call_wrapped_cell(inputs, state, cell_call_fn=self.cell.__call__, scope=scope)

    state_size = property(lambda self: self.cell.state_size)
    output_size = property(lambda self: self.cell.output_size)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with name_scope(type(self).__name__ + "ZeroState"):
            return self.cell.zero_state(batch_size, dtype)

    @property
    def trainable_weights(self) -> list:
        return list(getattr(self.cell, "trainable_weights", [])) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list:
        weights = list(getattr(self.cell, "non_trainable_weights", []))
        if not self.trainable:
            return list(getattr(self.cell, "trainable_weights", [])) + weights
        return weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def wrapped_cell(self) -> Any:
        return self.cell


def _enumerated_map_structure_up_to(shallow: Any, map_fn: Callable, *args: Any) -> Any:
    index = [0]

    def fn(*inner):
        result = map_fn(index[0], *inner)
        index[0] += 1
        return result

    return nest.map_structure_up_to(shallow, fn, *args)


def _default_dropout_state_filter_visitor(substate: Any) -> Any:
    """Dropout on every state part except an LSTM's memory ``c``."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


class DropoutWrapper(_RNNCellWrapperV1):
    """Dropout on the cell's inputs, outputs and (filtered) new state, each with its own keep probability (a float
    or a scalar tensor); a constant keep probability of 1 adds no ops. ``variational_recurrent=True`` draws one
    mask per run, shared by every time step (``input_size`` and ``dtype`` then required)."""

    def __init__(self, cell: Any, input_keep_prob: Any = 1.0, output_keep_prob: Any = 1.0,
                 state_keep_prob: Any = 1.0, variational_recurrent: bool = False, input_size: Any = None,
                 dtype: Any = None, seed: Optional[int] = None,
                 dropout_state_filter_visitor: Optional[Callable] = None, **kwargs):
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and not callable(dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable. Received: %s"
                            % (dropout_state_filter_visitor,))
        self._dropout_state_filter = dropout_state_filter_visitor or _default_dropout_state_filter_visitor
        with name_scope("DropoutWrapperInit"):
            for prob, attr in ((input_keep_prob, "input_keep_prob"), (state_keep_prob, "state_keep_prob"),
                               (output_keep_prob, "output_keep_prob")):
                tensor_prob = convert_to_tensor(prob)
                const_prob = constant_value(tensor_prob)
                if const_prob is not None:
                    if const_prob < 0 or const_prob > 1:
                        raise ValueError("Parameter %s must be between 0 and 1. Received %s" % (attr, const_prob))
                    setattr(self, "_" + attr, float(const_prob))
                else:
                    setattr(self, "_" + attr, tensor_prob)
        self._variational_recurrent = variational_recurrent
        self._input_size = input_size
        self._seed = seed
        self._recurrent_input_noise = self._recurrent_state_noise = self._recurrent_output_noise = None
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")

            def batch_noise(s, inner_seed):
                shape = [1] + TensorShape(s).as_list()
                return random_ops.random_uniform(shape, seed=inner_seed, dtype=dtype)

            if not isinstance(self._input_keep_prob, numbers.Real) or self._input_keep_prob < 1.0:
                if input_size is None:
                    raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or is unknown, "
                                     "input_size must be provided")
                self._recurrent_input_noise = _enumerated_map_structure_up_to(
                    input_size, lambda i, s: batch_noise(s, self._gen_seed("input", i)), input_size)
            self._recurrent_state_noise = _enumerated_map_structure_up_to(
                cell.state_size, lambda i, s: batch_noise(s, self._gen_seed("state", i)), cell.state_size)
            self._recurrent_output_noise = _enumerated_map_structure_up_to(
                cell.output_size, lambda i, s: batch_noise(s, self._gen_seed("output", i)), cell.output_size)

    def _gen_seed(self, salt_prefix: str, index: int) -> Optional[int]:
        """TF's per-tensor seed: the first 8 hex digits of md5(str(seed) + salt), made non-negative."""
        if self._seed is None:
            return None
        string = (str(self._seed) + "%s_%d" % (salt_prefix, index)).encode("utf-8")
        return int(hashlib.md5(string).hexdigest()[:8], 16) & 0x7FFFFFFF

    def _variational_recurrent_dropout_value(self, index, value, noise, keep_prob):
        binary_tensor = math_ops.floor(keep_prob + noise)
        ret = math_ops.divide(value, keep_prob) * binary_tensor
        ret.set_shape(value.shape)
        return ret

    def _dropout(self, values, salt_prefix, recurrent_noise, keep_prob, shallow_filtered_substructure=None):
        if shallow_filtered_substructure is None:
            shallow_filtered_substructure = values
        if not self._variational_recurrent:
            def dropout(i, do_dropout, v):
                if not isinstance(do_dropout, bool) or do_dropout:
                    return nn_ops.dropout(v, keep_prob=keep_prob, seed=self._gen_seed(salt_prefix, i))
                return v
            return _enumerated_map_structure_up_to(shallow_filtered_substructure, dropout,
                                                   shallow_filtered_substructure, values)

        def variational(i, do_dropout, v, n):
            if not isinstance(do_dropout, bool) or do_dropout:
                return self._variational_recurrent_dropout_value(i, v, n, keep_prob)
            return v
        return _enumerated_map_structure_up_to(shallow_filtered_substructure, variational,
                                               shallow_filtered_substructure, values, recurrent_noise)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        def should_dropout(p):
            return not isinstance(p, float) or p < 1

        if should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._recurrent_input_noise, self._input_keep_prob)
        output, new_state = cell_call_fn(inputs, state, **kwargs)
        if should_dropout(self._state_keep_prob):
            shallow = nest.get_traverse_shallow_structure(self._dropout_state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._recurrent_state_noise, self._state_keep_prob,
                                      shallow)
        if should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._recurrent_output_noise, self._output_keep_prob)
        return output, new_state


class ResidualWrapper(_RNNCellWrapperV1):
    """Adds the cell's inputs to its outputs (``residual_fn(inputs, outputs)`` instead, if given)."""

    def __init__(self, cell: Any, residual_fn: Optional[Callable] = None, **kwargs):
        super().__init__(cell, **kwargs)
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        outputs, new_state = cell_call_fn(inputs, state, **kwargs)

        def default_residual_fn(inputs, outputs):
            nest.assert_same_structure(inputs, outputs)

            def add(inp, out):
                inp = convert_to_tensor(inp)
                inp.shape.assert_is_compatible_with(out.shape)
                return inp + out
            return nest.map_structure(add, inputs, outputs)

        return (self._residual_fn or default_residual_fn)(inputs, outputs), new_state


class DeviceWrapper(_RNNCellWrapperV1):
    """Runs the cell (and builds its zero state) under ``tf.device(device)``."""

    def __init__(self, cell: Any, device: Any, **kwargs):
        super().__init__(cell, **kwargs)
        self._device = device

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with name_scope(type(self).__name__ + "ZeroState"):
            with _device(self._device):
                return self.cell.zero_state(batch_size, dtype)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        with _device(self._device):
            return cell_call_fn(inputs, state, **kwargs)
