"""Merging one run's files into the reader's series: kinds by first metadata, restarts, records.

Files of a run are read in name order; a point's order key is ``file index << 40 | byte offset``.
A tag's kind comes from the first metadata its run holds for it, as in TensorBoard: old-style
values (histo, image, audio) keep their own kind; tensor values go by the plugin name (scalars,
histograms, images, audio, text, pr_curves, hparams, mesh; anything else is a plain tensor).
Images whose encoded data is a GIF are videos (tensorboardX/torch ``add_video``). Mesh tensors are
regrouped by the mesh name in their MeshPluginData into one MeshRecord per step. A tensor of one
element travels with the scalar columns until its kind is known; when it turns out not to be a scalar,
its record is read again (``reread``) so it keeps its dtype and shape.
"""
from __future__ import annotations

import io
import json
from collections import defaultdict
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from google.protobuf.message import DecodeError

from tfevents.proto import event_pb2, plugin_hparams_pb2, plugin_mesh_pb2, summary_pb2

from . import restarts as _restarts
from .decode import FileRows, Problem, tensor_to_ndarray
from .kinds import KINDS, add_kind_properties, kind_of_old_style, kind_of_plugin
from .types import (AudioRecord, HistogramSeries, HParamsRecord, ImageRecord, MeshRecord, PrCurveRecord,
                            ScalarSeries, TensorRecord, TextRecord, VideoRecord)

__all__ = ["merge_run", "RunData"]

_KEY_SHIFT = 40
_STATUS = {v.number: v.name for v in event_pb2.SessionLog.SessionStatus.DESCRIPTOR.values}


class RunData:
    """Everything of one run, ready to be put into a Logdir: ``data`` by kind (``reader/kinds.py``), a dict tag ->
    records for the series and ``run_metadata``, the record itself for the per-run kinds (``hparams`` and ``graphs``:
    None when the run has none; ``session_logs``: a list). Each kind is an attribute too (``data.scalars``)."""

    def __init__(self, run: str):
        self.run = run
        self.data: Dict[str, Any] = {k.name: ({} if k.key != "run" else [] if k.record is list else None)
                                     for k in KINDS.values() if k.name != "embeddings"}
        self.problems: List[Problem] = []
        self.out_of_order: Dict[tuple, int] = {}  # (kind, tag) -> count of steps lower than the one before
        self.purged: Dict[tuple, int] = {}        # (kind, tag) -> points dropped by restarts
        self.metadata: Dict[str, summary_pb2.SummaryMetadata] = {}
        self.files: List[str] = []


add_kind_properties(RunData, [k for k in KINDS if k != "embeddings"])


def _kind_of_tensor(meta: Optional[summary_pb2.SummaryMetadata]) -> str:
    if meta is None:
        return "tensors"
    if meta.data_class == summary_pb2.DATA_CLASS_SCALAR:
        return "scalars"
    return kind_of_plugin(meta.plugin_data.plugin_name)


def _scalar_rows_kind(meta: Optional[summary_pb2.SummaryMetadata]) -> str:
    """Kind of a tag's scalar rows (simple_value, or one-element numeric tensors)."""
    if meta is None or meta.data_class == summary_pb2.DATA_CLASS_SCALAR:
        return "scalars"
    plugin = meta.plugin_data.plugin_name
    return "scalars" if plugin == "" else kind_of_plugin(plugin)


def _series_kinds(kinds: Optional[frozenset]) -> Optional[frozenset]:
    """The value kinds to keep for the record kinds asked for (videos come from image values)."""
    if kinds is None or "videos" not in kinds:
        return kinds
    return kinds | {"images"}


