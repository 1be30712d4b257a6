"""TF1's optimizers: ``Optimizer`` (``compute_gradients``/``apply_gradients``/``minimize``, slots, the
``_create_slots``/``_apply_dense`` contract) and one module per optimizer, each building TF's fused ``Apply*``
update ops (``core/ops/training_ops.py``)."""
