"""tf.nn.rnn_cell on tfevents.core against TF1 (``tf.compat.v1.nn.rnn_cell``, tf-keras's legacy cells).

Each case builds the same cells in both libraries, loads identical weights by variable name, and compares
variable names and shapes, the forward op names and types, outputs and states over two steps (the second reusing
the variables), and ``tf.gradients`` of a weighted sum of them with respect to the inputs, the initial state and
every variable.
"""
import collections
import zlib

import numpy as np
import pytest

from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core
from tfevents.core.rnn import _nest

B, D = 3, 4
R = np.random.RandomState(3)
X1, X2 = R.randn(B, D), R.randn(B, D)
_VARIABLE_OP_TYPES = {"VariableV2", "VarHandleOp", "ReadVariableOp", "VarIsInitializedOp", "AssignVariableOp",
                      "Assign"}


def weights_for(name, shape):
    """The same values for a variable name in both libraries."""
    return np.random.RandomState(zlib.crc32(name.encode()) % 2 ** 31).uniform(-0.7, 0.7, size=shape)


def random_state(tf, state_size, dtype, seed=5, batch=B):
    """Constant non-zero states shaped ``[B, s]`` in the structure of ``state_size`` (namedtuples kept)."""
    rs = np.random.RandomState(seed)
    leaves = [tf.constant(rs.randn(batch, int(s)) * 0.5, dtype=dtype) for s in _nest.flatten(state_size)]
    return _nest.pack_sequence_as(state_size, leaves)     # namedtuples keep their class (and library)


def forward_ops(graph):
    """(name, type) of the ops a program built, variables and their initializers aside; AddV2 read as Add."""
    out = []
    for op in graph.get_operations():
        name = op.name
        if op.type in _VARIABLE_OP_TYPES or "/Initializer/" in name or name.endswith(("/read", "/IsInitialized")) \
                or "/Read/" in name or "ReadVariableOp" in name:
            continue
        out.append((name, "Add" if op.type == "AddV2" else op.type))
    return out


def run_program(tf, build, dtype_name="float64"):
    """``build(tf, dtype) -> (diff_inputs, feed, fetches)``; returns a dict of everything compared."""
    dtype = getattr(tf, dtype_name)
    with tf.Graph().as_default() as g:
        diff_inputs, feed, fetches = build(tf, dtype)
        ops = forward_ops(g)
        flat = [f for f in _nest.flatten(fetches)]
        rs = np.random.RandomState(11)
        batch = next(iter(feed.values())).shape[0]
        loss = tf.add_n([tf.reduce_sum(t * tf.constant(rs.uniform(0.5, 1.5, size=(batch, t.shape.as_list()[-1])),
                                                       dtype=dtype)) for t in flat])
        variables = tf.global_variables()
        grads = tf.gradients(loss, list(diff_inputs) + variables)
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        for v in variables:
            v.load(weights_for(v.name, v.shape.as_list()).astype(dtype.as_numpy_dtype), sess)
        values = sess.run(flat + grads, {feed_k: feed_v for feed_k, feed_v in feed.items()})
        sess.close()
    return dict(ops=ops, vars=[(v.name, v.shape.as_list()) for v in variables], values=values,
                structure=fetches, trainable=[v.name for v in tf.trainable_variables()])


def assert_programs_match(tf1, build, rtol=1e-10, atol=1e-12, dtype_name="float64", same_op_names=True, n32=None):
    """The same variables, op names (``same_op_names``) and values: within ``rtol``/``atol`` in float64, within
    ``n32`` float32 roundings (tests/_tolerance.py) in float32."""
    theirs = run_program(tf1, build, dtype_name)
    ours = run_program(core, build, dtype_name)
    assert ours["vars"] == theirs["vars"]
    assert ours["trainable"] == theirs["trainable"]
    if same_op_names:      # the forward graph: the same op types, with the same names
        assert collections.Counter(t for _, t in ours["ops"]) == collections.Counter(t for _, t in theirs["ops"])
        assert sorted(ours["ops"]) == sorted(theirs["ops"])
    assert len(ours["values"]) == len(theirs["values"])
    for i, (a, b) in enumerate(zip(ours["values"], theirs["values"])):
        assert b is not None and a is not None, i
        if dtype_name == "float32":
            assert_float32_close(a, b, n=n32, err_msg="value %d" % i)
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg="value %d" % i)
    return ours, theirs


