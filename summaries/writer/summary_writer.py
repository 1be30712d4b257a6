"""SummaryWriter: TF1's ``tf.summary.FileWriter`` surface plus the tensorboardX / torch ``add_*`` methods.

::

    from tfevents.summaries import SummaryWriter
    with SummaryWriter("runs/exp1") as w:
        for step in range(100):
            w.add_scalar("loss", 1.0 / (step + 1), step)

A scalar's Event bytes are built directly (``_event_bytes``; no protobuf object per point); every
other kind goes through a pure builder of ``builders.py`` and is wrapped into an Event here. The
EventFileWriter underneath frames, queues and writes (see its docstring for flush/close/error
semantics). Builders (numpy) are imported on first use, so importing this module is cheap.

Where things go:

* ``logdir`` is a local folder or an fsspec URL (``s3://bucket/exp1``, with ``storage_options``): in
  an object store, new immutable objects, never an append (``object_sink``); a path that only
  looks like a URL (``s3:/bucket``) is a ValueError, a URL whose filesystem is not installed an
  ImportError naming its package.
* everything is written to ``logdir`` (one run), except
* ``add_scalars(main_tag, {key: v})``: sub-run ``<logdir>/<main_tag with "/" -> "_">_<key>``,
  tag ``main_tag`` (torch's layout). The sub-runs share the one writer thread and hold no open
  file between writes.
* ``add_hparams(..., run_name=None)``: the hparams summaries and the metric scalars go to
  ``logdir`` itself (so the run *is* the trial); with ``run_name`` to ``<logdir>/<run_name>``.
  Unlike torch, no sub-run named after the current time is made.
* A sub-run never leaves ``logdir``: a key or ``run_name`` that is absolute or climbs out with
  ``..`` is a ValueError (torch would write wherever the path leads).

Images, image grids, images with boxes, audio, video, histograms, meshes and PR curves are encoded
on the writer's background thread (``encode_in_background=True``, the default): the call checks the
tag and the arguments' shapes, layouts, dtypes and options (``builders.arguments``: an argument error
is raised in the call), copies its array arguments (``builders.host_copy``: a device tensor is copied
to the host, so the caller may change or free it at once) and queues a deferred event
(``EventFileWriter.add_deferred_event``) in its place among the others; the thread runs the same
builder the synchronous path runs, so the file is the same event for event. An error found only
while encoding (NaN pixels, predictions outside [0, 1]...) is raised by the caller's next call on the
writer, or by ``flush()``/``close()``, naming the method, tag and step; the events around it are
written. An embedding's files are written in the call, as the peers write them.

Tags are kept as given for every kind, as ``torch.utils.tensorboard`` keeps them (tensorboardX cleans
the tags of scalars, histograms, images and videos; TF1's summary ops, ``tfevents.core.summary``, clean
every tag): ``my loss`` stays ``my loss``. The builders clean tags when called alone; the writer calls
them inside ``tags.tags_as_given()``.

A drop-in for tensorboardX's and torch's ``SummaryWriter``: their keywords (``log_dir``, ``comment``,
``purge_step``, ``write_to_disk``, ``new_style``...), a ``comment`` as the second positional argument,
``log_dir``/``logdir`` attributes, ``file_writer`` and ``_get_file_writer()`` (their ``FileWriter``:
``PeerFileWriter``), ``use_metadata``, and a closed writer that reopens on the next write (a new event
file in the same run folder), as both peers do. Argument errors that need no encoding (shapes, layouts,
dtypes, options: ``builders.arguments``) are raised in the call, also for the kinds encoded later.
"""
from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Sequence

from . import event_bytes as _event_bytes, ranks as _ranks
from .. import run_info
from .graph_methods import GraphMethods
from .hparams_methods import HParamsMethods
from .media_methods import MediaMethods
from ..tags import check_tag as _check_tag, tags_as_given
from .call_values import as_scalar_value, as_step, as_walltime, message_bytes
from .event_file_writer import EventFileWriter
from .peer_file_writer import PeerFileWriter

__all__ = ["SummaryWriter", "FileWriter", "PeerFileWriter"]

_scalar_event = _event_bytes.scalar_event
_now = time.time


def _default_logdir(comment: str) -> str:
    """torch's default: ``runs/<Mon DD_HH-MM-SS>_<hostname><comment>``."""
    import socket

    return os.path.join("runs", time.strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname() + comment)


