"""The offline reader: a logdir of event files -> runs -> columns, as TensorBoard loads it.

- ``load.py``: ``load_logdir`` / ``read_scalars`` / ``Logdir`` (the entry points) and ``list_runs``;
- ``walk.py``: finding runs and event files (local or fsspec), skipping what is not a regular file;
- ``scan.py``: one file -> rows (framing, checksums, corruption recovery; ``_fastscan.c`` in bulk);
- ``decode.py``: Event protos -> rows (the general path); ``types.py``: the result types;
- ``merge.py``: a run's files -> series (kinds by first metadata, records); ``restarts.py``: TensorBoard's rules;
- ``projector.py``: ``projector_config.pbtxt`` -> embeddings; ``export.py``: pandas, CSV, Parquet;
- ``ranks.py``: ``fold_ranks``, the ``<run>/rank_<N>`` runs of a distributed job -> mean/min/max series.
- ``summary.py``: the last, minimum and maximum of every (run, scalar tag) with their steps (``Logdir.summary()``).
- ``x_axis.py``: a series on another x axis (step, time, or any scalar tag such as ``samples_seen``).

A logdir still being written, read pass by pass in bounded memory, is ``summaries/live``.
"""
from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {name: "load" for name in (
    "load_logdir", "read_scalars", "Logdir", "Problem", "ReadWarning", "ScalarSeries", "HistogramSeries",
    "ImageRecord", "AudioRecord", "TextRecord", "PrCurveRecord", "TensorRecord", "HParamsRecord", "VideoRecord",
    "MeshRecord", "EmbeddingRecord", "KINDS", "list_runs")}
_EXPORTS["fold_ranks"] = "ranks"
_EXPORTS["scalars_on_x"] = "x_axis"
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
