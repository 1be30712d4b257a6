"""The graph model and Session of tfevents.core: TF1 naming, scopes, variables, collections, feeds and fetches,
errors, control dependencies, step stats and the exported GraphDef (imported and run by real TensorFlow)."""
import collections

import numpy as np
import pytest

from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def names():
    return [op.name for op in tf.get_default_graph().get_operations()]


def build_small(t):
    """The same small graph for core and TF1: operator/op naming, name scopes, reductions."""
    x = t.placeholder(t.float32, [None, 3], name="x")
    y = t.placeholder(t.float32, [None], name="y")
    with t.name_scope("layer"):
        w = t.constant(np.arange(6, dtype=np.float32).reshape(3, 2) / 10.0, name="w")
        h = t.matmul(x, w)
        h = t.nn.relu(h + 1.0)
        h2 = t.add(h, 2.0)
    with t.name_scope("layer"):
        z = h2 * 3.0 - h / 2.0
    loss = t.reduce_mean(t.square(t.reduce_sum(z, axis=1) - y), name="loss")
    other = t.identity(loss)
    stacked = t.stack([loss, other])
    return x, y, [h, h2, z, loss, stacked, t.argmax(z, axis=1), t.nn.softmax(z), t.cumsum(z, axis=1),
                  t.concat([z, h], 1), t.reduce_max(z, keepdims=True), t.gather(z, [1, 0]), t.shape(z)]


def test_same_graph_same_names_and_values_as_tensorflow(tf1):
    xv = np.array([[1, 2, 3], [4, -5, 6]], np.float32)
    yv = np.array([1, 2], np.float32)
    x, y, outs = build_small(tf)
    ours_names = [(op.name, op.type) for op in tf.get_default_graph().get_operations()]
    ours = tf.Session().run(outs, {x: xv, y: yv})
    with tf1.Graph().as_default() as g:
        x, y, outs = build_small(tf1)
        theirs_names = [(op.name, op.type) for op in g.get_operations()]
        with tf1.Session() as sess:
            theirs = sess.run(outs, {x: xv, y: yv})
    assert ours_names == theirs_names       # `+` is AddV2 in both (TF 1.x graphs wrote Add)
    # float32 roundings (tests/_tolerance.py) along the longest path: the dot of 3, relu(h + 1) + 2, z's product,
    # quotient and difference, the loss's sum of 2, difference, square and mean of 2 (softmax: exp, its sum of 2
    # and quotient); argmax and shape exactly
    for a, b in zip(ours, theirs):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        assert_float32_close(a, b, n=3 + 2 + 3 + 2 + 2 + 3 + ELEMENTWISE_ULPS + 2)


def test_unique_names_and_scopes():
    a = tf.constant(1.0, name="a")
    assert a.name == "a:0"
    assert tf.constant(2.0, name="a").name == "a_1:0"
    assert tf.constant(3.0, name="A").op.name == "A_2"      # TF counts names case-insensitively
    with tf.name_scope("s") as scope:
        assert scope == "s/"
        assert (a + a).op.name == "s/add"
        assert (a + a).op.name == "s/add_1"
        with tf.name_scope("inner"):
            assert tf.identity(a).op.name == "s/inner/Identity"
    with tf.name_scope("s") as scope:
        assert scope == "s_1/"
    with tf.name_scope("s/"):                             # a scope ending in '/' is re-entered as is
        assert tf.identity(a).op.name == "s/Identity"
    with tf.name_scope(None, "default"):
        assert tf.identity(a).op.name == "default/Identity"


