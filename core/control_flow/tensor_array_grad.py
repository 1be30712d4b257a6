"""Gradients of the TensorArray ops, as TF's ``tensor_array_grad.py`` builds them.

The gradient of a TensorArray is another TensorArray on the same handle (``TensorArrayGradV3``, one per forward
array and ``tf.gradients`` call: ``source`` is the gradient name scope, e.g. ``gradients``), whose repeated
writes to an index are summed. A read's gradient writes into it, a write's gradient reads from it; the flows
order them (a write's gradient waits for the forward write's flow: ``flow_out`` / ``write_barrier``).
"""
from __future__ import annotations

from typing import Any

from ..framework.graph import control_dependencies
from ..framework.registry import REGISTRY
from .tensor_array import TensorArray
from ..ops import array_ops


def _grad_source(t: Any) -> str:
    """Which ``tf.gradients`` call made ``t``: its name up to the last scope starting with ``gradients``."""
    tokens = t.name.split("/")
    positions = [i for i, x in enumerate(tokens) if x.startswith("gradients")]
    if not positions:
        raise ValueError("Expected op/tensor name to start with gradients (excluding scope), got: %s. This means "
                         "that a tf.gradients op with this op in its dependency path has a custom name that does not "
                         "start with 'gradients'. Please make sure all calls to tf.gradients that have non-empty "
                         "`name` arguments use names that start with 'gradients'." % t.name)
    return "/".join(tokens[:positions[-1] + 1])


def _grad_ta(op: Any, dtype: Any, flow: Any, source: str) -> TensorArray:
    forward = TensorArray(dtype=dtype, handle=op.inputs[0], flow=flow, colocate_with_first_write_call=False)
    return forward.grad(source=source, flow=flow)


def _barrier(op: Any, flow: Any):
    """The incoming flow gradient, after the forward op's flow (TF's ``flow_out`` / ``write_barrier``)."""
    flow_out = array_ops.identity(op.outputs[0], "flow_out")
    with control_dependencies([flow_out]):
        return array_ops.identity(flow, "write_barrier")


def _read_grad(op, grad):
    flow = op.inputs[2]
    g = _grad_ta(op, op.attrs["dtype"], flow, _grad_source(grad))
    return [None, None, g.write(op.inputs[1], grad).flow]


def _write_grad(op, flow):
    source = _grad_source(flow)
    flow = _barrier(op, flow)
    g = _grad_ta(op, op.attrs["T"], flow, source)
    return [None, None, g.read(op.inputs[1]), flow]


def _gather_grad(op, grad):
    flow = op.inputs[2]
    g = _grad_ta(op, op.attrs["dtype"], flow, _grad_source(grad))
    return [None, None, g.scatter(op.inputs[1], grad).flow]


def _scatter_grad(op, flow):
    source = _grad_source(flow)
    flow = _barrier(op, flow)
    g = _grad_ta(op, op.attrs["T"], flow, source)
    return [None, None, g.gather(op.inputs[1]), flow]


def _concat_grad(op, grad, unused_lengths_grad):
    flow = op.inputs[1]
    g = _grad_ta(op, op.attrs["dtype"], flow, _grad_source(grad))
    return [None, g.split(grad, lengths=op.outputs[1]).flow]


def _split_grad(op, flow):
    source = _grad_source(flow)
    flow = _barrier(op, flow)
    g = _grad_ta(op, op.attrs["T"], flow, source)
    return [None, g.concat(), None, flow]


REGISTRY["TensorArrayReadV3"].grad = _read_grad
REGISTRY["TensorArrayWriteV3"].grad = _write_grad
REGISTRY["TensorArrayGatherV3"].grad = _gather_grad
REGISTRY["TensorArrayScatterV3"].grad = _scatter_grad
REGISTRY["TensorArrayConcatV3"].grad = _concat_grad
REGISTRY["TensorArraySplitV3"].grad = _split_grad
