"""TensorBoard on its Rust data server against TensorBoard on `tfevents serve`, on two logdir shapes, in one run.

The logdirs (benchmarks/_serve_logdir.py): RUNS runs x TAGS scalar tags x STEPS steps (default 100 x 50 x 5,000:
25M scalars), ``scalars`` alone, and ``full``: the same plus two histograms every 10 steps and an image every 100
steps per run. For each shape and server, best of ``--rounds`` (the servers alternate within a round):

- **full load** (what a user of the Scalars dashboard waits for): seconds from starting the command
  (``tensorboard --logdir L --load_fast=true``, or ``tfevents serve L``) until ``/data/plugin/scalars/tags`` lists
  every run's tags and one ``/data/plugin/scalars/scalars_multirun`` request for the tag each run logs last, across
  all runs, shows every run at its last step (both polled every ``POLL`` seconds);
- **data server load** (gRPC): the data server alone (the Rust binary as TensorBoard starts it; ``tfevents serve
  --provider-only``), from its start until ``ListScalars`` reports every series at its last step (polled every
  ``POLL`` seconds), and in the full shape ``ListTensors`` / ``ListBlobSequences`` every histogram and image series;
- **peak RSS** of the data server process (the Rust binary; our provider process; TensorBoard's own web server,
  the same program in both, is reported apart), from /proc VmHWM, in the full-load run;
- **latency**: p50 / p95 of ``/data/plugin/scalars/scalars`` for one tag of every run (3 rounds), after the load.

Then the ratios, ours against Rust's, per shape.

    .venv/bin/python benchmarks/serve.py [--runs 100 --tags 50 --steps 5000] [--shapes scalars,full]
        [--only rust,ours] [--rounds 2] [--dir /tmp] [--grpc-only]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _serve_logdir import make_logdir  # noqa: E402

BIN = os.path.dirname(sys.executable)


def script(name: str, module: str) -> list:
    """The console script ``name`` beside this interpreter, else ``python -m module``."""
    path = os.path.join(BIN, name)
    return [path] if os.path.exists(path) else [sys.executable, "-m", module]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(base: str, path: str, timeout: float = 120, **params):
    url = base + path + ("?" + urllib.parse.urlencode(params) if params else "")
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read())


def post(base: str, path: str, form: list, timeout: float = 120):
    data = urllib.parse.urlencode(form).encode()
    with urllib.request.urlopen(urllib.request.Request(base + path, data=data), timeout=timeout) as r:
        return json.loads(r.read())


POLL = 0.1  # seconds between polls of a loading server (both servers alike)


def last_tag(tags: int) -> str:
    """The scalar tag each run of the benchmark logdir logs last (the last one of the last step)."""
    t = tags - 1
    return "group%d/metric%02d" % (t % 5, t)


def tags_listed(base: str, runs: int, tags: int):
    """The run names once ``/data/plugin/scalars/tags`` lists every run with all its tags, else None."""
    listed = get(base, "/data/plugin/scalars/tags")
    if len(listed) >= runs and all(len(t) >= tags for t in listed.values()):
        return sorted(listed)
    return None


def at_last_step(base: str, tag: str, runs: list, last_step: int) -> bool:
    """Whether one ``scalars_multirun`` request for ``tag`` shows every run of ``runs`` at ``last_step``."""
    answer = post(base, "/data/plugin/scalars/scalars_multirun", [("tag", tag)] + [("runs", r) for r in runs])
    return len(answer) >= len(runs) and all(s and s[-1][1] == last_step for s in answer.values())


def tree(pid: int) -> list:
    """pid and its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def status(pid: int) -> dict:
    try:
        with open("/proc/%d/status" % pid) as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return {}
    return {"hwm_mb": int(fields["VmHWM"].split()[0]) / 1024, "rss_mb": int(fields["VmRSS"].split()[0]) / 1024,
            "cmd": cmd}


