"""``tfevents runs``' actions, one module each (``cmd_runs.py`` registers them): ``ls.py`` (the run table),
``rm.py`` (delete runs), ``mv.py`` (rename or move a run), ``annotate.py`` (label, unlabel, note, archive,
unarchive); ``common.py`` holds what they share (the LOGDIR argument, choosing runs by name or ``--where``, the
errors' exit statuses)."""
