"""Issue 34's benchmark: tfevents' dashboard against TensorBoard on its Rust data server and our report file, on a
sweep's logdirs, side by side in one run.

The logdirs (benchmarks/_serve_logdir.py, the ``scalars`` shape, cached under ``--cache``): A, 10,000 runs x 5 tags
x 1,000 steps, and B, 1,000 runs x 50 tags x 1,000 steps (``--sizes small``: 400 x 5 x 100 and 100 x 20 x 100, a
quick check: A still drawn as a density). For each, in headless Chromium (tests/_browser.py, a fresh browser per measurement, its start-up not
counted), a 1400 x 1000 window:

- **first screen**, seconds from starting the command to the first screen drawn:
  - ours (``ours_command``: ``tfevents api LOGDIR`` today, ``--ours-command serve`` for ``tfevents serve``): the
    page at the server's root; the page sets ``window.__tfe.firstScreenAt`` (served.js) once every chart in the
    viewport at load has drawn its first data, as lines or (above 300 runs) as the runs' density, with the run
    list built before; converted to wall time through ``performance.timeOrigin``. Every such chart is checked to
    draw every run (lines: a uPlot series per run; density: the server's answer names every run);
  - TensorBoard (``tensorboard --logdir L --load_fast=true``: its Rust data server): its Scalars dashboard
    (``/#scalars``); beyond 40 runs TensorBoard selects none, so once its run selector lists every run the
    benchmark toggles them all on (as a user would), then waits until the first chart of the first tag group
    has drawn a line of every run (SVG line paths, looked for through shadow roots, polled every ``TB_POLL`` s),
    capped at ``--cap`` seconds (10 minutes): "never within the cap" when it does not;
  - our report file (``tfevents report L -o F``): the seconds to write it, plus Chromium's from navigation to
    ``window.__reportReady`` (every chart drawn and painted); skipped with the reason when writing fails or takes
    longer than the cap;
- **filter redraw** (ours): the regex ``FILTER`` (runs run000 to run099: 100 runs) set into ``#run-filter`` with
  one input event (a paste); milliseconds, measured in the page, until every chart that was in view is drawn
  again as lines (100 runs, below the density threshold) of exactly those runs, their series loaded;
- **peak RSS** of each server's whole process tree (ours: the command and any child; TensorBoard: its Python web
  server and its ``rustboard`` child), psutil sampled every ``RSS_EVERY`` s from start until the measurement is
  over and the RSS has not grown for ``SETTLE`` s (so a server still loading in the background is counted).

Then the table and the ratios against issue 34's targets: our first screen at least 10x sooner than TensorBoard's
(or TensorBoard never within the cap) and within 10 s; the filter's redraw under 0.5 s; our peak RSS at most 1/4
of TensorBoard's with its Rust server.

    .venv/bin/python benchmarks/dashboard.py [--sizes full|small] [--cache DIR] [--ours-command api|serve]
        [--skip tensorboard,report] [--cap 600]
"""
from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

import psutil

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
from _browser import start_browser, stop_browser  # noqa: E402
from _serve_logdir import make_logdir  # noqa: E402
from serve import free_port, script  # noqa: E402

SIZES = {"full": [("A", 10000, 5, 1000), ("B", 1000, 50, 1000)],
         "small": [("A", 400, 5, 100), ("B", 100, 20, 100)]}
FILTER = r"^run0\d\d$"        # run000 ... run099 (make_logdir names runs run%03d): 100 runs
WINDOW = (1400, 1000)
TB_POLL = 0.5                 # seconds between looks at TensorBoard's page
RSS_EVERY = 0.1               # seconds between RSS samples
SETTLE = 5.0                  # seconds without RSS growth after a measurement before the sampling stops
TARGETS = {"speedup": 10.0, "first_s": 10.0, "filter_s": 0.5, "rss": 0.25}


def ours_command(kind: str, logdir: str, port: int) -> list:
    """The command serving tfevents' dashboard of ``logdir`` at ``http://127.0.0.1:port/`` (the one place to switch
    when ``tfevents serve`` serves it)."""
    tfevents = script("tfevents", "tfevents.viewer.cli")
    if kind == "api":
        return tfevents + ["api", logdir, "--port", str(port)]
    if kind == "serve":
        return tfevents + ["serve", logdir, "--dashboard-port", str(port), "--port", str(free_port()),
                           "-v"]   # (-v: each reload pass's time, in the log under --cache)
    raise ValueError("--ours-command is api or serve, got %r" % kind)


