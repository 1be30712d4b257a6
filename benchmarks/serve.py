"""TensorBoard on its Rust data server against TensorBoard on `tfevents serve`, on one big logdir, in one run.

The logdir (benchmarks/_serve_logdir.py): RUNS runs x TAGS scalar tags x STEPS steps (default 100 x 50 x 5,000:
25M scalars), plus two histograms every 10 steps and an image every 100 steps per run. For each server:

- **full load through TensorBoard's HTTP API**: seconds from starting the command (``tensorboard --logdir L
  --load_fast=true``, or ``tfevents serve L``) until ``/data/plugin/scalars/tags`` lists every run's tags and every
  series' last step has been read back (``scalars_multirun`` per tag; a tag seen complete is not asked again).
  Reading 5,000 series of 1,000 points through TensorBoard's Python web server is itself a fixed cost of tens of
  seconds for either data server, printed as "HTTP read of every series";
- **data server load** (gRPC): the data server alone (the Rust binary as TensorBoard starts it; ``tfevents serve
  --provider-only``), from its start until ``ListScalars`` reports every series at its last step (polled every
  0.1 s) and ``ListTensors`` / ``ListBlobSequences`` every histogram and image series: the load itself;
- **peak RSS** of the data server process (the Rust binary; our provider process; TensorBoard's own web server,
  the same program in both, is reported apart), from /proc VmHWM, in the HTTP run;
- **latency**: p50 / p95 of ``/data/plugin/scalars/scalars`` for one tag of every run, after the load.

    .venv/bin/python benchmarks/serve.py [--runs 100 --tags 50 --steps 5000] [--only rust,ours] [--dir /tmp]
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


def tags_listed(base: str, runs: int, tags: int) -> bool:
    listed = get(base, "/data/plugin/scalars/tags")
    return len(listed) >= runs and all(len(t) >= tags for t in listed.values())


def read_every_series(base: str, pending: set, runs: list, last_step: int) -> set:
    """The tags of ``pending`` not yet at ``last_step`` in every run (each tag read once, all runs at a time)."""
    left = set()
    for tag in sorted(pending):
        answer = post(base, "/data/plugin/scalars/scalars_multirun", [("tag", tag)] + [("runs", r) for r in runs])
        if len(answer) < len(runs) or any(not s or s[-1][1] != last_step for s in answer.values()):
            left.add(tag)
    return left


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
        cmd = [os.path.join(BIN, "tensorboard"), "--logdir", logdir, "--load_fast=true", "--port", str(port),
               "--host", "127.0.0.1"]
    else:
        cmd = [os.path.join(BIN, "tfevents"), "serve", logdir, "--port", str(port)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
    try:
        deadline = t0 + 1800
        pending, names, t_tags = None, None, None
        while True:
            try:
                if pending is None and tags_listed(base, runs, tags):
                    t_tags = time.perf_counter() - t0
                    listed = get(base, "/data/plugin/scalars/tags")
                    names = sorted(listed)
                    pending = set(listed[names[0]])
                if pending is not None:
                    pending = read_every_series(base, pending, names, steps - 1)
                    if not pending:
                        break
            except (OSError, ValueError, KeyError):
                pass
            if proc.poll() is not None:
                raise RuntimeError("%s exited with %s" % (name, proc.returncode))
            if time.perf_counter() > deadline:
                raise RuntimeError("%s did not load within 30 minutes" % name)
            time.sleep(0.25)
        full = time.perf_counter() - t0
        t = time.perf_counter()
        read_every_series(base, set(get(base, "/data/plugin/scalars/tags")[names[0]]), names, steps - 1)
        http_read = time.perf_counter() - t
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
        return {"full_load_s": full, "tags_listed_s": t_tags, "http_read_s": http_read, "server_hwm_mb": sum(p["hwm_mb"] for p in server),
                "web_hwm_mb": sum(p["hwm_mb"] for p in web), "p50_ms": 1e3 * lat[len(lat) // 2],
                "p95_ms": 1e3 * lat[int(len(lat) * 0.95)], "servers": [p["cmd"][:80] for p in server]}
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def grpc_load(name: str, logdir: str, runs: int, tags: int, steps: int, log) -> float:
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
        proc = subprocess.Popen([os.path.join(BIN, "tfevents"), "serve", logdir, "--provider-only"],
                                stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        address = proc.stdout.readline().decode().split(": ", 1)[1].strip()
    try:
        stub = pb_grpc.TensorBoardDataProviderStub(grpc.insecure_channel(
            address, options=[("grpc.max_receive_message_length", 256 << 20)]))
        want = {"scalars": (runs * tags, steps - 1), "histograms": (runs * 2, (steps - 1) // 10 * 10),
                "images": (runs, (steps - 1) // 100 * 100)}
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
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--tags", type=int, default=50)
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--only", default="rust,ours")
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the logdir is written (kept for reuse)")
    ap.add_argument("--grpc-only", action="store_true", help="measure only the data servers' own load (quick)")
    args = ap.parse_args()
    t = time.perf_counter()
    logdir = make_logdir(args.dir, args.runs, args.tags, args.steps)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(logdir) for f in fs)
    print("logdir %s: %d runs x %d tags x %d steps = %.1fM scalars, %.0f MB (ready in %.0f s)"
          % (logdir, args.runs, args.tags, args.steps, args.runs * args.tags * args.steps / 1e6, size / 1e6,
             time.perf_counter() - t), flush=True)
    print("load average %.2f %.2f %.2f" % os.getloadavg(), flush=True)
    results = {}
    names = args.only.split(",")
    with open(os.path.join(args.dir, "serve_bench.log"), "w") as log:
        for name in names:
            t = grpc_load(name, logdir, args.runs, args.tags, args.steps, log)
            results[name] = {"grpc_load_s": t}
            print("%-5s data server load (gRPC, no web server) %7.2f s" % (name, t), flush=True)
        for name in names if not args.grpc_only else ():
            results[name].update(measure(name, logdir, args.runs, args.tags, args.steps, log))
            r = results[name]
            print("%-5s through TensorBoard's HTTP API: tags listed %6.2f s, full load %6.2f s (HTTP read of every "
                  "series alone: %5.2f s) | data server peak RSS %7.1f MB (web server %6.1f MB) | scalars p50 %6.2f ms "
                  "p95 %6.2f ms" % (name, r["tags_listed_s"], r["full_load_s"], r["http_read_s"], r["server_hwm_mb"],
                                    r["web_hwm_mb"], r["p50_ms"], r["p95_ms"]), flush=True)
    if args.grpc_only and "rust" in results and "ours" in results:
        print("ours vs rust: data server load %.1fx faster" % (results["rust"]["grpc_load_s"]
                                                               / results["ours"]["grpc_load_s"]))
    elif "rust" in results and "ours" in results:
        rust, ours = results["rust"], results["ours"]
        print("ours vs rust: data server load %.1fx faster; through TensorBoard: tags listed %.1fx, full load %.1fx "
              "faster; peak RSS %.2f of its; latency p50 %.2fx p95 %.2fx"
              % (rust["grpc_load_s"] / ours["grpc_load_s"], rust["tags_listed_s"] / ours["tags_listed_s"],
                 rust["full_load_s"] / ours["full_load_s"], ours["server_hwm_mb"] / rust["server_hwm_mb"],
                 ours["p50_ms"] / rust["p50_ms"], ours["p95_ms"] / rust["p95_ms"]))


if __name__ == "__main__":
    main()
