"""tf.cond, tf.case and tf.while_loop against TF1: values and gradients from the same feeds, and the control-flow
nodes of the GraphDef (Switch/Merge for conds; Enter/Merge/Switch/LoopCond/NextIteration/Exit frames, the
gradient's counters and stacks for loops) with TF's names, inputs and frame names."""
import numpy as np
import pytest

from _oracle import tf1_and_core
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from test_tensor_array import check

@pytest.fixture(autouse=True, scope="module")
def tf1_control_flow_v1(tf):
    """TF1's graph-mode control flow (Switch/Merge, Enter/Exit frames) instead of TF2's If/While ops."""
    tf.compat.v1.disable_control_flow_v2()
    yield
    tf.compat.v1.enable_control_flow_v2()


X = np.array([1.5, -2.0, 0.5], np.float32)
E = ELEMENTWISE_ULPS


def _check(tf1, build, feeds_list, graph=True):
    """Values equal to TF1's for every feed, within the program's float32 roundings (``N[build]``, forward and
    back: tests/_tolerance.py), and (``graph``) the same control-flow nodes (test_tensor_array's
    ``structural_nodes``: names, inputs, frames)."""
    return check(tf1, build, feeds_list, n=N[build], graph=graph)


# ------------------------------------------------------------------ cond and case

def _cond_basic(tf):
    x = tf.placeholder(tf.float32, [3], name="x")
    p = tf.placeholder(tf.bool, [], name="p")
    y = tf.cond(p, lambda: x * 2.0, lambda: tf.square(x) + 1.0)
    return [y, tf.gradients(y, x)[0]], {"x": x, "p": p}


def test_cond_runs_only_the_taken_branch_with_tf1_gradients(tf1):
    _check(tf1, _cond_basic, [{"x": X, "p": True}, {"x": X, "p": False}])


def _cond_nested_structures(tf):
    x = tf.placeholder(tf.float32, [3], name="x")
    p = tf.placeholder(tf.bool, [], name="p")
    q = tf.placeholder(tf.bool, [], name="q")
    c = tf.constant([1.0, 2.0, 3.0])

    def inner():
        return tf.cond(q, lambda: (x * c, tf.reduce_sum(x)), lambda: (c, tf.constant(7.0)))
    a, b = tf.cond(p, inner, lambda: (tf.exp(x), tf.reduce_max(x)))
    loss = tf.reduce_sum(a) * b
    return [a, b, tf.gradients(loss, x)[0]], {"x": x, "p": p, "q": q}


def test_nested_conds_with_tuples_and_constant_branches(tf1):
    feeds = [{"x": X, "p": p, "q": q} for p in (True, False) for q in (True, False)]
    _check(tf1, _cond_nested_structures, feeds)


def test_a_branch_that_cannot_run_on_the_fed_data_does_not_fail_the_step(tf1):
    def build(tf):
        x = tf.placeholder(tf.float32, [None], name="x")
        # the false branch would index past the end of an empty x
        y = tf.cond(tf.size(x) > 0, lambda: tf.gather(x, tf.size(x) - 1), lambda: tf.constant(-1.0))
        return [y], {"x": x}
    got = check(tf1, build, [{"x": np.zeros([0], np.float32)}, {"x": X}], n=0)       # a gather
    assert float(got[0][0]) == -1.0 and float(got[1][0]) == X[-1]


def _case(tf):
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.case([(x[0] > 1.0, lambda: x * 3.0), (x[1] > 1.0, lambda: x - 1.0)], default=lambda: -x)
    return [y, tf.gradients(y, x)[0]], {"x": x}


def test_case_picks_the_first_true_predicate(tf1):
    feeds = [{"x": X}, {"x": np.array([0.0, 2.0, 1.0], np.float32)}, {"x": np.zeros(3, np.float32)}]
    _check(tf1, _case, feeds)


def test_fetching_inside_a_branch_is_refused():
    from tfevents import core as tf
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        inside = []
        tf.cond(x > 0, lambda: inside.append(x * 2.0) or inside[0], lambda: x)
        with tf.Session() as sess, pytest.raises(ValueError, match="not fetchable"):
            sess.run(inside[0], {x: 1.0})


def _update_in_a_branch(tf):
    """A variable updated only on a cond's true side (as batch norm's moving averages with a training tensor),
    run with the predicate true, false, true, true; then the variable."""
    p = tf.placeholder(tf.bool, [], name="p")
    v = tf.Variable(np.float32(10.0), name="v")
    y = tf.cond(p, lambda: tf.assign_sub(v, v * 0.25), lambda: v)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return [sess.run(y, {p: taken}) for taken in (True, False, True, True)] + [sess.run(v)]


