"""TF1 training idioms run as written, compared with tf.compat.v1: max-norm regularization through a
kernel_regularizer that returns None, batch-norm moving statistics through UPDATE_OPS, multi-tower gradient
averaging; plus the Coordinator / FIFOQueue / QueueRunner input pipeline."""
import threading
import time

import numpy as np
import pytest

from _oracle import tf1_and_core
from _tolerance import ELEMENTWISE_ULPS, assert_float32_close
from tfevents import core

RNG = np.random.RandomState(3)
X = RNG.randn(16, 5).astype(np.float32)
Y = RNG.randn(16, 3).astype(np.float32)
K1 = (RNG.randn(5, 8) * 2.0).astype(np.float32)
K2 = RNG.randn(8, 3).astype(np.float32)


def _max_norm_program(tf):
    def max_norm_regularizer(threshold, axes=1, name="max_norm", collection="max_norm"):
        def max_norm(weights):
            clipped = tf.clip_by_norm(weights, clip_norm=threshold, axes=axes)
            clip_weights = tf.assign(weights, clipped, name=name)
            tf.add_to_collection(collection, clip_weights)
            return None  # there is no regularization loss term
        return max_norm

    x = tf.placeholder(tf.float32, [None, 5], name="X")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    reg = max_norm_regularizer(threshold=1.0)
    hidden = tf.layers.dense(x, 8, activation=tf.nn.relu, kernel_regularizer=reg, name="hidden1",
                             kernel_initializer=tf.constant_initializer(K1))
    out = tf.layers.dense(hidden, 3, kernel_regularizer=reg, name="out",
                          kernel_initializer=tf.constant_initializer(K2))
    loss = tf.reduce_mean(tf.square(out - y))
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    clip_all_weights = tf.get_collection("max_norm")
    assert len(clip_all_weights) == 2 and not tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(4):
            sess.run(train, {x: X, y: Y})
            sess.run(clip_all_weights)
        return sess.run(tf.trainable_variables())


def test_max_norm_regularization(tf1):
    want, got = tf1_and_core(tf1, _max_norm_program)
    # float32 roundings (tests/_tolerance.py) of a step: the dense layers' dots of 5 and 8 and biases, relu, the
    # squares' mean of 48; back, δ·wᵀ (3) and the kernels' sums over 16 rows; Momentum's (3); the clip's row norm
    # of 8 squares, square root and quotient; four steps
    step = (5 + 1 + 8 + 1 + 2 + 48) + (2 + 3 + 16 + 16) + 3 + (8 + 3)
    for g, w in zip(got, want):
        assert_float32_close(g, w, n=4 * step)
    assert np.all(np.linalg.norm(got[0], axis=1) <= 1.0 + 1e-6)


def _batch_norm_program(tf):
    x = tf.placeholder(tf.float32, [None, 5], name="X")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    training = tf.placeholder_with_default(False, shape=(), name="training")
    # no bias before batch norm: its gradient is round-off noise, which Adam would amplify
    hidden = tf.layers.dense(x, 8, name="hidden", use_bias=False, kernel_initializer=tf.constant_initializer(K1))
    bn = tf.nn.elu(tf.layers.batch_normalization(hidden, training=training, momentum=0.9))
    out = tf.layers.dense(bn, 3, name="out", kernel_initializer=tf.constant_initializer(K2))
    loss = tf.reduce_mean(tf.square(out - y))
    with tf.name_scope("train"):
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert len(update_ops) == 2
        with tf.control_dependencies(update_ops):
            train = tf.train.AdamOptimizer(0.01).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(5):
            sess.run(train, {x: X[i:i + 8] * (i + 1), y: Y[i:i + 8], training: True})
        names = sorted(v.op.name for v in tf.global_variables())
        return names, sess.run(sorted(tf.global_variables(), key=lambda v: v.op.name)), \
            sess.run(loss, {x: X, y: Y})


