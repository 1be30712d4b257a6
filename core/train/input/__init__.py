"""Input pipelines: input producers, ``batch``/``shuffle_batch`` and their joins, ``limit_epochs``
(``pipeline.py``) over FIFO and RandomShuffle queues (``queues.py``), run by ``QueueRunner`` threads
(``queue_runner.py``) under a ``Coordinator`` (``coordinator.py``)."""
