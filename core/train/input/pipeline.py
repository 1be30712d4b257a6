"""TF1's queue-based input pipelines (``tf.train`` input.py), built as TF builds them:

- ``limit_epochs``: the tensor behind a ``CountUpTo`` on a local ``epochs`` counter, so it can be read
  ``num_epochs`` times, then raises OutOfRangeError (which closes the queue its QueueRunner feeds).
- ``input_producer`` (and ``string_input_producer``, ``range_input_producer``, ``slice_input_producer``): the
  rows of a tensor, optionally ``RandomShuffle``d once per epoch, enqueued by a QueueRunner into a FIFOQueue;
  every row comes out once per epoch.
- ``batch`` / ``batch_join`` (FIFOQueue) and ``shuffle_batch`` / ``shuffle_batch_join`` (RandomShuffleQueue with
  ``min_after_dequeue``): one enqueue op per thread (``*_join``: per tensor list), ``batch_size`` rows per
  dequeue (``allow_smaller_final_batch``: ``DequeueUpTo``), plus TF's "fraction full" scalar summaries.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ...framework import dtypes as _dtypes
from ...framework.graph import GraphKeys, Tensor, control_dependencies, name_scope
from ...framework.tensor_shape import TensorShape
from ...ops import array_ops, math_ops
from ...framework.registry import constant, constant_value, convert_to_tensor, create_op
from ...ops.state_ops import count_up_to
from .queues import FIFOQueue, RandomShuffleQueue
from .queue_runner import QueueRunner, add_queue_runner
from ...variables import Variable
from ...summary import scalar
from ...ops.random_ops import random_shuffle

def limit_epochs(tensor: Any, num_epochs: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """``tensor``, readable ``num_epochs`` times (then OutOfRangeError); unchanged when ``num_epochs`` is None."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError("num_epochs must be > 0 not %d." % num_epochs)
    with name_scope(name, "limit_epochs") as scope:
        tensor = convert_to_tensor(tensor)
        zero64 = constant(0, dtype=_dtypes.int64)
        epochs = Variable(zero64, name="epochs", trainable=False, collections=[GraphKeys.LOCAL_VARIABLES])
        counter = count_up_to(epochs, num_epochs)
        with control_dependencies([counter]):
            return array_ops.identity(tensor, name=scope)


def _fraction_summary(name: str, size: Tensor, scale: float) -> None:
    scalar(name, math_ops.cast(size, _dtypes.float32) * scale)


def _static_or(t: Tensor, what: str, build: Any) -> Tensor:
    """TF's constant-folded ``size`` / ``shape`` of a fully defined ``t`` (a Const named ``what``), else the op."""
    if not t.shape.is_fully_defined():
        return build(t)
    dims = t.shape.as_list()
    value = int(np.prod(dims)) if what == "Size" else np.array(dims, np.int32)
    return constant(value, dtype=_dtypes.int32, name=what)


def input_producer(input_tensor: Any, element_shape: Any = None, num_epochs: Optional[int] = None,
                   shuffle: bool = True, seed: Optional[int] = None, capacity: int = 32,
                   shared_name: Optional[str] = None, summary_name: Optional[str] = None,
                   name: Optional[str] = None, cancel_op: Any = None) -> FIFOQueue:
    """A FIFOQueue fed with the rows of ``input_tensor`` (shuffled per epoch when ``shuffle``) by a QueueRunner,
    ``num_epochs`` times (None: forever)."""
    with name_scope(name, "input_producer") as scope:
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        if input_tensor.shape.dims is None or input_tensor.shape.ndims < 1:
            raise ValueError("input_producer needs a tensor of rank >= 1, got shape %s" % input_tensor.shape)
        element_shape = TensorShape(input_tensor.shape.dims[1:]).merge_with(TensorShape(element_shape))
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or `element_shape` must be "
                             "specified")
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = FIFOQueue(capacity, [input_tensor.dtype], [element_shape], shared_name=shared_name,
                          name=name if name is not None else "fifo_queue")
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            _fraction_summary(summary_name, queue.size(), 1.0 / capacity)
        return queue


