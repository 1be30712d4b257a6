"""Serving the API: a reload thread over the ``LiveLogdir`` and uvicorn on a socket bound beforehand (so the port
is known, and taken, before the first pass loads), with TLS when given a certificate."""
from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Optional, Tuple

import uvicorn

from tfevents.summaries.live.loader import LiveLogdir

from .app import build_app, normalize_prefix
from .access import is_loopback
from .auth import LoopbackHostGate, TokenGate, cookie_name

__all__ = ["Reloader", "bind", "api_server"]

log = logging.getLogger("tfevents.api")


class Reloader:
    """Calls ``live.reload()`` now and then every ``interval`` seconds (0: only now) on a daemon thread; a failed
    pass is logged and tried again next interval."""

    def __init__(self, live: LiveLogdir, interval: float):
        self.live, self.interval = live, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="tfevents-api-reload", daemon=True)

    def reload_once(self) -> None:
        t = time.perf_counter()
        try:
            self.live.reload()
        except Exception:   # a bad pass must not end serving
            log.exception("reload of %s failed", self.live.path)
        log.info("reload pass %d took %.2f s", self.live.passes, time.perf_counter() - t)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.reload_once()

    def start(self) -> "Reloader":
        if self.interval > 0:
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0: any free port), IPv6 when ``host`` is one."""
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=128)


def api_server(live: LiveLogdir, sock: socket.socket, *, token: Optional[str], path_prefix: str = "/",
               certfile: Optional[str] = None, keyfile: Optional[str] = None, reload_interval: float = 5.0,
               loaded: Optional[threading.Event] = None,
               tensorboard: Optional[Tuple[str, int]] = None, aggregate: Optional[str] = None) -> uvicorn.Server:
    """The uvicorn server of the API over ``live`` for ``sock``, its TLS certificate already loaded (OSError or
    ``ssl.SSLError`` here when it cannot be); ``.run(sockets=[sock])`` serves until SIGINT or SIGTERM (uvicorn's
    handlers; on another thread than the main one, until ``.should_exit`` is set). Every request needs ``token``
    unless it is None; on a loopback address, a loopback name as its Host too (``auth.py``). ``loaded``,
    ``tensorboard`` and ``aggregate``: as ``build_app``'s."""
    app = build_app(live, path_prefix, reload_interval=reload_interval, loaded=loaded, tensorboard=tensorboard,
                    aggregate=aggregate)
    if token is not None:
        app = TokenGate(app, token, cookie_name(sock.getsockname()[1]),
                        cookie_path=normalize_prefix(path_prefix) + "/", secure=certfile is not None)
    if is_loopback(sock.getsockname()[0]):
        app = LoopbackHostGate(app)
    config = uvicorn.Config(app, ssl_certfile=certfile, ssl_keyfile=keyfile, log_level="warning",
                            lifespan="off", server_header=False)
    config.load()
    return uvicorn.Server(config)
