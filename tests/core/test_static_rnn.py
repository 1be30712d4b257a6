"""tf.nn.static_rnn, static_bidirectional_rnn, static_state_saving_rnn and reverse_sequence on tfevents.core
against TF1: identical weights by variable name, then outputs, final states, ``tf.gradients`` and variable names."""
import numpy as np
import pytest

from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from test_dynamic_rnn import MULTI_CELL_N32
from test_rnn_cells import assert_programs_match, random_state, run_program
from tfevents import core
from tfevents.core.rnn import _nest

B, D, T = 4, 3, 5
R = np.random.RandomState(8)
XS = [R.randn(B, D) for _ in range(T)]
LENGTHS = np.array([5, 2, 0, 3])


def _inputs(tf, dtype):
    xs = [tf.placeholder(dtype, [None, D], name="x%d" % t) for t in range(T)]
    return xs, dict(zip(xs, XS))


def _cell(tf, kind):
    rc = tf.nn.rnn_cell
    return {"lstm": lambda: rc.BasicLSTMCell(4),
            "gru": lambda: rc.GRUCell(3),
            "multi": lambda: rc.MultiRNNCell([rc.LSTMCell(4, use_peepholes=True, num_proj=3), rc.GRUCell(2)]),
            "proj_concat": lambda: rc.LSTMCell(4, num_proj=2, state_is_tuple=False)}[kind]()


@pytest.mark.parametrize("kind", ["lstm", "gru", "multi", "proj_concat"])
@pytest.mark.parametrize("lengths", [None, "const", "fed"])
def test_static_rnn_matches_tf1(tf1, kind, lengths):
    def build(tf, dtype):
        xs, feed = _inputs(tf, dtype)
        cell = _cell(tf, kind)
        sequence_length = None
        if lengths == "const":
            sequence_length = tf.constant(LENGTHS)
        elif lengths == "fed":
            sequence_length = tf.placeholder(tf.int64, [None], name="lengths")
            feed[sequence_length] = LENGTHS
        outputs, state = tf.nn.static_rnn(cell, xs, dtype=dtype, sequence_length=sequence_length)
        return xs, feed, (outputs, state)

    # the cells' ops have TF's names; with sequence_length TF adds two tf.conds per step where we select only
    ours, theirs = assert_programs_match(tf1, build, same_op_names=False) if lengths else \
        assert_programs_match(tf1, build)
    if lengths:
        n_out = len(_nest.flatten(ours["structure"][0][0]))
        outputs = ours["values"][:T * n_out]
        for t in range(T):       # zeros at and past each row's length
            for o in outputs[t * n_out:(t + 1) * n_out]:
                np.testing.assert_array_equal(o[LENGTHS <= t], 0)
    assert ours["vars"][0][0].startswith("rnn/")


def test_static_rnn_initial_state_scope_and_float32(tf1):
    def build(tf, dtype):
        xs, feed = _inputs(tf, dtype)
        cell = _cell(tf, "multi")
        init = random_state(tf, cell.state_size, dtype, batch=B)
        with tf.variable_scope("encoder") as scope:
            pass
        outputs, state = tf.nn.static_rnn(cell, xs, initial_state=init, scope=scope,
                                          sequence_length=[3, 5, 1, 4])
        return xs + _nest.flatten(init), feed, (outputs, state)

    ours, _ = assert_programs_match(tf1, build, dtype_name="float32", same_op_names=False, n32=MULTI_CELL_N32)
    assert ours["vars"][0][0] == "encoder/multi_rnn_cell/cell_0/lstm_cell/kernel:0"


@pytest.mark.parametrize("lengths", [None, "const"])
def test_static_bidirectional_rnn_matches_tf1(tf1, lengths):
    def build(tf, dtype):
        xs, feed = _inputs(tf, dtype)
        sequence_length = tf.constant(LENGTHS.astype(np.int32)) if lengths else None
        outputs, fw, bw = tf.nn.static_bidirectional_rnn(_cell(tf, "lstm"), _cell(tf, "gru"), xs, dtype=dtype,
                                                         sequence_length=sequence_length)
        return xs, feed, (outputs, fw, bw)

    ours, _ = assert_programs_match(tf1, build, same_op_names=not lengths)
    assert [n for n, _ in ours["vars"]][:2] == ["bidirectional_rnn/fw/basic_lstm_cell/kernel:0",
                                                "bidirectional_rnn/fw/basic_lstm_cell/bias:0"]
    assert ours["values"][0].shape == (B, 4 + 3)


