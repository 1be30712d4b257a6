"""Checkpoints as TensorFlow writes them: ``Saver`` and the checkpoint-state file (``saver.py``), the V2 tensor
bundle format (``tensor_bundle.py``), meta graphs and ``init_from_checkpoint`` (``checkpoint_utils.py``)."""
