"""Getting at a part: what it affords now (SPARQL ASK templates over the
system and the session's state), and automatic access — opening a panel or
peephole of its enclosure, or turning the enclosure over, charged like the
actions they are."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from ..kg.vocab import DK
from ..sim.circuit import CircuitState

if TYPE_CHECKING:  # pragma: no cover
    from .service import Session


def access_rows(session: Session, iri: str) -> list[dict[str, Any]]:
    """The enclosure holding a part or port and its openings (part-access.rq, read once per part)."""
    rows = session.access_cache.get(iri)
    if rows is None:
        rows = session.access_cache[iri] = session.store.select("part-access", {"part": ox.NamedNode(iri)})
    return rows


def physical_key(session: Session) -> frozenset[ox.Quad]:
    """The part of the state graph that the affordance queries read (``precondition-affords.rq.j2``
    and ``parts-affording.rq`` ask the state graph only for ``dk:hasPhysicalState``): what their
    answers are remembered by, so that states differing elsewhere (a fault) share them."""
    return physical_of(session, session.state_key())


def physical_of(session: Session, state: frozenset[ox.Quad]) -> frozenset[ox.Quad]:
    """The ``dk:hasPhysicalState`` quads of a state of ``session`` (a :meth:`Session.state_key`,
    the current one or a checkpoint's), remembered per state."""
    known = session.physical_keys.get(id(state))
    if known is None or known[0] is not state:
        if len(session.physical_keys) > 5_000:
            session.physical_keys.clear()
        predicate = DK.hasPhysicalState.node
        known = session.physical_keys[id(state)] = (state, frozenset(q for q in state if q.predicate == predicate))
    return known[1]


def affords(session: Session, part: str, affordance: str) -> bool:
    """ASK (SPARQL template) whether a part affords something in the current
    state (remembered per physical state, see :func:`physical_key`)."""
    key = (physical_key(session), part, affordance)
    known = session.afford_cache.get(key)
    if known is None:
        if len(session.afford_cache) > 20_000:
            session.afford_cache.clear()
        session.sync()
        known = session.afford_cache[key] = bool(session.store.query(
            "precondition-affords", part=session.iri_of(part), affordance=str(getattr(DK, affordance)),
            system=session.system_graph, state=session.state_graph))
    return known


def affording(session: Session, affordance: str) -> frozenset[str]:
    """The IRIs of every part that affords ``affordance`` in the current state
    (what :func:`affords` answers for one part, for all of them at once;
    remembered per physical state as well)."""
    key = (physical_key(session), "*", affordance)
    known = session.affording_cache.get(key)
    if known is None:
        if len(session.affording_cache) > 5_000:
            session.affording_cache.clear()
        session.sync()
        rows = session.store.select("parts-affording", {
            "systemGraph": session.system_graph, "stateGraph": session.state_graph,
            "affordance": getattr(DK, affordance).node})
        known = session.affording_cache[key] = frozenset(r["part"] for r in rows)
    return known


def visible_ends(session: Session, cid: str, state: CircuitState) -> list[str]:
    out = []
    for port, iri in sorted(session.sk.components[cid].ports.items()):
        inside = [r for r in access_rows(session, iri) if r["part"] == iri]
        if not inside:
            out.append(port)
            continue
        enclosure = inside[0]["enclosureId"]
        opened = any((r["openingId"], "Open") in state.physical for r in inside if r["openingId"])
        if (enclosure, "Inverted") in state.physical or opened:
            out.append(port)
    return out


def inside(session: Session, port_iri: str) -> bool:
    return any(r["part"] == port_iri for r in access_rows(session, port_iri))
