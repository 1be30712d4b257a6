"""TF1's ``tf.TensorArray`` (``_GraphTensorArray``) and its ``TensorArray*V3`` ops.

A TensorArray is a resource (``handle``) plus a float32 scalar ``flow``: every op that changes the array takes
the current flow and returns a new one, so ordering is data flow and a while loop carries the array as its flow
(``while_loop`` flattens a TensorArray to its flow at the loop boundary; the handle enters as a loop invariant).
The Python methods return new ``TensorArray`` objects carrying the new flow.

At run time the handle's value is a ``TensorArrayStorage`` made by each run of its ``TensorArrayV3`` op (it lives
for one ``Session.run``, like ``stack_ops.Stack``). It follows TF's kernel rules (``tensor_array.h``): an index is
written once (the gradient arrays made by ``TensorArrayGradV3`` sum repeated writes instead), a read of an
unwritten index gives zeros when the element shape is fully known, ``clear_after_read`` forbids a second read,
and an array without ``dynamic_size`` cannot grow. Each op is registered at the end, with its gradient.
"""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import control_dependencies, name_scope
from ..framework.tensor_shape import TensorShape, as_shape
from ..framework.registry import apply_op, constant_value, convert_to_tensor, create_op, register
from ..ops import array_ops, math_ops


# ---------------------------------------------------------------------------------------------------------
# run-time storage


class _Entry:
    __slots__ = ("value", "shape", "written", "read", "cleared")

    def __init__(self):
        self.value: Optional[np.ndarray] = None
        self.shape: Optional[tuple] = None
        self.written = self.read = self.cleared = False


def _compatible(partial: Optional[tuple], shape: tuple) -> bool:
    if partial is None:
        return True
    return len(partial) == len(shape) and all(p is None or p == s for p, s in zip(partial, shape))


def _shape_str(partial: Optional[tuple]) -> str:
    if partial is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in partial) + "]"


