"""``diagkg serve``: the SPARQL endpoint, JSON API and web page (see :mod:`diagkg.server`)."""

from __future__ import annotations

import argparse
import shutil
import socket
import sys
import tempfile
from pathlib import Path

from .. import errors
from ..kg.store import KnowledgeStore, default_store_path
from .output import EXIT_OK, say


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser],
               formatter: type[argparse.HelpFormatter]) -> None:
    """Register ``serve`` (called by :func:`diagkg.cli.build_parser`)."""
    help_ = ("Serve the store over HTTP: a SPARQL 1.1 endpoint (/sparql), a JSON API (/api, /docs) "
             "and a web page (/); read-only unless a token is given.")
    p = sub.add_parser("serve", help=help_, description=help_, formatter_class=formatter)
    p.set_defaults(func=cmd_serve)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--token", help="token that requests which write must carry (default: $DIAGKG_TOKEN; "
                                   "without one the server is read-only)")
    p.add_argument("--query-timeout", type=float, default=30.0, metavar="SECONDS",
                   help="time limit of a SPARQL query (default 30)")
    p.add_argument("--max-result-bytes", type=int, default=50_000_000, metavar="BYTES",
                   help="size limit of a SPARQL result (default 50 MB)")
    p.add_argument("--workers", type=int, default=2, help="SPARQL worker processes (default 2)")
    p.add_argument("--cors", action="append", default=[], metavar="ORIGIN",
                   help="a web origin (e.g. https://yasgui.triply.cc) whose pages may query the server from a "
                        "browser; repeat for more (default: none)")


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ..kg.loading import ensure_shipped
    from ..server.app import ServerConfig, create_app, token_from_env

    scratch: Path | None = None
    if args.memory:     # the query workers need a store on disk: a throw-away one
        scratch = Path(tempfile.mkdtemp(prefix="diagkg-serve-"))
        path = scratch / "store"
    else:
        path = Path(args.store).expanduser() if args.store else default_store_path()
    try:
        store = KnowledgeStore(path, wait=args.wait, on_wait=say)
        if not store.select("system-summary"):     # a fresh store: the shipped catalogue, as other commands do
            ensure_shipped(store, notify=say)
        store.close()
        token = args.token or token_from_env()
        config = ServerConfig(path, token=token, query_timeout=args.query_timeout,
                              max_result_bytes=args.max_result_bytes, workers=args.workers, cors=tuple(args.cors))
        app = create_app(config)
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((args.host, args.port))
        except OSError as exc:
            raise errors.InputError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
        sock.listen(128)     # connections wait in the queue until the app has started
        host, port = sock.getsockname()[:2]
        print(f"diagkg serve: store {path}; {'writes need the token' if token else 'read-only (no token)'}",
              file=sys.stderr, flush=True)
        print(f"listening on http://{host}:{port}/", flush=True)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        server.run(sockets=[sock])
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return EXIT_OK
