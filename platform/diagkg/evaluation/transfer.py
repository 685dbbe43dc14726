"""Moving campaigns between stores: ``diagkg export`` and ``diagkg import``.

An export is N-Quads: the campaign's graph, each of its trajectory graphs and slot tallies,
the ontology (added only to a store that has none), and the scenario and system graphs (with the system's inferences)
and the optimal policies (``optimum/{key}``, recorded by a campaign that played one) at the versions the campaign used.
An import adds all of it in one transaction; it refuses a campaign or trajectory the store already holds, and a
scenario, system or policy the store holds in a *different* version (the same version is kept).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyoxigraph as ox

from ..errors import ChangedGraph, InputError, VersionsNotKept
from ..kg import graphs
from ..kg.vocab import DK
from . import campaign as cp
from .tally import tally_graphs

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore


# the versioned knowledge an export carries at the versions the campaign used (a policy: when it played one; an
# import refused every such export until 2026-12-07)
KNOWLEDGE = ("scenario", "system", "inferred", "optimum")


def campaign_graphs(store: KnowledgeStore, campaign_id: str) -> list[ox.NamedNode]:
    """Every graph an export of the campaign holds."""
    campaign = cp.open_campaign(store, campaign_id)
    names = [campaign.graph]
    if store.raw.contains_named_graph(graphs.ONTOLOGY):
        names.append(graphs.ONTOLOGY)     # the end values' and actions' terms, for a store that has none
    names += [graphs.named("trajectory", r.trajectory.rsplit("/", 1)[1])
              for r in cp.recorded(store, campaign).values()]
    names += tally_graphs(store, campaign)
    for r in store.select("campaign-versions", {"campaign": campaign.node}):
        g = ox.NamedNode(r["graph"])
        if store.raw.contains_named_graph(g):
            names.append(g)
        if graphs.kind_of(g) == "system":
            inferred = graphs.inferred(g.value.rsplit("/", 1)[1])
            if store.raw.contains_named_graph(inferred):
                names.append(inferred)
    return list(dict.fromkeys(names))


def export_campaign(store: KnowledgeStore, campaign_id: str) -> bytes:
    """The campaign as N-Quads; refused (:class:`~diagkg.errors.VersionsNotKept`, naming each graph and both
    versions) when a scenario, system or policy it used has changed since (a ``load --replace``, an update, a
    removal): the store holds only the new version, which an export would otherwise carry as the one used."""
    changed = cp.changed_versions(store, cp.open_campaign(store, campaign_id))
    if changed:
        raise VersionsNotKept(f"campaign {campaign_id}: {len(changed)} graph(s) it used changed since it ran, and the "
                              "store holds only the new version, so an export cannot carry the knowledge its "
                              "trajectories were made with: " + "; ".join(str(c) for c in changed)
                              + ". Nothing was written; load the versions it used back (e.g. from a `diagkg dump` "
                              "taken before the change) to export it", changed)
    return store.dump(campaign_graphs(store, campaign_id))


@dataclass(frozen=True)
class ImportResult:
    campaign: str
    trajectories: int
    knowledge_added: int
    knowledge_kept: int


def _version(graph: ox.NamedNode, triples: list[ox.Triple]) -> str:
    """The version :meth:`KnowledgeStore.version_of` would give this graph."""
    for marker in (DK.contentHash, DK.inferredFrom):
        for t in triples:
            if t.subject == graph and t.predicate.value == str(marker) and isinstance(t.object, ox.Literal):
                return t.object.value
    lines = sorted(str(t) for t in triples)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest() if lines else ""


def _check_used_versions(name: str, campaign: ox.NamedNode, content: dict[ox.NamedNode, list[ox.Triple]]) -> None:
    """Refuse an export whose scenario, system or policy graphs are not at the versions its campaign recorded (an
    export written, before exports checked this, after the store's copy had changed)."""
    triples = content[campaign]
    hashes = {t.subject: t.object.value for t in triples
              if t.predicate.value == str(DK.contentHash) and isinstance(t.object, ox.Literal)}
    changed = []
    for t in triples:
        if t.predicate.value != str(DK.ofGraph) or not isinstance(t.object, ox.NamedNode) or t.subject not in hashes:
            continue
        g = t.object
        now = _version(g, content[g]) if g in content else ""
        if now != hashes[t.subject]:
            changed.append(ChangedGraph(g.value, hashes[t.subject], now))
    if changed:
        raise VersionsNotKept(f"{name}: {len(changed)} graph(s) are not at the versions its campaign used: "
                              + "; ".join(str(c) for c in changed) + "; nothing was imported", changed)


def import_campaign(store: KnowledgeStore, data: bytes, name: str) -> ImportResult:
    """Add an exported campaign to ``store`` (all or nothing)."""
    try:
        quads = list(ox.parse(data, format=ox.RdfFormat.N_QUADS))
    except SyntaxError as exc:
        raise InputError(f"{name}: not N-Quads ({exc})") from None
    content: dict[ox.NamedNode, list[ox.Triple]] = {}
    for q in quads:
        if not isinstance(q.graph_name, ox.NamedNode):
            raise InputError(f"{name}: holds triples outside named graphs; not an export of `diagkg export`")
        content.setdefault(q.graph_name, []).append(q.triple)
    campaigns = [g for g in content if graphs.kind_of(g) == "evaluation"]
    if len(campaigns) != 1:
        raise InputError(f"{name}: holds {len(campaigns)} campaign graphs; an export holds exactly one")
    unexpected = [g.value for g in content if graphs.kind_of(g) not in ("evaluation", "trajectory", "tally", "ontology",
                                                                         *KNOWLEDGE)]
    if unexpected:
        raise InputError(f"{name}: holds graphs an export never holds: {', '.join(unexpected[:5])}")
    present = [g.value for g in content if graphs.kind_of(g) in ("evaluation", "trajectory", "tally")
               and store.raw.contains_named_graph(g)]
    if present:
        raise InputError(f"{name}: the store already holds {len(present)} of its campaign and trajectory graphs "
                         f"(e.g. {present[0]}); nothing was imported")
    _check_used_versions(name, campaigns[0], content)
    new: dict[ox.NamedNode, list[ox.Triple]] = {}
    kept = 0
    for g, triples in content.items():
        if g == graphs.ONTOLOGY and store.raw.contains_named_graph(g):
            continue          # the store's own ontology stays
        if graphs.kind_of(g) in KNOWLEDGE and store.raw.contains_named_graph(g):
            if store.version_of(g) != _version(g, triples):
                raise InputError(f"{name}: the store holds another version of <{g.value}> than the campaign used; "
                                 "nothing was imported (use a separate store to compare them)")
            kept += 1
            continue
        new[g] = triples
    store.write_graphs(new)
    trajectories = sum(1 for g in content if graphs.kind_of(g) == "trajectory")
    added = sum(1 for g in new if graphs.kind_of(g) in KNOWLEDGE)
    return ImportResult(campaigns[0].value.rsplit("/", 1)[1], trajectories, added, kept)
