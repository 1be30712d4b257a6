"""tf.layers, tf.losses, tf.metrics, dropout and in-graph summaries of tfevents.core against TF1."""
import numpy as np
import pytest

from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core

R = np.random.RandomState(42)
X = R.randn(6, 5).astype(np.float32)
ONEHOT = np.eye(4)[[0, 3, 1, 2, 2, 0]]
KERNEL1 = (R.randn(5, 7) * 0.4).astype(np.float32)
BIAS1 = (R.randn(7) * 0.1).astype(np.float32)
KERNEL2 = (R.randn(7, 4) * 0.4).astype(np.float32)


def build_mlp(tf):
    x = tf.placeholder(tf.float32, [None, 5], name="x")
    labels = tf.placeholder(tf.int32, [None, 4], name="labels")
    training = tf.placeholder(tf.bool, [], name="training")
    reg = lambda w: tf.reduce_sum(tf.square(w)) * 0.01  # noqa: E731
    with tf.name_scope("dnn"):
        h = tf.layers.dense(x, 7, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(KERNEL1),
                            bias_initializer=tf.constant_initializer(BIAS1), kernel_regularizer=reg, name="hidden1")
        h = tf.layers.batch_normalization(h, training=training, momentum=0.9, name="bn")
        logits = tf.layers.dense(h, 4, kernel_initializer=tf.constant_initializer(KERNEL2), name="output")
    with tf.name_scope("loss"):
        xent = tf.losses.softmax_cross_entropy(onehot_labels=labels, logits=logits)
        sparse = tf.losses.sparse_softmax_cross_entropy(labels=tf.argmax(labels, 1), logits=logits,
                                                        weights=tf.constant([1.0, 0.0, 2.0, 1.0, 1.0, 0.5]))
        mse = tf.losses.mean_squared_error(labels, tf.nn.softmax(logits), weights=2.0)
        reg_loss = tf.losses.get_regularization_loss()
    acc, acc_update = tf.metrics.accuracy(tf.argmax(labels, 1), tf.argmax(logits, 1))
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    return dict(x=x, labels=labels, training=training, logits=logits, xent=xent, sparse=sparse, mse=mse,
                reg=reg_loss, acc=acc, acc_update=acc_update, updates=update_ops)


def run_mlp(tf, sess, m):
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    feed = {m["x"]: X, m["labels"]: ONEHOT, m["training"]: True}
    train_out = sess.run([m["logits"], m["xent"], m["sparse"], m["mse"], m["reg"]], feed)
    sess.run(m["updates"], feed)
    moving = sess.run([v for v in tf.global_variables() if "moving" in v.name])
    feed[m["training"]] = False
    infer_logits = sess.run(m["logits"], feed)
    first = sess.run(m["acc_update"], feed)
    second = sess.run(m["acc_update"], {m["x"]: X[:2], m["labels"]: ONEHOT[:2], m["training"]: False})
    return train_out + moving + [infer_logits, first, second, sess.run(m["acc"])]


def test_layers_losses_metrics_match_tensorflow(tf1):
    with core.Graph().as_default() as g:
        m = build_mlp(core)
        ours = run_mlp(core, core.Session(), m)
        ours_vars = [v.name for v in core.global_variables()]
        ours_local = [v.name for v in core.local_variables()]
        ours_ops = {op.name for op in g.get_operations()}
        # TF1's: a training tensor puts each update in a cond, whose Merge is the update op
        assert [u.type for u in m["updates"]] == ["Merge", "Merge"]
    with tf1.Graph().as_default() as g:
        m = build_mlp(tf1)
        with tf1.Session() as sess:
            theirs = run_mlp(tf1, sess, m)
        theirs_vars = [v.name for v in tf1.global_variables()]
        theirs_local = [v.name for v in tf1.local_variables()]
        theirs_ops = {op.name for op in g.get_operations()}
    assert ours_vars == theirs_vars        # hidden1/kernel, hidden1/bias, bn/gamma, bn/beta, bn/moving_*, ...
    assert ours_local == theirs_local      # accuracy/total, accuracy/count
    for name in ("dnn/hidden1/MatMul", "dnn/hidden1/BiasAdd", "dnn/hidden1/Relu", "dnn/output/MatMul",
                 "dnn/output/BiasAdd", "accuracy/update_op",
                 "accuracy/value"):
        assert name in ours_ops and name in theirs_ops, name
    labels = ["logits", "xent", "sparse", "mse", "reg", "moving_mean", "moving_var", "infer", "acc1", "acc2",
              "acc"]
    # float32 roundings (tests/_tolerance.py) along the longest path: the dense layers' dots of 5 and 7 and biases,
    # batch norm's moments over 6 rows, the normalization (a square root, products and sums), the cross entropy
    # (exp, a sum of 4, log) and its mean over 6 rows; the regularizer's 35 squares are shorter
    n = (5 + 1) + 2 * 6 + (ELEMENTWISE_ULPS + 4) + (7 + 1) + (2 * ELEMENTWISE_ULPS + 4) + 6
    for label, a, b in zip(labels, ours, theirs):
        assert_float32_close(a, b, n=n, err_msg=label)


