"""``tf.nn``: activations, softmax and cross-entropies, bias_add, l2_loss, in_top_k, moments, batch norm, dropout,
embeddings, candidate samplers and sampled losses."""
from .ops.nn_ops import (batch_normalization, bias_add, dropout, elu, fused_batch_norm,  # noqa: F401
                         in_top_k, l2_loss, l2_normalize,
                         leaky_relu, log_softmax, moments, relu, relu6, sigmoid, sigmoid_cross_entropy_with_logits,
                         softmax, softmax_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2, softplus,
                         sparse_softmax_cross_entropy_with_logits, tanh)
from .ops.array_ops import one_hot  # noqa: F401
from .ops.conv_ops import *  # noqa: F401,F403 - each family's __all__ is its tf.nn.<name> API
from .ops.pool_ops import *  # noqa: F401,F403
from .ops.activation_ops import *  # noqa: F401,F403
from .ops.manip_ops import depth_to_space, space_to_depth, top_k  # noqa: F401,E402
from .ops.embedding_ops import *  # noqa: F401,F403,E402
from .ops.candidate_sampling_ops import *  # noqa: F401,F403,E402
from .ops.sampled_loss_ops import *  # noqa: F401,F403,E402
from .rnn.rnn import rnn_cell, static_bidirectional_rnn, static_rnn, static_state_saving_rnn  # noqa: F401,E402
from .rnn.dynamic import bidirectional_dynamic_rnn, dynamic_rnn  # noqa: F401,E402
