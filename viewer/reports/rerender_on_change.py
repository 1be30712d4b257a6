"""Re-run a render function whenever a logdir's event files change (grow, appear or are replaced): what
``tfevents report --watch`` and ``tfevents plot --watch`` do."""
from __future__ import annotations

import os
import sys
import threading
from typing import Callable, Optional


def logdir_signature(logdir: str) -> tuple:
    """(path, size, mtime) of every event file under ``logdir``: changes when a file grows or appears."""
    sig = []
    for root, _, files in os.walk(logdir):
        for name in files:
            if "tfevents" in name:
                p = os.path.join(root, name)
                try:
                    st = os.stat(p)
                except OSError:  # removed while we looked
                    continue
                sig.append((p, st.st_size, st.st_mtime_ns))
    return tuple(sorted(sig))


def watch(logdir: str, render: Callable[[], object], *, interval: float = 2.0,
          stop: Optional[threading.Event] = None, on_render: Optional[Callable[[], None]] = None) -> None:
    """Call ``render()`` now and after every change under ``logdir``, polling every ``interval`` seconds,
    until ``stop`` is set. A failing render is reported on stderr and watching goes on (the next change,
    e.g. a file finished writing, may fix it)."""
    stop = stop or threading.Event()
    last = None
    while not stop.is_set():
        sig = logdir_signature(logdir)
        if sig != last:
            last = sig
            try:
                render()
            except Exception as e:
                sys.stderr.write("tfevents: render failed: %s: %s\n" % (type(e).__name__, e))
            else:
                if on_render:
                    on_render()
        stop.wait(interval)
