"""``tf.FIFOQueue`` and ``tf.RandomShuffleQueue`` (TF's ``data_flow_ops``): a bounded queue of tuples of tensors that lives in the Session.
Its ops (``FIFOQueueV2``, ``QueueEnqueueV2``, ``QueueEnqueueManyV2``, ``QueueDequeueV2``,
``QueueDequeueManyV2``, ``QueueDequeueUpToV2``, ``QueueCloseV2``, ``QueueSizeV2``) block like TF's: a dequeue
waits for elements, an enqueue for room. After ``close()`` enqueues fail (CancelledError) and dequeues drain
what is left, then raise OutOfRangeError; ``close(cancel_pending_enqueues=True)`` also cancels blocked
enqueues. Python threads calling ``sess.run(enqueue_op)`` (``QueueRunner``) feed a graph that dequeues.

``RandomShuffleQueue`` (op ``RandomShuffleQueueV2``) hands out elements in a random order: each dequeued element
is taken while more than ``min_after_dequeue`` remain (so a dequeue blocks until ``min_after_dequeue + 1``
elements are there, or the queue is closed, after which the rest drains); a random element is swapped with the
last one and popped, from a generator seeded by the op's ``seed`` / ``seed2`` (both 0: fresh entropy).
"""
from __future__ import annotations

import collections
import threading
from typing import Any, Optional

import numpy as np

from ...framework import dtypes as _dtypes
from ...framework.errors import CancelledError, InvalidArgumentError, OutOfRangeError
from ...framework.graph import name_scope
from ...framework.tensor_shape import TensorShape
from ...framework.registry import apply_op, constant_value, convert_to_tensor, create_op, register
from ...ops.random_ops import get_seed


class _QueueState:
    """One queue's elements in one Session."""

    def __init__(self, op):
        self.op = op
        self.capacity = op.attrs["capacity"]
        self.items: collections.deque = collections.deque()
        self.closed = False
        self.cancelled = False
        self.cond = threading.Condition()

    def put(self, op, elements: list) -> None:
        with self.cond:
            for element in elements:
                while self.capacity > 0 and len(self.items) >= self.capacity and not self.closed:
                    self.cond.wait()
                if self.closed:
                    raise CancelledError(op, "FIFOQueue '%s' is closed." % self.op.name if not self.cancelled
                                         else "Enqueue operation was cancelled")
                self.items.append(element)
                self.cond.notify_all()

    def take(self, op, n: int, up_to: bool = False) -> list:
        with self.cond:
            while len(self.items) < max(n, 1) and not self.closed:
                self.cond.wait()
            if len(self.items) < max(n, 1) and not (up_to and self.items):
                raise OutOfRangeError(op, "FIFOQueue '%s' is closed and has insufficient elements (requested "
                                          "%d, current size %d)\n\t [[node %s]]"
                                      % (self.op.name, n, len(self.items), op.name))
            out = [self.items.popleft() for _ in range(min(n, len(self.items)))]
            self.cond.notify_all()
            return out

    def close(self, cancel: bool) -> None:
        with self.cond:
            self.closed = True
            self.cancelled = self.cancelled or cancel
            self.cond.notify_all()


class _ShuffleQueueState(_QueueState):
    """A RandomShuffleQueue's elements in one Session: ``items`` is a list, taken from at random."""

    def __init__(self, op):
        super().__init__(op)
        self.items = []                                  # type: ignore[assignment]
        self.min_after_dequeue = op.attrs["min_after_dequeue"]
        seed, seed2 = op.attrs["seed"], op.attrs["seed2"]
        self.rng = np.random.default_rng(None if seed == 0 and seed2 == 0 else [seed, seed2])

    def _pop_random(self) -> tuple:
        i = int(self.rng.integers(len(self.items)))
        self.items[i], self.items[-1] = self.items[-1], self.items[i]
        return self.items.pop()

    def take(self, op, n: int, up_to: bool = False) -> list:
        if n <= 0:
            return []
        want = n
        out: list = []
        with self.cond:
            while len(out) < want:
                while len(self.items) <= self.min_after_dequeue and not self.closed:
                    self.cond.wait()
                if self.closed and len(self.items) + len(out) < want:
                    if up_to and (self.items or out):
                        out.extend(self._pop_random() for _ in range(len(self.items)))
                        break
                    self.items.extend(out)                  # a failed dequeue takes nothing
                    raise OutOfRangeError(op, "RandomShuffleQueue '%s' is closed and has insufficient elements "
                                              "(requested %d, current size %d)\n\t [[node %s]]"
                                          % (self.op.name, n, len(self.items), op.name))
                out.append(self._pop_random())
                self.cond.notify_all()
            return out


_STATE_LOCK = threading.Lock()


def _state(op, session) -> _QueueState:
    """The queue's state in ``session``, created once even when QueueRunner threads bind it concurrently."""
    factory = _ShuffleQueueState if op.type == "RandomShuffleQueueV2" else _QueueState
    with _STATE_LOCK:
        return session.op_state(op, lambda: factory(op))


