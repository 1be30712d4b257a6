"""tf.nn.embedding_lookup / embedding_lookup_sparse and the sparse segment reductions of tfevents.core against
real tf.compat.v1: the same graph built by both (reference variables, as TF1), values, gradients (which must be
IndexedSlices) and the lookup's GraphDef node names and op types."""
import numpy as np
import pytest

from _oracle import tf1_and_core
from _tolerance import assert_float32_close
from tfevents import core

RNG = np.random.RandomState(3)
TABLE = RNG.randn(10, 4).astype(np.float32)
SHARDS = {"mod": [TABLE[0::3], TABLE[1::3], TABLE[2::3]],              # rows 4, 3, 3
          "div": [TABLE[0:4], TABLE[4:7], TABLE[7:10]]}
IDS = np.array([[9, 0, 4], [4, 7, 3]], dtype=np.int64)
COTANGENT = RNG.randn(2, 3, 4).astype(np.float32)


def _variables(tf, shards):
    return [tf.Variable(s, name="emb_%d" % i, use_resource=False) for i, s in enumerate(shards)]


def _lookup(tf, shards, strategy, max_norm, ids=IDS):
    params = _variables(tf, shards)
    out = tf.nn.embedding_lookup(params if len(params) > 1 else params[0], tf.constant(ids),
                                 partition_strategy=strategy, max_norm=max_norm)
    loss = tf.reduce_sum(out * COTANGENT)
    grads = tf.gradients(loss, params)
    assert all(isinstance(g, tf.IndexedSlices) for g in grads), grads
    nodes = sorted((op.name, op.type) for op in tf.get_default_graph().get_operations()
                   if op.name.startswith("embedding_lookup"))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run([out] + [tf.convert_to_tensor(g) for g in grads])
    return values, nodes, out.shape.as_list()


@pytest.mark.parametrize("max_norm", [None, 1.2])
@pytest.mark.parametrize("case", ["one", "mod", "div"])
def test_embedding_lookup_matches_tf1(tf1, case, max_norm):
    shards = [TABLE] if case == "one" else SHARDS[case]
    strategy = "mod" if case == "one" else case
    (want, want_nodes, want_shape), (got, got_nodes, got_shape) = tf1_and_core(tf1, _lookup, shards, strategy,
                                                                               max_norm)
    assert got_shape == want_shape == [2, 3, 4]
    for w, g in zip(want, got):
        if max_norm is None:        # gathered rows; the gradient adds at most two cotangent rows: exactly TF's
            np.testing.assert_array_equal(g, w)
        else:                       # clip_by_norm: a row's 4 squares, sqrt, product and quotient; back again
            assert_float32_close(g, w, n=2 * (4 + 3) + 2)
    if max_norm is None:
        np.testing.assert_array_equal(got[0], TABLE[IDS])
    if max_norm is not None:
        assert np.linalg.norm(got[0], axis=-1).max() <= max_norm + 1e-5
        assert not np.allclose(got[0], TABLE[IDS])
    if max_norm is None:
        assert got_nodes == want_nodes                       # names and op types of the lookup's graph
        assert ("embedding_lookup", "GatherV2" if case == "one" else "ParallelDynamicStitch") in got_nodes


def test_sharded_lookup_every_strategy_row_order():
    """Each id's row comes from the shard and offset TF's strategies give (div: first shards one row longer)."""
    for strategy, shards in SHARDS.items():
        with core.Graph().as_default():
            out = core.nn.embedding_lookup([core.constant(s) for s in shards], np.arange(10),
                                           partition_strategy=strategy)
            with core.Session() as sess:
                np.testing.assert_array_equal(sess.run(out), TABLE)


SP_INDICES = [[0, 0], [0, 1], [0, 2], [2, 0], [3, 0], [3, 1]]
SP_IDS = [3, 7, 3, 0, 9, 8]
SP_WEIGHTS = [0.5, 2.0, 1.5, -1.0, 3.0, 0.25]