def merge_run(run: str, files: Sequence[FileRows], mode: str, kinds: Optional[frozenset],
              reread: Optional[Callable[[str, List[int]], List[bytes]]] = None) -> RunData:
    """One run's RunData from its files' rows. ``reread(path, offsets)`` returns the payloads of the
    records at ``offsets`` of ``path``: one-element tensors that are not scalars are read again through
    it to keep their dtype and shape (without it they stay float64 0-d values)."""
    out = RunData(run)
    wanted = kinds
    kinds = _series_kinds(kinds)
    out.files = [f.path for f in files]
    # -- gather, with run-wide order keys
    first_meta: Dict[str, tuple] = {}
    scalar_parts: Dict[str, list] = defaultdict(list)
    value_items: Dict[str, list] = defaultdict(list)
    file_versions, starts, graphs, run_meta, session_logs = [], [], [], [], []
    where = {}  # key -> (path, offset), for reports
    tensor_scalars = set()  # tags with tensor-style scalar rows: the legacy accumulator never purges those
    for index, rows in enumerate(files):
        base = index << _KEY_SHIFT
        out.problems.extend(rows.problems)
        for tag, (offset, meta) in rows.metadata.items():
            if tag not in first_meta:
                first_meta[tag] = (base + offset, meta)
        for tag, (offsets, steps, walls, values) in rows.scalars.items():
            if base:
                offsets = offsets + base
            scalar_parts[tag].append((offsets, steps, walls, values))
        for tag, items in rows.values.items():
            value_items[tag].extend((base + o, s, w, what, p) for o, s, w, what, p in items)
        tensor_scalars |= rows.tensor_scalars
        file_versions.extend((base + o, v) for o, v in rows.file_versions)
        for o, s, w, status, ckpt in rows.session_logs:
            session_logs.append((base + o, s, w, status, ckpt))
            if status == event_pb2.SessionLog.START:
                starts.append((base + o, s))
                where[base + o] = (rows.path, o)
        graphs.extend((base + o, s, w, g, m) for o, s, w, g, m in rows.graphs)
        run_meta.extend((base + o, s, w, t, b) for o, s, w, t, b in rows.run_metadata)
    metas = {tag: summary_pb2.SummaryMetadata.FromString(b) for tag, (_, b) in first_meta.items()}
    out.metadata = metas

    # -- series by (kind, tag)
    series: Dict[tuple, _restarts.Series] = {}
    payloads: Dict[tuple, object] = {}
    for tag, parts in scalar_parts.items():
        kind = _scalar_rows_kind(metas.get(tag))
        # one part: the scanner's columns are strided views of its rows; contiguous copies let the rows go (and
        # give Arrow buffers it can take as they are)
        keys, steps, walls, values = ((c.copy() for c in parts[0]) if len(parts) == 1
                                      else (np.concatenate(c) for c in zip(*parts)))
        if kind == "scalars":
            series[(kind, tag)] = _restarts.Series(keys, steps, walls)
            payloads[(kind, tag)] = values
        else:  # one-element tensors of some other plugin: keep them as tensors of their tag
            value_items[tag].extend((k, s, w, "scalar", v) for k, s, w, v in zip(keys.tolist(), steps.tolist(),
                                                                                  walls.tolist(), values.tolist()))
    for tag, items in value_items.items():
        items.sort(key=lambda it: it[0])
        by_kind = defaultdict(list)
        for it in items:
            what = it[3]
            kind = kind_of_old_style(what) or _kind_of_tensor(metas.get(tag))
            if kind == "scalars":
                continue  # a scalars tag holding a tensor with more than one element: TensorBoard skips it too
            by_kind[kind].append(it)
        for kind, its in by_kind.items():
            if kinds is not None and kind not in kinds:
                continue
            series[(kind, tag)] = _restarts.Series(np.array([i[0] for i in its], dtype=np.int64),
                                                   np.array([i[1] for i in its], dtype=np.int64),
                                                   np.array([i[2] for i in its], dtype=np.float64))
            payloads[(kind, tag)] = its
    if kinds is not None:
        for name in [n for n in series if n[0] not in kinds]:
            del series[name], payloads[name]

    # -- restarts
    for name, s in series.items():
        n_back = int(np.count_nonzero(np.diff(s.steps) < 0))
        if n_back:
            out.out_of_order[name] = n_back
    # the legacy EventAccumulator purges only its old-style stores (simple_value, histo, image, audio)
    tensor_style = {(k, t) for k, t in series if (k == "scalars" and t in tensor_scalars)
                    or (k != "scalars" and any(it[3] == "tensor" for it in payloads[(k, t)]))}
    masks, purges = _restarts.restart_masks(mode, series, file_versions, starts, legacy_exempt=tensor_style)
    for p in purges:
        total = sum(p.counts.values())
        if not total:
            continue
        for name, n in p.counts.items():
            out.purged[name] = out.purged.get(name, 0) + n
        path, offset = where.get(p.key, (files[p.key >> _KEY_SHIFT].path, p.key & ((1 << _KEY_SHIFT) - 1)))
        what = {"start": "SessionLog.START at step %d" % p.step,
                "out_of_order": "an event at step %d, below the step before it" % p.step,
                "step_back": "step going back to %d" % p.step}[p.cause]
        tags = ", ".join(sorted("%s (%d)" % (n[-1], c) for n, c in p.counts.items()))
        out.problems.append(Problem(path, offset, "purged", "%s dropped %d earlier point(s) with step >= %d: %s"
                                    % (what, total, p.step, tags)))

    # -- build the records
    mesh_parts = []
    for (kind, tag), s in series.items():
        keep = masks[(kind, tag)]
        if kind == "scalars":
            values = payloads[(kind, tag)]
            if keep.all():
                out.scalars[tag] = ScalarSeries(s.steps, s.wall_times, narrow_values(values))
            else:
                out.scalars[tag] = ScalarSeries(s.steps[keep], s.wall_times[keep], narrow_values(values[keep]))
            continue
        items = [it for it, k in zip(payloads[(kind, tag)], keep) if k]
        if reread is not None and kind in ("tensors", "meshes") and any(it[3] == "scalar" for it in items):
            items = _reread_tensors(tag, items, files, reread)
        built = _build(kind, tag, items, metas.get(tag), out, files)
        if kind == "hparams":
            out.hparams = _merge_hparams(out.hparams, built)
        elif kind == "meshes":
            mesh_parts.extend(built)
        elif kind == "images":
            _split_videos(tag, built, out, wanted)
        else:
            out.data[kind][tag] = built
    if mesh_parts:
        _group_meshes(mesh_parts, out)
    if kinds is None or "hparams" in kinds:
        # hparams live in the metadata (tensorboardX and torch write values without a value field)
        for tag in sorted(metas, key=lambda t: first_meta[t][0]):
            if metas[tag].plugin_data.plugin_name == "hparams" and ("hparams", tag) not in series:
                try:
                    out.hparams = _merge_hparams(out.hparams, _hparams(tag, [], metas[tag]))
                except DecodeError as err:
                    key = first_meta[tag][0]
                    out.problems.append(Problem(files[key >> _KEY_SHIFT].path, key & ((1 << _KEY_SHIFT) - 1),
                                                "unparseable", "hparams metadata of tag %r: %s" % (tag, err)))
    if graphs and (kinds is None or "graphs" in kinds):
        direct = [g for g in graphs if not g[4]]
        out.graphs = (direct or graphs)[-1][3]  # a graph_def event wins over a meta graph's graph
    for _, _, _, tag, blob in sorted(run_meta, key=lambda r: r[0]):
        out.run_metadata[tag] = blob
    out.session_logs = [(s, w, _STATUS.get(st, str(st)), ckpt) for _, s, w, st, ckpt in sorted(session_logs)]
    return out