class TensorArrayStorage:
    """The elements of one TensorArray in one ``Session.run`` (the value of its resource handle)."""

    def __init__(self, name: str, dtype: dtypes.DType, size: int, element_shape: Optional[tuple],
                 dynamic_size: bool, clear_after_read: bool, identical_element_shapes: bool,
                 multiple_writes_aggregate: bool = False, is_grad: bool = False):
        self.name, self.dtype = name, dtype
        self.entries: List[_Entry] = [_Entry() for _ in range(size)]
        self.element_shape = element_shape
        self.dynamic_size, self.clear_after_read = dynamic_size, clear_after_read
        self.identical = identical_element_shapes
        self.aggregate, self.is_grad = multiple_writes_aggregate, is_grad
        self.closed = False
        self.grads: dict = {}

    def _error(self, message: str) -> InvalidArgumentError:
        return InvalidArgumentError(None, "TensorArray %s: %s" % (self.name, message))

    def check_open(self) -> None:
        if self.closed:
            raise self._error("has already been closed.")

    def write(self, index: int, value: np.ndarray) -> None:
        self.check_open()
        index = int(index)
        if index < 0 or (not self.dynamic_size and index >= len(self.entries)):
            raise self._error("Tried to write to index %d but array is not resizeable and size is: %d"
                              % (index, len(self.entries)))
        if index >= len(self.entries):
            self.entries.extend(_Entry() for _ in range(index + 1 - len(self.entries)))
        value = np.asarray(value)
        if value.dtype != self.dtype.as_numpy_dtype:
            raise self._error("Could not write tensor of type %s to TensorArray with dtype %s"
                              % (dtypes.numpy_dtype_to_tf(value.dtype).name, self.dtype.name))
        if not _compatible(self.element_shape, value.shape):
            raise self._error("Could not write to TensorArray index %d because the value shape is %s which is "
                              "incompatible with the TensorArray's inferred element shape: %s (consider setting "
                              "infer_shape=False)." % (index, _shape_str(value.shape),
                                                       _shape_str(self.element_shape)))
        if self.identical and (self.element_shape is None or None in self.element_shape):
            self.element_shape = tuple(value.shape)
        entry = self.entries[index]
        if entry.read:
            raise self._error("Could not write to TensorArray index %d because it has already been read." % index)
        if entry.written and not self.aggregate:
            raise self._error("Could not write to TensorArray index %d because it has already been written to."
                              % index)
        if entry.written:
            if tuple(value.shape) != entry.shape:
                raise self._error("Could not aggregate to TensorArray index %d because the existing shape is %s "
                                  "but the new input shape is %s" % (index, _shape_str(entry.shape),
                                                                     _shape_str(value.shape)))
            entry.value = value if entry.value is None else entry.value + value
            return
        entry.value, entry.shape, entry.written = value, tuple(value.shape), True

    def read(self, index: int) -> np.ndarray:
        self.check_open()
        index = int(index)
        if index < 0 or (not self.is_grad and index >= len(self.entries)):
            raise self._error("Tried to read from index %d but array size is: %d" % (index, len(self.entries)))
        entry = self.entries[index] if index < len(self.entries) else None
        if entry is None or not entry.written:
            if entry is not None and self.is_grad and entry.shape:
                shape = entry.shape
            elif self.element_shape is None or None in self.element_shape:
                raise self._error(
                    "Could not read from TensorArray index %d.  Furthermore, the element shape is not fully "
                    "defined: %s.  It is possible you are working with a resizeable TensorArray and stop_gradients "
                    "is not allowing the gradients to be written.  If you set the full element_shape property on "
                    "the forward TensorArray, the proper all-zeros tensor will be returned instead of incurring "
                    "this error." % (index, _shape_str(self.element_shape)))
            else:
                shape = self.element_shape
            return np.zeros(shape, self.dtype.as_numpy_dtype)
        if entry.cleared:
            raise self._error("Could not read index %d twice because it was cleared after a previous read (perhaps "
                              "try setting clear_after_read = false?)." % index)
        value = entry.value
        if self.clear_after_read:
            entry.value, entry.cleared = None, True
        entry.read = True
        return value

    def read_many(self, indices) -> List[np.ndarray]:
        return [self.read(i) for i in np.reshape(indices, [-1])]

    def make_grad(self, source: str) -> "TensorArrayStorage":
        """The gradient array for ``source`` (one per forward array and ``tf.gradients`` call)."""
        self.check_open()
        grad = self.grads.get(source)
        if grad is None:
            grad = TensorArrayStorage("%s@%s" % (self.name, source), self.dtype, len(self.entries),
                                      self.element_shape, False, True, self.identical,
                                      multiple_writes_aggregate=True, is_grad=True)
            for g, e in zip(grad.entries, self.entries):
                if e.written:
                    g.shape = e.shape
            self.grads[source] = grad
        return grad


# ---------------------------------------------------------------------------------------------------------
# ops


def _stacked(storage: TensorArrayStorage, values: List[np.ndarray], element_shape: Optional[tuple]):
    if not values:
        shape = element_shape if element_shape is not None and None not in element_shape else storage.element_shape
        if shape is None or None in shape:
            raise storage._error("TensorArray has size zero, but element shape %s is not fully defined. Currently "
                                 "only static shapes are supported when packing zero-size TensorArrays."
                                 % _shape_str(shape))
        return np.zeros((0,) + tuple(shape), storage.dtype.as_numpy_dtype)
    first = values[0].shape
    for i, v in enumerate(values[1:], 1):
        if v.shape != first:
            raise storage._error("TensorArray has inconsistent shapes.  Index 0 has shape: %s but index %d has "
                                 "shape: %s" % (_shape_str(first), i, _shape_str(v.shape)))
    return np.stack(values)


def _create(op, session):
    attrs = op.attrs
    dtype = attrs["dtype"]
    shape = attrs.get("element_shape", TensorShape(None))
    element_shape = None if shape.dims is None else tuple(shape.dims)
    name = attrs.get("tensor_array_name") or op.name

    def run(size):
        size = int(size)
        if size < 0:
            raise InvalidArgumentError(None, "TensorArray %s: Size should be >= 0." % name)
        storage = TensorArrayStorage(name, dtype, size, element_shape, attrs.get("dynamic_size", False),
                                     attrs.get("clear_after_read", True),
                                     attrs.get("identical_element_shapes", False))
        return storage, np.float32(0)
    return run


def _write(handle, index, value, flow_in):
    handle.write(index, value)
    return flow_in


def _read(handle, index, flow_in):
    return handle.read(index)


