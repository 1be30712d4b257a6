"""moto's S3 server for the session (conftest's ``s3_endpoint``), run in a process of its own:
``python tests/_moto_server.py`` starts moto's ``ThreadedMotoServer`` on 127.0.0.1 and a free port, prints the
port, and serves until its stdin is closed (by ``MotoProcess.stop`` or the end of the test process).

In a process of its own the server answers on the core the test process leaves idle, instead of taking the test
process's GIL from the client code it serves (s3fs, the reader's threads, the writer's upload thread)."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile


class MotoProcess:
    def __init__(self):
        self.proc = None
        self.url = None
        fd, self.log_path = tempfile.mkstemp(prefix="moto-server-", suffix=".log")
        os.close(fd)

    def start(self) -> "MotoProcess":
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=log, start_new_session=True)
        line = self.proc.stdout.readline().decode()   # the port, or "" if it exited
        if not line.strip().isdigit():
            self.stop()
            raise RuntimeError("moto's server did not start: %r\n%s" % (line, self.log()))
        self.url = "http://127.0.0.1:%d" % int(line)
        return self

    def log(self) -> str:
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")[-3000:]

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                from _tensorboard import stop_process_group
                stop_process_group(self.proc)
            self.proc.stdout.close()
        if os.path.exists(self.log_path):
            os.remove(self.log_path)


def _serve() -> None:
    from moto.server import ThreadedMotoServer
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    print(server.get_host_and_port()[1], flush=True)
    sys.stdin.read()                                  # until the test process closes it (or ends)
    server.stop()


if __name__ == "__main__":
    _serve()
