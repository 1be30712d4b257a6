"""RNN cells and drivers on tfevents.core: ``tf.nn.rnn_cell`` (``rnn_cell_impl``: cells; ``rnn_cell_wrappers``:
dropout/residual/device wrappers; ``rnn_cell``: the namespace) and the static drivers ``tf.nn.static_rnn``,
``tf.nn.static_bidirectional_rnn``, ``tf.nn.static_state_saving_rnn`` (``rnn``)."""
from .. import nn as _nn  # noqa: F401 - core.nn imports the drivers; importing it first keeps the import cycle
#                                  (core.rnn -> core.layers -> core.nn -> core.rnn.rnn) resolvable from any entry
from . import rnn_cell  # noqa: F401
from .rnn import reverse_sequence, static_bidirectional_rnn, static_rnn, static_state_saving_rnn  # noqa: F401

__all__ = ["rnn_cell", "static_rnn", "static_bidirectional_rnn", "static_state_saving_rnn", "reverse_sequence"]