def _gather(handle, indices, flow_in, element_shape=None):
    indices = np.asarray(indices)
    if indices.ndim != 1:
        raise handle._error("indices must be a vector, got shape %s" % (indices.shape,))
    dims = None if element_shape is None or element_shape.dims is None else tuple(element_shape.dims)
    return _stacked(handle, handle.read_many(indices), dims)


def _scatter(handle, indices, value, flow_in):
    handle.check_open()
    indices = np.reshape(np.asarray(indices), [-1])
    value = np.asarray(value)
    if value.ndim < 1 or value.shape[0] != indices.shape[0]:
        raise handle._error("Expected len(indices) == values.shape[0], but saw: %d vs. %s"
                            % (indices.shape[0], value.shape[0] if value.ndim else "a scalar"))
    for i, index in enumerate(indices):
        handle.write(index, value[i])
    return flow_in


def _concat(handle, flow_in, element_shape_except0=None):
    handle.check_open()
    values = handle.read_many(np.arange(len(handle.entries)))
    for i, v in enumerate(values):
        if v.ndim == 0:
            raise handle._error("Concat saw a scalar shape at index %d but requires at least vectors." % i)
    lengths = np.array([v.shape[0] for v in values], np.int64)
    if not values:
        rest = None if element_shape_except0 is None or element_shape_except0.dims is None \
            else tuple(element_shape_except0.dims)
        if rest is None or None in rest:
            raise handle._error("TensorArray has size zero, but element_shape_except0 %s is not fully defined. "
                                "Currently only static shapes are supported when concatenating zero-size "
                                "TensorArrays." % _shape_str(rest))
        return np.zeros((0,) + rest, handle.dtype.as_numpy_dtype), lengths
    for i, v in enumerate(values[1:], 1):
        if v.shape[1:] != values[0].shape[1:]:
            raise handle._error("Concat saw inconsistent shapes: index 0 has shape %s but index %d has shape %s"
                                % (_shape_str(values[0].shape), i, _shape_str(v.shape)))
    return np.concatenate(values), lengths


def _split(handle, value, lengths, flow_in):
    handle.check_open()
    value = np.asarray(value)
    lengths = np.reshape(np.asarray(lengths, np.int64), [-1])
    if value.ndim < 1:
        raise handle._error("Expected value to be at least a vector, but received shape: %s"
                            % _shape_str(value.shape))
    if int(lengths.sum()) != value.shape[0]:
        raise handle._error("Expected sum of lengths to be equal to values.shape[0], but sum of lengths is: %d "
                            "and value's shape is: %s" % (int(lengths.sum()), _shape_str(value.shape)))
    if not handle.dynamic_size and len(lengths) > len(handle.entries):
        raise handle._error("Expected lengths to be at most the array size %d, but saw %d lengths"
                            % (len(handle.entries), len(lengths)))
    start = 0
    for i, n in enumerate(lengths):
        handle.write(i, value[start:start + int(n)])
        start += int(n)
    return flow_in


def _size(handle, flow_in):
    handle.check_open()
    return np.int32(len(handle.entries))


def _close(handle):
    handle.check_open()
    handle.closed = True


def _grad(handle, flow_in, source):
    return handle.make_grad(source), flow_in


_SCALAR = TensorShape([])
_HANDLE = TensorShape([2])


def _gather_shape(op):
    n = op.inputs[1].shape.dims[0] if op.inputs[1].shape.dims else None
    element = op.attrs.get("element_shape", TensorShape(None))
    return TensorShape(None) if element.dims is None else TensorShape((n,) + tuple(element.dims))


def _concat_shape(op):
    rest = op.attrs.get("element_shape_except0", TensorShape(None))
    return [TensorShape(None) if rest.dims is None else TensorShape((None,) + tuple(rest.dims)), TensorShape([None])]


def _call(op_type: str, inputs: list, attrs: dict, name: Optional[str]):
    """Create ``op_type`` as TF's generated wrappers do: constant inputs are named after their argument inside
    the op's name scope (``TensorArrayReadV3/index``). ``inputs``: tensors, or (value, arg name, dtype)."""
    with name_scope(name, op_type) as scope:
        tensors = [x if not isinstance(x, tuple) else convert_to_tensor(x[0], dtype=x[2], name=x[1])
                   for x in inputs]
        return create_op(op_type, tensors, attrs, name=scope)


