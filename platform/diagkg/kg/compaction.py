"""Compacting an on-disk store: every commit leaves table files of its own, which overlap, and every
read looks into each of them until RocksDB merges them; a process that writes for a moment and lets
go of the lock (a campaign's commit, a run) gives it no time to. After 20,000 trajectories written by
a campaign, ``affordable-pairs`` took 76 ms instead of 26 ms until the store was compacted.

A compaction takes time in proportion to the whole store (0.3 s for the shipped catalogue and 2,000
trajectories, 14 s at 100,000) and changes no quad: a campaign compacts the store at its end once its
writes are a fair share of it (:func:`compact_if_grown`), and ``diagkg compact`` does it on demand.
In memory or on a server there is nothing to do.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Callable

import pyoxigraph as ox

from ..errors import StoreLockedError
from .store import KnowledgeStore

GROWTH = 0.2     # a campaign whose writes grew the store's files by this share compacts it at its end


def table_files(store: KnowledgeStore) -> list[Path]:
    """The on-disk store's table files (``*.sst``); none in memory or on a server."""
    return list(store.path.glob("*.sst")) if store.path is not None else []


def disk_bytes(store: KnowledgeStore) -> int:
    """Bytes in the store's :func:`table_files`."""
    total = 0
    for f in table_files(store):
        with contextlib.suppress(FileNotFoundError):     # another process's compaction removed it meanwhile
            total += f.stat().st_size
    return total


def optimize(store: KnowledgeStore, wait: float | None = None) -> float:
    """Compact ``store``'s files (pyoxigraph's ``Store.optimize``) under the write lock, waiting for it
    as :meth:`KnowledgeStore.writing` does; returns the seconds it took (0: nothing to do)."""
    if store.path is None or store.read_only:
        return 0.0
    t0 = time.perf_counter()
    with store.writing(wait) as w:
        if isinstance(w, ox.Store):
            w.optimize()
    return time.perf_counter() - t0


def compact_if_grown(store: KnowledgeStore, size: int, committed: int,
                     notify: Callable[[str], None] | None = None) -> float:
    """Compact ``store`` once a campaign that found its files at ``size`` bytes (:func:`disk_bytes`) and
    committed ``committed`` trajectories has grown them by :data:`GROWTH` of that or more (a small campaign
    on a large store leaves it to ``diagkg compact``). Another process holding the lock more than 5 s is
    not waited for. Returns the seconds it took (0: not compacted)."""
    if not committed or store.path is None:
        return 0.0
    grown = disk_bytes(store) - size
    if grown < GROWTH * size:
        return 0.0
    try:
        seconds = optimize(store, wait=min(store.wait, 5.0))
    except StoreLockedError:
        if notify:
            notify("the store was not compacted: another process is writing it (`diagkg compact` does it later)")
        return 0.0
    if notify:
        notify(f"compacted the store in {seconds:.1f} s (the campaign's writes grew its files by {grown / 1e6:.1f} MB)")
    return seconds
