"""The static (unrolled) RNN drivers of ``tf.nn`` (TF's ``rnn.py``): ``static_rnn``, ``static_bidirectional_rnn``,
``static_state_saving_rnn``; ``_rnn_step`` (one masked step, reusable by ``dynamic_rnn``'s loop body); and the
``ReverseSequence`` op (``reverse_sequence``) the backward direction needs.

``static_rnn`` calls the cell once per input in variable scope ``rnn`` (reusing its variables from the second step
on). With ``sequence_length``, a row's outputs at and past its length are zeros and its state is copied through, so
the final state is the state at each row's last step.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import colocate_with, control_dependencies
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, math_ops, reduction_ops
from ..framework.registry import apply_op, convert_to_tensor, register, shape_same
from ..variable_scope import VariableScope, variable_scope
from . import _nest as nest
from . import rnn_cell  # noqa: F401 - tf.nn.rnn_cell, exported to core.nn with the drivers
from .rnn_cell_impl import _concat, assert_like_rnncell, reenter_variable_scope
from ..control_flow import cond

__all__ = ["static_rnn", "static_bidirectional_rnn", "static_state_saving_rnn", "reverse_sequence"]


# ---------------------------------------------------------------------------------------------------------
# ReverseSequence


def _reverse_sequence_forward(x, seq_lengths, seq_dim, batch_dim=0):
    lengths = np.asarray(seq_lengths).astype(np.int64)
    if lengths.ndim != 1 or lengths.shape[0] != x.shape[batch_dim]:
        raise InvalidArgumentError(None, "Length of seq_lengths != input.dims(%d), (%d vs. %d)"
                                   % (batch_dim, lengths.size, x.shape[batch_dim]))
    if (lengths < 0).any() or (lengths > x.shape[seq_dim]).any():
        bad = int(np.flatnonzero((lengths < 0) | (lengths > x.shape[seq_dim]))[0])
        raise InvalidArgumentError(None, "seq_lens(%d) > input.dims(%d)" % (bad, seq_dim) if lengths[bad] >= 0
                                   else "seq_lens(%d) < 0" % bad)
    t = np.arange(x.shape[seq_dim])
    # source position along seq_dim for every (batch row, position): reversed inside the row's length
    source = np.where(t[None, :] < lengths[:, None], lengths[:, None] - 1 - t[None, :], t[None, :])
    shape = [1] * x.ndim
    shape[batch_dim], shape[seq_dim] = source.shape[0], source.shape[1]
    if batch_dim > seq_dim:
        source = source.T
    return np.take_along_axis(x, source.reshape(shape), axis=seq_dim)


def _reverse_sequence_grad(op, grad):
    return [reverse_sequence(grad, op.inputs[1], seq_axis=op.attrs["seq_dim"], batch_axis=op.attrs["batch_dim"]),
            None]


register("ReverseSequence", _reverse_sequence_forward, _reverse_sequence_grad, shape_same,
         type_attrs={"Tlen": 1})


def reverse_sequence(input: Any, seq_lengths: Any, seq_axis: Optional[int] = None,  # noqa: A002
                     batch_axis: Optional[int] = None, name: Optional[str] = None, seq_dim: Optional[int] = None,
                     batch_dim: Optional[int] = None):
    """Reverse the first ``seq_lengths[b]`` entries along ``seq_axis`` of every batch row ``b``
    (``batch_axis``); the rest of each row stays in place."""
    seq_axis = seq_axis if seq_axis is not None else seq_dim
    batch_axis = batch_axis if batch_axis is not None else (batch_dim if batch_dim is not None else 0)
    if seq_axis is None:
        raise ValueError("reverse_sequence needs seq_axis")
    input = convert_to_tensor(input)  # noqa: A001
    seq_lengths = convert_to_tensor(seq_lengths)
    if not seq_lengths.dtype.is_integer:
        raise TypeError("seq_lengths must be int32 or int64, got %s" % seq_lengths.dtype.name)
    rank = input.shape.ndims
    if rank is not None:
        for label, axis in (("seq_dim", seq_axis), ("batch_dim", batch_axis)):
            if not 0 <= axis < rank:
                raise ValueError("Invalid %s %d for input of rank %d" % (label, axis, rank))
        if seq_axis == batch_axis:
            raise ValueError("seq_dim == batch_dim == %d" % seq_axis)
    return apply_op("ReverseSequence", [input, seq_lengths],
                    dict(seq_dim=int(seq_axis), batch_dim=int(batch_axis)), name=name or "ReverseSequence")


# ---------------------------------------------------------------------------------------------------------
# one step with sequence lengths


def _infer_state_dtype(explicit_dtype: Any, state: Any):
    if explicit_dtype is not None:
        return dtypes.as_dtype(explicit_dtype)
    flat = [t.dtype for t in nest.flatten(state)]
    if not flat:
        raise ValueError("Unable to infer dtype from argument state=%s." % (state,))
    if any(d != flat[0] for d in flat):
        raise ValueError("Argument state=%s has tensors of different inferred dtypes. Unable to infer a single "
                         "representative dtype. Dtypes received: %s" % (state, [d.name for d in flat]))
    return flat[0]


def _rnn_step(time: Any, sequence_length: Any, min_sequence_length: Any, max_sequence_length: Any,
              zero_output: Any, state: Any, call_cell: Callable, state_size: Any, skip_conditionals: bool = False):
    """One step as TF's ``rnn._rnn_step``: rows with ``time >= sequence_length`` get ``zero_output`` and keep
    ``state``; the others get the cell's new output and state. ``skip_conditionals=False`` wraps it in TF's two
    ``tf.cond``s (skip the cell past ``max_sequence_length``, skip the selects below ``min_sequence_length``)."""
    flat_state = nest.flatten(state)
    flat_zero_output = nest.flatten(zero_output)
    copy_cond = time >= sequence_length

    def copy_one_through(output, new_output):
        if output.shape.ndims == 0:
            return new_output
        with colocate_with(new_output):
            return math_ops.where(copy_cond, output, new_output)

    def copy_some_through(flat_new_output, flat_new_state):
        return ([copy_one_through(z, o) for z, o in zip(flat_zero_output, flat_new_output)]
                + [copy_one_through(s, n) for s, n in zip(flat_state, flat_new_state)])

    def new_output_and_state():
        new_output, new_state = call_cell()
        nest.assert_same_structure(zero_output, new_output)
        nest.assert_same_structure(state, new_state)
        return nest.flatten(new_output), nest.flatten(new_state)

    if skip_conditionals:
        final = copy_some_through(*new_output_and_state())
    else:

        def maybe_copy_some_through():
            flat_new_output, flat_new_state = new_output_and_state()
            return cond(time < min_sequence_length, lambda: flat_new_output + flat_new_state,
                        lambda: copy_some_through(flat_new_output, flat_new_state))

        final = cond(time >= max_sequence_length, lambda: flat_zero_output + flat_state, maybe_copy_some_through)
        final = final if isinstance(final, list) else [final]
    if len(final) != len(flat_zero_output) + len(flat_state):
        raise ValueError("Internal error: state and output were not concatenated correctly.")
    final_output, final_state = final[:len(flat_zero_output)], final[len(flat_zero_output):]
    for output, flat_output in zip(final_output, flat_zero_output):
        output.set_shape(flat_output.shape)
    for substate, flat_substate in zip(final_state, flat_state):
        substate.set_shape(flat_substate.shape)
    return (nest.pack_sequence_as(zero_output, final_output), nest.pack_sequence_as(state, final_state))


def _reverse_seq(input_seq: list, lengths: Any) -> list:
    """The list reversed in time: all of it, or (``lengths``) each row's first ``lengths[b]`` steps."""
    if lengths is None:
        return list(reversed(input_seq))
    flat_input_seq = tuple(nest.flatten(x) for x in input_seq)
    flat_results: list = [[] for _ in input_seq]
    for sequence in zip(*flat_input_seq):
        ndims = sequence[0].shape.ndims
        input_shape = TensorShape(None if ndims is None else [None] * ndims)
        for x in sequence:
            input_shape = input_shape.merge_with(x.shape)
        joined = array_ops.stack(sequence)
        reversed_ = reverse_sequence(joined, lengths, 0, 1)
        pieces = array_ops.unstack(reversed_)
        for r, flat_result in zip(pieces if isinstance(pieces, list) else [pieces], flat_results):
            r.set_shape(input_shape)
            flat_result.append(r)
    return [nest.pack_sequence_as(x, flat) for x, flat in zip(input_seq, flat_results)]


