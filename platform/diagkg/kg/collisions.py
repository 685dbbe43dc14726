"""What a batch of documents claims against itself and against the store: the collisions a load refuses.

A document claims the scenarios (IRI, identifier, number) and systems (IRI, key) it defines
(:func:`diagkg.kg.loading.claims_of`); the store holds the claims of its graphs (``graph-claims.rq``).
Loading the same file again replaces its graph; a *different* file that claims what the store already
holds collides (a :class:`Conflict`), unless the load replaces. ``diagkg load`` refuses a collision,
and ``diagkg validate``, which judges files in the context of the store, reports the same one as a
violation located at the claim (:func:`diagkg.kg.validation.store_collisions`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol, Sequence

import pyoxigraph as ox

from .rdfio import RdfDocument

SHIPPED_PREFIX = "diagkg:"


def shown(origin: str) -> str:
    """An origin as a person reads it."""
    return origin[len(SHIPPED_PREFIX):] + " (shipped with diagkg)" if origin.startswith(SHIPPED_PREFIX) else origin


class Claimant(Protocol):
    """A document on its way into the store (:class:`diagkg.kg.loading.Entry`), as collisions read it."""

    @property
    def doc(self) -> RdfDocument: ...
    @property
    def origin(self) -> str: ...
    @property
    def graph(self) -> ox.NamedNode: ...
    @property
    def claims(self) -> frozenset[tuple[str, str]]: ...
    @property
    def systems(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class Held:
    """A claim the store already holds."""

    graph: str
    origin: str | None
    kind: str
    value: str


def held_claims(rows: Iterable[dict[str, Any]]) -> list[Held]:
    return [Held(r["graph"], r["source"], r["kind"], str(r["value"])) for r in rows]


@dataclass(frozen=True)
class Conflict:
    """A document that claims what the store holds in ``graph`` (from ``origin``): ``claim`` is the (kind, value)
    it collides on (``("scenario number", "902")``), None when it goes into that graph itself."""

    doc: RdfDocument
    claim: tuple[str, str] | None
    graph: str
    origin: str | None

    @property
    def what(self) -> str:
        return f"the {self.claim[0]} {self.claim[1]}" if self.claim is not None else "its graph"

    @property
    def source(self) -> str:
        return shown(self.origin) if self.origin else "a graph of unknown origin"

    @property
    def sentence(self) -> str:
        return (f"{self.doc.name} defines {self.what}, which the store already holds in <{self.graph}> from "
                f"{self.source}; load with --replace to replace it (keep a copy first with `diagkg dump`)")


@dataclass(frozen=True)
class Clash:
    """Two documents of one batch that claim the same: ``claim`` (kind, value), or None when both go into ``graph``."""

    doc: RdfDocument
    other: RdfDocument
    claim: tuple[str, str] | None
    graph: str

    @property
    def sentence(self) -> str:
        if self.claim is None:
            return f"{self.doc.name} and {self.other.name} both go into <{self.graph}>"
        return f"{self.doc.name} and {self.other.name} both define the {self.claim[0]} {self.claim[1]}"


def batch_conflicts(entries: Sequence[Claimant]) -> list[Clash]:
    problems = []
    seen_graph: dict[str, Claimant] = {}
    seen_claim: dict[tuple[str, str], Claimant] = {}
    for e in entries:
        other = seen_graph.get(e.graph.value)
        if other is not None and other.origin != e.origin:
            problems.append(Clash(e.doc, other.doc, None, e.graph.value))
        seen_graph.setdefault(e.graph.value, e)
        for claim in sorted(e.claims):
            other = seen_claim.get(claim)
            if other is not None and other is not e and other.origin != e.origin:
                problems.append(Clash(e.doc, other.doc, claim, e.graph.value))
            seen_claim.setdefault(claim, e)
    return problems


@dataclass
class Plan:
    drop: list[ox.NamedNode] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    replaced_systems: set[str] = field(default_factory=set)     # IRIs of systems whose description changes
    conflicts: list[Conflict] = field(default_factory=list)


def plan_against(entries: Sequence[Claimant], held: Sequence[Held], replace: bool,
                 graph_origins: dict[str, str | None]) -> Plan:
    """What loading ``entries`` does to a store holding ``held`` (and graphs
    with ``graph_origins``): graphs to drop, replacements, conflicts."""
    plan = Plan()
    by_claim: dict[tuple[str, str], list[Held]] = {}
    for h in held:
        by_claim.setdefault((h.kind, h.value), []).append(h)
    for e in entries:
        victims: dict[str, str | None] = {}
        if e.graph.value in graph_origins and graph_origins[e.graph.value] != e.origin:
            victims[e.graph.value] = graph_origins[e.graph.value]
        why: dict[str, tuple[str, str]] = {}
        for claim in sorted(e.claims):
            for h in by_claim.get(claim, ()):
                if h.origin == e.origin:
                    if h.graph != e.graph.value:   # the same file, loaded before into another graph
                        plan.drop.append(ox.NamedNode(h.graph))
                    continue
                victims.setdefault(h.graph, h.origin)
                why.setdefault(h.graph, claim)
        for graph, origin in sorted(victims.items()):
            if not replace:
                plan.conflicts.append(Conflict(e.doc, why.get(graph), graph, origin))
                continue
            plan.drop.append(ox.NamedNode(graph))
            source = shown(origin) if origin else "a graph of unknown origin"
            plan.replaced.append(f"replaced <{graph}> (from {source}) with {shown(e.origin)}")
        for iri in e.systems:
            if any(h.kind == "system" and h.value == iri for h in held):
                plan.replaced_systems.add(iri)
    return plan