def test_dropout_keeps_expected_fraction_and_scales():
    with core.Graph().as_default():
        core.set_random_seed(0)
        x = core.ones([200, 100])
        out = core.nn.dropout(x, keep_prob=0.7)
        training = core.placeholder(core.bool, [])
        layer = core.layers.dropout(x, rate=0.5, training=training)
        sess = core.Session()
        values = sess.run(out)
        kept = values != 0
        assert abs(kept.mean() - 0.7) < 0.02
        np.testing.assert_allclose(values[kept], 1 / 0.7, rtol=1e-6)
        assert not np.array_equal(values, sess.run(out))              # a new mask every run
        np.testing.assert_array_equal(sess.run(layer, {training: False}), np.ones((200, 100)))
        assert abs((sess.run(layer, {training: True}) != 0).mean() - 0.5) < 0.02


def test_summary_ops_match_tf1_tags(tf, tf1):
    images = R.rand(4, 6, 5, 3).astype(np.float32) * 3 - 0.5
    clips = R.uniform(-1, 1, (2, 100)).astype(np.float32)

    def build(tf):
        x = tf.constant(1.5)
        with tf.name_scope("loss"):
            pass
        out = [tf.summary.scalar("loss", x), tf.summary.scalar("loss", x * 2),
               tf.summary.histogram("h", tf.constant([1.0, 2.0, 3.0])),
               tf.summary.image("img", tf.constant(images), max_outputs=2),
               tf.summary.audio("snd", tf.constant(clips), 8000, max_outputs=3),
               tf.summary.text("txt", tf.constant("hello"))]
        return out + [tf.summary.merge_all()]

    def parse(summary_cls, values):
        return [[(v.tag, v.WhichOneof("value")) for v in summary_cls.FromString(b).value] for b in values]

    with core.Graph().as_default():
        ours = core.Session().run(build(core))
    with tf1.Graph().as_default():
        with tf1.Session() as sess:
            theirs = sess.run(build(tf1))
    assert parse(core.Summary, ours) == parse(tf1.Summary, theirs)
    ours_img = core.Summary.FromString(ours[3]).value[0].image
    theirs_img = tf1.Summary.FromString(theirs[3]).value[0].image
    assert (ours_img.height, ours_img.width, ours_img.colorspace) == (theirs_img.height, theirs_img.width,
                                                                       theirs_img.colorspace)
    assert core.Summary.FromString(ours[0]).value[0].simple_value == 1.5
    for i in range(2):   # TF's float rescaling, pixel for pixel
        a = core.Summary.FromString(ours[3]).value[i].image.encoded_image_string
        b = tf1.Summary.FromString(theirs[3]).value[i].image.encoded_image_string
        np.testing.assert_array_equal(tf.image.decode_png(a).numpy(), tf.image.decode_png(b).numpy())


def test_batch_normalization_4d_fused_matches_tensorflow(tf1):
    images = R.randn(3, 4, 4, 2).astype(np.float32) * 2 + 1

    def run(tf, sess_cls):
        x = tf.placeholder(tf.float32, [None, 4, 4, 2])
        training = tf.placeholder(tf.bool, [])
        y = tf.layers.batch_normalization(x, training=training, momentum=0.8,
                                          gamma_initializer=tf.constant_initializer(1.5))
        loss = tf.reduce_sum(y * y * tf.constant(np.arange(96, dtype=np.float32).reshape(3, 4, 4, 2) / 50))
        grad = tf.gradients(loss, x)[0]
        with sess_cls() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run([y, grad], {x: images, training: True})
            sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS), {x: images, training: True})
            moving = sess.run([v for v in tf.global_variables() if "moving" in v.name])
            return out + moving + [sess.run(y, {x: images, training: False})]

    with core.Graph().as_default():
        ours = run(core, core.Session)
    with tf1.Graph().as_default():
        theirs = run(tf1, tf1.Session)
    # float32 roundings (tests/_tolerance.py): the moments over 3·4·4 values, the normalization (a square root,
    # products and sums), then dx's two sums over the 48 values of dy and dy·x̂
    for label, a, b in zip(["y_train", "dx", "moving_mean", "moving_var", "y_infer"], ours, theirs):
        assert_float32_close(a, b, n=2 * 48 + ELEMENTWISE_ULPS + 4 + 2 * 48, err_msg=label)