def measure(name: str, logdir: str, runs: int, tags: int, steps: int, log) -> dict:
    port = free_port()
    base = "http://127.0.0.1:%d" % port
    if name == "rust":
        cmd = script("tensorboard", "tensorboard.main") + ["--logdir", logdir, "--load_fast=true", "--port", str(port),
               "--host", "127.0.0.1"]
    else:
        cmd = script("tfevents", "tfevents.viewer.cli") + ["serve", logdir, "--port", str(port)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
    try:
        deadline = t0 + 1800
        names, t_tags = None, None
        while True:
            try:
                if names is None:
                    names = tags_listed(base, runs, tags)
                    if names is not None:
                        t_tags = time.perf_counter() - t0
                if names is not None and at_last_step(base, last_tag(tags), names, steps - 1):
                    break
            except (OSError, ValueError, KeyError):
                pass
            if proc.poll() is not None:
                raise RuntimeError("%s exited with %s" % (name, proc.returncode))
            if time.perf_counter() > deadline:
                raise RuntimeError("%s did not load within 30 minutes" % name)
            time.sleep(POLL)
        full = time.perf_counter() - t0
        tag = "group0/metric00"
        runs_listed = sorted(get(base, "/data/plugin/scalars/tags"))
        lat = []
        for _ in range(3):
            for run in runs_listed:
                t = time.perf_counter()
                get(base, "/data/plugin/scalars/scalars", run=run, tag=tag)
                lat.append(time.perf_counter() - t)
        lat.sort()
        procs = [status(p) for p in tree(proc.pid)]
        procs = [p for p in procs if p]
        if name == "rust":
            server = [p for p in procs if "data_server" in p["cmd"] or "rustboard" in p["cmd"]]
            web = [p for p in procs if p not in server]
        else:
            server = [p for p in procs if "tfevents" in p["cmd"] and "tensorboard" not in p["cmd"].split()[1:2][0]
                      and "--grpc_data_provider" not in p["cmd"]]
            web = [p for p in procs if "--grpc_data_provider" in p["cmd"]]
        return {"full_load_s": full, "tags_listed_s": t_tags, "server_hwm_mb": sum(p["hwm_mb"] for p in server),
                "web_hwm_mb": sum(p["hwm_mb"] for p in web), "p50_ms": 1e3 * lat[len(lat) // 2],
                "p95_ms": 1e3 * lat[int(len(lat) * 0.95)], "servers": [p["cmd"][:80] for p in server]}
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def grpc_load(name: str, logdir: str, runs: int, tags: int, steps: int, shape: str, log) -> float:
    """Seconds from starting the data server alone until its List RPCs show every series at its last step."""
    import grpc
    from tensorboard.data.proto import data_provider_pb2 as pb
    from tensorboard.data.proto import data_provider_pb2_grpc as pb_grpc
    t0 = time.perf_counter()
    if name == "rust":
        import tensorboard_data_server
        port_file = os.path.join(tempfile.mkdtemp(), "port")
        proc = subprocess.Popen([tensorboard_data_server.server_binary(), "--logdir=%s" % logdir, "--reload=5",
                                 "--samples-per-plugin=", "--port=0", "--port-file=%s" % port_file],
                                stdout=log, stderr=log, start_new_session=True)
        while not (os.path.exists(port_file) and open(port_file).read().endswith("\n")):
            time.sleep(0.01)
        address = "localhost:%s" % open(port_file).read().strip()
    else:
        proc = subprocess.Popen(script("tfevents", "tfevents.viewer.cli") + ["serve", logdir, "--provider-only"],
                                stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        address = proc.stdout.readline().decode().split(": ", 1)[1].strip()
    try:
        stub = pb_grpc.TensorBoardDataProviderStub(grpc.insecure_channel(
            address, options=[("grpc.max_receive_message_length", 256 << 20)]))
        want = {"scalars": (runs * tags, steps - 1)}
        if shape == "full":
            want.update(histograms=(runs * 2, (steps - 1) // 10 * 10), images=(runs, (steps - 1) // 100 * 100))
        while True:
            done = True
            for plugin, (count, last) in want.items():
                rpc = stub.ListScalars if plugin == "scalars" else (
                    stub.ListTensors if plugin == "histograms" else stub.ListBlobSequences)
                request = (pb.ListScalarsRequest if plugin == "scalars" else pb.ListTensorsRequest
                           if plugin == "histograms" else pb.ListBlobSequencesRequest)()
                request.plugin_filter.plugin_name = plugin
                try:
                    answer = rpc(request, timeout=60)
                except grpc.RpcError:
                    done = False
                    break
                at_last = sum(1 for r in answer.runs for t in r.tags if t.metadata.max_step == last)
                if at_last < count:
                    done = False
                    break
            if done:
                return time.perf_counter() - t0
            if proc.poll() is not None:
                raise RuntimeError("%s exited with %s" % (name, proc.returncode))
            time.sleep(POLL)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def best(rounds: list) -> dict:
    """Per figure over the rounds: the least time and latency, and the largest peak RSS (memory is not noise)."""
    return {k: (max if k.endswith("_mb") else min)(r[k] for r in rounds)
            for k in rounds[0] if isinstance(rounds[0][k], (int, float))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--tags", type=int, default=50)
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--shapes", default="scalars,full", help="logdir shapes: scalars (scalars alone), full (scalars, "
                                                             "histograms and images)")
    ap.add_argument("--only", default="rust,ours")
    ap.add_argument("--rounds", type=int, default=2, help="rounds per shape; the best of them is reported")
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the logdirs are written (kept for reuse)")
    ap.add_argument("--grpc-only", action="store_true", help="measure only the data servers' own load (quick)")
    args = ap.parse_args()
    names = args.only.split(",")
    os.makedirs(args.dir, exist_ok=True)
    with open(os.path.join(args.dir, "serve_bench.log"), "w") as log:
        for shape in args.shapes.split(","):
            t = time.perf_counter()
            logdir = make_logdir(args.dir, args.runs, args.tags, args.steps, shape)
            size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(logdir) for f in fs)
            print("\n[%s] logdir %s: %d runs x %d tags x %d steps = %.1fM scalars%s, %.0f MB (ready in %.0f s)"
                  % (shape, logdir, args.runs, args.tags, args.steps, args.runs * args.tags * args.steps / 1e6,
                     "" if shape == "scalars" else " + histograms + images", size / 1e6, time.perf_counter() - t),
                  flush=True)
            rounds = {name: [] for name in names}
            for i in range(args.rounds):
                for name in names:
                    print("  round %d %-4s load average %.2f %.2f %.2f" % ((i + 1, name) + os.getloadavg()),
                          flush=True)
                    r = {"grpc_load_s": grpc_load(name, logdir, args.runs, args.tags, args.steps, shape, log)}
                    if not args.grpc_only:
                        r.update(measure(name, logdir, args.runs, args.tags, args.steps, log))
                        print("    full load %6.2f s (tags listed %6.2f s) | gRPC load %6.2f s | data server peak RSS "
                              "%7.1f MB (web server %6.1f MB) | scalars p50 %6.2f ms p95 %6.2f ms"
                              % (r["full_load_s"], r["tags_listed_s"], r["grpc_load_s"], r["server_hwm_mb"],
                                 r["web_hwm_mb"], r["p50_ms"], r["p95_ms"]), flush=True)
                    else:
                        print("    gRPC load %6.2f s" % r["grpc_load_s"], flush=True)
                    rounds[name].append(r)
            results = {name: best(rs) for name, rs in rounds.items()}
            for name, r in results.items():
                print("  best %-4s %s" % (name, " ".join("%s %.2f" % kv for kv in sorted(r.items()))), flush=True)
            if "rust" in results and "ours" in results:
                rust, ours = results["rust"], results["ours"]
                line = "  [%s] ours vs rust: gRPC load %.2fx faster" % (shape, rust["grpc_load_s"] / ours["grpc_load_s"])
                if not args.grpc_only:
                    line += ("; FULL LOAD %.2fx faster (target >= 5); peak RSS %.3f of its (target <= 0.25); "
                             "latency p50 %.2fx p95 %.2fx of its"
                             % (rust["full_load_s"] / ours["full_load_s"], ours["server_hwm_mb"] / rust["server_hwm_mb"],
                                ours["p50_ms"] / rust["p50_ms"], ours["p95_ms"] / rust["p95_ms"]))
                print(line, flush=True)


if __name__ == "__main__":
    main()