class _Saver:
    """A state saver (``state(name)`` / ``save_state(name, value)``) over variables, written once for both."""

    def __init__(self, tf, sizes):
        self.tf = tf
        self.vars = {name: tf.Variable(np.full((B, size), 0.3 * (i + 1)), name="saved_" + name)
                     for i, (name, size) in enumerate(sizes.items())}

    def state(self, name):
        return self.tf.identity(self.vars[name])

    def save_state(self, name, value):
        return self.tf.assign(self.vars[name], value)


def test_static_state_saving_rnn_matches_tf1(tf1):
    def program(tf):
        xs, feed = _inputs(tf, tf.float64)
        saver = _Saver(tf, {"c": 4, "h": 4})
        outputs, state = tf.nn.static_state_saving_rnn(_cell(tf, "lstm"), xs, saver, ("c", "h"),
                                                       sequence_length=tf.constant(LENGTHS))
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        for v in tf.global_variables():
            if "kernel" in v.name:
                v.load(np.random.RandomState(1).uniform(-0.5, 0.5, v.shape.as_list()), sess)
        first = sess.run([outputs, state], feed)
        saved = sess.run([saver.vars["c"], saver.vars["h"]])
        second = sess.run([outputs, state], feed)     # starts from the saved state
        return first, saved, second

    with tf1.Graph().as_default():
        theirs = program(tf1)
    with core.Graph().as_default():
        ours = program(core)
    for a, b in zip(_nest.flatten(ours), _nest.flatten(theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours[1][1], ours[0][1][1])            # the final h was saved
    assert not np.allclose(ours[0][0][0], ours[2][0][0])             # the second run started elsewhere


@pytest.mark.parametrize("seq_axis, batch_axis, dtype", [(1, 0, "int32"), (0, 1, "int64"), (2, 1, "int64")])
def test_reverse_sequence_and_gradient_match_tf1(tf1, seq_axis, batch_axis, dtype):
    x = np.random.RandomState(2).randn(4, 5, 6)
    shape = list(x.shape)
    lengths = np.array([3, 0, 5, 4, 2, 6][:shape[batch_axis]], dtype=dtype)
    lengths = np.minimum(lengths, shape[seq_axis])

    def build(tf, dtype_):
        p = tf.placeholder(dtype_, shape, name="p")
        from tfevents.core.rnn import reverse_sequence
        fn = tf.reverse_sequence if tf is not core else reverse_sequence
        out = fn(p, tf.constant(lengths), seq_axis=seq_axis, batch_axis=batch_axis)
        return [p], {p: x}, (tf.reshape(out, [shape[0], -1]),)

    assert_programs_match(tf1, build)


def test_reverse_sequence_rejects_lengths_past_the_axis():
    with core.Graph().as_default():
        out = core.nn.rnn_cell  # the namespace is importable from core.nn
        assert out.GRUCell is not None
        from tfevents.core.rnn import reverse_sequence
        r = reverse_sequence(core.ones([2, 3]), core.constant([4, 1]), seq_axis=1, batch_axis=0)
        with pytest.raises(core.errors.InvalidArgumentError, match="seq_lens"):
            core.Session().run(r)


@pytest.mark.parametrize("program, exc, match", [
    (lambda tf: tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), [tf.ones([2, 3])]), ValueError,
     "argument `dtype` must be specified"),
    (lambda tf: tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), tf.ones([2, 3]), dtype=tf.float32), TypeError,
     "must be a sequence"),
    (lambda tf: tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), [], dtype=tf.float32), ValueError, "must not be empty"),
    (lambda tf: tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), [tf.placeholder(tf.float32, [2, None])],
                                 dtype=tf.float32), ValueError, "must be accessible via shape inference"),
    (lambda tf: tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(2), [tf.ones([2, 3])], dtype=tf.float32,
                                 sequence_length=tf.ones([2, 2], tf.int32)), ValueError,
     "must be a vector"),
    (lambda tf: tf.nn.static_rnn("cell", [tf.ones([2, 3])], dtype=tf.float32), TypeError, "is not an RNNCell"),
])
def test_static_rnn_bad_input_raises_like_tf1(tf1, program, exc, match):
    for tf in (tf1, core):
        with tf.Graph().as_default():
            with pytest.raises(exc, match=match):
                program(tf)