def test_a_variable_updated_inside_a_branch_changes_only_when_taken(tf1):
    want, got = tf1_and_core(tf1, _update_in_a_branch)
    np.testing.assert_array_equal(got, want)      # one product and one subtraction a step, in the same order
    assert [float(v) for v in got] == [7.5, 7.5, 5.625, 4.21875, 4.21875]


def test_cond_checks_its_arguments():
    from tfevents import core as tf
    with tf.Graph().as_default():
        x = tf.constant(1.0)
        with pytest.raises(TypeError, match="pred must not be a Python bool"):
            tf.cond(True, lambda: x, lambda: x)
        with pytest.raises(ValueError, match="same type"):
            tf.cond(x > 0, lambda: x, lambda: tf.constant(1))
        with pytest.raises(ValueError, match="same structure"):
            tf.cond(x > 0, lambda: (x, x), lambda: x)
        with pytest.raises(TypeError, match="callable"):
            tf.cond(x > 0, x, lambda: x)


# ------------------------------------------------------------------ while_loop

def _while_basic(tf):
    x = tf.placeholder(tf.float32, [3], name="x")
    a0 = tf.placeholder(tf.float32, [3], name="a0")
    i, a = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x + 1.0), [tf.constant(0), a0])
    return [i, a] + tf.gradients(tf.reduce_sum(a * a), [x, a0]), {"x": x, "a0": a0}


def test_while_loop_values_gradients_and_frames_equal_tf1(tf1):
    _check(tf1, _while_basic, [{"x": X, "a0": np.ones(3, np.float32)}, {"x": -X, "a0": X}])


def _while_nested(tf):
    x = tf.placeholder(tf.float32, [3], name="x")
    n = tf.placeholder(tf.int32, [], name="n")

    def outer_body(i, a):
        j, b = tf.while_loop(lambda j, b: j < i, lambda j, b: (j + 1, tf.sin(b) * x), [tf.constant(0), a])
        return i + 1, b + a
    _, a = tf.while_loop(lambda i, a: i < n, outer_body, [tf.constant(0), x])
    return [a, tf.gradients(tf.reduce_sum(a), x)[0]], {"x": x, "n": n}


def test_nested_while_loops_and_their_gradients(tf1):
    _check(tf1, _while_nested, [{"x": X, "n": 3}, {"x": X, "n": 0}, {"x": X, "n": 1}])


def _while_max_iterations(tf):
    x = tf.placeholder(tf.float32, [3], name="x")
    a = tf.while_loop(lambda a: tf.reduce_sum(a) < 1e6, lambda a: a * x * 2.0, [x], maximum_iterations=4)
    return [a, tf.gradients(a, x)[0]], {"x": x}


def test_maximum_iterations(tf1):
    _check(tf1, _while_max_iterations, [{"x": X}, {"x": X * 100}])


def _cond_in_while(tf):
    x = tf.placeholder(tf.float32, [3], name="x")

    def body(i, a):
        a = tf.cond(tf.reduce_sum(a) > 2.0, lambda: a * 0.5, lambda: a * x + 1.0)
        return i + 1, a
    _, a = tf.while_loop(lambda i, a: i < 5, body, [tf.constant(0), x])
    return [a, tf.gradients(tf.reduce_sum(a), x)[0]], {"x": x}


def test_cond_inside_while_with_gradient(tf1):
    _check(tf1, _cond_in_while, [{"x": X}, {"x": -X}])


def _while_in_cond(tf):
    x = tf.placeholder(tf.float32, [3], name="x")
    p = tf.placeholder(tf.bool, [], name="p")
    y = tf.cond(p, lambda: tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, a * x), [0, x])[1],
                lambda: x - 1.0)
    return [y, tf.gradients(tf.reduce_sum(y), x)[0]], {"x": x, "p": p}


def test_while_inside_cond(tf1):
    _check(tf1, _while_in_cond, [{"x": X, "p": True}, {"x": X, "p": False}])


def _while_unused_and_independent(tf):
    x = tf.placeholder(tf.float32, [3], name="x")
    # `b` is recomputed from x each iteration (its next value does not read it); `c` is never used
    _, a, b, c = tf.while_loop(lambda i, a, b, c: i < 3,
                               lambda i, a, b, c: (i + 1, a + b, x * 2.0, c * x),
                               [tf.constant(0), x, x, x])
    return [a, b, tf.gradients(tf.reduce_sum(a), x)[0]], {"x": x}


def test_unused_exits_and_a_variable_independent_of_its_last_value(tf1):
    _check(tf1, _while_unused_and_independent, [{"x": X}])


