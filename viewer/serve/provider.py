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
from typing import Iterable, List, Optional

import grpc
import numpy as np
from tensorboard.data.proto import data_provider_pb2 as pb
from tensorboard.data.proto import data_provider_pb2_grpc as pb_grpc

from tfevents.summaries.live.loader import BLOB_SEQUENCE, SCALAR, TENSOR, LiveLogdir, Points, TagInfo
from tfevents.summaries.live.values import tensor_bytes

__all__ = ["DataProvider", "blob_key", "parse_blob_key"]

BLOB_CHUNK_SIZE = 8 << 20
_NO_POINTS = Points(np.empty(0, np.int64), np.empty(0), np.empty(0, object))


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

    # -- selection, through the loader's read API

    def _series(self, request, context, data_class: int) -> List[TagInfo]:
        """The non-empty series the request selects."""
        plugin = _plugin(request, context)
        want_runs, want_tags = _filters(request)
        return self.logdir.tags(want_runs, want_tags, plugin=plugin, data_class=data_class)

    @staticmethod
    def _entries(response, picked: Iterable[TagInfo], fill) -> None:
        by_run = {}
        for info in picked:
            entry = by_run.get(info.run)
            if entry is None:
                entry = by_run[info.run] = response.runs.add(run_name=info.run)
            fill(entry.tags.add(tag_name=info.tag), info)

    @staticmethod
    def _metadata(target, info: TagInfo) -> None:
        target.max_step, target.max_wall_time = info.last_step, info.max_wall_time
        target.summary_metadata.MergeFromString(info.metadata)

    def _read(self, target, info: TagInfo, num_points: int):
        """Fill ``target``'s step and wall_time columns from the series downsampled; its steps and values are
        returned."""
        points = self.logdir.points(info.run, info.tag, num_points) or _NO_POINTS  # None: the run went meanwhile
        target.step.extend(points.step.tolist())
        target.wall_time.extend(points.wall_time.tolist())
        return points.step, points.value

    # -- RPCs

    def GetExperiment(self, request, context):
        return pb.GetExperimentResponse(data_location=self.data_location)

    def ListPlugins(self, request, context):
        return pb.ListPluginsResponse(plugins=[pb.Plugin(name=n) for n in self.logdir.plugin_names()])

    def ListRuns(self, request, context):
        return pb.ListRunsResponse(runs=[pb.Run(name=name, start_time=t) for name, t in self.logdir.run_starts()])

    def ListScalars(self, request, context):
        response = pb.ListScalarsResponse()
        self._entries(response, self._series(request, context, SCALAR),
                      lambda entry, info: self._metadata(entry.metadata, info))
        return response

    def ListTensors(self, request, context):
        response = pb.ListTensorsResponse()
        self._entries(response, self._series(request, context, TENSOR),
                      lambda entry, info: self._metadata(entry.metadata, info))
        return response

    def ListBlobSequences(self, request, context):
        response = pb.ListBlobSequencesResponse()

        def fill(entry, info):
            self._metadata(entry.metadata, info)
            entry.metadata.max_length = info.max_length
        self._entries(response, self._series(request, context, BLOB_SEQUENCE), fill)
        return response

    def ReadScalars(self, request, context):
        response = pb.ReadScalarsResponse()
        num_points = _num_points(request, context)

        def fill(entry, info):
            entry.data.value.extend(self._read(entry.data, info, num_points)[1].tolist())
        self._entries(response, self._series(request, context, SCALAR), fill)
        return response

    def ReadTensors(self, request, context):
        response = pb.ReadTensorsResponse()
        num_points = _num_points(request, context)

        def fill(entry, info):
            for value in self._read(entry.data, info, num_points)[1]:
                entry.data.value.add().MergeFromString(tensor_bytes(value))
        self._entries(response, self._series(request, context, TENSOR), fill)
        return response

    def ReadBlobSequences(self, request, context):
        response = pb.ReadBlobSequencesResponse()
        num_points = _num_points(request, context)
        eid = request.experiment_id
        # the run is needed for the keys: fill per (run, tag)
        for info in self._series(request, context, BLOB_SEQUENCE):
            entry = (next((e for e in response.runs if e.run_name == info.run), None)
                     or response.runs.add(run_name=info.run))
            tag_entry = entry.tags.add(tag_name=info.tag)
            steps, values = self._read(tag_entry.data, info, num_points)
            for step, blobs in zip(steps.tolist(), values):
                seq = tag_entry.data.values.add()
                for i in range(len(blobs)):
                    seq.blob_refs.add(blob_key=blob_key(eid, info.run, info.tag, step, i))
        return response

    def ReadBlob(self, request, context):
        try:
            _, run_name, tag, step, index = parse_blob_key(request.blob_key)
        except (ValueError, TypeError, UnicodeDecodeError) as err:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "failed to parse blob key: %s" % err)
        try:
            blob = self.logdir.blob(run_name, tag, step, index)
        except LookupError as err:
            context.abort(grpc.StatusCode.NOT_FOUND, err.args[0])
        for start in range(0, len(blob), BLOB_CHUNK_SIZE):
            yield pb.ReadBlobResponse(data=blob[start:start + BLOB_CHUNK_SIZE])