# ---------------------------------------------------------------------------------------------------------
# every cell: two steps from a random state


CELLS = {
    "basic_rnn": lambda rc, tf: rc.BasicRNNCell(5),
    "basic_rnn_relu": lambda rc, tf: rc.BasicRNNCell(5, activation=tf.nn.relu),
    "basic_rnn_relu_name": lambda rc, tf: rc.BasicRNNCell(5, activation="relu"),
    "basic_lstm": lambda rc, tf: rc.BasicLSTMCell(5),
    "basic_lstm_concat_state": lambda rc, tf: rc.BasicLSTMCell(5, forget_bias=0.5, state_is_tuple=False),
    "lstm": lambda rc, tf: rc.LSTMCell(5),
    "lstm_peep_clip_proj": lambda rc, tf: rc.LSTMCell(5, use_peepholes=True, cell_clip=0.3, num_proj=3,
                                                       proj_clip=0.2, forget_bias=0.7),
    "lstm_peep_proj_concat": lambda rc, tf: rc.LSTMCell(5, use_peepholes=True, num_proj=3, state_is_tuple=False),
    "gru": lambda rc, tf: rc.GRUCell(5),
    "gru_sigmoid": lambda rc, tf: rc.GRUCell(5, activation=tf.sigmoid),
    "multi": lambda rc, tf: rc.MultiRNNCell([rc.BasicLSTMCell(4), rc.GRUCell(3), rc.LSTMCell(3, num_proj=2)]),
    "multi_concat": lambda rc, tf: rc.MultiRNNCell([rc.BasicRNNCell(4), rc.GRUCell(3)], state_is_tuple=False),
    "residual": lambda rc, tf: rc.ResidualWrapper(rc.GRUCell(D)),
    "residual_fn": lambda rc, tf: rc.ResidualWrapper(rc.BasicRNNCell(D), residual_fn=lambda i, o: i * 2.0 + o),
    "dropout_keep_1": lambda rc, tf: rc.DropoutWrapper(rc.BasicLSTMCell(4)),
    "device": lambda rc, tf: rc.DeviceWrapper(rc.GRUCell(3), "/cpu:0"),
    "multi_of_wrappers": lambda rc, tf: rc.MultiRNNCell([rc.ResidualWrapper(rc.BasicLSTMCell(D)),
                                                         rc.DropoutWrapper(rc.GRUCell(2))]),
}


def two_steps(make_cell, scope=None):
    def build(tf, dtype):
        x1 = tf.placeholder(dtype, [None, D], name="x1")
        x2 = tf.placeholder(dtype, [None, D], name="x2")
        cell = make_cell(tf.nn.rnn_cell, tf)
        s0 = random_state(tf, cell.state_size, dtype)
        o1, s1 = cell(x1, s0, scope=scope)
        o2, s2 = cell(x2, s1, scope=scope)
        weights = [v.name for v in cell.trainable_variables]
        # ours: every cell lists its variables; TF's wrappers (and stacks of them) list none (tf-keras's legacy
        # layers do not track the wrapped cell)
        if tf is core or "Wrapper" not in repr(_nest.flatten(getattr(cell, "_cells", [cell]))):
            assert weights == [v.name for v in tf.trainable_variables()], weights
        return [x1, x2] + _nest.flatten(s0), {x1: X1, x2: X2}, (o1, s1, o2, s2)
    return build


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_cell_two_steps_match_tf1(tf1, kind):
    ours, theirs = assert_programs_match(tf1, two_steps(CELLS[kind]))
    # the state's structure and type: LSTMStateTuple where TF has one
    assert repr(_nest.map_structure(lambda t: 0, ours["structure"])).replace("tfevents.core.", "") == \
        repr(_nest.map_structure(lambda t: 0, theirs["structure"]))


def test_cells_in_float32_and_with_scope_argument(tf1):
    make = CELLS["lstm_peep_clip_proj"]
    # float32 roundings (tests/_tolerance.py), forward and back over the two steps: the gates' dot (4 inputs and
    # 3 projected), the projection's (5), the peepholes and c = f·c + i·g (6); a sigmoid and a tanh along a step's
    # path, each counted three times (the function, then twice in its derivative's 1 − y²); the weights'
    # gradients sum the batch's 3 rows of both steps
    assert_programs_match(tf1, two_steps(make, scope="my_lstm"), dtype_name="float32",
                          n32=2 * 2 * ((4 + 3) + 5 + 6) + 2 * 2 * 3 * ELEMENTWISE_ULPS + 2 * 3)
    ours = run_program(core, two_steps(make, scope="my_lstm"))
    assert ours["vars"][0][0] == "my_lstm/kernel:0"


