"""``tf.nn.rnn_cell``: the TF 1.x RNN cell classes, wrappers and ``LSTMStateTuple`` (one namespace module)."""
from .rnn_cell_impl import (BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell, LSTMStateTuple,  # noqa: F401
                            MultiRNNCell, RNNCell)
from .rnn_cell_wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper  # noqa: F401

__all__ = ["BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell", "LSTMCell",
           "LSTMStateTuple", "MultiRNNCell", "RNNCell", "ResidualWrapper"]
