"""``tfevents serve LOGDIR``: tfevents' dashboard and TensorBoard's own UI, on one load of the logdir.

TensorBoard's UI stays where a TensorBoard user looks for it: ``--port`` (6006). tfevents' dashboard (the page and
JSON API of ``tfevents api``, ``viewer/dashboard/``; the ``dashboard`` extra) is on ``--dashboard-port`` (6007), read
from the same ``LiveLogdir`` the data provider keeps, and forwards TensorBoard's UI at ``/tensorboard/``. Beyond
localhost (a non-loopback ``--host``) every route of the dashboard needs the token (``server_options.py``), and
TensorBoard's own server, which checks none, listens on 127.0.0.1 only: reached from elsewhere through the
dashboard's ``/tensorboard/``, with the token. The gRPC provider listens on 127.0.0.1 (but for ``--provider-only``).

Starts TensorBoard's web server (``tensorboard --grpc_data_provider``, ``viewer/serve/web.py``) first, on a port
reserved for the provider, so that it starts up while the gRPC data provider (``viewer/serve/``) is imported and
loads the logdir; prints the URL, and runs until Ctrl-C, SIGTERM or a hang-up (SIGHUP: its terminal closed), when
both stop; TensorBoard ends with it however it ends (a SIGKILL, a crash: ``web.end_with_parent``).
``--provider-only`` starts only the provider and prints its address.
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import logging
import os
import signal
import socket
import sys
import threading
from typing import Optional

from ..dashboard.access import is_loopback, reachable_host, root_url
from . import run_choice
from .server_options import (access_problem, add_access_options, add_load_options, add_page_options,
                             choose_token)

DASHBOARD_PORT = 6007        # the dashboard's default port; taken: the next free of DASHBOARD_PORT_TRIES
DASHBOARD_PORT_TRIES = 10
# TensorBoard's web server starts (~3 s of CPU) while the provider loads the logdir, which both UIs wait for: it
# yields the CPU to the load
TENSORBOARD_NICE = 10


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logdir", help="directory of runs: a local path or an fsspec URL (s3://, gs://, ...)")
    parser.add_argument("--port", type=int, default=6006, help="TensorBoard's HTTP port (default 6006)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1; any other needs a token or --no-token, and "
                             "TensorBoard's UI is then reached through the dashboard's /tensorboard/)")
    parser.add_argument("--dashboard-port", type=int, default=None,
                        help="tfevents' dashboard's HTTP port (default %d, or the next free one; 0: any free)"
                             % DASHBOARD_PORT)
    parser.add_argument("--no-dashboard", action="store_true",
                        help="serve TensorBoard's UI only (no tfevents dashboard)")
    add_access_options(parser)
    add_page_options(parser)
    add_load_options(parser)
    run_choice.add_arguments(parser)
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


def _missing_extra() -> Optional[str]:
    """The dashboard extra's first module not installed (None: both are), found without importing them."""
    return next((name for name in ("starlette", "uvicorn") if importlib.util.find_spec(name) is None), None)


