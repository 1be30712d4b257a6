"""What the demo logs for TensorBoard's HParams, PR Curves, Custom Scalars and Projector dashboards.

- **HParams**: each trial (the demo's logdir, or one ``lr_<rate>`` directory of a sweep) is one session; its
  hyperparameters (:func:`hparams_of`) and final metrics (``METRICS``: the last test loss and accuracies, the last
  training loss) go into the trial directory itself, beside its ``train`` and ``test`` runs.
- **PR Curves**: one curve per class on the test set (``pr_curves/class_<k>``: is it class k, by the softmax
  probability of k) at every evaluation, in ``test``.
- **Custom Scalars**: train and test loss on one chart, train and test accuracy on another, and a margin chart of
  the test accuracy inside its 95% Wilson score interval (``accuracy_interval/lower``, ``/upper`` in ``test``).
- **Projector**: the test set's last hidden layer at the end of training, with each point's label and prediction as
  metadata and its image as a sprite, in ``test``.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from .config import IMAGE_SIDE, N_CLASSES, DemoConfig, DemoResult

# metric tag -> (run, scalar tag) whose last value it is
METRICS: Dict[str, Tuple[str, str]] = {
    "hparam/test_accuracy": ("test", "accuracy"),
    "hparam/test_accuracy_ema": ("test", "accuracy_ema"),
    "hparam/test_loss": ("test", "loss"),
    "hparam/train_loss": ("train", "loss"),
}
PR_CURVE_TAG = "pr_curves/class_%d"
INTERVAL_TAGS = ("accuracy_interval/lower", "accuracy_interval/upper")
EMBEDDING_TAG = "last_hidden_layer"
LAYOUT = {
    "train vs test": {
        "loss": ["Multiline", ["^loss$"]],
        "accuracy": ["Multiline", ["^accuracy$", "^accuracy_ema$"]],
        "test accuracy, 95% interval": ["Margin", ["accuracy", INTERVAL_TAGS[0], INTERVAL_TAGS[1]]],
    },
}


def hparams_of(config: DemoConfig) -> Dict[str, Any]:
    """The hyperparameters the HParams table shows for one trial."""
    return {"model": config.model, "optimizer": config.optimizer, "learning_rate": config.initial_learning_rate(),
            "batch_size": config.batch_size, "epochs": config.epochs, "clip_norm": config.clip_norm,
            "max_norm": config.max_norm, "ema_decay": config.ema_decay}


def final_metrics(result: DemoResult) -> Dict[str, float]:
    """``METRICS`` filled with the last logged value of each series."""
    return {name: result.scalars[key][-1][1] for name, key in METRICS.items()}


def log_hparams(writer: Any, result: DemoResult, learning_rates: Optional[Sequence[float]] = None) -> Dict[str, float]:
    """The trial's hyperparameters and final metrics (``add_hparams`` into the trial's own directory); with
    ``learning_rates``, the sweep's values as the learning rate's discrete domain. Returns the metrics."""
    metrics = final_metrics(result)
    domain = None if learning_rates is None else {"learning_rate": [float(r) for r in learning_rates]}
    writer.add_hparams(hparams_of(result.config), metrics, hparam_domain_discrete=domain, global_step=result.steps)
    return metrics


def wilson_interval(accuracy: float, n: int, z: float = 1.96) -> Tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` measured on ``n`` trials:
    ``(p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``."""
    scale = 1.0 + z * z / n
    center = (accuracy + z * z / (2 * n)) / scale
    half = z * math.sqrt(accuracy * (1 - accuracy) / n + z * z / (4 * n * n)) / scale
    return center - half, center + half


def log_evaluation(writer: Any, labels: np.ndarray, probabilities: np.ndarray, accuracy: float,
                   step: int) -> Dict[str, float]:
    """At one evaluation on the test set: a PR curve per class and the accuracy's 95% interval (returned as
    ``{tag: value}``)."""
    for k in range(N_CLASSES):
        writer.add_pr_curve(PR_CURVE_TAG % k, labels == k, probabilities[:, k], step)
    bounds = dict(zip(INTERVAL_TAGS, wilson_interval(accuracy, len(labels))))
    for tag, bound in bounds.items():
        writer.add_scalar(tag, bound, step)
    return bounds


def log_embedding(writer: Any, hidden: np.ndarray, images: np.ndarray, labels: np.ndarray,
                  predictions: np.ndarray, step: int) -> str:
    """The test set's last hidden layer for the Projector: label and prediction per point, the images as sprites.
    Returns the embedding's directory."""
    metadata = [[str(a), str(b)] for a, b in zip(labels, predictions)]
    sprites = images.reshape(-1, 1, IMAGE_SIDE, IMAGE_SIDE)
    return writer.add_embedding(hidden, metadata=metadata, label_img=sprites, global_step=step, tag=EMBEDDING_TAG,
                                metadata_header=["label", "prediction"])
