"""``diagkg mcp``: a diagnostic session served to an MCP client (see :mod:`diagkg.server.mcp`)."""

from __future__ import annotations

import argparse
import os
import socket
import sys

from .. import errors
from .output import EXIT_OK, open_store, say, scenario_ref
from .output import seed as seed_arg


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser],
               formatter: type[argparse.HelpFormatter]) -> None:
    """Register ``mcp`` (called by :func:`diagkg.cli.build_parser`)."""
    help_ = ("Serve a diagnostic session to an MCP client (an agent framework, a desktop assistant): the service "
             "agent's work as tools (briefing, affordable_actions, perform_action, state_hypothesis, observations, "
             "give_up); the trajectory is stored under the client's name. Standard input/output by default.")
    p = sub.add_parser("mcp", help=help_, description=help_, formatter_class=formatter)
    p.set_defaults(func=cmd_mcp, token=None)     # the token comes from a file or the environment only
    p.add_argument("--scenario", required=True, metavar="N|ID|FILE",
                   help="a scenario of the store by number or id, or a scenario file (validated against the "
                        "store's systems and loaded first)")
    p.add_argument("--replace", action="store_true", help="with a FILE: replace a stored scenario it collides with")
    p.add_argument("--budget", type=int, metavar="ROUNDS", help="override the scenario's action budget")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the first session (loose connections; default 0)")
    p.add_argument("--idle", type=float, default=1800.0, metavar="SECONDS",
                   help="end a session (surrender, stored) when its client sends no move for this long "
                        "(default 1800; 0: no limit)")
    p.add_argument("--http", type=int, metavar="PORT",
                   help="serve streamable HTTP at http://HOST:PORT/mcp instead of standard input/output (0 picks "
                        "a free port); every request needs the token")
    p.add_argument("--host", default="127.0.0.1", help="with --http: the address to bind (default 127.0.0.1)")
    p.add_argument("--token-file", metavar="PATH",
                   help="with --http: the file holding the token requests must carry (its first line; default "
                        "$DIAGKG_TOKEN)")
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="with --http: a host name the server answers to besides localhost, 127.0.0.1, ::1 and "
                        "the --host address; repeat for more")


def cmd_mcp(args: argparse.Namespace) -> int:
    from ..env.workspace import resolve_scenario
    from ..server.mcp import McpHost

    if args.budget is not None and args.budget < 1:
        raise errors.InputError(f"--budget must be at least 1 round, got {args.budget}")
    if args.idle < 0:
        raise errors.InputError(f"--idle must be 0 (no limit) or a number of seconds, got {args.idle:g}")
    http = args.http is not None
    if not http and (args.token_file or args.allowed_host or args.host != "127.0.0.1"):
        raise errors.InputError("--host, --token-file and --allowed-host go with --http PORT")
    token = _token(args) if http else None
    with open_store(args, write=True) as store:
        store.check_writable()
        scenario = resolve_scenario(store, scenario_ref(args, store), say)
        host = McpHost(store, scenario, seed=args.seed, budget=args.budget, idle_seconds=args.idle or None,
                       notify=say)
        say(f"diagkg mcp: scenario {scenario.number} ({scenario.id}) on store {store.location}; "
            f"{'streamable HTTP' if http else 'MCP over standard input/output'}")
        if http:
            assert token is not None
            _serve_http(host, args, token)
        else:
            import anyio

            _stop_on_term(host)
            anyio.run(host.serve_stdio)
        _said(host)
    if not http:
        # the client gives its server a moment to exit before it kills it: every trajectory is stored and the
        # store closed, so exit now rather than wait for the transport's idle worker threads to wind down
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_OK)
    return EXIT_OK


def _said(host: object) -> None:
    """Each session's end and where its trajectory is: in the store, or the file it was kept in."""
    for session in getattr(host, "sessions", ()):
        if session.result is not None:
            where = (f"not stored: {session.error}" if isinstance(session.error, errors.TrajectoryKept)
                     else f"trajectory {session.result.trajectory}")
            say(f"session {session.name}: {session.result.end}, {where}")


def _stop_on_term(host: object) -> None:
    """SIGTERM (an MCP client closes its server's input, waits a moment, then sends it; or it stops the server
    without closing it): the session in progress is ended and stored, then the process exits. Standard input
    may still be open, and the transport reads it in a thread no cancellation reaches, so the process does
    not wait for the transport: a thread stores the session and exits (further SIGTERMs are ignored meanwhile)."""
    import signal
    import threading

    from ..server.mcp import McpHost

    assert isinstance(host, McpHost)

    def finish() -> None:
        code = EXIT_OK
        try:
            host.abandon(detail="the MCP client stopped the server (SIGTERM)")
            _said(host)
        except BaseException as exc:  # noqa: BLE001 - said, then the process ends anyway
            print(f"error: the session could not be stored: {exc}", file=sys.stderr, flush=True)
            code = 3
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        threading.Thread(target=finish, name="diagkg-mcp-stop", daemon=True).start()

    signal.signal(signal.SIGTERM, stop)


def _token(args: argparse.Namespace) -> str:
    from ..server.state import TOKEN_ENV, token_from_env
    from .serve import _token as token_option

    token = token_option(args) or token_from_env()
    if not token:
        raise errors.InputError(f"--http needs a token (a session writes to the store): give --token-file PATH or "
                                f"set {TOKEN_ENV}")
    return token


def _serve_http(host: object, args: argparse.Namespace, token: str) -> None:
    import uvicorn

    from ..server.mcp import MCP_PATH, McpHost
    from ..server.state import LOCAL_HOSTS
    from .serve import _bound_name

    assert isinstance(host, McpHost)
    names = tuple(dict.fromkeys([*LOCAL_HOSTS, *_bound_name(args.host), *args.allowed_host]))
    app = host.http_app(token=token, allowed_hosts=names)
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.http))
    except OSError as exc:
        raise errors.InputError(f"cannot listen on {args.host}:{args.http}: {exc.strerror}") from None
    sock.listen(128)
    bound, port = sock.getsockname()[:2]
    print(f"listening on http://{bound}:{port}{MCP_PATH}", flush=True)
    try:
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    finally:
        host.abandon(detail="the MCP server stopped")
        print("diagkg mcp: stopped", file=sys.stderr, flush=True)
