"""The main job (``tfevents demo``): a TF1 program on tfevents.core that logs every kind of summary.

It trains the source material's MLP (784-300-100-10, He init, relu; see ``../shared/examples``), or with
``model="cnn"`` a small Deep-MNIST-style CNN (``tf.layers``: conv 5x5x16 + relu, max pool 2x2, conv 5x5x32 + relu,
max pool 2x2, dense 256 + relu, dense 10), on a seeded synthetic stand-in for MNIST (``synthetic_mnist``: 10 class prototypes, shifted, plus noise; made in code) with

- an optimizer from ``OPTIMIZERS`` (default ``MomentumOptimizer(lr, 0.9)``),
- a learning rate ``polynomial_decay(lr, global_step, total_steps, end=lr / 100, power=1)``,
- gradient clipping ``clip_by_global_norm(grads, clip_norm)`` (the global norm is logged),
- max-norm on the kernels after every step, ``w <- clip_by_norm(w, max_norm, axes=0)``: each unit's incoming
  weight vector is kept within ``max_norm`` (Srivastava et al. 2014),
- an ``ExponentialMovingAverage(decay, num_updates=global_step)`` of the trainable variables, applied after
  the update (its averaged weights are evaluated as ``accuracy_ema``).

Under ``logdir`` it writes the runs ``train`` (batch loss, accuracy, learning_rate, gradient_norm every
``log_every`` steps; kernel and gradient histograms and a confusion-matrix image (matplotlib, ``add_figure``)
once per epoch; four test images and the configuration as text at step 0; the graph with its optimizer slots
and gradients; the RunMetadata of one traced step; SessionLog START, CHECKPOINT with the Saver's checkpoint path,
STOP; for the CNN, the first layer's filters as one image grid per epoch) and ``test`` (the same scalars on the test set once per epoch, plus ``accuracy_ema``), and the GraphDef as
``graph.pbtxt`` / ``graph.pb`` (``tf.train.write_graph``).

The graph is TF1 code written against the ``tf`` module it is given (``from tfevents import core as tf`` by
default; the tests run it on ``tensorflow.compat.v1`` too, as the oracle); ``run_demo`` returns what was logged
so it can be checked against what TensorBoard serves.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, TextIO, Tuple

import numpy as np

from tfevents.proto import event_pb2, summary_pb2
from tfevents.summaries import SummaryWriter

SessionLog = event_pb2.SessionLog

N_CLASSES = 10
IMAGE_SIDE = 28
LAYERS = (300, 100)          # hidden units (the source material's MLP)
CNN_FILTERS = (16, 32)       # the CNN's two 5x5 conv layers
CNN_DENSE = 256
MODELS = ("mlp", "cnn")
SCALAR_TAGS = ("loss", "accuracy", "learning_rate", "gradient_norm")

# name -> (tf.train class, its arguments after the learning rate, default initial learning rate)
OPTIMIZERS: Dict[str, Tuple[str, Dict[str, Any], float]] = {
    "momentum": ("MomentumOptimizer", dict(momentum=0.9), 0.05),
    "nesterov": ("MomentumOptimizer", dict(momentum=0.9, use_nesterov=True), 0.05),
    "sgd": ("GradientDescentOptimizer", {}, 0.2),
    "adam": ("AdamOptimizer", {}, 0.001),
    "rmsprop": ("RMSPropOptimizer", dict(decay=0.9, momentum=0.0, epsilon=1e-10), 0.001),
    "adagrad": ("AdagradOptimizer", {}, 0.05),
    "adadelta": ("AdadeltaOptimizer", {}, 1.0),
    "ftrl": ("FtrlOptimizer", {}, 0.05),
}


@dataclass
class DemoConfig:
    """The demo's options (``tfevents demo --help`` has one flag per field)."""

    logdir: str = os.path.join("runs", "demo")
    model: str = "mlp"                        # "mlp" or "cnn"
    epochs: int = 10
    optimizer: str = "momentum"
    learning_rate: Optional[float] = None     # None: the optimizer's default in OPTIMIZERS
    batch_size: int = 64
    n_train: int = 6144
    n_test: int = 1024
    clip_norm: float = 5.0                    # clip_by_global_norm threshold
    max_norm: float = 2.0                     # bound on each unit's incoming weight norm
    ema_decay: float = 0.99
    noise: float = 0.7                        # pixel noise of the synthetic data
    log_every: int = 8                        # train scalars every this many steps
    seed: int = 0

    def initial_learning_rate(self) -> float:
        return OPTIMIZERS[self.optimizer][2] if self.learning_rate is None else float(self.learning_rate)

    def check(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise ValueError("unknown optimizer %r; choose one of %s" % (self.optimizer, ", ".join(OPTIMIZERS)))
        if self.model not in MODELS:
            raise ValueError("unknown model %r; choose one of %s" % (self.model, ", ".join(MODELS)))
        for name in ("epochs", "batch_size", "n_train", "n_test", "log_every"):
            if getattr(self, name) < 1:
                raise ValueError("%s must be at least 1, got %r" % (name, getattr(self, name)))
        if self.batch_size > self.n_train:
            raise ValueError("batch_size (%d) is larger than n_train (%d)" % (self.batch_size, self.n_train))
        for name, value in (("clip_norm", self.clip_norm), ("max_norm", self.max_norm),
                            ("learning_rate", self.initial_learning_rate())):
            if not value > 0:
                raise ValueError("%s must be positive, got %r" % (name, value))
        if not 0 <= self.ema_decay < 1:
            raise ValueError("ema_decay must be in [0, 1), got %r" % self.ema_decay)


@dataclass
class DemoResult:
    """What the demo logged (values as written, float32) and where."""

    config: DemoConfig
    logdir: str
    train_dir: str
    test_dir: str
    checkpoint_path: str
    graph_files: List[str]
    run_metadata_tag: str
    scalars: Dict[Tuple[str, str], List[Tuple[int, float]]] = field(default_factory=dict)  # (run, tag) -> points
    histogram_tags: List[str] = field(default_factory=list)
    image_tags: List[str] = field(default_factory=list)
    slot_names: List[str] = field(default_factory=list)     # op names of the optimizer's slot variables
    initial_values: Dict[str, np.ndarray] = field(default_factory=dict)   # trainable variables after init
    steps: int = 0
    seconds: float = 0.0


# ------------------------------------------------------------------ data

def synthetic_mnist(n: int, seed: int, noise: float = 0.7, max_shift: int = 3) -> Tuple[np.ndarray, np.ndarray]:
    """``n`` flattened 28x28 float32 images in [0, 1] and their int32 labels, a seeded stand-in for MNIST.

    Each class has a fixed prototype of blobby strokes (random pixels, 3x3 box-filtered, thresholded); an
    example is its class prototype shifted by up to ``max_shift`` pixels each way, times a random contrast in
    [0.6, 1], plus Gaussian noise of deviation ``noise``, clipped to [0, 1]. The shifts keep the classes from
    being linearly separable, so accuracy climbs over several epochs, as on MNIST.
    """
    side = IMAGE_SIDE
    proto_rng = np.random.default_rng(1234)             # the same prototypes for every data set
    dots = (proto_rng.random((N_CLASSES, side + 2, side + 2)) < 0.12).astype(np.float32)
    blurred = sum(dots[:, i:i + side, j:j + side] for i in range(3) for j in range(3)) / 9.0
    prototypes = (blurred > 0.2).astype(np.float32)
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, N_CLASSES, size=n).astype(np.int32)
    shifts = rng.integers(-max_shift, max_shift + 1, size=(n, 2))
    images = np.empty((n, side, side), np.float32)
    for i in range(n):
        images[i] = np.roll(prototypes[labels[i]], tuple(shifts[i]), axis=(0, 1))
    images *= rng.uniform(0.6, 1.0, size=(n, 1, 1)).astype(np.float32)
    images += rng.standard_normal((n, side, side), dtype=np.float32) * np.float32(noise)
    return np.clip(images, 0.0, 1.0).reshape(n, side * side), labels