def _while_shape_invariant(tf):
    x = tf.placeholder(tf.float32, [3], name="x")
    _, a = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.concat([a, a * x[0]], 0)),
                         [tf.constant(0), x], shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])
    return [a, tf.gradients(tf.reduce_sum(a), x)[0]], {"x": x}


def test_shape_invariants_let_a_variable_grow(tf1):
    # (the frames are compared above; here the gradients of ConcatV2 and of a broadcasting Mul save different
    # forward values than TF's, ShapeN where ours saves its GatherV2/BroadcastGradientArgs inputs)
    got = _check(tf1, _while_shape_invariant, [{"x": X}], graph=False)
    assert got[0][0].shape == (24,)


# float32 roundings of each program's longest path, forward and back
N = {
    _cond_basic: 2,                     # x·2 or x² + 1; the gradient 2 or 2x
    _cond_nested_structures: E + 3 + 2,     # exp, a sum of 3, the loss's product; the gradient's products
    _case: 1,
    _while_basic: 2 * 3 * 2 + 2,        # three steps of a·x + 1, forward and back, and the loss's square
    _while_nested: 2 * 3 * (E + 2),     # three sin(b)·x and the outer sums, forward and back
    _while_max_iterations: 2 * 4 * 2,   # four steps of a·x·2, forward and back
    _cond_in_while: 2 * 5 * 2 + 3,      # five steps of a·x + 1 or a/2 (the predicate a sum of 3), forward and back
    _while_in_cond: 2 * 2 + 2,
    _while_unused_and_independent: 2 * 3 + 2,
    _while_shape_invariant: 3 + 3 * 8,  # three products by x[0]; its gradient sums the 24 elements' terms
}


def test_while_loop_checks_its_body(tf1):
    from tfevents import core as tf
    for lib in (tf1, tf):
        with lib.Graph().as_default():
            x = lib.constant([1.0, 2.0])
            with pytest.raises(ValueError, match="shape"):
                lib.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, lib.concat([a, a], 0)), [0, x])
        with lib.Graph().as_default():
            with pytest.raises((ValueError, TypeError)):
                lib.while_loop(lambda i: i < 2, lambda i: (i + 1, i), [0])
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="callable"):
            tf.while_loop(1, lambda i: i, [0])
        with pytest.raises(ValueError, match="No loop variables"):
            tf.while_loop(lambda: True, lambda: (), [])


def test_a_long_loop_runs_in_one_step():
    from tfevents import core as tf
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        total = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + tf.cast(i, tf.float64)),
                              [0, tf.constant(0.0, tf.float64)])[1]
        with tf.Session() as sess:
            assert sess.run(total, {n: 10000}) == sum(range(10000))


def test_nested_tuples_as_feed_keys_and_fetches(tf1):
    """TF1's PTB idiom: the final LSTMStateTuples fetched, then fed back with the tuple as one key."""
    def build(tf):
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3) for _ in range(2)])
        state = cell.zero_state(2, tf.float32)
        x = tf.placeholder(tf.float32, [2, 4], name="x")
        out, final = cell(x, state)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for v in tf.global_variables():
                v.load(np_values(v.shape.as_list(), v.op.name), sess)
            value = sess.run(final, {x: np.ones([2, 4], np.float32)})
            assert type(value[0]).__name__ == "LSTMStateTuple"
            fed = sess.run(out, {x: np.ones([2, 4], np.float32), state: value})
            return [np.asarray(value[1].h), fed]
    want, got = tf1_and_core(tf1, build)
    # two LSTM layers (the gates' dots of 4 + 3 and 3 + 3 terms, sigmoid and tanh, c = f·c + i·g, o·tanh(c)),
    # twice; the dots' terms are |weights| ≤ 0.5 times inputs of 1 or |h| < 1: a gate's Σ|terms| ≤ 7·0.5
    n = 2 * ((4 + 3) + (3 + 3) + 2 * (2 * E + 4))
    assert_float32_close(got[0], want[0], n=n, scale=7 * 0.5)
    assert_float32_close(got[1], want[1], n=n, scale=7 * 0.5)


def np_values(shape, name):
    rng = np.random.default_rng(sum(map(ord, name)))
    return rng.uniform(-0.5, 0.5, shape).astype(np.float32)


@pytest.mark.parametrize("build", [_cond_basic, _while_basic, _while_nested, _cond_in_while],
                         ids=["cond", "while", "nested_while", "cond_in_while"])
