"""TensorBoard's ``TensorBoardDataProvider`` gRPC service over a :class:`LiveLogdir`.

Each RPC answers as the Rust data server's ``server.rs`` does: a plugin filter is required (INVALID_ARGUMENT
otherwise), run and tag filters are exact name sets, ``Downsample.num_points`` keeps ``num_points`` points with
the last always among them, List* report ``max_step`` / ``max_wall_time`` (and ``max_length`` for blob
sequences) with the series' SummaryMetadata, runs are listed by start time, blob keys are the URL-safe base64 of
the JSON ``[experiment_id, run, tag, step, index]``, and ReadBlob streams a blob in 8 MiB chunks.
"""
from __future__ import annotations

import base64
import json
from typing import Iterable, Iterator, Optional

import grpc
import numpy as np
from tensorboard.data.proto import data_provider_pb2 as pb
from tensorboard.data.proto import data_provider_pb2_grpc as pb_grpc

from tfevents.summaries.live.loader import BLOB_SEQUENCE, SCALAR, TENSOR, UNKNOWN, LiveLogdir, tensor_bytes
from tfevents.summaries.live.reservoir import sample_indices

__all__ = ["DataProvider", "blob_key", "parse_blob_key", "downsample_indices"]

BLOB_CHUNK_SIZE = 8 << 20


def blob_key(experiment_id: str, run: str, tag: str, step: int, index: int) -> str:
    """The Rust server's blob key: URL-safe base64 (no padding) of compact JSON."""
    wire = json.dumps([experiment_id, run, tag, int(step), int(index)], separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(wire.encode("utf-8")).rstrip(b"=").decode("ascii")


def parse_blob_key(key: str):
    """(experiment_id, run, tag, step, index) of a blob key; ValueError if it is not one."""
    raw = base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
    eid, run, tag, step, index = json.loads(raw.decode("utf-8"))
    if not (isinstance(run, str) and isinstance(tag, str) and isinstance(step, int) and isinstance(index, int)
            and index >= 0):
        raise ValueError("not a blob key: %r" % (key,))
    return eid, run, tag, step, index


def downsample_indices(steps: np.ndarray, num_points: int) -> Optional[np.ndarray]:
    """Indices of the points kept when ``num_points`` of ``len(steps)`` are asked for: None for all, else the
    reservoir's own rule (the last, and ``num_points - 1`` others of least hash priority)."""
    return None if num_points >= len(steps) else sample_indices(steps, num_points)


def _plugin(request, context) -> str:
    name = request.plugin_filter.plugin_name
    if not name:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "must specify non-empty plugin name")
    return name


def _num_points(request, context) -> int:
    if not request.HasField("downsample"):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "must specify downsample")
    n = request.downsample.num_points
    if n < 0:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "num_points must be non-negative; got %d" % n)
    return n


def _filters(request):
    rtf = request.run_tag_filter
    runs = set(rtf.runs.names) if rtf.HasField("runs") else None
    tags = set(rtf.tags.names) if rtf.HasField("tags") else None
    return runs, tags


