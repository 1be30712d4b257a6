import os
import numpy as np
if os.environ.get("EXAMPLE_BACKEND") == "tensorflow":
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
else:
    from tfevents import core as tf

# A tf.layers CNN in the style of TF1's "layers" tutorial (cnn_mnist.py), as a graph-mode program:
# conv2d(16, 5, same, relu) -> max_pooling2d -> conv2d(32, 3, valid) + batch_normalization(training) + relu ->
# average_pooling2d -> flatten -> dense(128, relu) -> dropout(training) -> dense(10); tf.losses with an L2
# regularizer in the kernel's kernel_regularizer, Momentum with a global step and UPDATE_OPS, tf.metrics accuracy.
# Initial weights are drawn by numpy per variable name and loaded with Variable.load, so both backends start
# from the same point; the printed losses ("step N loss X") are compared by tests/e2e/test_cnn_examples.py. The
# compared steps run with training=True for batch norm and dropout rate 0 (dropout's masks are random).

import tempfile

NAME = "layers_cnn"
BATCH, STEPS = 32, 30


def make_out_dir(name):
    base = os.environ.get("EXAMPLE_OUT")
    if base:
        if not os.path.isdir(base):
            os.makedirs(base)
        return tempfile.mkdtemp(prefix=name + ".", dir=base)
    return tempfile.mkdtemp(prefix=name + ".")


def synthetic_images(n, seed):
    """n 28x28x1 images of 10 classes: class c is a blob at a position of its own, plus noise."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, n)
    yy, xx = np.mgrid[0:28, 0:28]
    cy, cx = 6 + (labels // 5) * 14 + rng.normal(0, 1, n), 4 + (labels % 5) * 5 + rng.normal(0, 1, n)
    blobs = np.exp(-((yy - cy[:, None, None]) ** 2 + (xx - cx[:, None, None]) ** 2) / 8.0)
    images = blobs + rng.uniform(0, 0.8, (n, 28, 28))
    return images[..., None].astype(np.float32), labels.astype(np.int32)


OUT = make_out_dir(NAME)
print("output dir:", OUT)

images = tf.placeholder(tf.float32, [None, 28, 28, 1], name='images')
labels = tf.placeholder(tf.int32, [None], name='labels')
training = tf.placeholder_with_default(False, shape=[], name='training')
drop_rate = tf.placeholder_with_default(0.4, shape=[], name='drop_rate')

with tf.variable_scope('cnn'):
    net = tf.layers.conv2d(images, filters=16, kernel_size=5, padding='same', activation=tf.nn.relu,
                           kernel_regularizer=lambda w: 1e-4 * tf.nn.l2_loss(w))
    net = tf.layers.max_pooling2d(net, pool_size=2, strides=2)
    net = tf.layers.conv2d(net, filters=32, kernel_size=[3, 3], padding='valid', use_bias=False)
    net = tf.layers.batch_normalization(net, training=training)
    net = tf.nn.relu(net)
    net = tf.layers.average_pooling2d(net, pool_size=2, strides=2)
    net = tf.layers.flatten(net)
    net = tf.layers.dense(net, 128, activation=tf.nn.relu)
    net = tf.layers.dropout(net, rate=drop_rate, training=training)
    logits = tf.layers.dense(net, 10)

tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
loss = tf.losses.get_total_loss()
global_step = tf.train.get_or_create_global_step()
update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
with tf.control_dependencies(update_ops):
    train_op = tf.train.MomentumOptimizer(0.01, 0.9).minimize(loss, global_step=global_step)
predictions = tf.argmax(logits, axis=1, output_type=tf.int32)
acc, acc_update = tf.metrics.accuracy(labels=labels, predictions=predictions)

names = sorted(v.op.name for v in tf.global_variables())
print('variables:', ' '.join(names))
expected = ['cnn/batch_normalization/beta', 'cnn/batch_normalization/gamma',
            'cnn/batch_normalization/moving_mean', 'cnn/batch_normalization/moving_variance',
            'cnn/conv2d/bias', 'cnn/conv2d/kernel', 'cnn/conv2d_1/kernel',
            'cnn/dense/bias', 'cnn/dense/kernel', 'cnn/dense_1/bias', 'cnn/dense_1/kernel']
assert [n for n in names if n.startswith('cnn/') and 'Momentum' not in n] == expected, names
assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 1
assert len(update_ops) == 2, update_ops

train_x, train_y = synthetic_images(BATCH * STEPS, seed=3)
test_x, test_y = synthetic_images(400, seed=4)
rng = np.random.RandomState(7)

with tf.Session() as sess:
    writer = tf.summary.FileWriter(OUT + '/train', sess.graph)
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    for v in sorted(tf.trainable_variables(), key=lambda v: v.op.name):   # same start on both backends
        shape = v.get_shape().as_list()
        fan_in = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        if v.op.name.endswith('gamma'):
            value = np.ones(shape)
        elif len(shape) == 1:
            value = rng.uniform(-0.05, 0.05, shape)
        else:
            value = rng.normal(0, np.sqrt(2.0 / fan_in), shape)
        v.load(value.astype(np.float32), sess)
    for i in range(STEPS):
        batch = slice(i * BATCH, (i + 1) * BATCH)
        feed = {images: train_x[batch], labels: train_y[batch], training: True, drop_rate: 0.0}
        value, _ = sess.run([loss, train_op], feed_dict=feed)
        print('step %d loss %.9g' % (i, value))
    assert sess.run(global_step) == STEPS
    feed = {images: train_x[:BATCH], labels: train_y[:BATCH], training: True}     # real dropout (rate 0.4)
    assert np.isfinite(sess.run([loss, train_op], feed_dict=feed)[0])
    for start in range(0, len(test_x), 100):
        sess.run(acc_update, {images: test_x[start:start + 100], labels: test_y[start:start + 100]})
    accuracy = sess.run(acc)
    print('test accuracy %.4f' % accuracy)
    moving_mean = [v for v in tf.global_variables() if v.op.name.endswith('moving_mean')][0]
    assert np.abs(sess.run(moving_mean)).sum() > 0        # UPDATE_OPS ran with each training step
    writer.close()

assert accuracy > 0.3, accuracy
print("EXAMPLE OK " + NAME)
