"""The graph framework: what a TF1 graph is, before anything runs.

- ``graph.py``: Graph, Operation, Tensor, name scopes, collections, control dependencies, the default graph and
  session; ``tensor_shape.py``: TensorShape and Dimension;
- ``dtypes.py``, ``errors.py``: TF's dtypes and error classes;
- ``registry.py``: the op registry (one registration per op: forward, gradient, shape, TF op name and attrs);
- ``gradients.py``: symbolic differentiation (``tf.gradients``) over the registry's gradient functions;
- ``graph_def.py``, ``graph_import.py``: GraphDef out (``as_graph_def``) and in (``tf.import_graph_def``);
- ``sparse_tensor.py``: SparseTensor and its value type.

The runtime (``core/runtime``) executes what this builds; the TF1 API (ops, control flow, layers, train, ...)
builds on both.
"""
