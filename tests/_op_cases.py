"""One checker for op-family test modules: an op case is written once against the TF1 API and run by real
``tensorflow.compat.v1`` (the oracle) and by ``tfevents.core``.

A case::

    Case(lambda tf, x, y: tf.atan2(x, y), [rnd(3, 4), pos(3, 4)])

``build(tf, *placeholders)`` returns a Tensor (or a tuple/list of Tensors). Inputs are numpy arrays fed to float
placeholders; integer or constant arguments are built inside ``build`` (``tf.constant([1, 0])``). What
``check_case`` holds, for one case:

1. forward values equal TF1's in float64 (``rtol``) and in float32 (within the rounding bound of
   tests/_tolerance.py: ``n32`` roundings along the longest path, times ``scale32``), same dtype and shape, and
   the static shape of each output is compatible with the value's shape (and equal to TF's static shape);
2. the gradient of ``sum(out * w)`` (fixed weights ``w``) equals TF's ``tf.gradients`` (``grad_rtol``) and
   central differences in float64 (``eps``, ``num_rtol``), for each float output;
3. the GraphDef: the set of op types ``build`` adds (Const and Placeholder aside) equals TF's, and for every op
   type both have, the first such node carries the same attrs with the same values (``_``-prefixed ones and
   those in ``skip_attrs`` aside).

Switch a part off per case with a reason in a comment: ``tf_grads=False`` (TF has no gradient),
``numeric=False`` (finite differences cannot see it: kinks, integer outputs), ``same_ops=False``.

The float32 bound: ``n32`` defaults to ``ELEMENTWISE_ULPS``, one elementwise function (TF's approximation
against numpy's); a case with sums or chained functions states its count (a sum or dot of length ``k`` counts
``k``); ``n32=0`` asks for exact equality (copies, gathers, integer arithmetic). ``scale32`` defaults to each
output's ``max|TF's value|``; where a sum's terms cancel, ``scale32=SUM_OF_TERMS`` takes ``Σ|terms|`` instead,
as the case's own value on ``|inputs|`` (valid for sums of products of the inputs: reductions, matmul, conv), or
``scale32`` is a function of the inputs (float64) that returns it.
``computes_in_float32`` marks an op that computes in float32 whatever its inputs' dtype (the losses, LRN): its
float64 run's values and TF gradients are float32 results, held to the same float32 bound.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional, Sequence

import numpy as np

from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core

SUM_OF_TERMS = "sum of |terms|"     # scale32: the case evaluated on |inputs| (module docstring)


@dataclass
class Case:
    build: Callable
    inputs: Sequence[np.ndarray]
    shapes: Optional[Sequence[Any]] = None     # placeholder shapes (None dims allowed); default: inputs' shapes
    tf_grads: bool = True
    numeric: bool = True
    same_ops: bool = True
    float32: bool = True
    rtol: float = 1e-10
    atol: float = 1e-12
    n32: float = ELEMENTWISE_ULPS
    scale32: Any = None                    # None (max|want| per output), SUM_OF_TERMS, a number or f(*inputs)
    computes_in_float32: bool = False
    grad_rtol: float = 1e-9
    grad_atol: float = 1e-11
    eps: float = 1e-6
    num_rtol: float = 1e-5
    num_atol: float = 1e-6
    skip_attrs: Sequence[str] = field(default_factory=tuple)


def _weights(shape) -> np.ndarray:
    return np.random.RandomState(7).uniform(0.5, 1.5, size=shape)


def _outputs(out) -> list:
    return list(out) if isinstance(out, (list, tuple)) else [out]


class _Run:
    """One case built in one library (``tf`` is ``tfevents.core`` or ``tf.compat.v1``) in a fresh graph."""

    def __init__(self, tf, case: Case, dtype):
        self.tf = tf
        self.graph = tf.Graph()
        with self.graph.as_default():
            shapes = case.shapes or [np.shape(x) for x in case.inputs]
            self.phs = [tf.placeholder(dtype, shape=s, name="x%d" % i) for i, s in enumerate(shapes)]
            self.n_before = len(self.graph.get_operations())
            self.outs = _outputs(case.build(tf, *self.phs))
            self.built_ops = self.graph.get_operations()[self.n_before:]
            self.sess = tf.Session()
            self.feed = {p: np.asarray(x, dtype.as_numpy_dtype) for p, x in zip(self.phs, case.inputs)}
            self.values = self.sess.run(self.outs, self.feed)
            floats = [o for o, v in zip(self.outs, self.values) if o.dtype.is_floating and np.size(v)]
            self.objective = None
            if floats:
                terms = [tf.reduce_sum(o * tf.constant(_weights(np.shape(v)), dtype=o.dtype))
                         for o, v in zip(self.outs, self.values) if o.dtype.is_floating and np.size(v)]
                self.objective = tf.add_n(terms) if len(terms) > 1 else terms[0]
            self.ops = self.graph.as_graph_def().node

    def gradients(self) -> list:
        with self.graph.as_default():
            grads = self.tf.gradients(self.objective, self.phs)
            fetch = [self.tf.convert_to_tensor(g) if g is not None else self.tf.zeros_like(p)
                     for g, p in zip(grads, self.phs)]
            return self.sess.run(fetch, self.feed)

    def objective_at(self, i: int, x: np.ndarray) -> float:
        feed = dict(self.feed)
        feed[self.phs[i]] = x
        return float(self.sess.run(self.objective, feed))


# TF 2.x's compat.v1 writes the newer version of some TF 1.x ops; core writes the TF 1.x op (both import in TF)
SAME_OP = {"AddV2": "Add", "FusedBatchNormV3": "FusedBatchNorm", "FusedBatchNormGradV3": "FusedBatchNormGrad"}
# TF folds Shape/Size/Rank of a static shape into a Const while building; core keeps the op
_FOLDED = ("Const", "Placeholder", "Shape", "Size", "Rank")
# attrs TF 2.x added with defaults that TF 1.x graphs (and core's) leave out (core writes MatMul's grad_a/grad_b)
_NEW_DEFAULT_ATTRS = ("U", "exponential_avg_factor", "Tk", "index_type", "bad_indices_policy")


def _built_nodes(run: _Run) -> dict:
    names = {op.name for op in run.built_ops}
    nodes = {}
    for node in run.ops:
        op_type = SAME_OP.get(node.op, node.op)
        if node.name in names and op_type not in _FOLDED:
            nodes.setdefault(op_type, node)
    return nodes


def _attr_dict(node, skip) -> dict:
    from google.protobuf.json_format import MessageToDict
    return {k: MessageToDict(v) for k, v in node.attr.items()
            if not k.startswith("_") and k not in skip and k not in _NEW_DEFAULT_ATTRS}


def check_graph_def(ours: _Run, theirs: _Run, case: Case) -> None:
    a, b = _built_nodes(ours), _built_nodes(theirs)
    assert set(a) == set(b), "op types: ours %s, TF's %s" % (sorted(a), sorted(b))
    for op_type in a:
        got, want = _attr_dict(a[op_type], case.skip_attrs), _attr_dict(b[op_type], case.skip_attrs)
        assert got == want, "attrs of %s: ours %s, TF's %s" % (op_type, got, want)


def _float32_scales(case: Case, n_outputs: int) -> list:
    """The ``scale`` of each output for assert_float32_close (None: its max|want|)."""
    if callable(case.scale32):
        return [case.scale32(*case.inputs)] * n_outputs
    if case.scale32 is None or not isinstance(case.scale32, str):
        return [case.scale32] * n_outputs
    assert case.scale32 == SUM_OF_TERMS, case.scale32
    terms = _Run(core, replace(case, inputs=[np.abs(np.asarray(x, np.float64)) for x in case.inputs]), core.float64)
    return [float(np.abs(v).max()) if np.size(v) else 0.0 for v in terms.values]


def check_forward(tf1, case: Case, dtype_name: str = "float64") -> tuple:
    """Forward values, dtypes and static shapes against TF1; returns the two runs."""
    ours = _Run(core, case, getattr(core, dtype_name))
    theirs = _Run(tf1, case, getattr(tf1, dtype_name))
    float32 = dtype_name == "float32" or case.computes_in_float32
    scales = _float32_scales(case, len(ours.values)) if float32 else None
    assert len(ours.values) == len(theirs.values)
    for k, (o, t, got, want) in enumerate(zip(ours.outs, theirs.outs, ours.values, theirs.values)):
        got, want = np.asarray(got), np.asarray(want)
        assert got.shape == want.shape, "output %d: shape %s, TF %s" % (k, got.shape, want.shape)
        assert got.dtype == want.dtype, "output %d: dtype %s, TF %s" % (k, got.dtype, want.dtype)
        assert o.shape.is_compatible_with(list(got.shape)), "output %d: static %s, value %s" % (k, o.shape,
                                                                                              got.shape)
        want_static = t.shape.as_list() if t.shape.ndims is not None else None
        got_static = o.shape.as_list() if o.shape.ndims is not None else None
        assert got_static == want_static, "output %d: static shape %s, TF's %s" % (k, got_static, want_static)
        if got.dtype.kind in "fc" and float32:
            assert_float32_close(got, want, n=case.n32, scale=scales[k], err_msg="output %d" % k)
        elif got.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol, err_msg="output %d" % k)
        else:
            np.testing.assert_array_equal(got, want, err_msg="output %d" % k)
    return ours, theirs


def check_case(tf1, case: Case) -> None:
    """Every check the case has switched on (module docstring)."""
    ours, theirs = check_forward(tf1, case)
    if case.float32:
        check_forward(tf1, case, "float32")
    if case.same_ops:
        check_graph_def(ours, theirs, case)
    if ours.objective is None or not case.inputs:
        return
    grads = ours.gradients()
    if case.tf_grads:
        for i, (got, want) in enumerate(zip(grads, theirs.gradients())):
            if case.computes_in_float32:
                assert_float32_close(got, want, n=case.n32, err_msg="d/dx%d against TF" % i)
            else:
                np.testing.assert_allclose(got, want, rtol=case.grad_rtol, atol=case.grad_atol,
                                           err_msg="d/dx%d against TF" % i)
    if case.numeric:
        for i, x in enumerate(case.inputs):
            x = np.asarray(x, np.float64)
            numeric = np.zeros_like(x)
            for idx in np.ndindex(x.shape):
                xp, xm = x.copy(), x.copy()
                xp[idx] += case.eps
                xm[idx] -= case.eps
                numeric[idx] = (ours.objective_at(i, xp) - ours.objective_at(i, xm)) / (2 * case.eps)
            np.testing.assert_allclose(grads[i], numeric, rtol=case.num_rtol, atol=case.num_atol,
                                       err_msg="d/dx%d against central differences" % i)


def check_raises_like_tf(tf1, build: Callable, error: type = ValueError) -> None:
    """``build(tf)`` raises ``error`` while the graph is built, in TF1 and in core alike."""
    import pytest
    for tf in (tf1, core):
        with tf.Graph().as_default():
            with pytest.raises(error):
                build(tf)
