"""The demo's constants, options (``DemoConfig``) and what a run returns (``DemoResult``)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

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
    metrics: Dict[str, float] = field(default_factory=dict)     # the HParams session's final metrics
    embedding_dir: str = ""                                      # the Projector's files of the test set
    steps: int = 0
    seconds: float = 0.0
