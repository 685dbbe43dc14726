"""The campaign's writer: group commit, the store's lock taken per commit only.

Sessions finish one by one; the writer gathers what they bring and commits it in batches, one
transaction each: every trajectory graph of the batch (each carries its own campaign entry), the
slot tallies they changed (written once per batch, from the tallies in memory), the failed
trajectories they replace (dropped), and the campaign records made meanwhile (closed batches, a
stop at the cost limit). A batch is committed when it holds :data:`MAX_BATCH` trajectories or
:data:`MAX_TRIPLES` triples, when its oldest one has waited :data:`LATENCY` seconds, before
anything reads what it holds (an adaptive batch's assessment) and at the end. A commit costs a
fixed part (opening the store for writing, flushing it) and a part per triple: when sessions
finish quickly, batches grow to keep the fixed part small, and the lock is held about as long.

The write lock is taken for each commit and released after it: between commits any other writer
(``diagkg run``, ``load``, a server's session) takes its turn. When another writer keeps the lock,
a batch that is merely due waits for the next try (sessions go on; after :data:`BACKLOG` batches'
worth the campaign waits as long as the store's ``wait``), and a batch that must be committed
(before a read, at the end) waits for as long as it takes, saying so.

Killed at any moment, the store holds whole batches: never a trajectory without its campaign
entry or its tally; what was not committed yet is run again on resume, never twice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable

import pyoxigraph as ox

from ..errors import StoreLockedError

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore
    from .tally import Tallies

MAX_BATCH = 1024         # trajectories in one commit at most
MAX_TRIPLES = 40_000     # and triples: a commit holds the lock about 1 s on a loaded 2-core machine
LATENCY = 1.0            # seconds a finished trajectory waits at most before its commit is due
PATIENCE = 1.0           # seconds a due commit waits for another writer before trying again later
BACKLOG = 4              # batches' worth of trajectories after which a due commit waits as the store says
RETRY_PAUSE = 1.0        # seconds between two tries of a commit that must go through


@dataclass
class CampaignWriter:
    """Gathers a campaign's writes and commits them in batches (see the module's notes)."""

    store: KnowledgeStore
    tallies: Tallies
    max_batch: int = MAX_BATCH
    max_triples: int = MAX_TRIPLES
    latency: float = LATENCY
    notify: Callable[[str], None] | None = None
    clock: Callable[[], float] = time.monotonic
    commits: int = 0                  # transactions made
    committed: int = 0                # trajectories committed
    longest_commit: float = 0.0       # seconds one commit took at most, waiting for the lock included
    longest_hold: float = 0.0         # seconds one commit held the lock at most (on disk)
    _graphs: dict[ox.NamedNode, list[ox.Triple]] = field(default_factory=dict)
    _drop: list[ox.NamedNode] = field(default_factory=list)
    _slots: set[tuple[str, int]] = field(default_factory=set)
    _records: list[ox.Quad] = field(default_factory=list)
    _since: float | None = None
    _told: bool = False
    _triples: int = 0

    # -- gathering ----------------------------------------------------------
    def trajectory(self, graph: ox.NamedNode, triples: list[ox.Triple], slot: tuple[str, int],
                   replaces: ox.NamedNode | None = None) -> None:
        """A finished session's trajectory graph (with its campaign entry); its slot's tally is
        already updated in :attr:`tallies`; ``replaces``: a failed trajectory's graph to drop."""
        self._graphs[graph] = triples
        self._triples += len(triples)
        self._slots.add(slot)
        if replaces is not None:
            self._drop.append(replaces)
        self._started()

    def records(self, quads: Iterable[ox.Quad]) -> None:
        """Statements added to the campaign's graphs (batches closed, a stop)."""
        self._records.extend(quads)
        self._started()

    def _started(self) -> None:
        if self._since is None:
            self._since = self.clock()

    @property
    def pending(self) -> int:
        """Trajectories not committed yet."""
        return len(self._graphs)

    @property
    def empty(self) -> bool:
        return not (self._graphs or self._records or self._drop)

    def due(self) -> bool:
        """Whether a commit is due (full batch, or the oldest write has waited long enough)."""
        if self.empty:
            return False
        assert self._since is not None
        return (self.pending >= self.max_batch or self._triples >= self.max_triples
                or self.clock() - self._since >= self.latency)

    def time_left(self) -> float | None:
        """Seconds until a commit is due by latency (None when nothing waits)."""
        if self._since is None:
            return None
        return max(0.0, self.latency - (self.clock() - self._since))

    # -- committing ---------------------------------------------------------
    def commit_if_due(self) -> int:
        """Commit if due; when another writer holds the lock, try again later (unless the backlog is
        large: then wait as the store says). Returns the trajectories committed."""
        if not self.due():
            return 0
        patient = self.pending >= BACKLOG * self.max_batch or self._triples >= BACKLOG * self.max_triples
        try:
            return self._commit(None if patient else min(PATIENCE, self.store.wait))
        except StoreLockedError:
            if not patient:
                self._say(f"{self.pending} finished trajectories wait for the store (another process is "
                          "writing it); the sessions go on")
                return 0
            raise

    def commit(self) -> int:
        """Commit everything gathered, waiting for the lock for as long as it takes (told through
        ``notify`` at each try; Ctrl-C stops: a resume runs again what was not committed)."""
        while True:
            try:
                return self._commit(None)
            except StoreLockedError as exc:
                self._told = False
                self._say(f"{self.pending} finished trajectories still wait for the store: {exc}")
                time.sleep(RETRY_PAUSE)

    def _commit(self, wait: float | None) -> int:
        if self.empty:
            return 0
        new = dict(self._graphs)
        new.update({self.tallies.graph(s): self.tallies.triples(s) for s in sorted(self._slots)})
        add: dict[ox.NamedNode, list[ox.Triple]] = {}
        for q in self._records:
            assert isinstance(q.graph_name, ox.NamedNode)
            add.setdefault(q.graph_name, []).append(q.triple)
        t0 = time.perf_counter()
        self.store.write_graphs(new, drop=self._drop, add=add, wait=wait)
        self.longest_commit = max(self.longest_commit, time.perf_counter() - t0)
        self.longest_hold = max(self.longest_hold, self.store.last_hold)
        done = len(self._graphs)
        self.commits += 1
        self.committed += done
        self._graphs, self._drop, self._slots, self._records, self._triples = {}, [], set(), [], 0
        self._since, self._told = None, False
        return done

    def _say(self, message: str) -> None:
        if self.notify is not None and not self._told:
            self.notify(message)
        self._told = True
