"""A TCP proxy on 127.0.0.1 that a test puts between a client and a server and switches between three states:

* ``forward()``: bytes pass both ways (the state it starts in);
* ``refuse()``: the listener is closed, so new connections are refused (ECONNREFUSED), and open connections are cut;
* ``blackhole()``: connections are accepted and what the client sends is read and thrown away, but nothing is ever
  answered; open connections stop answering too (a store that accepts connections but hangs).

Leaving ``blackhole()`` cuts the connections it swallowed bytes of (their streams are broken). Every connection is
served by a thread of its own; ``close()`` ends them all.
"""
from __future__ import annotations

import select
import socket
import threading
from typing import Optional, Set, Tuple

__all__ = ["TcpProxy"]

FORWARD, REFUSE, BLACKHOLE = "forward", "refuse", "blackhole"


class TcpProxy:
    """Proxy from ``127.0.0.1:<port>`` to ``upstream`` (host, port); ``url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self, upstream: Tuple[str, int]) -> None:
        self._upstream = upstream
        self._lock = threading.Lock()
        self._state = FORWARD
        self._sockets: Set[socket.socket] = set()     # both ends of every open connection
        self._listener: Optional[socket.socket] = self._listen(0)
        self.port = self._listener.getsockname()[1]
        self._closed = False
        self._acceptor = threading.Thread(target=self._accept_loop, name="tcp-proxy-accept", daemon=True)
        self._acceptor.start()

    @property
    def url(self) -> str:
        return "http://127.0.0.1:%d" % self.port

    @property
    def state(self) -> str:
        return self._state

    def forward(self) -> None:
        self._switch(FORWARD)

    def refuse(self) -> None:
        self._switch(REFUSE)

    def blackhole(self) -> None:
        self._switch(BLACKHOLE)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._close_listener()
            self._cut_connections()
        self._acceptor.join(timeout=5)

    def __enter__(self) -> "TcpProxy":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ states
    def _switch(self, state: str) -> None:
        with self._lock:
            previous, self._state = self._state, state
            if state == REFUSE:
                self._close_listener()
                self._cut_connections()
                return
            if self._listener is None:
                self._listener = self._listen(self.port)
            if previous == BLACKHOLE and state != BLACKHOLE:
                self._cut_connections()

    def _listen(self, port: int) -> socket.socket:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
        listener.settimeout(0.05)
        return listener

    def _close_listener(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()

    def _cut_connections(self) -> None:
        for sock in list(self._sockets):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._sockets.clear()

    # ------------------------------------------------------------------ serving
    def _accept_loop(self) -> None:
        while not self._closed:
            listener = self._listener
            if listener is None:
                threading.Event().wait(0.02)
                continue
            try:
                client, _ = listener.accept()
            except (socket.timeout, OSError):
                continue
            threading.Thread(target=self._serve, args=(client,), name="tcp-proxy-conn", daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = None
        try:
            if self._state == FORWARD:
                upstream = socket.create_connection(self._upstream, timeout=5)
            with self._lock:
                if self._state == REFUSE or self._closed:
                    return
                self._sockets.update(s for s in (client, upstream) if s is not None)
            ends = [s for s in (client, upstream) if s is not None]
            while True:
                readable, _, _ = select.select(ends, [], [], 0.1)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    if self._state == FORWARD and upstream is not None:
                        (upstream if sock is client else client).sendall(data)
                    # refused or black-holed: the bytes are swallowed, nothing is answered
        except OSError:
            return
        finally:
            with self._lock:
                self._sockets.discard(client)
                self._sockets.discard(upstream)
            for sock in (client, upstream):
                if sock is not None:
                    sock.close()
