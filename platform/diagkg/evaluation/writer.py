"""The campaign's writer: group commit, the store's lock taken per commit only.

Sessions finish one by one; the writer gathers what they bring and commits it in batches, under
one hold of the lock each: every new trajectory graph of the batch (each carries its own campaign
entry; the N-Quads its worker wrote, parsed by Oxigraph as it loads them) in one atomic step
(Oxigraph's bulk load, a third of a transaction's cost per quad, once the batch's new trajectories
hold :data:`BULK_FROM` quads; a smaller batch is all one transaction), then one
transaction with the slot tallies they changed (written once per batch, from the tallies in memory),
the trajectories that replace failed ones with the failed ones (dropped), and the campaign records
made meanwhile (closed batches, a stop at the cost limit). A batch is committed when it holds :data:`MAX_BATCH` trajectories or
:data:`MAX_TRIPLES` triples, when its oldest one has waited :data:`LATENCY` seconds, before
anything reads what it holds (an adaptive batch's assessment) and at the end. A commit costs a
fixed part (opening the store for writing, flushing it) and a part per triple: when sessions
finish quickly, batches grow to keep the fixed part small, and the lock is held about as long.

The write lock is taken for each commit and released after it: between commits any other writer
(``diagkg run``, ``load``, a server's session) takes its turn. When another writer keeps the lock,
a batch that is merely due waits for the next try (sessions go on; after :data:`BACKLOG` batches'
worth the campaign waits as long as the store's ``wait``), and a batch that must be committed
(before a read, at the end) waits for as long as it takes, saying so.

Killed at any moment, the store holds whole trajectories, each with its campaign entry, and never
a failed trajectory beside the one replacing it; killed between a batch's two steps, it holds the
batch's new trajectories but not yet their tallies nor its records (the tallies lag behind until the
campaign resumes, which writes every tally afresh, or ``diagkg report --rebuild``). What was not
committed yet is run again on resume, never twice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable

import pyoxigraph as ox

from ..errors import StoreError, StoreLockedError
from ..kg.rdfio import quads_of

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore
    from .tally import Tallies

MAX_BATCH = 1024         # trajectories in one commit at most
MAX_TRIPLES = 80_000     # and triples: a commit holds the lock about 1 s on a loaded 2-core machine (bulk load)
LATENCY = 1.0            # seconds a finished trajectory waits at most before its commit is due
PATIENCE = 1.0           # seconds a due commit waits for another writer before trying again later
BACKLOG = 4              # batches' worth of trajectories after which a due commit waits as the store says
RETRY_PAUSE = 1.0        # seconds between two tries of a commit that must go through
RETRY_LATER = 5.0        # seconds the sessions go on before a due commit that met another writer is tried again
BULK_FROM = 5_000        # quads of new trajectories from which a batch adds them by a bulk load (fixed cost, more files)


@dataclass
class CampaignWriter:
    """Gathers a campaign's writes and commits them in batches (see the module's notes)."""

    store: KnowledgeStore
    tallies: Tallies
    max_batch: int = MAX_BATCH
    max_triples: int = MAX_TRIPLES
    latency: float = LATENCY
    bulk_from: int = BULK_FROM
    notify: Callable[[str], None] | None = None
    on_stored: Callable[[float], None] | None = None   # told what the trajectories of each commit spent (the journal)
    clock: Callable[[], float] = time.monotonic
    commits: int = 0                  # transactions made
    committed: int = 0                # trajectories committed
    longest_commit: float = 0.0       # seconds one commit took at most, waiting for the lock included
    longest_hold: float = 0.0         # seconds one commit held the lock at most (on disk)
    _graphs: dict[ox.NamedNode, list[ox.Triple]] = field(default_factory=dict)     # replacing failed ones
    _fresh: dict[ox.NamedNode, bytes] = field(default_factory=dict)                # new ones, as N-Quads
    _drop: list[ox.NamedNode] = field(default_factory=list)
    _slots: set[tuple[str, int]] = field(default_factory=set)
    _records: list[ox.Quad] = field(default_factory=list)
    _since: float | None = None
    _told: bool = False
    _retry_at: float = 0.0          # (clock) a due commit that met another writer is not tried again before
    _triples: int = 0
    _money: float = 0.0             # what the trajectories not committed yet spent on language models

    # -- gathering ----------------------------------------------------------
    def trajectory(self, graph: ox.NamedNode, nquads: bytes, slot: tuple[str, int],
                   replaces: ox.NamedNode | None = None, money: float = 0.0) -> None:
        """A finished session's trajectory graph, as N-Quads all in ``graph`` (with its campaign entry), one
        statement a line, as :func:`in_graph` checks them: handed to the store as they are (Oxigraph parses
        them as it loads them; only a small batch, or a trajectory replacing a failed one, is parsed here);
        its slot's tally is already updated in :attr:`tallies`; ``replaces``: a failed trajectory's graph
        to drop; ``money``: what its session spent on language models."""
        if replaces is None:
            self._fresh[graph] = nquads
        else:
            self._graphs[graph] = [q.triple for q in quads_of(nquads)]
            self._drop.append(replaces)
        self._triples += nquads.count(b"\n")
        self._money += money
        self._slots.add(slot)
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
        return len(self._graphs) + len(self._fresh)

    @property
    def empty(self) -> bool:
        return not (self._graphs or self._fresh or self._records or self._drop)

    def due(self) -> bool:
        """Whether a commit is due (full batch, or the oldest write has waited long enough)."""
        if self.empty:
            return False
        assert self._since is not None
        return (self.pending >= self.max_batch or self._triples >= self.max_triples
                or self.clock() - self._since >= self.latency)

    def time_left(self) -> float | None:
        """Seconds until a commit is due by latency, or may be tried again after meeting another writer (None
        when nothing waits): what the campaign's loop waits for sessions at most (it spun meanwhile)."""
        if self._since is None:
            return None
        now = self.clock()
        return max(0.0, self.latency - (now - self._since), self._retry_at - now)

    # -- committing ---------------------------------------------------------
    def commit_if_due(self) -> int:
        """Commit if due; when another writer holds the lock, try again later (unless the backlog is
        large: then wait as the store says). Returns the trajectories committed."""
        if not self.due():
            return 0
        patient = self.pending >= BACKLOG * self.max_batch or self._triples >= BACKLOG * self.max_triples
        if not patient and self.clock() < self._retry_at:     # another writer held the lock a moment ago
            return 0
        try:
            return self._commit(None if patient else min(PATIENCE, self.store.wait))
        except StoreLockedError:
            if not patient:
                # the sessions go on a while before the next try (each try waits up to PATIENCE: one after every
                # session held a campaign to a session a second while another process wrote for minutes)
                self._retry_at = self.clock() + RETRY_LATER
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

    def finish(self, error: BaseException | None) -> None:
        """What finished is committed as the campaign's loop ends: waiting as long as it takes when the loop
        ended well; when it was left by an error (a full disk, Ctrl-C), tried once without waiting long, and
        what cannot be stored is said (it runs again on resume) while the error that ended the loop is the one
        reported: a full disk hung the campaign for good, its last commit taking its own lock for another
        process's."""
        if error is None:
            self.commit()
            return
        try:
            self._commit(min(PATIENCE, self.store.wait))
        except (StoreError, OSError) as exc:
            self._told = False
            self._say(f"{self.pending} finished trajectories could not be stored ({exc}); a resume runs them again")

    def _commit(self, wait: float | None) -> int:
        if self.empty:
            return 0
        new, fresh = dict(self._graphs), self._fresh
        if sum(data.count(b"\n") for data in fresh.values()) < self.bulk_from:      # small: all in the one transaction
            new.update({g: [q.triple for q in quads_of(data)] for g, data in fresh.items()})
            fresh = {}
        new.update({self.tallies.graph(s): self.tallies.triples(s) for s in sorted(self._slots)})
        add: dict[ox.NamedNode, list[ox.Triple]] = {}
        for q in self._records:
            assert isinstance(q.graph_name, ox.NamedNode)
            add.setdefault(q.graph_name, []).append(q.triple)
        t0 = time.perf_counter()
        self.store.write_graphs(new, drop=self._drop, add=add, wait=wait, fresh=fresh)
        self.longest_commit = max(self.longest_commit, time.perf_counter() - t0)
        self.longest_hold = max(self.longest_hold, self.store.last_hold)
        done, money = self.pending, self._money
        self.commits += 1
        self.committed += done
        self._graphs, self._fresh, self._drop, self._slots, self._records, self._triples = {}, {}, [], set(), [], 0
        self._since, self._told, self._money = None, False, 0.0
        if money and self.on_stored is not None:
            self.on_stored(money)
        return done

    def _say(self, message: str) -> None:
        if self.notify is not None and not self._told:
            self.notify(message)
        self._told = True


def in_graph(nquads: bytes, graph: ox.NamedNode) -> bool:
    """Whether every line of ``nquads`` (N-Quads as Oxigraph writes them: one statement a line, each ending in a
    newline, newlines inside literals escaped) ends in ``graph``: what the writer hands to the store unparsed (read
    in C, a few milliseconds a batch). A triple of the default graph whose object is ``graph``'s IRI would pass: the
    workers put every quad in the trajectory's graph (:func:`diagkg.evaluation.sessions.outcome_of`)."""
    return not nquads or (nquads.count(b"\n") == nquads.count(b" <" + graph.value.encode() + b"> .\n") and nquads.endswith(b"\n"))