def tensorboard_command(logdir: str, port: int) -> list:
    return script("tensorboard", "tensorboard.main") + ["--logdir", logdir, "--load_fast=true", "--port", str(port),
                                                        "--host", "127.0.0.1"]


class TreeRSS(threading.Thread):
    """Samples the summed RSS of a process and its descendants (psutil) every ``RSS_EVERY`` s; ``peak`` (bytes) and
    ``parts`` ({process name: RSS} at the peak)."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.parts, self.grew_at = pid, 0, {}, time.monotonic()
        self._done = threading.Event()
        self.start()

    def sample(self) -> None:
        try:
            root = psutil.Process(self.pid)
            procs = [root] + root.children(recursive=True)
        except psutil.Error:
            return
        parts = {}
        for p in procs:
            try:
                name, cmd = p.name(), " ".join(p.cmdline())
                if "tensorboard_data_server" in cmd or "rustboard" in name:
                    name = "rustboard"     # TensorBoard's Rust data server (its binary is named ``server``)
                elif "tensorboard" in cmd:
                    name = "tensorboard"   # TensorBoard's web server (TensorBoard's, or the one tfevents serve starts)
                parts[name] = parts.get(name, 0) + p.memory_info().rss
            except psutil.Error:
                pass
        total = sum(parts.values())
        if total > self.peak * 1.01:
            self.grew_at = time.monotonic()
        if total > self.peak:
            self.peak, self.parts = total, parts

    def run(self) -> None:
        while not self._done.is_set():
            self.sample()
            self._done.wait(RSS_EVERY)

    def settle(self, deadline: float) -> None:
        """Return once the RSS has not grown by 1% for ``SETTLE`` s, or at ``deadline`` (time.monotonic)."""
        while time.monotonic() < deadline and time.monotonic() - self.grew_at < SETTLE:
            time.sleep(0.2)

    def stop(self) -> None:
        self._done.set()
        self.join()


class Server:
    """A server command in its own process group, its output in ``log``, its RSS sampled."""

    def __init__(self, cmd: list, port: int, log):
        self.port = port
        self.t0 = time.time()
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
        self.rss = TreeRSS(self.proc.pid)

    def wait_port(self, deadline: float) -> float:
        """Seconds from the start until the port accepts a connection."""
        while True:
            with socket.socket() as s:
                s.settimeout(1)
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return time.time() - self.t0
            if self.proc.poll() is not None:
                raise RuntimeError("the server exited with %s" % self.proc.returncode)
            if time.monotonic() > deadline:
                raise TimeoutError("the server did not listen within the cap")
            time.sleep(0.02)

    def stop(self) -> None:
        self.rss.stop()
        try:
            os.killpg(self.proc.pid, 15)
            self.proc.wait(timeout=30)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()


def with_peak_rss(result: dict, server, settle_s: float) -> dict:
    """``result`` with the server's peak RSS (and its parts), once its RSS has stopped growing (``settle_s`` at
    most)."""
    server.rss.settle(time.monotonic() + settle_s)
    server.rss.sample()
    result["rss"], result["rss_parts"] = server.rss.peak, server.rss.parts
    return result


def stop_all(server, driver) -> None:
    if server:
        server.stop()
    stop_browser(driver)


def browser(cap: float):
    driver = start_browser(*WINDOW)
    driver.set_page_load_timeout(cap)
    driver.set_script_timeout(cap)
    return driver


def wait_for(driver, js: str, deadline: float, every: float = 0.05):
    """The first truthy value of ``js`` (a function body), or None at ``deadline`` (time.monotonic)."""
    while time.monotonic() < deadline:
        value = driver.execute_script(js)
        if value:
            return value
        time.sleep(every)
    return None


# --- ours ---------------------------------------------------------------------------------------------------

IN_VIEW = """const inView = c => { const b = c.card ? c.card.getBoundingClientRect() : null;
                                    return b && b.width > 0 && b.bottom > 0 && b.top < window.innerHeight; };"""

FIRST_SCREEN = """
const t = window.__tfe;
if (!t || t.firstScreenAt === undefined) return null;
""" + IN_VIEW + """
const charts = t.charts.filter(inView).map(c => ({title: c.title, runs: c.shown.length,
    drawn: c.u ? "lines" : c.density ? "density" : "nothing",
    drawnRuns: c.u ? (c.u.series.length - 1) / 2 : c.densityData ? c.densityData.runs.length : 0}));
