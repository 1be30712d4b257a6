"""The Deep MNIST tutorial's training step (conv 5x5x32 SAME + relu -> max pool 2x2 -> conv 5x5x64 -> max pool ->
dense 1024 + relu -> dropout 0.5 -> dense 10, softmax cross-entropy, Adam 1e-4) for benchmarks/core_step.py:
tfevents.core and TF1 build the same graph (the tutorial's code, NHWC); PyTorch runs the same model eagerly
(NCHW, its native layout)."""
from __future__ import annotations

import numpy as np

LR = 1e-4
SHAPES = [(5, 5, 1, 32), (32,), (5, 5, 32, 64), (64,), (7 * 7 * 64, 1024), (1024,), (1024, 10), (10,)]


def data(batch, seed=0):
    rng = np.random.RandomState(seed)
    return rng.rand(batch, 784).astype(np.float32), rng.randint(0, 10, batch).astype(np.int64)


def init_params(seed=1):
    rng = np.random.RandomState(seed)
    return [np.full(s, 0.1, np.float32) if len(s) == 1 else
            np.clip(rng.normal(0, 0.1, s), -0.2, 0.2).astype(np.float32) for s in SHAPES]


def _build(tf):
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.int64, [None])
    keep_prob = tf.placeholder(tf.float32)
    w1, b1, w2, b2, w3, b3, w4, b4 = [tf.Variable(p) for p in init_params()]
    h = tf.reshape(x, [-1, 28, 28, 1])
    for w, b in ((w1, b1), (w2, b2)):
        h = tf.nn.relu(tf.nn.conv2d(h, w, strides=[1, 1, 1, 1], padding="SAME") + b)
        h = tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 7 * 7 * 64]), w3) + b3)
    logits = tf.matmul(tf.nn.dropout(h, keep_prob), w4) + b4
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.train.AdamOptimizer(LR).minimize(loss)
    return x, y, keep_prob, loss, train_op


def _session_step(tf, sess_kwargs, x_val, y_val):
    graph = tf.Graph()
    with graph.as_default():
        x, y, keep_prob, loss, train_op = _build(tf)
        sess = tf.Session(graph=graph, **sess_kwargs)
        sess.run(tf.global_variables_initializer())
    feed = {x: x_val, y: y_val, keep_prob: 0.5}
    fetches = [loss, train_op]
    return lambda: sess.run(fetches, feed)


def core_step_fn(x_val, y_val, threads):
    from tfevents import core as tf
    return _session_step(tf, {}, x_val, y_val)


def tf1_step_fn(x_val, y_val, threads):
    import tensorflow as tf2
    tf = tf2.compat.v1
    config = tf.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads)
    return _session_step(tf, {"config": config}, x_val, y_val)


def torch_step_fn(x_val, y_val, threads):
    import torch
    torch.set_num_threads(threads)
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(7 * 7 * 64, 1024), nn.ReLU(), nn.Dropout(0.5), nn.Linear(1024, 10))
    w1, b1, w2, b2, w3, b3, w4, b4 = init_params()
    with torch.no_grad():     # the same weights; NHWC flatten order differs, which does not change the cost
        for layer, w, b in ((model[0], w1.transpose(3, 2, 0, 1), b1), (model[3], w2.transpose(3, 2, 0, 1), b2),
                            (model[7], w3.T, b3), (model[10], w4.T, b4)):
            layer.weight.copy_(torch.from_numpy(np.ascontiguousarray(w)))
            layer.bias.copy_(torch.from_numpy(b))
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    x = torch.from_numpy(x_val.reshape(-1, 1, 28, 28))
    y = torch.from_numpy(y_val)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step
