"""A reader ``Logdir`` of what a :class:`~.loader.LiveLogdir` keeps now: the offline reader's records of a live logdir.

The live loader keeps each series as TensorBoard's data server serves it (``data_compat``: a value's kind is
fixed once, histograms as [k, 3] tensors, images and audio as blob sequences); the offline reader turns events into
typed records (``reader/types.py``) by its own rules (``reader/merge.py``). Rather than decode the kept values a
second time by hand, :func:`snapshot` puts them back through the reader's own normalisation: one
:class:`~tfevents.summaries.reader.decode.FileRows` per run, as a scan of one file would fill it, then
``merge.merge_run`` and ``Logdir.add_run``. Each kept value goes in as what a writer of that form would have
written:

- a tensor series' values as ``(offset, step, wall_time, "tensor", TensorProto)`` with the series' metadata (a
  histogram as the [k, 3] tensor ``values.tensor_bytes`` rebuilds, a TF2 histogram, text, PR curve, mesh part,
  HParams value or other tensor as it was logged);
- a blob sequence's blobs as the DT_STRING tensor TF2's summaries write: images (and GIF videos) ``[width,
  height, encoded...]``, audio ``[k, 2]`` of (clip, label) with the labels empty (the loader keeps the clips only),
  a graph plugin's lone string as a 0-d tensor;
- the run's graph (``__run_graph__``) and each tagged RunMetadata as the Event fields they came from;
- a scalar series' points as the scalar columns.

So the offsets are the kept points' order in the run, the restarts mode is ``none`` (the reservoirs already applied
TensorBoard's rule), and every kind is normalised once, by the reader's code. What the loader does not keep
cannot come back (see :func:`snapshot`).
"""
from __future__ import annotations

import os
from typing import Dict, Iterable, List, Optional, Tuple

import numpy as np

from google.protobuf.message import DecodeError

from tfevents.proto import plugin_hparams_pb2, summary_pb2, tensor_pb2, types_pb2

from ..reader.decode import FileRows
from ..reader.kinds import KINDS, KIND_NAMES, check_kinds
from ..reader.load import Logdir
from ..reader.merge import merge_run
from .loader import BLOB_SEQUENCE, SCALAR, TENSOR, LiveLogdir
from .values import GRAPH_STRING_PLUGINS, NULL_TENSOR, RUN_GRAPH_TAG, tensor_bytes

__all__ = ["snapshot", "SNAPSHOT_KINDS", "DEFAULT_KINDS"]

# Kinds the live loader has no series of: embeddings live in projector files, session logs are not kept.
_NOT_KEPT = frozenset({"embeddings", "session_logs"})
SNAPSHOT_KINDS = frozenset(KIND_NAMES - _NOT_KEPT)
"""The kinds :func:`snapshot` can give: every kind the live loader keeps values of."""
DEFAULT_KINDS = frozenset(SNAPSHOT_KINDS - {"scalars"})
"""The kinds :func:`snapshot` gives by default: all but scalars (the read API's ``points`` serves those as they
are)."""


def _blob_tensor(blobs: List[bytes], plugin: str) -> tensor_pb2.TensorProto:
    """A blob sequence's value as the DT_STRING tensor it is served from (the inverse of ``values.blob_sequence``):
    ``[k, 2]`` (clip, empty label) for audio, 0-d for a graph plugin's one string, else 1-D."""
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING)
    if plugin == KINDS["audio"].plugin:
        for blob in blobs:
            t.string_val.extend((blob, b""))
        t.tensor_shape.dim.add(size=len(blobs))
        t.tensor_shape.dim.add(size=2)
    else:
        t.string_val.extend(blobs)
        if not (plugin in GRAPH_STRING_PLUGINS and len(blobs) == 1):
            t.tensor_shape.dim.add(size=len(blobs))
    return t


# The order every writer writes a run's HParams summaries in (TF2's hparams_config then hparams, tensorboardX's and
# torch's add_hparams): the reader merges a run's HParams records in file order, first set value first.
_HPARAMS_ORDER = {"experiment": 0, "session_start_info": 1, "session_end_info": 2}


def _file_order(entry: tuple) -> tuple:
    """Where a kept series stands in the run's files, as near as the kept points tell (the loader keeps no
    offsets, and lists a scan's new tags in no particular order): by its first kept point's wall time and step,
    then HParams summaries in the order writers write them (one event's values share a wall time), then by tag."""
    info, steps, walls, _ = entry
    wall = float(walls[0]) if len(walls) else float("inf")
    rank = 3
    if info.plugin == KINDS["hparams"].plugin and info.metadata:
        try:
            content = summary_pb2.SummaryMetadata.FromString(info.metadata).plugin_data.content
            rank = _HPARAMS_ORDER.get(plugin_hparams_pb2.HParamsPluginData.FromString(content).WhichOneof("data"), 3)
        except DecodeError:
            pass
    return (wall if wall == wall else float("inf"), int(steps[0]) if len(steps) else 0, rank, info.tag)