# ---------------------------------------------------------------------------------------------------------
# the Python class


class TensorArray:
    """TF1's graph-mode ``tf.TensorArray``: a list of tensors of one dtype, written and read by index inside a
    graph (typically inside a ``while_loop``). ``size`` elements, growing when ``dynamic_size``; each index is
    written once and, with ``clear_after_read`` (the default), read once. Methods changing the array (``write``,
    ``scatter``, ``unstack``, ``split``) return a new TensorArray carrying the new ``flow``; use it afterwards."""

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: Optional[bool] = None,
                 clear_after_read: Optional[bool] = None, tensor_array_name: Optional[str] = None,
                 handle: Any = None, flow: Any = None, infer_shape: bool = True, element_shape: Any = None,
                 colocate_with_first_write_call: bool = True, name: Optional[str] = None):
        if handle is not None and tensor_array_name:
            raise ValueError("Cannot provide both `handle` and `tensor_array_name` arguments at the same time.")
        if handle is not None and not hasattr(handle, "op"):
            raise TypeError("Expected `handle` to be a Tensor, but got `%r` of type `%s` instead."
                            % (handle, type(handle).__name__))
        if handle is None and size is None:
            raise ValueError("Argument `size` must be provided if handle is not provided.")
        if handle is not None and size is not None:
            raise ValueError("Cannot provide both a `handle` and `size` arguments at the same time.")
        if handle is not None and element_shape is not None:
            raise ValueError("Cannot provide both `handle` and `element_shape` arguments at the same time.")
        if handle is not None and dynamic_size is not None:
            raise ValueError("Cannot provide both `handle` and `dynamic_size` arguments at the same time.")
        if handle is not None and clear_after_read is not None:
            raise ValueError("Cannot provide both `handle` and `clear_after_read` arguments at the same time.")
        if clear_after_read is None:
            clear_after_read = True
        self._dynamic_size = bool(dynamic_size)
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._colocate_with_first_write_call = colocate_with_first_write_call
        self._element_shape = [as_shape(element_shape)]
        self._infer_shape = infer_shape
        self._size = size
        with name_scope(name, "TensorArray") as scope:
            if handle is not None:
                if flow is None:
                    raise ValueError("flow must not be None if handle is not None.")
                self._handle, self._flow = handle, flow
            else:
                size_t = convert_to_tensor(size, dtype=dtypes.int32, name="size") \
                    if not hasattr(size, "op") else size
                if size_t.dtype is not dtypes.int32:
                    raise TypeError("TensorArray size must be an int32 scalar, got %s" % size_t.dtype.name)
                op = create_op("TensorArrayV3", [size_t], dict(
                    dtype=self._dtype, element_shape=as_shape(element_shape), dynamic_size=self._dynamic_size,
                    clear_after_read=bool(clear_after_read), identical_element_shapes=bool(infer_shape),
                    tensor_array_name=tensor_array_name or ""), name=scope)
                self._handle, self._flow = op.outputs

    # ---- properties
    @property
    def flow(self):
        """The float32 scalar whose data flow orders the ops on this array."""
        return self._flow

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def handle(self):
        """The resource tensor naming the array (the same for every TensorArray built from it)."""
        return self._handle

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape[0]

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    def _check_element_shape(self, shape: TensorShape) -> None:
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError("Inconsistent shapes: saw %s but expected %s " % (shape, self.element_shape))
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    def _with_flow(self, flow) -> "TensorArray":
        return build_ta_with_new_flow(self, flow)

    def _value(self, value: Any):
        value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
        if value.dtype.base_dtype != self._dtype:
            raise TypeError("TensorArray %s has dtype %s but the value written has dtype %s"
                            % (self._handle.op.name, self._dtype.name, value.dtype.name))
        return value

    # ---- methods
    def identity(self) -> "TensorArray":
        """The same array with its flow through an Identity (to add control dependencies)."""
        return self._with_flow(array_ops.identity(self._flow))

    def grad(self, source: str, flow: Any = None, name: Optional[str] = None) -> "TensorArray":
        """The gradient array of this one for gradient computation ``source`` (``TensorArrayGradV3``)."""
        if flow is None:
            flow = self.flow
        with name_scope(name, "TensorArrayGrad"):
            op = create_op("TensorArrayGradV3", [self._handle, flow], dict(source=source), name=name)
            g_handle = op.outputs[0]
            with control_dependencies([g_handle]):
                flow = array_ops.identity(flow, name="gradient_flow")
            g = TensorArray(dtype=self._dtype, handle=g_handle, flow=flow, infer_shape=self._infer_shape,
                            colocate_with_first_write_call=False)
            g._element_shape = self._element_shape
            return g

    def read(self, index: Any, name: Optional[str] = None):
        """The element at ``index``."""
        value = _call("TensorArrayReadV3", [self._handle, (index, "index", dtypes.int32), self._flow],
                      dict(dtype=self._dtype), name).outputs[0]
        value.set_shape(self._element_shape[0])
        return value

    def write(self, index: Any, value: Any, name: Optional[str] = None) -> "TensorArray":
        """Write ``value`` at ``index``; returns the TensorArray with the new flow."""
        with name_scope(name, "TensorArrayWrite"):
            value = self._value(value)
            self._check_element_shape(value.shape)
            flow_out = _call("TensorArrayWriteV3", [self._handle, (index, "index", dtypes.int32), value, self._flow],
                             dict(T=value.dtype), name).outputs[0]
            return self._with_flow(flow_out)

    def stack(self, name: Optional[str] = None):
        """All elements stacked into one tensor (a gather of ``range(size)``)."""
        with name_scope(name, "TensorArrayStack"):
            value = self.gather(array_ops.range_(0, self.size()), name=name)
            if self.element_shape.dims is not None and not self._dynamic_size and self._size is not None:
                size = constant_value(self._size)
                value.set_shape([None if size is None else int(size)] + list(self.element_shape.dims))
            return value

    def gather(self, indices: Any, name: Optional[str] = None):
        """The elements at ``indices``, stacked."""
        element_shape = self._element_shape[0] if self._element_shape else TensorShape(None)
        value = _call("TensorArrayGatherV3", [self._handle, (indices, "indices", dtypes.int32), self._flow],
                      dict(dtype=self._dtype, element_shape=element_shape), name).outputs[0]
        if self.element_shape.dims is not None:
            value.set_shape([None] + list(self.element_shape.dims))
        return value

    def concat(self, name: Optional[str] = None):
        """All elements concatenated along their first dimension."""
        rest = self.element_shape[1:] if self.element_shape.dims is not None else TensorShape(None)
        op = create_op("TensorArrayConcatV3", [self._handle, self._flow],
                       dict(dtype=self._dtype, element_shape_except0=rest), name=name or "TensorArrayConcatV3")
        value = op.outputs[0]
        if self.element_shape.dims is not None:
            dim0 = None
            if self._infer_shape:
                size = constant_value(self.size())
                if size is not None and self.element_shape.dims[0] is not None:
                    dim0 = int(size) * self.element_shape.dims[0]
            value.set_shape([dim0] + list(self.element_shape.dims[1:]))
        return value

    def unstack(self, value: Any, name: Optional[str] = None) -> "TensorArray":
        """Write ``value[i]`` at index i for every i."""
        with name_scope(name, "TensorArrayUnstack"):
            value = convert_to_tensor(value)
            num_elements = array_ops.shape(value)[0]
            return self.scatter(indices=array_ops.range_(0, num_elements), value=value, name=name)

    def scatter(self, indices: Any, value: Any, name: Optional[str] = None) -> "TensorArray":
        """Write ``value[i]`` at ``indices[i]``."""
        with name_scope(name, "TensorArrayScatter"):
            value = self._value(value)
            if value.shape.dims is not None:
                self._check_element_shape(value.shape[1:])
            flow_out = _call("TensorArrayScatterV3", [self._handle, (indices, "indices", dtypes.int32), value,
                                                      self._flow], dict(T=value.dtype), name).outputs[0]
            return self._with_flow(flow_out)

    def split(self, value: Any, lengths: Any, name: Optional[str] = None) -> "TensorArray":
        """Write consecutive pieces of ``value`` (``lengths[i]`` rows each) at indices 0, 1, ..."""
        with name_scope(name, "TensorArraySplit"):
            value = convert_to_tensor(value, dtype=self._dtype, name="value")
            lengths_64 = math_ops.cast(lengths, dtypes.int64)
            clengths = constant_value(lengths_64)
            if value.shape.dims is not None and clengths is not None:
                clengths = np.reshape(clengths, [-1])
                if clengths.size and clengths.max() == clengths.min():
                    self._check_element_shape(TensorShape([int(clengths[0])] + list(value.shape.dims[1:])))
            flow_out = apply_op("TensorArraySplitV3", [self._handle, value, lengths_64, self._flow],
                                dict(T=value.dtype), name=name or "TensorArraySplitV3")
            return self._with_flow(flow_out)

    def size(self, name: Optional[str] = None):
        """The number of elements (a constant unless the array is dynamically sized)."""
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtype=dtypes.int32)
        return apply_op("TensorArraySizeV3", [self._handle, self.flow], name=name or "TensorArraySizeV3")

    def close(self, name: Optional[str] = None):
        """Close the array: later ops on it fail."""
        return create_op("TensorArrayCloseV3", [self._handle], name=name or "TensorArrayCloseV3")

    def __repr__(self) -> str:
        return "<TensorArray %s dtype=%s element_shape=%s>" % (self._handle.op.name, self._dtype.name,
                                                               self.element_shape)


