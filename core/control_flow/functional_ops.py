"""``tf.map_fn``, ``tf.scan``, ``tf.foldl``, ``tf.foldr`` as TF1 builds them in graph mode: the elements are
unstacked into TensorArrays, a ``while_loop`` (``maximum_iterations=n``) reads element i in iteration i, and the
per-step results are written into TensorArrays that are stacked after the loop (TF's ``map_fn.py`` and
``functional_ops.py``). Gradients come from the loop's and the TensorArrays' gradients.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ..framework import dtypes
from ..framework.graph import name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import constant, convert_to_tensor
from . import nest
from .tensor_array import TensorArray
from .while_loop import while_loop
from ..ops import array_ops


def _check_callable(fn: Any) -> None:
    if not callable(fn):
        raise TypeError("%s is not callable. Please provide a callable function." % getattr(fn, "__name__", fn))


def _leading_dim(t) -> Optional[int]:
    if t.shape.dims is None:
        return None
    if not t.shape.dims:
        raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars (got %s)" % t.name)
    return t.shape.dims[0]


def _length(first):
    """(static n or None, n as an int or a tensor) from the leading dimension of ``first``."""
    n_static = _leading_dim(first)
    return n_static, (n_static if n_static is not None else array_ops.shape(first)[0])


def _num_elems(elems_flat: list):
    """``_length`` of the first element, after checking that all elements agree on it (map_fn)."""
    n_static = _leading_dim(elems_flat[0])
    for t in elems_flat[1:]:
        other = _leading_dim(t)
        if n_static is not None and other is not None and other != n_static:
            raise ValueError("Dimensions %d and %d are not compatible: all elems must have the same leading "
                             "dimension" % (n_static, other))
    return _length(elems_flat[0])


def _set_leading_dim(t, n_static: Optional[int]) -> None:
    rest = list(t.shape.dims[1:]) if t.shape.dims is not None and len(t.shape.dims) else None
    t.set_shape(TensorShape([n_static] + rest) if rest is not None else TensorShape(None))


def map_fn(fn: Callable, elems: Any, dtype: Any = None, parallel_iterations: Optional[int] = None,
           back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True, name: Optional[str] = None,
           fn_output_signature: Any = None):
    """``fn`` applied to each ``elems[i]`` (unstacked on dimension 0; ``elems`` may be a nested structure), the
    results stacked. ``dtype`` (or ``fn_output_signature``): the structure and dtypes of ``fn``'s result when they
    differ from ``elems``'."""
    if fn_output_signature is None:
        fn_output_signature = dtype
    _check_callable(fn)
    parallel_iterations = parallel_iterations or 10
    elems_flat = nest.flatten(elems)
    if not elems_flat:
        raise ValueError("elems must be a Tensor or (possibly nested) sequence of Tensors. Got %r, which does not "
                         "contain any Tensors." % (elems,))
    with name_scope(name, "map"):
        elems_flat = [convert_to_tensor(t, name="elem") for t in elems_flat]
        if fn_output_signature is None:
            result_dtypes = [t.dtype for t in elems_flat]
            result_structure = elems
        else:
            result_dtypes = [dtypes.as_dtype(d) for d in nest.flatten(fn_output_signature)]
            result_structure = fn_output_signature
        n_static, n = _num_elems(elems_flat)
        elems_ta = [TensorArray(dtype=t.dtype, size=n, dynamic_size=False, infer_shape=True) for t in elems_flat]
        elems_ta = [ta.unstack(t) for ta, t in zip(elems_ta, elems_flat)]
        i = constant(0)
        result_ta = [TensorArray(dtype=d, size=n, dynamic_size=False, infer_shape=infer_shape)
                     for d in result_dtypes]

        def compute(i, tas):
            elems_value = nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])
            result_value = fn(elems_value)
            try:
                nest.assert_same_structure(result_structure, result_value)
            except (ValueError, TypeError) as e:
                raise ValueError("The structure of fn's result does not match dtype (fn_output_signature): %s"
                                 % e) from None
            flat = []
            for value, d in zip(nest.flatten(result_value), result_dtypes):
                value = convert_to_tensor(value, preferred_dtype=d)
                if value.dtype.base_dtype != d:
                    raise ValueError("Error in map_fn: expected `fn` to return a %s tensor, but it returned %s. To "
                                     "fix, update the `fn_output_signature` (or `dtype`) argument to `map_fn`."
                                     % (d.name, value))
                flat.append(value)
            return (i + 1, [ta.write(i, value) for ta, value in zip(tas, flat)])

        _, r_a = while_loop(lambda i, _: i < n, compute, (i, result_ta), parallel_iterations=parallel_iterations,
                            back_prop=back_prop, swap_memory=swap_memory, maximum_iterations=n)
        results = [r.stack() for r in r_a]
        for r in results:
            _set_leading_dim(r, n_static)
        return nest.pack_sequence_as(result_structure, results)


