"""The options of a server that may be reached beyond localhost, declared once for ``tfevents serve`` and
``tfevents api``: its token (``--token``, ``$TFEVENTS_API_TOKEN``, generated; ``--no-token``), ``--path-prefix`` and
TLS (``--certfile``/``--keyfile``); and what the dashboard's page shows (``--aggregate``). A non-loopback ``--host``
needs a token: generated (``secrets``) and printed in the URL as Jupyter does, unless given; ``--no-token`` serves
without one, with a warning. And how it loads the logdir (``--load-processes``). Stdlib only."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Optional

from ..dashboard.access import TOKEN_CHARACTERS, is_loopback, new_token
from .arg_types import regex

__all__ = ["TOKEN_ENV", "add_access_options", "add_page_options", "add_load_options", "access_problem",
           "choose_token"]

TOKEN_ENV = "TFEVENTS_API_TOKEN"   # the token, kept out of the process list


def add_access_options(parser: argparse.ArgumentParser) -> None:
    token = parser.add_mutually_exclusive_group()
    token.add_argument("--token", default=os.environ.get(TOKEN_ENV) or None,
                       help="the token every request must carry (default: $%s; beyond localhost: generated); "
                            "letters, digits and ._~- only" % TOKEN_ENV)
    token.add_argument("--no-token", action="store_true",
                       help="serve a non-loopback --host without a token (anyone who reaches it reads the logdir)")
    parser.add_argument("--path-prefix", default="/", metavar="/PREFIX/",
                        help="serve everything under this path (behind a reverse proxy), e.g. /tfevents/")
    parser.add_argument("--certfile", help="TLS certificate (PEM): serve https")
    parser.add_argument("--keyfile", help="TLS private key (PEM) of --certfile")


def add_page_options(parser: argparse.ArgumentParser) -> None:
    """What the dashboard's page shows, as ``tfevents report``'s options of the same names."""
    parser.add_argument("--aggregate", type=regex, metavar="REGEX",
                        help="group runs by this regex (as tfevents report --aggregate): each group's band")


def add_load_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--load-processes", type=int, default=None, metavar="N",
                        help="worker processes for the first read of a big local logdir (default: the CPUs, at "
                             "most 4; 1: read in the server's own process)")


def access_problem(args) -> Optional[str]:
    """What is wrong with the options (None: nothing)."""
    if args.keyfile and not args.certfile:
        return "--keyfile needs --certfile"
    if args.token is not None and not TOKEN_CHARACTERS.fullmatch(args.token):
        return "--token: give letters, digits and ._~- only (at least one)"
    return None


def choose_token(args, program: str) -> Optional[str]:
    """The token to require: ``--token``'s, else a fresh one beyond localhost unless ``--no-token`` (then a warning
    on stderr naming ``program``), else None."""
    token = args.token
    if token is None and not args.no_token and not is_loopback(args.host):
        token = new_token()
    if token is None and not is_loopback(args.host):
        print("%s: WARNING: serving %s without a token: anyone who reaches this address reads the logdir"
              % (program, args.host), file=sys.stderr, flush=True)
    return token
