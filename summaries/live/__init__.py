"""The live loader: a logdir that is still being written, read pass by pass in bounded memory (``tfevents serve``).

- ``loader.py``: ``LiveLogdir``: each reload pass reads only the bytes appended since the last one (a partial last
  record waits for the next pass; a replaced or shrunk file is read again; a corrupt record is reported once with
  file and offset), folds values into series whose data class the tag's first value fixes (as the Rust data server);
- ``reservoir.py``: a bounded series (the Rust server's preemption of re-logged steps, a step-hash uniform sample,
  the last point always kept);
- ``packing.py``: compact columns (int16/int32 step and wall-time offsets, float32 values) and compact histograms.
- ``snapshot.py``: ``snapshot(live)``: a reader ``Logdir`` of what a ``LiveLogdir`` keeps now, made by the offline
  reader's own merge step.

The offline reader (``summaries/reader``) reads a logdir once, whole; this package builds on its scanner.
"""
