"""tf.nn.dynamic_rnn and tf.nn.bidirectional_dynamic_rnn against TF1 (graph mode, control flow v1): identical
weights by variable name, then outputs, final states, gradients (inputs and every variable), variable names, and
the loop's and TensorArrays' nodes of the GraphDef."""
import numpy as np
import pytest

from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from test_rnn_cells import random_state, weights_for
from test_tensor_array import structural_nodes
from tfevents import core
from tfevents.core.rnn import _nest


@pytest.fixture(autouse=True, scope="module")
def tf1_control_flow_v1(tf):
    tf.compat.v1.disable_control_flow_v2()
    yield
    tf.compat.v1.enable_control_flow_v2()


B, T, D = 4, 5, 3
R = np.random.RandomState(8)
XB = R.randn(B, T, D)                 # batch-major inputs
LENGTHS = np.array([5, 2, 0, 3])
# float32 roundings (tests/_tolerance.py) of the "multi" cell over T steps, forward and back: the LSTM's gates (a
# dot of D + 3) and projection (4), the GRU's gates and candidate (dots of 3 + 2), peepholes and state updates (8);
# four sigmoids and tanhs along a step's path, each counted three times (the function, then twice in its
# derivative's 1 − y²); the weights' gradients sum the B rows of T steps
MULTI_CELL_N32 = 2 * T * ((D + 3) + 4 + 2 * (3 + 2) + 8) + T * 4 * 3 * ELEMENTWISE_ULPS + B * T


def _cell(tf, kind):
    rc = tf.nn.rnn_cell
    return {"lstm": lambda: rc.BasicLSTMCell(4),
            "gru": lambda: rc.GRUCell(3),
            "multi": lambda: rc.MultiRNNCell([rc.LSTMCell(4, use_peepholes=True, num_proj=3), rc.GRUCell(2)]),
            "concat_state": lambda: rc.LSTMCell(4, num_proj=2, state_is_tuple=False)}[kind]()


def run_program(tf, build, dtype_name="float64"):
    """``build(tf, dtype) -> (diff_inputs, feed, fetches)``; the loss weighs every fetched value by a sine so that
    each element gets its own gradient. Returns variables, values (fetches, then gradients) and the nodes."""
    dtype = getattr(tf, dtype_name)
    with tf.Graph().as_default() as g:
        diff_inputs, feed, fetches = build(tf, dtype)
        flat = _nest.flatten(fetches)
        loss = tf.add_n([tf.reduce_sum(tf.sin(t * float(i + 1))) for i, t in enumerate(flat)])
        variables = tf.global_variables()
        grads = tf.gradients(loss, list(diff_inputs) + variables)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for v in variables:
                v.load(weights_for(v.name, v.shape.as_list()).astype(dtype.as_numpy_dtype), sess)
            values = sess.run(flat + grads, feed)
        nodes = structural_nodes(g)
    return dict(vars=[(v.name, v.shape.as_list()) for v in variables], values=values, nodes=nodes,
                structure=fetches)


def loop_skeleton(nodes):
    """The nodes of loops and TensorArrays without the forward-value stacks of the gradient (StackV2/Push/Pop,
    their Enters, the sync triggers and control edges): which forward values a gradient saves depends on how each
    library writes the cells' arithmetic gradients (core's Slice and broadcasting gradients keep a few more)."""
    out = set()
    for name, op, inputs, frame, constant, attrs in nodes:
        if op in ("StackV2", "StackPushV2", "StackPopV2", "ControlTrigger"):
            continue
        if op == "Enter" and any("f_acc" in i for i in inputs):
            continue
        out.add((name, op, tuple(i for i in inputs if not i.startswith("^")), frame, constant, attrs))
    return out