const api = performance.getEntriesByType("resource").filter(e => e.name.includes("/api/v1/"))
    .map(e => ({url: decodeURIComponent(e.name.split("/api/v1/")[1]).slice(0, 60), start: e.startTime,
                ms: e.duration, wait: e.responseStart - e.requestStart, bytes: e.encodedBodySize}));
const nav = performance.getEntriesByType("navigation")[0];
return {epochMs: performance.timeOrigin + t.firstScreenAt, atMs: t.firstScreenAt, charts, api,
        listed: (document.getElementById("run-count") || {}).textContent || "",
        rows: document.querySelectorAll(".run-list .run").length, buildMs: t.buildMs,
        htmlMs: nav.responseEnd, htmlBytes: nav.encodedBodySize, readyMs: window.__reportReady};"""

FILTER_REDRAW = """
const [regex, want, capMs, done] = arguments, t = window.__tfe;
""" + IN_VIEW + """
const charts = t.charts.filter(inView), before = new Map(charts.map(c => [c, [c.u, c.draws]]));
const input = document.getElementById("run-filter");
const t0 = performance.now();
input.value = regex;
input.dispatchEvent(new Event("input", {bubbles: true}));
const syncMs = performance.now() - t0;
const redrawn = c => c.card.classList.contains("hidden") || (c.u && c.u !== before.get(c)[0] &&
    c.draws > before.get(c)[1] && c.shown.length === want && !c.shown.some(s => s.pending) &&
    (c.u.series.length - 1) / 2 === want);
const check = () => {
  const ms = performance.now() - t0;
  const api = () => performance.getEntriesByType("resource").filter(e => e.name.includes("/api/v1/") && e.startTime >= t0)
    .map(e => ({url: decodeURIComponent(e.name.split("/api/v1/")[1]).slice(0, 60), start: e.startTime - t0,
                ms: e.duration, wait: e.responseStart - e.requestStart, bytes: e.encodedBodySize}));
  if (charts.every(redrawn)) done({ms, syncMs, charts: charts.length, api: api()});
  else if (ms > capMs) done({timeout: true, ms, syncMs, charts: charts.length,
                             api: api(), state: charts.map(c => [c.title, !!c.u, c.shown.length, c.note.textContent])});
  else requestAnimationFrame(check);
};
requestAnimationFrame(check);"""


def measure_ours(kind: str, logdir: str, runs: int, cap: float, log) -> dict:
    driver = browser(cap)
    port = free_port()
    server = None
    try:
        server = Server(ours_command(kind, logdir, port), port, log)
        deadline = time.monotonic() + cap
        listening = server.wait_port(deadline)
        driver.get("http://127.0.0.1:%d/" % port)
        state = wait_for(driver, "return window.__tfe && window.__tfe.firstScreenAt !== undefined",
                         deadline)
        if not state:
            raise RuntimeError("no first screen within the cap (%.0f s)" % cap)
        first = driver.execute_script(FIRST_SCREEN)
        result = {"first_s": first["epochMs"] / 1e3 - server.t0, "listening_s": listening, "first": first}
        want = sum(1 for i in range(runs) if re.search(FILTER, "run%03d" % i))
        result["filter_runs"] = want
        result["filter"] = driver.execute_async_script(FILTER_REDRAW, FILTER, want, 1e3 * cap)
        errors = [m for m in driver.get_log("browser") if m["level"] == "SEVERE"]
        result["console_errors"] = errors[:3]
        return with_peak_rss(result, server, cap)
    finally:
        stop_all(server, driver)


# --- TensorBoard --------------------------------------------------------------------------------------------

TB_STATE = """
const runs = arguments[0];
const all = [], walk = root => { for (const el of root.querySelectorAll("*")) { all.push(el);
                                   if (el.shadowRoot) walk(el.shadowRoot); } };
walk(document);
const selector = all.find(el => el.tagName.toLowerCase() === "tf-runs-selector");
const box = selector && selector.$ && selector.$.multiCheckbox;
const listed = box && box.names ? box.names.length : 0, selected = box && box.outSelected ? box.outSelected.length : 0;
let toggled = false;
if (listed >= runs && selected < runs && !window.__benchToggled) { selector._toggleAll(); window.__benchToggled = true;
                                                                  toggled = true; }
