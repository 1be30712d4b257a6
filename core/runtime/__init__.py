"""The runtime: how a graph runs.

- ``session.py``: ``Session``/``InteractiveSession``: feeds, fetches, a compiled and cached plan per
  (fetches, feeds), tracing into RunMetadata;
- ``plan.py``: scheduling and the generated straight-line plan (folding, in-place variants, dead values);
- ``frames.py``: control flow at run time: dead values past a Switch, one plan unit per while-loop frame.
"""
