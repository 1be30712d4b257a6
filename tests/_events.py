"""Reading event files back in the tests: one helper for every test that checks what was written.

``event_files(logdir)``: the event files directly in a directory, sorted by name.
``event_file(logdir)``: the one event file directly in a directory (the test fails when there are none or several).
``read_events(path_or_logdir, iterator=None, skip_version=True)``: the Event protos of a file (or of a
directory's one event file), read with tfevents' ``summary_iterator`` unless another iterator is given (e.g.
TensorFlow's ``tf.compat.v1.train.summary_iterator``). Reading is strict: a damaged record fails the test.
With ``skip_version`` the first event must be the ``file_version`` event every writer starts a file with; it
is checked and left out.
"""
from __future__ import annotations

import glob
import os

FILE_VERSION = "brain.Event:2"


def event_files(logdir) -> list:
    """Paths of the event files (names holding ``tfevents``) directly in ``logdir``, sorted."""
    return sorted(glob.glob(os.path.join(glob.escape(os.fspath(logdir)), "*tfevents*")))


def event_file(logdir) -> str:
    """The one event file directly in ``logdir``."""
    files = event_files(logdir)
    assert len(files) == 1, "want one event file in %s, found %s" % (logdir, files)
    return files[0]


def read_events(path_or_logdir, *, iterator=None, skip_version: bool = True) -> list:
    """Every Event of an event file, or of the one event file in a directory, in file order.

    ``iterator``: a function from a path to its events; tfevents' ``summary_iterator`` (which raises on a
    damaged record) by default. ``skip_version``: check that the first event is the file_version event and
    leave it out.
    """
    path = os.fspath(path_or_logdir)
    if os.path.isdir(path):
        path = event_file(path)
    if iterator is None:
        from tfevents.summaries import summary_iterator as iterator
    events = list(iterator(path))
    if skip_version:
        assert events and events[0].file_version == FILE_VERSION, (path, events[:1])
        events = events[1:]
    return events
