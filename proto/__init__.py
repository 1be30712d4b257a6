"""Protocol buffers wire-compatible with TensorBoard's and TensorFlow's.

The messages live in the proto package ``tfevents`` (``tfevents.hparams`` for
the hparams plugin), so they load beside ``tensorboard.compat.proto`` and
TensorFlow's own in one process; field numbers and types are TensorBoard's,
which is all the wire format knows. Regenerate with scripts/gen_protos.py.
"""