def test_summary_tags_are_uniquified_like_tf1():
    loss = tf.constant(0.5)
    with tf.name_scope("loss"):
        pass
    s1 = tf.summary.scalar("loss", loss)
    s2 = tf.summary.scalar("loss", loss)
    acc = tf.summary.scalar("accuracy", loss)
    assert [s1.op.name, s2.op.name, acc.op.name] == ["loss_1", "loss_2", "accuracy"]
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [s1, s2, acc]
    merged = tf.summary.merge_all()
    summary = tf.Summary.FromString(tf.Session().run(merged))
    assert [(v.tag, v.simple_value) for v in summary.value] == [("loss_1", 0.5), ("loss_2", 0.5),
                                                               ("accuracy", 0.5)]
    hist = tf.summary.histogram("weights", tf.constant([1.0, 2.0, 2.0]))
    value = tf.Summary.FromString(tf.Session().run(hist)).value[0]
    assert value.tag == "weights" and value.histo.num == 3 and value.histo.sum == 5.0


def test_variables_collections_and_initializers():
    v = tf.Variable(3.0, name="v")
    w = tf.Variable(tf.zeros([2]), trainable=False)
    local = tf.Variable(1, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="local", trainable=False)
    assert v.name == "v:0" and v.op.name == "v" and v.op.type == "VariableV2"
    assert w.name == "Variable:0"
    assert {"v/read", "v/Assign", "v/initial_value"} <= set(names())
    assert tf.trainable_variables() == [v]
    assert tf.global_variables() == [v, w]
    assert tf.local_variables() == [local]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value local"):
            sess.run(local)
        sess.run(tf.local_variables_initializer())
        assert sess.run(local) == 1
        assert v.eval() == 3.0
        assert sess.run(v.assign_add(2.0)) == 5.0
        assert sess.run(tf.assign_sub(v, 1.0)) == 4.0
        assert sess.run(v.assign(10.0)) == 10.0
        assert sess.run(v * 2) == 20.0


def test_variable_scope_reuse_and_get_variable():
    with tf.name_scope("ns"):
        a = tf.get_variable("a", [2], initializer=tf.ones_initializer())
    assert a.name == "a:0"                               # name scopes do not affect get_variable
    with tf.variable_scope("model"):
        w = tf.get_variable("w", [2, 3])
        with pytest.raises(ValueError, match="already exists"):
            tf.get_variable("w", [2, 3])
    with tf.variable_scope("model", reuse=True):
        assert tf.get_variable("w") is w
        with pytest.raises(ValueError, match="does not exist"):
            tf.get_variable("nope", [1])
    with tf.variable_scope("model") as scope:
        scope.reuse_variables()
        assert tf.get_variable("w", [2, 3]) is w
    with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
        assert tf.get_variable("w", [2, 3]) is w
        fresh = tf.get_variable("fresh", [1])
    assert w.name == "model/w:0" and fresh.name == "model/fresh:0"
    with tf.variable_scope("init", initializer=tf.constant_initializer(7.0)):
        c = tf.get_variable("c", [2])
        d = tf.Variable(0.0)
    assert d.name == "init/Variable:0"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(c), [7.0, 7.0])
        assert np.all(np.abs(sess.run(w)) <= np.sqrt(6.0 / 5.0))   # glorot_uniform bound for [2, 3]


def test_random_initializers_seeded_and_distributed():
    tf.set_random_seed(3)
    u = tf.random_uniform([2000], -2.0, 3.0)
    n = tf.truncated_normal([4000], stddev=2.0)
    vs = tf.variance_scaling_initializer(scale=2.0)([400, 300])
    first = tf.Session().run([u, n, vs])
    second = tf.Session().run([u, n, vs])
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)                # graph seed: same values in a new Session
    assert first[0].min() >= -2.0 and first[0].max() < 3.0 and abs(first[0].mean() - 0.5) < 0.1
    assert np.abs(first[1]).max() <= 4.0 and 1.6 < first[1].std() < 1.9   # truncated at 2 stddev
    assert abs(first[2].std() - np.sqrt(2.0 / 400)) < 0.01 * np.sqrt(2.0 / 400) * 10


