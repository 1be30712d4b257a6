"""TF1's sub-namespaces ``tf.math``, ``tf.linalg``, ``tf.random`` and ``tf.manip``: other names for functions that
live at the top level of ``tfevents.core`` (or in ``tf.nn``). Each is a module built on first use from a table
``{name in the namespace: name in core}`` (``"nn.top_k"`` for a ``tf.nn`` function)."""
from __future__ import annotations

import importlib
import types

_SAME = lambda *names: {n: n for n in names}  # noqa: E731

TABLES = {
    "math": {
        **_SAME("abs", "acos", "acosh", "add", "add_n", "argmax", "argmin", "asin", "asinh", "atan", "atan2", "atanh",
                "bincount", "ceil", "confusion_matrix", "cos", "cosh", "count_nonzero", "cumprod", "cumsum",
                "digamma", "divide", "equal", "erf", "erfc", "exp", "expm1", "floor", "floordiv", "floormod",
                "greater", "greater_equal", "is_finite", "is_inf", "is_nan", "less", "less_equal", "lgamma", "log",
                "log1p", "log_sigmoid", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum",
                "minimum", "mod", "multiply", "negative", "not_equal", "polygamma", "pow", "reciprocal", "reduce_all",
                "reduce_any", "reduce_logsumexp", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod",
                "reduce_sum", "rint", "round", "rsqrt", "segment_max", "segment_mean", "segment_sum", "sigmoid",
                "sign", "sin", "sinh", "sqrt", "square", "squared_difference", "subtract", "tan", "tanh", "truediv",
                "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_sum"),
        "divide_no_nan": "div_no_nan",
        **{n: "nn." + n for n in ("in_top_k", "l2_normalize", "log_softmax", "softmax", "softplus", "softsign",
                                  "top_k", "zero_fraction")},
    },
    "linalg": {
        **_SAME("cholesky", "einsum", "eye", "global_norm", "matmul", "matrix_transpose", "norm", "tensordot",
                "trace"),
        "band_part": "matrix_band_part", "det": "matrix_determinant", "diag": "matrix_diag",
        "diag_part": "matrix_diag_part", "inv": "matrix_inverse", "set_diag": "matrix_set_diag",
        "tensor_diag": "diag", "tensor_diag_part": "diag_part", "transpose": "matrix_transpose",
        "l2_normalize": "nn.l2_normalize",
    },
    "random": {
        **_SAME("multinomial", "set_random_seed", "truncated_normal"),
        "normal": "random_normal", "uniform": "random_uniform", "shuffle": "random_shuffle",
        **{n: "nn." + n for n in ("uniform_candidate_sampler", "log_uniform_candidate_sampler",
                                  "fixed_unigram_candidate_sampler", "learned_unigram_candidate_sampler")},
    },
    "manip": _SAME("gather_nd", "reshape", "reverse", "scatter_nd", "tile"),
}


def build(name: str) -> types.ModuleType:
    """The module ``tfevents.core.<name>`` for one of ``TABLES``."""
    core = importlib.import_module("tfevents.core")
    module = types.ModuleType("tfevents.core." + name, "TF1's tf.%s: names for tfevents.core functions." % name)
    for alias, target in TABLES[name].items():
        owner = core
        for part in target.split(".")[:-1]:
            owner = getattr(owner, part)
        setattr(module, alias, getattr(owner, target.split(".")[-1]))
    module.__all__ = sorted(TABLES[name])
    return module
