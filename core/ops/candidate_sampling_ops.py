"""Candidate samplers (TF's ``range_sampler.cc``) and ``compute_accidental_hits``: what sampled losses draw their
negative classes from.

Each sampler op (``UniformCandidateSampler``, ``LogUniformCandidateSampler``, ``FixedUnigramCandidateSampler``,
``LearnedUnigramCandidateSampler``) takes ``true_classes`` (int64 ``[batch, num_true]``) and returns
``(sampled_candidates [num_sampled] int64, true_expected_count [batch, num_true] float32,
sampled_expected_count [num_sampled] float32)``. With ``unique=True`` candidates are drawn until ``num_sampled``
distinct ones are found after ``num_tries`` draws and the expected count of a class of probability ``p`` is
``-expm1(num_tries * log1p(-p))`` (the probability it appears in the batch); otherwise it is
``p * num_sampled``. The arithmetic is TF's, in float32. Distributions::

    uniform:      P(k) = 1 / range_max
    log-uniform:  P(k) = log((k + 2) / (k + 1)) / log(range_max + 1)   (sample: floor(exp(u * log(range_max+1))) - 1)
    unigram:      P(k) = w_k ** distortion / sum(w ** distortion)

The random stream is numpy's (one Generator per op and Session, seeded like the other random ops), so the
draws are not TF's, only their distribution. Names in ``__all__`` are exported as ``tf.nn.<name>`` (and the
samplers in ``tf.random``).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor
from ..framework.tensor_shape import TensorShape
from ..framework.registry import apply_op, convert_to_tensor, register
from .random_ops import _rng, get_seed

__all__ = ["uniform_candidate_sampler", "log_uniform_candidate_sampler", "fixed_unigram_candidate_sampler",
           "learned_unigram_candidate_sampler", "compute_accidental_hits"]


# ---- distributions: probability of a class, and drawing n classes


def _uniform(attrs):
    n = int(attrs["range_max"])
    p = np.float32(1.0 / n)
    return (lambda values: np.full(np.shape(values), p, np.float32),
            lambda rng, size: rng.integers(0, n, size=size, dtype=np.int64))


def _log_uniform(attrs):
    n = int(attrs["range_max"])
    log_range = np.log1p(float(n))

    def prob(values):
        v = np.asarray(values, dtype=np.float64)
        return (np.log((v + 2.0) / (v + 1.0)) / log_range).astype(np.float32)

    def draw(rng, size):
        return (np.exp(rng.random(size) * log_range).astype(np.int64) - 1) % n
    return prob, draw


def _unigram_weights(attrs):
    """TF's FixedUnigramSampler weights: reserved ids get weight 0, then the unigrams (or the last column of
    each line of ``vocab_file``) to the power ``distortion``, keeping the ids of this ``shard``."""
    shards, shard = int(attrs["num_shards"]), int(attrs["shard"])
    weights = [np.float32(0.0) for i in range(int(attrs["num_reserved_ids"])) if i % shards == shard]
    raw = list(attrs["unigrams"])
    if attrs["vocab_file"]:
        with open(attrs["vocab_file"]) as f:
            raw = [float(line.rstrip("\n").split(",")[-1]) for line in f if line.strip()]
    word_id = len(weights)
    for w in raw:
        if word_id % shards == shard:
            weights.append(np.float32(np.float32(w) ** np.float32(attrs["distortion"])))
        word_id += 1
    weights = np.array(weights, np.float32)
    if weights.size != int(attrs["range_max"]):
        raise InvalidArgumentError(None, "range is %d must be equal to weights size  %d"
                                   % (attrs["range_max"], weights.size))
    return weights


def _unigram(weights, total):
    def prob(values):
        v = np.asarray(values, dtype=np.int64)
        inside = (v >= 0) & (v < weights.size)
        return np.where(inside, weights[np.clip(v, 0, weights.size - 1)] / np.float32(total),
                        np.float32(0)).astype(np.float32)

    cdf = np.cumsum(weights.astype(np.float64))
    cdf /= cdf[-1]

    def draw(rng, size):
        return np.minimum(np.searchsorted(cdf, rng.random(size), side="right"), weights.size - 1).astype(np.int64)
    return prob, draw


def _fixed_unigram(attrs):
    weights = _unigram_weights(attrs)
    return _unigram(weights, np.float32(np.sum(weights, dtype=np.float32)))


def _expected_count(p: np.ndarray, batch_size: int, num_tries: int) -> np.ndarray:
    """TF's ExpectedCountHelper, in float32."""
    p = np.asarray(p, np.float32)
    if num_tries == batch_size:
        return (p * np.float32(batch_size)).astype(np.float32)
    return (-np.expm1(np.float32(num_tries) * np.log1p(-p))).astype(np.float32)