BN_STEPS = 3


def _train_batch_norm_then_infer(tf, sess_cls, x_shape, axis):
    """``BN_STEPS`` SGD steps through a batch norm whose ``training`` defaults to True (its updates the train op's
    control dependencies), then the same inputs with ``training`` fed False (outputs and gradients), and the
    updates run with it false."""
    batch = np.random.RandomState(9).randn(*x_shape).astype(np.float32) * 2 + 1
    weights = np.linspace(0.5, 1.5, batch.size, dtype=np.float32).reshape(x_shape)
    x = tf.placeholder(tf.float32, [None] + list(x_shape[1:]))
    training = tf.placeholder_with_default(True, [])
    y = tf.layers.batch_normalization(x, axis=axis, training=training, momentum=0.8,
                                      gamma_initializer=tf.constant_initializer(1.5))
    loss = tf.reduce_sum(y * y * tf.constant(weights))
    params = tf.trainable_variables()
    grads = tf.gradients(loss, [x] + params)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    moving = [v for v in tf.global_variables() if "moving" in v.name]
    with sess_cls() as sess:
        sess.run(tf.global_variables_initializer())
        out = []
        for step in range(BN_STEPS):
            out += sess.run([y] + grads + [train], {x: batch * (step + 1)})[:-1]
        out += sess.run(params + moving)
        out += sess.run([y] + grads, {x: batch, training: False})
        sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS), {x: batch * 3, training: False})   # no change
        return out + sess.run(moving)


@pytest.mark.parametrize("x_shape, axis", [((6, 3), -1), ((3, 2, 2, 3), -1), ((3, 3, 2, 2), 1)],
                         ids=["2d", "fused_nhwc", "fused_nchw"])
def test_batch_norm_trained_with_a_training_tensor_matches_tensorflow(tf1, x_shape, axis):
    with core.Graph().as_default():
        ours = _train_batch_norm_then_infer(core, core.Session, x_shape, axis)
    with tf1.Graph().as_default():
        theirs = _train_batch_norm_then_infer(tf1, tf1.Session, x_shape, axis)
    gradients = ("dx_%s", "dgamma_%s", "dbeta_%s")
    labels = [label % step for step in range(BN_STEPS) for label in ("y_%d",) + gradients]
    labels += ["gamma", "beta", "moving_mean", "moving_var", "y_infer"] + [label % "infer" for label in gradients]
    labels += ["moving_mean_after_false", "moving_var_after_false"]
    assert len(ours) == len(theirs) == len(labels)
    # float32 (tests/_tolerance.py), per step: the moments over the N values of a channel, the normalization (a
    # square root, products and sums), the gradients' two sums over the same N values; the small SGD steps and
    # the moving averages hand a step's roundings on without growing them (``BN_STEPS`` times a step's)
    n_values = int(np.prod(x_shape)) // x_shape[axis]
    n = BN_STEPS * (2 * n_values + ELEMENTWISE_ULPS + 4 + 2 * n_values)
    for label, a, b in zip(labels, ours, theirs):
        assert_float32_close(a, b, n=n, err_msg=label)
    moving = labels.index("moving_mean")
    np.testing.assert_array_equal(ours[-2:], ours[moving:moving + 2])    # updates with training false: no change


def test_summary_graph_imports_and_runs_in_tensorflow(tf1):
    with core.Graph().as_default() as g:
        x = core.placeholder(core.float32, [None], name="x")
        core.summary.scalar("avg", core.reduce_mean(x))
        core.summary.histogram("values", x)
        core.summary.text("note", core.constant("hello"))
        core.summary.image("img", core.reshape(x[:12], [1, 2, 2, 3]), max_outputs=1)
        merged = core.summary.merge_all()
        feed = np.linspace(0, 1, 12).astype(np.float32)
        ours = core.Summary.FromString(core.Session().run(merged, {x: feed}))
        gd = g.as_graph_def()
    with tf1.Graph().as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(gd.SerializeToString()), name="")
        with tf1.Session() as sess:
            theirs = tf1.Summary.FromString(sess.run(merged.name, {"x:0": feed}))
    assert [v.tag for v in ours.value] == [v.tag for v in theirs.value] == ["avg", "values", "note", "img/image"]
    assert ours.value[0].simple_value == theirs.value[0].simple_value
    assert ours.value[1].histo.num == theirs.value[1].histo.num == 12
    assert ours.value[2].metadata.plugin_data.plugin_name == theirs.value[2].metadata.plugin_data.plugin_name == "text"
    assert ours.value[3].image.width == theirs.value[3].image.width == 2
