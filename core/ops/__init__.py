"""Op families; importing this package registers every op (forward, gradient, shape, TF name), except the fused
optimizer updates of ``training_ops``, registered when ``tf.train`` (or a graph that uses them) is loaded."""
from . import operands, compare_ops, math_ops, shape_ops, array_ops, nn_ops, state_ops, random_ops  # noqa: F401
from . import (elementwise_ops, linalg_ops, segment_ops, manip_ops, conv_ops, pool_ops,  # noqa: F401
               activation_ops)
