"""Monitored sessions and hooks: ``MonitoredTrainingSession``, ``Scaffold`` and the session creators
(``monitored_session.py``), the ``SessionRunHook`` protocol (``session_run_hook.py``), TF's hooks and the
summary-writer cache (``basic_session_run_hooks.py``), Chrome-trace timelines from RunMetadata (``timeline.py``)."""
