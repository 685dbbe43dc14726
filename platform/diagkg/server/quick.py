"""Queries that cannot be slow, answered in the server's process: they never wait behind the workers.

A query of the simplest shape (one triple pattern or none, stopping at its first
solution or after a bounded ``LIMIT``: :func:`diagkg.kg.sparql_scan.is_quick`)
does a bounded amount of work whatever the store holds, so it needs neither a
worker process (to be stopped at the time limit) nor a turn among its client's
queries: it runs at once, on the server's read-only snapshot of the store
(reopened when another process has committed), with the same size limit and the
same serialisations as a worker's answer (:func:`diagkg.server.sparql_pool.answer`).

:class:`QuickQueries` answers ``GET /sparql`` with such a query before any
routing (inside :class:`~diagkg.server.guard.Guard` and CORS, which still see
every request): the framework's per-request work is most of the cost of a query
this small. Anything else (another parameter, a text that is not quick, or one
that would fetch: :func:`~diagkg.kg.sparql_scan.scan`) goes on to the route.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

import pyoxigraph as ox

from ..kg.sparql_scan import is_quick
from .guard import App, Receive, Scope, Send
from .sparql_pool import Reply, Request, answer, http_of, parse_accept
from .state import ServerState

__all__ = ["QuickQueries", "answer_here", "is_quick"]

_PARAMS = frozenset({"query", "default-graph-uri", "named-graph-uri"})


def answer_here(state: ServerState, work: Request) -> Reply:
    """Answer ``work`` (a quick query) here."""
    for attempt in range(4):
        try:
            raw = state.fresh().raw
            assert isinstance(raw, ox.Store)        # the server's store is on disk
            return answer(raw, work)
        except OSError as exc:          # a writer's compaction removed a file under the snapshot
            state.store.refresh()
            if attempt == 3:
                return Reply("error", message=f"{type(exc).__name__}: {exc}")
    raise AssertionError("unreachable")    # pragma: no cover


class QuickQueries:
    """ASGI middleware: ``GET /sparql?query=…`` with a quick query, answered without routing."""

    def __init__(self, app: App, *, state: ServerState):
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        work = self._quick(scope) if scope["type"] == "http" and scope.get("path") == "/sparql" else None
        if work is None:
            await self.app(scope, receive, send)
            return
        status, media, body = http_of(answer_here(self.state, work))
        if media.startswith("text/"):
            media += "; charset=utf-8"
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", media.encode("latin-1")),
                                (b"content-length", str(len(body)).encode("latin-1"))]})
        await send({"type": "http.response.body", "body": body})

    def _quick(self, scope: Scope) -> Request | None:
        if scope.get("method") != "GET":
            return None
        pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        queries = [v for k, v in pairs if k == "query"]
        if len(queries) != 1 or any(k not in _PARAMS for k, _ in pairs) or not is_quick(queries[0]):
            return None          # the route answers it (and says what is wrong with it)
        accept = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == b"accept"), None)
        return Request("query", queries[0], parse_accept(accept), self.state.config.max_result_bytes,
                       tuple(v for k, v in pairs if k == "default-graph-uri"),
                       tuple(v for k, v in pairs if k == "named-graph-uri"))