def test_feeds_fetch_structures_and_pruning():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    unused = tf.placeholder(tf.float32, name="unused")
    doubled = x * 2.0
    total = tf.reduce_sum(doubled)
    never = unused + 1.0
    Pair = collections.namedtuple("Pair", "a b")
    sess = tf.Session()
    xv = np.ones((3, 2))
    out = sess.run({"t": total, "p": Pair(doubled, [total, (total,)])}, {x: xv})
    assert out["t"] == 12.0 and isinstance(out["p"], Pair)
    assert out["p"].b[0] == 12.0 and out["p"].b[1] == (12.0,)
    assert sess.run(total, {doubled: np.zeros((1, 2))}) == 0.0       # any tensor can be fed
    assert sess.run(total, {"x:0": xv}) == 12.0                        # feeds and fetches by name
    assert sess.run("Sum:0", {x: xv}) == 12.0
    assert sess.run(tf.group(total), {x: xv}) is None
    assert type(sess.run(total, {x: xv})) is np.float32        # a 0-d result is a numpy scalar, as in TF
    with pytest.raises(tf.errors.InvalidArgumentError, match="placeholder tensor 'x'.*float.*\\[\\?,2\\]"):
        sess.run(total)
    assert never is not None                               # 'unused' is never needed, so never complained about
    with pytest.raises(ValueError, match="Cannot feed value of shape \\(3,\\) for Tensor 'x:0'"):
        sess.run(total, {x: np.ones(3)})
    with pytest.raises(TypeError, match="Tensor 'x:0' of dtype float32"):
        sess.run(total, {x: [["a", "b"]]})
    labels = tf.placeholder(tf.int32, [None, 2])
    assert sess.run(labels, {labels: np.array([[1.0, 0.0]])}).dtype == np.int32   # like TF: float -> int


def test_control_dependencies_and_ordering():
    v = tf.Variable(1.0)
    with tf.control_dependencies([tf.assign(v, 5.0)]):
        read_after = tf.identity(v)
    inc = tf.assign_add(v, 1.0)
    both = tf.group(inc, read_after, name="both")
    assert [c.name for c in both.control_inputs] == ["AssignAdd", "Identity"]
    nodes = {n.name: n for n in tf.get_default_graph().as_graph_def().node}
    assert "^Assign" in nodes["Identity"].input
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(read_after) == 5.0
        before, _ = sess.run([v.value(), inc])            # reads in a step see the value before its updates
        assert before == 5.0 and sess.run(v) == 6.0
        fetched = sess.run(v)
        sess.run(inc)
        assert fetched == 6.0                              # a fetched value is a copy, not the variable's buffer


def test_errors_name_the_failing_node():
    a = tf.placeholder(tf.float32, [None, None])
    b = tf.placeholder(tf.float32, [None, None])
    bad = tf.matmul(a, b, transpose_b=True, name="bad_matmul")
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad_matmul"):
        tf.Session().run(bad, {a: np.ones((2, 3)), b: np.ones((2, 4))})
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.matmul(tf.zeros([2, 3]), tf.zeros([4, 2]))
    with pytest.raises(TypeError, match="does not match type"):
        a + tf.constant(1, tf.int32)


def test_default_session_eval_and_run():
    c = tf.constant([1.0, 2.0])
    v = tf.Variable(2.0)
    with pytest.raises(ValueError, match="No default session"):
        c.eval()
    sess = tf.Session()
    with sess.as_default():
        v.initializer.run()
        assert tf.get_default_session() is sess
        assert (c * v).eval().tolist() == [2.0, 4.0]
    with tf.Session() as s2:
        assert tf.get_default_session() is s2
    assert tf.get_default_session() is None


