"""TensorBoard's UI through the dashboard's server: ``/tensorboard/...`` forwarded to TensorBoard's own web server
on a loopback port (``tfevents serve``), so one address, one token and one TLS certificate cover both UIs.

TensorBoard's frontend asks for everything by relative URLs (its pages, scripts, ``data/...``), so it works below a
path it was not told of; its server gets each request as a client on loopback would send it, with the dashboard's
credentials (the ``token`` parameter, the cookie, ``Authorization``) taken out. HTTP is ``http.client``'s, on
Starlette's thread pool, the answer streamed back as it arrives. A request made while TensorBoard is still starting
waits for it (``STARTING_SECONDS``); one it does not answer gets 502.
"""
from __future__ import annotations

import http.client
import time
import urllib.parse

from starlette.concurrency import iterate_in_threadpool, run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from .responses import json_response

__all__ = ["tensorboard_routes", "MOUNT"]

MOUNT = "/tensorboard"   # where TensorBoard's UI is, below the dashboard's root
STARTING_SECONDS = 30   # how long a request waits for TensorBoard's server to start listening
TIMEOUT_SECONDS = 120    # a TensorBoard request that takes longer (a big download) ends with the connection's error
CHUNK = 1 << 16
# not forwarded: hop-by-hop headers (RFC 9110 7.6.1), ones http.client sets itself, and the dashboard's credentials
_DROPPED = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
            "transfer-encoding", "upgrade", "host", "content-length", "cookie", "authorization"}


def _target(request: Request) -> str:
    """The path and query TensorBoard gets: the request's below ``MOUNT``, without ``token``."""
    pairs = [(k, v) for k, v in urllib.parse.parse_qsl(request.url.query, keep_blank_values=True) if k != "token"]
    path = urllib.parse.quote("/" + request.path_params["path"], safe="/:@!$&'()*+,;=-._~%")
    return path + ("?" + urllib.parse.urlencode(pairs) if pairs else "")


def tensorboard_routes(host: str, port: int) -> list:
    """Routes forwarding ``MOUNT/...`` to TensorBoard's web server at ``host:port`` (``MOUNT`` itself redirects to
    ``MOUNT/``, whose relative URLs then resolve below it)."""

    async def forward(request: Request) -> Response:
        body = await request.body()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROPPED}
        target = _target(request)

        def ask():
            deadline = time.monotonic() + STARTING_SECONDS
            while True:
                connection = http.client.HTTPConnection(host, port, timeout=TIMEOUT_SECONDS)
                try:
                    connection.request(request.method, target, body=body or None, headers=headers)
                    return connection, connection.getresponse()
                except ConnectionRefusedError:   # still starting (it starts beside the first load)
                    connection.close()
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.25)
                except BaseException:
                    connection.close()
                    raise

        try:
            connection, answer = await run_in_threadpool(ask)
        except OSError as err:
            return json_response({"error": "TensorBoard's web server did not answer: %s" % err}, 502)

        def chunks():
            try:
                while True:
                    chunk = answer.read1(CHUNK)
                    if not chunk:
                        return
                    yield chunk
            finally:
                connection.close()

        kept = {k: v for k, v in answer.getheaders() if k.lower() not in _DROPPED}
        return StreamingResponse(iterate_in_threadpool(chunks()), status_code=answer.status, headers=kept)

    def to_slash(request: Request) -> Response:
        query = request.url.query
        return RedirectResponse(request.url.path + "/" + ("?" + query if query else ""), status_code=308)

    methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]
    return [Route(MOUNT, to_slash, methods=methods),
            Route(MOUNT + "/{path:path}", forward, methods=methods)]
