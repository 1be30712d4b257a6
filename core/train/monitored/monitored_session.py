"""``tf.train.MonitoredSession`` and friends (TF1's ``monitored_session``): ``Scaffold`` (init op, ready op,
saver, summary op, found in the graph's collections or made), session creators (``ChiefSessionCreator`` restores
the latest checkpoint of ``checkpoint_dir`` or runs the init op), ``MonitoredSession`` (hooks around every run,
queue runners under a Coordinator), ``SingularMonitoredSession`` and ``MonitoredTrainingSession`` (the standard
hooks from its arguments).

On close (``with`` exit or ``close()``): hooks' ``end`` runs unless an exception is propagating, the Coordinator
stops and joins the queue-runner threads, and every writer of ``SummaryWriterCache`` is flushed, also after an
exception, so every event logged before it is in the file; as in TF the writers stay open (a next session on the
same directory goes on writing the same file) until ``SummaryWriterCache.clear()`` or the end of the process.
``OutOfRangeError`` and ``StopIteration`` leaving the ``with`` block count as a normal end and are swallowed, as in
TF.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Optional

from ...control_flow import group, no_op
from ...framework import dtypes, errors
from ...framework.graph import GraphKeys, get_default_graph, name_scope
from ...framework.registry import constant
from ...ops.array_ops import concat
from .basic_session_run_hooks import CheckpointSaverHook, StepCounterHook, SummarySaverHook
from ..input.coordinator import Coordinator
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from ...summary import SummaryWriterCache, merge_all
from ..checkpoints.checkpoint_files import get_checkpoint_state
from ..checkpoints.saver import Saver
from ...runtime.session import Session
from ..input.queue_runner import start_queue_runners
from tfevents.proto import config_pb2
from ...variables import (global_variables, global_variables_initializer, local_variables_initializer,
                          report_uninitialized_variables)

logger = logging.getLogger("tfevents.core.train")

USE_DEFAULT = object()


class Scaffold:
    """The pieces a monitored session needs to create/initialize/restore a session; ``finalize()`` fills the
    missing ones (from the graph collections INIT_OP, READY_OP, LOCAL_INIT_OP, SUMMARY_OP, SAVERS, else new
    ops: ``global_variables_initializer``, ``report_uninitialized_variables``, ``local_variables_initializer``,
    ``merge_all``, ``Saver``) and finalizes the graph."""

    def __init__(self, init_op: Any = None, init_feed_dict: Optional[dict] = None, init_fn: Any = None,
                 ready_op: Any = None, ready_for_local_init_op: Any = None, local_init_op: Any = None,
                 summary_op: Any = None, saver: Any = None, copy_from_scaffold: Optional["Scaffold"] = None,
                 local_init_feed_dict: Optional[dict] = None) -> None:
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            c = copy_from_scaffold
            init_op = init_op or c.init_op
            init_feed_dict = init_feed_dict or c.init_feed_dict
            init_fn = init_fn or c._user_init_fn
            ready_op = ready_op or c.ready_op
            local_init_op = local_init_op or c.local_init_op
            local_init_feed_dict = local_init_feed_dict or c.local_init_feed_dict
            summary_op = summary_op or c.summary_op
            saver = saver or c.saver
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op, self._init_feed_dict = init_op, init_feed_dict
        self._ready_op, self._ready_for_local_init_op = ready_op, ready_for_local_init_op
        self._local_init_op, self._local_init_feed_dict = local_init_op, local_init_feed_dict
        self._summary_op, self._saver = summary_op, saver

    def finalize(self) -> "Scaffold":
        """Create the missing ops and the saver as TF1's ``Scaffold.finalize`` does (each from its graph
        collection, else made and added to it, in TF's order), then finalize the default graph."""
        graph = get_default_graph()
        if graph.finalized:
            return self
        if self._init_op is None:
            self._init_op = _get_or_make(GraphKeys.INIT_OP, lambda: group(
                global_variables_initializer(), _initialize_resources(),
                graph.get_collection("saved_model_initializers")))
        if self._ready_op is None:
            self._ready_op = _get_or_make(GraphKeys.READY_OP, lambda: concat(
                [report_uninitialized_variables(), _report_uninitialized_resources()], 0))
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = _get_or_make(GraphKeys.READY_FOR_LOCAL_INIT_OP, lambda: concat(
                [report_uninitialized_variables(global_variables()), _report_uninitialized_resources()], 0))
        if self._local_init_op is None:
            self._local_init_op = _get_or_make(GraphKeys.LOCAL_INIT_OP, lambda: group(
                local_variables_initializer(), tables_initializer(), _initialize_resources()))
        if self._summary_op is None:
            self._summary_op = _get_or_make(GraphKeys.SUMMARY_OP, merge_all)
        if self._saver is None:
            self._saver = _get_or_make(GraphKeys.SAVERS, lambda: Saver(sharded=True, allow_empty=True))
        graph.finalize()
        return self

    init_fn = property(lambda self: self._init_fn)
    init_op = property(lambda self: self._init_op)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    local_init_op = property(lambda self: self._local_init_op)
    local_init_feed_dict = property(lambda self: self._local_init_feed_dict)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)
    init_feed_dict = property(lambda self: self._init_feed_dict)


