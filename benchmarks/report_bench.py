"""The interactive HTML report on a big logdir: 8 runs x 40 tags x 2,000 steps (640,000 scalars).

Writes the logdir with tfevents' SummaryWriter, renders ``tfevents report`` (interactive) and times it
(load + data prep + write), then opens the file in headless Chromium (selenium, tests/_browser.py)
``--loads`` times and reads what the page measured itself: ``window.__reportReady`` (performance.now()
when every chart is drawn and painted, i.e. ms since navigation start), the page's build time and the
renderer main thread's CPU time (DevTools Performance.getMetrics TaskDuration, steadier than wall time on a
shared machine); prints the file size. ``--static`` also renders today's PNG report of the same logdir for comparison.

    python benchmarks/report_bench.py [--runs 8] [--tags 40] [--steps 2000] [--loads 5] [--static]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))


def write_logdir(root, runs, tags, steps):
    from tfevents.summaries import SummaryWriter
    rng = np.random.default_rng(0)
    s = np.arange(steps)
    for r in range(runs):
        with SummaryWriter(os.path.join(root, "run_%02d" % r)) as w:
            curves = [(1 + r * 0.1) * np.exp(-s / (300 + 17 * t)) + rng.normal(0, 0.05, steps) for t in range(tags)]
            names = ["%s/metric_%02d" % (("train", "eval", "system", "grad")[t % 4], t) for t in range(tags)]
            for i in range(steps):
                for name, c in zip(names, curves):
                    w.add_scalar(name, float(c[i]), int(s[i]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--tags", type=int, default=40)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--loads", type=int, default=5, help="page loads to time (median reported)")
    parser.add_argument("--static", action="store_true", help="also time the static (PNG) report")
    args = parser.parse_args()
    print("load average: %s" % " ".join("%.2f" % v for v in os.getloadavg()))
    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        logdir = os.path.join(tmp, "logs")
        t = time.perf_counter()
        write_logdir(logdir, args.runs, args.tags, args.steps)
        print("logdir: %d runs x %d tags x %d steps = %d scalars, written in %.1f s"
              % (args.runs, args.tags, args.steps, args.runs * args.tags * args.steps, time.perf_counter() - t))
        from tfevents.viewer.reports.interactive import write_interactive_report
        out = os.path.join(tmp, "report.html")
        renders = []
        for _ in range(3):
            t = time.perf_counter()
            write_interactive_report(logdir, out)
            renders.append(time.perf_counter() - t)
        size = os.path.getsize(out)
        print("interactive report: %.2f MB, written in %.2f s (median of 3: read logdir, prepare, encode, write)"
              % (size / 1e6, statistics.median(renders)))
        ready, build, busy, charts = page_timings(out, args.loads)
        print("in headless Chromium (%d loads): every chart drawn %.0f ms after navigation start "
              "(median; min %.0f, max %.0f); the page's own build %.0f ms; main-thread CPU %.0f ms; %d charts"
              % (len(ready), statistics.median(ready), min(ready), max(ready), statistics.median(build),
                 statistics.median(busy), charts))
        if args.static:
            import matplotlib
            matplotlib.use("Agg")
            from tfevents.viewer.reports.static import write_report
            static = os.path.join(tmp, "static.html")
            t = time.perf_counter()
            write_report(logdir, static)
            print("static (PNG) report: %.2f MB, written in %.1f s"
                  % (os.path.getsize(static) / 1e6, time.perf_counter() - t))


def page_timings(path, loads):
    from _browser import open_file, start_browser, stop_browser
    driver = start_browser(1400, 1000)
    driver.execute_cdp_cmd("Performance.enable", {"timeDomain": "threadTicks"})
    ready, build, busy, charts = [], [], [], 0
    try:
        for _ in range(loads + 1):               # the first load warms the browser's caches: not counted
            driver.get("about:blank")
            open_file(driver, path, ready_timeout=120)
            state = driver.execute_script("""
                const t = window.__tfe;
                return [window.__reportReady, t.buildMs, t.charts.length, t.charts.filter(c => c.draws > 0).length];""")
            if state[2] != state[3]:
                raise RuntimeError("only %d of %d charts were drawn" % (state[3], state[2]))
            ready.append(state[0])
            build.append(state[1])
            metrics = driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]
            busy.append(1000 * next(m["value"] for m in metrics if m["name"] == "TaskDuration"))
            charts = state[2]
        errors = driver.get_log("browser")
        if errors:
            raise RuntimeError("console messages: %s" % errors[:3])
    finally:
        stop_browser(driver)
    return ready[1:], build[1:], busy[1:], charts


if __name__ == "__main__":
    main()