# ------------------------------------------------------------------ graph

def mlp_logits(tf: Any, X: Any, weights: Optional[List[Any]] = None) -> Any:
    """The MLP's logits: ``tf.layers.dense`` layers creating their variables, or, given ``weights`` (kernel, bias,
    kernel, bias, ...), the same network on those tensors."""
    if weights is None:
        he_init = tf.variance_scaling_initializer(scale=2.0)
        hidden = X
        for i, units in enumerate(LAYERS):
            hidden = tf.layers.dense(hidden, units, activation=tf.nn.relu, kernel_initializer=he_init,
                                     name="hidden%d" % (i + 1))
        return tf.layers.dense(hidden, N_CLASSES, kernel_initializer=he_init, name="output")
    hidden = X
    for i in range(0, len(weights), 2):
        hidden = tf.matmul(hidden, weights[i]) + weights[i + 1]
        if i < len(weights) - 2:
            hidden = tf.nn.relu(hidden)
    return hidden


def cnn_logits(tf: Any, X: Any, weights: Optional[List[Any]] = None) -> Any:
    """The CNN's logits, built with ``tf.layers`` (creating its variables) or on given ``weights``."""
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
            self.logits = self.network(tf, self.X)
        with tf.name_scope("xent"):
            self.loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=self.y, logits=self.logits), name="loss")
        with tf.name_scope("eval"):
            self.predictions = tf.argmax(self.logits, axis=1, output_type=tf.int32, name="predictions")
            self.accuracy = tf.reduce_mean(tf.cast(tf.nn.in_top_k(self.logits, self.y, 1), tf.float32),
                                           name="accuracy")
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


