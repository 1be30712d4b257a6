"""The API's token: who may read a logdir served beyond localhost.

Every HTTP request must carry the token (``TokenGate``, around the whole app, so an unknown path answers 401 too):
as the query parameter ``token=T`` (the URL ``tfevents api`` prints, as Jupyter's), the header
``Authorization: token T`` (scripts), or the cookie ``tfevents-token-<port>`` that a request with a valid query
token sets (HttpOnly, SameSite=Strict, Secure over TLS, path: the prefix; named by port as Jupyter's, since a
browser sends a host's cookies to each of its ports), so a browser's later requests carry it alone.
Every candidate is compared in constant time (``hmac.compare_digest``). Without a valid one: 401 and a JSON error.

A server on a loopback address (``LoopbackHostGate``) answers only requests addressed to a loopback name
(``Host: localhost``, ``127.0.0.1``, ``[::1]``, with any port): a web page's script that makes its own domain resolve
to 127.0.0.1 (DNS rebinding) sends its own name as the Host, and gets 403.
"""
from __future__ import annotations

import hmac
import urllib.parse
from typing import Optional

from starlette.datastructures import MutableHeaders
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .access import is_loopback
from .responses import json_response

__all__ = ["TokenGate", "LoopbackHostGate", "cookie_name"]


def cookie_name(port: int) -> str:
    """The token's cookie for the server on ``port``."""
    return "tfevents-token-%d" % port


def _matches(candidate: Optional[str], token: str) -> bool:
    return candidate is not None and hmac.compare_digest(candidate.encode("utf-8", "surrogateescape"),
                                                         token.encode("utf-8"))


class TokenGate:
    """ASGI middleware: ``app`` only for requests that carry ``token``; ``cookie``: the cookie's name
    (:func:`cookie_name`); ``cookie_path``: where the browser sends it back (the path prefix); ``secure``: the
    cookie only over TLS."""

    def __init__(self, app: ASGIApp, token: str, cookie: str, cookie_path: str = "/", secure: bool = False):
        if not token:
            raise ValueError("an empty token")
        self.app, self.token, self.cookie_name = app, token, cookie
        self.set_cookie = "%s=%s; Path=%s; HttpOnly; SameSite=Strict%s" % (cookie, token, cookie_path,
                                                                            "; Secure" if secure else "")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):   # lifespan
            await self.app(scope, receive, send)
            return
        conn = HTTPConnection(scope)
        header = conn.headers.get("authorization", "")
        scheme, _, credentials = header.partition(" ")
        from_query = _matches(conn.query_params.get("token"), self.token)
        if not (from_query or _matches(conn.cookies.get(self.cookie_name), self.token)
                or (scheme.lower() == "token" and _matches(credentials.strip(), self.token))):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await json_response({"error": "a valid token is needed (?token=, a cookie, or "
                                          "'Authorization: token ...')"}, 401)(scope, receive, send)
            return
        if not from_query:
            await self.app(scope, receive, send)
            return

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).append("set-cookie", self.set_cookie)
            await send(message)

        await self.app(scope, receive, send_with_cookie)


class LoopbackHostGate:
    """ASGI middleware: ``app`` only for requests whose ``Host`` header names a loopback address (403 else)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = HTTPConnection(scope).headers.get("host", "")
            try:
                name = urllib.parse.urlsplit("//" + host).hostname or ""
            except ValueError:
                name = ""
            if not is_loopback(name):
                await json_response({"error": "this server answers only requests to localhost, not to %r" % host},
                                    403)(scope, receive, send)
                return
        await self.app(scope, receive, send)