def _handle_bind(op, session):
    state = _state(op, session)
    return lambda: state


def _check(op, queue_op, components, batched: bool) -> list:
    types, shapes = queue_op.attrs["component_types"], queue_op.attrs["shapes"]
    out = []
    for i, (c, dtype) in enumerate(zip(components, types)):
        arr = np.array(c, dtype=dtype.as_numpy_dtype, copy=True)
        if shapes:
            want = shapes[i]
            got = arr.shape[1:] if batched else arr.shape
            if not want.is_compatible_with(got):
                raise InvalidArgumentError(op, "Shape mismatch in tuple component %d. Expected %s, got %s"
                                           % (i, want, list(got)))
        out.append(arr)
    return out


def _enqueue_bind(op, session):
    queue_op = op.inputs[0].op
    batched = op.type == "QueueEnqueueManyV2"

    def run(state, *components):
        arrays = _check(op, queue_op, components, batched)
        if batched:
            n = {a.shape[0] for a in arrays}
            if len(n) != 1:
                raise InvalidArgumentError(op, "EnqueueMany: components have different batch sizes %s" % sorted(n))
            elements = [tuple(a[i] for a in arrays) for i in range(n.pop())]
        else:
            elements = [tuple(arrays)]
        state.put(op, elements)
    return run


def _dequeue_bind(op, session):
    many = op.type != "QueueDequeueV2"
    up_to = op.type == "QueueDequeueUpToV2"
    n_comp = len(op.attrs["component_types"])

    def run(state, n=1):
        elements = state.take(op, int(n), up_to)
        if many:
            types = op.attrs["component_types"]
            parts = tuple(np.stack([e[i] for e in elements]) if elements else
                          np.zeros((0,), types[i].as_numpy_dtype) for i in range(n_comp))
        else:
            parts = elements[0]
        return parts[0] if n_comp == 1 else parts
    return run


def _dequeue_shapes(op):
    shapes = op.attrs["component_types"] and (op.inputs[0].op.attrs["shapes"] or
                                              [TensorShape(None)] * len(op.attrs["component_types"]))
    if op.type == "QueueDequeueV2":
        return list(shapes)
    n = constant_value(op.inputs[1]) if op.type == "QueueDequeueManyV2" else None
    lead = [int(n)] if n is not None else [None]
    return [TensorShape(lead + s.as_list()) if s.dims is not None else TensorShape(None) for s in shapes]


_STATEFUL = dict(stateful=True)
for _t in ("FIFOQueueV2", "RandomShuffleQueueV2"):
    register(_t, bind=_handle_bind, dtype=_dtypes.string, shape=lambda op: TensorShape([]), **_STATEFUL)
register("QueueEnqueueV2", bind=_enqueue_bind, num_outputs=0, **_STATEFUL)
register("QueueEnqueueManyV2", bind=_enqueue_bind, num_outputs=0, **_STATEFUL)
for _t in ("QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2"):
    register(_t, bind=_dequeue_bind, num_outputs=lambda attrs: len(attrs["component_types"]),
             dtype=lambda op: list(op.attrs["component_types"]), shape=_dequeue_shapes, **_STATEFUL)
register("QueueCloseV2", bind=lambda op, session: lambda state: state.close(op.attrs["cancel_pending_enqueues"]),
         num_outputs=0, **_STATEFUL)
register("QueueSizeV2", bind=lambda op, session: lambda state: np.array(len(state.items), np.int32),
         dtype=_dtypes.int32, shape=lambda op: TensorShape([]), **_STATEFUL)


def _as_list(x: Any) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


