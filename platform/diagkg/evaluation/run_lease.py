"""Who runs a campaign now, told by the store itself: the *lease* of the campaign's run.

:func:`~diagkg.evaluation.money_journal.running` holds one run of a campaign at a time per machine and user
(a lock file the kernel lets go of however the process ends). A store that several machines share (a remote
store, ``oxigraph serve``; a store on disk that two users' runs open by turns) needs the claim where every run
looks: in the store. A run takes its campaign's lease in the campaign's run graph (``run/{id}``: a token of its
own, the process and machine holding it, and an end on the store's clock, ``NOW()`` where the store runs),
renews it every :data:`RENEW_SECONDS` from a thread and a store connection of its own, and gives it back as it
ends. Another run meanwhile is refused (:class:`~diagkg.errors.CampaignRunning`, naming the holder and when
its lease runs out), unless

* the lease ran out (:data:`LEASE_SECONDS` after its last renewal: its run was killed, on another machine too),
* or its holder is a process of this machine that is gone (killed with ``kill -9``: taken at once).

A run that takes a lease left behind says so. Taking is a compare-and-swap (``campaign-lease-take.ru.j2``
replaces only the lease it found): of two runs taking one lease at once, one holds it and the other is refused.

Limit: a run whose process stops for longer than :data:`LEASE_SECONDS` (a machine suspended) may find its lease
taken by another run; it is not stopped, and says so as it ends. An in-memory store has no lease (no other
process sees it).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pyoxigraph as ox

from ..errors import CampaignRunning, StoreError
from ..kg import graphs
from ..kg.rdfio import datetime_literal
from ..kg.remote import connect
from .campaign import Campaign

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore

__all__ = ["LEASE_SECONDS", "RENEW_SECONDS", "Holder", "Lease", "holding", "read", "take"]

LEASE_SECONDS = 60.0        # how long a lease lasts without a renewal
RENEW_SECONDS = 15.0        # how often a run renews its lease


@dataclass(frozen=True)
class Holder:
    """A process that may hold a lease: its number and machine, and how people read them."""

    pid: int
    machine: str            # host name and boot (a process number means something on one boot of one machine)
    host: str

    @classmethod
    def this_process(cls) -> Holder:
        host = socket.gethostname()
        try:
            boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
        except OSError:
            boot = ""
        return cls(os.getpid(), f"{host} {boot}".strip(), host)

    @property
    def label(self) -> str:
        return f"pid {self.pid} on {self.host}"


@dataclass(frozen=True)
class Lease:
    """A campaign's lease as the store holds it."""

    token: str
    holder: str
    machine: str
    pid: int
    until: datetime
    expired: bool           # on the store's clock


def graph_of(campaign: Campaign) -> ox.NamedNode:
    return graphs.named("run", campaign.id)


def read(store: KnowledgeStore, campaign: Campaign) -> tuple[datetime, Lease | None]:
    """The store's clock now and the campaign's lease (None when no run holds one)."""
    [row] = store.select("campaign-lease", {"campaign": campaign.node, "graph": graph_of(campaign)})
    now = _utc(row["now"])
    if row.get("token") is None:
        return now, None
    return now, Lease(str(row["token"]), str(row["holder"]), str(row["machine"]), int(row["pid"]), _utc(row["until"]),
                      bool(row["expired"]))


