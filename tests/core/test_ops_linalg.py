"""Linear algebra ops of tfevents.core (core/ops/linalg_ops.py, linalg_contract_ops.py) against TF1: eye, diag,
diag_part, matrix_diag/matrix_diag_part/matrix_set_diag, matrix_transpose, matrix_band_part, matrix_inverse,
matrix_determinant, cholesky, trace, tensordot, einsum, norm.

Each case runs through tests/_op_cases.check_case (forward in float64/float32, static shapes, gradients against
tf.gradients and central differences, GraphDef op types and attrs); a few focused tests cover errors, name
scopes and second derivatives.
"""
import numpy as np
import pytest

from _op_cases import SUM_OF_TERMS, Case, check_case
from _tolerance import ELEMENTWISE_ULPS
from tfevents import core

R = np.random.RandomState(42)


def rnd(*shape):
    return R.uniform(-2.0, 2.0, size=shape)


def well_conditioned(*shape):
    """Matrices (or batches) with a dominant diagonal: invertible, far from singular."""
    n = shape[-1]
    return rnd(*shape) * 0.3 + 2.0 * np.eye(n)


def away_from_zero(*shape):
    """|x| in [0.3, 2] and distinct: no kinks of abs/max within a finite-difference step."""
    v = R.uniform(0.3, 2.0, size=shape) * R.choice([-1.0, 1.0], size=shape)
    return v + np.arange(v.size).reshape(shape) * 1e-3


def _leibniz_terms(x):
    """Σ|terms| of a determinant's expansion (the permanent of |x|), bounded by the product of |x|'s row sums:
    the float32 scale of matrix_determinant, whose terms cancel."""
    return float(np.prod(np.abs(x).sum(axis=-1), axis=-1).max())



def _spd(tf, a):
    """A symmetric positive definite matrix (or batch) built from any ``a``: ``a a^T + n I``."""
    n = a.shape.as_list()[-1]
    if a.shape.ndims == 2:
        return tf.matmul(a, a, transpose_b=True) + n * tf.eye(n, dtype=a.dtype)
    return tf.einsum("bij,bkj->bik", a, a) + n * tf.eye(n, dtype=a.dtype)


# float32 (tests/_tolerance.py): eye, diag, transposes and band parts copy, or multiply or add once: exact
# (n32=0). A k×k inverse: LU's elimination, forward and back substitution (three length-k dots) amplified by the
# condition number (below 4 for these diagonally dominant matrices): 12k. A determinant: the elimination (3k) and
# the product of the k pivots, against the Leibniz terms. Cholesky of a·aᵀ + kI: the product (k), the factor's
# dots, divisions and square roots (2k + ELEMENTWISE_ULPS). Contractions: their length, against Σ|terms|. Norms:
# the sum's length, a square and a square root (IEEE, exact to half an ulp) or a power.
# the largest singular value: the SVD's sweeps of rotations (each a length-k dot), ~k of them: backward stable,
# against the result itself (σ_max = ‖x‖₂)
SVD_N32 = 3 * 4 * 4