def test_batch_norm_update_ops(tf1):
    (want_names, want, want_loss), (names, got, loss) = tf1_and_core(tf1, _batch_norm_program)
    assert names == want_names
    assert "batch_normalization/moving_mean" in names
    # float32 roundings (tests/_tolerance.py) of a step: the dense layers' dots of 5 and 8, batch norm's moments
    # over 8 rows and normalization (a square root, products, sums), elu, the squares' mean of 24; back, the dense
    # layers' sums over 8 rows, batch norm's two sums over 8 rows; Adam's update (8); five steps
    forward = 5 + 2 * 8 + (ELEMENTWISE_ULPS + 4) + ELEMENTWISE_ULPS + (8 + 1) + 2 + 24
    step = forward + (2 + 3 + 8 + 2 * 8 + 8) + 8
    for name, g, w in zip(names, got, want):
        assert_float32_close(g, w, n=5 * step, err_msg=name)
    moving_mean = got[names.index("batch_normalization/moving_mean")]
    assert np.abs(moving_mean).max() > 0.01         # the moving statistics did move
    assert_float32_close(loss, want_loss, n=5 * step + forward, err_msg="loss")


def _tower_program(tf, n_towers=2):
    x = tf.placeholder(tf.float32, [None, 5], name="X")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    opt = tf.train.GradientDescentOptimizer(0.05)
    xs, ys = tf.split(x, n_towers), tf.split(y, n_towers)
    tower_grads = []
    for i in range(n_towers):
        with tf.variable_scope(tf.get_variable_scope(), reuse=tf.AUTO_REUSE):
            with tf.name_scope("tower_%d" % i):
                w = tf.get_variable("w", initializer=K1)
                v = tf.get_variable("v", initializer=K2)
                loss = tf.reduce_mean(tf.square(tf.matmul(tf.tanh(tf.matmul(xs[i], w)), v) - ys[i]))
                tower_grads.append(opt.compute_gradients(loss))
    average_grads = []
    for grad_and_vars in zip(*tower_grads):
        grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
        grad = tf.reduce_mean(tf.concat(grads, 0), 0)
        average_grads.append((grad, grad_and_vars[0][1]))
    train = opt.apply_gradients(average_grads)
    assert len(tf.trainable_variables()) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train, {x: X, y: Y})
        return sess.run(tf.trainable_variables())


def test_multi_tower_gradient_averaging(tf1):
    want, got = tf1_and_core(tf1, _tower_program)
    # float32 roundings (tests/_tolerance.py) of a step: tanh of a dot of 5, a dot of 8, the squares' mean of 24;
    # back, δ·vᵀ (3), tanh's derivative (its ulps thrice, in 1 − y²), the kernels' sums over 8 rows; the towers'
    # mean and the step; three steps
    step = (5 + ELEMENTWISE_ULPS + 8 + 2 + 24) + (2 + 3 + 2 * ELEMENTWISE_ULPS + 1 + 8 + 8) + 2 + 2
    for g, w in zip(got, want):
        assert_float32_close(g, w, n=3 * step)
    assert not np.allclose(got[0], K1)


# ---------------------------------------------------------------------------------------------------------
# Coordinator, FIFOQueue, QueueRunner


def test_python_thread_feeds_queue_until_closed():
    data_x = np.arange(40, dtype=np.float32).reshape(20, 2)
    data_y = np.arange(20, dtype=np.int32)
    with core.Graph().as_default():
        queue = core.FIFOQueue(capacity=6, dtypes=[core.float32, core.int32], shapes=[[2], []])
        x_in = core.placeholder(core.float32, [None, 2])
        y_in = core.placeholder(core.int32, [None])
        enqueue = queue.enqueue_many([x_in, y_in])
        close = queue.close()
        xb, yb = queue.dequeue_many(4)
        assert xb.shape.as_list() == [4, 2] and yb.shape.as_list() == [4]
        w = core.Variable(np.zeros(2, np.float32), name="w")
        train = core.assign_add(w, core.reduce_sum(xb, 0))
        coord = core.train.Coordinator()
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())

            def load():
                with coord.stop_on_exception():
                    for i in range(0, 20, 3):            # uneven chunks, more than the capacity in total
                        sess.run(enqueue, {x_in: data_x[i:i + 3], y_in: data_y[i:i + 3]})
                    sess.run(close)
            thread = threading.Thread(target=load)
            thread.start()
            seen = []
            with pytest.raises(core.errors.OutOfRangeError, match="closed and has insufficient elements"):
                while True:
                    _, labels = sess.run([train, yb])
                    seen.extend(labels.tolist())
            coord.request_stop()
            coord.join([thread])
            assert seen == list(range(20))
            np.testing.assert_array_equal(sess.run(w), data_x.sum(0))     # sums of small integers: exact
            assert sess.run(queue.size()) == 0


