"""``tfevents serve LOGDIR``: TensorBoard's own UI on our reader.

Starts TensorBoard's web server (``tensorboard --grpc_data_provider``, ``viewer/serve/web.py``) first, on a port
reserved for the provider, so that it starts up while the gRPC data provider (``viewer/serve/``) is imported and
loads the logdir; prints the URL, and runs until Ctrl-C, SIGTERM or a hang-up (SIGHUP: its terminal closed), when
both stop; TensorBoard ends with it however it ends (a SIGKILL, a crash: ``web.end_with_parent``).
``--provider-only`` starts only the provider and prints its address.
"""
from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import sys
import threading


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logdir", help="directory of runs: a local path or an fsspec URL (s3://, gs://, ...)")
    parser.add_argument("--port", type=int, default=6006, help="TensorBoard's HTTP port (default 6006)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1; binding another address is explicit)")
    parser.add_argument("--grpc-port", type=int, default=0, help="the data provider's port (default: any free)")
    parser.add_argument("--reload-interval", type=float, default=5.0,
                        help="seconds between reload passes (default 5; 0 loads once)")
    parser.add_argument("--samples-per-plugin", metavar="PLUGIN=N,...",
                        help="points kept per series by plugin, e.g. scalars=1000,images=all (TensorBoard's "
                             "flag; 'all' or 0: every point)")
    parser.add_argument("--provider-only", action="store_true",
                        help="start only the gRPC data provider and print its address")
    parser.add_argument("--load-threads", type=int, default=None, metavar="N",
                        help="files read at once in a reload pass (default: the CPUs, at most 4)")
    parser.add_argument("--tensorflow", action="store_true",
                        help="run TensorBoard's web server with TensorFlow imported (slower to start; needed only "
                             "for the Projector's checkpoint-backed embeddings, which are detected)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each reload pass")


def run(args) -> int:
    from ..serve import web  # lazy: the serve package (stdlib only here)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="tfevents serve: %(message)s")
    remote = "://" in args.logdir
    if not remote and not os.path.isdir(args.logdir):
        print("tfevents serve: no such directory: %s" % args.logdir, file=sys.stderr)
        return 2
    logdir = args.logdir if remote else os.path.abspath(args.logdir)
    # TensorBoard, our child, reaches the provider on 127.0.0.1; only --provider-only exposes it on --host
    grpc_host = args.host if args.provider_only else "127.0.0.1"
    stop = threading.Event()   # before TensorBoard starts: a signal from here on stops it with us
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    child = None
    try:
        reserved = web.reserve_port(grpc_host, args.grpc_port)
    except OSError as err:
        print("tfevents serve: the data provider's port: %s" % err, file=sys.stderr)
        return 1
    try:
        if not args.provider_only:   # first, so that it starts up while the provider loads
            child = web.start_tensorboard("%s:%d" % (web.bracket(grpc_host), reserved.getsockname()[1]),
                                          host=args.host, port=args.port, logdir=None if remote else logdir,
                                          samples_per_plugin=args.samples_per_plugin,
                                          reload_interval=args.reload_interval,
                                          with_tensorflow=args.tensorflow or web.needs_tensorflow(logdir))
        # (bad --samples-per-plugin is reported by _serve, after TensorBoard started: it is stopped again then)
        return _serve(args, logdir, grpc_host, reserved, child, stop)
    finally:
        reserved.close()
        if child is not None:
            web.stop_process_group(child)


def _serve(args, logdir: str, grpc_host: str, reserved, child, stop: threading.Event) -> int:
    # numpy's OpenBLAS threads would spin beside the loader's (it does no linear algebra): one, set before numpy loads
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from ..serve.server import DataServer, parse_samples_per_plugin  # lazy: grpc, tensorboard (CLI start-up)
    gc.freeze()   # the modules' objects, never garbage: out of the collector's full passes during the load
    try:
        samples = parse_samples_per_plugin(args.samples_per_plugin)
    except ValueError as err:
        print("tfevents serve: --samples-per-plugin: %s" % err, file=sys.stderr)
        return 2
    try:
        server = DataServer(logdir, host=grpc_host, port=reserved.getsockname()[1],
                            reload_interval=args.reload_interval, samples_per_plugin=samples,
                            load_threads=args.load_threads).start()
    except OSError as err:
        print("tfevents serve: %s" % err, file=sys.stderr)
        return 1
    reserved.close()
    try:
        if args.provider_only:
            print("data provider: %s" % server.address, flush=True)
        else:
            host = "[%s]" % args.host if ":" in args.host else args.host
            print("TensorBoard on tfevents: http://%s:%d/ (data provider %s; Ctrl-C stops)"
                  % (host, args.port, server.address), flush=True)
        while not stop.wait(0.5):
            if child is not None and child.poll() is not None:
                print("tfevents serve: TensorBoard exited with status %d" % child.returncode, file=sys.stderr)
                return 1
        return 0
    finally:
        server.stop()
