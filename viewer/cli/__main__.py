"""``python -m tfevents.viewer.cli``: the ``tfevents`` command line, as the console script runs it."""
import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