def build_ta_with_new_flow(old_ta: TensorArray, flow: Any) -> TensorArray:
    """A TensorArray on ``old_ta``'s handle with ``flow`` (sharing its element shape, as TF)."""
    new_ta = TensorArray(dtype=old_ta.dtype, handle=old_ta.handle, flow=flow, infer_shape=old_ta._infer_shape,
                         colocate_with_first_write_call=old_ta._colocate_with_first_write_call)
    new_ta._dynamic_size = old_ta._dynamic_size
    new_ta._size = old_ta._size
    new_ta._element_shape = old_ta._element_shape
    return new_ta


def to_flow(value: Any) -> Any:
    """A TensorArray's flow (TF's ``_convert_tensorarray_to_flow``); anything else as is."""
    return value.flow if isinstance(value, TensorArray) else value


def from_flow(original: Any, value: Any) -> Any:
    """``value`` as a TensorArray when ``original`` is one (TF's ``_convert_flow_to_tensorarray``)."""
    if isinstance(original, TensorArray):
        if isinstance(value, TensorArray):
            return value
        return build_ta_with_new_flow(original, value)
    return value


# ---- gradients, as TF's ``tensor_array_grad.py`` builds them
#
# The gradient of a TensorArray is another TensorArray on the same handle (``TensorArrayGradV3``, one per forward
# array and ``tf.gradients`` call: ``source`` is the gradient name scope, e.g. ``gradients``), whose repeated
# writes to an index are summed. A read's gradient writes into it, a write's gradient reads from it; the flows
# order them (a write's gradient waits for the forward write's flow: ``flow_out`` / ``write_barrier``).


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