def _sparse(tf, shards, combiner, weighted, strategy="mod"):
    params = _variables(tf, shards)
    sp_ids = tf.SparseTensor(SP_INDICES, tf.constant(SP_IDS, dtype=tf.int64), [4, 3])
    sp_w = tf.SparseTensor(SP_INDICES, tf.constant(SP_WEIGHTS), [4, 3]) if weighted else None
    out = tf.nn.embedding_lookup_sparse(params if len(params) > 1 else params[0], sp_ids, sp_w,
                                        partition_strategy=strategy, combiner=combiner)
    loss = tf.reduce_sum(out * tf.constant(COTANGENT[0, :, :].repeat(2, 0)[:4]))
    grads = tf.gradients(loss, params)
    assert all(isinstance(g, tf.IndexedSlices) for g in grads), grads
    ops = tf.get_default_graph().get_operations()
    types = sorted({op.type for op in ops if not op.name.startswith("gradients")})
    types += sorted({op.type for op in ops if op.type.endswith("GradV2")})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run([out] + [tf.convert_to_tensor(g) for g in grads]), types


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("sharded", [False, True])
def test_embedding_lookup_sparse_matches_tf1(tf1, combiner, weighted, sharded):
    shards = SHARDS["div"] if sharded else [TABLE]
    (want, want_types), (got, got_types) = tf1_and_core(tf1, _sparse, shards, combiner, weighted, "div")
    assert got[0].shape == want[0].shape == (4, 4)
    # float32 (tests/_tolerance.py): a row's weighted sum of up to 3 rows, the weights' sum (or of squares, and a
    # square root) it is divided by, against Σ|terms| (at most Σ|weights|·max|row|); the gradients scatter the
    # cotangent through the same products and add up to 2 of them
    assert_float32_close(got[0], want[0], n=2 * 3 + 2, scale=np.abs(SP_WEIGHTS).sum() * np.abs(TABLE).max())
    for w, g in zip(want[1:], got[1:]):
        assert_float32_close(g, w, n=2 * 3 + 2 + 2)
    assert np.abs(got[0][1]).max() == 0 and np.abs(got[0][0]).max() > 0      # row 1 has no ids
    assert got_types == want_types
    if not sharded and not weighted:                 # one SparseSegment op, its sparse gradient op
        op_type = "SparseSegment" + {"sum": "Sum", "mean": "Mean", "sqrtn": "SqrtN"}[combiner]
        assert {op_type, op_type + "GradV2"} <= set(got_types)


def _segments(tf, fn_name, sparse_gradient):
    data = tf.Variable(TABLE, name="data", use_resource=False)
    fn = getattr(tf, fn_name) if hasattr(tf, fn_name) else getattr(tf.sparse, fn_name.replace("sparse_", ""))
    out = fn(data, tf.constant([5, 1, 5, 2, 9]), tf.constant([0, 0, 2, 2, 2]), sparse_gradient=sparse_gradient) \
        if sparse_gradient else fn(data, tf.constant([5, 1, 5, 2, 9]), tf.constant([0, 0, 2, 2, 2]))
    g = tf.gradients(tf.reduce_sum(out * tf.constant(COTANGENT[0])), data)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run([out, tf.convert_to_tensor(g)]), isinstance(g, tf.IndexedSlices)


@pytest.mark.parametrize("sparse_gradient", [False, True])
@pytest.mark.parametrize("fn", ["sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n"])
def test_sparse_segment_reductions_match_tf1(tf1, fn, sparse_gradient):
    (want, want_sparse), (got, got_sparse) = tf1_and_core(tf1, _segments, fn, sparse_gradient)
    assert got_sparse == want_sparse == sparse_gradient
    # float32 (tests/_tolerance.py): a segment's sum of up to 3 rows (against Σ|terms| ≤ 3·max|row|), its count
    # or the count's square root it is divided by; the gradient scatters the cotangent back, adding up to 2 rows
    assert_float32_close(got[0], want[0], n=3 + 2, scale=3 * np.abs(TABLE).max())
    assert_float32_close(got[1], want[1], n=2 + 2 + 2)


def test_bad_input_is_named():
    with core.Graph().as_default():
        table = core.constant(TABLE)
        with pytest.raises(ValueError, match="partition strategy"):
            core.nn.embedding_lookup([table, table], [1], partition_strategy="hash")
        with pytest.raises(ValueError, match="Need at least one param"):
            core.nn.embedding_lookup([], [1])
        with pytest.raises(TypeError, match="ids must be"):
            core.nn.embedding_lookup(table, core.constant([1.0]))
        with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
            core.nn.embedding_lookup_sparse(table, [[1]], None)
        sp = core.SparseTensor([[0, 0]], core.constant([1], core.int64), [1, 1])
        with pytest.raises(ValueError, match="combiner"):
            core.nn.embedding_lookup_sparse(table, sp, None, combiner="max")
        with pytest.raises(ValueError, match="1 indices but 2 values"):
            core.SparseTensor([[0, 0]], [1, 2], [1, 2])
        out = core.nn.embedding_lookup(table, [3, 11])
        with core.Session() as sess, pytest.raises((IndexError, core.errors.InvalidArgumentError), match="11"):
            sess.run(out)