CASES = {
    # ---- eye, diag, diag_part, matrix_transpose, band part
    "eye_square": Case(lambda tf, x: tf.eye(3, dtype=x.dtype) * x, [rnd(3, 3)], n32=0),
    "eye_rect_batch": Case(lambda tf, x: tf.eye(2, 3, batch_shape=[4], dtype=x.dtype) * x, [rnd(4, 2, 3)], n32=0),
    "eye_empty": Case(lambda tf, x: tf.eye(0, dtype=x.dtype) + x, [rnd(0, 0)], n32=0),
    "eye_tensor_size": Case(lambda tf, x: tf.eye(tf.shape(x)[0], dtype=x.dtype) * x, [rnd(3, 3)],
                            shapes=[[None, 3]], n32=0),
    "eye_tensor_rect": Case(lambda tf, x: tf.eye(tf.shape(x)[1], 4, batch_shape=[2], dtype=x.dtype) + x,
                            [rnd(2, 3, 4)], shapes=[[2, None, 4]], n32=0),
    "diag_vector": Case(lambda tf, x: tf.diag(x), [rnd(3)], n32=0),
    "diag_matrix": Case(lambda tf, x: tf.diag(x), [rnd(2, 3)], n32=0),
    "diag_part": Case(lambda tf, x: tf.diag_part(x), [rnd(4, 4)], n32=0),
    "diag_part_rank4": Case(lambda tf, x: tf.diag_part(x), [rnd(2, 3, 2, 3)], n32=0),
    "diag_part_unknown": Case(lambda tf, x: tf.diag_part(x), [rnd(3, 3)], shapes=[[None, 3]], n32=0),
    "matrix_diag_batch": Case(lambda tf, x: tf.matrix_diag(x), [rnd(2, 3)], n32=0),
    "matrix_diag_part_rect": Case(lambda tf, x: tf.matrix_diag_part(x), [rnd(2, 3, 4)], n32=0),
    "matrix_set_diag": Case(lambda tf, x, d: tf.matrix_set_diag(x, d), [rnd(2, 4, 3), rnd(2, 3)], n32=0),
    "matrix_transpose": Case(lambda tf, x: tf.matrix_transpose(x), [rnd(2, 3, 4)], n32=0),
    "matrix_transpose_2d": Case(lambda tf, x: tf.matrix_transpose(x, name="mt"), [rnd(3, 5)], n32=0),
    "matrix_transpose_unknown_rank": Case(lambda tf, x: tf.matrix_transpose(x), [rnd(2, 1, 3)], shapes=[None],
                                          n32=0),
    "band_part_upper": Case(lambda tf, x: tf.matrix_band_part(x, 1, -1), [rnd(3, 4)], n32=0),
    "band_part_diag": Case(lambda tf, x: tf.matrix_band_part(x, 0, 0), [rnd(4, 3)], n32=0),
    "band_part_lower_batch": Case(lambda tf, x: tf.matrix_band_part(x, -1, 0), [rnd(2, 3, 3)], n32=0),
    "band_part_int64": Case(lambda tf, x: tf.matrix_band_part(x, tf.constant(1, tf.int64), tf.constant(2, tf.int64)),
                            [rnd(5, 5)], n32=0),
    "band_part_int": Case(lambda tf, x: tf.matrix_band_part(tf.cast(x * 10, tf.int32), 1, 0), [rnd(3, 3)], n32=0),
    # ---- inverse, determinant, cholesky, trace
    "inverse": Case(lambda tf, x: tf.matrix_inverse(x), [well_conditioned(3, 3)], n32=12 * 3),
    "inverse_adjoint": Case(lambda tf, x: tf.matrix_inverse(x, adjoint=True), [well_conditioned(4, 4)],
                            n32=12 * 4),
    "inverse_batch": Case(lambda tf, x: tf.matrix_inverse(x), [well_conditioned(2, 3, 3)], n32=12 * 3),
    "inverse_1x1": Case(lambda tf, x: tf.matrix_inverse(x), [well_conditioned(1, 1)]),     # one division
    "inverse_unknown_batch": Case(lambda tf, x: tf.matrix_inverse(x), [well_conditioned(2, 2, 2)],
                                  shapes=[[None, 2, 2]], n32=12 * 2),
    "determinant": Case(lambda tf, x: tf.matrix_determinant(x), [rnd(3, 3)], n32=4 * 3, scale32=_leibniz_terms),
    "determinant_batch": Case(lambda tf, x: tf.matrix_determinant(x), [rnd(2, 4, 4)], n32=4 * 4,
                              scale32=_leibniz_terms),
    "cholesky": Case(lambda tf, x: tf.cholesky(_spd(tf, x)), [rnd(3, 3)], n32=3 + 2 * 3 + ELEMENTWISE_ULPS),
    "cholesky_batch": Case(lambda tf, x: tf.cholesky(_spd(tf, x)), [rnd(2, 3, 3)],
                           n32=3 + 2 * 3 + ELEMENTWISE_ULPS),
    "trace": Case(lambda tf, x: tf.trace(x), [rnd(3, 3)], n32=3, scale32=SUM_OF_TERMS),
    "trace_batch_rect": Case(lambda tf, x: tf.trace(x), [rnd(2, 3, 4)], n32=3, scale32=SUM_OF_TERMS),
    "trace_unknown": Case(lambda tf, x: tf.trace(x), [rnd(2, 3, 3)], shapes=[[None, 3, None]], n32=3,
                          scale32=SUM_OF_TERMS),
    # ---- tensordot
    "tensordot_1": Case(lambda tf, a, b: tf.tensordot(a, b, 1), [rnd(2, 3), rnd(3, 4)], n32=3, scale32=SUM_OF_TERMS),
    "tensordot_pairs": Case(lambda tf, a, b: tf.tensordot(a, b, [[0], [1]]), [rnd(2, 3), rnd(4, 2)],
                            n32=2, scale32=SUM_OF_TERMS),
    "tensordot_2": Case(lambda tf, a, b: tf.tensordot(a, b, 2), [rnd(2, 3, 4), rnd(3, 4, 5)],
                        n32=3 * 4, scale32=SUM_OF_TERMS),
    "tensordot_outer": Case(lambda tf, a, b: tf.tensordot(a, b, 0), [rnd(2, 3), rnd(4)], n32=0),
    "tensordot_negative_axes": Case(lambda tf, a, b: tf.tensordot(a, b, [[-1, 0], [0, 2]]),
                                    [rnd(2, 3, 4), rnd(4, 5, 2)], n32=4 * 2, scale32=SUM_OF_TERMS),
    "tensordot_batch_unknown": Case(lambda tf, a, b: tf.tensordot(a, b, 1), [rnd(2, 5, 3), rnd(3, 4)],
                                    shapes=[[None, 5, 3], [3, 4]], n32=3, scale32=SUM_OF_TERMS),
    "tensordot_both_unknown": Case(lambda tf, a, b: tf.tensordot(a, b, [[1], [0]]), [rnd(2, 3), rnd(3, 4, 2)],
                                   shapes=[[None, 3], [3, None, 2]], n32=3, scale32=SUM_OF_TERMS),
    # ---- einsum
    "einsum_matmul": Case(lambda tf, a, b: tf.einsum("ij,jk->ik", a, b), [rnd(2, 3), rnd(3, 4)],
                          n32=3, scale32=SUM_OF_TERMS),
    "einsum_implicit": Case(lambda tf, a, b: tf.einsum("ij,jk", a, b), [rnd(2, 3), rnd(3, 4)],
                            n32=3, scale32=SUM_OF_TERMS),
    "einsum_transpose": Case(lambda tf, a: tf.einsum("ij->ji", a), [rnd(2, 3)], n32=0),
    "einsum_sum_all": Case(lambda tf, a: tf.einsum("ij ->", a), [rnd(2, 3)], n32=2 * 3, scale32=SUM_OF_TERMS),
    "einsum_reduce_axis": Case(lambda tf, a: tf.einsum("ijk->k", a), [rnd(2, 3, 4)], n32=2 * 3, scale32=SUM_OF_TERMS),
    "einsum_outer": Case(lambda tf, a, b: tf.einsum("i,j->ij", a, b), [rnd(3), rnd(4)], n32=0),
    "einsum_dot": Case(lambda tf, a, b: tf.einsum("i,i->", a, b), [rnd(5), rnd(5)], n32=5, scale32=SUM_OF_TERMS),
    "einsum_batch": Case(lambda tf, a, b: tf.einsum("bij,bjk->bik", a, b), [rnd(2, 3, 4), rnd(2, 4, 5)],
                         n32=4, scale32=SUM_OF_TERMS),
    "einsum_ellipsis_broadcast": Case(lambda tf, a, b: tf.einsum("...ij,...jk->...ik", a, b),
                                      [rnd(5, 2, 3), rnd(3, 4)], n32=3, scale32=SUM_OF_TERMS),
    "einsum_diagonal": Case(lambda tf, a: tf.einsum("ii->i", a), [rnd(3, 3)], n32=0),
    "einsum_trace": Case(lambda tf, a: tf.einsum("ii", a), [rnd(4, 4)], n32=4, scale32=SUM_OF_TERMS),
    "einsum_repeated_with_other": Case(lambda tf, a, b: tf.einsum("iij,jk->ik", a, b), [rnd(2, 2, 3), rnd(3, 4)],
                                       n32=3, scale32=SUM_OF_TERMS),
    "einsum_summed_only_label": Case(lambda tf, a, b: tf.einsum("ij,jk->i", a, b), [rnd(2, 3), rnd(3, 4)],
                                     n32=3 * 4, scale32=SUM_OF_TERMS),
    "einsum_unknown_dim": Case(lambda tf, a, b: tf.einsum("ij,jk->ik", a, b), [rnd(2, 3), rnd(3, 4)],
                               shapes=[[None, 3], [3, None]], n32=3, scale32=SUM_OF_TERMS),
    # TF decomposes a 3-operand einsum into two 2-operand Einsum ops (opt_einsum); core writes one Einsum of N=3
    "einsum_three": Case(lambda tf, a, b, c: tf.einsum("ij,jk,kl->il", a, b, c), [rnd(2, 3), rnd(3, 4), rnd(4, 2)],
                         skip_attrs=("equation", "N"), n32=3 + 4, scale32=SUM_OF_TERMS),
    # ---- norm
    "norm_default": Case(lambda tf, x: tf.norm(x), [rnd(2, 3)], n32=2 * 3 + 2),
    "norm_axis": Case(lambda tf, x: tf.norm(x, axis=1), [rnd(2, 3)], n32=3 + 2),
    "norm_negative_axis_keep": Case(lambda tf, x: tf.norm(x, axis=-1, keepdims=True), [rnd(2, 3, 4)], n32=4 + 2),
    "norm_ord1": Case(lambda tf, x: tf.norm(x, ord=1, axis=0), [away_from_zero(3, 2)], n32=3),
    "norm_ord2_vector": Case(lambda tf, x: tf.norm(x, ord=2, axis=-1), [rnd(3, 2)], n32=2 + 2),
    "norm_inf": Case(lambda tf, x: tf.norm(x, ord=np.inf), [away_from_zero(3, 2)], n32=0),
    "norm_p3": Case(lambda tf, x: tf.norm(x, ord=3, axis=-1), [away_from_zero(3, 4)], n32=4 + 2 * ELEMENTWISE_ULPS),
    "norm_fro_keep_dims": Case(lambda tf, x: tf.norm(x, ord="fro", axis=[0, 1], keep_dims=True), [rnd(2, 3)],
                               n32=2 * 3 + 2),
    "norm_matrix_1": Case(lambda tf, x: tf.norm(x, ord=1, axis=[0, 1]), [away_from_zero(3, 4)], n32=3),
    "norm_matrix_inf_batch": Case(lambda tf, x: tf.norm(x, ord=np.inf, axis=(-2, -1)), [away_from_zero(2, 3, 4)],
                                  n32=4),
    "norm_matrix_euclidean": Case(lambda tf, x: tf.norm(x, axis=(1, 2)), [rnd(2, 3, 4)], n32=3 * 4 + 2),
    # TF builds ord=2's permutations with map_fn (while loops, TensorList ops); core's are static: same Svd
    "norm_matrix_2": Case(lambda tf, x: tf.norm(x, ord=2, axis=[1, 0]), [rnd(3, 4)], same_ops=False,
                          n32=SVD_N32),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg_op(tf1, name):
    check_case(tf1, CASES[name])


# ---- focused tests: errors, names, second derivatives


def _run(build):
    with core.Graph().as_default():
        out = build(core)
        return core.Session().run(out)


def test_singular_and_non_pd_inputs_are_invalid_argument():
    with pytest.raises(core.errors.InvalidArgumentError):
        _run(lambda tf: tf.matrix_inverse(tf.constant([[1.0, 2.0], [2.0, 4.0]])))
    with pytest.raises(core.errors.InvalidArgumentError):
        _run(lambda tf: tf.cholesky(tf.constant([[1.0, 2.0], [2.0, 1.0]])))


@pytest.mark.parametrize("build", [
    lambda tf: tf.matrix_inverse(tf.zeros([2, 3])),
    lambda tf: tf.matrix_determinant(tf.zeros([3])),
    lambda tf: tf.cholesky(tf.zeros([3, 2])),
    lambda tf: tf.diag_part(tf.zeros([2, 3])),
    lambda tf: tf.diag_part(tf.zeros([2, 2, 2])),
    lambda tf: tf.matrix_transpose(tf.zeros([3])),
    lambda tf: tf.tensordot(tf.zeros([2, 3]), tf.zeros([3, 4]), [[0, 1], [0]]),
    lambda tf: tf.tensordot(tf.zeros([2, 3]), tf.zeros([3, 4]), 3),
    lambda tf: tf.norm(tf.zeros([2, 3]), ord="fro"),
    lambda tf: tf.norm(tf.zeros([2, 3]), ord=-1),
    lambda tf: tf.norm(tf.zeros([2, 3]), ord=3, axis=[0, 1]),
    lambda tf: tf.norm(tf.zeros([2, 3]), axis=[0, 0]),
    lambda tf: tf.norm(tf.zeros([2, 3]), axis=[0, 1, 2]),
], ids=["inverse_rect", "det_rank1", "cholesky_rect", "diag_part_mismatch", "diag_part_odd_rank",
        "matrix_transpose_rank1", "tensordot_axes_count", "tensordot_too_many", "norm_fro_vector",
        "norm_negative_ord", "norm_matrix_p3", "norm_same_axes", "norm_three_axes"])
def test_bad_static_input_is_value_error_like_tf(tf1, build):
    with pytest.raises(ValueError):
        with tf1.Graph().as_default():
            build(tf1)
    with pytest.raises(ValueError):
        with core.Graph().as_default():
            build(core)


def test_eye_rejects_non_integer_sizes(tf1):
    for lib in (tf1, core):
        with pytest.raises(TypeError):
            with lib.Graph().as_default():
                lib.eye(2.5)


def test_name_scopes_follow_tf(tf1):
    def names(lib):
        with lib.Graph().as_default():
            x = lib.placeholder(lib.float32, [2, 3, 3])
            return [lib.norm(x, name="n").name, lib.einsum("bij->bji", x, name="e").name,
                    lib.trace(x, name="t").name, lib.eye(2, name="i").name, lib.tensordot(x, x, [[2], [1]]).name,
                    lib.matrix_band_part(x, 0, 1, name="b").name, lib.matrix_transpose(x).name]
    assert names(core) == names(tf1)


@pytest.mark.parametrize("build, x", [
    (lambda tf, x: tf.matrix_determinant(x), well_conditioned(3, 3)),
    (lambda tf, x: tf.reduce_sum(tf.matrix_inverse(x) * tf.constant(np.arange(9.0).reshape(3, 3))),
     well_conditioned(3, 3)),
    (lambda tf, x: tf.norm(x), rnd(2, 3)),
    (lambda tf, x: tf.reduce_sum(tf.einsum("ij,jk->ik", x, x) ** 2), rnd(3, 3)),
], ids=["det", "inverse", "norm", "einsum"])
def test_second_derivatives_match_tf(tf1, build, x):
    def hessian_vector(lib):
        with lib.Graph().as_default():
            p = lib.placeholder(lib.float64, x.shape)
            g = lib.gradients(build(lib, p), p)[0]
            hv = lib.gradients(lib.reduce_sum(g * lib.constant(np.ones(x.shape))), p)[0]
            return lib.Session().run(hv, {p: x})
    np.testing.assert_allclose(hessian_vector(core), hessian_vector(tf1), rtol=1e-8, atol=1e-10)


def test_float32_stays_float32():
    with core.Graph().as_default():
        x = core.constant(well_conditioned(3, 3).astype(np.float32))
        outs = [core.matrix_inverse(x), core.matrix_determinant(x), core.norm(x, ord=2, axis=[0, 1]),
                core.einsum("ij,jk->ik", x, x), core.trace(x), core.tensordot(x, x, 1)]
        values = core.Session().run(outs + core.gradients(core.add_n([core.reduce_sum(o) for o in outs]), x))
    assert all(np.asarray(v).dtype == np.float32 for v in values)


def test_batched_spectral_norm_values_and_gradients_match_tf(tf1):
    """ord=2 over a batch of matrices: TF's result has unknown static dims (its permutations are map_fn results,
    so check_case's static-shape check does not apply); values and gradients must match."""
    x = rnd(2, 3, 2)

    def run(lib):
        with lib.Graph().as_default():
            p = lib.placeholder(lib.float64, x.shape)
            out = lib.norm(p, ord=2, axis=[-2, -1], keepdims=True)
            grad = lib.gradients(lib.reduce_sum(out * lib.constant([[[1.0]], [[2.0]]], lib.float64)), p)[0]
            return lib.Session().run([out, grad], {p: x}), out.shape.ndims
    (value, grad), rank = run(core)
    (want, want_grad), want_rank = run(tf1)
    assert rank == want_rank == 3
    np.testing.assert_allclose(value, want, rtol=1e-10)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-8, atol=1e-12)