def tables_initializer(name: str = "init_all_tables") -> Any:
    """TF1's ``tf.tables_initializer``: a group of the graph's ``table_initializer`` collection (core has no
    lookup tables, so a NoOp unless something was added there)."""
    initializers = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    return group(*initializers, name=name) if initializers else no_op(name=name)


def _initialize_resources(name: str = "init") -> Any:
    """TF's ``resources.initialize_resources`` of the graph's shared or local resources: core has none, so
    TF's NoOp."""
    return no_op(name=name)


def _report_uninitialized_resources(name: str = "report_uninitialized_resources") -> Any:
    """TF's ``resources.report_uninitialized_resources`` with no resources: an empty string Const."""
    with name_scope(name):
        return constant([], dtype=dtypes.string)


def _get_or_make(key: str, make: Any) -> Any:
    graph = get_default_graph()
    found = graph.get_collection(key)
    if len(found) > 1:
        raise RuntimeError("More than one item in the collection \"%s\". Please indicate which one to use by "
                           "passing it to the tf.Scaffold constructor as: tf.Scaffold(%s=item to use)" % (key, key))
    if found:
        return found[0]
    made = make()
    if made is not None:
        graph.add_to_collection(key, made)
    return made


# ---------------------------------------------------------------------------------------------------------
# session creators


class SessionCreator:
    """Makes a ready ``Session`` (``create_session()``)."""

    def create_session(self) -> Any:
        raise NotImplementedError("create_session is not implemented for %s." % self)


class ChiefSessionCreator(SessionCreator):
    """Creates a session and restores ``checkpoint_filename_with_path`` or the latest checkpoint of
    ``checkpoint_dir``; with no checkpoint, runs the scaffold's init op and ``init_fn``. Then the local init
    op; raises RuntimeError naming the uninitialized variables if the model is not ready."""

    def __init__(self, scaffold: Optional[Scaffold] = None, master: str = "", config: Any = None,
                 checkpoint_dir: Optional[str] = None, checkpoint_filename_with_path: Optional[str] = None) -> None:
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self) -> Any:
        s = self._scaffold.finalize()
        sess = Session(self._master, graph=get_default_graph(), config=self._config)
        restored = False
        if self._checkpoint_filename_with_path:
            s.saver.restore(sess, self._checkpoint_filename_with_path)
            restored = True
        elif self._checkpoint_dir:
            state = get_checkpoint_state(self._checkpoint_dir)
            if state is not None and state.model_checkpoint_path:
                s.saver.restore(sess, state.model_checkpoint_path)
                s.saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))
                restored = True
        if not restored:
            if s.init_op is None and not s.init_fn and s.local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or local_init_op was given")
            if s.init_op is not None:
                sess.run(s.init_op, feed_dict=s.init_feed_dict)
            if s.init_fn:
                s.init_fn(sess)
        if s.local_init_op is not None:
            msg = _not_ready(sess, s.ready_for_local_init_op)
            if msg is not None:
                raise RuntimeError("Init operations did not make model ready for local_init.  Init op: %s, init "
                                   "fn: %s, error: Variables not initialized: %s" % (_name(s.init_op), s.init_fn, msg))
            sess.run(s.local_init_op, feed_dict=s.local_init_feed_dict)
        _check_ready(sess, s)
        return sess


class WorkerSessionCreator(SessionCreator):
    """Creates a session for a non-chief worker: waits (up to ``max_wait_secs``) until the model is ready,
    then runs the local init op; nothing is restored or initialized here."""

    def __init__(self, scaffold: Optional[Scaffold] = None, master: str = "", config: Any = None,
                 max_wait_secs: float = 30 * 60) -> None:
        self._scaffold = scaffold or Scaffold()
        self._master, self._config, self._max_wait_secs = master, config, max_wait_secs

    def create_session(self) -> Any:
        s = self._scaffold.finalize()
        sess = Session(self._master, graph=get_default_graph(), config=self._config)
        deadline = time.time() + self._max_wait_secs
        while True:
            if s.local_init_op is not None:
                sess.run(s.local_init_op, feed_dict=s.local_init_feed_dict)
            if _not_ready(sess, s.ready_op) is None:
                return sess
            if time.time() >= deadline:
                raise RuntimeError("Session was not ready after waiting %d secs (uninitialized: %s)."
                                   % (self._max_wait_secs, _not_ready(sess, s.ready_op)))
            time.sleep(min(30, max(deadline - time.time(), 0.01)))


