"""The op registry: every op is registered once with its numpy forward, its gradient and its TF op name.

Registering an op
-----------------
::

    from tfevents.core.framework.registry import register, apply_op, shape_same

    register("Relu",                                   # TF op name, written to NodeDef.op
             forward=lambda x: np.maximum(x, 0),       # numpy: input arrays (+ lowercase attrs) -> array
             grad=lambda op, g: [relu_grad(g, op.outputs[0])],   # builds graph ops; one entry per input
             shape=shape_same)                         # static shape inference

    def relu(features, name=None):
        return apply_op("Relu", [features], name=name)

``register(op_type, forward, grad=None, shape=None, dtype=None, num_outputs=1, stateful=False,
ref_inputs=(), aliases=False, bind=None, mutates=False, type_attrs=None, fresh=False, inplace=None)``

- ``op_type``: the TF op name (``"MatMul"``, ``"ApplyAdam"``); it is ``NodeDef.op`` in the GraphDef.
- ``forward(*input_arrays, **attrs)``: numpy, returns one array, or a tuple of arrays when ``num_outputs > 1``.
  ``attrs`` are the op's attrs whose names start with a lowercase letter (``transpose_a``, ``keep_dims``,
  ``axis``...) and that the forward declares (or all of them if it takes ``**kwargs``). Attrs starting with an
  uppercase letter (``T``, ``Tidx``, ``N``, ``DstT``) are GraphDef type metadata and are not passed; attrs
  starting with ``_`` are neither passed nor written. Inputs must never be modified in place (except ref
  inputs, below).
- ``grad(op, *output_grads)``: builds the gradient with graph ops (so gradients of gradients work) and returns a
  list with one entry per input of ``op``: a Tensor, an ``IndexedSlices`` or None. An output grad is None when
  nothing downstream depends on that output (only multi-output ops see that). It is called inside the
  ``gradients/<op name>_grad`` name scope. ``grad=None`` means "not differentiable" (inputs get None).
- ``shape(op) -> TensorShape | list[TensorShape]``: static output shapes from ``op.inputs[i].shape`` and
  ``op.attrs``; helpers ``shape_same`` (shape of input 0), ``shape_broadcast``, ``shape_scalar``; use
  ``constant_value(tensor)`` to read a Const input. Default: unknown shape.
- ``dtype``: output dtype(s): a DType, a callable ``dtype(op) -> DType | list``, or None (dtype of input 0).
- ``num_outputs``: an int or ``callable(attrs) -> int``.
- ``stateful=True``: reads or changes session state (variables, random state); never constant-folded.
  ``mutates=True`` (implies stateful): changes variables; the Session schedules such ops after every pure op
  that is ready, so reads in a step see the values from before its updates.
- ``ref_inputs=(0, 1, ...)``: input positions that are variables (the VariableV2 output, ``var._ref()`` /
  ``var.op.outputs[0]``). The forward receives the variable's ``VariableSlot`` there instead of an array: it has
  ``.value`` (the numpy buffer, None while uninitialized; ``slot.read()`` raises FailedPreconditionError then)
  and ``.name``. Update it in place (``slot.value -= lr * grad``) or assign ``slot.value = new_array``.
  A ref input does not make the variable's op run (an uninitialized variable can be assigned).
- ``aliases=True``: an output may share memory with a variable; the Session copies it when it is fetched.
- ``type_attrs``: ``{attr: input position}`` for the GraphDef's type attrs taken from an input other than
  input 0 (``{"Tidx": 1}`` for Sum, ``{"Tshape": 1}`` for Reshape, ``{"Tidx": -1}`` for ConcatV2's axis).
- ``bind(op, session) -> callable``: instead of ``forward``, build the callable for one session once (used by
  VariableV2, Placeholder, random ops: ``session.op_state(op, factory)`` keeps per-session state, e.g. an RNG).

A fused optimizer update, e.g. ``ApplyMomentum(var, accum, lr, grad, momentum)``::

    def _apply_momentum(var, accum, lr, grad, momentum, use_locking=False, use_nesterov=False):
        accum.value *= momentum; accum.value += grad
        var.value -= lr * (grad + momentum * accum.value) if use_nesterov else lr * accum.value
        return var.value
    register("ApplyMomentum", _apply_momentum, ref_inputs=(0, 1), stateful=True, mutates=True,
             aliases=True, shape=shape_same)
    apply_op("ApplyMomentum", [var._ref(), accum._ref(), lr, grad, momentum],
             attrs=dict(use_locking=False, use_nesterov=False), name="update_w/ApplyMomentum")

Buffer reuse (optional, performance only), in the same call: ``fresh=True`` declares that the op's outputs are
new arrays (never views of inputs, variables or constants); ``inplace=f`` (implies ``fresh``) gives a forward with
the same inputs allowed to write its result into input 0 (falling back to a new array when it cannot), and
``inplace=True`` derives it from a numpy ufunc forward (``ufunc_inplace(np.add)``). The Session uses it when
input 0 is a fresh temporary that nothing else reads, as hand-written numpy would write ``x += b``.

GraphDef: ``NodeDef.op`` is ``op_type``; every attr not starting with ``_`` is written (bool/int/float/str/DType/
TensorShape/ndarray/lists of those), ``T`` is added as the dtype of input 0 unless the op sets it (ops whose T is
another input's type pass ``T=...`` in attrs), and ``_output_shapes`` from the static shapes.

Creating ops: ``create_op(op_type, inputs, attrs=None, name=None) -> Operation`` and ``apply_op(...)`` which
returns the single output Tensor (or the list of outputs). Inputs are converted with ``convert_to_tensor``
(Python numbers and numpy arrays become ``Const`` nodes; Variables become their ``<var>/read`` snapshot, except
at ``ref_inputs``). The op name defaults to the op type and is made unique under the current name scope; a name
ending in ``/`` is used verbatim. Create an op's constant inputs inside ``with name_scope(name, default) as
scope:`` and pass ``name=scope`` to get TF's names (``Sum/reduction_indices``). ``register_gradient(op_type)``
replaces a gradient; ``constant_value(t)`` reads a Const (or a static Shape) when the graph is built.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from . import dtypes as _dtypes
from .graph import Operation, Tensor, get_default_graph
from .tensor_shape import TensorShape, as_shape


class OpDef:
    """What the registry knows about one op type."""

    __slots__ = ("type", "forward", "grad", "shape", "dtype", "num_outputs", "stateful", "ref_inputs",
                 "aliases", "bind", "mutates", "inplace", "fresh", "type_attrs")

    def __init__(self, op_type, forward, grad, shape, dtype, num_outputs, stateful, ref_inputs, aliases,
                 bind, mutates, type_attrs=None, fresh=False, inplace=None):
        self.type = op_type
        self.type_attrs = dict(type_attrs or {})
        self.forward = forward
        self.grad = grad
        self.shape = shape
        self.dtype = dtype
        self.num_outputs = num_outputs
        self.stateful = stateful or mutates
        self.ref_inputs = tuple(ref_inputs)
        self.aliases = aliases
        self.bind = bind
        self.mutates = mutates
        self.inplace = inplace  # a forward that may reuse input 0's buffer
        self.fresh = fresh or inplace is not None   # outputs are new arrays (never views of inputs, variables, ...)

    def __repr__(self) -> str:
        return "OpDef(%r)" % self.type


REGISTRY: dict = {}


def register(op_type: str, forward: Optional[Callable] = None, grad: Optional[Callable] = None,
             shape: Optional[Callable] = None, dtype: Any = None, num_outputs: Any = 1,
             stateful: bool = False, ref_inputs: Sequence[int] = (), aliases: bool = False,
             bind: Optional[Callable] = None, mutates: bool = False,
             type_attrs: Optional[dict] = None, fresh: bool = False,
             inplace: Union[Callable, bool, None] = None) -> OpDef:
    """Register (or replace) op ``op_type``; see the module docstring."""
    if forward is None and bind is None:
        raise ValueError("op %r needs a forward or a bind function" % op_type)
    if inplace is True:
        if not isinstance(forward, np.ufunc):
            raise ValueError("op %r: inplace=True needs a numpy ufunc forward, not %r" % (op_type, forward))
        inplace = ufunc_inplace(forward)
    opdef = OpDef(op_type, forward, grad, shape, dtype, num_outputs, stateful, ref_inputs, aliases, bind,
                  mutates, type_attrs, fresh, inplace or None)
    REGISTRY[op_type] = opdef
    return opdef


def ufunc_inplace(ufunc: Callable, *extra: Any) -> Callable:
    """``ufunc(x, *rest, *extra, out=x)`` when that is possible, else ``ufunc(x, *rest, *extra)``."""
    def forward(x, *rest):
        if type(x) is np.ndarray and x.flags.writeable:
            try:
                return ufunc(x, *rest, *extra, out=x)
            except (ValueError, TypeError):     # the result does not fit into x (broadcasting, dtype)
                pass
        return ufunc(x, *rest, *extra)
    return forward


def register_gradient(op_type: str) -> Callable:
    """Decorator replacing the gradient of a registered op (TF's ``@tf.RegisterGradient`` analogue)."""
    def deco(fn):
        REGISTRY[op_type].grad = fn
        return fn
    return deco


def get_opdef(op_type: str) -> OpDef:
    try:
        return REGISTRY[op_type]
    except KeyError:
        raise KeyError("No op registered under the name %r" % op_type) from None


# ---------------------------------------------------------------------------------------------------------
# creating ops


def create_op(op_type: str, inputs: Sequence[Any], attrs: Optional[dict] = None, name: Optional[str] = None,
              graph: Any = None) -> Operation:
    """Add an op of a registered type to the default graph (or the inputs' graph)."""
    opdef = get_opdef(op_type)
    refs = opdef.ref_inputs
    tensors = []
    for i, x in enumerate(inputs):
        if i in refs:
            tensors.append(_as_ref(x))
        else:
            tensors.append(convert_to_tensor(x))
    if graph is None:
        graph = tensors[0].graph if tensors else get_default_graph()
    attrs = dict(attrs) if attrs else {}
    op = graph._create_op(op_type, tensors, attrs, opdef, name)
    try:
        _set_outputs(op, opdef, tensors, attrs)
    except Exception:
        graph._remove_last_op(op)      # an op whose shapes or dtypes are invalid is not left in the graph
        raise
    context = op._control_flow_context
    if context is not None:            # inside a cond branch or a loop: route the inputs through Switch/Enter
        with graph.name_scope(op.name + "/"):
            context.add_op(op)
    return op


def _set_outputs(op: Operation, opdef: OpDef, tensors: list, attrs: dict) -> None:
    n = opdef.num_outputs(attrs) if callable(opdef.num_outputs) else opdef.num_outputs
    out_dtypes = opdef.dtype(op) if callable(opdef.dtype) and not isinstance(opdef.dtype, _dtypes.DType) \
        else opdef.dtype
    if out_dtypes is None:
        out_dtypes = tensors[0].dtype if tensors else _dtypes.float32
    if not isinstance(out_dtypes, (list, tuple)):
        out_dtypes = [out_dtypes] * n
    shapes = opdef.shape(op) if opdef.shape is not None else None
    if shapes is None:
        shapes = [TensorShape(None)] * n
    elif not isinstance(shapes, (list, tuple)):
        shapes = [shapes]
    op.outputs = [Tensor(op, i, _dtypes.as_dtype(out_dtypes[i]), as_shape(shapes[i])) for i in range(n)]


def apply_op(op_type: str, inputs: Sequence[Any], attrs: Optional[dict] = None, name: Optional[str] = None):
    """``create_op`` and return its output Tensor (or the list of outputs, or the Operation if none)."""
    op = create_op(op_type, inputs, attrs, name)
    if len(op.outputs) == 1:
        return op.outputs[0]
    return list(op.outputs) if op.outputs else op


def _as_ref(x: Any) -> Tensor:
    ref = getattr(x, "_ref", None)
    if ref is not None:
        return ref()
    if isinstance(x, Tensor) and x.op.type in ("VariableV2", "VarHandleOp"):
        return x
    raise TypeError("Expected a variable for a ref input, got %r" % (x,))


# ---------------------------------------------------------------------------------------------------------
# tensor conversion and constants


class IndexedSlices:
    """A sparse gradient: rows ``values`` at ``indices`` of a tensor shaped ``dense_shape`` (gather's grad)."""

    def __init__(self, values: Tensor, indices: Tensor, dense_shape: Optional[Tensor] = None):
        self.values = values
        self.indices = indices
        self.dense_shape = dense_shape

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def name(self) -> str:
        return self.values.name

    @property
    def op(self):
        return self.values.op

    @property
    def graph(self):
        return self.values.graph

    @property
    def device(self):
        return self.values.device

    def get_shape(self) -> TensorShape:
        if self.dense_shape is not None:
            value = constant_value(self.dense_shape)
            if value is not None:
                return TensorShape(value.tolist())
        return TensorShape(None)

    shape = property(get_shape)

    def __repr__(self) -> str:
        return "IndexedSlices(indices=%r, values=%r, dense_shape=%r)" % (self.indices, self.values,
                                                                         self.dense_shape)


# (accepts(value), convert(value, dtype, name)) pairs, tried in order by convert_to_tensor: how the op families
# turn their values into tensors (array_ops: IndexedSlices densified, a list holding tensors stacked)
_CONVERSIONS: list = []


def register_tensor_conversion(accepts: Callable[[Any], bool], convert: Callable[[Any, Any, Any], Tensor]) -> None:
    """TF's ``register_tensor_conversion_function``: ``convert_to_tensor(value, dtype, name)`` of a value that
    ``accepts(value)`` is ``convert(value, dtype, name)``."""
    _CONVERSIONS.append((accepts, convert))


def convert_to_tensor(value: Any, dtype: Any = None, name: Optional[str] = None,
                      preferred_dtype: Any = None) -> Tensor:
    """Tensor from a Tensor, Variable, IndexedSlices (densified), or a Python/numpy value (a Const node)."""
    if isinstance(value, Tensor):
        if dtype is not None and _dtypes.as_dtype(dtype) is not value.dtype:
            raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: %r"
                             % (_dtypes.as_dtype(dtype).name, value.dtype.name, value))
        return value
    to_tensor = getattr(value, "_to_tensor", None)
    if to_tensor is not None:
        return convert_to_tensor(to_tensor(), dtype=dtype, name=name)
    for accepts, convert in _CONVERSIONS:
        if accepts(value):
            return convert(value, dtype, name)
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, dtype=preferred_dtype, name=name, _strict=True)
        except (TypeError, ValueError):
            pass
    return constant(value, dtype=dtype, name=name)


