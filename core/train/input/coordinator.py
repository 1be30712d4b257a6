"""``tf.train.Coordinator``: lets threads stop together and re-raises the first thread's exception in
``join``. Exceptions of ``clean_stop_exception_types`` (default: OutOfRangeError, the end of an input queue)
stop the threads without being re-raised."""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Iterable, Optional

from ...framework.errors import OutOfRangeError


class Coordinator:
    def __init__(self, clean_stop_exception_types: Optional[Iterable[type]] = None):
        self._clean_stop_exception_types = tuple(clean_stop_exception_types) \
            if clean_stop_exception_types is not None else (OutOfRangeError,)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads: set = set()

    def _filter_exception(self, ex):
        if isinstance(ex, tuple):
            ex2 = ex[1]
        else:
            ex2 = ex
        if isinstance(ex2, self._clean_stop_exception_types):
            return None
        return ex

    def request_stop(self, ex: Optional[BaseException] = None) -> None:
        """Ask every thread to stop; ``ex`` (an exception, or an ``exc_info`` tuple) is re-raised by ``join``
        unless it is a clean-stop type or another exception was reported first."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if isinstance(ex, tuple):
                    raise ex[1].with_traceback(ex[2])
                elif ex is not None:
                    raise ex
            if ex and self._exc_info_to_raise is None:
                if isinstance(ex, tuple):
                    exc_info = ex
                else:
                    current = sys.exc_info()
                    exc_info = current if current[1] is ex else (type(ex), ex, ex.__traceback__)
                if not isinstance(exc_info[1], BaseException):
                    raise TypeError("ex must be an exception or an exc_info tuple: %r" % (ex,))
                self._exc_info_to_raise = exc_info
            self._stop_event.set()

    def clear_stop(self) -> None:
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Report an exception raised in the block with ``request_stop`` (and swallow it)."""
        try:
            yield
        except BaseException:  # noqa: BLE001 - reported to join()
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout: Optional[float] = None) -> bool:
        return self._stop_event.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads: Optional[Iterable[threading.Thread]] = None, stop_grace_period_secs: float = 120,
             ignore_live_threads: bool = False) -> None:
        """Wait for the threads (given and registered) after a stop was requested; re-raise the reported
        exception; RuntimeError when threads outlive the grace period."""
        with self._lock:
            threads = set(threads or ()) | self._registered_threads
            self._registered_threads = set()
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        deadline = time.time() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.time()))
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                _, value, tb = self._exc_info_to_raise
                raise value.with_traceback(tb)
        if stragglers:
            if ignore_live_threads:
                return
            raise RuntimeError("Coordinator stopped with threads still running: %s" % " ".join(stragglers))

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        with self._lock:
            if self._exc_info_to_raise:
                _, value, tb = self._exc_info_to_raise
                raise value.with_traceback(tb)
