"""What every request passes before any route sees it: its host, its origin, the size of its body.

:class:`Guard` is a plain ASGI middleware, outermost, so that nothing is read or
parsed for a request it refuses:

- **Host** (421 Misdirected Request): only the host names the server was told
  to serve (:attr:`~diagkg.server.state.ServerConfig.allowed_hosts`, by default
  ``localhost``, ``127.0.0.1`` and ``::1``), whatever the port. A page on
  another site that re-points its own name at this machine (DNS rebinding)
  sends its own name and is refused.
- **Origin** (403): a request that may write (any method but GET, HEAD and
  OPTIONS) sent by a browser from another origin is refused, unless that origin
  was named with ``--cors``. Clients that are not browsers send no ``Origin``.
- **Body size** (413): each route has a limit (:func:`body_limit`). A
  ``Content-Length`` over it is refused before a byte of the body is read; a
  body without one (chunked) is counted as it arrives and refused as soon as
  it passes the limit.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, MutableMapping
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
JSON_BODY_BYTES = 64_000          # the JSON API's bodies (a session's start, a step): small
UPLOAD_ROUTES = ("/api/scenarios", "/api/scenarios/validate")


def body_limit(path: str, max_query_bytes: int, max_upload_bytes: int) -> int:
    """The largest body a route takes: SPARQL requests ``max_query_bytes``, Turtle
    uploads ``max_upload_bytes``, everything else :data:`JSON_BODY_BYTES`."""
    if path == "/sparql":
        return max_query_bytes
    if path in UPLOAD_ROUTES:
        return max_upload_bytes
    return JSON_BODY_BYTES


def host_name(header: str) -> str:
    """The name of a Host header without its port, lower-cased (``[::1]:8000`` → ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class _TooLarge(Exception):
    pass


class Guard:
    """The ASGI middleware described in this module's docstring."""

    def __init__(self, app: App, *, allowed_hosts: tuple[str, ...], cors: tuple[str, ...],
                 max_query_bytes: int, max_upload_bytes: int):
        self.app = app
        self.any_host = "*" in allowed_hosts
        self.allowed_hosts = frozenset(h.lower().strip("[]") for h in allowed_hosts)
        self.cors = frozenset(cors)
        self.max_query_bytes = max_query_bytes
        self.max_upload_bytes = max_upload_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":           # lifespan (the server has no websockets)
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        if not self.any_host and host_name(host) not in self.allowed_hosts:
            await _plain(send, 421, f"this server does not serve the host name {host_name(host) or '(none)'!r}; "
                                    "start it with --allowed-host NAME to serve it")
            return
        method = scope.get("method", "GET")
        origin = headers.get("origin")
        if method not in SAFE_METHODS and origin is not None and not self._same_origin(origin, host):
            await _plain(send, 403, f"a request from the web page at {origin} may not write to this server "
                                    "(name its origin with --cors to let it)")
            return
        if method in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        limit = body_limit(scope.get("path", ""), self.max_query_bytes, self.max_upload_bytes)
        declared = headers.get("content-length")
        if declared is not None and (not declared.strip().isdigit() or int(declared) > limit):
            await _plain(send, 413 if declared.strip().isdigit() else 400,
                         f"the request body is larger than this route's limit of {limit:,} bytes"
                         if declared.strip().isdigit() else "the Content-Length header is not a number")
            return
        await self._counted(scope, receive, send, limit)

    def _same_origin(self, origin: str, host: str) -> bool:
        if origin in self.cors:
            return True
        try:
            return bool(host) and urlsplit(origin).netloc.lower() == host.strip().lower()
        except ValueError:
            return False

    async def _counted(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        """Run the app, refusing the body once more than ``limit`` bytes of it arrived."""
        seen = 0
        answered = False
        started = False

        async def counting_receive() -> Message:
            nonlocal seen, answered
            if answered:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    if not started:
                        answered = True
                        await _plain(send, 413, f"the request body is larger than this route's limit of {limit:,} bytes")
                        return {"type": "http.disconnect"}
                    raise _TooLarge()
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if answered:            # the 413 went out: whatever the app says after it is dropped
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except Exception:
            if not answered:
                raise


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