def test_kernel_layout_and_default_initializers(tf1):
    """Shapes ``[input + hidden, gates * hidden]``; biases zeros (GRU gates: ones); kernels glorot-uniform."""
    def build(tf):
        x = tf.placeholder(tf.float32, [None, 6])
        for cell in (tf.nn.rnn_cell.BasicLSTMCell(8), tf.nn.rnn_cell.GRUCell(7), tf.nn.rnn_cell.BasicRNNCell(5),
                     tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, num_proj=2)):
            cell(x, cell.zero_state(2, tf.float32))
        variables = tf.global_variables()
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        return {v.name: sess.run(v) for v in variables}

    with tf1.Graph().as_default():
        theirs = build(tf1)
    with core.Graph().as_default():
        ours = build(core)
    assert list(ours) == list(theirs)
    assert ours["basic_lstm_cell/kernel:0"].shape == (14, 32)
    for name, value in ours.items():
        assert value.shape == theirs[name].shape, name
        if "bias" in name:
            np.testing.assert_array_equal(value, theirs[name], err_msg=name)
        else:    # glorot uniform: the same bound, values drawn by each library
            shape = value.shape
            fan_in, fan_out = (shape[0], shape[1]) if len(shape) == 2 else (shape[0], shape[0])
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            assert np.abs(value).max() <= limit and np.abs(theirs[name]).max() <= limit, name
            if value.size >= 50:     # not a constant: spread over the range (uniform: std = limit / sqrt(3))
                assert value.std() > limit / 3, name
    np.testing.assert_array_equal(ours["gru_cell/gates/bias:0"], np.ones(14))


def test_zero_state_values_shapes_and_structure(tf1):
    def build(tf):
        x = tf.placeholder(tf.float32, [None, 3])
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(4), tf.nn.rnn_cell.GRUCell(2),
                                            tf.nn.rnn_cell.LSTMCell(3, num_proj=2)])
        dynamic = cell.zero_state(tf.shape(x)[0], tf.float32)
        static = tf.nn.rnn_cell.BasicLSTMCell(4, state_is_tuple=False).zero_state(5, tf.float64)
        initial = tf.nn.rnn_cell.GRUCell(3).get_initial_state(inputs=tf.zeros([2, 3], tf.float64))
        shapes = [t.shape.as_list() for t in _nest.flatten((dynamic, static, initial))]
        values = tf.Session().run([dynamic, static, initial], {x: np.ones((6, 3))})
        return shapes, values, [t.dtype.name for t in _nest.flatten((dynamic, static, initial))]

    with tf1.Graph().as_default():
        theirs = build(tf1)
    with core.Graph().as_default():
        ours = build(core)
    assert ours[0] == theirs[0] == [[None, 4], [None, 4], [None, 2], [None, 3], [None, 2], [5, 8], [2, 3]]
    assert ours[2] == theirs[2]
    for a, b in zip(_nest.flatten(ours[1]), _nest.flatten(theirs[1])):
        np.testing.assert_array_equal(a, b)
    assert type(ours[1][0][0]).__name__ == "LSTMStateTuple"


def make_custom_cell_class(tf):
    """A TF1-style user cell: ``call`` creates its weight with ``tf.get_variable``."""
    class MinimalCell(tf.nn.rnn_cell.RNNCell):
        def __init__(self, units):
            super().__init__()
            self._units = units

        @property
        def state_size(self):
            return self._units

        @property
        def output_size(self):
            return self._units

        def call(self, inputs, state):
            w = tf.get_variable("w", [int(inputs.shape[-1]) + self._units, self._units], dtype=inputs.dtype)
            h = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), w)) + state * 0.5
            return h, h
    return MinimalCell


