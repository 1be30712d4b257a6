"""Read 1M scalar events: tfevents' reader against TensorBoard's EventAccumulator, tbparse, TF's
summary_iterator and the Rust data server (tensorboard_data_server over gRPC), in one run.

Two logdirs of N scalar events (default 1M, 4 tags) are written once:
  tbx    -- tensorboardX's layout: Event{wall_time, step, summary{value{tag, simple_value}}}
  tensor -- TF2 / torch new-style layout: rank-0 float tensors, plugin 'scalars' metadata on each
            tag's first value (framed with record.encode_record from our Event protos)
Each reader runs in its own subprocess (imports excluded from the timing, checksums on wherever the
reader can check them, --checksum for the data server); a reader taking under 5 s is run 3 times
and its best run kept (the machine may be shared). Peak RSS is each process's VmHWM, shown also
above a bare interpreter's. "vs ours" is the reader's time over ours. tbparse does not read tensor-style scalars (0 events read there).

    /work/venv/bin/python benchmarks/read_scalars.py [--events 1000000] [--only ours,tbparse]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TAGS = ("loss", "accuracy", "learning_rate", "grad_norm")

# -- the readers, each run as `python read_scalars.py --child NAME LOGDIR`; prints JSON

def _child_ours(logdir, pure=False):
    from tfevents.summaries.reader import scan as _reader_scan
    from tfevents.summaries.reader import read_scalars
    if pure:
        _reader_scan._fastscan = None
    t = time.perf_counter()
    out = read_scalars(logdir)
    return time.perf_counter() - t, sum(len(s.step) for s in out.values())


def _child_ours_pure(logdir):
    return _child_ours(logdir, pure=True)


def _child_event_accumulator(logdir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    t = time.perf_counter()
    acc = EventAccumulator(logdir, size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    n = sum(len(acc.Scalars(tag)) for tag in acc.Tags()["scalars"])
    n += sum(len(acc.Tensors(tag)) for tag in acc.Tags()["tensors"])
    return time.perf_counter() - t, n


def _child_tbparse(logdir):
    import warnings
    warnings.simplefilter("ignore")
    from tbparse import SummaryReader
    t = time.perf_counter()
    df = SummaryReader(logdir, pivot=False).scalars
    return time.perf_counter() - t, len(df)


def _child_summary_iterator(logdir):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    files = sorted(os.path.join(logdir, f) for f in os.listdir(logdir) if "tfevents" in f)
    t = time.perf_counter()
    steps, values = [], []
    for path in files:
        for e in tf.compat.v1.train.summary_iterator(path):
            for v in e.summary.value:
                steps.append(e.step)
                values.append(v.simple_value if v.WhichOneof("value") == "simple_value"
                              else v.tensor.float_val[0])
    return time.perf_counter() - t, len(values)


def _child_rustboard(logdir):
    """Start the data server, poll ReadScalars until every point is served; RSS from /proc."""
    import grpc
    import tensorboard_data_server
    from tensorboard.data.proto import data_provider_pb2 as dp
    from tensorboard.data.proto import data_provider_pb2_grpc as dpg
    expected = int(os.environ["BENCH_EXPECTED"])
    port_file = tempfile.mktemp()
    t = time.perf_counter()
    proc = subprocess.Popen([tensorboard_data_server.server_binary(), "--logdir", logdir, "--port", "0",
                             "--port-file", port_file, "--reload", "once", "--checksum",
                             "--samples-per-plugin", "scalars=all", "--die-after-stdin"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            time.sleep(0.005)
        stub = dpg.TensorBoardDataProviderStub(grpc.insecure_channel(
            "127.0.0.1:%s" % open(port_file).read().strip(), options=[("grpc.max_receive_message_length", 1 << 30)]))
        req = dp.ReadScalarsRequest(plugin_filter=dp.PluginFilter(plugin_name="scalars"),
                                    downsample=dp.Downsample(num_points=expected + 1))
        while True:
            resp = stub.ListScalars(dp.ListScalarsRequest(plugin_filter=dp.PluginFilter(plugin_name="scalars")))
            done = [t.metadata.max_step >= (expected - 1) // len(TAGS) for r in resp.runs for t in r.tags]
            if len(done) == len(TAGS) and all(done):
                resp = stub.ReadScalars(req)
                n = sum(len(t.data.step) for r in resp.runs for t in r.tags)
                if n >= expected:
                    break
            time.sleep(0.01)
        elapsed = time.perf_counter() - t
        return elapsed, n, _peak_rss_mb(proc.pid)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        if os.path.exists(port_file):
            os.unlink(port_file)


READERS = {
    "ours": _child_ours,
    "ours_pure_python": _child_ours_pure,
    "rustboard": _child_rustboard,
    "summary_iterator": _child_summary_iterator,
    "event_accumulator": _child_event_accumulator,
    "tbparse": _child_tbparse,
}


def _peak_rss_mb(pid="self"):
    """VmHWM: unlike ru_maxrss it is not inherited across fork + exec from the parent."""
    with open("/proc/%s/status" % pid) as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024


def _child(name, logdir):
    result = READERS[name](logdir)
    rss = _peak_rss_mb()
    seconds, n = result[:2]
    if len(result) > 2:
        rss = result[2]
    print(json.dumps({"seconds": seconds, "events": n, "rss_mb": rss}))


# -- writing the logdirs

def write_logdirs(root, n):
    from tfevents.proto import event_pb2, summary_pb2
    from tfevents.summaries.record import encode_record
    meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"),
                                       data_class=summary_pb2.DATA_CLASS_SCALAR)
    for layout in ("tbx", "tensor"):
        d = os.path.join(root, layout)
        path = os.path.join(d, "events.out.tfevents.1700000000.bench.1.0")
        if os.path.exists(path):
            continue
        os.makedirs(d, exist_ok=True)
        e = event_pb2.Event(wall_time=1.7e9, file_version="brain.Event:2")
        parts = [encode_record(e.SerializeToString())]
        e = event_pb2.Event()
        v = e.summary.value.add()
        for i in range(n):
            step, tag = divmod(i, len(TAGS))
            e.step, e.wall_time = step, 1.7e9 + i * 1e-3
            v.tag = TAGS[tag]
            if layout == "tbx":
                v.simple_value = 1.0 / (i + 1)
            else:
                v.ClearField("metadata")
                if step == 0:
                    v.metadata.CopyFrom(meta)
                v.tensor.dtype = 1
                del v.tensor.float_val[:]
                v.tensor.float_val.append(1.0 / (i + 1))
            parts.append(encode_record(e.SerializeToString()))
        with open(path + ".tmp", "wb") as f:
            f.write(b"".join(parts))
        os.replace(path + ".tmp", path)


def _bare_rss():
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--bare"], capture_output=True, text=True,
                         check=True)
    return float(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "tfevents-bench-read"))
    ap.add_argument("--only", default=None, help="comma-separated readers: " + ",".join(READERS))
    ap.add_argument("--layouts", default="tbx,tensor")
    ap.add_argument("--repeat", type=int, default=3,
                    help="best of this many runs for readers taking under 5 s (default 3)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--bare", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.bare:
        return print(_peak_rss_mb())
    if args.child:
        return _child(*args.child)
    root = os.path.join(args.dir, str(args.events))
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); import read_scalars; "
                    "read_scalars.write_logdirs(%r, %d)" % (HERE, root, args.events)], check=True)
    print("logdirs in %s (written/checked in %.1f s)" % (root, time.perf_counter() - t))
    bare = _bare_rss()
    print("bare interpreter peak RSS: %.1f MB" % bare)
    if hasattr(os, "getloadavg"):
        print("load average: %.2f %.2f %.2f on %d CPUs" % (os.getloadavg() + (os.cpu_count(),)))
    print()
    names = args.only.split(",") if args.only else list(READERS)
    env = dict(os.environ, BENCH_EXPECTED=str(args.events), TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    for layout in args.layouts.split(","):
        logdir = os.path.join(root, layout)
        size = sum(os.path.getsize(os.path.join(logdir, f)) for f in os.listdir(logdir))
        print("== %s layout: %d scalar events, %.1f MB" % (layout, args.events, size / 1e6))
        results = {}
        for name in names:
            runs = []
            while len(runs) < args.repeat:
                p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, logdir], env=env,
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    print("  %-18s failed: %s" % (name, p.stderr.strip().splitlines()[-1:] or "?"))
                    break
                runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
                if runs[-1]["seconds"] > 5:  # slow readers once: load noise is small next to them
                    break
            if runs:
                results[name] = min(runs, key=lambda r: r["seconds"])
                results[name]["runs"] = len(runs)
        ours = results.get("ours")
        print("  %-18s %9s %12s %10s %10s %12s %s" % ("reader", "seconds", "events/s", "vs ours", "peak RSS",
                                                      "above bare", "events read (best of runs)"))
        for name, r in results.items():
            rate = r["events"] / r["seconds"]
            ratio = "%.1fx" % (r["seconds"] / ours["seconds"]) if ours and name != "ours" else "-"
            print("  %-18s %9.3f %12s %10s %8.0f MB %9.0f MB %d (%d)" % (
                name, r["seconds"], "{:,.0f}".format(rate), ratio, r["rss_mb"], r["rss_mb"] - bare, r["events"],
                r["runs"]))
        print()


if __name__ == "__main__":
    sys.exit(main())