def test_training_a_static_rnn_follows_tf1(tf1):
    """Five SGD steps of an LSTM classifier on the last output: the same losses as TF1."""
    def program(tf):
        xs, feed = _inputs(tf, tf.float32)
        outputs, _ = tf.nn.static_rnn(_cell(tf, "lstm"), xs, dtype=tf.float32, sequence_length=[5, 4, 5, 2])
        logits = tf.layers.dense(outputs[-1], 2, name="out")
        loss = tf.losses.sparse_softmax_cross_entropy(tf.constant([0, 1, 1, 0]), logits)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        for v in tf.global_variables():
            v.load(np.random.RandomState(len(v.name)).uniform(-0.5, 0.5, v.shape.as_list()), sess)
        return [sess.run([loss, train], feed)[0] for _ in range(5)]

    with tf1.Graph().as_default():
        theirs = program(tf1)
    with core.Graph().as_default():
        ours = program(core)
    # float32 roundings (tests/_tolerance.py) of a step: five LSTM steps (a dot of 3 + 4, c and h) forward and
    # back, a sigmoid and a tanh along each (counted three times: the function and its derivative's 1 − y²), the
    # dense layer (4) and the cross entropy, the weights' gradients' sums over 4 rows of 5 steps; five SGD steps
    step = 2 * 5 * ((3 + 4) + 4) + 5 * 2 * 3 * ELEMENTWISE_ULPS + 2 * (4 + 2 * ELEMENTWISE_ULPS + 4) + 4 * 5
    assert_float32_close(ours, theirs, n=5 * step)
    assert ours[-1] < ours[0]


def test_run_program_sees_cond_free_graph():
    """Ours selects with ``Select`` per step instead of TF's two ``tf.cond``s: no cond ops in the graph."""
    def build(tf, dtype):
        xs, feed = _inputs(tf, dtype)
        outputs, state = tf.nn.static_rnn(_cell(tf, "gru"), xs, dtype=dtype, sequence_length=tf.constant(LENGTHS))
        return xs, feed, (outputs, state)
    ops = run_program(core, build)["ops"]
    types = {t for _, t in ops}
    assert "Select" in types and not types & {"Switch", "Merge", "If", "StatelessIf"}


def test_rnn_step_with_tf_conds_equals_the_select_only_step():
    """``_rnn_step(skip_conditionals=False)`` (TF's two tf.conds, for a cell already built) gives the values and
    gradients of the select-only step ``static_rnn`` uses (which the tests above hold to TF1)."""
    from tfevents.core.rnn import rnn

    def run(skip):
        with core.Graph().as_default():
            xs = [core.constant(x) for x in XS]
            cell = core.nn.rnn_cell.GRUCell(2, kernel_initializer=core.constant_initializer(0.3))
            state = cell.zero_state(B, core.float64)
            cell(xs[0], state)                    # variables made outside the conds
            lengths = core.constant(LENGTHS)
            zero = core.zeros([B, 2], core.float64)
            outputs = []
            for t in range(T):
                output, state = rnn._rnn_step(t, lengths, core.reduce_min(lengths), core.reduce_max(lengths), zero,
                                              state, lambda t=t, state=state: cell(xs[t], state), cell.state_size,
                                              skip_conditionals=skip)
                outputs.append(output)
            types = {op.type for op in core.get_default_graph().get_operations()}
            grads = core.gradients(core.add_n([core.reduce_sum(o * o) for o in outputs + [state]]), xs)
            sess = core.Session()
            sess.run(core.global_variables_initializer())
            return sess.run(outputs + [state] + grads), types

    (with_conds, cond_types), (selects, select_types) = run(False), run(True)
    assert "Switch" in cond_types and "Switch" not in select_types
    for a, b in zip(with_conds, selects):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
