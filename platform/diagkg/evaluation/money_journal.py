"""What a campaign run spent on language models, kept where a killed run leaves it (its money journal).

A run with a cost limit keeps what its sessions spend in a file its workers share
(:class:`~diagkg.llm.shared_money.SharedMoney`: spent, held for calls in flight, and what the trajectories it
stored spent, added by the writer after each commit). The store counts only stored trajectories: a run killed
with ``kill -9`` (or that lost its machine) took the money of its sessions in flight with it, and a resume gave
the next sessions that money again. The file is therefore kept outside the run's temporary folder, in the user's
state folder (``$XDG_STATE_HOME/diagkg/money``, else ``~/.local/state/diagkg/money``), named by the store and the
campaign. A run that ends (well, or by an error it sees: Ctrl-C, a full disk) reckons it and removes it; a run
that finds one left behind reckons it first. Reckoning: what the run spent beyond what it stored (a session whose
worker died in a call, sessions in flight at a kill; calls held for and never settled counted whole: the campaign
stops early, never late) becomes a ``dk:UnstoredSpending`` record in the campaign's graph, which
:class:`~diagkg.evaluation.budget.Spending` counts. An in-memory store dies with its
run: there is nothing to resume, and no journal. A Dask cluster's sessions share totals on its scheduler, not
this file (its workers share no folder with the campaign); the campaign's process copies them into the journal
every :data:`MIRROR_SECONDS` (:func:`mirrored`), so that a run killed with ``kill -9`` — its cluster with it, a
local one — leaves what its sessions had spent and held reserved as of the last copy at most that long before.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pyoxigraph as ox

from ..errors import CampaignRunning
from ..kg.rdfio import datetime_literal
from ..kg.vocab import DK
from ..llm import shared_money
from .campaign import RDF_TYPE, XSD, Campaign

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore

__all__ = ["MIRROR_SECONDS", "close", "journal_path", "mirrored", "open_journal", "reckon", "running"]

PROV = "http://www.w3.org/ns/prov#"
SMALLEST = 1e-9          # a difference below this is the rounding of two sums of the same calls
MIRROR_SECONDS = 0.25    # how often a Dask run's totals are copied from the scheduler into its journal


def journal_path(store: KnowledgeStore, campaign: Campaign) -> Path | None:
    """Where the runs of ``campaign`` on ``store`` keep their money journal (None for an in-memory store)."""
    return _state_file(store, campaign, "money", "")


def _state_file(store: KnowledgeStore, campaign: Campaign, folder: str, suffix: str) -> Path | None:
    if store.in_memory:
        return None
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    key = hashlib.sha256(f"{store.location}\n{campaign.iri}".encode()).hexdigest()[:32]
    return Path(state) / "diagkg" / folder / f"{campaign.id}-{key}{suffix}"


@contextlib.contextmanager
def running(store: KnowledgeStore, campaign: Campaign) -> Iterator[None]:
    """Hold the campaign's run lock (a lock file beside the journals, ``runs/``) for the ``with`` block: a second
    run of the campaign on this machine meanwhile is refused (:class:`~diagkg.errors.CampaignRunning`), as it would
    play the same slots and take this run's journal for a killed run's. The kernel lets go of the lock when the
    process ends, however it ends. Without a state folder to write in, or for an in-memory store, no lock."""
    path = _state_file(store, campaign, "runs", ".lock")
    handle = None
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(path, "a+", encoding="ascii")      # noqa: SIM115 - held for the block
        except OSError:
            handle = None
    if handle is None:
        yield
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            pid = handle.read().strip()
            raise CampaignRunning(campaign.id, f"pid {pid}" if pid.isdigit() else "") from None
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()}\n")
            handle.flush()
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def reckon(store: KnowledgeStore, campaign: Campaign, notify: Callable[[str], None] | None = None,
           earlier: bool = True) -> float:
    """Count the money of the run whose journal this is (``earlier``: one left behind, killed; else this run's,
    as it ends): what it spent beyond what it stored is recorded in the campaign's graph, then the journal is
    removed. Returns that money (0 without a journal)."""
    path = journal_path(store, campaign)
    if path is None:
        return 0.0
    lost = shared_money.unstored(str(path))
    if lost is None:
        return 0.0
    if lost > SMALLEST:
        store.add_quads(unstored_quads(campaign, lost))
        if notify:
            notify(f"an earlier run of campaign {campaign.id} ended without storing sessions that had spent "
                   f"{lost:.4f} on language models (killed with them in flight): counted with its sessions' money"
                   if earlier else
                   f"sessions of this run that were not stored as they ran (a worker died with them, or the run "
                   f"was stopped) had spent {lost:.4f} on language models: counted with its sessions' money")
    path.unlink(missing_ok=True)
    return lost if lost > SMALLEST else 0.0


def open_journal(store: KnowledgeStore, campaign: Campaign, allowance: float | None) -> shared_money.SharedMoney | None:
    """This run's journal (made anew; None without a cost limit, for an in-memory store, or where the state
    folder cannot be written)."""
    path = journal_path(store, campaign)
    if allowance is None or path is None:
        return None
    try:
        return shared_money.create_at(str(path), allowance)
    except OSError:     # no state folder to write in: the run's workers share a file in its temporary folder
        return None


def close(store: KnowledgeStore, campaign: Campaign, journal: shared_money.SharedMoney | None,
          notify: Callable[[str], None] | None = None) -> float:
    """The run's end, however it ends: what its sessions spent beyond
    what it stored (a session whose worker died in a call, sessions in flight at Ctrl-C) is recorded, and the
    journal removed; returns what was recorded. A journal the store cannot take now stays, for the next run to
    count."""
    if journal is None:
        return 0.0
    try:
        return reckon(store, campaign, notify, earlier=False)
    except Exception:  # noqa: BLE001 - the store may be what failed: the next run reckons the journal
        return 0.0


def unstored_quads(campaign: Campaign, money: float) -> list[ox.Quad]:
    """The record of ``money`` a run of ``campaign`` spent in sessions it never stored, for the campaign's graph."""
    now = datetime.now(timezone.utc)
    node = ox.NamedNode(f"{campaign.iri}#unstored-{now.strftime('%Y%m%dT%H%M%S%f')}")
    g = campaign.graph
    return [ox.Quad(node, RDF_TYPE, ox.NamedNode(DK.UnstoredSpending), g),
            ox.Quad(node, ox.NamedNode(DK.spendingOf), campaign.node, g),
            ox.Quad(node, ox.NamedNode(DK.moneySpent), ox.Literal(f"{money:.8f}", datatype=ox.NamedNode(XSD + "decimal")), g),
            ox.Quad(node, ox.NamedNode(PROV + "atTime"),
                    datetime_literal(now), g)]


def mirrored(stack: contextlib.ExitStack, totals: shared_money.ClusterMoney, journal: shared_money.SharedMoney) -> None:
    """Copy ``totals`` (a Dask cluster's, on its scheduler: :class:`~diagkg.llm.shared_money.ClusterMoney`) into
    ``journal`` every :data:`MIRROR_SECONDS` from a thread, until ``stack`` closes: then once more, and stop (pushed
    after what takes the totals off the cluster, so that it runs first)."""
    stop = threading.Event()

    def copy() -> None:
        with contextlib.suppress(Exception):       # the cluster is busy or gone: the next copy, or the last one kept
            journal.mirror(*totals.totals())

    def keep() -> None:
        while not stop.wait(MIRROR_SECONDS):
            copy()

    thread = threading.Thread(target=keep, name="money mirror", daemon=True)
    thread.start()

    def end() -> None:
        stop.set()
        thread.join(timeout=shared_money.CLUSTER_WAIT)
        copy()

    stack.callback(end)
