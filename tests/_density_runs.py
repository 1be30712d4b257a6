"""Random runs for the density tests (tests/viewer/test_dashboard_density*.py)."""
from typing import List, Tuple

import numpy as np


def random_runs(rng, runs: int, points: int, nan: bool = True) -> List[Tuple[np.ndarray, np.ndarray]]:
    """Random walks over steps -5..59, some NaN (with ``nan``: most runs then have a break), ±inf."""
    out = []
    for _ in range(runs):
        step = np.sort(rng.choice(np.arange(-5, 60), size=points, replace=False)).astype(np.int64)
        value = np.cumsum(rng.normal(0, 0.4, points))
        if nan:
            value[rng.random(points) < 0.1] = np.nan
        value[rng.random(points) < 0.04] = np.inf
        value[rng.random(points) < 0.04] = -np.inf
        out.append((step, value.astype(np.float32)))
    return out