def assert_programs_match(tf1, build, rtol=1e-10, atol=1e-12, dtype_name="float64", graph=True, n32=None):
    """The same variables, values (within ``rtol``/``atol`` in float64, within ``n32`` float32 roundings in
    float32: tests/_tolerance.py) and (``graph``) loop skeleton."""
    theirs = run_program(tf1, build, dtype_name)
    ours = run_program(core, build, dtype_name)
    assert ours["vars"] == theirs["vars"]
    assert len(ours["values"]) == len(theirs["values"])
    for i, (a, b) in enumerate(zip(ours["values"], theirs["values"])):
        assert a is not None and b is not None, i
        if dtype_name == "float32":
            assert_float32_close(a, b, n=n32, err_msg="value %d" % i)
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg="value %d" % i)
        assert np.asarray(a).shape == np.asarray(b).shape, i
    if graph:
        got, want = loop_skeleton(ours["nodes"]), loop_skeleton(theirs["nodes"])
        assert got == want, (sorted(got - want)[:6], sorted(want - got)[:6])
    return ours, theirs


def _inputs(tf, dtype, time_major, static=True):
    shape = [T, B, D] if time_major else [B, T, D]
    x = tf.placeholder(dtype, shape if static else [B, None, D], name="x")
    return x, {x: XB.transpose(1, 0, 2) if time_major else XB}


@pytest.mark.parametrize("kind", ["lstm", "gru", "multi", "concat_state"])
@pytest.mark.parametrize("lengths", [None, "fed"])
@pytest.mark.parametrize("time_major", [False, True])
def test_dynamic_rnn_matches_tf1(tf1, kind, lengths, time_major):
    def build(tf, dtype):
        x, feed = _inputs(tf, dtype, time_major)
        sequence_length = None
        if lengths:
            sequence_length = tf.placeholder(tf.int64, [None], name="lengths")
            feed[sequence_length] = LENGTHS
        outputs, state = tf.nn.dynamic_rnn(_cell(tf, kind), x, sequence_length=sequence_length, dtype=dtype,
                                           time_major=time_major)
        return [x], feed, (outputs, state)

    ours, _ = assert_programs_match(tf1, build)
    assert ours["vars"][0][0].startswith("rnn/")
    if lengths:
        outputs = ours["values"][0]
        outputs = outputs if time_major else outputs.transpose(1, 0, 2)
        for t in range(T):        # zeros at and past each row's length
            np.testing.assert_array_equal(outputs[t][LENGTHS <= t], 0)


def test_variable_names_and_the_state_at_each_rows_last_step(tf1):
    def build(tf, dtype):
        x, feed = _inputs(tf, dtype, False)
        cell = tf.nn.rnn_cell.BasicLSTMCell(4)
        outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=tf.constant(LENGTHS), dtype=dtype)
        return [x], feed, (outputs, state)
    ours, _ = assert_programs_match(tf1, build)
    assert [n for n, _ in ours["vars"]] == ["rnn/basic_lstm_cell/kernel:0", "rnn/basic_lstm_cell/bias:0"]
    outputs, h = ours["values"][0], ours["values"][2]
    for b, n in enumerate(LENGTHS):      # h of the final state is the output at the row's last valid step
        np.testing.assert_array_equal(h[b], outputs[b, n - 1] if n else 0.0)


def test_dynamic_rnn_initial_state_scope_unknown_length_and_float32(tf1):
    # (an unknown batch size is left out of the graph comparison: core's tf.gradients also walks int32 edges
    # (Shape -> zeros), so it accumulates a gradient for the loop's zero output that TF knows is unreachable)
    def build(tf, dtype):
        x, feed = _inputs(tf, dtype, False, static=False)
        cell = _cell(tf, "multi")
        init = random_state(tf, cell.state_size, dtype, batch=B)
        with tf.variable_scope("encoder") as scope:
            pass
        outputs, state = tf.nn.dynamic_rnn(cell, x, initial_state=init, scope=scope,
                                           sequence_length=[3, 5, 1, 4], parallel_iterations=4, swap_memory=True)
        return [x] + _nest.flatten(init), feed, (outputs, state)
    ours, _ = assert_programs_match(tf1, build, dtype_name="float32", n32=MULTI_CELL_N32)
    assert ours["vars"][0][0] == "encoder/multi_rnn_cell/cell_0/lstm_cell/kernel:0"


