"""Stores holding the shipped catalogue."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from diagkg.kg.store import KnowledgeStore


def catalog_store() -> KnowledgeStore:
    """A new in-memory store holding the shipped catalogue, loaded as a user would."""
    from diagkg.kg.loading import load_shipped

    s = KnowledgeStore.memory()
    load_shipped(s)
    return s


@lru_cache(maxsize=1)
def shipped_store() -> KnowledgeStore:
    """One in-memory store with the shipped catalogue for the whole test session:
    read it, never write it (runs that store trajectories use ``catalog_store()``)."""
    return catalog_store()


@lru_cache(maxsize=1)
def _catalog_quads() -> tuple:
    return tuple(shipped_store().raw.quads_for_pattern(None, None, None, None))


def catalog_copy() -> KnowledgeStore:
    """A new in-memory store holding what ``catalog_store()`` holds, its quads copied from ``shipped_store()``
    (a tenth of the time of loading): the caller's own, to write as it likes."""
    s = KnowledgeStore.memory()
    s.raw.extend(_catalog_quads())
    return s


def loaded_quads(files: dict[Path, str]) -> list:
    """The quads a store holds once ``files`` (path -> Turtle, written here) are validated and loaded: what a test
    module loads once and copies into a store of its own per test."""
    loaded = KnowledgeStore.memory()
    try:
        load_files_at(loaded, files)
        return list(loaded.raw.quads_for_pattern(None, None, None, None))
    finally:
        loaded.close()


def load_files_at(store: KnowledgeStore, files: dict[Path, str]) -> None:
    """Write ``files`` (path -> Turtle) and load them into ``store``, as ``diagkg load`` would."""
    from diagkg.kg.loading import load_files

    for path, text in files.items():
        path.write_text(text)
    load_files(store, list(files))


def simulator_of(path: Path, text: str, key: str):
    """The simulator of system ``key``, described by ``text`` (written to ``path``) and loaded into a store of its own
    in memory: what a test of the physics of a system it writes starts from."""
    from diagkg.env.service import simulator_for

    store = KnowledgeStore.memory()
    load_files_at(store, {path: text})
    return simulator_for(store, key)