def test_queue_runner_and_coordinator():
    with core.Graph().as_default():
        counter = core.Variable(0, dtype=core.int32, name="counter")
        queue = core.FIFOQueue(capacity=5, dtypes=core.int32, shapes=[[]])
        enqueue = queue.enqueue(core.assign_add(counter, 1))
        qr = core.train.QueueRunner(queue, [enqueue] * 2)
        core.train.add_queue_runner(qr)
        batch = queue.dequeue_many(3)
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            coord = core.train.Coordinator()
            threads = core.train.start_queue_runners(sess, coord)
            assert len(threads) == 3                     # two enqueue threads + the closer
            got = [v for _ in range(10) for v in sess.run(batch).tolist()]
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
            assert not any(t.is_alive() for t in threads)
            assert len(got) == 30 and len(set(got)) == 30 and min(got) >= 1   # each counter value once
            assert qr.exceptions_raised == []


def test_coordinator_join_reraises_thread_exception():
    coord = core.train.Coordinator()

    def worker(i):
        with coord.stop_on_exception():
            if i == 1:
                raise RuntimeError("worker 1 failed")
            while not coord.should_stop():
                time.sleep(0.01)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    with pytest.raises(RuntimeError, match="worker 1 failed"):
        coord.join(threads, stop_grace_period_secs=5)
    assert coord.should_stop() and not any(t.is_alive() for t in threads)
    # OutOfRangeError is a clean stop; request_stop after join raises
    clean = core.train.Coordinator()
    clean.request_stop(core.errors.OutOfRangeError(None, "end of input"))
    clean.join([])
    with pytest.raises(ValueError, match="late"):
        clean.request_stop(ValueError("late"))


def test_queue_errors():
    with core.Graph().as_default():
        queue = core.FIFOQueue(3, [core.float32], shapes=[[2]])
        with pytest.raises(ValueError, match="incompatible"):
            queue.enqueue([[1.0, 2.0, 3.0]])
        ph = core.placeholder(core.float32, [None])
        enqueue = queue.enqueue(ph)
        with core.Session() as sess:
            with pytest.raises(core.errors.InvalidArgumentError, match="Shape mismatch"):
                sess.run(enqueue, {ph: [1.0, 2.0, 3.0]})
            sess.run(queue.close())
            with pytest.raises(core.errors.CancelledError, match="closed"):
                sess.run(enqueue, {ph: [1.0, 2.0]})


def test_train_batch_with_queue_runners():
    with core.Graph().as_default():
        counter = core.Variable(0, name="counter")
        features = core.random_uniform([2])
        xb, cb = core.train.batch([features, core.assign_add(counter, 1)], batch_size=4, num_threads=2)
        assert xb.shape.as_list() == [4, 2] and cb.shape.as_list() == [4]
        assert len(core.get_collection(core.GraphKeys.QUEUE_RUNNERS)) == 1
        with core.Session() as sess:
            sess.run(core.global_variables_initializer())
            coord = core.train.Coordinator()
            threads = core.train.start_queue_runners(sess=sess, coord=coord)
            batches = [sess.run([xb, cb]) for _ in range(5)]
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    counts = [int(c) for _, cs in batches for c in cs]
    assert len(set(counts)) == 20 and min(counts) >= 1
    assert all(x.shape == (4, 2) and ((x >= 0) & (x < 1)).all() for x, _ in batches)