def test_subclassed_rnn_cell_creates_and_reuses_variables_like_tf1(tf1):
    def build(tf, dtype):
        x1 = tf.placeholder(dtype, [None, D], name="x1")
        x2 = tf.placeholder(dtype, [None, D], name="x2")
        cell = tf.nn.rnn_cell.MultiRNNCell([make_custom_cell_class(tf)(3), tf.nn.rnn_cell.GRUCell(2)])
        s0 = random_state(tf, cell.state_size, dtype)
        with tf.variable_scope("outer"):
            o1, s1 = cell(x1, s0)
        o2, s2 = cell(x2, s1)
        assert [v.name for v in cell.trainable_variables] == [v.name for v in tf.trainable_variables()]
        return [x1, x2] + _nest.flatten(s0), {x1: X1, x2: X2}, (o1, s1, o2, s2)

    ours, _ = assert_programs_match(tf1, build)
    assert [n for n, _ in ours["vars"]][0] == "outer/multi_rnn_cell/cell_0/minimal_cell/w:0"


def test_cells_share_variables_by_scope_and_reuse_argument(tf1):
    """A second cell built with ``reuse=True`` in the same scope uses the first one's variables; a second cell of
    the same name without it gets its own scope (``g_1``), as in TF1."""
    def build(tf, dtype):
        x = tf.placeholder(dtype, [None, D], name="x")
        with tf.variable_scope("shared"):
            a = tf.nn.rnn_cell.BasicLSTMCell(3, name="lstm")
            oa, _ = a(x, a.zero_state(B, dtype))
        with tf.variable_scope("shared"):
            b = tf.nn.rnn_cell.BasicLSTMCell(3, name="lstm", reuse=True)
            ob, sb = b(x * 2.0, b.zero_state(B, dtype))
        g1, g2 = tf.nn.rnn_cell.GRUCell(2, name="g"), tf.nn.rnn_cell.GRUCell(2, name="g")
        og1, _ = g1(x, g1.zero_state(B, dtype))
        og2, _ = g2(x, og1)
        return [x], {x: X1}, (oa, ob, sb, og1, og2)

    ours, _ = assert_programs_match(tf1, build)
    assert [n for n, _ in ours["vars"]] == ["shared/lstm/kernel:0", "shared/lstm/bias:0"] + [
        "%s/%s:0" % (g, v) for g in ("g", "g_1") for v in ("gates/kernel", "gates/bias", "candidate/kernel",
                                                           "candidate/bias")]


# ---------------------------------------------------------------------------------------------------------
# dropout


class _Identity:
    """A cell (for both libraries) that returns its input and keeps its state: dropout made visible."""

    @staticmethod
    def make(tf, state_is_lstm=False):
        class IdentityCell(tf.nn.rnn_cell.RNNCell):
            @property
            def state_size(self):
                return tf.nn.rnn_cell.LSTMStateTuple(100, 100) if state_is_lstm else 100

            @property
            def output_size(self):
                return 100

            def call(self, inputs, state):
                return inputs, _nest.map_structure(tf.identity, state)
        return IdentityCell()


def _dropout_program(tf):
    ones = tf.ones([200, 100])
    keep = tf.placeholder(tf.float32, [])
    state_cell = tf.nn.rnn_cell.DropoutWrapper(_Identity.make(tf, True), state_keep_prob=0.6, seed=1)
    out = {}
    _, (c, h) = state_cell(ones, tf.nn.rnn_cell.LSTMStateTuple(ones, ones))
    out["state_c"], out["state_h"] = c, h
    cell = tf.nn.rnn_cell.DropoutWrapper(_Identity.make(tf), input_keep_prob=0.8, output_keep_prob=0.75)
    out["in_out"], _ = cell(ones, ones)
    fed = tf.nn.rnn_cell.DropoutWrapper(_Identity.make(tf), output_keep_prob=keep)
    out["fed"], _ = fed(ones, ones)
    var = tf.nn.rnn_cell.DropoutWrapper(_Identity.make(tf), input_keep_prob=0.7, output_keep_prob=0.9,
                                        variational_recurrent=True, input_size=100, dtype=tf.float32)
    out["var1"], _ = var(ones, ones)
    out["var2"], _ = var(ones, ones)
    sess = tf.Session()
    first = sess.run(out, {keep: 0.5})
    second = sess.run(out, {keep: 1.0})
    return first, second


