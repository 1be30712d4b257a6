"""The demo's session: training, evaluation and logging (``run_demo``)."""
from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional, Sequence, TextIO, Tuple

import numpy as np

from tfevents.proto import event_pb2, summary_pb2
from tfevents.summaries import SummaryWriter

from . import dashboards
from .config import DemoConfig, DemoResult
from .data import confusion_figure, confusion_matrix, config_markdown, filter_grid, synthetic_mnist
from .model import FILTERS_TAG, Model
from tfevents import core

SessionLog = event_pb2.SessionLog
SWEEP_FACTORS = (0.25, 1.0, 4.0)     # the default sweep's learning rates, times the initial one


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
             initial_values: Optional[Dict[str, np.ndarray]] = None,
             learning_rates: Optional[Sequence[float]] = None) -> DemoResult:
    """Train and log as the package docstring says; returns what was logged.

    ``tf``: the TF1 API to build and run the graph with, ``tfevents.core`` (default) or
    ``tensorflow.compat.v1`` (used by the tests as the oracle; event files are written by tfevents'
    SummaryWriter either way). ``initial_values``: ``{variable name: array}`` loaded after initialization
    (e.g. ``result.initial_values`` of another run, to start both from the same weights).
    ``learning_rates``: a sweep's learning rates, the HParams domain of ``learning_rate``.
    """
    tf = tf or core
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
                job.finish()
                train_writer.add_session_log(SessionLog(status=SessionLog.STOP), job.step)
    with SummaryWriter(logdir) as trial_writer:        # the HParams session: this trial's directory
        result.metrics = dashboards.log_hparams(trial_writer, result, learning_rates)
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
        self.train_writer.add_custom_scalars(dashboards.LAYOUT)
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
        summary, ema_summary, predictions, probabilities, accuracy = self.sess.run(
            [model.scalar_summaries, model.ema_summary, model.predictions, model.probabilities, model.accuracy],
            self.test_feed)
        for serialized in (summary, ema_summary):
            self.test_writer.add_summary(serialized, self.step)
            self.record("test", serialized)
        figure = confusion_figure(confusion_matrix(self.test_labels, predictions),
                                  "test set, step %d (accuracy %.3f)" % (self.step, accuracy))
        self.train_writer.add_figure("confusion_matrix", figure, self.step)
        bounds = dashboards.log_evaluation(self.test_writer, self.test_labels, probabilities, float(accuracy),
                                           self.step)
        for tag, value in bounds.items():
            self.result.scalars.setdefault(("test", tag), []).append((self.step, float(np.float32(value))))
        return float(accuracy)

    def finish(self) -> None:
        """The test set's last hidden layer, for the Projector."""
        hidden, predictions = self.sess.run([self.model.last_hidden, self.model.predictions], self.test_feed)
        self.result.embedding_dir = dashboards.log_embedding(
            self.test_writer, hidden, self.test_feed[self.model.X], self.test_labels, predictions, self.step)


def sweep_learning_rates(config: DemoConfig, factors: Sequence[float] = SWEEP_FACTORS) -> List[float]:
    """The default sweep: the configuration's initial learning rate times each of ``factors``."""
    return [config.initial_learning_rate() * f for f in factors]


def trial_dir(logdir: str, learning_rate: float, seed: Optional[int] = None) -> str:
    """Where a sweep's trial goes: ``<logdir>/lr_<rate>``, or ``<logdir>/lr_<rate>/seed_<seed>`` in a sweep with
    seeds."""
    path = os.path.join(logdir, "lr_%g" % learning_rate)
    return path if seed is None else os.path.join(path, "seed_%d" % seed)


def run_sweep(config: DemoConfig, learning_rates: Sequence[float], progress: Optional[TextIO] = sys.stderr,
              seeds: int = 1, **kwargs: Any) -> List[DemoResult]:
    """One trial per learning rate, each a whole demo in ``<logdir>/lr_<rate>`` (its own ``train`` and ``test``
    runs and HParams session), so TensorBoard's HParams dashboard shows them as rows of one table. With
    ``seeds`` > 1, ``seeds`` trials per learning rate, ``<logdir>/lr_<rate>/seed_<s>`` for the seeds
    ``config.seed``, ``config.seed + 1``, ...: ``aggregate(logdir, by=r"/seed_\\d+")`` makes them bands."""
    rates = [float(r) for r in learning_rates]
    if not rates or len(set(rates)) != len(rates) or not all(r > 0 for r in rates):
        raise ValueError("the sweep's learning rates must be distinct positive numbers, got %r" % (list(rates),))
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError("seeds must be a positive integer, got %r" % (seeds,))
    results = []
    for rate in rates:
        for k in range(seeds):
            seed = config.seed + k
            if progress is not None:
                progress.write("trial: learning rate %g%s\n" % (rate, "" if seeds == 1 else ", seed %d" % seed))
            trial = replace(config, logdir=trial_dir(config.logdir, rate, None if seeds == 1 else seed),
                            learning_rate=rate, seed=seed)
            results.append(run_demo(trial, progress, learning_rates=rates, **kwargs))
    return results
