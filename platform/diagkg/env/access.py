"""Getting at a part: what it affords now (SPARQL ASK templates over the
system and the session's state), and automatic access — opening a panel or
peephole of its enclosure, or turning the enclosure over, charged like the
actions they are."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from ..kg.memo import Memo
from ..kg.vocab import DK
from ..sim.circuit import CircuitState

if TYPE_CHECKING:  # pragma: no cover
    from .roles import Workbench


def access_rows(session: Workbench, iri: str) -> list[dict[str, Any]]:
    """The enclosure holding a part or port and its openings (part-access.rq, read once per part)."""
    rows = session.access_cache.get(iri)
    if rows is None:
        rows = session.access_cache[iri] = session.store.select("part-access", {"part": ox.NamedNode(iri)})
    return rows


def granting(session: Workbench, part: str, affordance: str) -> set[tuple[str, str]]:
    """The (element identifier, state) pairs in which the part's conditional affordances grant it
    ``affordance`` (part-access-granted.rq, read once per part): ``("lid", "Open")``."""
    iri = session.iri_of(part)
    key = f"granted {iri}"          # (no IRI holds a space: never a part's own entry)
    rows = session.access_cache.get(key)
    if rows is None:
        rows = session.access_cache[key] = session.store.select("part-access-granted", {"part": ox.NamedNode(iri)})
    return {(r["elementId"], r["state"]) for r in rows if r["affordance"] == affordance}


def physical_key(session: Workbench) -> frozenset[ox.Quad]:
    """The part of the state graph that the affordance queries read (``precondition-affords.rq.j2``
    and ``parts-affording.rq`` ask the state graph only for ``dk:hasPhysicalState``): what their
    answers are remembered by, so that states differing elsewhere (a fault) share them."""
    return physical_of(session, session.state_key())


def physical_of(session: Workbench, state: frozenset[ox.Quad]) -> frozenset[ox.Quad]:
    """The ``dk:hasPhysicalState`` quads of a state of ``session`` (a :meth:`Session.state_key`,
    the current one or a checkpoint's), remembered per state."""
    known = session.physical_keys.get(id(state))
    if known is None or known[0] is not state:
        if len(session.physical_keys) > 5_000:
            session.physical_keys.clear()
        predicate = DK.hasPhysicalState.node
        known = session.physical_keys[id(state)] = (state, frozenset(q for q in state if q.predicate == predicate))
    return known[1]


# What the two affordance queries answered, for every session of the process: they read the
# system graph and the state graph's dk:hasPhysicalState facts only, so an answer holds for any
# session whose system graph has the same version and whose state has the same physical facts
# (a fresh session on a system starts where the last one did: its first observation asks again
# otherwise). Keyed by the version (kg.store.KnowledgeStore.version_of), which every change of
# the graph changes; bounded (least recently used first out).
_SHARED: Memo[Any] = Memo("affordances", 50_000)


def _shared_key(session: Workbench, *rest: str) -> tuple[Any, ...]:
    facts = frozenset((q.subject, q.object) for q in physical_key(session))
    return (session.system_version, facts, *rest)


def affords(session: Workbench, part: str, affordance: str) -> bool:
    """ASK (SPARQL template) whether a part affords something in the current
    state, by design or through a physical-state condition (remembered per
    physical state and system version)."""
    key = (physical_key(session), part, affordance)
    known = session.afford_cache.get(key)
    if known is None:
        if len(session.afford_cache) > 20_000:
            session.afford_cache.clear()
        shared = _shared_key(session, part, affordance)
        known = _SHARED.get(shared)
        if known is None:
            session.sync()
            known = bool(session.store.query(
                "precondition-affords", part=session.iri_of(part), affordance=str(getattr(DK, affordance)),
                system=session.system_graph, state=session.state_graph))
            _SHARED.put(shared, known)
        session.afford_cache[key] = known
    return known


def affording(session: Workbench, affordance: str) -> frozenset[str]:
    """The IRIs of every part that affords ``affordance`` in the current state
    (what :func:`affords` answers for one part, for all of them at once;
    remembered per physical state and system version as well)."""
    key = (physical_key(session), "*", affordance)
    known = session.affording_cache.get(key)
    if known is None:
        if len(session.affording_cache) > 5_000:
            session.affording_cache.clear()
        shared = _shared_key(session, "*", affordance)
        known = _SHARED.get(shared)
        if known is None:
            session.sync()
            rows = session.store.select("parts-affording", {
                "systemGraph": session.system_graph, "stateGraph": session.state_graph,
                "affordance": getattr(DK, affordance).node})
            known = frozenset(r["part"] for r in rows)
            _SHARED.put(shared, known)
        session.affording_cache[key] = known
    return known


def visible_ends(session: Workbench, cid: str, state: CircuitState) -> list[str]:
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


def inside(session: Workbench, port_iri: str) -> bool:
    return any(r["part"] == port_iri for r in access_rows(session, port_iri))