class DataProvider(pb_grpc.TensorBoardDataProviderServicer):
    """The service; ``logdir`` is kept current by whoever calls its ``reload()`` (see serve/server.py)."""

    def __init__(self, logdir: LiveLogdir, data_location: Optional[str] = None):
        self.logdir = logdir
        self.data_location = data_location if data_location is not None else logdir.path

    # -- selection

    def _series(self, request, context, data_class: int) -> Iterator:
        """(run name, tag, Series) of the non-empty series the request selects."""
        plugin = _plugin(request, context)
        want_runs, want_tags = _filters(request)
        with self.logdir.lock:
            if want_runs is not None:
                runs = [(r, self.logdir.runs[r]) for r in want_runs if r in self.logdir.runs]
            else:
                runs = list(self.logdir.runs.items())
            picked = []
            for name, run in runs:
                if want_tags is not None:
                    items = [(t, run.series[t]) for t in want_tags if t in run.series]
                else:
                    items = list(run.series.items())
                for tag, s in items:
                    if s.data_class == data_class and s.plugin == plugin and s.reservoir.stats[0]:
                        picked.append((name, tag, s))
        return iter(picked)

    @staticmethod
    def _entries(response, picked: Iterable, fill) -> None:
        by_run = {}
        for run, tag, s in picked:
            entry = by_run.get(run)
            if entry is None:
                entry = by_run[run] = response.runs.add(run_name=run)
            fill(entry.tags.add(tag_name=tag), s)

    @staticmethod
    def _metadata(target, s) -> None:
        _, target.max_step, target.max_wall_time = s.reservoir.stats
        target.summary_metadata.MergeFromString(s.metadata)

    @staticmethod
    def _read(target, s, num_points: int):
        """Fill ``target``'s step and wall_time columns from ``s`` downsampled; its values are returned."""
        steps, walls, values = s.reservoir.data
        keep = downsample_indices(steps, num_points)
        if keep is not None:
            steps, walls, values = steps[keep], walls[keep], values[keep]
        target.step.extend(steps.tolist())
        target.wall_time.extend(walls.tolist())
        return steps, values

    @staticmethod
    def _points(s, num_points: int):
        """(steps, walls, values) of a series, downsampled to ``num_points``."""
        steps, walls, values = s.reservoir.data
        keep = downsample_indices(steps, num_points)
        return (steps, walls, values) if keep is None else (steps[keep], walls[keep], values[keep])

    # -- RPCs

    def GetExperiment(self, request, context):
        return pb.GetExperimentResponse(data_location=self.data_location)

    def ListPlugins(self, request, context):
        names = set()
        with self.logdir.lock:
            for run in self.logdir.runs.values():
                names.update(s.plugin for s in run.series.values() if s.data_class != UNKNOWN)
        return pb.ListPluginsResponse(plugins=[pb.Plugin(name=n) for n in sorted(names)])

    def ListRuns(self, request, context):
        with self.logdir.lock:
            runs = [(run.start_time, name) for name, run in self.logdir.runs.items() if run.start_time is not None]
        runs.sort()
        return pb.ListRunsResponse(runs=[pb.Run(name=name, start_time=t) for t, name in runs])

    def ListScalars(self, request, context):
        response = pb.ListScalarsResponse()
        self._entries(response, self._series(request, context, SCALAR),
                      lambda entry, s: self._metadata(entry.metadata, s))
        return response

    def ListTensors(self, request, context):
        response = pb.ListTensorsResponse()
        self._entries(response, self._series(request, context, TENSOR),
                      lambda entry, s: self._metadata(entry.metadata, s))
        return response

    def ListBlobSequences(self, request, context):
        response = pb.ListBlobSequencesResponse()

        def fill(entry, s):
            self._metadata(entry.metadata, s)
            entry.metadata.max_length = max(len(v) for v in s.reservoir.data[2])
        self._entries(response, self._series(request, context, BLOB_SEQUENCE), fill)
        return response

    def ReadScalars(self, request, context):
        response = pb.ReadScalarsResponse()
        num_points = _num_points(request, context)

        def fill(entry, s):
            entry.data.value.extend(self._read(entry.data, s, num_points)[1].tolist())
        self._entries(response, self._series(request, context, SCALAR), fill)
        return response

    def ReadTensors(self, request, context):
        response = pb.ReadTensorsResponse()
        num_points = _num_points(request, context)

        def fill(entry, s):
            for value in self._read(entry.data, s, num_points)[1]:
                entry.data.value.add().MergeFromString(tensor_bytes(value))
        self._entries(response, self._series(request, context, TENSOR), fill)
        return response

    def ReadBlobSequences(self, request, context):
        response = pb.ReadBlobSequencesResponse()
        num_points = _num_points(request, context)
        eid = request.experiment_id
        # the run is needed for the keys: fill per (run, tag)
        for run, tag, s in self._series(request, context, BLOB_SEQUENCE):
            entry = next((e for e in response.runs if e.run_name == run), None) or response.runs.add(run_name=run)
            tag_entry = entry.tags.add(tag_name=tag)
            steps, values = self._read(tag_entry.data, s, num_points)
            for step, blobs in zip(steps.tolist(), values):
                seq = tag_entry.data.values.add()
                for i in range(len(blobs)):
                    seq.blob_refs.add(blob_key=blob_key(eid, run, tag, step, i))
        return response

    def ReadBlob(self, request, context):
        try:
            _, run_name, tag, step, index = parse_blob_key(request.blob_key)
        except (ValueError, TypeError, UnicodeDecodeError) as err:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "failed to parse blob key: %s" % err)
        with self.logdir.lock:
            run = self.logdir.runs.get(run_name)
            s = run.series.get(tag) if run is not None else None
        if run is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "no such run: %r" % run_name)
        if s is None or s.data_class != BLOB_SEQUENCE:
            context.abort(grpc.StatusCode.NOT_FOUND, "run %r has no such tag: %r" % (run_name, tag))
        steps, _, values = s.reservoir.data
        where = np.flatnonzero(steps == step)
        if not len(where):
            context.abort(grpc.StatusCode.NOT_FOUND,
                          "run %r, tag %r has no step %d; may have been evicted" % (run_name, tag, step))
        blobs = values[where[0]]
        if index >= len(blobs):
            context.abort(grpc.StatusCode.NOT_FOUND, "blob sequence at run %r, tag %r, step %d has no index %d "
                          "(length: %d)" % (run_name, tag, step, index, len(blobs)))
        blob = blobs[index]
        for start in range(0, len(blob), BLOB_CHUNK_SIZE):
            yield pb.ReadBlobResponse(data=blob[start:start + BLOB_CHUNK_SIZE])
