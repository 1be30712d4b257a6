"""variable_scope's naming rules against TF1: unnamed scopes, re-entering a named scope (the TF1 idiom of sharing
a cell by re-entering its scope), re-entering a VariableScope object, variables created inside cond and
while_loop (lifted out of the control-flow context, as TF's init_scope does)."""
import pytest

from _oracle import tf1_and_core


def _names(tf):
    graph = tf.get_default_graph()
    return ([v.op.name for v in tf.global_variables()],
            sorted(op.name for op in graph.get_operations() if op.type in ("Mul", "Add", "AddV2", "MatMul")))


def _reentering(tf):
    x = tf.constant([[1.0, 2.0]])

    def cell(inputs):
        with tf.variable_scope(None, default_name="lstm"):
            w = tf.get_variable("w", [2, 2])
            return tf.matmul(inputs, w)
    with tf.variable_scope("shared"):
        cell(x)
        cell(x)                       # shared/lstm_1
    with tf.variable_scope("shared", reuse=True):
        cell(x)                       # shared/lstm again: the unnamed sub-scopes were closed
    with tf.variable_scope("outer") as outer:
        tf.get_variable("v", [1])
        with tf.variable_scope(None, default_name="inner"):
            tf.get_variable("u", [1])
    with tf.variable_scope(outer, reuse=True):
        y = tf.get_variable("v", [1]) * 2.0       # op in a new name scope "outer_1"
        with tf.variable_scope(None, default_name="inner"):
            z = tf.get_variable("u", [1]) * 3.0
    del y, z
    return _names(tf)


def test_scope_names_and_reuse_equal_tf1(tf1):
    want, got = tf1_and_core(tf1, _reentering)
    assert got == want


def _variables_in_control_flow(tf):
    x = tf.constant([1.0, 2.0])

    def body(i, a):
        with tf.variable_scope("cell", reuse=tf.AUTO_REUSE):
            w = tf.get_variable("w", [2], initializer=tf.ones_initializer())
        return i + 1, a * w
    _, a = tf.while_loop(lambda i, a: i < 3, body, [0, x])
    b = tf.cond(a[0] > 0, lambda: a * tf.get_variable("c", [2], initializer=tf.zeros_initializer()), lambda: a)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run([a, b])
    return [v.op.name for v in tf.global_variables()], [list(v) for v in values]


def test_variables_made_inside_loops_and_conds_live_outside_them(tf1, tf):
    tf.compat.v1.disable_control_flow_v2()
    try:
        want, got = tf1_and_core(tf1, _variables_in_control_flow)
    finally:
        tf.compat.v1.enable_control_flow_v2()
    assert got == want


def test_an_initial_value_from_inside_a_loop_is_refused():
    from tfevents import core as tf
    with tf.Graph().as_default():
        def body(i):
            tf.Variable(tf.cast(i, tf.float32))
            return i + 1
        with pytest.raises(ValueError, match="inside a control-flow construct"):
            tf.while_loop(lambda i: i < 2, body, [0])
