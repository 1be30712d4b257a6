"""A TensorFlow-1 style graph, autodiff and optimizer engine on numpy.

Programs written for TF1 run with ``from tfevents import core as tf``: build a graph (placeholders,
variables, ops), differentiate it symbolically with ``tf.gradients``, run it in a ``tf.Session`` and log it
to TensorBoard (``tf.summary.FileWriter(logdir, sess.graph)``). This module is the ``tf`` namespace.

The engine: ``framework/`` (the graph, dtypes, errors, the op registry, GraphDef out and in) and ``runtime/``
(the Session, the plan compiler and generator, loop frames, the C kernels). The TF1 API on it: ``ops/`` (op
families, each op registered once: numpy forward, gradient, shape, TF op name), ``control_flow/``, ``layers/``,
``rnn/``, ``train/`` (optimizers, checkpoints, input pipelines, monitored sessions), and the modules here:
``gradients``, ``variables``, ``variable_scope``, ``initializers``, ``losses``, ``metrics``, ``summary``, ``nn``,
``namespaces`` (``tf.math``, ``tf.linalg``, ...). ``demo/`` is the ``tfevents demo`` program.
"""
from __future__ import annotations

import importlib
from typing import Any

from .framework import dtypes, errors
from .framework.dtypes import (DType, as_dtype, bool, double, float16, float32, float64, half, int32,  # noqa: A004
                               int64, string, uint8)
from .framework.graph import (Graph, GraphKeys, Operation, Tensor, add_to_collection, add_to_collections, colocate_with,
                              control_dependencies, device, get_collection, get_collection_ref, get_default_graph,
                              get_default_session, name_scope, reset_default_graph, set_random_seed)
from .framework.tensor_shape import Dimension, TensorShape
from .framework.registry import IndexedSlices, constant, convert_to_tensor, register_gradient as RegisterGradient
from .framework.graph_import import import_graph_def
from .ops.math_ops import (abs, add, add_n, argmax, argmin, cast, ceil, div, div_no_nan, divide,  # noqa: A004
                           equal, exp, floor, floordiv, floormod, greater, greater_equal, less, less_equal, log,
                           log1p, logical_and, logical_not, logical_or, logical_xor, matmul, maximum, minimum, mod,
                           multiply, negative, not_equal, pow, realdiv, reciprocal, round, rsqrt, sigmoid, sign,
                           sqrt, square, squared_difference, subtract, tanh, to_float, to_int32, to_int64, truediv,
                           where)
from .ops.reduction_ops import (count_nonzero, cumsum, reduce_all, reduce_any, reduce_logsumexp, reduce_max,
                                reduce_mean, reduce_min, reduce_prod, reduce_sum)
from .ops.array_ops import (broadcast_to, concat, expand_dims, fill, gather, identity, one_hot, ones, ones_like,
                            range_ as range, rank, reshape, shape, size, split, squeeze, stack, stop_gradient,
                            tile, transpose, unsorted_segment_sum, unstack, zeros, zeros_like)
from .ops.slicing_ops import strided_slice
from .ops.state_ops import (assign, assign_add, assign_sub, placeholder, placeholder_with_default, scatter_add,
                            scatter_div, scatter_max, scatter_min, scatter_mul, scatter_nd_add, scatter_nd_sub,
                            scatter_nd_update, scatter_sub, scatter_update)
from .ops.random_ops import random_normal, random_uniform, truncated_normal
from .ops import nn_ops as _nn_ops
from .ops.elementwise_ops import *  # noqa: F401,F403 - each family's __all__ is its tf.<name> API
from .ops.linalg_ops import *  # noqa: F401,F403
from .ops.linalg_contract_ops import *  # noqa: F401,F403
from .ops.segment_ops import *  # noqa: F401,F403
from .ops.manip_ops import *  # noqa: F401,F403
from .variables import (Variable, VariableAggregation, VariableSynchronization, all_variables, global_variables,
                        global_variables_initializer, initialize_all_variables, is_variable_initialized, local_variables,
                        local_variables_initializer, model_variables, moving_average_variables,
                        report_uninitialized_variables, trainable_variables, variables_initializer)
