"""The session's slow jobs (subprocesses: example programs, the peers' suites), started as the session starts on one
thread of their own, one job at a time, so they run on the core that the single-threaded test run leaves idle instead
of in the setup of the tests that read them. conftest submits the jobs the collected tests need (``submit``); their
fixtures take the result (``result``), waiting for it if it is not ready, or run the job themselves when it was not
submitted. A job that failed raises its error in each fixture that asks for it."""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Dict


class Background:
    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="tests-background")
        self._futures: Dict[str, Future] = {}

    def submit(self, name: str, job: Callable[[], Any]) -> None:
        if name not in self._futures:
            self._futures[name] = self._pool.submit(job)

    def result(self, name: str, job: Callable[[], Any]) -> Any:
        future = self._futures.get(name)
        return future.result() if future is not None else job()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
