"""The live loader: a logdir that is still being written, read pass by pass in bounded memory (``tfevents serve``).

- ``loader.py``: ``LiveLogdir``: each reload pass reads only the bytes appended since the last one (a partial last
  record waits for the next pass; a replaced or shrunk file is read again; a corrupt record is reported once with
  file and offset), and the read API the servers use (``tags``, ``points``, ``blob``, ``hparams``);
- ``read.py``: a run's appended bytes read scan by scan and folded into its series; ``workers.py``: a big first
  read of new runs in worker processes, the runs sent back with their arrays in one buffer;
- ``run.py``: ``LiveRun``: a run's file cursors and series, and how one scan of a file is folded into them;
- ``values.py``: how a kept value is served: the tag's first value fixes its data class and metadata (as the Rust
  data server's ``data_compat``), blob sequences, histograms compacted and served as [k, 3] tensors;
- ``reservoir.py``: a bounded series (the Rust server's preemption of re-logged steps, a step-hash uniform sample,
  the last point always kept);
- ``packing.py``: compact columns (int16/int32 step and wall-time offsets, float32 values) and compact histograms.
- ``snapshot.py``: ``snapshot(live)``: a reader ``Logdir`` of what a ``LiveLogdir`` keeps now, made by the offline
  reader's own merge step.

The offline reader (``summaries/reader``) reads a logdir once, whole; this package builds on its scanner.
"""
