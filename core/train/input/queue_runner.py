"""``tf.train.QueueRunner``: threads that run enqueue ops until the input ends or the Coordinator stops;
``add_queue_runner`` / ``start_queue_runners``."""
from __future__ import annotations

import threading
import weakref
from typing import Any, Optional

from ...framework.errors import CancelledError, OutOfRangeError
from ...framework.graph import GraphKeys, get_default_graph
from ...framework.graph import get_default_session


class QueueRunner:
    def __init__(self, queue: Any = None, enqueue_ops: Optional[list] = None, close_op: Any = None,
                 cancel_op: Any = None, queue_closed_exception_types: Optional[tuple] = None,
                 queue_runner_def: Any = None, import_scope: Any = None):
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and a non-empty list of enqueue ops")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        self._queue_closed_exception_types = tuple(queue_closed_exception_types or (OutOfRangeError,))
        self._lock = threading.Lock()
        self._runs_per_session: Any = weakref.WeakKeyDictionary()
        self._exceptions_raised: list = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self) -> list:
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def exceptions_raised(self) -> list:
        return self._exceptions_raised

    @property
    def name(self) -> str:
        return self._queue.name

    def _run(self, sess, enqueue_op, coord=None) -> None:
        decremented = False
        try:
            while True:
                if coord is not None and coord.should_stop():
                    break
                try:
                    sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception:  # noqa: BLE001 - the queue may be gone with the session
                                pass
                    return
        except CancelledError:
            if coord is None or not coord.should_stop():     # a stop-time cancel is a clean exit
                self._report(coord)
        except Exception:  # noqa: BLE001 - reported to the coordinator
            self._report(coord)
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _report(self, coord) -> None:
        import sys
        exc_info = sys.exc_info()
        if coord is not None:
            coord.request_stop(exc_info)
        else:
            with self._lock:
                self._exceptions_raised.append(exc_info[1])
            raise exc_info[1]

    def _close_on_stop(self, sess, cancel_op, coord) -> None:
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception:  # noqa: BLE001 - nothing to cancel any more
            pass

    def create_threads(self, sess: Any, coord: Any = None, daemon: bool = False, start: bool = False) -> list:
        """One thread per enqueue op (plus one closing the queue when ``coord`` stops)."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord), name="QueueRunnerThread-%s-%s"
                                    % (self.name, op.name)) for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, self._cancel_op, coord),
                                            name="QueueRunnerThread-%s" % self.name))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return threads


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess: Any = None, coord: Any = None, daemon: bool = True, start: bool = True,
                        collection: str = GraphKeys.QUEUE_RUNNERS) -> list:
    """Start the threads of every QueueRunner in ``collection``; returns them (for ``coord.join``)."""
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. Use `with "
                             "sess.as_default()` or pass an explicit session to tf.start_queue_runners(sess=sess)")
    threads = []
    for qr in sess.graph.get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
