"""``tf.train`` of tfevents.core: TF1's optimizers (fused ``Apply*`` update ops), gradient clipping,
learning-rate schedules, ExponentialMovingAverage, Saver (TensorFlow's V2 checkpoint format: tensor_bundle.py),
Coordinator / QueueRunner, the global step, and the event-file helpers (``summary_iterator``, ``write_graph``,
``SummaryWriter``)."""
from __future__ import annotations

from typing import Any

from ..ops import training_ops as _ops  # noqa: F401 - registers the update ops
from .optimizers.optimizer import Optimizer
from .optimizers.gradient_descent import GradientDescentOptimizer
from .optimizers.momentum import MomentumOptimizer
from .optimizers.adagrad import AdagradOptimizer
from .optimizers.adadelta import AdadeltaOptimizer
from .optimizers.adam import AdamOptimizer
from .optimizers.ftrl import FtrlOptimizer
from .optimizers.rmsprop import RMSPropOptimizer
from .optimizers.proximal_gradient_descent import ProximalGradientDescentOptimizer
from .optimizers.proximal_adagrad import ProximalAdagradOptimizer
from .optimizers.adagrad_da import AdagradDAOptimizer
from ..ops.clip_ops import clip_by_average_norm, clip_by_global_norm, clip_by_norm, clip_by_value, global_norm
from .learning_rate_decay import (cosine_decay, cosine_decay_restarts, exponential_decay, inverse_time_decay,
                                  linear_cosine_decay, natural_exp_decay, noisy_linear_cosine_decay,
                                  piecewise_constant, polynomial_decay)
from .moving_averages import ExponentialMovingAverage, assign_moving_average
from .checkpoints.checkpoint_files import (CheckpointReader, CheckpointState, NewCheckpointReader, checkpoint_exists,
                                           get_checkpoint_mtimes, get_checkpoint_state, latest_checkpoint,
                                           list_variables, load_checkpoint, load_variable, update_checkpoint_state)
from .checkpoints.saver import Saver, SaverDef, export_meta_graph
from .input.coordinator import Coordinator
from .input.queues import FIFOQueue, QueueBase, RandomShuffleQueue
from .input.queue_runner import QueueRunner, add_queue_runner, start_queue_runners
from .input.pipeline import batch
from .input.pipeline import (batch_join, input_producer, limit_epochs, range_input_producer, shuffle_batch,
                             shuffle_batch_join, slice_input_producer, string_input_producer)
from .training_util import (assert_global_step, create_global_step, get_global_step, get_or_create_global_step,
                            global_step, write_graph)
from .monitored.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from .monitored.basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener, FeedFnHook,
                                                FinalOpsHook, GlobalStepWaiterHook, LoggingTensorHook,
                                                NanLossDuringTrainingError, NanTensorHook, NeverTriggerTimer,
                                                ProfilerHook, SecondOrStepTimer, StepCounterHook, StopAtStepHook,
                                                SummarySaverHook)
from ..summary import FileWriterCache, SummaryWriterCache
from .monitored.monitored_session import (ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession, Scaffold,
                                          SessionCreator, SingularMonitoredSession, WorkerSessionCreator)
from .checkpoints.checkpoint_utils import import_meta_graph, init_from_checkpoint
import tfevents.summaries as summaries

piecewise_constant_decay = piecewise_constant
queue_runner = __import__(__name__ + ".input.queue_runner", fromlist=["QueueRunner"])


def __getattr__(name: str) -> Any:
    if name in ("summary_iterator", "SummaryWriter"):
        value = getattr(summaries, name)
        globals()[name] = value
        return value
    raise AttributeError("module 'tfevents.core.train' has no attribute %r" % name)