def _numpy_value(value: Any, dtype: Optional[_dtypes.DType], strict: bool = False) -> np.ndarray:
    if dtype is not None:
        npd = dtype.as_numpy_dtype
        if dtype is _dtypes.string:
            return np.array(value, dtype=object)
        arr = np.asarray(value)
        if strict and arr.dtype.kind == "f" and dtype.is_integer and not np.all(arr == np.round(arr)):
            raise TypeError("cannot convert %r to %s" % (value, dtype.name))
        return np.array(value, dtype=npd)
    arr = np.asarray(value)
    if arr.dtype.kind in "SUO":
        return np.array(value, dtype=object)
    if arr.dtype == np.float64 and not isinstance(value, np.ndarray) and not isinstance(value, np.generic):
        return arr.astype(np.float32)          # Python floats become float32, like TF
    if arr.dtype == np.int64 and not isinstance(value, (np.ndarray, np.generic)):
        if arr.size == 0 or (arr.min() >= -2 ** 31 and arr.max() < 2 ** 31):
            return arr.astype(np.int32)        # Python ints become int32 when they fit
    return arr


# the attr of a Const made of one value repeated to a shape: its GraphDef's TensorProto holds that value once
SPLAT = "_splat"


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str = "Const", verify_shape: bool = False,
             _strict: bool = False) -> Tensor:
    """A ``Const`` node holding ``value`` (broadcast to ``shape`` if given)."""
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else None
    arr = _numpy_value(value, dtype, _strict)
    splat = False
    if shape is not None:
        shape = [int(d) for d in (shape if isinstance(shape, (list, tuple)) else as_shape(shape).as_list())]
        if (arr.size == 1 or arr.ndim == 0) and int(np.prod(shape)) != 1:
            arr = np.full(shape, arr.reshape(()), dtype=arr.dtype)
            splat = True
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise ValueError("Constant of %d elements cannot take shape %s" % (arr.size, shape))
    tf_dtype = _dtypes.numpy_dtype_to_tf(arr.dtype)
    arr.setflags(write=False)
    attrs = dict(value=arr, dtype=tf_dtype)
    if splat:
        attrs[SPLAT] = True
    return apply_op("Const", [], attrs, name=name)



