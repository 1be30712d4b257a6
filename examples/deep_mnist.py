import os
import numpy as np
if os.environ.get("EXAMPLE_BACKEND") == "tensorflow":
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
else:
    from tfevents import core as tf

# Port of TF1's "Deep MNIST for Experts" tutorial (mnist_deep.py): conv 5x5x32 -> max pool 2x2 -> conv 5x5x64 ->
# max pool 2x2 -> dense 1024 -> dropout (keep_prob fed) -> dense 10, sparse softmax cross-entropy, Adam 1e-4,
# accuracy, scalar summaries and the graph in TensorBoard, a Saver checkpoint restored in a new Session.
# MNIST is replaced by a seeded synthetic data set (class-dependent strokes plus noise). The initial weights come
# from a seeded numpy generator and are loaded with Variable.load, so TensorFlow and tfevents.core start from the
# same point: the printed losses ("step N loss X") are compared across backends by tests/e2e/test_cnn_examples.py.
# Dropout masks are random (they cannot match across backends), so the compared steps feed keep_prob = 1.0; a few
# further steps train with keep_prob = 0.5 as the tutorial does.

import glob
import tempfile

NAME = "deep_mnist"
BATCH, STEPS, DROPOUT_STEPS = 50, 30, 3


def make_out_dir(name):
    base = os.environ.get("EXAMPLE_OUT")
    if base:
        if not os.path.isdir(base):
            os.makedirs(base)
        return tempfile.mkdtemp(prefix=name + ".", dir=base)
    return tempfile.mkdtemp(prefix=name + ".")


