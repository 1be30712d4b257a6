"""Viewer speed, side by side with the obvious alternatives (run: python benchmarks/viewer_bench.py).

- smoothing 1M points: tfevents.viewer.smooth vs TensorBoard's loop transliterated to Python vs pandas ewm
- plotting 1M points to PNG: plot_scalars (min/max per pixel bucket) vs matplotlib drawing every point
"""
import io
import statistics
import time

import numpy as np


def bench(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def tensorboard_loop(y, w):
    last, n, out = 0.0, 0, []
    for v in y:
        if v != v or v in (float("inf"), float("-inf")):
            out.append(v)
            continue
        last = last * w + (1 - w) * v
        n += 1
        out.append(last / (1 - w ** n))
    return out


def main():
    import matplotlib
    matplotlib.use("Agg")
    import pandas as pd
    from matplotlib.figure import Figure
    from types import SimpleNamespace
    from tfevents.viewer import ema, plot_scalars

    n = 1_000_000
    rng = np.random.default_rng(0)
    y = rng.normal(size=n).cumsum()
    y[rng.integers(0, n, 1000)] = np.nan
    ours = bench(lambda: ema(y, 0.6))
    loop = bench(lambda: tensorboard_loop(y.tolist(), 0.6), repeat=1)
    f = np.isfinite(y)
    pdt = bench(lambda: pd.Series(y[f]).ewm(alpha=0.4, adjust=True).mean())
    print("smooth 1M points: tfevents %.3f s | python loop %.3f s (x%.1f) | pandas ewm %.3f s (x%.2f)"
          % (ours, loop, loop / ours, pdt, pdt / ours))

    s = SimpleNamespace(step=np.arange(n), wall_time=np.arange(n) * 0.01, value=y)

    def ours_plot():
        fig = plot_scalars({("run", "loss"): s}, smoothing=0.6)
        fig.savefig(io.BytesIO(), format="png")

    def naive_plot():
        fig = Figure(figsize=(6, 3.8), layout="constrained")
        ax = fig.add_subplot()
        ax.plot(s.step, s.value, alpha=0.25)
        ax.plot(s.step, ema(s.value, 0.6))
        fig.savefig(io.BytesIO(), format="png")

    a, b = bench(ours_plot), bench(naive_plot)
    print("plot 1M points to PNG: plot_scalars %.3f s | matplotlib, every point %.3f s (x%.1f)" % (a, b, b / a))


if __name__ == "__main__":
    main()