def constant_value(tensor: Any) -> Optional[np.ndarray]:
    """The value of ``tensor`` when known when the graph is built (Const, Shape/Size of a static shape, Identity,
    Pack and Range of known values)."""
    if not isinstance(tensor, Tensor):
        try:
            return np.asarray(tensor)
        except Exception:  # noqa: BLE001
            return None
    op = tensor.op
    if op.type == "Const":
        return op.attrs["value"]
    if op.type == "Shape" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.as_list(), dtype=tensor.dtype.as_numpy_dtype)
    if op.type == "Size" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.num_elements(), dtype=tensor.dtype.as_numpy_dtype)
    if op.type == "Identity":
        return constant_value(op.inputs[0])
    if op.type == "Pack":
        values = [constant_value(t) for t in op.inputs]
        if all(v is not None for v in values):
            return np.stack(values, axis=op.attrs.get("axis", 0))
    if op.type == "Range":           # TF's constant_value too (a scalar's reduce_sum axes: Range(0, Rank))
        bounds = [constant_value(t) for t in op.inputs]
        if all(v is not None for v in bounds):
            return np.arange(*(v.item() for v in bounds), dtype=tensor.dtype.as_numpy_dtype)
    return None


def constant_shape(tensor: Tensor) -> TensorShape:
    """A shape given as a 1-D tensor (Reshape's, Fill's...), with unknown entries where it is dynamic."""
    value = constant_value(tensor)
    if value is not None:
        return TensorShape([int(d) for d in np.reshape(value, [-1])])
    if tensor.op.type == "Shape":
        return tensor.op.inputs[0].shape
    if tensor.op.type == "Pack":
        dims = []
        for t in tensor.op.inputs:
            v = constant_value(t)
            dims.append(int(v) if v is not None else None)
        return TensorShape(dims)
    n = tensor.shape.dims[0] if tensor.shape.dims else None
    return TensorShape(None if n is None else [None] * n)


