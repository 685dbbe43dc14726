"""The response cache: replies to fixed inputs, kept in the store's ``cache/llm``
graph by the hash of (model, messages, parameters), so a question is asked once.

It works through anything with the answer cache's two methods (``lookup`` of a
query file with bindings, ``keep`` through an update template), such as
:class:`diagkg.env.workspace.AnswerCache` or a :class:`~diagkg.kg.store.KnowledgeStore`'s
``select``/``update`` wrapped the same way.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Mapping, Protocol

import pyoxigraph as ox

from ..kg import graphs

CACHE_GRAPH = graphs.named("cache", "llm")


class Keeper(Protocol):
    def lookup(self, name: str, bindings: Mapping[str, Any]) -> list[dict[str, Any]]: ...

    def keep(self, name: str, **values: Any) -> None: ...


class GraphCache:
    """A :class:`~diagkg.llm.client.ResponseCache` in the store's cache graph."""

    def __init__(self, keeper: Keeper):
        self.keeper = keeper

    def get(self, key: str) -> dict[str, Any] | None:
        rows = self.keeper.lookup("llm-cache-response-lookup", {"hash": ox.Literal(key)})
        if not rows:
            return None
        value = json.loads(rows[0]["response"])
        return value if isinstance(value, dict) else None

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        self.keeper.keep("llm-cache-response-store", graph=CACHE_GRAPH, entry=f"urn:uuid:{uuid.uuid4()}", hash=key,
                         model=model, response=json.dumps(response, ensure_ascii=False))
