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

Under ``logdir`` it writes

- the run ``train``: batch loss, accuracy, learning_rate, gradient_norm every ``log_every`` steps; kernel and
  gradient histograms and a confusion-matrix image (matplotlib, ``add_figure``) once per epoch; four test images,
  the configuration as text and the Custom Scalars layout at step 0; the graph with its optimizer slots and
  gradients; the RunMetadata of one traced step; SessionLog START, CHECKPOINT with the Saver's checkpoint path,
  STOP; for the CNN, the first layer's filters as one image grid per epoch;
- the run ``test``: the same scalars on the test set once per epoch, plus ``accuracy_ema``, the accuracy's 95%
  interval, a PR curve per class, and at the end the last hidden layer of the test set for the Projector;
- the logdir itself: the HParams session (hyperparameters and final metrics; see ``dashboards``), and the
  GraphDef as ``graph.pbtxt`` / ``graph.pb`` (``tf.train.write_graph``).

``run_sweep`` trains one such trial per learning rate under ``<logdir>/lr_<rate>``: one HParams table.

Checkpoints are TensorFlow's V2 format (``Saver``'s default: TF's ``tf.train.load_checkpoint`` reads them). The demo
drives a plain ``tf.Session`` rather than ``MonitoredTrainingSession``: it evaluates on the test set, draws a
confusion figure and writes the Projector files at epoch boundaries, which its own loop says directly, and the same
code runs on TF1 as the oracle of its numbers.

The graph is TF1 code written against the ``tf`` module it is given (``from tfevents import core as tf`` by
default; the tests run it on ``tensorflow.compat.v1`` too, as the oracle); ``run_demo`` returns what was logged
so it can be checked against what TensorBoard serves.
"""
from .config import (CNN_DENSE, CNN_FILTERS, IMAGE_SIDE, LAYERS, MODELS, N_CLASSES, OPTIMIZERS, SCALAR_TAGS,
                     DemoConfig, DemoResult)
from .data import config_markdown, confusion_figure, confusion_matrix, filter_grid, synthetic_mnist
from .dashboards import EMBEDDING_TAG, INTERVAL_TAGS, LAYOUT, METRICS, PR_CURVE_TAG, hparams_of, wilson_interval
from .job import SWEEP_FACTORS, ProgressBar, run_demo, run_sweep, sweep_learning_rates, trial_dir
from .model import FILTERS_TAG, Model, cnn_logits, mlp_logits

__all__ = ["CNN_DENSE", "CNN_FILTERS", "IMAGE_SIDE", "LAYERS", "MODELS", "N_CLASSES", "OPTIMIZERS", "SCALAR_TAGS",
           "DemoConfig", "DemoResult", "config_markdown", "confusion_figure", "confusion_matrix", "filter_grid",
           "synthetic_mnist", "EMBEDDING_TAG", "INTERVAL_TAGS", "LAYOUT", "METRICS", "PR_CURVE_TAG", "hparams_of",
           "wilson_interval", "SWEEP_FACTORS", "ProgressBar", "run_demo", "run_sweep", "sweep_learning_rates",
           "trial_dir", "FILTERS_TAG", "Model", "cnn_logits", "mlp_logits"]