def synthetic_mnist(n, seed):
    """n 28x28 images (flattened, in [0, 1]) of 10 classes: class c draws a bar at an angle of its own."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, n)
    yy, xx = np.mgrid[0:28, 0:28] - 13.5
    angles = labels * np.pi / 10 + rng.normal(0, 0.1, n)
    dist = np.abs(np.cos(angles)[:, None, None] * yy - np.sin(angles)[:, None, None] * xx)
    # strokes in [0, 0.7] plus noise in [0, 0.3]: no clipping, so no flat saturated patches. (Identical non-zero
    # patches give max-pool ties that BLAS may round differently by position; TF breaks them by position.)
    images = 0.7 * np.exp(-dist ** 2 / 4.0) * (np.hypot(yy, xx) < 12) + rng.uniform(0, 0.3, (n, 28, 28))
    return images.reshape(n, 784).astype(np.float32), labels.astype(np.int64)


def conv2d(x, W):
    return tf.nn.conv2d(x, W, strides=[1, 1, 1, 1], padding='SAME')


def max_pool_2x2(x):
    return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding='SAME')


def weight_variable(shape):
    initial = tf.truncated_normal(shape, stddev=0.1)
    return tf.Variable(initial)


def bias_variable(shape):
    initial = tf.constant(0.1, shape=shape)
    return tf.Variable(initial)


def deepnn(x):
    with tf.name_scope('reshape'):
        x_image = tf.reshape(x, [-1, 28, 28, 1])
    with tf.name_scope('conv1'):
        W_conv1 = weight_variable([5, 5, 1, 32])
        b_conv1 = bias_variable([32])
        h_conv1 = tf.nn.relu(conv2d(x_image, W_conv1) + b_conv1)
    with tf.name_scope('pool1'):
        h_pool1 = max_pool_2x2(h_conv1)
    with tf.name_scope('conv2'):
        W_conv2 = weight_variable([5, 5, 32, 64])
        b_conv2 = bias_variable([64])
        h_conv2 = tf.nn.relu(conv2d(h_pool1, W_conv2) + b_conv2)
    with tf.name_scope('pool2'):
        h_pool2 = max_pool_2x2(h_conv2)
    with tf.name_scope('fc1'):
        W_fc1 = weight_variable([7 * 7 * 64, 1024])
        b_fc1 = bias_variable([1024])
        h_pool2_flat = tf.reshape(h_pool2, [-1, 7 * 7 * 64])
        h_fc1 = tf.nn.relu(tf.matmul(h_pool2_flat, W_fc1) + b_fc1)
    with tf.name_scope('dropout'):
        keep_prob = tf.placeholder(tf.float32)
        h_fc1_drop = tf.nn.dropout(h_fc1, keep_prob)
    with tf.name_scope('fc2'):
        W_fc2 = weight_variable([1024, 10])
        b_fc2 = bias_variable([10])
        y_conv = tf.matmul(h_fc1_drop, W_fc2) + b_fc2
    return y_conv, keep_prob, [W_conv1, b_conv1, W_conv2, b_conv2, W_fc1, b_fc1, W_fc2, b_fc2]


OUT = make_out_dir(NAME)
print("output dir:", OUT)

x = tf.placeholder(tf.float32, [None, 784])
y_ = tf.placeholder(tf.int64, [None])
y_conv, keep_prob, params = deepnn(x)

with tf.name_scope('loss'):
    cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels=y_, logits=y_conv)
cross_entropy = tf.reduce_mean(cross_entropy)

with tf.name_scope('adam_optimizer'):
    train_step = tf.train.AdamOptimizer(1e-4).minimize(cross_entropy)

with tf.name_scope('accuracy'):
    correct_prediction = tf.equal(tf.argmax(y_conv, 1), y_)
    correct_prediction = tf.cast(correct_prediction, tf.float32)
accuracy = tf.reduce_mean(correct_prediction)

tf.summary.scalar('cross_entropy', cross_entropy)
tf.summary.scalar('accuracy', accuracy)
merged = tf.summary.merge_all()
saver = tf.train.Saver()

# identical initial weights on both backends: truncated normal (stddev 0.1) and 0.1 biases, drawn by numpy
rng = np.random.RandomState(2017)
initial = []
for p in params:
    shape = p.get_shape().as_list()
    if len(shape) == 1:
        initial.append(np.full(shape, 0.1, np.float32))
    else:
        initial.append(np.clip(rng.normal(0, 0.1, shape), -0.2, 0.2).astype(np.float32))

train_x, train_y = synthetic_mnist(BATCH * STEPS, seed=1)
test_x, test_y = synthetic_mnist(500, seed=2)

with tf.Session() as sess:
    writer = tf.summary.FileWriter(OUT + '/train', sess.graph)
    sess.run(tf.global_variables_initializer())
    for p, value in zip(params, initial):
        p.load(value, sess)
    acc0 = sess.run(accuracy, feed_dict={x: test_x, y_: test_y, keep_prob: 1.0})
    losses = []
    for i in range(STEPS):
        batch = slice(i * BATCH, (i + 1) * BATCH)
        feed = {x: train_x[batch], y_: train_y[batch], keep_prob: 1.0}
        summary, loss, _ = sess.run([merged, cross_entropy, train_step], feed_dict=feed)
        writer.add_summary(summary, i)
        losses.append(loss)
        print('step %d loss %.9g' % (i, loss))
    for i in range(DROPOUT_STEPS):       # the tutorial's dropout training: masks differ per backend, not compared
        feed = {x: train_x[:BATCH], y_: train_y[:BATCH], keep_prob: 0.5}
        assert np.isfinite(sess.run([cross_entropy, train_step], feed_dict=feed)[0])
    acc = sess.run(accuracy, feed_dict={x: test_x, y_: test_y, keep_prob: 1.0})
    print('test accuracy %.4f (from %.4f)' % (acc, acc0))
    writer.close()
    save_path = saver.save(sess, os.path.join(OUT, 'model.ckpt'))
    w_fc2 = sess.run(params[-2])

assert losses[-1] < losses[0], losses
assert acc > acc0, (acc0, acc)

with tf.Session() as sess:                  # restored into a fresh session: same weights, same accuracy
    saver.restore(sess, save_path)
    np.testing.assert_array_equal(sess.run(params[-2]), w_fc2)
    assert abs(sess.run(accuracy, feed_dict={x: test_x, y_: test_y, keep_prob: 1.0}) - acc) < 1e-6

events = glob.glob(os.path.join(OUT, 'train', 'events.out.tfevents.*'))
assert len(events) == 1, events
print("EXAMPLE OK " + NAME)
