"""Running the data provider: a gRPC server and a reload thread (``DataServer``).

TensorBoard's web server, its child, is started by ``web.py``; ``tfevents serve`` (viewer/cli/cmd_serve.py) ties
them together until Ctrl-C or SIGTERM, then stops the child and the gRPC server, leaving no orphan.
"""
from __future__ import annotations

import logging
import threading
import time
from concurrent import futures
from typing import Callable, Collection, Mapping, Optional

import grpc
from tensorboard.data.proto import data_provider_pb2_grpc as pb_grpc

from tfevents.summaries.live.loader import LiveLogdir, parse_samples_per_plugin  # the flag parser: re-exported
from tfevents.summaries.live.workers import default_processes

from .provider import DataProvider

__all__ = ["DataServer", "parse_samples_per_plugin"]

log = logging.getLogger("tfevents.serve")

# TensorBoard's client accepts messages up to 256 MiB (server_ingester.py); a big ReadTensors can be large
_MAX_MESSAGE = 256 << 20


def _libc():
    """The C library when it is glibc (has mallopt), else None."""
    import ctypes  # lazy: glibc's malloc tuning only
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") else None


def _tune_malloc() -> None:
    """glibc's malloc, set for a big load of short-lived columns. One arena: each reload thread's own arena
    fragments and adds ~15 MB to the peak of a big first load. No trimming and no mmap below 32 MB while loading:
    the scan's columns are freed and allocated again file after file, and handing them back to the kernel makes it
    zero fresh pages every time (a third of the scan's CPU on benchmarks/serve.py's logdir); :func:`_trim` gives
    the free memory back after each pass. No-op off glibc."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(-8, 1)           # M_ARENA_MAX
        libc.mallopt(-3, 32 << 20)    # M_MMAP_THRESHOLD (its maximum; fixes it, as setting either does)
        libc.mallopt(-1, 1 << 30)     # M_TRIM_THRESHOLD


def _trim() -> None:
    """Give the heap's free memory back to the kernel (glibc's malloc_trim)."""
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


class DataServer:
    """The gRPC data provider over a logdir, reloading it every ``reload_interval`` seconds (0: load once).
    ``threads``: gRPC workers; ``load_threads``: files read at once in a reload pass (default: ``LiveLogdir``'s,
    the CPUs, at most 4); ``load_processes``: worker processes for the first read of a big local logdir (default:
    the CPUs, at most 4; 1: none; ``tfevents.summaries.live.workers``)."""

    def __init__(self, logdir: str, *, host: str = "127.0.0.1", port: int = 0, reload_interval: float = 5.0,
                 samples_per_plugin: Optional[Mapping[str, int]] = None, storage_options: Optional[dict] = None,
                 threads: int = 8, load_threads: Optional[int] = None, load_processes: Optional[int] = None,
                 choose: Optional[Callable[[LiveLogdir], Optional[Collection[str]]]] = None):
        _tune_malloc()
        self.live = LiveLogdir(logdir, samples_per_plugin, storage_options, threads=load_threads,
                               choose=choose, processes=load_processes or default_processes())
        self.reload_interval = reload_interval
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=threads),
                                   options=[("grpc.max_send_message_length", _MAX_MESSAGE),
                                            ("grpc.max_receive_message_length", _MAX_MESSAGE)])
        pb_grpc.add_TensorBoardDataProviderServicer_to_server(DataProvider(self.live, logdir), self._server)
        bound = self._server.add_insecure_port("%s:%d" % (_bracket(host), port))
        if not bound:
            raise OSError("could not bind the gRPC data provider to %s:%d" % (host, port))
        self.host, self.port = host, bound
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._reload_loop, name="tfevents-reload", daemon=True)
        self.loaded = threading.Event()  # set after the first full pass

    @property
    def address(self) -> str:
        return "%s:%d" % (_bracket(self.host), self.port)

    def start(self) -> "DataServer":
        self._server.start()
        self._thread.start()
        return self

    def _reload_loop(self) -> None:
        while not self._stop.is_set():
            t = time.perf_counter()
            try:
                self.live.reload()
            except Exception:  # a bad pass must not end serving: say so and try again next interval
                log.exception("reload of %s failed", self.live.path)
            _trim()
            log.info("reload pass %d took %.2f s", self.live.passes, time.perf_counter() - t)
            self.loaded.set()
            if self.reload_interval <= 0:
                return
            self._stop.wait(self.reload_interval)

    def stop(self, grace: float = 1.0) -> None:
        self._stop.set()
        self._server.stop(grace).wait()


def _bracket(host: str) -> str:
    return "[%s]" % host if ":" in host and not host.startswith("[") else host