def string_input_producer(string_tensor: Any, num_epochs: Optional[int] = None, shuffle: bool = True,
                          seed: Optional[int] = None, capacity: int = 32, shared_name: Optional[str] = None,
                          name: Optional[str] = None, cancel_op: Any = None) -> FIFOQueue:
    """A queue of the strings (e.g. file names) of a 1-D ``string_tensor``, once per epoch."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, Tensor) and not len(string_tensor):
        raise ValueError(not_null_err)
    with name_scope(name, "input_producer") as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=_dtypes.string)
        condition = math_ops.greater(_static_or(string_tensor, "Size", array_ops.size), 0)
        with name_scope("Assert"):                      # TF's Assert(condition, [not_null_err])
            convert_to_tensor(not_null_err)
            with name_scope("Assert") as assert_name:
                data = convert_to_tensor(not_null_err, name="data_0")
                check = create_op("Assert", [condition, data], dict(T=[_dtypes.string], summarize=3),
                                  name=assert_name)
        with control_dependencies([check]):
            string_tensor = array_ops.identity(string_tensor)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity, shared_name,
                              "fraction_of_%d_full" % capacity, scope, cancel_op)


def range_input_producer(limit: Any, num_epochs: Optional[int] = None, shuffle: bool = True,
                         seed: Optional[int] = None, capacity: int = 32, shared_name: Optional[str] = None,
                         name: Optional[str] = None) -> FIFOQueue:
    """A queue of the integers ``0 .. limit - 1``, once per epoch."""
    with name_scope(name, "input_producer") as scope:
        range_tensor = array_ops.range_(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity, shared_name,
                              "fraction_of_%d_full" % capacity, scope)


def slice_input_producer(tensor_list: Sequence, num_epochs: Optional[int] = None, shuffle: bool = True,
                         seed: Optional[int] = None, capacity: int = 32, shared_name: Optional[str] = None,
                         name: Optional[str] = None) -> list:
    """One row (the same index of every tensor in ``tensor_list``) per dequeue, each row once per epoch."""
    with name_scope(name, "input_producer"):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = _static_or(tensor_list[0], "Shape", array_ops.shape)[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                                     capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [array_ops.gather(t, index) for t in tensor_list]


# ---- batching


def _as_list(tensors: Any) -> list:
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    return list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]


def _restore(tensors: Any, dequeued: Any) -> Any:
    """The dequeued tensors as TF returns them: a dict for a dict; otherwise one tensor when one was batched
    (also for a one-element list, as TF does), else a list."""
    out = list(dequeued) if isinstance(dequeued, (list, tuple)) else [dequeued]
    if isinstance(tensors, dict):
        return dict(zip(sorted(tensors), out))
    return out[0] if len(out) == 1 else out


def _shapes(tensor_list_list: list, shapes: Optional[list], enqueue_many: bool) -> list:
    if shapes is not None:
        return [TensorShape(s) for s in shapes]
    merged = []
    for i in range(len(tensor_list_list[0])):
        shape = TensorShape(None)
        for tl in tensor_list_list:
            s = tl[i].shape
            if enqueue_many and s.dims is not None:
                if s.ndims < 1:
                    raise ValueError("Cannot enqueue_many a scalar tensor: %s" % tl[i].name)
                s = TensorShape(s.dims[1:])
            shape = shape.merge_with(s)
        if not shape.is_fully_defined():
            raise ValueError("All shapes must be fully defined: %s (pass shapes=)" % shape)
        merged.append(shape)
    return merged


def _validate(tensors_list: list) -> list:
    lists = [[convert_to_tensor(t) for t in _as_list(ts)] for ts in tensors_list]
    if not lists or not lists[0]:
        raise ValueError("Expected at least one tensor in batch().")
    types = [t.dtype for t in lists[0]]
    for tl in lists[1:]:
        if len(tl) != len(types):
            raise ValueError("Expected %d tensors in each list, got %d" % (len(types), len(tl)))
        if [t.dtype for t in tl] != types:
            raise TypeError("Expected types to be consistent: %s vs. %s."
                            % ([d.name for d in types], [t.dtype.name for t in tl]))
    return lists


def _batch_impl(tensors_list: list, structure: Any, batch_size: int, capacity: int, enqueue_many: bool,
                shapes: Optional[list], allow_smaller_final_batch: bool, shared_name: Optional[str],
                name: Optional[str], default: str, threads: int, join: bool,
                min_after_dequeue: Optional[int] = None, seed: Optional[int] = None) -> Any:
    with name_scope(name, default) as scope:
        if min_after_dequeue is not None and capacity <= min_after_dequeue:
            raise ValueError("capacity %d must be bigger than min_after_dequeue %d." % (capacity, min_after_dequeue))
        convert_to_tensor(True)                         # TF's keep_input (a Const; always True here)
        lists = _validate(tensors_list)
        types = [t.dtype for t in lists[0]]
        queue_shapes = _shapes(lists, shapes, enqueue_many)
        if min_after_dequeue is None:
            queue = FIFOQueue(capacity, types, queue_shapes, shared_name=shared_name)
        else:
            queue = RandomShuffleQueue(capacity, min_after_dequeue, types, queue_shapes, seed=seed,
                                       shared_name=shared_name)
        enqueue = queue.enqueue_many if enqueue_many else queue.enqueue
        ops = [enqueue(tl) for tl in lists] if join else [enqueue(lists[0])] * threads
        add_queue_runner(QueueRunner(queue, ops))
        if min_after_dequeue is None:
            _fraction_summary("fraction_of_%d_full" % capacity, queue.size(), 1.0 / capacity)
        else:
            over = math_ops.maximum(0, queue.size() - min_after_dequeue)
            _fraction_summary("fraction_over_%d_of_%d_full" % (min_after_dequeue, capacity - min_after_dequeue),
                              over, 1.0 / (capacity - min_after_dequeue))
        take = queue.dequeue_up_to if allow_smaller_final_batch else queue.dequeue_many
        return _restore(structure, take(batch_size, name=scope))


def _check_batch_args(batch_size: Any, num_threads: int = 1, dynamic_pad: bool = False) -> None:
    n = constant_value(batch_size) if isinstance(batch_size, Tensor) else batch_size
    if n is not None and int(n) < 1:
        raise ValueError("batch_size must be >= 1, got %s" % n)
    if num_threads < 1:
        raise ValueError("num_threads must be >= 1, got %d" % num_threads)
    if dynamic_pad:
        raise NotImplementedError("dynamic_pad=True (PaddingFIFOQueue) is not supported")


def batch(tensors: Any, batch_size: int, num_threads: int = 1, capacity: int = 32, enqueue_many: bool = False,
          shapes: Optional[list] = None, dynamic_pad: bool = False, allow_smaller_final_batch: bool = False,
          shared_name: Optional[str] = None, name: Optional[str] = None) -> Any:
    """Batches of ``tensors`` (a tensor, list or dict; each gains a leading ``batch_size`` dim, or, with
    ``enqueue_many``, is already a batch whose rows are queued one by one), in FIFO order."""
    _check_batch_args(batch_size, num_threads, dynamic_pad)
    return _batch_impl([tensors], tensors, batch_size, capacity, enqueue_many, shapes, allow_smaller_final_batch,
                       shared_name, name, "batch", num_threads, join=False)


def batch_join(tensors_list: Sequence, batch_size: int, capacity: int = 32, enqueue_many: bool = False,
               shapes: Optional[list] = None, dynamic_pad: bool = False, allow_smaller_final_batch: bool = False,
               shared_name: Optional[str] = None, name: Optional[str] = None) -> Any:
    """Batches mixing several lists of tensors (same types), each list enqueued by its own thread."""
    _check_batch_args(batch_size, 1, dynamic_pad)
    tensors_list = list(tensors_list)
    if not tensors_list:
        raise ValueError("Expecting at least one list of tensors in batch_join().")
    return _batch_impl(tensors_list, tensors_list[0], batch_size, capacity, enqueue_many, shapes,
                       allow_smaller_final_batch, shared_name, name, "batch_join", 1, join=True)


def shuffle_batch(tensors: Any, batch_size: int, capacity: int, min_after_dequeue: int, num_threads: int = 1,
                  seed: Optional[int] = None, enqueue_many: bool = False, shapes: Optional[list] = None,
                  allow_smaller_final_batch: bool = False, shared_name: Optional[str] = None,
                  name: Optional[str] = None) -> Any:
    """Batches of randomly chosen rows of ``tensors`` from a RandomShuffleQueue holding at least
    ``min_after_dequeue`` rows after each dequeue (until its input ends)."""
    _check_batch_args(batch_size, num_threads)
    return _batch_impl([tensors], tensors, batch_size, capacity, enqueue_many, shapes, allow_smaller_final_batch,
                       shared_name, name, "shuffle_batch", num_threads, join=False,
                       min_after_dequeue=min_after_dequeue, seed=seed)


def shuffle_batch_join(tensors_list: Sequence, batch_size: int, capacity: int, min_after_dequeue: int,
                       seed: Optional[int] = None, enqueue_many: bool = False, shapes: Optional[list] = None,
                       allow_smaller_final_batch: bool = False, shared_name: Optional[str] = None,
                       name: Optional[str] = None) -> Any:
    """``shuffle_batch`` fed by one thread per list of tensors (``batch_join``'s input)."""
    _check_batch_args(batch_size)
    tensors_list = list(tensors_list)
    if not tensors_list:
        raise ValueError("Expecting at least one list of tensors in shuffle_batch_join().")
    return _batch_impl(tensors_list, tensors_list[0], batch_size, capacity, enqueue_many, shapes,
                       allow_smaller_final_batch, shared_name, name, "shuffle_batch_join", 1, join=True,
                       min_after_dequeue=min_after_dequeue, seed=seed)