def narrow_values(values: np.ndarray) -> np.ndarray:
    """Scalar values as float32 when that loses nothing (``simple_value`` is a float32 in the Event, so it
    always does), else float64 (a double or int64 tensor's value that float32 would round)."""
    narrow = values.astype(np.float32)
    with np.errstate(invalid="ignore"):
        exact = np.array_equal(narrow, values, equal_nan=True)
    return narrow if exact else np.asarray(values, dtype=np.float64)


# ---------------------------------------------------------------- per-kind builders

_MALFORMED = (ValueError, TypeError, IndexError, AttributeError, UnicodeError, DecodeError)


_BUILDERS: Dict[str, Callable] = {}


def builds(kind: str) -> Callable:
    """Register the function that makes ``kind``'s records of a tag from its ``(key, step, wall, what, payload)``
    items and first metadata (one per kind of ``reader/kinds.py`` whose values come in events as tensors)."""
    def register(function: Callable) -> Callable:
        _BUILDERS[kind] = function
        return function
    return register


def _build(kind, tag, items, meta, out: RunData, files):
    """``_BUILDERS[kind]`` over ``items``; a malformed value (say, a tensor of the wrong shape for
    its plugin) is left out and reported as 'unparseable' instead of failing the whole load."""
    builder = _BUILDERS[kind]
    try:
        return builder(tag, items, meta)
    except _MALFORMED:
        good = []
        for it in items:
            try:
                builder(tag, [it], meta)
                good.append(it)
            except _MALFORMED as err:
                key = it[0]
                out.problems.append(Problem(files[key >> _KEY_SHIFT].path, key & ((1 << _KEY_SHIFT) - 1),
                                            "unparseable", "%s value of tag %r at step %d: %s"
                                            % (kind, tag, it[1], err)))
        return builder(tag, good, meta)