def initial_state_of(cell: Any, initial_state: Any, batch_size: Any, dtype: Any) -> Any:
    """``initial_state``, else the cell's initial (zero) state of ``batch_size`` rows of ``dtype`` (TF1's rule)."""
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError("If no initial_state is provided, argument `dtype` must be specified")
    if getattr(cell, "get_initial_state", None) is not None:
        return cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)
    return cell.zero_state(batch_size, dtype)


def _open_scope(scope: Any, default: str):
    if isinstance(scope, VariableScope):
        return reenter_variable_scope(scope)
    return variable_scope(scope or default)


# ---------------------------------------------------------------------------------------------------------
# drivers


def static_rnn(cell: Any, inputs: Any, initial_state: Any = None, dtype: Any = None, sequence_length: Any = None,
               scope: Any = None):
    """Unroll ``cell`` over the list ``inputs`` (each ``[batch, input_size]``, or a nested tuple of such):
    returns ``(outputs, final_state)``, one output per input. ``initial_state`` defaults to the cell's zero state
    (``dtype`` is then required); ``sequence_length`` (``[batch]`` ints) zeroes each row's outputs from its length
    on and copies its state through."""
    assert_like_rnncell("cell", cell)
    if not nest.is_nested(inputs):
        raise TypeError("Argument `inputs` must be a sequence. Received: %s" % (inputs,))
    if not inputs:
        raise ValueError("Argument `inputs` must not be empty.")
    outputs = []
    with _open_scope(scope, "rnn") as varscope:
        first_input = inputs
        while nest.is_nested(first_input):
            first_input = first_input[0]
        first_input = convert_to_tensor(first_input)
        if first_input.shape.ndims != 1:
            fixed_batch_size = first_input.shape.dims[0] if first_input.shape.dims else None
            for flat_input in nest.flatten(inputs):
                shape = convert_to_tensor(flat_input).shape
                if shape.ndims is not None and shape.ndims < 2:
                    raise ValueError("Shape must be at least rank 2 but is rank %d for input %s"
                                     % (shape.ndims, flat_input))
                dims = shape.dims if shape.dims is not None else [None, None]
                if dims[0] is not None and fixed_batch_size is not None and fixed_batch_size != dims[0]:
                    raise ValueError("Dimensions %d and %d are not compatible: the inputs' batch sizes differ"
                                     % (fixed_batch_size, dims[0]))
                for i, size in enumerate(dims[1:]):
                    if size is None:
                        raise ValueError("Input size (dimension %d of input %s) must be accessible via shape "
                                         "inference, but saw value None." % (i, flat_input))
        else:
            fixed_batch_size = first_input.shape.dims[0]
        batch_size = fixed_batch_size if fixed_batch_size else array_ops.shape(first_input)[0]
        state = initial_state_of(cell, initial_state, batch_size, dtype)

        if sequence_length is not None:
            sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError("Argument `sequence_length` must be a vector of length %s. Received "
                                 "sequence_length=%s." % (batch_size, sequence_length))
            if not sequence_length.dtype.is_integer:
                raise TypeError("Argument `sequence_length` must be int32 or int64, got %s"
                                % sequence_length.dtype.name)
            state_dtype = _infer_state_dtype(dtype, state)

            def create_zero_output(output_size):
                output = array_ops.zeros(_concat(batch_size, output_size), state_dtype)
                static = _concat(fixed_batch_size, output_size, static=True)
                if static is not None:
                    output.set_shape(static)
                return output

            zero_output = nest.pack_sequence_as(
                cell.output_size, [create_zero_output(s) for s in nest.flatten(cell.output_size)])
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)
            min_sequence_length = reduction_ops.reduce_min(sequence_length)
            max_sequence_length = reduction_ops.reduce_max(sequence_length)

        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()

            def call_cell(input_=input_, state=state):
                return cell(input_, state)

            if sequence_length is not None:
                # TF puts this step in two tf.conds; the selects alone give the same values and gradients (TF's
                # dynamic_rnn does the same with skip_conditionals=True), without building the cell inside a cond
                output, state = _rnn_step(time, sequence_length, min_sequence_length, max_sequence_length,
                                          zero_output, state, call_cell, cell.state_size, skip_conditionals=True)
            else:
                output, state = call_cell()
            outputs.append(output)
        return outputs, state


