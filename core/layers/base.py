"""``tf.layers.Layer``: the TF 1.x layer base class and its variable naming and reuse rules.

The rules (tf-keras's ``legacy_tf_layers/base.py``, what ``tf.compat.v1.layers`` does):

* a layer's variables live in a variable scope, its ops in that scope's original name scope (``net/conv2d/``;
  variable scopes ignore name scopes, so the kernel is ``conv2d/kernel``);
* a layer built by a functional call (``tf.layers.dense(x, 3, name="fc")``) opens ``variable_scope("fc")`` when
  it is made: the name is used as is, and a second ``fc`` raises unless ``reuse=True``/``AUTO_REUSE``;
* an unnamed layer, or a layer object (``Dense(3, name="fc")``), takes its scope lazily, on first use, with
  ``variable_scope(None, default_name=base_name)``: ``dense``, ``dense_1``, ... unique in the enclosing scope;
* a built layer reuses its variables on later calls (ops go to the same name scope: ``MatMul_1``);
* regularization losses go to ``REGULARIZATION_LOSSES``, update ops (batch norm) to ``UPDATE_OPS``.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

from ..framework import dtypes
from ..framework.graph import GraphKeys, get_default_graph, name_scope
from ..ops import array_ops, math_ops
from ..framework.registry import convert_to_tensor
from ..variable_scope import VariableScope, get_variable, variable_scope
from ..variables import global_variables

__all__ = ["Layer"]


def _to_snake_case(name: str) -> str:
    """``Conv2DTranspose`` -> ``conv2d_transpose`` (Keras's rule)."""
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    s = re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()
    return s if s[0] != "_" else "private" + s


def _unique_layer_name(base: str) -> str:
    """``base_1``, ``base_2``, ... per graph, as Keras's one-based ``unique_object_name`` (``layer.name`` only:
    the variable scope, ``base``, ``base_1``, ..., is uniquified apart)."""
    counts = get_default_graph().__dict__.setdefault("_layer_name_uids", {})
    counts[base] = counts.get(base, 0) + 1
    return "%s_%d" % (base, counts[base])


class Layer:
    """Base layer: ``layer(inputs)`` builds the variables on the first call (``build``) then runs ``call``.

    Subclasses implement ``build(input_shape)`` (creating variables with ``add_weight``) and ``call(inputs)``.
    """

    def __init__(self, trainable: bool = True, name: Optional[str] = None, dtype: Any = None, **kwargs):
        scope = kwargs.pop("_scope", None)
        self._reuse = kwargs.pop("_reuse", None)
        kwargs.pop("autocast", None)
        if kwargs:
            raise TypeError("Keyword argument not understood:", sorted(kwargs)[0])
        self.trainable = trainable
        self.built = False
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._trainable_weights: list = []
        self._non_trainable_weights: list = []
        self._updates: list = []
        self._losses: list = []
        if isinstance(name, VariableScope):
            self._base_name = name.name
            self._name = _unique_layer_name(_to_snake_case(type(self).__name__))
        elif name:
            self._base_name = self._name = name
        else:
            self._base_name = _to_snake_case(type(self).__name__)
            self._name = _unique_layer_name(self._base_name)
        self._scope: Optional[VariableScope] = None
        if scope:
            with variable_scope(scope) as captured:
                self._scope = captured
        self._current_scope: Optional[VariableScope] = None

    # ---- properties
    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype.name if self._dtype is not None else None)
    updates = property(lambda self: list(self._updates))
    losses = property(lambda self: list(self._losses))

    @property
    def scope_name(self) -> str:
        """The variable scope's name (``outer/conv2d``), known once the layer has been used."""
        if not self._scope:
            raise ValueError('No name available for layer scope because the layer "%s" has not been used yet. '
                             "The scope name is determined the first time the layer instance is called. You must "
                             "therefore call the layer before querying `scope_name`." % self._name)
        return self._scope.name

    @property
    def trainable_weights(self) -> list:
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list:
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def weights(self) -> list:
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    # ---- scopes and weights
    def _set_scope(self, scope: Any = None) -> None:
        if self._scope is None:
            if self._reuse:
                with variable_scope(scope if scope is not None else self._base_name) as captured:
                    self._scope = captured
            else:
                with variable_scope(scope, default_name=self._base_name) as captured:
                    self._scope = captured

    def add_weight(self, name: str, shape: Any, dtype: Any = None, initializer: Any = None,
                   regularizer: Optional[Callable] = None, trainable: Optional[bool] = None,
                   constraint: Optional[Callable] = None, **kwargs):
        """``get_variable(name, ...)`` in the layer's variable scope; a new variable's regularizer loss goes to
        ``REGULARIZATION_LOSSES`` (op names ``<layer scope>/<name>/Regularizer/...``)."""
        unknown = set(kwargs) - {"use_resource", "partitioner", "synchronization", "aggregation",
                                 "experimental_autocast", "getter"}
        if unknown:
            raise TypeError("Unknown keyword argument:", sorted(unknown)[0])
        trainable = True if trainable is None else trainable
        dtype = dtypes.as_dtype(dtype or self._dtype or dtypes.float32)
        self._set_scope(None)
        reuse = self.built or self._reuse
        existing = set(id(v) for v in global_variables())
        with variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with name_scope(scope.original_name_scope):
                variable = get_variable(name, shape, dtype=dtype,
                                        initializer=initializer if initializer is not None else scope.initializer,
                                        trainable=trainable and self.trainable, constraint=constraint)
                if regularizer is not None and id(variable) not in existing:
                    with name_scope(name + "/Regularizer"):
                        loss = regularizer(variable)
                    if loss is not None:
                        self._losses.append(loss)
                        get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        (self._trainable_weights if trainable else self._non_trainable_weights).append(variable)
        return variable

    def add_update(self, updates: Any) -> None:
        """Record update ops (tensors are recorded by their op, as in TF) for ``updates``/``UPDATE_OPS``."""
        for update in updates if isinstance(updates, (list, tuple)) else [updates]:
            self._updates.append(getattr(update, "op", update))

    # ---- calling
    def build(self, input_shape) -> None:
        """Create the variables for inputs of ``input_shape`` (a ``TensorShape``); called once, on first use."""
        self.built = True

    def call(self, inputs, **kwargs):
        """The layer's computation (the identity here), run inside the layer's scopes."""
        return inputs

    def __call__(self, inputs: Any, *args, **kwargs):
        """Build on first use, then ``call`` inside the layer's scopes (reusing the variables once built)."""
        self._set_scope(kwargs.pop("scope", None))
        reuse = True if self.built else self._reuse
        with variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with name_scope(scope.original_name_scope):
                inputs = convert_to_tensor(inputs)
                if self._dtype is None:
                    self._dtype = inputs.dtype.base_dtype
                if not self.built:
                    self._check_input(inputs)
                    self.build(inputs.shape)
                    self.built = True
                outputs = self.call(inputs, *args, **kwargs)
                self._activity_regularization(outputs)
        collection = get_default_graph().get_collection_ref(GraphKeys.UPDATE_OPS)
        for update in self._updates:
            if update not in collection:
                collection.append(update)
        return outputs

    def _activity_regularization(self, outputs) -> None:
        """Keras's activity regularizer: ``regularizer(outputs) / batch_size`` into ``REGULARIZATION_LOSSES``."""
        regularizer = getattr(self, "activity_regularizer", None)
        if regularizer is None:
            return
        with name_scope("ActivityRegularizer"):
            loss = regularizer(outputs)
            batch = math_ops.cast(array_ops.shape(outputs)[0], loss.dtype)
            loss = math_ops.truediv(loss, batch)
        self._losses.append(loss)
        get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def apply(self, inputs: Any, *args, **kwargs):
        """Same as ``layer(inputs, ...)`` (TF 1.x alias)."""
        return self(inputs, *args, **kwargs)

    def _check_input(self, inputs) -> None:
        """Input rank checks (Keras's ``input_spec``), overridden by the layers that have one."""

    def get_config(self) -> dict:
        return {"name": self._name, "trainable": self.trainable, "dtype": self.dtype}