@builds('histograms')
def _histograms(tag, items, meta) -> HistogramSeries:
    n = len(items)
    cols = {k: np.empty(n) for k in ("min", "max", "num", "sum", "sum_squares")}
    limits, counts = [], []
    for i, (_, _, _, what, p) in enumerate(items):
        if what == "histo":  # decoded by histo_row: (min, max, num, sum, sum_squares, limits, counts)
            cols["min"][i], cols["max"][i], cols["num"][i], cols["sum"][i], cols["sum_squares"][i] = p[:5]
            limits.append(np.frombuffer(p[5], dtype="<f8").astype(np.float64))
            counts.append(np.frombuffer(p[6], dtype="<f8").astype(np.float64))
        else:  # TF2 / tensor style: [k, 3] rows of (left edge, right edge, count)
            b = np.asarray(tensor_to_ndarray(p), dtype=np.float64).reshape(-1, 3)
            c = b[:, 2]
            centers = (b[:, 0] + b[:, 1]) / 2
            cols["min"][i] = b[0, 0] if len(b) else np.nan
            cols["max"][i] = b[-1, 1] if len(b) else np.nan
            cols["num"][i] = c.sum()
            cols["sum"][i] = float((c * centers).sum())  # bucket centers: the exact sums are not stored
            cols["sum_squares"][i] = float((c * centers ** 2).sum())
            limits.append(b[:, 1].copy())
            counts.append(c.copy())
    return HistogramSeries(np.array([it[1] for it in items], dtype=np.int64),
                           np.array([it[2] for it in items], dtype=np.float64),
                           cols["min"], cols["max"], cols["num"], cols["sum"], cols["sum_squares"], limits, counts)


@builds('images')
def _images(tag, items, meta) -> list:
    out = []
    for _, step, wall, what, p in items:
        if what == "image":
            out.append(ImageRecord(step, wall, p.width, p.height, p.colorspace, p.encoded_image_string))
        else:  # [width, height, image_1, ..., image_k]
            blobs = list(tensor_to_ndarray(p).reshape(-1))
            if len(blobs) < 2:
                continue
            w, h = int(blobs[0] or 0), int(blobs[1] or 0)
            for i, blob in enumerate(blobs[2:]):
                out.append(ImageRecord(step, wall, w, h, 0, blob, sample=i))
    return out


def _wav_header(blob: bytes):
    """(sample_rate, num_channels, frames) of a PCM WAV, or Nones."""
    if len(blob) >= 44 and blob[:4] == b"RIFF" and blob[8:12] == b"WAVE":
        try:
            import wave
            with wave.open(io.BytesIO(blob)) as w:
                return w.getframerate(), w.getnchannels(), w.getnframes()
        except Exception:  # not plain PCM, or damaged
            pass
    return None, None, None


