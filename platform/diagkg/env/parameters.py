"""Parameters a component states that nothing of its type reads (``parameters``, a warning).

A bulb given ``dk:ratedCurrent 0.3`` (a fuse's parameter: a bulb reads ``dk:maxCurrent``) validates, loads
and simulates as if the line were not there, and whoever wrote it believes the bulb rated. What a type reads
is declared, not listed here (``queries/type-reads.rq``, over the type and the classes it is a subclass
of): the names its SPICE stamps' expressions, its emission rule and its damage rules read
(ontology/behaviour.ttl), the parameters the shapes declare for it (shapes/), and the ones the platform
reads by name (``dk:readsParameter`` in ontology/behaviour.ttl: a switch's ``dk:normallyClosed``). Only a
component's parameters are judged (the names sim-parameters.rq reads: the sub-properties of
``dk:electricalParameter`` and ``dk:isIndicator``); a label, a port or an affordance is none. The warning,
located at the component in its system's file: :func:`diagkg.env.checks.parameter_warnings`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kg.expressions import names_read

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource
    from ..sim.simulator import Simulator


def type_reads(store: "KnowledgeSource") -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """What each component type (by IRI) reads of its components' parameters, by local name, and every name a
    component's parameter may have (``queries/type-reads.rq``)."""
    reads: dict[str, set[str]] = {}
    judged: set[str] = set()
    for r in store.select("type-reads"):
        if r["type"] is None:
            judged.add(r["parameter"])
            continue
        names = reads.setdefault(r["type"], set())
        if r["expression"] is not None:
            names |= names_read(r["expression"], f"an expression of {r['type']}")
        if r["parameter"]:
            names.add(r["parameter"])
    return {t: frozenset(names & judged) for t, names in reads.items()}, frozenset(judged)


def unread_parameters(store: "KnowledgeSource", sim: "Simulator") -> list[tuple[str, str, tuple[str, ...]]]:
    """Each parameter a component of ``sim``'s system states that nothing of its type reads, as (component,
    parameter's local name, what its type reads), in the order of the components."""
    reads, judged = type_reads(store)
    out = []
    for cid, comp in sorted(sim.skeleton.components.items()):
        known = reads.get(comp.type_iri, frozenset())
        for name in sorted(set(comp.params) & judged - known):
            out.append((cid, name, tuple(sorted(known))))
    return out


def unread_text(cid: str, type_name: str, name: str, known: tuple[str, ...]) -> str:
    """What a warning says of parameter ``name`` that component ``cid`` of type ``type_name`` states and
    nothing of its type reads (``known``: what it reads)."""
    return (f"{cid} states dk:{name}, which nothing of a {type_name} reads (it reads: {', '.join(known) or 'nothing'}): "
            "it changes nothing")


__all__ = ["type_reads", "unread_parameters", "unread_text"]