def test_full_trace_fills_step_stats():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.ones((3, 4), np.float32), name="w")
    out = tf.nn.relu(tf.matmul(x, w, name="mm"), name="act")
    sess = tf.Session()
    sess.run(w.initializer)
    md = tf.RunMetadata()
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    value = sess.run(out, {x: np.ones((2, 3))}, options=opts, run_metadata=md)
    assert value.shape == (2, 4)
    dev = md.step_stats.dev_stats
    assert len(dev) == 1 and dev[0].device == "/job:localhost/replica:0/task:0/device:CPU:0"
    stats = {n.node_name: n for n in dev[0].node_stats}
    assert set(stats) == {"w", "w/read", "mm", "act"}
    act = stats["act"]
    assert act.all_start_micros > 1e15 and act.all_end_rel_micros >= 0
    assert list(d.size for d in act.output[0].tensor_description.shape.dim) == [2, 4]
    assert act.output[0].tensor_description.dtype == 1
    assert act.memory[0].total_bytes == 2 * 4 * 4
    md2 = tf.RunMetadata()
    sess.run(out, {x: np.ones((2, 3))}, run_metadata=md2)    # no trace requested: nothing recorded
    assert not md2.step_stats.dev_stats


def test_graph_def_like_tf1():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    with tf.device("/cpu:0"):
        w = tf.get_variable("w", [2, 3])
    y = tf.matmul(x, w, transpose_b=False)
    parts = tf.split(y, 3, axis=1)
    with tf.control_dependencies([parts[0]]):
        z = tf.identity(parts[2], name="z")
    gd = tf.get_default_graph().as_graph_def()
    assert gd.versions.producer == 27
    nodes = {n.name: n for n in gd.node}
    assert nodes["x"].op == "Placeholder" and nodes["x"].attr["dtype"].type == 1
    assert [d.size for d in nodes["x"].attr["shape"].shape.dim] == [-1, 2]
    assert nodes["w"].op == "VariableV2" and nodes["w"].device == "/cpu:0"
    assert nodes["w/read"].op == "Identity" and nodes["w/read"].input == ["w"]
    assert nodes["MatMul"].input == ["x", "w/read"]
    assert nodes["MatMul"].attr["transpose_a"].b is False and nodes["MatMul"].attr["T"].type == 1
    assert nodes["z"].input == ["split:2"]                 # split is already a data input (TF drops ^split)
    with tf.control_dependencies([z]):
        c = tf.constant(1.0, name="c")
        d = c + 1.0                                          # dominated by c, created in the same block
    nodes = {n.name: n for n in tf.get_default_graph().as_graph_def().node}
    assert nodes["c"].input == ["^z"] and nodes["add"].input == ["c", "add/y"]
    shapes = nodes["split"].attr["_output_shapes"].list.shape
    assert len(shapes) == 3 and [d.size for d in shapes[0].dim] == [-1, 1]
    const = nodes["split/split_dim"]
    assert const.op == "Const" and const.attr["value"].tensor.int_val == [1]