def _kept(live: LiveLogdir, scalars: bool) -> Tuple[List[str], Dict[str, List[tuple]]]:
    """``(run names, {run: [(TagInfo, steps, wall times, values)]})`` of every non-empty series, in file order as
    near as :func:`_file_order` tells: tensors as TensorProto bytes, blob sequences as lists of bytes, scalars as
    float64. The series are listed and their points taken under the loader's lock, so that a reload pass cannot
    change a run between two of its series; the values are unpacked after (a reservoir's state is replaced whole on
    every offer, and a kept histogram compacted in place is the same histogram either way: ``tensor_bytes``)."""
    taken: List[tuple] = []
    with live.lock:
        names = live.run_names()
        for info in live.tags():
            if info.data_class == SCALAR and not scalars:
                continue
            points = live.points(info.run, info.tag)
            if points is not None:
                taken.append((info, points.step, points.wall_time, list(points.value)))
    out: Dict[str, List[tuple]] = {}
    for info, steps, walls, values in taken:
        if info.data_class == TENSOR:
            values = [tensor_bytes(v) for v in values]
        elif info.data_class == BLOB_SEQUENCE:
            values = [list(v) for v in values]
        else:
            values = np.array(values, dtype=np.float64)
        out.setdefault(info.run, []).append((info, np.asarray(steps, np.int64), np.asarray(walls, np.float64), values))
    return names, {run: sorted(series, key=_file_order) for run, series in out.items()}


def _file_rows(path: str, series: List[tuple]) -> FileRows:
    """One run's kept series as the rows a scan of one event file holding them (in the order of ``series``, each
    series' points oldest first) would give ``merge_run``."""
    rows = FileRows(path)
    offset = 0
    for info, steps, walls, values in series:
        n = len(steps)
        offsets = np.arange(offset, offset + n, dtype=np.int64)
        offset += n
        step_list, wall_list = steps.tolist(), walls.tolist()
        if info.data_class == BLOB_SEQUENCE and info.tag == RUN_GRAPH_TAG and info.plugin == KINDS["graphs"].plugin:
            rows.graphs.extend((o, s, w, blobs[0], False)
                               for o, s, w, blobs in zip(offsets.tolist(), step_list, wall_list, values) if blobs)
            continue
        if info.data_class == BLOB_SEQUENCE and info.plugin == KINDS["run_metadata"].plugin:
            rows.run_metadata.extend((o, s, w, info.tag, blobs[0])
                                     for o, s, w, blobs in zip(offsets.tolist(), step_list, wall_list, values) if blobs)
            continue
        if info.metadata:
            rows.metadata[info.tag] = (int(offsets[0]), info.metadata)
        if info.data_class == SCALAR:
            rows.scalars[info.tag] = (offsets, steps, walls, values)
            continue
        entries = []
        for o, s, w, value in zip(offsets.tolist(), step_list, wall_list, values):
            if info.data_class == TENSOR:
                if value is None or value == NULL_TENSOR:
                    continue   # a value with no value field (its metadata is what counts): the reader skips it
                tensor = tensor_pb2.TensorProto.FromString(value)
            else:
                tensor = _blob_tensor(value, info.plugin)
            entries.append((o, s, w, "tensor", tensor))
        if entries:
            rows.values[info.tag] = entries
    return rows.finish()


def snapshot(live: LiveLogdir, kinds: Optional[Iterable[str]] = None) -> Logdir:
    """A reader :class:`~tfevents.summaries.reader.load.Logdir` of what ``live`` keeps now of ``kinds`` (a name or
    names of :data:`SNAPSHOT_KINDS`; None: :data:`DEFAULT_KINDS`, every kind but scalars), made by the offline
    reader's own merge step (the module docstring says how), so its records are the ones ``load_logdir`` makes of
    the same values.

    Read through ``live``'s read API under its lock. The records hold the points the reservoirs keep (a bounded
    sample, the last point always among them), and what the loader keeps of each: an old-style histogram as its
    [k, 3] tensor (``sum`` and ``sum_squares`` then estimated from bucket centres, the last limit ``max``), an
    old-style image without its colorspace, an audio clip without its label (rate, channels and frames read from
    the WAV header), a one-element tensor of another plugin as a float32 scalar, scalars as float32, a run's graph
    from GraphDef events only. Tensors of a plugin TensorBoard gives no data class (none, or ``add_tensor``'s
    ``tensor``), embeddings and session logs are not kept (ValueError for the last two). ``files`` holds no files
    (none were read), ``problems`` only the merge's own."""
    wanted = check_kinds(kinds) if kinds is not None else DEFAULT_KINDS
    not_kept = wanted & _NOT_KEPT
    if not_kept:
        raise ValueError("the live loader keeps no %s; snapshot gives %s"
                         % (" or ".join(sorted(not_kept)), ", ".join(sorted(SNAPSHOT_KINDS))))
    names, kept = _kept(live, "scalars" in wanted)
    logdir = Logdir(live.path, runs=names, restarts="tensorboard")
    for run in names:
        if run in kept:   # (a run with nothing kept of these kinds adds nothing but its files: no merge needed)
            logdir.add_run(merge_run(run, [_file_rows(os.path.join(live.path, run), kept[run])], "none", wanted))
        logdir.files[run] = []
    return logdir
