"""TF1's sub-namespaces on tfevents.core (``tf.math``, ``tf.linalg``, ``tf.random``, ``tf.manip``, and the
``tf.nn`` / top-level names of the op families): every name exists in TF1 under the same path, and a sample of
aliases computes what TF1's computes."""
import numpy as np
import pytest

from tfevents import core
from tfevents.core.namespaces import TABLES


@pytest.mark.parametrize("namespace", sorted(TABLES))
def test_every_alias_exists_in_tensorflow_and_resolves(tf1, namespace):
    ours, theirs = getattr(core, namespace), getattr(tf1, namespace)
    assert ours.__all__ and all(hasattr(theirs, name) for name in ours.__all__)
    assert all(callable(getattr(ours, name)) for name in ours.__all__)


def test_op_family_exports_exist_in_tensorflow(tf1):
    from tfevents.core.ops import (activation_ops, conv_ops, elementwise_ops, linalg_ops, manip_ops, pool_ops,
                                   segment_ops)
    for module in (elementwise_ops, linalg_ops, segment_ops, manip_ops):
        missing = [n for n in module.__all__ if not hasattr(tf1, n)]
        assert not missing, (module.__name__, missing)
        assert all(getattr(core, n) is getattr(module, n) for n in module.__all__)
    for module in (conv_ops, pool_ops, activation_ops):
        missing = [n for n in module.__all__ if not hasattr(tf1.nn, n)]
        assert not missing, (module.__name__, missing)
        assert all(getattr(core.nn, n) is getattr(module, n) for n in module.__all__)


ALIASES = [
    ("math.top_k", lambda tf, x: tf.math.top_k(x, k=2)[0]),
    ("math.log_sigmoid", lambda tf, x: tf.math.log_sigmoid(x)),
    ("math.divide_no_nan", lambda tf, x: tf.math.divide_no_nan(x, x - x[0:1])),
    ("math.softsign", lambda tf, x: tf.math.softsign(x)),
    ("linalg.inv", lambda tf, x: tf.linalg.inv(tf.matmul(x, x, transpose_b=True) + tf.eye(3, dtype=x.dtype))),
    ("linalg.diag", lambda tf, x: tf.linalg.diag(x)),
    ("linalg.band_part", lambda tf, x: tf.linalg.band_part(x, 0, 1)),
    ("manip.reverse", lambda tf, x: tf.manip.reverse(x, [1])),
]


@pytest.mark.parametrize("name, build", ALIASES, ids=[a[0] for a in ALIASES])
def test_aliases_compute_what_tensorflow_computes(tf1, name, build):
    x = np.random.RandomState(3).uniform(-2, 2, (3, 3))

    def run(tf):
        with tf.Graph().as_default():
            return tf.Session().run(build(tf, tf.constant(x)))
    np.testing.assert_allclose(run(core), run(tf1), rtol=1e-12)
