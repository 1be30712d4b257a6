import os
import numpy as np
if os.environ.get("EXAMPLE_BACKEND") == "tensorflow":
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    tf.disable_control_flow_v2()      # TF1's while loops, as TF1 builds dynamic_rnn
else:
    from tfevents import core as tf

# A variable-length sequence classifier as a TF1 graph-mode program: a GRUCell run by dynamic_rnn with
# sequence_length over a padded batch (the batch size is left open: zero state from dtype), softmax classification
# of the final state with tf.layers.dense, tf.losses, Adam, accuracy. The synthetic sequences carry their class in
# the sign pattern of a hidden direction over their valid steps; the padding after each sequence's end is loud
# noise, so only a model that stops at sequence_length learns. The program checks dynamic_rnn's sequence_length
# rules (outputs past a sequence's end are zero, the final state is the output at its last valid step). The
# initial weights come from a seeded numpy generator (Variable.load), so TensorFlow and tfevents.core start from the
# same point: the printed losses ("step N loss X") are compared across backends by tests/e2e/test_rnn_examples.py.

import tempfile

NAME = "sequence_classifier"
BATCH, STEPS, MAX_LEN, DIM, HIDDEN, CLASSES = 32, 30, 12, 6, 16, 3


def make_out_dir(name):
    base = os.environ.get("EXAMPLE_OUT")
    if base:
        if not os.path.isdir(base):
            os.makedirs(base)
        return tempfile.mkdtemp(prefix=name + ".", dir=base)
    return tempfile.mkdtemp(prefix=name + ".")


def synthetic_sequences(n, seed):
    """(inputs [n, MAX_LEN, DIM], lengths [n], labels [n]): sequences of 3..MAX_LEN steps; class c sets the sign of
    a fixed direction on the first and second half of the valid steps to (+, +), (+, -) or (-, +); the padding after
    each sequence's end is uniform noise in [-3, 3]."""
    rng = np.random.RandomState(seed)
    direction = np.linspace(-1, 1, DIM) / np.linalg.norm(np.linspace(-1, 1, DIM))
    signs = np.array([[1, 1], [1, -1], [-1, 1]], np.float64)
    labels = rng.randint(0, CLASSES, n)
    lengths = rng.randint(3, MAX_LEN + 1, n)
    x = rng.normal(0, 0.5, (n, MAX_LEN, DIM))
    for i in range(n):
        half = lengths[i] // 2
        x[i, :half] += signs[labels[i], 0] * direction
        x[i, half:lengths[i]] += signs[labels[i], 1] * direction
        x[i, lengths[i]:] = rng.uniform(-3, 3, (MAX_LEN - lengths[i], DIM))
    return x.astype(np.float32), lengths.astype(np.int32), labels.astype(np.int32)


OUT = make_out_dir(NAME)
print("output dir:", OUT)

inputs = tf.placeholder(tf.float32, [None, MAX_LEN, DIM], name="inputs")
lengths = tf.placeholder(tf.int32, [None], name="lengths")
labels = tf.placeholder(tf.int32, [None], name="labels")

cell = tf.nn.rnn_cell.GRUCell(HIDDEN)
outputs, final_state = tf.nn.dynamic_rnn(cell, inputs, sequence_length=lengths, dtype=tf.float32)
logits = tf.layers.dense(final_state, CLASSES)
loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
predictions = tf.argmax(logits, axis=1, output_type=tf.int32)
accuracy = tf.reduce_mean(tf.cast(tf.equal(predictions, labels), tf.float32))

names = sorted(v.op.name for v in tf.trainable_variables())
print("variables:", " ".join(names))
assert names == ["dense/bias", "dense/kernel", "rnn/gru_cell/candidate/bias", "rnn/gru_cell/candidate/kernel",
                 "rnn/gru_cell/gates/bias", "rnn/gru_cell/gates/kernel"], names
assert outputs.get_shape().as_list() == [None, MAX_LEN, HIDDEN], outputs.get_shape()
assert final_state.get_shape().as_list() == [None, HIDDEN], final_state.get_shape()

train_x, train_len, train_y = synthetic_sequences(BATCH * STEPS, seed=5)
test_x, test_len, test_y = synthetic_sequences(300, seed=6)
rng = np.random.RandomState(11)

with tf.Session() as sess:
    writer = tf.summary.FileWriter(OUT + "/train", sess.graph)
    sess.run(tf.global_variables_initializer())
    for v in sorted(tf.trainable_variables(), key=lambda v: v.op.name):   # same start on both backends
        shape = v.get_shape().as_list()
        if v.op.name.endswith("gates/bias"):
            value = np.ones(shape)                 # GRUCell's default: gates start open
        elif len(shape) == 1:
            value = np.zeros(shape)
        else:
            value = rng.uniform(-1, 1, shape) * np.sqrt(6.0 / sum(shape))      # Glorot uniform
        v.load(value.astype(np.float32), sess)
    feed = {inputs: test_x, lengths: test_len, labels: test_y}
    acc0 = sess.run(accuracy, feed)

    # sequence_length semantics: zero outputs past each end, final state = output at the last valid step
    out_val, state_val = sess.run([outputs, final_state], {inputs: test_x[:20], lengths: test_len[:20]})
    for i in range(20):
        assert not out_val[i, test_len[i]:].any(), (i, test_len[i])
        np.testing.assert_array_equal(state_val[i], out_val[i, test_len[i] - 1])

    for i in range(STEPS):
        batch = slice(i * BATCH, (i + 1) * BATCH)
        value, _ = sess.run([loss, train_op], {inputs: train_x[batch], lengths: train_len[batch],
                                               labels: train_y[batch]})
        print("step %d loss %.9g" % (i, value))
    acc = sess.run(accuracy, feed)
    print("test accuracy %.4f (from %.4f)" % (acc, acc0))
    writer.close()

assert acc > 0.6 and acc > acc0 + 0.2, (acc0, acc)
print("EXAMPLE OK " + NAME)