# ---- the ops: forward, gradient, shape

register("TensorArrayV3", bind=_create, stateful=True, num_outputs=2,
         dtype=[dtypes.resource, dtypes.float32], shape=lambda op: [_HANDLE, _SCALAR])
register("TensorArrayGradV3", _grad, None, lambda op: [_HANDLE, _SCALAR], dtype=[dtypes.resource, dtypes.float32],
         num_outputs=2, stateful=True)
register("TensorArrayWriteV3", _write, _write_grad, lambda op: _SCALAR, dtype=dtypes.float32, stateful=True)
register("TensorArrayReadV3", _read, _read_grad, lambda op: TensorShape(None), dtype=lambda op: op.attrs["dtype"],
         stateful=True)
register("TensorArrayGatherV3", _gather, _gather_grad, _gather_shape, dtype=lambda op: op.attrs["dtype"],
         stateful=True)
register("TensorArrayScatterV3", _scatter, _scatter_grad, lambda op: _SCALAR, dtype=dtypes.float32, stateful=True)
register("TensorArrayConcatV3", _concat, _concat_grad, _concat_shape,
         dtype=lambda op: [op.attrs["dtype"], dtypes.int64], num_outputs=2, stateful=True)
register("TensorArraySplitV3", _split, _split_grad, lambda op: _SCALAR, dtype=dtypes.float32, stateful=True)
register("TensorArraySizeV3", _size, None, lambda op: _SCALAR, dtype=dtypes.int32, stateful=True)
register("TensorArrayCloseV3", _close, None, num_outputs=0, stateful=True)
