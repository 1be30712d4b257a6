"""``tf.nn.dynamic_rnn`` and ``tf.nn.bidirectional_dynamic_rnn`` as TF1 builds them (``rnn.py``:
``dynamic_rnn``, ``_dynamic_rnn_loop``): the (time-major) inputs are unstacked into TensorArrays, a ``while_loop``
in scope ``rnn/while`` calls the cell once per time step (its variables, made on the first call inside the loop,
live outside it: ``rnn/basic_lstm_cell/kernel``...), writes each output into a TensorArray and carries the state;
the outputs are stacked after the loop. With ``sequence_length``, each step goes through ``_rnn_step`` (rows past
their length get zero outputs and keep their state), so the final state is each row's last valid one.
"""
from __future__ import annotations

from typing import Any, Optional

from ..framework import dtypes
from ..control_flow import TensorArray, while_loop
from ..framework.graph import name_scope
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, math_ops, reduction_ops
from ..ops.manip_ops import reverse
from ..framework.registry import constant, constant_value, convert_to_tensor
from ..variable_scope import variable_scope
from . import _nest as nest
from .rnn import _infer_state_dtype, _open_scope, _rnn_step, initial_state_of, reverse_sequence
from .rnn_cell_impl import _concat, assert_like_rnncell

__all__ = ["dynamic_rnn", "bidirectional_dynamic_rnn"]


def _transpose_batch_time(x: Any):
    """``x`` with its first two dimensions swapped (keeping what is known of its static shape)."""
    x_static_shape = x.shape
    if x_static_shape.ndims is not None and x_static_shape.ndims < 2:
        return x
    x_rank = array_ops.rank(x)
    x_t = array_ops.transpose(x, array_ops.concat(([1, 0], array_ops.range_(2, x_rank)), axis=0))
    if x_static_shape.dims is not None:
        dims = list(x_static_shape.dims)
        x_t.set_shape([dims[1], dims[0]] + dims[2:])
    return x_t


def _best_effort_input_batch_size(flat_input: Any):
    """The static batch size of time-major inputs if known, else ``tf.shape(input)[1]``."""
    for input_ in flat_input:
        shape = input_.shape
        if shape.ndims is None:
            continue
        if shape.ndims < 2:
            raise ValueError("Input tensor should have rank >= 2. Received input=%s of rank %d"
                             % (input_, shape.ndims))
        if shape.dims[1] is not None:
            return shape.dims[1]
    return array_ops.shape(flat_input[0])[1]


def _maybe_tensor_shape_from_tensor(shape: Any) -> TensorShape:
    if hasattr(shape, "op"):
        value = constant_value(shape)
        return TensorShape(None if value is None else [int(v) for v in value.reshape(-1)])
    return TensorShape(shape)