def _utc(lexical: str) -> datetime:
    """An ``xsd:dateTime`` as the store gives it (its lexical form) as an aware datetime, UTC when it states no offset."""
    moment = datetime.fromisoformat(lexical.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _gone(lease: Lease, me: Holder) -> bool:
    """Whether ``lease``'s process is gone: a process of this machine (and boot) that no longer exists."""
    if lease.machine != me.machine or not me.machine:
        return False
    if lease.pid == me.pid:
        return False          # this very process: a lease it holds already (never taken twice)
    try:
        os.kill(lease.pid, 0)
    except ProcessLookupError:
        return True
    except OSError:           # another user's process: it exists
        return False
    try:                      # killed, and not yet reaped by its parent (a zombie): gone too
        stat = Path(f"/proc/{lease.pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] == ["Z"]


def _stamp(moment: datetime) -> ox.Literal:
    return datetime_literal(moment.astimezone(timezone.utc))


def take(store: KnowledgeStore, campaign: Campaign, me: Holder, notify: Callable[[str], None] | None = None,
         ) -> tuple[str, timedelta]:
    """Take ``campaign``'s lease for ``me``: its token and the store's clock less this machine's. Refused
    (:class:`~diagkg.errors.CampaignRunning`) while another run holds it."""
    now, lease = read(store, campaign)
    if lease is not None and not lease.expired and not _gone(lease, me):
        until = lease.until.strftime("%Y-%m-%d %H:%M:%S UTC")
        raise CampaignRunning(campaign.id, f"{lease.holder}, whose lease of the campaign in the store runs out at "
                                           f"{until} unless it renews it")
    offset = now - datetime.now(timezone.utc)
    token = uuid.uuid4().hex
    values = {"graph": graph_of(campaign), "campaign": campaign.node, "lease": ox.NamedNode(f"{campaign.iri}#lease"),
              "token": token, "holder": me.label, "machine": me.machine,
              "pid": me.pid,
              "until": _stamp(now + timedelta(seconds=LEASE_SECONDS)), "fresh": lease is None}
    if lease is not None:
        values["expected"] = lease.token
    store.update("campaign-lease-take", **values)
    _, held = read(store, campaign)
    if held is None or held.token != token:       # another run took it meanwhile
        raise CampaignRunning(campaign.id, held.holder if held is not None else "")
    if lease is not None and notify:
        why = "its lease had run out" if lease.expired else "its process is gone"
        notify(f"campaign {campaign.id}: took over the lease a run left behind ({lease.holder}: {why})")
    return token, offset


def renew(store: KnowledgeStore, campaign: Campaign, token: str, offset: timedelta) -> None:
    """Move the end of the lease ``token`` holds to :data:`LEASE_SECONDS` from now (nothing when it is not its)."""
    until = datetime.now(timezone.utc) + offset + timedelta(seconds=LEASE_SECONDS)
    store.update("campaign-lease-renew", graph=graph_of(campaign), campaign=campaign.node, token=token,
                 until=_stamp(until))


def give_back(store: KnowledgeStore, campaign: Campaign, token: str) -> None:
    """Remove the lease ``token`` holds (nothing when another run holds the lease now)."""
    store.update("campaign-lease-give-back", graph=graph_of(campaign), campaign=campaign.node, token=token)


@contextlib.contextmanager
def holding(store: KnowledgeStore, campaign: Campaign, notify: Callable[[str], None] | None = None,
            me: Holder | None = None) -> Iterator[None]:
    """Hold ``campaign``'s lease for the ``with`` block (see the module): taken first (refused while another run
    holds it), renewed from a thread with a store connection of its own, given back at the end, however the
    block ends."""
    if store.in_memory:
        yield
        return
    me = me or Holder.this_process()
    token, offset = take(store, campaign, me, notify)
    stop = threading.Event()
    thread = threading.Thread(target=_keep, args=(store.location, campaign, token, offset, stop),
                              name=f"lease {campaign.id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=2 * RENEW_SECONDS)     # a renewal waiting for its turn to write ends within one
        with contextlib.suppress(StoreError):
            _, held = read(store, campaign)
            if notify and (held is None or held.token != token):
                notify(f"campaign {campaign.id}: another run took its lease while this one ran (this process stood "
                       f"still for over {LEASE_SECONDS:g} s?): both may have played slots")
            give_back(store, campaign, token)


def _keep(location: str, campaign: Campaign, token: str, offset: timedelta, stop: threading.Event) -> None:
    """Renew the lease every :data:`RENEW_SECONDS` until ``stop``, through a store connection of this thread."""
    connection = None
    while not stop.wait(RENEW_SECONDS):
        try:
            connection = connection or connect(location, wait=RENEW_SECONDS)   # a turn waited for: one renewal
            renew(connection, campaign, token, offset)
        except StoreError:       # the store is busy or away for now: the next turn tries again
            continue
    if connection is not None:
        with contextlib.suppress(StoreError):
            connection.close()