def static_state_saving_rnn(cell: Any, inputs: Any, state_saver: Any, state_name: Any, sequence_length: Any = None,
                            scope: Any = None):
    """``static_rnn`` starting from ``state_saver.state(name)`` and saving the final state with
    ``state_saver.save_state(name, value)`` before the last output and the state are returned."""
    state_size = cell.state_size
    state_is_tuple = nest.is_nested(state_size)
    if state_is_tuple != nest.is_nested(state_name):
        raise ValueError("Argument `state_name` should be the same type as `cell.state_size`. Received: "
                         "state_name=%s, cell.state_size=%s." % (state_name, state_size))
    if state_is_tuple:
        state_name_flat = nest.flatten(state_name)
        if len(state_name_flat) != len(nest.flatten(state_size)):
            raise ValueError("Number of elements in argument `state_name` and `cell.state_size` are mismatched. "
                             "Received state_name=%s with %d elements and cell.state_size=%s with %d elements."
                             % (state_name, len(state_name_flat), state_size, len(nest.flatten(state_size))))
        initial_state = nest.pack_sequence_as(state_size, [state_saver.state(s) for s in state_name_flat])
    else:
        initial_state = state_saver.state(state_name)
    outputs, state = static_rnn(cell, inputs, initial_state=initial_state, sequence_length=sequence_length,
                                scope=scope)
    if state_is_tuple:
        flat_state = nest.flatten(state)
        save_state = [state_saver.save_state(n, s) for n, s in zip(nest.flatten(state_name), flat_state)]
    else:
        save_state = [state_saver.save_state(state_name, state)]
    with control_dependencies(save_state):
        last_output = outputs[-1]
        outputs[-1] = nest.pack_sequence_as(last_output,
                                            [array_ops.identity(o) for o in nest.flatten(last_output)])
        if state_is_tuple:
            state = nest.pack_sequence_as(state, [array_ops.identity(s) for s in flat_state])
        else:
            state = array_ops.identity(state)
    return outputs, state