def dynamic_rnn(cell: Any, inputs: Any, sequence_length: Any = None, initial_state: Any = None, dtype: Any = None,
                parallel_iterations: Optional[int] = None, swap_memory: bool = False, time_major: bool = False,
                scope: Any = None):
    """Run ``cell`` over the time dimension of ``inputs`` (``[batch, time, ...]``, or ``[time, batch, ...]`` when
    ``time_major``; a nested structure of such) in a ``while_loop``; returns ``(outputs, final_state)`` with
    ``outputs`` in the inputs' layout. ``initial_state`` defaults to the cell's zero state (``dtype`` is then
    required). ``sequence_length`` (``[batch]`` ints): a row's outputs from its length on are zeros and its final
    state is the state at its last valid step."""
    assert_like_rnncell("cell", cell)
    with _open_scope(scope, "rnn"):
        flat_input = nest.flatten(inputs)
        if not time_major:
            flat_input = [convert_to_tensor(input_) for input_ in flat_input]
            flat_input = tuple(_transpose_batch_time(input_) for input_ in flat_input)
        else:
            flat_input = tuple(convert_to_tensor(input_) for input_ in flat_input)
        parallel_iterations = parallel_iterations or 32
        if sequence_length is not None:
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError("Argument sequence_length must be a vector of length batch_size. Received "
                                 "sequence_length=%s of shape: %s" % (sequence_length, sequence_length.shape))
            sequence_length = array_ops.identity(sequence_length, name="sequence_length")
        batch_size = _best_effort_input_batch_size(flat_input)
        state = initial_state_of(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            # (TF also asserts at run time that sequence_length has shape [batch_size]; core has no Assert op)
            sequence_length = array_ops.identity(sequence_length, name="CheckSeqLen")
        inputs = nest.pack_sequence_as(inputs, list(flat_input))
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, state, parallel_iterations, swap_memory,
                                                 sequence_length, dtype)
        if not time_major:
            outputs = nest.map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _dynamic_rnn_loop(cell: Any, inputs: Any, initial_state: Any, parallel_iterations: int, swap_memory: bool,
                      sequence_length: Any = None, dtype: Any = None):
    """TF's ``_dynamic_rnn_loop``: (outputs, final_state) of time-major ``inputs``."""
    state = initial_state
    state_size = cell.state_size
    flat_input = nest.flatten(inputs)
    flat_output_size = nest.flatten(cell.output_size)
    input_shape = array_ops.shape(flat_input[0])
    time_steps = input_shape[0]
    batch_size = _best_effort_input_batch_size(flat_input)
    inputs_got_shape = []
    for input_ in flat_input:
        shape = input_.shape
        if shape.ndims is not None and shape.ndims < 3:
            raise ValueError("Shape must be at least rank 3 but is rank %d for input %s" % (shape.ndims, input_))
        inputs_got_shape.append(shape if shape.dims is not None else TensorShape([None, None, None]))
    const_time_steps, const_batch_size = inputs_got_shape[0].dims[:2]
    for input_, shape in zip(flat_input, inputs_got_shape):
        if not TensorShape(shape.dims[2:]).is_fully_defined():
            raise ValueError("Input size (depth of inputs) must be accessible via shape inference, but saw value "
                             "None for input=%s." % (input_,))
        if const_time_steps != shape.dims[0]:
            raise ValueError("Time steps is not the same for all the elements in the input in a batch. Received "
                             "time steps=%s for input=%s." % (shape.dims[0], input_))
        if const_batch_size != shape.dims[1]:
            raise ValueError("Batch_size is not the same for all the elements in the input. Received batch "
                             "size=%s for input=%s." % (shape.dims[1], input_))
    state_dtype = _infer_state_dtype(dtype, state)

    def _create_zero_arrays(size):
        value = array_ops.zeros(_concat(batch_size, size), state_dtype)
        static = _concat(const_batch_size, size, static=True)
        if static is not None:
            value.set_shape(static)
        return value

    zero_output = nest.pack_sequence_as(cell.output_size, [_create_zero_arrays(s) for s in flat_output_size])
    if sequence_length is not None:
        min_sequence_length = reduction_ops.reduce_min(sequence_length)
        max_sequence_length = reduction_ops.reduce_max(sequence_length)
    else:
        max_sequence_length = time_steps
    time = constant(0, dtype=dtypes.int32, name="time")
    with name_scope("dynamic_rnn") as scope:
        base_name = scope

    def _create_ta(name, element_shape, dtype):
        return TensorArray(dtype=dtype, size=time_steps, element_shape=element_shape,
                           tensor_array_name=base_name + name)

    output_ta = tuple(
        _create_ta("output_%d" % i, TensorShape([const_batch_size] + list(_maybe_tensor_shape_from_tensor(s).dims)),
                   state_dtype)
        for i, s in enumerate(flat_output_size))
    input_ta = tuple(_create_ta("input_%d" % i, element_shape=TensorShape(x.shape.dims[1:]), dtype=x.dtype)
                     for i, x in enumerate(flat_input))
    input_ta = tuple(ta.unstack(x) for ta, x in zip(input_ta, flat_input))

    def _time_step(time, output_ta_t, state):
        input_t = tuple(ta.read(time) for ta in input_ta)
        for input_, shape in zip(input_t, inputs_got_shape):
            input_.set_shape(shape.dims[1:])
        input_t = nest.pack_sequence_as(inputs, list(input_t))

        def call_cell():
            return cell(input_t, state)
        if sequence_length is not None:
            output, new_state = _rnn_step(time=time, sequence_length=sequence_length,
                                          min_sequence_length=min_sequence_length,
                                          max_sequence_length=max_sequence_length, zero_output=zero_output,
                                          state=state, call_cell=call_cell, state_size=state_size,
                                          skip_conditionals=True)
        else:
            output, new_state = call_cell()
        output = nest.flatten(output)
        output_ta_t = tuple(ta.write(time, out) for ta, out in zip(output_ta_t, output))
        return (time + 1, output_ta_t, new_state)

    loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_sequence_length))
    _, output_final_ta, final_state = while_loop(
        cond=lambda time, *_: time < loop_bound, body=_time_step, loop_vars=(time, output_ta, state),
        parallel_iterations=parallel_iterations, maximum_iterations=time_steps, swap_memory=swap_memory)
    final_outputs = tuple(ta.stack() for ta in output_final_ta)
    for output, output_size in zip(final_outputs, flat_output_size):
        static = _concat([const_time_steps, const_batch_size], output_size, static=True)
        if static is not None:
            output.set_shape(static)
    return nest.pack_sequence_as(cell.output_size, list(final_outputs)), final_state


def bidirectional_dynamic_rnn(cell_fw: Any, cell_bw: Any, inputs: Any, sequence_length: Any = None,
                              initial_state_fw: Any = None, initial_state_bw: Any = None, dtype: Any = None,
                              parallel_iterations: Optional[int] = None, swap_memory: bool = False,
                              time_major: bool = False, scope: Any = None):
    """A forward ``dynamic_rnn`` (scope ``bidirectional_rnn/fw``) and one over the time-reversed inputs (``bw``;
    with ``sequence_length`` each row is reversed within its length, and the backward outputs are reversed back).
    Returns ``((output_fw, output_bw), (output_state_fw, output_state_bw))``."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def _reverse(input_, seq_lengths, seq_axis, batch_axis):
        if seq_lengths is not None:
            return reverse_sequence(input=input_, seq_lengths=seq_lengths, seq_axis=seq_axis, batch_axis=batch_axis)
        return reverse(input_, axis=[seq_axis])

    with _open_scope(scope, "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, output_state_fw = dynamic_rnn(cell_fw, inputs, sequence_length, initial_state_fw, dtype,
                                                     parallel_iterations, swap_memory, time_major, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            inputs_reverse = nest.map_structure(
                lambda inp: _reverse(inp, sequence_length, time_axis, batch_axis), inputs)
            tmp, output_state_bw = dynamic_rnn(cell_bw, inputs_reverse, sequence_length, initial_state_bw, dtype,
                                               parallel_iterations, swap_memory, time_major, scope=bw_scope)
    output_bw = _reverse(tmp, sequence_length, time_axis, batch_axis)
    return (output_fw, output_bw), (output_state_fw, output_state_bw)
