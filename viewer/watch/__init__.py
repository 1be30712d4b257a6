"""``tfevents watch``: a full-screen terminal dashboard of a logdir being written (Textual, the ``watch`` extra).

- ``state.py``: what is shown, kept current by the live loader ``serve`` uses (``summaries/live``: appended bytes
  only, bounded reservoirs), with TensorBoard's smoothing, the last/min/max of each series and the restarts seen;
- ``app.py``: the Textual app (runs, tag filter, braille charts through plotext, status line, keys);
- ``text.py``: numbers, problems and status words fitted to the terminal's width.

Nothing here is imported by ``import tfevents.viewer``; ``app.py`` imports Textual, ``state.py`` does not.
"""
