"""TF1's standard hooks (``basic_session_run_hooks``), step for step: the same global steps at which each one
writes, the same events (``global_step/sec`` scalars, ``SessionLog`` START/CHECKPOINT, graph and meta graph),
through ``SummaryWriterCache`` (``core/summary.py``: one ``SummaryWriter`` per directory, shared by the hooks).

Every hook that reads the global step fetches the ``global_step`` variable with the step's own run (a stale
value: the one before the train op) and re-reads it with an extra run only when it may have to act.
"""
from __future__ import annotations

import logging
import os
import time
from typing import Any, Callable, Optional

import numpy as np

from ...framework.graph import GraphKeys, get_default_graph, name_scope
from ...control_flow import cond
from ...variables import Variable, is_variable_initialized
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from ..training_util import get_global_step, write_graph
from tfevents.proto import config_pb2, event_pb2, summary_pb2
from ...framework.meta_graph import create_meta_graph_def
from ...summary import SummaryWriterCache
from .timeline import chrome_trace

logger = logging.getLogger("tfevents.core.train")


# ---------------------------------------------------------------------------------------------------------
# writers and timers




class SecondOrStepTimer:
    """Triggers once every ``every_secs`` seconds or every ``every_steps`` steps (exactly one is given); the
    first call always triggers, and never twice for the same step."""

    def __init__(self, every_secs: Optional[float] = None, every_steps: Optional[int] = None) -> None:
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self) -> None:
        self._last_triggered_step: Optional[int] = None
        self._last_triggered_time: Optional[float] = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= self._last_triggered_time + self._every_secs:
            return True
        return self._every_steps is not None and step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step: int) -> tuple:
        """Record a trigger at ``step``; returns ``(elapsed_secs, elapsed_steps)`` since the last (None, None
        the first time)."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time, self._last_triggered_step = now, step
        return elapsed

    def last_triggered_step(self) -> Optional[int]:
        return self._last_triggered_step


class NeverTriggerTimer(SecondOrStepTimer):
    """A timer that never triggers (LoggingTensorHook with ``at_end`` only)."""

    def __init__(self) -> None:
        self.reset()

    def should_trigger_for_step(self, step: int) -> bool:
        return False


GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


def _get_or_create_global_step_read(graph: Any = None) -> Optional[Any]:
    """The tensor ``global_step/add:0`` (the global step + 0, collection ``global_step_read_op_cache``) that the
    hooks fetch, as TF1's (of ``global_step/cond``: the step once initialized, else its initial value); None
    without a global step. Created before the train op and made its control input,
    it reads the step before the update in every run."""
    graph = graph or get_default_graph()
    found = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if len(found) > 1:
        raise RuntimeError("There are multiple items in collection %s. There should be only one."
                           % GLOBAL_STEP_READ_KEY)
    if found:
        return found[0]
    step = get_global_step(graph)
    if step is None:
        return None
    with graph.as_default(), name_scope(None), name_scope(step.op.name + "/"):
        if isinstance(step, Variable):      # TF: read only once initialized, else the initial value
            step = cond(is_variable_initialized(step), step.read_value, lambda: step.initial_value)
        read = step + 0
    graph.add_to_collection(GLOBAL_STEP_READ_KEY, read)
    return read


def _global_step_tensor(hook: str) -> Any:
    step = _get_or_create_global_step_read()
    if step is None:
        raise RuntimeError("Global step should be created to use %s." % hook)
    return step


def _session_log(status: str, checkpoint_path: str = "") -> Any:
    log = event_pb2.SessionLog(status=getattr(event_pb2.SessionLog, status))
    if checkpoint_path:
        log.checkpoint_path = checkpoint_path
    return log


def _as_graph_element(obj: Any) -> Any:
    graph = get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError("Passed %s should have graph attribute that is equal to current graph %s."
                             % (obj, graph))
        return obj
    return graph.as_graph_element(obj if ":" in obj else obj + ":0")


# ---------------------------------------------------------------------------------------------------------
# hooks


class StopAtStepHook(SessionRunHook):
    """Requests stop when the global step reaches ``last_step``, or ``num_steps`` steps after the global step
    at session creation (exactly one is given)."""

    def __init__(self, num_steps: Optional[int] = None, last_step: Optional[int] = None) -> None:
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        if num_steps is not None and num_steps < 0:
            raise ValueError("num_steps must be non-negative, got %r" % num_steps)
        self._num_steps = num_steps
        self._last_step = last_step

    @property
    def last_step(self) -> Optional[int]:
        return self._last_step

    def begin(self) -> None:
        self._global_step_tensor = _global_step_tensor("StopAtStepHook")

    def after_create_session(self, session: Any, coord: Any) -> None:
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if run_values.results + 1 >= self._last_step:
            # the fetched value is the one before this step's train op: check the real one
            if run_context.session.run(self._global_step_tensor) >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener:
    """Called by ``CheckpointSaverHook`` around each save; ``after_save`` returning True stops training."""

    def begin(self) -> None:
        pass

    def before_save(self, session: Any, global_step_value: int) -> None:
        pass

    def after_save(self, session: Any, global_step_value: int) -> Optional[bool]:
        pass

    def end(self, session: Any, global_step_value: int) -> None:
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint at session creation, every ``save_secs`` seconds or ``save_steps`` steps, and at the
    end (if the last step was not saved), with a ``SessionLog.CHECKPOINT`` event each time; writes
    ``graph.pbtxt`` and the graph and meta graph events when the session is created."""

    def __init__(self, checkpoint_dir: str, save_secs: Optional[float] = None, save_steps: Optional[int] = None,
                 saver: Any = None, checkpoint_basename: str = "model.ckpt", scaffold: Any = None,
                 listeners: Optional[list] = None, save_graph_def: bool = True) -> None:
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._save_graph_def = save_graph_def

    def begin(self) -> None:
        self._summary_writer = SummaryWriterCache.get(self._checkpoint_dir)
        self._global_step_tensor = _global_step_tensor("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session: Any, coord: Any) -> None:
        global_step = int(session.run(self._global_step_tensor))
        if self._save_graph_def:
            # as TF: written once the graph is final (other hooks' begin may still add to it)
            graph = get_default_graph()
            write_graph(graph, self._checkpoint_dir, "graph.pbtxt")
            saver = self._get_saver()
            self._summary_writer.add_graph(graph)
            self._summary_writer.add_meta_graph(
                create_meta_graph_def(saver_def=saver.saver_def if saver is not None else None))
        self._save(session, global_step)     # the state at step `global_step`
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._timer.should_trigger_for_step(run_values.results + 1):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session: Any) -> None:
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session: Any, step: int) -> bool:
        """Save the checkpoint of ``step``; True if a listener asked to stop."""
        for listener in self._listeners:
            listener.before_save(session, step)
        logger.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step, write_meta_graph=self._save_graph_def)
        self._summary_writer.add_session_log(_session_log("CHECKPOINT", self._save_path), step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                logger.info("A CheckpointSaverListener requested that training be stopped. listener: %s", listener)
                should_stop = True
        return should_stop

    def _get_saver(self) -> Any:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError("No items in collection %s. Please add a saver to the collection or provide a "
                               "saver or scaffold." % GraphKeys.SAVERS)
        if len(savers) > 1:
            raise RuntimeError("More than one item in collection %s. Please indicate which one to use by passing "
                               "it to the constructor." % GraphKeys.SAVERS)
        self._saver = savers[0]
        return self._saver


class StepCounterHook(SessionRunHook):
    """Writes the steps per second as scalar ``global_step/sec`` every ``every_n_steps`` steps or
    ``every_n_secs`` seconds (from the second trigger on: the first only starts the clock)."""

    def __init__(self, every_n_steps: Optional[int] = 100, every_n_secs: Optional[float] = None,
                 output_dir: Optional[str] = None, summary_writer: Any = None) -> None:
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step: Optional[int] = None

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = SummaryWriterCache.get(self._output_dir)
        self._global_step_tensor = _global_step_tensor("StepCounterHook")
        self._summary_tag = get_global_step().op.name + "/sec"

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def _log_and_record(self, elapsed_steps: int, elapsed_time: float, global_step: int) -> None:
        steps_per_sec = elapsed_steps / elapsed_time
        if self._summary_writer is not None:
            self._summary_writer.add_summary(summary_pb2.Summary(value=[summary_pb2.Summary.Value(
                tag=self._summary_tag, simple_value=steps_per_sec)]), global_step)
        logger.info("%s: %g", self._summary_tag, steps_per_sec)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        stale_global_step = int(run_values.results)
        if self._timer.should_trigger_for_step(stale_global_step + 1):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time is not None:
                    self._log_and_record(elapsed_steps, elapsed_time, global_step)
        if stale_global_step == self._last_global_step:
            logger.warning("It seems that global step (tf.train.get_global_step) has not been increased. Current "
                           "value (could be stable): %s vs previous value: %s.", stale_global_step,
                           self._last_global_step)
        self._last_global_step = stale_global_step


class SummarySaverHook(SessionRunHook):
    """Runs ``summary_op`` (or the scaffold's) every ``save_steps`` steps or ``save_secs`` seconds, starting
    with the first step, and writes its Summaries at the step after the train op; writes ``SessionLog.START``
    at the first step of each session."""

    def __init__(self, save_steps: Optional[int] = None, save_secs: Optional[float] = None,
                 output_dir: Optional[str] = None, summary_writer: Any = None, scaffold: Any = None,
                 summary_op: Any = None) -> None:
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = SummaryWriterCache.get(self._output_dir)
        self._next_step: Optional[int] = None
        self._global_step_tensor = _global_step_tensor("SummarySaverHook")

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        requests = {"global_step": self._global_step_tensor}
        if self._request_summary:
            ops = self._get_summary_op()
            if ops is not None:
                requests["summary"] = ops
        return SessionRunArgs(requests)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._summary_writer is None:
            return
        global_step = int(run_values.results["global_step"]) + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            self._summary_writer.add_session_log(_session_log("START"), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session: Any = None) -> None:
        if self._summary_writer is not None:
            self._summary_writer.flush()

    def _get_summary_op(self) -> Optional[list]:
        op = self._summary_op
        if op is None and self._scaffold is not None:
            op = self._scaffold.summary_op
        if op is None:
            return None
        return list(op) if isinstance(op, (list, tuple)) else [op]


class LoggingTensorHook(SessionRunHook):
    """Logs the values of ``tensors`` (a list of tensors/names, or ``{tag: tensor}``) every ``every_n_iter``
    runs or ``every_n_secs`` seconds (counting this hook's runs, from the first), and at the end if
    ``at_end``; ``formatter(values_dict)`` makes the message."""

    def __init__(self, tensors: Any, every_n_iter: Optional[int] = None, every_n_secs: Optional[float] = None,
                 at_end: bool = False, formatter: Optional[Callable[[dict], str]] = None) -> None:
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError("invalid every_n_iter=%s." % every_n_iter)
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors.keys())
        self._tensors = tensors
        self._formatter = formatter
        self._timer = NeverTriggerTimer() if only_log_at_end else SecondOrStepTimer(every_secs=every_n_secs,
                                                                                     every_steps=every_n_iter)
        self._log_at_end = at_end

    def begin(self) -> None:
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context: SessionRunContext) -> Optional[SessionRunArgs]:
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, tensor_values: dict) -> None:
        original = np.get_printoptions()
        np.set_printoptions(suppress=True)
        try:
            elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
            if self._formatter:
                logger.info(self._formatter(tensor_values))
            else:
                stats = ", ".join("%s = %s" % (tag, tensor_values[tag]) for tag in self._tag_order)
                if elapsed_secs is not None:
                    logger.info("%s (%.3f sec)", stats, elapsed_secs)
                else:
                    logger.info("%s", stats)
        finally:
            np.set_printoptions(**original)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session: Any) -> None:
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class NanLossDuringTrainingError(RuntimeError):
    """Raised by ``NanTensorHook`` when the loss is NaN."""

    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Checks ``loss_tensor`` after every step: NaN raises ``NanLossDuringTrainingError``
    (``fail_on_nan_loss``) or logs an error and requests stop."""

    def __init__(self, loss_tensor: Any, fail_on_nan_loss: bool = True) -> None:
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if np.isnan(run_values.results):
            message = "Model diverged with loss = NaN."
            logger.error(message)
            if self._fail_on_nan_loss:
                raise NanLossDuringTrainingError
            logger.warning("NaN loss: stopping training.")
            run_context.request_stop()


class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` (with ``final_ops_feed_dict``) when the session ends; ``final_ops_values``."""

    def __init__(self, final_ops: Any, final_ops_feed_dict: Optional[dict] = None) -> None:
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self) -> Any:
        return self._final_ops_values

    def end(self, session: Any) -> None:
        if self._final_ops is not None:
            self._final_ops_values = session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)


