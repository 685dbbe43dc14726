"""What every route of ``diagkg serve`` shares: the configuration, the store, the token check."""

from __future__ import annotations

import hmac
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Coroutine

from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute

from ..kg.store import KnowledgeStore
from .scheduling import Scheduler
from .sparql_pool import QueryPool, fingerprint

TOKEN_ENV = "DIAGKG_TOKEN"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


@dataclass
class ServerConfig:
    """How the server runs."""

    store_path: Path
    token: str | None = None
    query_timeout: float = 30.0          # seconds a SPARQL query (or update) may run
    max_result_bytes: int = 50_000_000   # size of a serialised SPARQL result
    workers: int = 2                     # SPARQL worker processes
    cors: tuple[str, ...] = ()           # web origins allowed to call the server from a browser (YASGUI elsewhere)
    allowed_hosts: tuple[str, ...] = LOCAL_HOSTS   # Host header names served (421 otherwise); "*": any
    allow_remote: tuple[str, ...] = ()   # hosts (or host:port) SERVICE and LOAD may reach, with the token
    max_query_bytes: int = 1_000_000     # body of a SPARQL request
    max_upload_bytes: int = 4_000_000    # body of a Turtle upload (validate, load)
    queries_per_client: int = 1          # query workers one client may hold at once
    max_sessions: int = 16               # live sessions running or waiting at once (a thread each; 429 beyond)
    session_idle: float = 3600.0         # seconds a live session waits for a person before it stops (stored)
    extra: dict[str, Any] = field(default_factory=dict)


class ServerState:
    """What the routes share: the store (refreshed when another process commits), the query pool."""

    def __init__(self, config: ServerConfig):
        self.config = config
        self.store = KnowledgeStore(config.store_path)
        self.pool: QueryPool | None = None
        self._seen: tuple[object, ...] = ()
        self._lock = threading.Lock()
        self.scheduler = Scheduler(self.query_pool, workers=config.workers, per_client=config.queries_per_client,
                                   wait=config.query_timeout)

    def fresh(self) -> KnowledgeStore:
        """The store, reopened for reading if another process has committed since."""
        path = str(self.config.store_path)
        with self._lock:
            now = fingerprint(path)
            if now != self._seen and self.store.refresh_now():    # (mid-commit: the snapshot at hand serves)
                self._seen = now
        return self.store

    def query_pool(self) -> QueryPool:
        with self._lock:
            if self.pool is None:
                self.pool = QueryPool(self.config.store_path, size=self.config.workers,
                                      timeout=self.config.query_timeout)
            return self.pool

    def close(self) -> None:
        self.scheduler.close()
        if self.pool is not None:
            self.pool.close()
            self.pool = None


def state_of(request: Request) -> ServerState:
    state: ServerState = request.app.state.diagkg
    return state


def check_token(request: Request) -> None:
    """Raise 403 unless the request carries the configured token."""
    token = state_of(request).config.token
    if not token:
        raise HTTPException(403, "this server is read-only: it was started without a token "
                                 f"(give `diagkg serve --token-file PATH` or set {TOKEN_ENV})")
    if not has_token(request):
        raise HTTPException(403, "this request writes to the store and needs the server's token "
                                 "(Authorization: Bearer TOKEN)")


def has_token(request: Request) -> bool:
    """Does the request carry the configured token (Bearer, or Basic with the token as password)?"""
    token = state_of(request).config.token
    if not token:
        return False
    given = ""
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        given = auth[7:].strip()
    elif auth.lower().startswith("basic "):
        import base64
        import binascii

        try:
            given = base64.b64decode(auth[6:].strip()).decode("utf-8").split(":", 1)[-1]
        except (binascii.Error, UnicodeDecodeError):
            given = ""
    return bool(given) and hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8"))


def client_of(request: Request) -> str:
    """Who a request comes from, for fair shares: its address, and whether it holds the token
    (so that anonymous requests through one proxy cannot crowd out the token's holder)."""
    address = request.client.host if request.client else "?"
    return f"{address}+token" if has_token(request) else address


def is_json(content_type: str | None) -> bool:
    """Whether a request's Content-Type says JSON (none said: read as JSON, as FastAPI reads it)."""
    if not content_type:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class TokenFirst(APIRoute):
    """A route whose token (a ``Depends(check_token)`` among its dependencies) is checked
    before its body is read or parsed: a request without it gets 403, never 400 or 422.
    A route whose body is a JSON object refuses another content type with 415 (a form, the
    default of ``curl -d``, was read as one string: 422 "Input should be a valid dictionary")."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        inner = super().get_route_handler()
        token = any(d.dependency is check_token for d in self.dependencies)
        json_body = self.body_field is not None
        if not (token or json_body):
            return inner

        async def handler(request: Request) -> Response:
            if token:
                check_token(request)
            if json_body and not is_json(request.headers.get("content-type")):
                raise HTTPException(415, "send the body as a JSON object (Content-Type: application/json), "
                                         f"not {request.headers.get('content-type')}")
            return await inner(request)

        return handler


def token_from_env() -> str | None:
    return os.environ.get(TOKEN_ENV) or None
