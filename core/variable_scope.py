"""``variable_scope`` and ``get_variable``: variables named by variable scope (not name scope), shared by
``reuse=True`` / ``AUTO_REUSE`` / ``reuse_variables()``, as in TF 1.x."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional

from .framework import dtypes
from .framework.graph import GraphKeys, get_default_graph, name_scope
from .framework.tensor_shape import TensorShape
from .variables import Variable
from .initializers import GlorotUniform, Zeros


class _ReuseMode:
    def __repr__(self) -> str:
        return "AUTO_REUSE"


AUTO_REUSE = _ReuseMode()


class VariableScope:
    """A named scope of variables with its reuse flag and defaults (initializer, regularizer, dtype)."""

    def __init__(self, reuse: Any, name: str = "", initializer: Any = None, regularizer: Any = None,
                 dtype: Any = dtypes.float32, name_scope: str = "", constraint: Any = None):
        self._reuse = reuse
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._dtype = dtypes.as_dtype(dtype)
        self._name_scope = name_scope

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    dtype = property(lambda self: self._dtype)

    def reuse_variables(self) -> None:
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        self._initializer = initializer

    def set_regularizer(self, regularizer: Any) -> None:
        self._regularizer = regularizer

    def set_dtype(self, dtype: Any) -> None:
        self._dtype = dtypes.as_dtype(dtype)

    def get_variable(self, name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                     regularizer: Any = None, trainable: Optional[bool] = None, collections: Any = None,
                     validate_shape: bool = True, constraint: Any = None, **kwargs) -> Variable:
        full_name = self._name + "/" + name if self._name else name
        store = _store(get_default_graph())
        existing = store["vars"].get(full_name)
        reuse = self._reuse
        if existing is not None:
            if reuse is False or reuse is None:
                raise ValueError("Variable %s already exists, disallowed. Did you mean to set reuse=True or "
                                 "reuse=tf.AUTO_REUSE in VarScope?" % full_name)
            if shape is not None and not existing.shape.is_compatible_with(shape):
                raise ValueError("Trying to share variable %s, but specified shape %s and found shape %s."
                                 % (full_name, TensorShape(shape), existing.shape))
            if dtype is not None and dtypes.as_dtype(dtype) is not existing.dtype:
                raise ValueError("Trying to share variable %s, but specified dtype %s and found dtype %s."
                                 % (full_name, dtypes.as_dtype(dtype).name, existing.dtype.name))
            return existing
        if reuse is True:
            raise ValueError("Variable %s does not exist, or was not created with tf.get_variable(). Did you "
                             "mean to set reuse=tf.AUTO_REUSE in VarScope?" % full_name)
        dtype = dtypes.as_dtype(dtype) if dtype is not None else self._dtype
        initializer = initializer if initializer is not None else self._initializer
        if initializer is None:
            initializer = GlorotUniform() if dtype.is_floating else Zeros()
        if callable(initializer) and not hasattr(initializer, "op") and shape is None and \
                not isinstance(initializer, type):
            raise ValueError("Shape of a new variable (%s) must be fully defined, but instead was None." % name)
        if isinstance(initializer, type):
            initializer = initializer()
        if callable(initializer):
            shape_list = TensorShape(shape).as_list()
            init_value = lambda: initializer(shape_list, dtype=dtype)  # noqa: E731
        else:
            init_value = initializer
        trainable = True if trainable is None else trainable
        with name_scope(None):
            var = Variable(init_value, trainable=trainable, collections=collections, name=full_name,
                           dtype=dtype, validate_shape=validate_shape, constraint=constraint,
                           synchronization=kwargs.get("synchronization"), aggregation=kwargs.get("aggregation"))
            regularizer = regularizer if regularizer is not None else self._regularizer
            if regularizer is not None:
                with name_scope(full_name + "/Regularizer/"):
                    loss = regularizer(var)
                if loss is not None:
                    get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        store["vars"][full_name] = var
        return var


def _store(graph) -> dict:
    if graph._var_store is None:
        graph._var_store = {"vars": {}, "scope_counts": {}}
    return graph._var_store


def get_variable_scope() -> VariableScope:
    graph = get_default_graph()
    if graph._var_scope is None:
        graph._var_scope = VariableScope(False)
    return graph._var_scope


def get_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                 regularizer: Any = None, trainable: Optional[bool] = None, collections: Any = None,
                 validate_shape: bool = True, constraint: Any = None, **kwargs) -> Variable:
    """Get an existing variable of the current variable scope or create it (see ``variable_scope``)."""
    return get_variable_scope().get_variable(name, shape, dtype, initializer, regularizer, trainable,
                                             collections, validate_shape, constraint, **kwargs)


def get_local_variable(name: str, *args, **kwargs) -> Variable:
    kwargs["collections"] = [GraphKeys.LOCAL_VARIABLES]
    kwargs["trainable"] = False
    return get_variable(name, *args, **kwargs)


def _unique_scope_name(counts: dict, parent_name: str, prefix: str) -> str:
    """TF's _get_unique_variable_scope: ``prefix``, or ``prefix_1``, ``prefix_2``... the first whose scope is not
    open under ``parent_name``."""
    full = parent_name + "/" + prefix if parent_name else prefix
    if counts.get(full, 0) == 0:
        return prefix
    i = 1
    while counts.get("%s_%d" % (full, i), 0) > 0:
        i += 1
    return "%s_%d" % (prefix, i)


@contextlib.contextmanager
def variable_scope(name_or_scope: Any, default_name: Optional[str] = None, values: Any = None,
                   initializer: Any = None, regularizer: Any = None, reuse: Any = None, dtype: Any = None,
                   auxiliary_name_scope: bool = True, **kwargs) -> Iterator[VariableScope]:
    """Open a variable scope (and a matching name scope); ``reuse`` is inherited by nested scopes.

    As TF1: an unnamed scope (``default_name``) takes the first of ``name``, ``name_1``... not open in its parent;
    leaving a named scope forgets the unnamed scopes opened inside it (re-entering ``"shared"`` makes
    ``shared/lstm`` again); re-entering a VariableScope object opens a new name scope named after its last part.
    """
    graph = get_default_graph()
    parent = get_variable_scope()
    store = _store(graph)
    counts = store["scope_counts"]
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if name_or_scope is not None and not isinstance(name_or_scope, (VariableScope, str)):
        raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
    if not reuse:          # None or False: inherit (TF1: ``reuse = reuse or parent.reuse``)
        reuse = parent.reuse if parent.reuse is True or parent.reuse is AUTO_REUSE else None
    if isinstance(name_or_scope, VariableScope):
        full_name = name_or_scope.name
        ns_name = name_or_scope.name.split("/")[-1]
        if reuse is None:
            reuse = name_or_scope.reuse
        base = name_or_scope
    else:
        name = name_or_scope if name_or_scope is not None else _unique_scope_name(counts, parent.name,
                                                                                  default_name)
        full_name = parent.name + "/" + name if parent.name else name
        ns_name = name
        base = parent
    new_scope = VariableScope(reuse if reuse is not None else False, full_name,
                              initializer if initializer is not None else base.initializer,
                              regularizer if regularizer is not None else base.regularizer,
                              dtype if dtype is not None else base.dtype)
    counts[full_name] = counts.get(full_name, 0) + 1
    saved_counts = dict(counts) if isinstance(name_or_scope, VariableScope) else None
    if not auxiliary_name_scope:      # no name scope of its own: ops go to the current one
        cm = contextlib.nullcontext(getattr(name_or_scope, "original_name_scope", "") or "")
    else:                             # the relative name ("inner/dense"), made unique as TF does
        cm = name_scope(ns_name)
    with cm as scope_str:
        if isinstance(name_or_scope, VariableScope):
            new_scope._name_scope = name_or_scope.original_name_scope
        else:
            new_scope._name_scope = scope_str if isinstance(scope_str, str) else ""
        graph._var_scope = new_scope
        try:
            yield new_scope
        finally:
            graph._var_scope = parent
            if saved_counts is not None:
                counts.clear()
                counts.update(saved_counts)
            else:                     # close the sub-scopes: unnamed scopes inside may be made again
                prefix = full_name + "/"
                for k in counts:
                    if k.startswith(prefix):
                        counts[k] = 0


def variable_op_scope(values, name_or_scope, default_name=None, **kwargs):
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)
