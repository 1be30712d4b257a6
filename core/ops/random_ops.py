"""Random ops. Each op keeps one numpy Generator per Session, seeded from (graph seed, op seed) like TF's
``get_seed`` (TF 2.x's rule, as ``tf.compat.v1`` builds graphs): with a graph seed and no op seed, the op seed is
a per-graph counter, 0 for the first such op, 1 for the next..."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes
from ..framework.graph import get_default_graph, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, constant_shape, constant_value, convert_to_tensor, register, shape_same
from . import math_ops

_DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1


def get_seed(op_seed: Optional[int]):
    """(seed, seed2) for a new random op, TF 2.x's ``random_seed.get_seed``: under a graph seed an op without a
    seed takes the graph's next op seed (0, 1, 2, ...; TF 1.x used the graph's last op id); both seeds are taken
    modulo 2**31 - 1; (0, 0), which the kernels read as "nondeterministic", becomes (0, 2**31 - 1)."""
    graph = get_default_graph()
    graph_seed = graph.seed
    if graph_seed is not None:
        if op_seed is None:
            op_seed = graph._op_seed_count
            graph._op_seed_count += 1
        seeds = int(graph_seed) % _MAXINT32, int(op_seed) % _MAXINT32
    elif op_seed is not None:
        seeds = _DEFAULT_GRAPH_SEED, int(op_seed) % _MAXINT32
    else:
        return 0, 0
    return (0, _MAXINT32) if seeds == (0, 0) else seeds


def _rng(op, session):
    seed, seed2 = op.attrs["seed"], op.attrs["seed2"]
    factory = (lambda: np.random.default_rng()) if seed == 0 and seed2 == 0 else \
        (lambda: np.random.default_rng([seed, seed2]))
    return session.op_state(op, factory)


def _truncated(rng, shape, dtype):
    out = rng.standard_normal(shape, dtype=np.float64)
    bad = np.abs(out) > 2.0
    while bad.any():
        out[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(out) > 2.0
    return out.astype(dtype)


def _bind(sample):
    def bind(op, session):
        rng = _rng(op, session)
        npd = op.attrs["dtype"].as_numpy_dtype
        return lambda shape: sample(rng, tuple(int(d) for d in shape), npd)
    return bind


def _float_sample(method):
    def sample(rng, shape, npd):
        if npd in (np.float32, np.float64):
            return getattr(rng, method)(shape, dtype=npd)
        return getattr(rng, method)(shape).astype(npd)
    return sample


_RANDOM = dict(shape=lambda op: constant_shape(op.inputs[0]), dtype=lambda op: op.attrs["dtype"], stateful=True)
register("RandomUniform", bind=_bind(_float_sample("random")), **_RANDOM)
register("RandomStandardNormal", bind=_bind(_float_sample("standard_normal")), **_RANDOM)
register("TruncatedNormal", bind=_bind(_truncated), **_RANDOM)


def _uniform_int_bind(op, session):
    rng = _rng(op, session)
    npd = op.outputs[0].dtype.as_numpy_dtype
    return lambda shape, lo, hi: rng.integers(int(lo), int(hi), tuple(int(d) for d in shape)).astype(npd)


register("RandomUniformInt", bind=_uniform_int_bind, shape=lambda op: constant_shape(op.inputs[0]),
         dtype=lambda op: op.inputs[1].dtype, stateful=True)


def _shape_tensor(shape):
    if hasattr(shape, "op"):
        return shape
    return convert_to_tensor(np.asarray(list(shape), dtype=np.int32), name="shape")


def _random(op_type, shape, dtype, seed):
    seed1, seed2 = get_seed(seed)
    return apply_op(op_type, [_shape_tensor(shape)], dict(dtype=dtypes.as_dtype(dtype), seed=seed1, seed2=seed2))


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform on [minval, maxval) (integers need maxval)."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "random_uniform") as scope:
        if dtype.is_integer:
            seed1, seed2 = get_seed(seed)
            return apply_op("RandomUniformInt", [_shape_tensor(shape), convert_to_tensor(minval, dtype=dtype),
                                                 convert_to_tensor(maxval, dtype=dtype)],
                            dict(seed=seed1, seed2=seed2, Tout=dtype, T=dtypes.int32), name=scope)
        maxval = 1 if maxval is None else maxval
        minval_t = convert_to_tensor(minval, dtype=dtype, name="min")
        maxval_t = convert_to_tensor(maxval, dtype=dtype, name="max")
        rnd = _random("RandomUniform", shape, dtype, seed)
        return math_ops.add(rnd * (maxval_t - minval_t), minval_t, name=scope)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    with name_scope(name, "random_normal") as scope:
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        std_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        return math_ops.add(_random("RandomStandardNormal", shape, dtype, seed) * std_t, mean_t, name=scope)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal(mean, stddev) redrawn beyond two standard deviations."""
    with name_scope(name, "truncated_normal") as scope:
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        std_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        return math_ops.add(_random("TruncatedNormal", shape, dtype, seed) * std_t, mean_t, name=scope)


