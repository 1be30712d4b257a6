"""``tfevents serve LOGDIR``: TensorBoard's own UI on our reader.

Starts the gRPC data provider (``viewer/serve/``) and then TensorBoard's web server pointed at it
(``tensorboard --grpc_data_provider``), prints the URL, and runs until Ctrl-C or SIGTERM, when both stop.
``--provider-only`` starts only the provider and prints its address.
"""
from __future__ import annotations

import argparse
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
    parser.add_argument("-v", "--verbose", action="store_true", help="log each reload pass")


def run(args) -> int:
    from ..serve.server import (DataServer, parse_samples_per_plugin,  # lazy: grpc, tensorboard (CLI start-up)
                                start_tensorboard, stop_process_group)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="tfevents serve: %(message)s")
    try:
        samples = parse_samples_per_plugin(args.samples_per_plugin)
    except ValueError as err:
        print("tfevents serve: --samples-per-plugin: %s" % err, file=sys.stderr)
        return 2
    remote = "://" in args.logdir
    if not remote and not os.path.isdir(args.logdir):
        print("tfevents serve: no such directory: %s" % args.logdir, file=sys.stderr)
        return 2
    logdir = args.logdir if remote else os.path.abspath(args.logdir)
    try:
        # TensorBoard, our child, reaches the provider on 127.0.0.1; only --provider-only exposes it on --host
        server = DataServer(logdir, host=args.host if args.provider_only else "127.0.0.1", port=args.grpc_port,
                            reload_interval=args.reload_interval, samples_per_plugin=samples).start()
    except OSError as err:
        print("tfevents serve: %s" % err, file=sys.stderr)
        return 1
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    child = None
    try:
        if args.provider_only:
            print("data provider: %s" % server.address, flush=True)
        else:
            child = start_tensorboard(server.address, host=args.host, port=args.port,
                                      logdir=None if remote else logdir,
                                      samples_per_plugin=args.samples_per_plugin,
                                      reload_interval=args.reload_interval)
            host = "[%s]" % args.host if ":" in args.host else args.host
            print("TensorBoard on tfevents: http://%s:%d/ (data provider %s; Ctrl-C stops)"
                  % (host, args.port, server.address), flush=True)
        while not stop.wait(0.5):
            if child is not None and child.poll() is not None:
                print("tfevents serve: TensorBoard exited with status %d" % child.returncode, file=sys.stderr)
                return 1
        return 0
    finally:
        if child is not None:
            stop_process_group(child)
        server.stop()
