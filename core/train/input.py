"""``tf.train.batch``: a FIFOQueue filled by a QueueRunner (registered in QUEUE_RUNNERS, started by
``start_queue_runners``), dequeued ``batch_size`` elements at a time."""
from __future__ import annotations

from typing import Any, Optional

from ..graph import TensorShape, name_scope
from ..registry import convert_to_tensor
from .data_flow import FIFOQueue
from .queue_runner import QueueRunner, add_queue_runner


def batch(tensors: Any, batch_size: int, num_threads: int = 1, capacity: int = 32, enqueue_many: bool = False,
          shapes: Optional[list] = None, dynamic_pad: bool = False, allow_smaller_final_batch: bool = False,
          shared_name: Optional[str] = None, name: Optional[str] = None) -> Any:
    """Batches of ``tensors`` (a tensor or a list/tuple of tensors; each gains a leading ``batch_size`` dim,
    or, with ``enqueue_many``, is already a batch whose rows are queued one by one)."""
    if dynamic_pad:
        raise NotImplementedError("tf.train.batch(dynamic_pad=True) is not supported")
    single = not isinstance(tensors, (list, tuple))
    with name_scope(name, "batch"):
        tensor_list = [convert_to_tensor(t) for t in ([tensors] if single else tensors)]
        if shapes is None:
            shapes = [TensorShape(t.shape.dims[1:] if enqueue_many else t.shape.dims) for t in tensor_list]
            if any(not s.is_fully_defined() for s in shapes):
                raise ValueError("All shapes must be fully defined: %s (pass shapes=)" % shapes)
        queue = FIFOQueue(capacity, [t.dtype for t in tensor_list], shapes, shared_name=shared_name)
        enqueue = queue.enqueue_many(tensor_list) if enqueue_many else queue.enqueue(tensor_list)
        add_queue_runner(QueueRunner(queue, [enqueue] * num_threads))
        out = queue.dequeue_up_to(batch_size, name="batch") if allow_smaller_final_batch \
            else queue.dequeue_many(batch_size, name="batch")
    if single:
        return out
    return list(out) if isinstance(out, (list, tuple)) else [out]