# ---- RandomShuffle (a permutation of axis 0) and Multinomial (class samples from unnormalized log-probs)


def _shuffle_bind(op, session):
    rng = _rng(op, session)
    return lambda x: x[rng.permutation(len(x))] if np.ndim(x) else x


register("RandomShuffle", bind=_shuffle_bind, shape=shape_same, stateful=True)


def random_shuffle(value, seed=None, name=None):
    """``value`` with its first dimension randomly permuted (op ``RandomShuffle``, seeded like TF's ops)."""
    seed1, seed2 = get_seed(seed)
    return apply_op("RandomShuffle", [value], dict(seed=seed1, seed2=seed2), name=name)


def _multinomial_bind(op, session):
    rng = _rng(op, session)
    npd = op.attrs["output_dtype"].as_numpy_dtype

    def forward(logits, num_samples):
        """Inverse-CDF sampling of all rows at once: row i's CDF is shifted to [i, i + 1] and searched once."""
        batch, classes = logits.shape
        n = int(num_samples)
        if classes == 0 or batch == 0 or n == 0:
            if classes == 0 and batch and n:
                raise ValueError("num_classes should be positive, got 0")
            return np.zeros((batch, n), dtype=npd)
        logits = logits.astype(np.float64)
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        cdf = np.cumsum(probs, axis=1)
        cdf /= cdf[:, -1:]
        rows = np.arange(batch, dtype=np.float64)[:, None]
        u = rng.random((batch, n)) + rows
        found = np.searchsorted((cdf + rows).ravel(), u.ravel(), side="right").reshape(batch, n)
        return np.minimum(found - classes * np.arange(batch)[:, None], classes - 1).astype(npd)
    return forward


register("Multinomial", bind=_multinomial_bind, dtype=lambda op: op.attrs["output_dtype"], stateful=True,
         shape=lambda op: TensorShape(
             [op.inputs[0].shape.dims[0] if op.inputs[0].shape.dims is not None else None,
              None if constant_value(op.inputs[1]) is None else int(constant_value(op.inputs[1]))]))


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """``num_samples`` class indices per row of ``logits`` ([batch, classes], unnormalized log-probabilities),
    op ``Multinomial``; ``output_dtype`` int64 by default (TF's ``tf.random.categorical``)."""
    with name_scope(name, "multinomial"):
        logits = convert_to_tensor(logits, name="logits")
        if logits.shape.ndims is not None and logits.shape.ndims != 2:
            raise ValueError("Shape must be rank 2 but is rank %d for 'Multinomial' with input shapes: %s"
                             % (logits.shape.ndims, logits.shape))
        seed1, seed2 = get_seed(seed)
        out_dtype = dtypes.as_dtype(output_dtype or dtypes.int64)
        with name_scope(None, "Multinomial") as scope:
            num_samples = convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
            return apply_op("Multinomial", [logits, num_samples],
                            dict(seed=seed1, seed2=seed2, output_dtype=out_dtype), name=scope)
