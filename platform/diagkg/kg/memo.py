"""One cache discipline for derived data: a bounded memo keyed by the versions of what it derives from.

Everything diagkg remembers between calls (simulators, scenarios read from the store, assistants'
views, what parts afford, what worlds showed…) is *derived*: computed from named graphs. Its key
carries the versions of those graphs (:meth:`~diagkg.kg.store.KnowledgeStore.version_of`, which
every write to a graph changes: :mod:`diagkg.kg.revision`), so a change to the knowledge never
reaches an old entry: the new version misses, and the old entry ages out. Each memo is bounded
(the least recently used entry goes first) and named, and every memo of the process can be listed
and emptied (:func:`memos`, :func:`clear_all`).

::

    _SIMULATORS = Memo("simulators", 16)
    key = (store.version_of(system_graph), store.version_of(graphs.ONTOLOGY), key)
    sim = _SIMULATORS.get_or(key, lambda: Simulator.from_store(store, key))
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")

_ALL: "weakref.WeakSet[Memo[object]]" = weakref.WeakSet()


class Memo(Generic[V]):
    """A bounded, least-recently-used memo of derived values (thread-safe for single operations)."""

    def __init__(self, name: str, limit: int):
        if limit < 1:
            raise ValueError("a memo holds at least one entry")
        self.name = name
        self.limit = limit
        self._entries: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0
        _ALL.add(self)       # type: ignore[arg-type]

    def get(self, key: Hashable) -> V | None:
        """The value kept under ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._entries.get(key)
            if value is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: Hashable, value: V) -> V:
        """Keep ``value`` under ``key`` (the least recently used entry goes when the memo is full)."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)
        return value

    def get_or(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value kept under ``key``, made (outside the lock) and kept when there is none."""
        known = self.get(key)
        return known if known is not None else self.put(key, make())

    def pop(self, key: Hashable) -> V | None:
        with self._lock:
            return self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __repr__(self) -> str:
        return f"Memo({self.name!r}, {len(self)}/{self.limit}, hits={self.hits}, misses={self.misses})"


def memos() -> list[Memo[object]]:
    """Every memo of the process, by name."""
    return sorted(_ALL, key=lambda m: m.name)


def clear_all() -> None:
    """Empty every memo of the process (nothing derived survives: e.g. between benchmark rounds)."""
    for memo in list(_ALL):
        memo.clear()


__all__ = ["Memo", "clear_all", "memos"]