class QueueBase:
    """The Python face of a queue: methods build the ops that act on it."""

    def __init__(self, dtypes: list, shapes: Optional[list], queue_ref):
        self._dtypes = dtypes
        self._shapes = shapes
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self) -> str:
        return self._queue_ref.op.name

    @property
    def dtypes(self) -> list:
        return list(self._dtypes)

    @property
    def shapes(self) -> list:
        return list(self._shapes) if self._shapes else [TensorShape(None)] * len(self._dtypes)

    def _components(self, vals: Any, batched: bool) -> list:
        vals = _as_list(vals)
        if len(vals) != len(self._dtypes):
            raise ValueError("Expected %d tensors to enqueue, got %d" % (len(self._dtypes), len(vals)))
        tensors = []
        for i, (v, dtype) in enumerate(zip(vals, self._dtypes)):
            t = convert_to_tensor(v, dtype=dtype, name="component_%d" % i)
            if self._shapes and t.shape.dims is not None:
                want = self._shapes[i]
                got = TensorShape(t.shape.dims[1:]) if batched else t.shape
                if not want.is_compatible_with(got):
                    raise ValueError("Shapes %s and %s are incompatible (component %d of %s)"
                                     % (got, want, i, self.name))
            tensors.append(t)
        return tensors

    def enqueue(self, vals: Any, name: Optional[str] = None):
        with name_scope(name, "%s_enqueue" % self._name) as scope:
            return create_op("QueueEnqueueV2", [self._queue_ref] + self._components(vals, False),
                             dict(Tcomponents=list(self._dtypes), timeout_ms=-1), name=scope)

    def enqueue_many(self, vals: Any, name: Optional[str] = None):
        with name_scope(name, "%s_EnqueueMany" % self._name) as scope:
            return create_op("QueueEnqueueManyV2", [self._queue_ref] + self._components(vals, True),
                             dict(Tcomponents=list(self._dtypes), timeout_ms=-1), name=scope)

    def dequeue(self, name: Optional[str] = None):
        out = apply_op("QueueDequeueV2", [self._queue_ref],
                       dict(component_types=list(self._dtypes), timeout_ms=-1),
                       name=name or "%s_Dequeue" % self._name)
        return out

    def dequeue_many(self, n: Any, name: Optional[str] = None):
        with name_scope(name, "%s_DequeueMany" % self._name) as scope:
            n = convert_to_tensor(n, dtype=_dtypes.int32, name="n")
            return apply_op("QueueDequeueManyV2", [self._queue_ref, n],
                            dict(component_types=list(self._dtypes), timeout_ms=-1), name=scope)

    def dequeue_up_to(self, n: Any, name: Optional[str] = None):
        with name_scope(name, "%s_DequeueUpTo" % self._name) as scope:
            n = convert_to_tensor(n, dtype=_dtypes.int32, name="n")
            return apply_op("QueueDequeueUpToV2", [self._queue_ref, n],
                            dict(component_types=list(self._dtypes), timeout_ms=-1), name=scope)

    def close(self, cancel_pending_enqueues: bool = False, name: Optional[str] = None):
        return create_op("QueueCloseV2", [self._queue_ref],
                         dict(cancel_pending_enqueues=bool(cancel_pending_enqueues)),
                         name=name or "%s_Close" % self._name)

    def size(self, name: Optional[str] = None):
        return apply_op("QueueSizeV2", [self._queue_ref], name=name or "%s_Size" % self._name)


def _shapes_attr(dtypes: list, shapes: Any) -> Optional[list]:
    if shapes is None:
        return None
    shapes = [TensorShape(s) for s in (shapes if isinstance(shapes, (list, tuple)) and shapes and
                                       isinstance(shapes[0], (list, tuple, TensorShape)) else [shapes])]
    if len(shapes) != len(dtypes):
        raise ValueError("Queue shapes must have the same length as dtypes")
    return shapes


class RandomShuffleQueue(QueueBase):
    """``tf.RandomShuffleQueue(capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
    shared_name=None, name='random_shuffle_queue')``: dequeues return random elements, keeping at least
    ``min_after_dequeue`` queued until the queue is closed."""

    def __init__(self, capacity: int, min_after_dequeue: int, dtypes: Any, shapes: Any = None, names: Any = None,
                 seed: Optional[int] = None, shared_name: Optional[str] = None, name: str = "random_shuffle_queue"):
        if names is not None:
            raise NotImplementedError("RandomShuffleQueue(names=...) is not supported; pass tuples of tensors")
        if min_after_dequeue < 0:
            raise ValueError("min_after_dequeue must be >= 0, got %d" % min_after_dequeue)
        if capacity > 0 and capacity <= min_after_dequeue:
            raise ValueError("capacity %d must be bigger than min_after_dequeue %d." % (capacity, min_after_dequeue))
        dtypes = [_dtypes.as_dtype(d) for d in _as_list(dtypes)]
        shapes = _shapes_attr(dtypes, shapes)
        seed1, seed2 = get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            seed2 = 0                                    # TF: shared queues must not depend on the op count
        ref = apply_op("RandomShuffleQueueV2", [],
                       dict(component_types=dtypes, shapes=shapes or [], capacity=int(capacity),
                            min_after_dequeue=int(min_after_dequeue), seed=int(seed1), seed2=int(seed2),
                            container="", shared_name=shared_name or ""), name=name)
        super().__init__(dtypes, shapes, ref)


class FIFOQueue(QueueBase):
    """``tf.FIFOQueue(capacity, dtypes, shapes=None, names=None, shared_name=None, name='fifo_queue')``."""

    def __init__(self, capacity: int, dtypes: Any, shapes: Any = None, names: Any = None,
                 shared_name: Optional[str] = None, name: str = "fifo_queue"):
        if names is not None:
            raise NotImplementedError("FIFOQueue(names=...) is not supported; pass tuples of tensors")
        dtypes = [_dtypes.as_dtype(d) for d in _as_list(dtypes)]
        if shapes is not None:
            shapes = [TensorShape(s) for s in (shapes if isinstance(shapes, (list, tuple)) and shapes and
                                               isinstance(shapes[0], (list, tuple, TensorShape)) else [shapes])]
            if len(shapes) != len(dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes")
        ref = apply_op("FIFOQueueV2", [], dict(component_types=dtypes, shapes=shapes or [], capacity=int(capacity),
                                              container="", shared_name=shared_name or ""), name=name)
        super().__init__(dtypes, shapes, ref)