class SummaryWriter(GraphMethods, MediaMethods, HParamsMethods):
    """Writes Events for TensorBoard to a new event file in ``logdir``.

    Args (TF1 ``FileWriter`` order, except that a str second argument is the peers' ``comment``; the peers'
    other arguments by keyword):
        logdir: the run directory (created if missing). None: torch's ``runs/<date>_<host><comment>``.
        graph: a graph (anything with ``as_graph_def()``) or GraphDef to write first, with a
            MetaGraphDef holding it, as TF1's FileWriter does. A str here is ``comment``
            (``SummaryWriter(None, "_lr0.1")``, the peers' order).
        max_queue: events pending in memory before they are written and handed to the OS.
        flush_secs: most seconds a queued event waits before it is written.
        graph_def: a GraphDef to write (deprecated TF1 argument; prefer ``graph``).
        filename_suffix: appended to event file names.
        log_dir, comment: torch's names (``comment`` is used only when no logdir is given).
        purge_step: as torch/tensorboardX: write ``Event(step=purge_step, file_version)`` and a
            ``SessionLog.START`` at that step, so TensorBoard drops earlier points with step >=
            purge_step (a resumed run).
        storage_options: for a logdir given as an fsspec URL (``s3://bucket/exp1``, ``gs://``, ``az://``,
            ``memory://``, ...), the filesystem's options, as the reader takes them (credentials, endpoint).
            Each upload is a new object in the run's folder (see ``object_sink``); ``flush()`` and
            ``close()`` return once the records are stored (TimeoutError after their ``timeout``, 30 s by
            default). A store that is slow or down never raises into ``add_*``: the records wait.
        object_bytes: for a URL logdir, the bytes of records held before they are stored whatever the
            time (None: 8 MiB, ``object_sink.DEFAULT_OBJECT_BYTES``); otherwise they are stored every
            ``flush_secs``.
        max_held_bytes: for a URL logdir, the records waiting while the store is down beyond which the
            oldest are dropped, counted and warned about (None: 64 MiB, ``object_sink.DEFAULT_MAX_HELD_BYTES``).
        rank, ranks: which processes of a distributed job write (``writer/ranks.py``). ``rank``: this
            process's rank, None = found in torch.distributed or the launcher's environment (RANK,
            SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK; jax.process_index() if jax is imported).
            ``ranks="zero"`` (default): rank 0 writes ``logdir``, other ranks get a writer whose every
            method returns at once and writes nothing; ``"all"``: rank N writes ``<logdir>/rank_<N>``;
            a list of ranks: those write ``<logdir>/rank_<N>``, the others nothing.
        encode_in_background: encode images, audio, video, histograms, meshes and PR curves on the
            writer's thread (see the module docstring); False encodes them in the call, as torch and
            tensorboardX do (the same file).
        write_to_disk: tensorboardX's: False makes a writer whose every method returns at once and
            writes nothing, no folder either (the silent writer of ranks that do not write).
        comet_config: tensorboardX's Comet.ml logging; only ``{"disabled": True}`` (its default) is taken.
        labels, notes: tfevents' own (the peers have neither): the run's labels (non-empty strings without
            control characters) and notes, recorded once when the writer is made, as one change of the run's
            sidecar (``run_info.py``: ``<logdir>/.runinfo.json``, or a new ``.runinfo.<time>.<id>.json`` object
            for a URL logdir, with ``storage_options``), which TensorBoard and the peers' readers ignore. Labels
            are added to those the run has (a reopened run keeps its others); notes replace its notes. None:
            nothing is recorded. ``tfevents runs label`` / ``note`` change them later; a rank that does not
            write records nothing.

    Attributes: ``log_dir`` (torch's) and ``logdir`` (tensorboardX's) are the run's folder; ``max_queue``,
    ``flush_secs``, ``filename_suffix`` and ``purge_step`` are the arguments, as torch keeps them.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> "SummaryWriter":
        subdir = _ranks.rank_subdir(kwargs.get("ranks", "zero"), kwargs.get("rank"))
        if subdir is None or kwargs.get("write_to_disk", True) is False:
            return object.__new__(_silent_class(cls))
        writer = object.__new__(cls)
        writer._rank_subdir = subdir
        return writer

    def __init__(self, logdir: Optional[str] = None, graph: Any = None, max_queue: int = 10,
                 flush_secs: float = 120, graph_def: Any = None, filename_suffix: str = "", *,
                 log_dir: Optional[str] = None, comment: str = "", purge_step: Optional[int] = None,
                 session: Any = None,
                 storage_options: Optional[Dict[str, Any]] = None, object_bytes: Optional[int] = None,
                 max_held_bytes: Optional[int] = None,
                 rank: Optional[int] = None, ranks: _ranks.Ranks = "zero", encode_in_background: bool = True,
                 write_to_disk: bool = True, comet_config: Optional[Mapping[str, Any]] = None,
                 labels: Optional[Sequence[str]] = None, notes: Optional[str] = None) -> None:
        if session is not None:
            raise ValueError("session-based writers are not supported; pass logdir")
        if comet_config is not None and not comet_config.get("disabled", False):
            raise ValueError("comet_config: Comet.ml logging is not supported (only {'disabled': True})")
        if isinstance(graph, str):          # the peers' SummaryWriter(log_dir, comment)
            graph, comment = None, graph
        if logdir is None:
            logdir = log_dir if log_dir is not None else _default_logdir(comment)
        if not isinstance(logdir, (str, os.PathLike)):
            raise TypeError("logdir must be a path, got %s" % type(logdir).__name__)
        self._logdir = os.fspath(logdir)
        subdir = getattr(self, "_rank_subdir", None)
        if subdir is None:                  # not made by __new__ (a subclass overriding it)
            subdir = _ranks.rank_subdir(ranks, rank)
        if subdir:
            self._logdir = os.path.join(self._logdir, subdir)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._encode_in_background = bool(encode_in_background)
        self._suffix = filename_suffix or ""
        self._store = {"storage_options": storage_options, "object_bytes": object_bytes,   # URL logdirs
                       "max_held_bytes": max_held_bytes}
        self._scalar_packers: Dict[str, _event_bytes.ScalarPacker] = {}
        self._max_step = 0   # highest step logged in this run: where add_hparams puts its metrics
        self._sub_writers: Dict[str, EventFileWriter] = {}
        self._scalar_records: Dict[str, list] = {}   # add_scalars' values, for export_scalars_to_json
        self._run_metadata_tags: set = set()
        self._default_step: Optional[int] = None          # use_metadata's
        self._default_walltime: Optional[float] = None
        self._peer_file_writer = PeerFileWriter(self)
        # check the arguments before a file exists
        purge_step = self._purge_step = None if purge_step is None else as_step(purge_step)
        graph_bytes = None
        if graph is not None or graph_def is not None:
            graph_bytes = self._graph_def_bytes(graph if graph is not None else graph_def)
        labels = run_info.check_labels(labels) if labels is not None else ()
        if notes is not None and not isinstance(notes, str):
            raise TypeError("notes must be a str, got %s" % type(notes).__name__)
        self._file_writer = EventFileWriter(self._logdir, max_queue, flush_secs, self._suffix, **self._store)
        if labels or notes is not None:     # the run's sidecar (summaries/run_info.py), beside the event files
            fs, run_dir = self._file_writer.storage or (None, self._file_writer.get_logdir())
            try:
                run_info.change_run_info(run_dir, add_labels=labels, notes=notes, fs=fs)
            except BaseException:
                self._file_writer.close()
                raise
        if purge_step is not None:
            self._purge(purge_step)
        if graph_bytes is not None:
            self.add_graph(graph_bytes)
            self.add_meta_graph(self._meta_graph_of(graph_bytes))

    # ------------------------------------------------------------------ TF1 FileWriter
    def get_logdir(self) -> str:
        return self._logdir

    @property
    def log_dir(self) -> str:
        """The run's folder (torch's attribute)."""
        return self._logdir

    @property
    def logdir(self) -> str:
        """The run's folder (tensorboardX's attribute)."""
        return self._logdir

    @property
    def max_queue(self) -> int:
        return self._max_queue

    @property
    def flush_secs(self) -> float:
        return self._flush_secs

    @property
    def filename_suffix(self) -> str:
        return self._suffix

    @property
    def purge_step(self) -> Optional[int]:
        """The step given as ``purge_step`` (written once, when the writer was made)."""
        return self._purge_step

    @property
    def file_writer(self) -> Optional["PeerFileWriter"]:
        """The peers' ``FileWriter`` of ``logdir`` (``add_summary``, ``add_event``, ``add_graph``, ``get_logdir``),
        None after ``close()``, as in tensorboardX and torch (``_get_file_writer()`` reopens)."""
        return None if self._file_writer.closed else self._peer_file_writer

    def _get_file_writer(self) -> "PeerFileWriter":
        """The peers' ``FileWriter`` of ``logdir``, reopened if closed (called by Lightning's ``TensorBoardLogger``)."""
        self._open_writer()
        return self._peer_file_writer

    def _open_writer(self) -> EventFileWriter:
        """The run's EventFileWriter, reopened after ``close()`` (a new event file in the same folder), as the
        peers reopen on the next write."""
        writer = self._file_writer
        if writer.closed:
            writer.reopen()
        return writer

    def add_event(self, event: Any) -> None:
        """Write an Event proto (ours, TensorBoard's or TensorFlow's) as it is."""
        self._open_writer().add_serialized_event(message_bytes(event, "event", "Event"))

    def add_summary(self, summary: Any, global_step: Optional[int] = None,
                    walltime: Optional[float] = None) -> None:
        """Write a Summary proto (any Summary class) or its serialized bytes at ``global_step``."""
        self._add_summary_bytes(message_bytes(summary, "summary", "Summary"), global_step, walltime)

    def add_session_log(self, session_log: Any, global_step: Optional[int] = None,
                        walltime: Optional[float] = None) -> None:
        """Write a SessionLog (START marks a restart: TensorBoard drops later-stepped points before it)."""
        from tfevents.proto import event_pb2  # lazy: the scalar path writes bytes without protobuf

        event = event_pb2.Event(wall_time=as_walltime(walltime), step=as_step(global_step))
        event.session_log.ParseFromString(message_bytes(session_log, "session_log", "SessionLog"))
        self._open_writer().add_serialized_event(event.SerializeToString())

    def flush(self, timeout: Optional[float] = None) -> None:
        """Write everything queued (sub-runs too) and hand it to the OS; returns when done. For a URL logdir,
        waits at most ``timeout`` seconds in all (None: 30 s), then raises TimeoutError (the records are kept)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for writer in [self._file_writer] + list(self._sub_writers.values()):
            writer.flush(None if deadline is None else deadline - time.monotonic())

    def close(self, timeout: Optional[float] = None) -> None:
        """Flush and close every file. Idempotent. For a URL logdir, waits at most ``timeout`` seconds in all
        (None: 30 s each), then raises TimeoutError naming what was not stored."""
        errors = []
        deadline = None if timeout is None else time.monotonic() + timeout
        for writer in list(self._sub_writers.values()) + [self._file_writer]:
            try:
                writer.close(None if deadline is None else deadline - time.monotonic())
            except Exception as e:  # noqa: BLE001 - every file is closed, then the first error raised
                errors.append(e)
        self._sub_writers.clear()
        if errors:
            raise errors[0]

    def reopen(self) -> None:
        """After ``close()``: continue in a new event file in the same logdir (no-op if open)."""
        self._file_writer.reopen()

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "SummaryWriter(%r)" % self._logdir

    # ------------------------------------------------------------------ tensorboardX / torch
    def add_scalar(self, tag: str, scalar_value: Any, global_step: Optional[int] = None,
                   walltime: Optional[float] = None, new_style: bool = False, double_precision: bool = False, *,
                   display_name: str = "", summary_description: str = "") -> None:
        """One scalar point (stored as float32 ``simple_value``, TensorBoard's Scalars dashboard).

        ``scalar_value``: a number, numpy scalar, or one-element array/tensor (``float(x)``).
        ``new_style`` (torch's): a 0-d float32 tensor with plugin ``scalars`` instead (float64 with
        ``double_precision``). ``display_name``, ``summary_description`` (tensorboardX's; a str fifth and
        sixth argument, tensorboardX's order, is taken as them): the chart's title and tooltip.
        """
        if new_style or display_name or summary_description:
            self._add_scalar_summary(tag, scalar_value, global_step, walltime, new_style, double_precision,
                                     display_name, summary_description)
            return
        try:
            packer = self._scalar_packers[tag]
        except (KeyError, TypeError):
            packer = self._scalar_packer(tag)
        if type(scalar_value) is not float:
            scalar_value = as_scalar_value(scalar_value, tag)
        wall = _now() if walltime is None else as_walltime(walltime)
        # _event_bytes.scalar_event's common case, inlined: this is the hot path
        step = global_step
        if type(step) is int and 0 < step < 0x200000 and wall:
            try:
                if step < 0x80:
                    payload = packer.pack1(0x09, wall, 0x10, step, packer.prefix, scalar_value)
                elif step < 0x4000:
                    payload = packer.pack2(0x09, wall, 0x10, (step & 0x7F) | 0x80, step >> 7, packer.prefix,
                                           scalar_value)
                else:
                    payload = packer.pack3(0x09, wall, 0x10, (step & 0x7F) | 0x80, ((step >> 7) & 0x7F) | 0x80,
                                           step >> 14, packer.prefix, scalar_value)
            except OverflowError:
                payload = _scalar_event(wall, global_step, packer, scalar_value)
        else:
            step = as_step(global_step)
            payload = _scalar_event(wall, step, packer, scalar_value)
        if step > self._max_step:
            self._max_step = step
        writer = self._file_writer   # EventFileWriter.add_serialized_event, inlined
        if writer._error is not None or writer._closed:
            self._open_writer()._add_checked(payload)   # queued, then an error or warning is told
            return
        pending = writer._pending
        pending.append(payload)
        if len(pending) >= writer._wake_at:
            writer._request_write(len(pending))

    def _scalar_packer(self, tag: Any) -> _event_bytes.ScalarPacker:
        packer = self._scalar_packers[tag] = _event_bytes.scalar_packer(_check_tag(tag))
        return packer

    def _add_scalar_summary(self, tag: str, value: Any, global_step: Any, walltime: Any, new_style: Any,
                            double_precision: Any, display_name: Any, summary_description: Any) -> None:
        """``add_scalar`` with a title, a tooltip or as a tensor: through the builder."""
        from .. import builders  # lazy: numpy

        if isinstance(new_style, str):         # tensorboardX's positional display_name, summary_description
            display_name = new_style
            new_style = False
            if isinstance(double_precision, str):
                summary_description, double_precision = double_precision, False
        with tags_as_given():
            summary = builders.scalar(tag, value, display_name or None, summary_description or None,
                                      new_style=bool(new_style), double_precision=bool(double_precision))
        self._add_summary_proto(summary, global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: Mapping[str, Any], global_step: Optional[int] = None,
                    walltime: Optional[float] = None) -> None:
        """Several series in one chart: value ``v`` of key ``k`` goes to sub-run
        ``<logdir>/<main_tag with / -> _>_<k>`` under tag ``main_tag`` (torch's layout)."""
        main_tag = _check_tag(main_tag)
        if not isinstance(tag_scalar_dict, Mapping):
            raise TypeError("tag_scalar_dict must be a dict, got %s" % type(tag_scalar_dict).__name__)
        step = self._step_of(global_step)
        wall = self._walltime_of(walltime)
        packer = self._scalar_packers.get(main_tag) or self._scalar_packer(main_tag)
        for key, value in tag_scalar_dict.items():
            run = main_tag.replace("/", "_") + "_" + str(key)
            number = as_scalar_value(value, main_tag)
            payload = _event_bytes.scalar_event(wall, step, packer, number)
            writer = self._sub_writer(run)
            writer.add_serialized_event(payload)
            self._scalar_records.setdefault(os.path.join(self._logdir, run), []).append(
                [wall if walltime is None else walltime, global_step, number])

    def _sub_writer(self, run: str) -> EventFileWriter:
        """The writer of sub-run ``<logdir>/<run>``: no descriptor kept, served by the shared thread."""
        path = os.path.join(self._logdir, run)
        writer = self._sub_writers.get(path)
        if writer is None:
            root, where = os.path.normpath(self._logdir), os.path.normpath(path)
            if os.path.isabs(run) or not (where == root or where.startswith(os.path.join(root, ""))):
                raise ValueError("sub-run %r would be written outside the logdir %s" % (run, self._logdir))
            self._open_writer()             # after close(): the run and its sub-runs reopen together
            writer = EventFileWriter(path, self._max_queue, self._flush_secs, self._suffix, keep_open=False,
                                     **self._store)
            self._sub_writers[path] = writer
        return writer

    # ------------------------------------------------------------------ helpers
    @contextlib.contextmanager
    def use_metadata(self, *, global_step: Optional[int] = None,
                     walltime: Optional[float] = None) -> Iterator["SummaryWriter"]:
        """tensorboardX's: inside, a call given no ``global_step`` (``walltime``) takes this one.

        ::

            with writer.use_metadata(global_step=epoch):
                writer.add_scalar("loss", loss)
                writer.add_histogram("weights", w)
        """
        if self._default_step is not None or self._default_walltime is not None:
            raise AssertionError("Default metadata is already set.")     # tensorboardX asserts it
        if global_step is None and walltime is None:
            raise AssertionError("At least one of `global_step` or `walltime` must be provided.")
        self._default_step = None if global_step is None else as_step(global_step)
        self._default_walltime = None if walltime is None else as_walltime(walltime)
        self.add_scalar = self._add_scalar_using_metadata    # the scalar path reads no defaults: swapped meanwhile
        try:
            yield self
        finally:
            self._default_step = self._default_walltime = None
            del self.add_scalar

    def _add_scalar_using_metadata(self, tag: str, scalar_value: Any, global_step: Optional[int] = None,
                                   walltime: Optional[float] = None, *args: Any, **kwargs: Any) -> None:
        type(self).add_scalar(self, tag, scalar_value, self._step_of(global_step), self._walltime_of(walltime),
                              *args, **kwargs)

    def _step_of(self, global_step: Any) -> int:
        """``global_step`` as an int64; None: ``use_metadata``'s step, else 0."""
        return as_step(self._default_step if global_step is None else global_step)

    def _walltime_of(self, walltime: Any) -> float:
        """``walltime`` as a float; None: ``use_metadata``'s wall time, else now."""
        return as_walltime(self._default_walltime if walltime is None else walltime)

    def _add_encoded(self, method: str, build: Callable[..., Any], tag: str, arrays: tuple, options: dict,
                     global_step: Any, walltime: Any, check: Optional[Callable[..., None]] = None) -> None:
        """Queue the Summary ``build(tag, *arrays, **options)``, built on the writer's thread from copies of the
        arguments (``encode_in_background``), else here. Tag, step and wall time are taken now, and ``check``
        (``builders.arguments``) runs on the copies now: an argument error is the caller's."""
        from ..builders import common  # lazy: numpy

        tag = _check_tag(tag)
        step, wall = self._step_of(global_step), self._walltime_of(walltime)
        if not self._encode_in_background:
            with tags_as_given():
                summary = build(tag, *arrays, **options)
            self._add_max_step(step)
            self._open_writer().add_serialized_event(_event_bytes.summary_event(wall, step, summary.SerializeToString()))
            return
        copies = tuple(common.host_copy(a) for a in arrays)
        options = {name: common.host_copy(value) for name, value in options.items()}
        if check is not None:
            check(*copies, **options)
        self._add_max_step(step)

        def make() -> bytes:
            with tags_as_given():
                summary = build(tag, *copies, **options)
            return _event_bytes.summary_event(wall, step, summary.SerializeToString())

        self._add_deferred("%s(%r) at step %d" % (method, tag, step), make,
                           sum(getattr(a, "nbytes", 0) for a in copies + tuple(options.values())))

    def _add_deferred(self, where: str, make: Callable[[], Optional[bytes]], nbytes: int) -> None:
        """Queue ``make()`` (Event bytes, or None) to run on the writer's thread; its error is retyped with ``where``."""
        def make_or_say_where() -> Optional[bytes]:
            try:
                return make()
            except Exception as e:
                raise _encoding_error(e, where) from e

        self._open_writer().add_deferred_event(make_or_say_where, nbytes)

    def _add_summary_proto(self, summary: Any, global_step: Optional[int], walltime: Optional[float]) -> None:
        self._add_summary_bytes(summary.SerializeToString(), global_step, walltime)

    def _add_summary_bytes(self, data: bytes, global_step: Optional[int], walltime: Optional[float]) -> None:
        step = self._step_of(global_step)
        self._add_max_step(step)
        self._open_writer().add_serialized_event(_event_bytes.summary_event(self._walltime_of(walltime), step, data))

    def _add_max_step(self, step: int) -> None:
        if step > self._max_step:
            self._max_step = step

    def _purge(self, step: int) -> None:
        from tfevents.proto import event_pb2  # lazy: the scalar path writes bytes without protobuf

        start = event_pb2.Event(wall_time=time.time(), step=step)
        start.session_log.status = start.session_log.START
        self._file_writer.add_serialized_events(
            [_event_bytes.file_version_event(time.time(), step), start.SerializeToString()])

def _encoding_error(error: Exception, where: str) -> Exception:
    """``error`` of a background encoding, retyped with ``where`` (method, tag, step) in front of its message."""
    message = "%s, encoded on the writer's thread: %s" % (where, error)
    try:
        return type(error)(message)
    except Exception:  # noqa: BLE001 - an exception type that takes other arguments
        return RuntimeError(message)


_silent_classes: Dict[type, type] = {}


def _silent_class(cls: type) -> type:
    """The silent subclass of ``cls`` that ranks which do not write get (made once per class)."""
    silent = _silent_classes.get(cls)
    if silent is None:
        silent = _silent_classes[cls] = _ranks.silent_subclass(cls)
    return silent


FileWriter = SummaryWriter
