"""``tf.train.SessionRunHook`` and the values passed to its callbacks (TF1's ``session_run_hook``).

A hook takes part in every ``MonitoredSession.run``: ``before_run`` may return ``SessionRunArgs`` (more fetches,
feeds, run options), which are run in the same step as the caller's fetches; ``after_run`` then gets their values
as ``SessionRunValues.results``. ``SessionRunContext.request_stop()`` ends the loop after the current step.
Call order: ``begin`` (graph still editable) -> session created -> ``after_create_session`` -> per step
``before_run``/``after_run`` -> ``end`` (only when the session closes without an exception).
"""
from __future__ import annotations

import collections
from typing import Any, Optional


class SessionRunHook:
    """Base class of hooks for ``MonitoredSession``; every callback does nothing by default."""

    def begin(self) -> None:
        """Called once before the session is created; the graph may still be changed here."""

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Called when a (new) session has been created and initialized/restored; the graph is final."""

    def before_run(self, run_context: "SessionRunContext") -> Optional["SessionRunArgs"]:
        """Called before each run; return ``SessionRunArgs`` to add fetches/feeds/options, or None."""
        return None

    def after_run(self, run_context: "SessionRunContext", run_values: "SessionRunValues") -> None:
        """Called after each successful run with the values of what ``before_run`` asked for."""

    def end(self, session: Any) -> None:
        """Called when the session closes normally (not after an exception)."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook adds to one ``Session.run``: ``fetches`` (any fetch structure), ``feed_dict``,
    ``options`` (a ``RunOptions``, merged with the caller's and other hooks')."""

    def __new__(cls, fetches: Any, feed_dict: Optional[dict] = None, options: Any = None) -> "SessionRunArgs":
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunValues(collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])):
    """What a hook gets back: ``results`` (values of its ``SessionRunArgs.fetches``, or None), the merged
    ``options`` and the step's ``run_metadata``."""


class SessionRunContext:
    """The run in progress: the caller's ``original_args``, the ``session`` (the raw session, for extra
    ``run`` calls from a hook) and the stop flag."""

    def __init__(self, original_args: SessionRunArgs, session: Any) -> None:
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        return self._original_args

    @property
    def session(self) -> Any:
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        """Ask the monitored session to stop after this step (its ``should_stop()`` becomes True)."""
        self._stop_requested = True