register("Const", forward=lambda value, dtype: value, shape=lambda op: TensorShape(op.attrs["value"].shape),
         dtype=lambda op: op.attrs["dtype"])


# ---------------------------------------------------------------------------------------------------------
# shape inference helpers


def shape_same(op: Operation) -> TensorShape:
    """Output shaped like input 0 (elementwise unary ops)."""
    return op.inputs[0].shape


def shape_scalar(op: Operation) -> TensorShape:
    return TensorShape([])


def broadcast_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """Static numpy broadcasting of two shapes (unknown dims stay unknown unless the other is > 1)."""
    if a.dims is None or b.dims is None:
        return TensorShape(None)
    x, y = list(a.dims), list(b.dims)
    n = max(len(x), len(y))
    x = [1] * (n - len(x)) + x
    y = [1] * (n - len(y)) + y
    out = []
    for i, (p, q) in enumerate(zip(x, y)):
        if p == 1:
            out.append(q)
        elif q == 1:
            out.append(p)
        elif p is None:
            out.append(q)
        elif q is None or p == q:
            out.append(p)
        else:
            raise ValueError("Dimensions must be equal, but are %d and %d for %s with input shapes %s, %s"
                             % (p, q, "broadcast", a, b))
    return TensorShape(out)


def shape_broadcast(op: Operation) -> TensorShape:
    """Output shaped like all inputs broadcast together."""
    shape = op.inputs[0].shape
    for t in op.inputs[1:]:
        try:
            shape = broadcast_shapes(shape, t.shape)
        except ValueError as e:
            raise ValueError("%s for '%s' (op: '%s') with input shapes: %s"
                             % (str(e).split(" for ")[0], op.name, op.type,
                                ", ".join(str(i.shape) for i in op.inputs))) from None
    return shape
