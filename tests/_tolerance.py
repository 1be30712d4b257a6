"""float32 tolerances that follow from rounding, so a comparison holds on every x86-64 CPU and BLAS kernel.

The model (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §2.2 and §3.1):

- ``U32 = 2**-24`` is float32's unit roundoff: one correctly rounded operation is off by at most ``u·|result|``.
- A sum of ``n`` terms computed in *any* order (sequential, pairwise, blocked and vectorised as a BLAS kernel or
  Eigen does it, with or without fused multiply-adds) is within ``γ(n)·Σ|terms|`` of the exact sum, where
  ``γ(n) = n·u / (1 − n·u)``. A dot product of length ``k`` is such a sum (``n = k``: a rounding per product and
  per addition, an FMA merging the two). Note the scale: ``Σ|terms|``, not ``|sum|``: where terms cancel, the
  *relative* error of the result is unbounded, so the bound is absolute, in units of the terms' magnitude.
- An elementwise function (``exp``, ``tanh``, ``sqrt``, ``rsqrt``...) computed by a different library (glibc or
  numpy's SIMD loops here, Eigen's polynomial approximations in TensorFlow) is within a few ulps of the exact value:
  ``ELEMENTWISE_ULPS`` of them, counted as that many roundings.
- A chain of operations adds up its bounds: ``n`` counts every rounding along the longest dependency path, and
  a sum's bound counts its length. Two implementations that each meet a bound ``b`` of the exact result differ by
  at most ``2·b``.

So a float32 result compared with TensorFlow's is checked *normwise*: ``max|got − want| ≤ 2·γ(n)·scale`` with
``scale`` the magnitude of the summed terms (by default ``max|want|``, enough where no sum cancels), and ``n`` the
rounding count stated at the call site. Where the computation is a training loop, rounding differences of one
step are carried by the next (the update is a function of the weights): a call site that compares after ``steps``
steps passes ``amplification``, the factor a step can grow an error by, measured in float64 where the test says so
(Adam's normalized step, for one, can turn a gradient's difference δ into ``lr·δ/√v̂``); where a step does not
grow what it is handed (small gradient steps, moving averages), ``n`` counts ``steps`` times a step's roundings.

Where a result involves no sum (products, quotients and elementwise functions only), its rounding errors are
relative to each element: such a comparison may hold every element to ``2·γ(n)·|want|`` (``float32_rtol(n)``),
which also sees the small elements a normwise bound lets through.

A comparison is exact (``assert_array_equal``) only where the computation does not depend on summation order or
on a library's elementwise approximations: copies, gathers, integer arithmetic, single correctly rounded IEEE
operations (``+``, ``*``, ``/``, ``sqrt``) done in the same order by both sides.
"""
from __future__ import annotations

import numpy as np

U32 = 2.0 ** -24
ELEMENTWISE_ULPS = 4


def gamma(n: float, u: float = U32) -> float:
    """Higham's γ(n) = n·u / (1 − n·u): the relative bound of n roundings in a row."""
    if n * u >= 1:
        raise ValueError("γ(%g) is not defined for float32: n·u ≥ 1" % n)
    return n * u / (1 - n * u)


def float32_tolerance(n: float, scale: float, amplification: float = 1.0) -> float:
    """The absolute tolerance between two float32 implementations of one computation: ``2·γ(n)·scale``, times
    ``amplification`` (how much later steps can grow an early rounding difference; 1 for a single pass)."""
    return 2.0 * gamma(n) * float(scale) * amplification


def float32_rtol(n: float) -> float:
    """The elementwise relative tolerance ``2·γ(n)`` between two float32 implementations of a computation with no
    sum in it (products, quotients, elementwise functions): for ``rtol`` of ``np.allclose`` and friends."""
    return 2.0 * gamma(n)


def assert_float32_close(got, want, *, n: float, scale: float | None = None, amplification: float = 1.0,
                         err_msg: str = "") -> None:
    """``max|got − want| ≤ float32_tolerance(n, scale, amplification)``, normwise over the array; ``scale``
    defaults to ``max|want|`` (the magnitude of the result; pass ``Σ|terms|`` where a sum cancels). Shapes must
    match and non-finite values must be where ``want`` has them. A ``want`` of integers or booleans (a fetch
    list's argmax, counts, shapes) is compared exactly, dtype included."""
    if np.asarray(want).dtype.kind in "biu":
        assert np.asarray(got).dtype == np.asarray(want).dtype, "%s: dtype %s, want %s" % (
            err_msg, np.asarray(got).dtype, np.asarray(want).dtype)
        np.testing.assert_array_equal(got, want, err_msg=err_msg)
        return
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, "%s: shape %s, want %s" % (err_msg, got.shape, want.shape)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite], err_msg=err_msg)
    if not finite.any():
        return
    if scale is None:
        scale = np.abs(want[finite]).max()
    tol = float32_tolerance(n, scale, amplification)
    worst = np.abs(got[finite] - want[finite]).max()
    assert worst <= tol, ("%s: max |got - want| = %.3g exceeds the float32 bound 2·γ(%g)·%.3g·%g = %.3g"
                          % (err_msg, worst, n, scale, amplification, tol))
