"""RNN cells and drivers on tfevents.core: ``tf.nn.rnn_cell`` (``rnn_cell_impl``: cells; ``rnn_cell_wrappers``:
dropout/residual/device wrappers; ``rnn_cell``: the namespace) and the static drivers ``tf.nn.static_rnn``,
``tf.nn.static_bidirectional_rnn``, ``tf.nn.static_state_saving_rnn`` (``rnn``)."""
from . import rnn_cell  # noqa: F401
from .rnn import reverse_sequence, static_bidirectional_rnn, static_rnn, static_state_saving_rnn  # noqa: F401

__all__ = ["rnn_cell", "static_rnn", "static_bidirectional_rnn", "static_state_saving_rnn", "reverse_sequence"]