def _fold(kind: str, fn: Callable, elems: Any, initializer: Any, parallel_iterations: int, back_prop: bool,
          swap_memory: bool, name: Optional[str]):
    _check_callable(fn)
    with name_scope(name, kind):
        elems_flat = [convert_to_tensor(e, name="elem") for e in nest.flatten(elems)]
        if not elems_flat:
            raise ValueError("elems must contain at least one Tensor")
        _, n = _length(elems_flat[0])
        elems_ta = nest.pack_sequence_as(elems, [
            TensorArray(dtype=e.dtype, size=n, dynamic_size=False, infer_shape=True).unstack(e)
            for e in elems_flat])
        if kind == "foldl":
            if initializer is None:
                a = nest.map_structure(lambda ta: ta.read(0), elems_ta)
                i = constant(1)
            else:
                a, i = initializer, constant(0)

            def compute(i, a):
                elem_i = nest.map_structure(lambda ta: ta.read(i), elems_ta)
                return [i + 1, fn(a, elem_i)]
            condition = lambda i, a: i < n  # noqa: E731
        else:
            if initializer is None:
                i = n - 1
                a = nest.map_structure(lambda ta: ta.read(i), elems_ta)
            else:
                i, a = n, initializer

            def compute(i, a):
                i -= 1
                elem = nest.map_structure(lambda ta: ta.read(i), elems_ta)
                return [i, fn(a, elem)]
            condition = lambda i, a: i > 0  # noqa: E731
        _, r_a = while_loop(condition, compute, [i, a], parallel_iterations=parallel_iterations, back_prop=back_prop,
                            swap_memory=swap_memory, maximum_iterations=n)
        return r_a


def foldl(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
          swap_memory: bool = False, name: Optional[str] = None):
    """``a = fn(a, elems[i])`` for i = 0, 1, ... starting from ``initializer`` (default: ``elems[0]``, then from
    i = 1); returns the final ``a``."""
    return _fold("foldl", fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name)


def foldr(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
          swap_memory: bool = False, name: Optional[str] = None):
    """``foldl`` from the last element to the first."""
    return _fold("foldr", fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name)


def scan(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
         swap_memory: bool = False, infer_shape: bool = True, reverse: bool = False, name: Optional[str] = None):
    """Every intermediate ``a = fn(a, elems[i])`` of a fold, stacked (from the last element first when
    ``reverse``). Without ``initializer``, ``elems[0]`` (``elems[n-1]`` reversed) is the first result."""
    _check_callable(fn)
    input_is_sequence = nest.is_nested(elems)
    input_flatten = (lambda x: nest.flatten(x)) if input_is_sequence else (lambda x: [x])
    input_pack = (lambda x: nest.pack_sequence_as(elems, x)) if input_is_sequence else (lambda x: x[0])
    if initializer is None:
        output_is_sequence, output_flatten, output_pack = input_is_sequence, input_flatten, input_pack
    else:
        output_is_sequence = nest.is_nested(initializer)
        output_flatten = (lambda x: nest.flatten(x)) if output_is_sequence else (lambda x: [x])
        output_pack = (lambda x: nest.pack_sequence_as(initializer, x)) if output_is_sequence else (lambda x: x[0])
    elems_flat = input_flatten(elems)
    with name_scope(name, "scan"):
        elems_flat = [convert_to_tensor(e, name="elem") for e in elems_flat]
        if not elems_flat:
            raise ValueError("elems must contain at least one Tensor")
        n_static, n = _length(elems_flat[0])
        elems_ta = [TensorArray(dtype=e.dtype, size=n, dynamic_size=False,
                                element_shape=e.shape[1:] if e.shape.dims is not None else None, infer_shape=True)
                    for e in elems_flat]
        elems_ta = [ta.unstack(e) for ta, e in zip(elems_ta, elems_flat)]
        if initializer is None:
            a_flat = [ta.read(n - 1 if reverse else 0) for ta in elems_ta]
            i = 1
        else:
            a_flat = [convert_to_tensor(init) for init in output_flatten(initializer)]
            i = 0
        accs_ta = [TensorArray(dtype=a.dtype, size=n, element_shape=a.shape if infer_shape else None,
                               dynamic_size=False, infer_shape=infer_shape) for a in a_flat]
        if initializer is None:
            accs_ta = [ta.write(n - 1 if reverse else 0, a) for ta, a in zip(accs_ta, a_flat)]

        def compute(i, a_flat, tas):
            packed_elems = input_pack([ta.read(i) for ta in elems_ta])
            a_out = fn(output_pack(a_flat), packed_elems)
            try:
                nest.assert_same_structure(elems if initializer is None else initializer, a_out)
            except (ValueError, TypeError) as e:
                raise ValueError("The structure of fn's result does not match %s: %s"
                                 % ("elems" if initializer is None else "initializer", e)) from None
            flat_a_out = output_flatten(a_out)
            tas = [ta.write(i, value) for ta, value in zip(tas, flat_a_out)]
            return (i - 1 if reverse else i + 1, flat_a_out, tas)

        if reverse:
            initial_i = n - 1 - i
            condition = lambda i, _1, _2: i >= 0  # noqa: E731
        else:
            initial_i = i
            condition = lambda i, _1, _2: i < n  # noqa: E731
        _, _, r_a = while_loop(condition, compute, (initial_i, a_flat, accs_ta),
                               parallel_iterations=parallel_iterations, back_prop=back_prop,
                               swap_memory=swap_memory, maximum_iterations=n)
        results_flat = [r.stack() for r in r_a]
        for r in results_flat:
            _set_leading_dim(r, n_static)
        return output_pack(results_flat)
