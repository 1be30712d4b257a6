"""The demo's graph, TF1 code written against the ``tf`` module it is given (``tfevents.core`` or
``tensorflow.compat.v1``)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .config import CNN_DENSE, CNN_FILTERS, IMAGE_SIDE, LAYERS, N_CLASSES, OPTIMIZERS, SCALAR_TAGS, DemoConfig

FILTERS_TAG = "filters/conv1"


def mlp_logits(tf: Any, X: Any, weights: Optional[List[Any]] = None, endpoints: Optional[Dict[str, Any]] = None) -> Any:
    """The MLP's logits: ``tf.layers.dense`` layers creating their variables, or, given ``weights`` (kernel, bias,
    kernel, bias, ...), the same network on those tensors. ``endpoints["hidden"]`` is set to the last hidden
    layer's activations."""
    if weights is None:
        he_init = tf.variance_scaling_initializer(scale=2.0)
        hidden = X
        for i, units in enumerate(LAYERS):
            hidden = tf.layers.dense(hidden, units, activation=tf.nn.relu, kernel_initializer=he_init,
                                     name="hidden%d" % (i + 1))
        if endpoints is not None:
            endpoints["hidden"] = hidden
        return tf.layers.dense(hidden, N_CLASSES, kernel_initializer=he_init, name="output")
    hidden = X
    for i in range(0, len(weights), 2):
        hidden = tf.matmul(hidden, weights[i]) + weights[i + 1]
        if i < len(weights) - 2:
            hidden = tf.nn.relu(hidden)
    return hidden