const card = all.find(el => el.tagName.toLowerCase() === "tf-scalar-card");
let lines = 0, plots = 0, tag = null;
if (card) {
  tag = card.tag || null;
  const inCard = [], walkCard = root => { for (const el of root.querySelectorAll("*")) { inCard.push(el);
                                            if (el.shadowRoot) walkCard(el.shadowRoot); } };
  walkCard(card.shadowRoot || card);
  // one <path class="line"> per run drawn in each plot's render area (the smoothed lines' and the raw "ghost"
  // lines'): the runs drawn are the fewest of any render area that draws lines
  const paths = inCard.filter(el => el.tagName.toLowerCase() === "path" && /(^| )line( |$)/.test(el.getAttribute("class") || "")
                                     && (el.getAttribute("d") || "").length > 20);
  const areas = new Map();
  for (const p of paths) { const area = (p.parentNode && p.parentNode.parentNode) || p; areas.set(area, (areas.get(area) || 0) + 1); }
  lines = areas.size ? Math.min(...areas.values()) : 0;
  plots = areas.size;
}
return {listed, selected, toggled, tag, lines, plots};"""


def measure_tensorboard(logdir: str, runs: int, cap: float, log) -> dict:
    driver = browser(cap)
    port = free_port()
    server = None
    try:
        server = Server(tensorboard_command(logdir, port), port, log)
        deadline = time.monotonic() + cap
        listening = server.wait_port(deadline)
        driver.get("http://127.0.0.1:%d/#scalars" % port)
        result = {"listening_s": listening, "first_s": None}
        state, toggled = None, None
        while time.monotonic() < deadline:
            try:
                state = driver.execute_script(TB_STATE, runs)
            except Exception as err:   # a page too busy to answer within the script timeout: look again
                state = {"error": str(err).splitlines()[0]}
                time.sleep(TB_POLL)
                continue
            if state.get("toggled"):
                toggled = time.time() - server.t0
            if state.get("lines", 0) >= runs:
                result["first_s"] = time.time() - server.t0
                break
            time.sleep(TB_POLL)
        result.update(state=state, toggled_s=toggled)
        return with_peak_rss(result, server, 60)
    finally:
        stop_all(server, driver)


# --- the report file ----------------------------------------------------------------------------------------

def measure_report(logdir: str, out: str, cap: float, log) -> dict:
    cmd = script("tfevents", "tfevents.viewer.cli") + ["report", logdir, "-o", out]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=cap)
    except subprocess.TimeoutExpired:
        return {"skipped": "writing it took longer than the cap (%.0f s)" % cap}
    write = time.perf_counter() - t0
    log.write(done.stdout)
    if done.returncode != 0:
        tail = done.stdout.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        return {"skipped": "writing it failed (exit %d: %s)" % (done.returncode, tail[0][:200])}
    size = os.path.getsize(out)
    driver = browser(cap)
    try:
        driver.get("file://" + os.path.abspath(out))
        state = wait_for(driver, """return window.__reportError ? {error: window.__reportError}
            : window.__reportReady !== undefined ? {readyMs: window.__reportReady, charts: window.__tfe.charts.length,
              drawn: window.__tfe.charts.filter(c => c.draws > 0).length} : null""",
                         time.monotonic() + max(cap - write, 1), every=0.2)
    except Exception as err:
        state = {"error": str(err).splitlines()[0]}
    finally:
        stop_browser(driver)
    if not state:
        return {"write_s": write, "bytes": size, "skipped": "Chromium did not draw it within the cap"}
    if "error" in state:
        return {"write_s": write, "bytes": size, "skipped": "Chromium could not show it: %s" % state["error"][:200]}
    return {"write_s": write, "open_s": state["readyMs"] / 1e3, "first_s": write + state["readyMs"] / 1e3,
            "bytes": size, "charts": state["charts"], "drawn": state["drawn"]}


# --- the table ----------------------------------------------------------------------------------------------

def mb(n: float) -> str:
    return "%.0f MB" % (n / 2 ** 20)


def parts(p: dict) -> str:
    return " + ".join("%s %s" % (k, mb(v)) for k, v in sorted(p.items(), key=lambda kv: -kv[1]))


def report(label: str, kind: str, cap: float, ours, tb, rep) -> None:
    print("\n  %-28s %-34s %-16s %s" % ("", "first screen", "filter redraw", "peak RSS (process tree)"))
    if isinstance(ours, dict):
        f = ours["filter"]
        redraw = ("%.3f s" % (f["ms"] / 1e3)) + (" (NOT within the cap)" if f.get("timeout") else "")
        print("  %-28s %-34s %-16s %s (%s)" % ("tfevents (%s)" % kind, "%.2f s" % ours["first_s"], redraw,
                                              mb(ours["rss"]), parts(ours["rss_parts"])))
    else:
        print("  %-28s %s" % ("tfevents (%s)" % kind, ours))
    if isinstance(tb, dict):
        first = "%.1f s" % tb["first_s"] if tb["first_s"] is not None else "never within the cap (%.0f s)" % cap
        print("  %-28s %-34s %-16s %s (%s)" % ("TensorBoard (Rust server)", first, "-", mb(tb["rss"]),
                                              parts(tb["rss_parts"])))
    elif tb:
        print("  %-28s %s" % ("TensorBoard (Rust server)", tb))
    if isinstance(rep, dict):
        if "skipped" in rep:
            print("  %-28s skipped: %s" % ("report file", rep["skipped"]))
        else:
            print("  %-28s %-34s (%.1f MB file, %d/%d charts drawn)"
                  % ("report file", "%.1f s (write %.1f + open %.1f)" % (rep["first_s"], rep["write_s"], rep["open_s"]),
                     rep["bytes"] / 1e6, rep["drawn"], rep["charts"]))
    elif rep:
        print("  %-28s %s" % ("report file", rep))
    if not isinstance(ours, dict):
        return
    ok = lambda b: "ok" if b else "MISSED"   # noqa: E731
    lines = []
    if isinstance(tb, dict):
        if tb["first_s"] is None:
            lines.append("first screen >= %.0fx sooner than TensorBoard (it never drew within the cap; target >= %gx) %s"
                         % (cap / ours["first_s"], TARGETS["speedup"], ok(True)))
        else:
            x = tb["first_s"] / ours["first_s"]
            lines.append("first screen %.1fx sooner than TensorBoard (target >= %gx) %s"
                         % (x, TARGETS["speedup"], ok(x >= TARGETS["speedup"])))
    lines.append("first screen %.2f s (target <= %g s) %s" % (ours["first_s"], TARGETS["first_s"],
                                                            ok(ours["first_s"] <= TARGETS["first_s"])))
    f = ours["filter"]["ms"] / 1e3
    lines.append("filter redraw %.3f s (target < %g s) %s" % (f, TARGETS["filter_s"],
                                                            ok(f < TARGETS["filter_s"] and not ours["filter"].get("timeout"))))
    if isinstance(tb, dict) and tb["rss"]:
        r = ours["rss"] / tb["rss"]
        rust = tb["rss_parts"].get("rustboard")
        lines.append("peak RSS %.3f of TensorBoard's with its Rust server (target <= %g) %s%s"
                     % (r, TARGETS["rss"], ok(r <= TARGETS["rss"]),
                        "; %.2f of the Rust server's alone" % (ours["rss"] / rust) if rust else ""))
        web = ours["rss_parts"].get("tensorboard")
        if web:   # tfevents serve: TensorBoard's web server is in our tree too
            lines.append("peak RSS without the TensorBoard web server tfevents serve starts: %.3f of TensorBoard's"
                         % ((ours["rss"] - web) / tb["rss"]))
    for line in lines:
        print("  [%s] %s" % (label, line))


def requests(entries: list) -> None:
    for e in entries:
        print("    request %-62s at %6.2f s took %6.3f s (server %6.3f s), %7.0f KB"
              % (e["url"], e["start"] / 1e3, e["ms"] / 1e3, e["wait"] / 1e3, e["bytes"] / 1e3))


def details(ours: dict) -> None:
    """What our page did before its first screen: the page's own timings and its slowest API requests."""
    first = ours["first"]
    print("  ours: port open %.2f s; page HTML %.0f KB received %.2f s after navigation; page built in %.2f s; first "
          "screen %.2f s after navigation; run list %r (%d rows rendered)"
          % (ours["listening_s"], first["htmlBytes"] / 1e3, first["htmlMs"] / 1e3, (first["buildMs"] or 0) / 1e3,
             first["atMs"] / 1e3, first["listed"], first["rows"]))
    for c in first["charts"]:
        print("    in view at load: %-24s %5d runs, drawn as %s of %d runs%s"
              % (c["title"], c["runs"], c["drawn"], c["drawnRuns"],
                 "" if c["drawnRuns"] == c["runs"] else "  <- NOT every run"))
    slow = sorted(first["api"], key=lambda e: -e["ms"])[:5]
    requests(slow)
    f = ours["filter"]
    print("  filter %r (%d runs): %d charts redrawn in %.3f s (the input handler itself %.3f s)%s"
          % (FILTER, ours["filter_runs"], f["charts"], f["ms"] / 1e3, f["syncMs"] / 1e3,
             "; NOT redrawn: %r" % f.get("state") if f.get("timeout") else ""))
    requests(sorted(f.get("api", []), key=lambda e: -e["ms"])[:5])
    if ours["console_errors"]:
        print("  console errors: %r" % ours["console_errors"])


