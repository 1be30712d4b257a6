"""Event files: the writer, pure summary builders, record framing and the readers.

Usable from any training loop (numpy, PyTorch, JAX)::

    from tfevents.summaries import SummaryWriter
    with SummaryWriter("runs/exp1") as w:
        w.add_scalar("loss", 0.25, global_step=1)

Names are imported on first use (PEP 562), so ``import tfevents.summaries`` stays cheap and
numpy is loaded only by what needs it.
"""
from __future__ import annotations

from .lazy import lazy_exports


__version__ = "0.1.0"

# public name -> submodule that defines it
_EXPORTS = {
    # record framing (record.py)
    "DataLossError": "record", "TruncatedRecordError": "record", "CorruptedRecordError": "record",
    # writing (writer/)
    "EventFileWriter": "writer.event_file_writer",
    "SummaryWriter": "writer.summary_writer", "FileWriter": "writer.summary_writer",
    # reading one file (iterator.py) and writing graphs (writer/graph_io.py)
    "summary_iterator": "iterator",
    # comparing runs (compare/)
    "aggregate": "compare.aggregate",
    # choosing runs (runs/): the run table
    "runs_table": "runs.table",
    "write_graph": "writer.graph_io",
    # the offline reader (reader/)
    "read_scalars": "reader.load", "load_logdir": "reader.load", "fold_ranks": "reader.ranks",
    **{name: "reader.load" for name in ("Logdir", "ScalarSeries", "HistogramSeries", "ImageRecord", "AudioRecord",
                                   "TextRecord", "PrCurveRecord", "TensorRecord", "HParamsRecord", "VideoRecord",
                                   "MeshRecord", "EmbeddingRecord", "ReadWarning")},
}
# pure summary builders (builders/) are also reachable as tfevents.summaries.builders.<name>
_BUILDERS = ("scalar", "histogram", "histogram_raw", "image", "images", "figure", "audio", "text", "pr_curve",
             "pr_curve_raw", "hparams", "custom_scalars", "custom_scalars_multilinechart",
             "custom_scalars_marginchart", "tensor", "mesh", "video", "image_with_boxes")
_EXPORTS.update({name: "builders" for name in _BUILDERS})

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