def _bind_dashboard(host: str, port: Optional[int]):
    """The dashboard's listening socket: on ``port``, or (None) on ``DASHBOARD_PORT`` or the next free one."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    tries = [port] if port is not None else range(DASHBOARD_PORT, DASHBOARD_PORT + DASHBOARD_PORT_TRIES)
    for i, candidate in enumerate(tries):
        try:
            return socket.create_server((host.strip("[]"), candidate), family=family, backlog=128)
        except OSError:
            if i == len(tries) - 1:
                raise


def run(args) -> int:
    from ..serve import web  # lazy: the serve package (stdlib only here)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="tfevents serve: %(message)s")
    remote = "://" in args.logdir
    if not remote and not os.path.isdir(args.logdir):
        print("tfevents serve: no such directory: %s" % args.logdir, file=sys.stderr)
        return 2
    problem = access_problem(args)
    if problem:
        print("tfevents serve: %s" % problem, file=sys.stderr)
        return 2
    status = run_choice.where_problem(args, "tfevents serve")
    if status:
        return status
    logdir = args.logdir if remote else os.path.abspath(args.logdir)
    beyond = not is_loopback(args.host)
    dashboard = not (args.provider_only or args.no_dashboard)
    missing = _missing_extra() if dashboard else None
    if beyond and not args.provider_only and not args.no_token and (missing or not dashboard):
        print("tfevents serve: TensorBoard's web server checks no token: serving %s needs tfevents' dashboard "
              "in front of it (%s) or an explicit --no-token"
              % (args.host, "pip install 'tfevents[dashboard]': %s is missing" % missing if missing
                 else "leave out --no-dashboard"), file=sys.stderr)
        return 2
    if missing:
        print("tfevents serve: tfevents' dashboard needs pip install 'tfevents[dashboard]' (%s is missing): serving "
              "TensorBoard's UI only" % missing, file=sys.stderr)
        dashboard = False
    token = choose_token(args, "tfevents serve") if dashboard else None
    if beyond and not dashboard and args.no_token and not args.provider_only:
        print("tfevents serve: WARNING: serving %s without a token: anyone who reaches this address reads the logdir"
              % args.host, file=sys.stderr, flush=True)
    # TensorBoard's own server checks no token: beyond localhost it listens on loopback, behind the dashboard
    tensorboard_host = args.host if not beyond or args.no_token else "127.0.0.1"
    # TensorBoard, our child, reaches the provider on 127.0.0.1; only --provider-only exposes it on --host
    grpc_host = args.host if args.provider_only else "127.0.0.1"
    stop = threading.Event()   # before TensorBoard starts: a signal from here on stops it with us
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    child, dashboard_socket = None, None
    try:
        reserved = web.reserve_port(grpc_host, args.grpc_port)
    except OSError as err:
        print("tfevents serve: the data provider's port: %s" % err, file=sys.stderr)
        return 1
    try:
        if dashboard:
            try:
                dashboard_socket = _bind_dashboard(args.host, args.dashboard_port)
            except OSError as err:
                print("tfevents serve: the dashboard's port: %s" % err, file=sys.stderr)
                return 1
        if not args.provider_only:   # first, so that it starts up while the provider loads
            child = web.start_tensorboard("%s:%d" % (web.bracket(grpc_host), reserved.getsockname()[1]),
                                          host=tensorboard_host, port=args.port, logdir=None if remote else logdir,
                                          samples_per_plugin=args.samples_per_plugin,
                                          reload_interval=args.reload_interval,
                                          with_tensorflow=args.tensorflow or web.needs_tensorflow(logdir),
                                          nice=TENSORBOARD_NICE)
        # (bad --samples-per-plugin is reported by _serve, after TensorBoard started: it is stopped again then)
        return _serve(args, logdir, grpc_host, reserved, child, stop,
                      Dashboard(dashboard_socket, token, tensorboard_host) if dashboard else None)
    finally:
        reserved.close()
        if dashboard_socket is not None:
            dashboard_socket.close()
        if child is not None:
            web.stop_process_group(child)


class Dashboard:
    """What ``_serve`` needs to start the dashboard: its bound socket, its token (None: none) and where TensorBoard's
    web server listens; ``start(live, loaded)`` serves it on a thread, ``stop()`` ends it."""

    def __init__(self, sock, token: Optional[str], tensorboard_host: str):
        self.sock, self.token, self.tensorboard_host = sock, token, tensorboard_host
        self.server, self.thread = None, None

    def start(self, args, live, loaded: threading.Event) -> "Dashboard":
        from ..dashboard.server import api_server  # lazy: Starlette and uvicorn, the dashboard extra
        forward = reachable_host(self.tensorboard_host)
        self.server = api_server(live, self.sock, token=self.token, path_prefix=args.path_prefix,
                                 certfile=args.certfile, keyfile=args.keyfile, reload_interval=args.reload_interval,
                                 loaded=loaded, tensorboard=None if args.provider_only else (forward, args.port),
                                 aggregate=args.aggregate)
        # off the main thread, uvicorn installs no signal handlers: serve's own end it (stop)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       name="tfevents-dashboard", daemon=True)
        self.thread.start()
        return self

    def url(self, args) -> str:
        return root_url(args.host, self.sock.getsockname()[1], args.path_prefix, bool(args.certfile))

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
            self.thread.join(10)


def _serve(args, logdir: str, grpc_host: str, reserved, child, stop: threading.Event,
           dashboard: Optional[Dashboard]) -> int:
    # numpy's OpenBLAS threads would spin beside the loader's (it does no linear algebra): one, set before numpy loads
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from ..serve.server import DataServer, parse_samples_per_plugin  # lazy: grpc, tensorboard (CLI start-up)
    from tfevents.summaries.runs.choose import live_chooser  # lazy: the run table (pandas), with the provider
    gc.freeze()   # the modules' objects, never garbage: out of the collector's full passes during the load
    try:
        samples = parse_samples_per_plugin(args.samples_per_plugin)
    except ValueError as err:
        print("tfevents serve: --samples-per-plugin: %s" % err, file=sys.stderr)
        return 2
    try:
        server = DataServer(logdir, host=grpc_host, port=reserved.getsockname()[1],
                            reload_interval=args.reload_interval, samples_per_plugin=samples,
                            load_threads=args.load_threads, load_processes=args.load_processes, choose=live_chooser(**run_choice.choice(args))).start()
    except OSError as err:
        print("tfevents serve: %s" % err, file=sys.stderr)
        return 1
    reserved.close()
    try:
        if dashboard is not None:
            try:
                dashboard.start(args, server.live, server.loaded)
            except (OSError, ValueError) as err:   # ssl.SSLError is an OSError
                print("tfevents serve: the dashboard's TLS: %s" % err, file=sys.stderr)
                return 1
        if args.provider_only:
            print("data provider: %s" % server.address, flush=True)
        else:
            host = "[%s]" % args.host if ":" in args.host else args.host
            tensorboard = "http://%s:%d/" % (host, args.port)
            if dashboard is None:
                print("TensorBoard on tfevents: %s (data provider %s; Ctrl-C stops)" % (tensorboard, server.address),
                      flush=True)
            else:
                with_token = "?token=" + dashboard.token if dashboard.token else ""
                root = dashboard.url(args)
                if dashboard.tensorboard_host != args.host:   # beyond localhost: only through the dashboard
                    tensorboard = root + "tensorboard/" + with_token
                print("tfevents dashboard: %s%s (TensorBoard's UI: %s; data provider %s; Ctrl-C stops)"
                      % (root, with_token, tensorboard, server.address), flush=True)
        while not stop.wait(0.5):
            if child is not None and child.poll() is not None:
                print("tfevents serve: TensorBoard exited with status %d" % child.returncode, file=sys.stderr)
                return 1
        return 0
    finally:
        if dashboard is not None:
            dashboard.stop()
        server.stop()
