"""A real terminal for the terminal-UI tests (``tfevents watch``): a tmux server of its own, driven with
``send-keys`` and read with ``capture-pane``.

``Terminal(width, height, env)`` starts one window running bash; ``keys(...)`` types (tmux key names:
``Enter``, ``Down``, ``Space``), ``screen()`` is the visible text, ``wait_for(predicate)`` polls it,
``tmux(...)`` runs any tmux command on that server, ``close()`` ends it.
"""
from __future__ import annotations

import os
import subprocess
import time
import uuid


class Terminal:
    """A tmux server of its own, one window of ``width`` x ``height`` running bash."""

    def __init__(self, width=80, height=24, env=None):
        self.socket = "tfe-watch-" + uuid.uuid4().hex[:8]
        env = dict(os.environ, **(env or {}))
        env.pop("TMUX", None)
        subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", "new-session", "-d", "-s", "w",
                        "-x", str(width), "-y", str(height), "bash --norc --noprofile"], check=True, env=env)
        subprocess.run(["tmux", "-L", self.socket, "set", "-g", "status", "off"], check=True)

    def tmux(self, *args) -> str:
        return subprocess.run(["tmux", "-L", self.socket] + list(args), check=True, capture_output=True,
                              text=True).stdout

    def keys(self, *keys) -> None:
        self.tmux("send-keys", "-t", "w", *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "w")

    def wait_for(self, predicate, timeout=30.0, what="") -> str:
        end = time.monotonic() + timeout
        while True:
            text = self.screen()
            if predicate(text):
                return text
            if time.monotonic() > end:
                raise AssertionError("timed out waiting for %s; the screen:\n%s" % (what, text))
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
