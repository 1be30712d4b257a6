"""Summary tags: checked and cleaned as TensorFlow's summary ops and tensorboardX clean them.

TF1's ``tf.summary.*`` ops and tensorboardX (``summary._clean_tag``) replace every character
outside ``[-/\\w.]`` (letters, digits, underscore, ``-``, ``/``, ``.``; ``\\w`` is Unicode-aware) by
``_`` and drop leading slashes, because a tag is also a node name in a TF graph. Both log the
change; here it is a ``UserWarning`` naming the old and the new tag (Python shows each once).
TensorBoard itself would display any string, so the cleaning only makes our files match what
those writers produce for the same call.

``SummaryWriter`` keeps its tags as given, as ``torch.utils.tensorboard`` does: it calls the builders
inside ``tags_as_given()``, where ``clean_tag`` only checks.
"""
from __future__ import annotations

import contextlib
import contextvars
import re
import warnings
from typing import Any, Iterator

__all__ = ["check_tag", "clean_tag", "tags_as_given", "INVALID_TAG_CHARACTERS"]

INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w.]")

_keep_tags = contextvars.ContextVar("tfevents_keep_tags", default=False)


@contextlib.contextmanager
def tags_as_given() -> Iterator[None]:
    """Inside (this thread or task), ``clean_tag`` checks a tag and returns it unchanged."""
    token = _keep_tags.set(True)
    try:
        yield
    finally:
        _keep_tags.reset(token)


def check_tag(tag: Any, name: str = "tag") -> str:
    """Return ``tag`` if it is a non-empty ``str``; else raise TypeError/ValueError naming ``name``."""
    if not isinstance(tag, str):
        raise TypeError("%s must be a str, got %s %r" % (name, type(tag).__name__, tag))
    if not tag:
        raise ValueError("%s must be a non-empty string" % name)
    return tag


def clean_tag(tag: Any, name: str = "tag") -> str:
    """``check_tag``, then each character outside ``[-/\\w.]`` -> ``_`` and leading ``/`` dropped,
    with a UserWarning when that changes the tag. A tag with nothing left is a ValueError. Inside
    ``tags_as_given()``: ``check_tag`` only."""
    tag = check_tag(tag, name)
    if _keep_tags.get():
        return tag
    cleaned = INVALID_TAG_CHARACTERS.sub("_", tag).lstrip("/")
    if cleaned != tag:
        if not cleaned:
            raise ValueError("%s %r has no characters TensorFlow allows in a summary name" % (name, tag))
        warnings.warn("Summary name %r is illegal; using %r instead (TensorFlow's and tensorboardX's rule: "
                      "characters outside [-/\\w.] become '_', leading '/' are dropped)" % (tag, cleaned),
                      UserWarning, stacklevel=3)
    return cleaned