def test_graph_def_imports_and_runs_in_tensorflow(tf1):
    """Our GraphDef (forward, gradients, assign-based update) is valid for TF: import it and run it."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    labels = tf.placeholder(tf.int32, [None], name="labels")
    w = tf.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), name="w")
    b = tf.Variable(np.zeros(3, np.float32), name="b")
    logits = tf.nn.bias_add(tf.matmul(x, w), b)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    acc = tf.reduce_mean(tf.cast(tf.nn.in_top_k(logits, labels, 1), tf.float32))
    gw, gb = tf.gradients(loss + 0.1 * tf.nn.l2_loss(w), [w, b])
    step = tf.group(tf.assign_sub(w, 0.5 * gw), tf.assign_sub(b, 0.5 * gb), name="step")
    xv = np.random.RandomState(0).randn(5, 4).astype(np.float32)
    lv = np.array([0, 1, 2, 1, 0], np.int32)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    ours = sess.run([loss, acc, gw, gb], {x: xv, labels: lv})
    sess.run(step, {x: xv, labels: lv})
    ours_after = sess.run([w, b])
    gd = tf.get_default_graph().as_graph_def()
    with tf1.Graph().as_default() as g:
        tf1.import_graph_def(tf1.GraphDef.FromString(gd.SerializeToString()), name="")
        with tf1.Session() as s:
            s.run("init")
            feed = {"x:0": xv, "labels:0": lv}
            theirs = s.run([loss.name, acc.name, gw.name, gb.name], feed)
            s.run("step", feed)
            theirs_after = s.run(["w:0", "b:0"])
    # float32 roundings (tests/_tolerance.py): the logits' dot of 4 and bias, the cross entropy (exp, a sum of 3,
    # log), the mean of 5 and the l2 loss's 12 squares; the gradient's softmax difference, xᵀ·δ (5 rows) and the
    # weight decay; the step's product and difference
    for a, t in zip(ours + ours_after, theirs + theirs_after):
        assert_float32_close(a, t, n=4 + 1 + 2 * ELEMENTWISE_ULPS + 3 + 12 + 2 + 5 + 2 + 2)


def test_registered_stateful_op_with_ref_inputs_updates_in_place():
    """The registry API for fused optimizer updates (as tf.train uses it): ref inputs get the variable slot."""
    from tfevents.core.framework.registry import apply_op, register, shape_same

    def apply_momentum(var, accum, lr, grad, momentum, use_locking=False, use_nesterov=False):
        accum.value *= momentum
        accum.value += grad
        var.value -= lr * accum.value
        return var.value

    register("TestApplyMomentum", apply_momentum, ref_inputs=(0, 1), mutates=True, aliases=True, shape=shape_same)
    v = tf.Variable([1.0, 2.0], name="v")
    acc = tf.Variable([0.0, 0.0], trainable=False, name="acc")
    g = tf.placeholder(tf.float32, [2], name="g")
    read = v * 1.0
    update = apply_op("TestApplyMomentum", [v, acc, 0.5, g, 0.9], dict(use_locking=False, use_nesterov=False),
                      name="update_v")
    assert update.op.type == "TestApplyMomentum" and update.shape.as_list() == [2]
    node = next(n for n in tf.get_default_graph().as_graph_def().node if n.name == "update_v")
    assert node.input[:2] == ["v", "acc"] and node.input[3] == "g"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before, after = sess.run([read, update], {g: [1.0, -2.0]})
        np.testing.assert_allclose(before, [1.0, 2.0])           # the read ran before the in-place update
        np.testing.assert_allclose(after, [0.5, 3.0])
        sess.run(update, {g: [1.0, -2.0]})
        np.testing.assert_allclose(sess.run(acc), [1.9, -3.8])
        np.testing.assert_allclose(sess.run(v), [0.5 - 0.95, 3.0 + 1.9])


def test_tf1_dimension_values():
    x = tf.placeholder(tf.float32, [None, 3])
    assert x.get_shape()[1].value == 3 and x.get_shape()[1] == 3
    assert x.get_shape()[0] is None
    assert x.shape.as_list() == [None, 3]


def test_invalid_op_is_not_left_in_the_graph():
    a, b = tf.zeros([2, 3]), tf.zeros([4, 2])
    before = names()
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.matmul(a, b, name="bad")
    assert names() == before


def test_gradients_api_matches_tensorflow(tf1):
    xv = np.array([0.5, -1.5, 2.0])

    def build(t):
        x = t.placeholder(t.float64, [3], name="x")
        z = t.placeholder(t.float64, [3], name="z")
        a = t.square(x)
        b = a * 3.0
        y1 = t.reduce_sum(a * x)
        y2 = t.reduce_sum(b)
        g_sum = t.gradients([y1, y2], x)
        g_ys = t.gradients([a], x, grad_ys=[t.constant([1.0, 2.0, 3.0], t.float64)])
        g_stop = t.gradients(y1, x, stop_gradients=[a])
        none = t.gradients(y1, z)
        return x, [g_sum[0], g_ys[0], g_stop[0]], none

    x, outs, none = build(tf)
    assert none == [None]
    ours = tf.Session().run(outs, {x: xv})
    gd_names = names()
    assert any(n.startswith("gradients/") for n in gd_names) and any(n.startswith("gradients_1/") for n in gd_names)
    assert any(n.startswith("gradients/mul_grad/") for n in gd_names)
    with tf1.Graph().as_default():
        x, outs, none = build(tf1)
        assert none == [None]
        with tf1.Session() as sess:
            theirs = sess.run(outs, {x: xv})
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_variable_scope_reuse_is_inherited(tf1):
    def build(t):
        with t.variable_scope("outer"):
            v = t.get_variable("v", [1])
            with t.variable_scope("inner"):
                w = t.get_variable("w", [1])
        with t.variable_scope("outer", reuse=True):
            with t.variable_scope("inner", reuse=False):      # cannot switch reuse off inside a reusing scope
                same = t.get_variable("w", [1])
            again = t.get_variable("v", [1])
        with t.variable_scope(None, default_name="block"):
            b1 = t.get_variable("b", [1])
        with t.variable_scope(None, default_name="block"):
            b2 = t.get_variable("b", [1])
        return [v.name, w.name, same is w, again is v, b1.name, b2.name,
                t.get_variable_scope().reuse in (False, None)]

    ours = build(tf)
    with tf1.Graph().as_default():
        theirs = build(tf1)
    assert ours == theirs


def test_buffer_reuse_never_changes_results():
    """Temporaries are overwritten in place only when nothing else reads them (compare with plain numpy)."""
    rng = np.random.RandomState(3)
    xv, wv, bv = rng.randn(4, 3), rng.randn(3, 5), rng.randn(5)
    x = tf.placeholder(tf.float64, [None, 3])
    w = tf.Variable(wv)
    b = tf.constant(bv)
    z = tf.matmul(x, w)                 # read by the bias add and the later reshape: must not be reused
    h = tf.nn.relu(tf.nn.bias_add(z, b))
    other = tf.reshape(z, [-1]) * 2.0
    chain = tf.exp(-tf.square(tf.matmul(x, w) + 1.0))   # a chain of single-reader temporaries
    g = tf.gradients(tf.reduce_sum(h * h) + tf.reduce_sum(chain), [w])[0]
    sess = tf.Session()
    sess.run(w.initializer)
    hv, ov, cv, gv, zv = sess.run([h, other, chain, g, z], {x: xv})
    zr = xv @ wv
    np.testing.assert_allclose(zv, zr)
    np.testing.assert_allclose(hv, np.maximum(zr + bv, 0))
    np.testing.assert_allclose(ov, zr.reshape(-1) * 2)
    np.testing.assert_allclose(cv, np.exp(-np.square(zr + 1)))
    hr = np.maximum(zr + bv, 0)
    dz = 2 * hr * (hr > 0) + np.exp(-np.square(zr + 1)) * -2 * (zr + 1)
    np.testing.assert_allclose(gv, xv.T @ dz)
    np.testing.assert_array_equal(sess.run(w), wv)      # variables are never overwritten
    np.testing.assert_allclose(sess.run(h, {x: xv}), hv)  # and a second run gives the same


def test_variables_created_under_control_dependencies_do_not_inherit_them():
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.control_dependencies([tf.identity(x)]):
        v = tf.Variable(1.0, name="v")
        after = tf.identity(v)
    assert v.initializer.control_inputs == [] and after.op.control_inputs != []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())   # does not need x
        assert sess.run(after, {x: 0.0}) == 1.0


def test_full_training_graph_imports_and_runs_in_tensorflow(tf1):
    """Layers, batch norm, dropout, losses, metrics, Adam with global-norm clipping, a sparse (embedding)
    Momentum update and summaries: every node's op name and attrs are valid for TF, which runs a step."""
    x = tf.placeholder(tf.float32, (None, 6), name="x")
    y = tf.placeholder(tf.int32, (None,), name="y")
    training = tf.placeholder_with_default(False, [], name="training")
    with tf.name_scope("dnn"):
        h = tf.layers.dense(x, 8, activation=tf.nn.relu, name="h1",
                            kernel_regularizer=lambda w: 0.01 * tf.nn.l2_loss(w))
        h = tf.layers.batch_normalization(h, training=training)
        h = tf.layers.dropout(h, 0.3, training=training)
        logits = tf.layers.dense(h, 3, name="out")
    with tf.name_scope("loss"):
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits) + tf.losses.get_regularization_loss()
    _, acc_update = tf.metrics.accuracy(y, tf.argmax(logits, 1, output_type=tf.int32))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        step = tf.train.get_or_create_global_step()
        opt = tf.train.AdamOptimizer(0.01)
        grads_and_vars = opt.compute_gradients(loss)
        clipped, _ = tf.clip_by_global_norm([g for g, _ in grads_and_vars], 1.0)
        train = opt.apply_gradients(zip(clipped, [v for _, v in grads_and_vars]), global_step=step)
    emb = tf.get_variable("emb", [10, 4])
    rows = tf.nn.embedding_lookup(emb, [1, 2, 1])
    sparse_train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(tf.reduce_sum(rows * rows))
    tf.summary.scalar("loss", loss)
    merged = tf.summary.merge_all()
    init, local_init = tf.global_variables_initializer(), tf.local_variables_initializer()
    xv = np.random.RandomState(0).randn(6, 6).astype(np.float32)
    yv = np.arange(6) % 3
    gd = tf.get_default_graph().as_graph_def()
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(gd.SerializeToString()), name="")
        with tf1.Session() as sess:
            sess.run([init.name, local_init.name])
            feed = {"x:0": xv, "y:0": yv, "training:0": True}
            emb_before = sess.run("emb:0")
            for _ in range(3):
                sess.run([train.name, sparse_train.name, acc_update.name, merged.name], feed)
            assert sess.run(step.name) == 3
            emb_after = sess.run("emb:0")
    np.testing.assert_array_equal(emb_after[[0, 3]], emb_before[[0, 3]])   # untouched rows stay
    assert not np.allclose(emb_after[1], emb_before[1])