def _not_ready(sess: Any, ready_op: Any) -> Optional[str]:
    if ready_op is None:
        return None
    names = sess.run(ready_op)
    if getattr(names, "size", len(names)) == 0:
        return None
    return ", ".join(n.decode() if isinstance(n, bytes) else str(n) for n in list(names.reshape(-1)))


def _name(op: Any) -> Optional[str]:
    return None if op is None else getattr(op, "name", "<no name for %s>" % type(op).__name__)


def _check_ready(sess: Any, scaffold: Scaffold) -> None:
    msg = _not_ready(sess, scaffold.ready_op)
    if msg is not None:
        raise RuntimeError("Init operations did not make model ready.  Init op: %s, init fn: %s, local_init_op: "
                           "%s, error: Variables not initialized: %s"
                           % (_name(scaffold.init_op), scaffold.init_fn, _name(scaffold.local_init_op), msg))


# ---------------------------------------------------------------------------------------------------------
# monitored sessions


def _merge_run_options(options: Any, incoming: Any) -> None:
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.output_partition_graphs |= incoming.output_partition_graphs


def _raise_if_feeds_intersect(a: dict, b: dict, message: str) -> None:
    common = set(a) & set(b)
    if common:
        raise RuntimeError(message + " Conflict(s): " + str(sorted(str(k) for k in common)))