def test_dropout_wrapper_statistics_match_tf1(tf1):
    with tf1.Graph().as_default():
        theirs = _dropout_program(tf1)
    with core.Graph().as_default():
        ours = _dropout_program(core)
    for first, second in (theirs, ours):
        np.testing.assert_array_equal(first["state_c"], 1.0)                  # LSTM memory never dropped
        kept = first["state_h"] != 0
        assert abs(kept.mean() - 0.6) < 0.02
        np.testing.assert_allclose(first["state_h"][kept], 1 / 0.6, rtol=1e-6)
        kept = first["in_out"] != 0                                           # both input and output dropout
        assert abs(kept.mean() - 0.8 * 0.75) < 0.02
        np.testing.assert_allclose(first["in_out"][kept], 1 / (0.8 * 0.75), rtol=1e-5)
        assert abs((first["fed"] != 0).mean() - 0.5) < 0.02                   # keep_prob fed as a tensor
        np.testing.assert_array_equal(second["fed"], 1.0)
        # variational: one mask per row pattern shared by every row and both steps of a run, new in each run
        np.testing.assert_array_equal(first["var1"], first["var2"])
        np.testing.assert_array_equal(first["var1"], np.broadcast_to(first["var1"][:1], (200, 100)))
        assert abs((first["var1"][0] != 0).mean() - 0.63) < 0.15
        assert not np.array_equal(first["var1"], second["var1"])


def test_dropout_wrapper_with_keep_prob_one_adds_no_dropout_ops(tf1):
    def count(tf):
        with tf.Graph().as_default() as g:
            cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(2), input_keep_prob=1.0)
            cell(tf.ones([1, 2]), tf.zeros([1, 2]))
            return sorted(op.type for op in g.get_operations() if "dropout" in op.name)
    assert count(core) == count(tf1) == []


# ---------------------------------------------------------------------------------------------------------
# bad input: the same errors as TF1


def _raises_in_both(tf1, program, exc, match):
    for tf in (tf1, core):
        with tf.Graph().as_default():
            with pytest.raises(exc, match=match):
                program(tf)


@pytest.mark.parametrize("program, exc, match", [
    (lambda tf: tf.nn.rnn_cell.BasicLSTMCell(3)(tf.ones([2, 3, 4]), tf.nn.rnn_cell.LSTMStateTuple(
        tf.zeros([2, 3]), tf.zeros([2, 3]))), ValueError, "expected ndim=2, found ndim=3"),
    (lambda tf: tf.nn.rnn_cell.GRUCell(3)(tf.ones([2, 4], tf.int32), tf.zeros([2, 3], tf.int32)), ValueError,
     "RNN cell only supports floating point inputs"),
    (lambda tf: tf.nn.rnn_cell.BasicRNNCell(3)(tf.placeholder(tf.float32, [2, None]), tf.zeros([2, 3])),
     ValueError, "Expected inputs.shape\\[-1\\] to be known"),
    (lambda tf: tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(3), output_keep_prob=1.5), ValueError,
     "Parameter output_keep_prob must be between 0 and 1"),
    (lambda tf: tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(3), variational_recurrent=True),
     ValueError, "dtype must be provided"),
    (lambda tf: tf.nn.rnn_cell.DropoutWrapper(object()), TypeError, "is not an RNNCell"),
    (lambda tf: tf.nn.rnn_cell.MultiRNNCell([]), ValueError, "Must specify at least one cell"),
    (lambda tf: tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(2)], state_is_tuple=False), ValueError,
     "Some cells return tuples of states"),
    (lambda tf: tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(2)])(tf.ones([1, 2]), tf.zeros([1, 2])),
     ValueError, "Expected state to be a tuple"),
    (lambda tf: tf.nn.rnn_cell.GRUCell(2).get_initial_state(), ValueError, "batch_size and dtype cannot be None"),
    (lambda tf: tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.GRUCell(3))(tf.ones([1, 2]), tf.zeros([1, 3])),
     ValueError, "incompatible|not compatible"),
])
def test_bad_input_raises_like_tf1(tf1, program, exc, match):
    _raises_in_both(tf1, program, exc, match)


def test_existing_variables_without_reuse_raise_like_tf1(tf1):
    def program(tf):
        x = tf.ones([1, 2])
        tf.get_variable("gru_cell/gates/kernel", [4, 4])
        tf.nn.rnn_cell.GRUCell(2)(x, tf.zeros([1, 2]))
    _raises_in_both(tf1, program, ValueError, "already exists")