def static_bidirectional_rnn(cell_fw: Any, cell_bw: Any, inputs: Any, initial_state_fw: Any = None,
                             initial_state_bw: Any = None, dtype: Any = None, sequence_length: Any = None,
                             scope: Any = None):
    """A forward ``static_rnn`` (scope ``bidirectional_rnn/fw``) and a backward one over the time-reversed inputs
    (``bw``; with ``sequence_length`` each row is reversed within its length); returns ``(outputs, state_fw,
    state_bw)``, each output the depth-concatenation ``[fw, bw]`` at that time step."""
    assert_like_rnncell("cell_fw", cell_fw)
    assert_like_rnncell("cell_bw", cell_bw)
    if not nest.is_nested(inputs):
        raise TypeError("Argument `inputs` must be a sequence. Received: %s" % (inputs,))
    if not inputs:
        raise ValueError("Argument `inputs` must not be empty.")
    with _open_scope(scope, "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, output_state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, sequence_length,
                                                    scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_seq(inputs, sequence_length)
            tmp, output_state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype, sequence_length,
                                              scope=bw_scope)
    output_bw = _reverse_seq(tmp, sequence_length)
    flat_outputs = tuple(array_ops.concat([fw, bw], 1)
                         for fw, bw in zip(nest.flatten(output_fw), nest.flatten(output_bw)))
    return nest.pack_sequence_as(output_fw, flat_outputs), output_state_fw, output_state_bw