class _MonitoredSession:
    """Shared code of MonitoredSession and SingularMonitoredSession."""

    def __init__(self, session_creator: SessionCreator, hooks: Optional[list],
                 stop_grace_period_secs: float = 120) -> None:
        if not isinstance(session_creator, SessionCreator) and not hasattr(session_creator, "create_session"):
            raise TypeError("session_creator must be a SessionCreator, got %s" % type(session_creator).__name__)
        self._graph = get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        for h in self._hooks:
            if not isinstance(h, SessionRunHook) and not hasattr(h, "before_run"):
                raise TypeError("hooks must be SessionRunHooks, got %s" % type(h).__name__)
        self._session_creator = session_creator
        self._stop_grace_period_secs = stop_grace_period_secs
        self._tf_sess = self._coord = None
        self._threads: list = []
        self._should_stop = False
        for h in self._hooks:
            h.begin()
        try:
            self._create_session()
        except BaseException:
            self._close_writers()
            raise

    def _create_session(self) -> None:
        self._tf_sess = self._session_creator.create_session()
        self._coord = Coordinator(clean_stop_exception_types=[])
        self._threads = start_queue_runners(sess=self._tf_sess, coord=self._coord)
        self._should_stop = False
        for h in self._hooks:
            h.after_create_session(self._tf_sess, self._coord)

    @property
    def graph(self) -> Any:
        return self._graph

    def should_stop(self) -> bool:
        """True once a hook requested stop, the Coordinator stopped, or the session is closed."""
        return self._tf_sess is None or self._should_stop or self._coord.should_stop()

    def run(self, fetches: Any, feed_dict: Optional[dict] = None, options: Any = None,
            run_metadata: Any = None) -> Any:
        """Run ``fetches`` with every hook's ``before_run`` requests in the same step; returns the caller's
        values."""
        if self._tf_sess is None:
            raise RuntimeError("Attempted to use a closed Session.")
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        run_context = SessionRunContext(SessionRunArgs(fetches, feed_dict), self._tf_sess)
        merged = config_pb2.RunOptions()
        if options is not None:
            merged.CopyFrom(options)
        actual_fetches = {"caller": fetches}
        hook_feeds: dict = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                actual_fetches[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict, "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options:
                _merge_run_options(merged, request.options)
        if hook_feeds:
            if feed_dict:
                _raise_if_feeds_intersect(feed_dict, hook_feeds, "Same tensor is fed by a SessionRunHook and user.")
                hook_feeds = {**feed_dict, **hook_feeds}
            feed_dict = hook_feeds
        if run_metadata is None:
            run_metadata = config_pb2.RunMetadata()
        try:
            outputs = self._tf_sess.run(actual_fetches, feed_dict=feed_dict, options=merged,
                                        run_metadata=run_metadata)
        except Exception:
            self._coord.raise_requested_exception()   # a queue runner's error first, as TF
            raise
        for hook in self._hooks:
            hook.after_run(run_context, SessionRunValues(results=outputs.get(hook), options=merged,
                                                         run_metadata=run_metadata))
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def run_step_fn(self, step_fn: Any) -> Any:
        """``step_fn(step_context)``: ``step_context.session`` is the raw session, ``run_with_hooks`` runs with
        hooks, ``request_stop()`` stops."""
        return step_fn(_StepContext(self))

    def close(self) -> None:
        self._close_internal()

    def _close_internal(self, exception_type: Any = None) -> None:
        try:
            if not exception_type and self._tf_sess is not None:
                for h in self._hooks:
                    h.end(self._tf_sess)
        finally:
            try:
                if self._tf_sess is None:
                    raise RuntimeError("Session is already closed.")
                self._coord.request_stop()
                try:
                    self._coord.join(self._threads, stop_grace_period_secs=self._stop_grace_period_secs,
                                     ignore_live_threads=True)
                finally:
                    self._tf_sess.close()
            finally:
                self._tf_sess = self._coord = None
                if not self._graph_was_finalized:
                    self._graph._finalized = False
                SummaryWriterCache.flush()

    def __enter__(self) -> "_MonitoredSession":
        return self

    def __exit__(self, exception_type: Any, exception_value: Any, traceback: Any) -> bool:
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None


class _StepContext:
    def __init__(self, monitored: _MonitoredSession) -> None:
        self._monitored = monitored

    @property
    def session(self) -> Any:
        return self._monitored._tf_sess

    def run_with_hooks(self, *args: Any, **kwargs: Any) -> Any:
        return self._monitored.run(*args, **kwargs)

    def request_stop(self) -> None:
        self._monitored._should_stop = True


class MonitoredSession(_MonitoredSession):
    """A session that runs ``hooks`` around every ``run``, initializes or restores through
    ``session_creator`` (default ``ChiefSessionCreator()``) and starts the graph's queue runners."""

    def __init__(self, session_creator: Optional[SessionCreator] = None, hooks: Optional[list] = None,
                 stop_grace_period_secs: float = 120) -> None:
        super().__init__(session_creator or ChiefSessionCreator(), hooks, stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A MonitoredSession for one process (a ``ChiefSessionCreator`` from the arguments); ``raw_session()``."""

    def __init__(self, hooks: Optional[list] = None, scaffold: Optional[Scaffold] = None, master: str = "",
                 config: Any = None, checkpoint_dir: Optional[str] = None, stop_grace_period_secs: float = 120,
                 checkpoint_filename_with_path: Optional[str] = None) -> None:
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, stop_grace_period_secs)

    def raw_session(self) -> Any:
        """The underlying Session."""
        return self._tf_sess


def MonitoredTrainingSession(master: str = "", is_chief: bool = True, checkpoint_dir: Optional[str] = None,
                             scaffold: Optional[Scaffold] = None, hooks: Optional[list] = None,
                             chief_only_hooks: Optional[list] = None, save_checkpoint_secs: Any = USE_DEFAULT,
                             save_summaries_steps: Any = USE_DEFAULT, save_summaries_secs: Any = USE_DEFAULT,
                             config: Any = None, stop_grace_period_secs: float = 120,
                             log_step_count_steps: Optional[int] = 100, max_wait_secs: float = 7200,
                             save_checkpoint_steps: Any = USE_DEFAULT, summary_dir: Optional[str] = None,
                             save_graph_def: bool = True) -> MonitoredSession:
    """A ``MonitoredSession`` for training, as TF1 builds it: on the chief, a ``ChiefSessionCreator``
    restoring from ``checkpoint_dir`` plus ``chief_only_hooks``, a ``StepCounterHook`` (every
    ``log_step_count_steps``) and ``SummarySaverHook`` (default every 100 steps) writing to ``summary_dir``
    (default ``checkpoint_dir``), a ``CheckpointSaverHook`` (default every 600 s) in ``checkpoint_dir``, then
    ``hooks``. Elsewhere a ``WorkerSessionCreator`` and ``hooks`` only."""
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config, max_wait_secs=max_wait_secs)
        return MonitoredSession(creator, hooks=hooks or [], stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or (save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                              save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir:
        if (save_checkpoint_secs and save_checkpoint_secs > 0) or (save_checkpoint_steps and
                                                                   save_checkpoint_steps > 0):
            all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_steps=save_checkpoint_steps,
                                                 save_secs=save_checkpoint_secs, scaffold=scaffold,
                                                 save_graph_def=save_graph_def))
    all_hooks.extend(hooks or [])
    return MonitoredSession(creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs)