FILTERS_TAG = "filters/conv1"


def filter_grid(kernel: np.ndarray, cell: int = 4) -> np.ndarray:
    """A conv kernel [h, w, 1, n] as one HWC uint8 image: the n filters in a near-square grid, each scaled to
    [0, 255] on its own and enlarged ``cell`` times, with a 1-pixel gap."""
    h, w, _, n = kernel.shape
    filters = np.moveaxis(kernel[:, :, 0, :], -1, 0)                         # [n, h, w]
    lo = filters.min(axis=(1, 2), keepdims=True)
    span = filters.max(axis=(1, 2), keepdims=True) - lo
    filters = (filters - lo) / np.where(span > 0, span, 1)
    filters = filters.repeat(cell, axis=1).repeat(cell, axis=2)
    cols = int(np.ceil(np.sqrt(n)))
    rows = -(-n // cols)
    fh, fw = h * cell + 1, w * cell + 1
    grid = np.ones((rows * fh + 1, cols * fw + 1), np.float32) * 0.5
    for i in range(n):
        r, c = divmod(i, cols)
        grid[1 + r * fh:1 + r * fh + h * cell, 1 + c * fw:1 + c * fw + w * cell] = filters[i]
    return (grid[:, :, None] * 255).round().astype(np.uint8)


# ------------------------------------------------------------------ pictures and text

def confusion_matrix(labels: np.ndarray, predictions: np.ndarray, n: int = N_CLASSES) -> np.ndarray:
    """``m[i, j]``: how many examples of class i were predicted as j."""
    m = np.zeros((n, n), np.int64)
    np.add.at(m, (labels, predictions), 1)
    return m


def confusion_figure(matrix: np.ndarray, title: str):
    """A matplotlib Figure of ``matrix`` with counts in the cells (Agg canvas, no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.2, 4.0), dpi=80)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.imshow(matrix, cmap="Blues")
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title(title, fontsize=10)
    ax.set_xticks(range(len(matrix)))
    ax.set_yticks(range(len(matrix)))
    threshold = matrix.max() / 2.0 if matrix.size else 0
    for (i, j), count in np.ndenumerate(matrix):
        if count:
            ax.text(j, i, str(count), ha="center", va="center", fontsize=7,
                    color="white" if count > threshold else "black")
    fig.tight_layout()
    return fig


def config_markdown(config: DemoConfig, total_steps: int) -> str:
    rows = ["| option | value |", "|---|---|"]
    for name, value in asdict(config).items():
        rows.append("| %s | %s |" % (name, value))
    rows.append("| initial learning rate | %g |" % config.initial_learning_rate())
    rows.append("| total steps | %d |" % total_steps)
    if config.model == "cnn":
        network = "CNN conv 5x5x%d, max pool, conv 5x5x%d, max pool, dense %d, dense 10 (He init, relu)" % (
            CNN_FILTERS + (CNN_DENSE,))
    else:
        network = "MLP 784-%s-10 (He init, relu)" % "-".join(map(str, LAYERS))
    return network + " on a synthetic MNIST stand-in, trained with tfevents.core.\n\n" + "\n".join(rows)


class ProgressBar:
    """One line per epoch on a plain stream: redrawn in place on a terminal, printed once when done otherwise."""

    def __init__(self, stream: Optional[TextIO], epochs: int, steps: int, width: int = 30):
        self.stream, self.epochs, self.steps, self.width = stream, epochs, steps, width
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self._last = 0.0

    def update(self, epoch: int, step: int, started: float, info: str = "", done: bool = False) -> None:
        if self.stream is None or not (done or self.tty):
            return
        now = time.monotonic()
        if not done and now - self._last < 0.1:
            return
        self._last = now
        filled = self.width * step // self.steps
        line = "epoch %*d/%d [%s%s] %d/%d %5.1fs %s" % (
            len(str(self.epochs)), epoch, self.epochs, "#" * filled, "." * (self.width - filled), step,
            self.steps, now - started, info)
        self.stream.write(("\r" + line + "\x1b[K" if self.tty else line) + ("\n" if done else ""))
        self.stream.flush()


# ------------------------------------------------------------------ the job

def _summary_values(serialized: bytes) -> Dict[str, float]:
    summary = summary_pb2.Summary.FromString(serialized)
    return {v.tag: v.simple_value for v in summary.value if v.WhichOneof("value") == "simple_value"}


def run_demo(config: Optional[DemoConfig] = None, progress: Optional[TextIO] = sys.stderr, *, tf: Any = None,
             initial_values: Optional[Dict[str, np.ndarray]] = None) -> DemoResult:
    """Train and log as the module docstring says; returns what was logged.

    ``tf``: the TF1 API to build and run the graph with, ``tfevents.core`` (default) or
    ``tensorflow.compat.v1`` (used by the tests as the oracle; event files are written by tfevents'
    SummaryWriter either way). ``initial_values``: ``{variable name: array}`` loaded after initialization
    (e.g. ``result.initial_values`` of another run, to start both from the same weights).
    """
    if tf is None:
        from tfevents import core as tf
    config = config or DemoConfig()
    config.check()
    started = time.monotonic()
    logdir = os.path.abspath(config.logdir)
    steps_per_epoch = config.n_train // config.batch_size
    result = DemoResult(config=config, logdir=logdir, train_dir=os.path.join(logdir, "train"),
                        test_dir=os.path.join(logdir, "test"), checkpoint_path="", graph_files=[],
                        run_metadata_tag="", steps=config.epochs * steps_per_epoch)
    train_data = synthetic_mnist(config.n_train, config.seed, config.noise)
    test_data = synthetic_mnist(config.n_test, config.seed + 1, config.noise)
    with tf.Graph().as_default() as graph:
        model = Model(tf, config)
        saver = tf.train.Saver(max_to_keep=2)
        init = tf.global_variables_initializer()
        graph.finalize()
        result.histogram_tags, result.slot_names = model.histogram_tags, model.slot_names
        result.image_tags = model.image_tags + ["confusion_matrix"]
        with tf.Session() as sess:
            sess.run(init)
            for v in model.variables:
                if initial_values is not None:       # the weights and their moving averages' start
                    for target in (v, model.ema.average(v)):
                        target.load(initial_values[v.op.name], sess)
                result.initial_values[v.op.name] = sess.run(v)
            # SummaryWriter is tfevents.core's tf.summary.FileWriter; closed (so flushed) even on an error
            with SummaryWriter(result.train_dir, sess.graph) as train_writer, \
                    SummaryWriter(result.test_dir) as test_writer:
                job = _Job(tf, sess, model, train_writer, test_writer, result, test_data)
                result.graph_files = [tf.train.write_graph(sess.graph_def, logdir, "graph.pbtxt", as_text=True),
                                      tf.train.write_graph(sess.graph_def, logdir, "graph.pb", as_text=False)]
                job.start()
                bar = ProgressBar(progress, config.epochs, steps_per_epoch)
                rng = np.random.default_rng(config.seed + 2)
                for epoch in range(1, config.epochs + 1):
                    epoch_started = time.monotonic()
                    job.train_epoch(train_data, rng.permutation(config.n_train),
                                    lambda i: bar.update(epoch, i, epoch_started))
                    accuracy = job.evaluate()
                    result.checkpoint_path = saver.save(sess, os.path.join(result.train_dir, "model.ckpt"),
                                                        global_step=job.step)
                    train_writer.add_session_log(SessionLog(status=SessionLog.CHECKPOINT,
                                                            checkpoint_path=result.checkpoint_path), job.step)
                    bar.update(epoch, steps_per_epoch, epoch_started, "test accuracy %.4f  ema %.4f" % (
                        accuracy, result.scalars[("test", "accuracy_ema")][-1][1]), done=True)
                if int(sess.run(model.global_step)) != job.step:
                    raise RuntimeError("global_step is %d after %d steps" % (sess.run(model.global_step), job.step))
                train_writer.add_session_log(SessionLog(status=SessionLog.STOP), job.step)
    result.seconds = time.monotonic() - started
    return result


class _Job:
    """The session's work: steps with their summaries, the traced step, evaluations on the test set."""

    def __init__(self, tf, sess, model: Model, train_writer, test_writer, result: DemoResult, test_data):
        self.tf, self.sess, self.model, self.result = tf, sess, model, result
        self.train_writer, self.test_writer = train_writer, test_writer
        self.config = result.config
        self.test_labels = test_data[1]
        self.test_feed = {model.X: test_data[0], model.y: test_data[1]}
        self.step = 0
        self.trace_step = min(result.steps, result.steps // self.config.epochs + 1)  # in the second epoch
        result.run_metadata_tag = "step_%d" % self.trace_step

    def record(self, run: str, serialized: bytes) -> None:
        for tag, value in _summary_values(serialized).items():
            self.result.scalars.setdefault((run, tag), []).append((self.step, float(value)))

    def start(self) -> None:
        """Step 0: SessionLog START (a new run: TensorBoard drops points of an earlier one), the configuration,
        four test images, the untrained model's test scalars and confusion matrix."""
        for writer in (self.train_writer, self.test_writer):
            writer.add_session_log(SessionLog(status=SessionLog.START), 0)
        self.train_writer.add_text("config", config_markdown(self.config, self.result.steps), 0)
        self.train_writer.add_summary(self.sess.run(self.model.image_summary, self.test_feed), 0)
        self.evaluate()

    def train_epoch(self, data: Tuple[np.ndarray, np.ndarray], order: np.ndarray,
                    progress: Callable[[int], None]) -> None:
        """One pass over ``data`` in ``order``; train scalars every ``log_every`` steps and at the epoch's end
        (the batch's values before the step's update, logged at the step it completes), histograms at the end."""
        model, sess, size = self.model, self.sess, self.config.batch_size
        n_steps = len(order) // size
        for i in range(n_steps):
            batch = order[i * size:(i + 1) * size]
            feed = {model.X: data[0][batch], model.y: data[1][batch]}
            self.step += 1
            if self.step == self.trace_step:
                metadata = self.tf.RunMetadata()
                summary, _ = sess.run([model.scalar_summaries, model.train_op], feed, run_metadata=metadata,
                                      options=self.tf.RunOptions(trace_level=self.tf.RunOptions.FULL_TRACE))
                self.train_writer.add_run_metadata(metadata, self.result.run_metadata_tag, self.step)
            elif self.step % self.config.log_every == 0 or i == n_steps - 1:
                summary, _ = sess.run([model.scalar_summaries, model.train_op], feed)
            else:
                summary = None
                sess.run(model.train_op, feed)
            if summary is not None:
                self.train_writer.add_summary(summary, self.step)
                self.record("train", summary)
            progress(i + 1)
        self.train_writer.add_summary(sess.run(model.histogram_summaries, feed), self.step)
        if model.first_filters is not None:
            self.train_writer.add_image(FILTERS_TAG, filter_grid(sess.run(model.first_filters)), self.step,
                                        dataformats="HWC")

    def evaluate(self) -> float:
        """Test-set scalars (and the moving averages' accuracy) to ``test``, the confusion matrix to ``train``."""
        model = self.model
        summary, ema_summary, predictions, accuracy = self.sess.run(
            [model.scalar_summaries, model.ema_summary, model.predictions, model.accuracy], self.test_feed)
        for serialized in (summary, ema_summary):
            self.test_writer.add_summary(serialized, self.step)
            self.record("test", serialized)
        figure = confusion_figure(confusion_matrix(self.test_labels, predictions),
                                  "test set, step %d (accuracy %.3f)" % (self.step, accuracy))
        self.train_writer.add_figure("confusion_matrix", figure, self.step)
        return float(accuracy)
