"""``diagkg serve``: the SPARQL endpoint, JSON API and web page (see :mod:`diagkg.server`)."""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

from .. import errors
from ..kg.remote import is_url
from ..kg.store import ENV_VAR, KnowledgeStore, default_store_path
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
    secret = p.add_mutually_exclusive_group()
    secret.add_argument("--token-file", metavar="PATH",
                        help="file holding the token that requests which write must carry (its first line; "
                             "default: $DIAGKG_TOKEN; without a token the server is read-only)")
    secret.add_argument("--token", help="the token itself: other users of this machine see it in the process "
                                        "list, so prefer --token-file or $DIAGKG_TOKEN (a warning says so)")
    p.add_argument("--query-timeout", type=float, default=30.0, metavar="SECONDS",
                   help="time limit of a SPARQL query or update (default 30)")
    p.add_argument("--max-result-bytes", type=int, default=50_000_000, metavar="BYTES",
                   help="size limit of a SPARQL result (default 50 MB)")
    p.add_argument("--max-query-bytes", type=int, default=1_000_000, metavar="BYTES",
                   help="size limit of a SPARQL request's body (default 1 MB; 413 beyond)")
    p.add_argument("--max-upload-bytes", type=int, default=4_000_000, metavar="BYTES",
                   help="size limit of a Turtle file validated or loaded over HTTP (default 4 MB; 413 beyond)")
    p.add_argument("--workers", type=int, default=2, help="SPARQL worker processes (default 2)")
    p.add_argument("--queries-per-client", type=int, default=1, metavar="N",
                   help="query workers one client (address, with or without the token) may hold at once; its "
                        "other queries wait their turn (default 1)")
    p.add_argument("--max-sessions", type=int, default=16, metavar="N",
                   help="live sessions (the web page's, the API's) running or waiting for a person at once; "
                        "another start gets 429 (default 16)")
    p.add_argument("--session-idle", type=float, default=3600.0, metavar="SECONDS",
                   help="a live session that waits this long for a person stops, and what it played is stored "
                        "(default 3600)")
    p.add_argument("--cors", action="append", default=[], metavar="ORIGIN",
                   help="a web origin (e.g. https://yasgui.triply.cc) whose pages may query the server from a "
                        "browser; repeat for more (default: none)")
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="a host name the server answers to, whatever the port (default: localhost, 127.0.0.1, "
                        "::1 and the --host address); repeat for more; other Host headers get 421")
    p.add_argument("--allow-remote", action="append", default=[], metavar="HOST",
                   help="a host (or HOST:PORT) that SERVICE in queries and LOAD in updates may fetch from, with "
                        "the token; repeat for more (default: none)")


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ..kg.loading import ensure_shipped
    from ..server.app import ServerConfig, create_app, token_from_env
    from ..server.state import LOCAL_HOSTS

    scratch: Path | None = None
    if args.memory:     # the query workers need a store on disk: a throw-away one
        scratch = Path(tempfile.mkdtemp(prefix="diagkg-serve-"))
        path = scratch / "store"
    else:
        location = args.store or os.environ.get(ENV_VAR) or None
        if is_url(location):     # Path() would read http://host as a folder "http:/host" and serve a new store there
            raise errors.InputError(f"diagkg serve serves a store on disk, and {location} is a SPARQL server: query "
                                    "it there, or serve the folder its server keeps (stop that server first)")
        path = Path(location).expanduser() if location else default_store_path()
    try:
        store = KnowledgeStore(path, wait=args.wait, on_wait=say)
        if not store.select("system-summary"):     # a fresh store: the shipped catalogue, as other commands do
            ensure_shipped(store, notify=say)
        store.close()
        token = _token(args) or token_from_env()
        hosts = tuple(dict.fromkeys([*LOCAL_HOSTS, *_bound_name(args.host), *args.allowed_host]))
        config = ServerConfig(path, token=token, query_timeout=args.query_timeout,
                              max_result_bytes=args.max_result_bytes, workers=args.workers, cors=tuple(args.cors),
                              allowed_hosts=hosts, allow_remote=tuple(args.allow_remote),
                              max_query_bytes=args.max_query_bytes, max_upload_bytes=args.max_upload_bytes,
                              queries_per_client=args.queries_per_client, max_sessions=args.max_sessions,
                              session_idle=args.session_idle)
        app = create_app(config)
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)   # asyncio sets TCP_NODELAY only then
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


def _token(args: argparse.Namespace) -> str | None:
    """The token from ``--token-file`` (its first line) or ``--token`` (with a warning)."""
    if args.token:
        print("warning: a token given with --token is visible to every user of this machine in the process "
              "list (ps); give it with --token-file PATH or $DIAGKG_TOKEN instead", file=sys.stderr, flush=True)
        return str(args.token)
    if args.token_file:
        try:
            lines = Path(args.token_file).expanduser().read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise errors.InputError(f"cannot read the token file {args.token_file}: {exc}") from None
        token = lines[0].strip() if lines else ""
        if not token:
            raise errors.InputError(f"the token file {args.token_file} is empty")
        return token
    return None


def _bound_name(host: str) -> list[str]:
    """The address the server listens on, when it is one address (not every interface)."""
    return [] if host in ("0.0.0.0", "::", "") else [host.strip("[]").lower()]
