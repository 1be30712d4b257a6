"""Strings read from files (run names, tags, texts) shown on a terminal as plain text: ``printable`` writes each
control character (ESC, BEL, CR, BS, DEL, the C1 range...) as ``\\xNN``, so a hostile name cannot send escape
sequences (a new window title, colours, a cleared screen) to the terminal. ``tfevents inspect`` and ``export``
print with it; ``tfevents watch`` shows every name through it, as plain text (never Textual or Rich markup)."""
from __future__ import annotations

import re

__all__ = ["printable"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text) -> str:
    """A string from an event file as printed: control characters (ESC, CR, BS, C1...) as ``\\xNN``."""
    return _CONTROL.sub(lambda m: "\\x%02x" % ord(m.group()), str(text))