@pytest.mark.parametrize("time_major", [False, True])
def test_unknown_batch_and_time(tf1, time_major):
    def build(tf, dtype):
        x = tf.placeholder(dtype, [None, None, D], name="x")
        lengths = tf.placeholder(tf.int32, [None], name="lengths")
        outputs, state = tf.nn.dynamic_rnn(_cell(tf, "gru"), x, sequence_length=lengths, dtype=dtype,
                                           time_major=time_major)
        return [x], {x: XB.transpose(1, 0, 2) if time_major else XB, lengths: LENGTHS}, (outputs, state)
    ours, _ = assert_programs_match(tf1, build, graph=False)   # (see the test above)
    assert ours["values"][0].shape == ((T, B, 3) if time_major else (B, T, 3))


def test_dynamic_rnn_with_nested_inputs(tf1):
    def build(tf, dtype):
        a = tf.placeholder(dtype, [B, T, 2], name="a")
        b = tf.placeholder(dtype, [B, T, 1], name="b")
        inner = tf.nn.rnn_cell.GRUCell(3)

        class Cell(tf.nn.rnn_cell.RNNCell):
            state_size = property(lambda self: inner.state_size)
            output_size = property(lambda self: inner.output_size)

            def __call__(self, inputs, state, scope=None):
                return inner(tf.concat([inputs[0], inputs[1]["z"]], 1), state)
        outputs, state = tf.nn.dynamic_rnn(Cell(), (a, {"z": b}), dtype=dtype)
        return [a, b], {a: XB[:, :, :2], b: XB[:, :, 2:]}, (outputs, state)
    assert_programs_match(tf1, build, graph=False)   # (a custom cell's own scope names differ; values are what count)


@pytest.mark.parametrize("lengths", [None, "const"])
@pytest.mark.parametrize("time_major", [False, True])
def test_bidirectional_dynamic_rnn_matches_tf1(tf1, lengths, time_major):
    def build(tf, dtype):
        x, feed = _inputs(tf, dtype, time_major)
        sequence_length = tf.constant(LENGTHS.astype(np.int32)) if lengths else None
        outputs, states = tf.nn.bidirectional_dynamic_rnn(_cell(tf, "lstm"), _cell(tf, "gru"), x, dtype=dtype,
                                                          sequence_length=sequence_length, time_major=time_major)
        return [x], feed, (outputs, states)
    ours, _ = assert_programs_match(tf1, build)
    assert [n for n, _ in ours["vars"]] == [
        "bidirectional_rnn/fw/basic_lstm_cell/kernel:0", "bidirectional_rnn/fw/basic_lstm_cell/bias:0",
        "bidirectional_rnn/bw/gru_cell/gates/kernel:0", "bidirectional_rnn/bw/gru_cell/gates/bias:0",
        "bidirectional_rnn/bw/gru_cell/candidate/kernel:0", "bidirectional_rnn/bw/gru_cell/candidate/bias:0"]


@pytest.mark.parametrize("program, exc, match", [
    (lambda tf: tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), tf.zeros([2, 4, 3])), ValueError, "dtype"),
    (lambda tf: tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), tf.zeros([2, 4]), dtype=tf.float32), ValueError,
     "rank"),
    (lambda tf: tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), tf.placeholder(tf.float32, [2, 4, None]),
                                  dtype=tf.float32), ValueError, "depth of inputs"),
    (lambda tf: tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), tf.zeros([2, 4, 3]), sequence_length=[[1, 2]],
                                  dtype=tf.float32), ValueError, "sequence_length must be a vector"),
    (lambda tf: tf.nn.dynamic_rnn("cell", tf.zeros([2, 4, 3]), dtype=tf.float32), TypeError, "cell"),
])
def test_bad_arguments_raise_like_tf1(tf1, program, exc, match):
    for lib in (tf1, core):
        with lib.Graph().as_default(), pytest.raises(exc, match=match):
            program(lib)
