"""The density's C extension (viewer/dashboard/_density.c) against the numpy code it replaces (density.py), which
test_dashboard_density.py holds to a direct reference."""
from __future__ import annotations

import numpy as np
import pytest

from _density_runs import random_runs
from tfevents.viewer.dashboard.density import data_range, density, load_kernel


@pytest.mark.parametrize("logy", [False, True])
def test_the_extension_and_the_numpy_code_draw_the_same(monkeypatch, logy):
    """Many runs, with and without breaks, some not by step, float64 values and float steps among them: the same
    owners, and the same density but for the order of the float64 sums (float32 out: within an ulp or two)."""
    if load_kernel() is None:
        pytest.skip("the _density extension is not built (no C compiler at install): the numpy code draws alone")
    rng = np.random.default_rng(11)
    series = random_runs(rng, 300, 40) + random_runs(rng, 300, 50, nan=False)
    series += [(s.astype(np.float64) / 2, v.astype(np.float64)) for s, v in random_runs(rng, 20, 30)]
    series += [(s[::-1].copy(), v[::-1].copy()) for s, v in random_runs(rng, 10, 20)]
    if logy:
        series = [(s, np.abs(v) * 10) for s, v in series]
    x_range, y_range = data_range(series, logy)
    extension = density(series, x_range, y_range, 97, 61, logy)
    monkeypatch.setenv("TFEVENTS_DENSITY_KERNEL", "0")
    assert data_range(series, logy) == (x_range, y_range)
    numpy_code = density(series, x_range, y_range, 97, 61, logy)
    np.testing.assert_array_equal(extension.owner, numpy_code.owner)
    np.testing.assert_allclose(extension.density, numpy_code.density, rtol=3e-7, atol=0)