def cnn_logits(tf: Any, X: Any, weights: Optional[List[Any]] = None, endpoints: Optional[Dict[str, Any]] = None) -> Any:
    """The CNN's logits, built with ``tf.layers`` (creating its variables) or on given ``weights``; ``endpoints``
    as for :func:`mlp_logits`."""
    images = tf.reshape(X, [-1, IMAGE_SIDE, IMAGE_SIDE, 1])
    if weights is None:
        he_init = tf.variance_scaling_initializer(scale=2.0)
        hidden = images
        for i, filters in enumerate(CNN_FILTERS):
            hidden = tf.layers.conv2d(hidden, filters, 5, padding="same", activation=tf.nn.relu,
                                      kernel_initializer=he_init, name="conv%d" % (i + 1))
            hidden = tf.layers.max_pooling2d(hidden, 2, 2, name="pool%d" % (i + 1))
        hidden = tf.layers.dense(tf.layers.flatten(hidden), CNN_DENSE, activation=tf.nn.relu,
                                 kernel_initializer=he_init, name="hidden")
        if endpoints is not None:
            endpoints["hidden"] = hidden
        return tf.layers.dense(hidden, N_CLASSES, kernel_initializer=he_init, name="output")
    hidden = images
    for kernel, bias in zip(weights[0:4:2], weights[1:4:2]):
        hidden = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(hidden, kernel, [1, 1, 1, 1], "SAME"), bias))
        hidden = tf.nn.max_pool(hidden, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    side = IMAGE_SIDE // 4
    return mlp_logits(tf, tf.reshape(hidden, [-1, side * side * CNN_FILTERS[-1]]), weights[4:])


class Model:
    """The demo's graph (placeholders, the MLP or CNN, the training step, the summary ops), built with ``tf``:
    ``tfevents.core`` or ``tensorflow.compat.v1``."""

    def __init__(self, tf: Any, config: DemoConfig):
        self.tf = tf
        tf.set_random_seed(config.seed)
        self.X = tf.placeholder(tf.float32, shape=(None, IMAGE_SIDE ** 2), name="X")
        self.y = tf.placeholder(tf.int32, shape=(None,), name="y")
        self.network = cnn_logits if config.model == "cnn" else mlp_logits
        with tf.name_scope("dnn"):
            endpoints: Dict[str, Any] = {}
            self.logits = self.network(tf, self.X, endpoints=endpoints)
            self.last_hidden = endpoints["hidden"]     # the Projector's embedding of the test set
        with tf.name_scope("xent"):
            self.loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=self.y, logits=self.logits), name="loss")
        with tf.name_scope("eval"):
            self.predictions = tf.argmax(self.logits, axis=1, output_type=tf.int32, name="predictions")
            self.accuracy = tf.reduce_mean(tf.cast(tf.nn.in_top_k(self.logits, self.y, 1), tf.float32),
                                           name="accuracy")
            self.probabilities = tf.nn.softmax(self.logits, name="probabilities")   # for the PR curves
        self.variables = tf.trainable_variables()
        self.kernels = [v for v in self.variables if v.op.name.endswith("/kernel")]
        self._build_training(tf, config)
        self._build_summaries(tf)

    def _build_training(self, tf: Any, config: DemoConfig) -> None:
        total_steps = config.epochs * (config.n_train // config.batch_size)
        self.global_step = tf.train.get_or_create_global_step()
        with tf.name_scope("train"):
            lr0 = config.initial_learning_rate()
            self.learning_rate = tf.train.polynomial_decay(lr0, self.global_step, total_steps,
                                                           end_learning_rate=lr0 / 100.0, power=1.0)
            class_name, kwargs, _ = OPTIMIZERS[config.optimizer]
            self.optimizer = getattr(tf.train, class_name)(self.learning_rate, **kwargs)
            grads_and_vars = self.optimizer.compute_gradients(self.loss, var_list=self.variables)
            self.gradients = [g for g, _ in grads_and_vars]
            clipped, self.gradient_norm = tf.clip_by_global_norm(self.gradients, config.clip_norm)
            update = self.optimizer.apply_gradients(list(zip(clipped, self.variables)), global_step=self.global_step)
            with tf.control_dependencies([update]), tf.name_scope("max_norm"):   # over each unit's inputs
                max_norm = tf.group(*[tf.assign(w, tf.clip_by_norm(w, config.max_norm,
                                                                   axes=list(range(w.shape.ndims - 1))))
                                      for w in self.kernels])
            self.ema = tf.train.ExponentialMovingAverage(config.ema_decay, num_updates=self.global_step)
            with tf.control_dependencies([max_norm]):
                self.train_op = self.ema.apply(self.variables)
        with tf.name_scope("eval_ema"):      # the network again, on the moving averages of its weights
            hidden = self.network(tf, self.X, [self.ema.average(v) for v in self.variables])
            self.accuracy_ema = tf.reduce_mean(tf.cast(tf.nn.in_top_k(hidden, self.y, 1), tf.float32),
                                               name="accuracy")
        self.slot_names = sorted(self.optimizer.get_slot(v, name).op.name
                                 for v in self.variables for name in self.optimizer.get_slot_names())

    def _build_summaries(self, tf: Any) -> None:
        # scalars: the same op evaluated on a training batch goes to `train`, on the test set to `test`
        scalars = [tf.summary.scalar(tag, t, collections=[]) for tag, t in zip(
            SCALAR_TAGS, (self.loss, self.accuracy, self.learning_rate, self.gradient_norm))]
        self.scalar_summaries = tf.summary.merge(scalars, name="scalar_summaries")
        self.ema_summary = tf.summary.scalar("accuracy_ema", self.accuracy_ema, collections=[])
        # histograms of the kernels and of their (unclipped) gradients; tags "weights/hidden1/kernel", ...
        histograms, self.histogram_tags = [], []
        for v, g in zip(self.variables, self.gradients):
            if v in self.kernels:
                for kind, t in (("weights", v), ("gradients", g)):
                    histograms.append(tf.summary.histogram("%s/%s" % (kind, v.op.name), t, collections=[]))
                    self.histogram_tags.append("%s/%s" % (kind, v.op.name))
        self.histogram_summaries = tf.summary.merge(histograms, name="histogram_summaries")
        images = tf.reshape(self.X[:4], [-1, IMAGE_SIDE, IMAGE_SIDE, 1])
        self.image_summary = tf.summary.image("inputs", images, max_outputs=4, collections=[])
        self.image_tags = ["inputs/image/%d" % i for i in range(4)]
        self.first_filters = self.kernels[0] if len(self.kernels[0].shape) == 4 else None
        if self.first_filters is not None:
            self.image_tags.append(FILTERS_TAG)