@builds('audio')
def _audio(tag, items, meta) -> list:
    out = []
    for _, step, wall, what, p in items:
        if what == "audio":
            out.append(AudioRecord(step, wall, p.sample_rate, p.num_channels, p.encoded_audio_string,
                                   p.content_type or "audio/wav", length_frames=p.length_frames))
        else:  # [k, 2] of (encoded audio, label)
            a = tensor_to_ndarray(p).reshape(-1, 2) if p.tensor_shape.dim else tensor_to_ndarray(p).reshape(-1, 1)
            for i, row in enumerate(a):
                rate, channels, frames = _wav_header(row[0])
                label = row[1].decode("utf-8", "replace") if a.shape[1] > 1 else ""
                out.append(AudioRecord(step, wall, rate or 0.0, channels or 0, row[0], "audio/wav",
                                       length_frames=frames or 0, label=label, sample=i))
    return out


@builds('text')
def _text(tag, items, meta) -> list:
    out = []
    for _, step, wall, what, p in items:
        a = tensor_to_ndarray(p)
        if a.ndim == 0:
            text = a.item().decode("utf-8", "replace")
        else:
            text = np.vectorize(lambda b: b.decode("utf-8", "replace"), otypes=[object])(a).astype(str)
        out.append(TextRecord(step, wall, text))
    return out


@builds('pr_curves')
def _pr_curves(tag, items, meta) -> list:
    return [PrCurveRecord(step, wall, np.asarray(tensor_to_ndarray(p), dtype=np.float64))
            for _, step, wall, what, p in items]


@builds('tensors')
def _tensors(tag, items, meta) -> list:
    out = []
    for _, step, wall, what, p in items:
        value = np.asarray(p) if what == "scalar" else tensor_to_ndarray(p)
        out.append(TensorRecord(step, wall, value))
    return out


_MESH = plugin_mesh_pb2.MeshPluginData
_GIF = (b"GIF87a", b"GIF89a")


def _split_videos(tag: str, records: list, out: RunData, wanted: Optional[frozenset]) -> None:
    """Image records of ``tag`` into ``out.images`` and, for GIF data, ``out.videos``."""
    videos = [VideoRecord(r.step, r.wall_time, r.width, r.height, r.data, sample=r.sample)
              for r in records if bytes(r.data[:6]) in _GIF]
    images = [r for r in records if bytes(r.data[:6]) not in _GIF] if videos else records
    if (images or not videos) and (wanted is None or "images" in wanted):
        out.images[tag] = images
    if videos and (wanted is None or "videos" in wanted):
        out.videos[tag] = videos
    if videos and not images:  # the tag's restart notes belong to its videos
        for notes in (out.out_of_order, out.purged):
            if ("images", tag) in notes:
                notes[("videos", tag)] = notes.pop(("images", tag))


def _reread_tensors(tag: str, items: list, files, reread) -> list:
    """``items`` with each one-element tensor that went through the scalar columns read again as its
    TensorProto (dtype and shape kept); an item whose record cannot be read again is left as it is."""
    by_file = defaultdict(list)
    for i, it in enumerate(items):
        if it[3] == "scalar":
            by_file[it[0] >> _KEY_SHIFT].append(i)
    items = list(items)
    for index, positions in by_file.items():
        try:
            blobs = reread(files[index].path, [items[i][0] & ((1 << _KEY_SHIFT) - 1) for i in positions])
        except (OSError, ValueError):
            continue
        for i, blob in zip(positions, blobs):
            try:
                event = event_pb2.Event.FromString(blob)
            except DecodeError:
                continue
            for value in event.summary.value:
                if value.WhichOneof("value") == "tensor" and (value.tag or value.node_name) == tag:
                    key, step, wall, _, _ = items[i]
                    items[i] = (key, step, wall, "tensor", value.tensor)
                    break
    return items


