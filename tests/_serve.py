"""``tfevents serve --provider-only`` as a child process for tests: started in its own process group on a free
port, its address read from its first line of output, always stopped by its PID."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from _tensorboard import stop_process_group, terminate_process_group


class ProviderProcess:
    def __init__(self, logdir: str, *args: str):
        self.logdir, self.args = logdir, list(args)
        self.proc = None
        self.address = None
        fd, self.log_path = tempfile.mkstemp(prefix="tfevents-serve-", suffix=".log")
        os.close(fd)

    def start(self) -> "ProviderProcess":
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "tfevents.viewer.cli", "serve", self.logdir,
                                      "--provider-only", "-v"] + self.args,
                                     stdout=subprocess.PIPE, stderr=self._log, start_new_session=True)
        line = self.proc.stdout.readline().decode()   # its first line, or "" if it exited
        if not line.startswith("data provider: "):
            stop_process_group(self.proc)
            raise RuntimeError("tfevents serve did not start: %r\n%s" % (line, self.log()))
        self.address = line.split(": ", 1)[1].strip()
        return self

    def log(self) -> str:
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def terminate(self) -> None:
        """SIGTERM its process group without waiting (``stop`` waits)."""
        terminate_process_group(self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process_group(self.proc)
            self.proc.stdout.close()
            self._log.close()
        os.remove(self.log_path)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