def test_tensorflow_imports_and_runs_our_graph_def(tf1, build):
    """Our GraphDef of a cond or loop and its gradients, imported with tf.import_graph_def, runs in TF1 to the
    numbers core computes."""
    from _oracle import core_then_imported_into_tf
    feeds = {"x": X, "a0": np.ones(3, np.float32), "n": 3, "p": False}
    want, got = core_then_imported_into_tf(
        tf1, build, lambda placeholders: {k: v for k, v in feeds.items() if k in placeholders})
    for w, g in zip(want, got):
        assert_float32_close(g, w, n=N[build])


@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_accumulate_equals_numpy_and_writes_into_the_accumulator(transpose_a, transpose_b):
    from tfevents.core.runtime.codegen import gemm_accumulate
    rng = np.random.default_rng(0)
    a = rng.standard_normal((7, 5) if not transpose_a else (5, 7)).astype(np.float32)
    b = rng.standard_normal((5, 3) if not transpose_b else (3, 5)).astype(np.float32)
    acc = rng.standard_normal((7, 3)).astype(np.float32)
    original = acc.copy()
    want = acc + (a.T if transpose_a else a) @ (b.T if transpose_b else b)
    got = gemm_accumulate(acc, a, b, transpose_a, transpose_b)
    # acc + a·b in two orders (a gemm with beta=1; numpy's matmul, then the sum): 5 products and acc, against
    # Σ|terms| (tests/_tolerance.py)
    terms = float((np.abs(original) + np.abs(a.T if transpose_a else a) @ np.abs(b.T if transpose_b else b)).max())
    assert_float32_close(got, want, n=5 + 1, scale=terms)
    assert np.shares_memory(got, acc)                       # one gemm, beta=1, into the buffer
    strided = gemm_accumulate(original, a.copy(order="F"), b, transpose_a, transpose_b)
    assert_float32_close(strided, want, n=5 + 1, scale=terms)   # the fallback for Fortran-ordered input


def test_a_loop_accumulating_a_weight_gradient_uses_one_gemm_per_iteration(tf1, monkeypatch):
    """The weight gradient of an RNN-like loop is summed by gemm_accumulate, to TF1's numbers."""
    from tfevents.core.runtime import codegen
    calls = []
    original = codegen.gemm_accumulate
    monkeypatch.setattr(codegen, "gemm_accumulate", lambda *a: calls.append(1) or original(*a))

    def build(tf):
        x = tf.placeholder(tf.float32, [5, 4, 3], name="x")
        w = tf.Variable(np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3))
        _, h = tf.while_loop(lambda t, h: t < 5, lambda t, h: (t + 1, tf.tanh(tf.matmul(h + x[t], w))),
                             [0, tf.zeros([4, 3])])
        grad = tf.gradients(tf.reduce_sum(h * h), w)[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return sess.run([h, grad], {x: np.linspace(-2, 2, 60, dtype=np.float32).reshape(5, 4, 3)})
    tf1.disable_control_flow_v2()
    want, got = tf1_and_core(tf1, build)
    # five steps of tanh((h + x[t])·w) (a sum, a 3-long dot, tanh) forward and back, and the weight gradient's
    # sum over the 5 steps' 4 rows (tests/_tolerance.py)
    for w, g in zip(want, got):
        assert_float32_close(g, w, n=2 * 5 * (1 + 3 + E) + 5 * 4)
    assert len(calls) == 5


def test_indexing_with_a_tensor_as_in_a_loop_body(tf1):
    """``x[t]``, ``x[t:t + 2]``, ``x[:, t]`` with a scalar int tensor: TF's Pack'ed StridedSlice, the static shape
    TF infers, values and gradients."""
    def build(tf):
        x = tf.placeholder(tf.float32, [5, 4, 3], name="x")
        t = tf.placeholder(tf.int32, [], name="t")
        parts = [x[t], x[t:t + 2], x[:, t], x[1, :, t]]
        shapes = [p.shape.as_list() if p.shape.dims is not None else None for p in parts]
        loss = sum(tf.reduce_sum(p * p) for p in parts)
        graph = tf.get_default_graph()
        kinds = sorted(op.type for op in graph.get_operations() if op.type in ("StridedSlice", "Pack")
                       and op.name.endswith(("strided_slice", "/stack", "/stack_1")) and op.name != "stack")
        with tf.Session() as sess:
            values = sess.run(parts + [tf.gradients(loss, x)[0]],
                              {x: np.arange(60, dtype=np.float32).reshape(5, 4, 3), t: 2})
        return shapes, kinds, values
    (want_shapes, want_kinds, want), (got_shapes, got_kinds, got) = tf1_and_core(tf1, build)
    assert got_shapes == want_shapes and got_kinds == want_kinds
    for w, g in zip(want, got):     # slices of small integers, their squares and sums: exact in any order
        np.testing.assert_array_equal(g, w)
