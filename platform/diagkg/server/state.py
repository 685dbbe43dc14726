"""What every route of ``diagkg serve`` shares: the configuration, the store, the token check."""

from __future__ import annotations

import hmac
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import HTTPException, Request

from ..kg.store import KnowledgeStore
from .sparql_pool import QueryPool, fingerprint

TOKEN_ENV = "DIAGKG_TOKEN"


@dataclass
class ServerConfig:
    """How the server runs."""

    store_path: Path
    token: str | None = None
    query_timeout: float = 30.0          # seconds a SPARQL query may run
    max_result_bytes: int = 50_000_000   # size of a serialised SPARQL result
    workers: int = 2                     # SPARQL worker processes
    cors: tuple[str, ...] = ()           # web origins allowed to call the server from a browser (YASGUI elsewhere)
    extra: dict[str, Any] = field(default_factory=dict)


class ServerState:
    """What the routes share: the store (refreshed when another process commits), the query pool."""

    def __init__(self, config: ServerConfig):
        self.config = config
        self.store = KnowledgeStore(config.store_path)
        self.pool: QueryPool | None = None
        self._seen: tuple[tuple[str, int, int], ...] = ()
        self._lock = threading.Lock()

    def fresh(self) -> KnowledgeStore:
        """The store, reopened for reading if another process has committed since."""
        path = str(self.config.store_path)
        with self._lock:
            now = fingerprint(path)
            if now != self._seen:
                self.store.refresh()
                self._seen = now
        return self.store

    def query_pool(self) -> QueryPool:
        with self._lock:
            if self.pool is None:
                self.pool = QueryPool(self.config.store_path, size=self.config.workers,
                                      timeout=self.config.query_timeout)
            return self.pool

    def close(self) -> None:
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
                                 f"(give `diagkg serve --token` or set {TOKEN_ENV})")
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
    if not given or not hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8")):
        raise HTTPException(403, "this request writes to the store and needs the server's token "
                                 "(Authorization: Bearer TOKEN)")


def token_from_env() -> str | None:
    return os.environ.get(TOKEN_ENV) or None
