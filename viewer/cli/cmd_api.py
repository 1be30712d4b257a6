"""``tfevents api LOGDIR``: tfevents' dashboard (at ``/``) and HTTP JSON API over a live logdir (``viewer/dashboard/``;
issue 34).

Binds 127.0.0.1 by default. Any other ``--host`` needs a token: generated (``secrets``) and printed in the URL, or
``--token T`` (or ``$TFEVENTS_API_TOKEN``); ``--no-token`` serves without one, with a warning. The URL is printed
after the first reload pass. Needs the ``dashboard`` extra (Starlette and uvicorn), imported only here.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys

from ..dashboard.access import root_url
from .arg_types import positive_float
from . import run_choice
from .server_options import (access_problem, add_access_options, add_load_options, add_page_options,
                             choose_token)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logdir", help="directory of runs: a local path or an fsspec URL (s3://, gs://, ...)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1; any other needs a token or --no-token)")
    parser.add_argument("--port", type=int, default=6007, help="HTTP port (default 6007; 0: any free)")
    add_access_options(parser)
    add_page_options(parser)
    add_load_options(parser)
    run_choice.add_arguments(parser)
    parser.add_argument("--reload-interval", type=positive_float, default=5.0,
                        help="seconds between reload passes (default 5)")
    parser.add_argument("--samples-per-plugin", metavar="PLUGIN=N,...",
                        help="points kept per series by plugin, e.g. scalars=1000 ('all' or 0: every point)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each reload pass")


def _fail(message: str, status: int = 2) -> int:
    print("tfevents api: %s" % message, file=sys.stderr)
    return status


def run(args) -> int:
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="tfevents api: %(message)s")
    problem = access_problem(args)
    if problem:
        return _fail(problem)
    status = run_choice.where_problem(args, "tfevents api")
    if status:
        return status
    remote = "://" in args.logdir
    if not remote and not os.path.isdir(args.logdir):
        return _fail("no such directory: %s" % args.logdir)
    try:
        from ..dashboard import server  # lazy: Starlette and uvicorn, the `dashboard` extra
    except ModuleNotFoundError as err:
        if err.name not in ("starlette", "uvicorn"):
            raise
        return _fail("needs the dashboard extra: pip install 'tfevents[dashboard]' (%s is missing)" % err.name)
    from tfevents.summaries.live.loader import LiveLogdir, parse_samples_per_plugin  # lazy: numpy, after the extra
    from tfevents.summaries.live.workers import default_processes  # lazy: likewise
    try:
        samples = parse_samples_per_plugin(args.samples_per_plugin)
    except ValueError as err:
        return _fail("--samples-per-plugin: %s" % err)

    token = choose_token(args, "tfevents api")
    try:
        sock = server.bind(args.host, args.port)
    except OSError as err:
        return _fail("cannot bind %s:%d: %s" % (args.host, args.port, err), 1)
    from tfevents.summaries.runs.choose import live_chooser  # lazy: the run table, after the extra
    live = LiveLogdir(args.logdir if remote else os.path.abspath(args.logdir), samples,
                      choose=live_chooser(**run_choice.choice(args)),
                      processes=args.load_processes or default_processes())
    try:
        api = server.api_server(live, sock, token=token, path_prefix=args.path_prefix, certfile=args.certfile,
                                keyfile=args.keyfile, reload_interval=args.reload_interval, aggregate=args.aggregate)
    except (OSError, ValueError) as err:   # ssl.SSLError is an OSError
        sock.close()
        return _fail("TLS: %s" % err, 1)
    reloader = server.Reloader(live, args.reload_interval)
    reloader.reload_once()
    reloader.start()
    root = root_url(args.host, sock.getsockname()[1], args.path_prefix, bool(args.certfile))
    with_token = "?token=" + token if token else ""
    print("tfevents API: %sapi/v1/runs%s (the dashboard: %s%s; Ctrl-C stops)" % (root, with_token, root, with_token),
          flush=True)
    try:
        api.run(sockets=[sock])
    finally:
        reloader.stop()
        sock.close()
    return 0