def _sample(rng, draw, num_sampled: int, unique: bool, range_max: int):
    """``(candidates, num_tries)``: with ``unique``, distinct values in the order first drawn."""
    if not unique:
        return draw(rng, num_sampled), num_sampled
    if num_sampled > range_max:
        raise InvalidArgumentError(None, "num_sampled (%d) must not exceed range_max (%d) when unique=True"
                                   % (num_sampled, range_max))
    picked: list = []
    seen: set = set()
    tries = 0
    while len(picked) < num_sampled:
        for v in draw(rng, 2 * (num_sampled - len(picked)) + 8).tolist():
            tries += 1
            if v not in seen:
                seen.add(v)
                picked.append(v)
                if len(picked) == num_sampled:
                    break
    return np.array(picked, dtype=np.int64), tries


def _check_true_classes(true_classes, num_true, op_type):
    if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
        raise InvalidArgumentError(None, "%s: true_classes must be a batch_size * num_true matrix, got shape %s "
                                         "with num_true=%d" % (op_type, list(true_classes.shape), num_true))


def _sampler_bind(distribution, learned=False):
    def bind(op, session):
        rng = _rng(op, session)
        attrs = op.attrs
        range_max, num_sampled = int(attrs["range_max"]), int(attrs["num_sampled"])
        if learned:        # TF's UnigramSampler: every class starts with weight 1; true classes add 1 per step
            counts = session.op_state((op, "counts"), lambda: {"w": np.ones(range_max, np.int64)})

        def run(true_classes):
            true_classes = np.asarray(true_classes, dtype=np.int64)
            _check_true_classes(true_classes, int(attrs["num_true"]), op.type)
            if learned:
                w = counts["w"]
                prob, draw = _unigram(w.astype(np.float32), np.float32(w.sum()))
            else:
                prob, draw = distribution(attrs)
            sampled, tries = _sample(rng, draw, num_sampled, bool(attrs["unique"]), range_max)
            sampled_count = _expected_count(prob(sampled), num_sampled, tries)
            true_count = _expected_count(prob(true_classes), num_sampled, tries)
            if learned:
                np.add.at(counts["w"], true_classes.reshape(-1)[(true_classes.reshape(-1) >= 0)
                                                                & (true_classes.reshape(-1) < range_max)], 1)
            return sampled, true_count, sampled_count
        return run
    return bind


def _sampler_shapes(op):
    t = op.inputs[0].shape
    batch = t.dims[0] if t.dims is not None else None
    n = int(op.attrs["num_sampled"])
    return [TensorShape([n]), TensorShape([batch, int(op.attrs["num_true"])]), TensorShape([n])]


_SAMPLER = dict(grad=None, shape=_sampler_shapes, num_outputs=3, stateful=True,
                dtype=lambda op: [dtypes.int64, dtypes.float32, dtypes.float32])
register("UniformCandidateSampler", bind=_sampler_bind(_uniform), **_SAMPLER)
register("LogUniformCandidateSampler", bind=_sampler_bind(_log_uniform), **_SAMPLER)
register("FixedUnigramCandidateSampler", bind=_sampler_bind(_fixed_unigram), **_SAMPLER)
register("LearnedUnigramCandidateSampler", bind=_sampler_bind(None, learned=True), **_SAMPLER)


def _true_classes(true_classes: Any, num_true: int) -> Tensor:
    if isinstance(true_classes, Tensor):
        if true_classes.dtype is not dtypes.int64:
            raise TypeError("true_classes must be an int64 tensor, got %s (%r)"
                            % (true_classes.dtype.name, true_classes))
        t = true_classes
    else:
        t = convert_to_tensor(np.asarray(true_classes, dtype=np.int64), name="true_classes")
    shape = t.shape
    if shape.ndims is not None and (shape.ndims != 2 or (shape.dims[1] is not None and shape.dims[1] != num_true)):
        raise ValueError("true_classes must be a [batch_size, num_true=%d] matrix, got shape %s" % (num_true, shape))
    return t


def _check_counts(num_true, num_sampled, range_max, unique):
    for what, v in (("num_true", num_true), ("num_sampled", num_sampled), ("range_max", range_max)):
        if int(v) < 1:
            raise ValueError("%s must be at least 1, got %s" % (what, v))
    if unique and int(num_sampled) > int(range_max):
        raise ValueError("num_sampled (%d) must not exceed range_max (%d) when unique=True" % (num_sampled, range_max))


def _candidate_sampler(op_type: str, true_classes, num_true, num_sampled, unique, range_max, seed, name,
                       **extra):
    _check_counts(num_true, num_sampled, range_max, unique)
    true_classes = _true_classes(true_classes, int(num_true))
    seed1, seed2 = get_seed(seed)
    attrs = dict(num_true=int(num_true), num_sampled=int(num_sampled), unique=bool(unique),
                 range_max=int(range_max), seed=seed1, seed2=seed2, **extra)
    return tuple(apply_op(op_type, [true_classes], attrs, name=name if name is not None else op_type))


def uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool, range_max: int,
                              seed: Optional[int] = None, name: Optional[str] = None) -> tuple:
    """``num_sampled`` classes drawn uniformly from ``[0, range_max)``; op ``UniformCandidateSampler``."""
    return _candidate_sampler("UniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max,
                              seed, name)


def log_uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                                  range_max: int, seed: Optional[int] = None, name: Optional[str] = None) -> tuple:
    """``num_sampled`` classes from the log-uniform (Zipfian) distribution over ``[0, range_max)``; op
    ``LogUniformCandidateSampler``."""
    return _candidate_sampler("LogUniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max,
                              seed, name)


def learned_unigram_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                                      range_max: int, seed: Optional[int] = None,
                                      name: Optional[str] = None) -> tuple:
    """Classes drawn in proportion to 1 + how often each was a true class in earlier runs of this op (counts
    kept per Session); op ``LearnedUnigramCandidateSampler``."""
    return _candidate_sampler("LearnedUnigramCandidateSampler", true_classes, num_true, num_sampled, unique,
                              range_max, seed, name)


def fixed_unigram_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                                    range_max: int, vocab_file: str = "", distortion: float = 1.0,
                                    num_reserved_ids: int = 0, num_shards: int = 1, shard: int = 0,
                                    unigrams: Sequence[float] = (), seed: Optional[int] = None,
                                    name: Optional[str] = None) -> tuple:
    """Classes drawn in proportion to ``unigrams`` (or the last CSV column of ``vocab_file``) to the power
    ``distortion``; op ``FixedUnigramCandidateSampler``."""
    if bool(vocab_file) == bool(len(unigrams)):
        raise ValueError("Must provide exactly one of vocab_file and unigrams")
    if not 0 <= int(shard) < int(num_shards):
        raise ValueError("shard must be in [0, num_shards=%d), got %d" % (num_shards, shard))
    return _candidate_sampler("FixedUnigramCandidateSampler", true_classes, num_true, num_sampled, unique,
                              range_max, seed, name, vocab_file=str(vocab_file), distortion=float(distortion),
                              num_reserved_ids=int(num_reserved_ids), num_shards=int(num_shards), shard=int(shard),
                              unigrams=[float(u) for u in unigrams])


# ---- ComputeAccidentalHits


def _accidental_hits_forward(true_classes, sampled_candidates, num_true, seed=0, seed2=0):
    true_classes = np.asarray(true_classes, np.int64)
    _check_true_classes(true_classes, int(num_true), "ComputeAccidentalHits")
    sampled = np.asarray(sampled_candidates, np.int64)
    if sampled.ndim != 1:
        raise InvalidArgumentError(None, "sampled_candidates must be a vector, which is typically an output "
                                         "from CandidateSampler, got shape %s" % list(sampled.shape))
    position = {int(v): j for j, v in enumerate(sampled.tolist())}       # a repeated value keeps its last place
    indices, ids = [], []
    for i, row in enumerate(true_classes.tolist()):
        for v in row:
            j = position.get(v)
            if j is not None:
                indices.append(i)
                ids.append(j)
    weights = np.full(len(indices), -np.finfo(np.float32).max, np.float32)
    return np.array(indices, np.int32), np.array(ids, np.int64), weights


register("ComputeAccidentalHits", _accidental_hits_forward, None,
         lambda op: [TensorShape([None])] * 3, num_outputs=3,
         dtype=lambda op: [dtypes.int32, dtypes.int64, dtypes.float32])


def compute_accidental_hits(true_classes: Any, sampled_candidates: Any, num_true: int, seed: Optional[int] = None,
                            name: Optional[str] = None) -> tuple:
    """Where a sampled candidate equals one of a row's true classes: ``(indices (row), ids (position in
    sampled_candidates), weights (-FLT_MAX))``, rows in order, each row's true classes in order."""
    true_classes = _true_classes(true_classes, int(num_true))
    if isinstance(sampled_candidates, Tensor):
        if sampled_candidates.dtype is not dtypes.int64:
            raise TypeError("sampled_candidates must be int64, got %s" % sampled_candidates.dtype.name)
    else:
        sampled_candidates = convert_to_tensor(np.asarray(sampled_candidates, np.int64))
    seed1, seed2 = get_seed(seed)
    return tuple(apply_op("ComputeAccidentalHits", [true_classes, sampled_candidates],
                          dict(num_true=int(num_true), seed=seed1, seed2=seed2),
                          name=name if name is not None else "ComputeAccidentalHits"))