from .variable_scope import (AUTO_REUSE, VariableScope, get_local_variable, get_variable, get_variable_scope,
                             variable_scope, variable_op_scope)
from .initializers import (constant_initializer, glorot_normal_initializer, glorot_uniform_initializer,
                           ones_initializer, random_normal_initializer, random_uniform_initializer,
                           truncated_normal_initializer, variance_scaling_initializer, zeros_initializer)
from .control_flow import case, cond, group, no_op, tuple_ as tuple, while_loop, with_dependencies  # noqa: A004
from .control_flow import TensorArray, foldl, foldr, map_fn, scan
from .gradients import AggregationMethod, gradients, hessians
from .runtime.session import InteractiveSession, Session

newaxis = None

# lazily imported submodules and names (PEP 562), so `import tfevents.core` loads only the graph, the ops and the
# session: tf.train, tf.nn, tf.layers, ..., the clipping functions (core/ops/clip_ops.py), sparse tensors, the protos.


_LAZY_MODULES = {"train": ".train", "nn": ".nn", "layers": ".layers", "losses": ".losses", "metrics": ".metrics",
                 "summary": ".summary", "initializers": ".initializers", "graph_def": ".framework.graph_def"}
_LAZY_NAMES = {
    "clip_by_value": (".ops.clip_ops", "clip_by_value"),
    "clip_by_norm": (".ops.clip_ops", "clip_by_norm"),
    "clip_by_global_norm": (".ops.clip_ops", "clip_by_global_norm"),
    "clip_by_average_norm": (".ops.clip_ops", "clip_by_average_norm"),
    "global_norm": (".ops.clip_ops", "global_norm"),
    "SparseTensor": (".framework.sparse_tensor", "SparseTensor"),
    "SparseTensorValue": (".framework.sparse_tensor", "SparseTensorValue"),
    "sparse_segment_sum": (".ops.embedding_ops", "sparse_segment_sum"),
    "sparse_segment_mean": (".ops.embedding_ops", "sparse_segment_mean"),
    "sparse_segment_sqrt_n": (".ops.embedding_ops", "sparse_segment_sqrt_n"),
    "sparse_to_dense": (".ops.sampled_loss_ops", "sparse_to_dense"),
    "FIFOQueue": (".train.input.queues", "FIFOQueue"), "QueueBase": (".train.input.queues", "QueueBase"),
    "RandomShuffleQueue": (".train.input.queues", "RandomShuffleQueue"),
    "Summary": ("tfevents.proto.summary_pb2", "Summary"),
    "HistogramProto": ("tfevents.proto.summary_pb2", "HistogramProto"),
    "Event": ("tfevents.proto.event_pb2", "Event"),
    "SessionLog": ("tfevents.proto.event_pb2", "SessionLog"),
    "GraphDef": ("tfevents.proto.graph_pb2", "GraphDef"),
    "NodeDef": ("tfevents.proto.graph_pb2", "NodeDef"),
    "RunOptions": ("tfevents.proto.config_pb2", "RunOptions"),
    "RunMetadata": ("tfevents.proto.config_pb2", "RunMetadata"),
}


_NAMESPACES = ("math", "linalg", "random", "manip")     # built from core/namespaces.py tables


def __getattr__(name: str) -> Any:
    if name in _NAMESPACES:
        from .namespaces import build  # lazy: tf.math and friends are built on first use
        value = build(name)
    elif name in _LAZY_MODULES:
        value = importlib.import_module(_LAZY_MODULES[name], __name__)
    elif name in _LAZY_NAMES:
        module, attr = _LAZY_NAMES[name]
        value = getattr(importlib.import_module(module, __name__ if module.startswith(".") else None), attr)
    else:
        raise AttributeError("module 'tfevents.core' has no attribute %r" % name)
    globals()[name] = value
    return value