@builds('meshes')
def _mesh_parts(tag, items, meta) -> list:
    """``(name, tag, key, step, wall, content_type, array, json_config)`` per value of one mesh component tag."""
    if meta is None or meta.plugin_data.plugin_name != "mesh":
        raise ValueError("mesh tag %r has no mesh plugin metadata" % tag)
    data = _MESH.FromString(meta.plugin_data.content)
    if data.content_type not in (_MESH.VERTEX, _MESH.FACE, _MESH.COLOR):
        raise ValueError("mesh tag %r has content type %d, not VERTEX, FACE or COLOR" % (tag, data.content_type))
    out = []
    for key, step, wall, what, p in items:
        array = tensor_to_ndarray(p) if what == "tensor" else np.asarray(p)
        if array.ndim != 3 or array.shape[2] != 3 or array.dtype.kind not in "biuf":
            raise ValueError("mesh %r %s tensor has shape %s and dtype %s, not numbers of shape [batch, count, 3]"
                             % (data.name or tag, _MESH.ContentType.Name(data.content_type), array.shape,
                                array.dtype))
        out.append((data.name or tag, tag, key, step, wall, data.content_type, array, data.json_config))
    return out


def _mesh_config(text: str) -> dict:
    try:
        config = json.loads(text) if text else None
    except ValueError:
        return {}
    return config if isinstance(config, dict) else {}  # tensorboardX writes 'null' for no configuration


def _group_meshes(parts: list, out: RunData) -> None:
    """MeshRecords by mesh name and step, as TensorBoard's mesh plugin pairs the components (the last
    value of a component at a step wins); a step without vertices has no record."""
    by_name: Dict[str, Dict[int, dict]] = defaultdict(dict)
    tag_names = {}
    for name, tag, key, step, wall, content_type, array, json_config in parts:
        tag_names[tag] = name
        slot = by_name[name].setdefault(step, {})
        if content_type not in slot or slot[content_type][0] < key:
            slot[content_type] = (key, wall, array, json_config)
    for name, steps in by_name.items():
        records = []
        for step in sorted(steps):
            slot = steps[step]
            if _MESH.VERTEX not in slot:
                continue
            _, wall, vertices, json_config = slot[_MESH.VERTEX]
            faces, colors = slot.get(_MESH.FACE), slot.get(_MESH.COLOR)
            records.append(MeshRecord(step, wall, vertices.astype(np.float32),
                                      None if faces is None else faces[2].astype(np.int32),
                                      None if colors is None else colors[2].astype(np.uint8),
                                      _mesh_config(json_config)))
        out.meshes[name] = records
    for notes in (out.out_of_order, out.purged):
        for kind, tag in [k for k in notes if k[0] == "meshes" and k[1] in tag_names]:
            n = notes.pop((kind, tag))
            target = (kind, tag_names[tag])
            notes[target] = max(notes.get(target, 0), n)


@builds('hparams')
def _hparams(tag, items, meta) -> HParamsRecord:
    record = HParamsRecord()
    if meta is None or not meta.plugin_data.content:
        return record
    data = plugin_hparams_pb2.HParamsPluginData.FromString(meta.plugin_data.content)
    which = data.WhichOneof("data")
    if which == "experiment":
        record.metrics = [m.name.tag for m in data.experiment.metric_infos]
        record.hparam_infos = {h.name: h.type for h in data.experiment.hparam_infos}
    elif which == "session_start_info":
        ssi = data.session_start_info
        from google.protobuf.json_format import MessageToDict
        record.hparams = {k: MessageToDict(v) for k, v in ssi.hparams.items()}
        record.group_name = ssi.group_name
        record.start_time = ssi.start_time_secs
    elif which == "session_end_info":
        record.status = plugin_hparams_pb2.Status.Name(data.session_end_info.status)
        record.end_time = data.session_end_info.end_time_secs
    return record


def _merge_hparams(a: Optional[HParamsRecord], b: HParamsRecord) -> HParamsRecord:
    if a is None:
        return b
    a.hparams = a.hparams or b.hparams
    a.metrics = a.metrics or b.metrics
    a.hparam_infos = a.hparam_infos or b.hparam_infos
    a.group_name = a.group_name or b.group_name
    a.start_time = a.start_time or b.start_time
    a.end_time = a.end_time or b.end_time
    a.status = a.status or b.status
    return a