def warm(logdir: str) -> None:
    """Read every file of ``logdir`` once, so that each side starts from the page cache (as right after the job that
    wrote it): this VM reclaims cold pages, and a side that found them gone would read from disk."""
    t = time.perf_counter()
    for folder, _, names in os.walk(logdir):
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                while f.read(8 << 20):
                    pass
    print("  page cache warmed in %.1f s" % (time.perf_counter() - t), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", choices=sorted(SIZES), default="full")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "tfevents-dashboard-bench"),
                    help="where the logdirs (and report files) are written, kept for reuse")
    ap.add_argument("--ours-command", choices=("api", "serve"), default="api",
                    help="the command serving our dashboard: tfevents api (today) or tfevents serve")
    ap.add_argument("--skip", default="", help="comma-separated: tensorboard, report")
    ap.add_argument("--cap", type=float, default=600, help="seconds a measurement may take (TensorBoard's cap)")
    ap.add_argument("--logdirs", default="A,B", help="which logdirs of --sizes to measure (default A,B)")
    args = ap.parse_args()
    skip = {s for s in args.skip.split(",") if s}
    if skip - {"tensorboard", "report"}:
        ap.error("--skip takes tensorboard and/or report, got %s" % args.skip)
    os.makedirs(args.cache, exist_ok=True)
    print("load average %.2f %.2f %.2f; %d CPUs" % (os.getloadavg() + (os.cpu_count(),)), flush=True)
    with open(os.path.join(args.cache, "dashboard_bench.log"), "ab") as log:
        for label, runs, tags, steps in SIZES[args.sizes]:
            if label not in args.logdirs.split(","):
                continue
            t = time.perf_counter()
            logdir = make_logdir(args.cache, runs, tags, steps, "scalars")
            size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(logdir) for f in fs)
            print("\n[%s] %s: %d runs x %d tags x %d steps = %.1fM scalars, %.0f MB (ready in %.0f s)"
                  % (label, logdir, runs, tags, steps, runs * tags * steps / 1e6, size / 1e6, time.perf_counter() - t),
                  flush=True)
            try:
                warm(logdir)
                ours = measure_ours(args.ours_command, logdir, runs, args.cap, log)
                details(ours)
            except Exception as err:
                ours = "failed: %s" % err
            print("  ours measured; load average %.2f" % os.getloadavg()[0], flush=True)
            tb = rep = None
            if "tensorboard" not in skip:
                try:
                    warm(logdir)
                    tb = measure_tensorboard(logdir, runs, args.cap, log)
                    print("  TensorBoard: port open %.2f s, runs toggled on at %s; last look: %r"
                          % (tb["listening_s"], "%.1f s" % tb["toggled_s"] if tb["toggled_s"] else "-", tb["state"]),
                          flush=True)
                except Exception as err:
                    tb = "failed: %s" % err
            if "report" not in skip:
                try:
                    warm(logdir)
                    rep = measure_report(logdir, os.path.join(args.cache, "report_%s.html" % os.path.basename(logdir)),
                                         args.cap, log)
                except Exception as err:
                    rep = "failed: %s" % err
            report(label, args.ours_command, args.cap, ours, tb, rep)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