def test_large_zeros_are_a_fill_like_tf_small_ones_a_const(tf1):
    """TF builds zeros/ones of >= 1000 elements as Fill(shape_as_tensor, Const), so GraphDefs stay small."""
    from tfevents import core

    def initializer_nodes(mod, graph):
        with graph.as_default():
            kwargs = {} if mod is core else {"use_resource": False}
            big = mod.get_variable("big", [784, 300], **kwargs)
            small = mod.get_variable("small", [3], **kwargs)
            mod.train.MomentumOptimizer(0.1, 0.9).minimize(mod.reduce_sum(big * big) + mod.reduce_sum(small))
            return {(n.name, n.op, tuple(n.input)) for n in graph.as_graph_def().node if "/Initializer/" in n.name}

    ours = initializer_nodes(core, core.Graph())
    theirs = initializer_nodes(tf1, tf1.Graph())
    assert ("big/Momentum/Initializer/zeros", "Fill", ("big/Momentum/Initializer/zeros/shape_as_tensor",
                                                       "big/Momentum/Initializer/zeros/Const")) in ours
    slot_nodes = {n for n in theirs if "/Momentum/" in n[0]}
    assert slot_nodes <= ours


def test_fed_placeholder_as_control_input_is_satisfied(tf1):
    """TF runs an op whose control input is a fed placeholder (tf.metrics.mean adds such an edge)."""
    def run(lib):
        with lib.Graph().as_default():
            x = lib.placeholder(lib.float32, [None])
            with lib.control_dependencies([x]):
                y = lib.constant(2.0) * 3.0
            e = lib.expand_dims(x, [1])          # a one-element list axis, as TF accepts
            return lib.Session().run([y, e], {x: [1.0, 2.0]})
    ours, theirs = run(tf), run(tf1)
    assert ours[0] == theirs[0] == 6.0 and ours[1].shape == theirs[1].shape == (2, 1)