class FeedFnHook(SessionRunHook):
    """Adds ``feed_fn()`` (a feed dict) to every run."""

    def __init__(self, feed_fn: Callable[[], dict]) -> None:
        self.feed_fn = feed_fn

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class GlobalStepWaiterHook(SessionRunHook):
    """Holds the first run back until the global step reaches ``wait_until_step`` (polling every 0.5 s)."""

    def __init__(self, wait_until_step: int) -> None:
        self._wait_until_step = wait_until_step

    def begin(self) -> None:
        self._worker_is_started = False
        self._global_step_tensor = _global_step_tensor("GlobalStepWaiterHook")

    def before_run(self, run_context: SessionRunContext) -> None:
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        last_logged_step = int(run_context.session.run(self._global_step_tensor))
        while True:
            current_step = int(run_context.session.run(self._global_step_tensor))
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                logger.info("Waiting for global step %d before starting training. Current step is %d.",
                            self._wait_until_step, current_step)
                last_logged_step = current_step
            time.sleep(0.5)


class ProfilerHook(SessionRunHook):
    """Every ``save_steps`` steps or ``save_secs`` seconds (not the first step), traces the run and writes
    ``output_dir/timeline-<step>.json`` (Chrome trace format) and a ``step_<step>`` RunMetadata event."""

    def __init__(self, save_steps: Optional[int] = None, save_secs: Optional[float] = None, output_dir: str = "",
                 show_dataflow: bool = True, show_memory: bool = False) -> None:
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._file_writer = SummaryWriterCache.get(output_dir)
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        self._next_step: Optional[int] = None
        self._global_step_tensor = _global_step_tensor("ProfilerHook")

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        self._request_summary = self._next_step is not None and self._timer.should_trigger_for_step(self._next_step)
        opts = config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE) if self._request_summary else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=opts)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        stale_global_step = int(run_values.results["global_step"])
        if self._next_step is None:
            self._timer.update_last_triggered_step(stale_global_step)
        global_step = stale_global_step + 1
        if self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
            self._timer.update_last_triggered_step(global_step)
            path = self._output_file.format(global_step)
            logger.info("Saving timeline for %d into '%s'.", global_step, path)
            trace = chrome_trace(run_values.run_metadata.step_stats, self._show_dataflow, self._show_memory)
            with open(path, "w") as f:
                f.write(trace)
            self._file_writer.add_run_metadata(run_values.run_metadata, "step_%d" % global_step)
        self._next_step = global_step + 1

