"""Who may reach a served logdir, decided before any server library is imported (stdlib only, so ``tfevents serve``
can choose TensorBoard's address before it starts it): whether a host is this machine only, a fresh token, what a
token may hold, and the URL a server prints."""
from __future__ import annotations

import ipaddress
import re
import secrets

__all__ = ["is_loopback", "new_token", "TOKEN_CHARACTERS", "reachable_host", "root_url"]

TOKEN_CHARACTERS = re.compile(r"[A-Za-z0-9._~-]+")   # safe as they are in a URL, a header and a cookie


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine: ``localhost``, 127.0.0.0/8 or ::1 (brackets allowed)."""
    host = host.strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    """A fresh token: 32 random bytes as hex (``secrets``)."""
    return secrets.token_hex(32)


def reachable_host(host: str) -> str:
    """The address to reach a server bound to ``host`` from this machine: itself, or the loopback address of a
    wildcard (``0.0.0.0``, ``::``, empty); without brackets."""
    host = host.strip("[]")
    return {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)


def root_url(host: str, port: int, path_prefix: str, tls: bool) -> str:
    """The URL of a server's root on ``host:port`` (bound to every address: shown as this machine's loopback)
    below ``path_prefix``, ending in '/'."""
    shown = reachable_host(host)
    shown = "[%s]" % shown if ":" in shown else shown
    prefix = "/" + path_prefix.strip("/") if path_prefix.strip("/") else ""
    return "%s://%s:%d%s/" % ("https" if tls else "http", shown, port, prefix)
