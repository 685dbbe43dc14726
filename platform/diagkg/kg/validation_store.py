"""What ``diagkg validate`` says of files in the context of the store besides the shapes: the collisions
``diagkg load`` would refuse (a scenario number, identifier or IRI, a system key or IRI that the store holds
from another file: :mod:`diagkg.kg.collisions`), each a violation located at the claim's statement
(``dk:scenarioNumber 902``), so that validate passes no file that load refuses for what it claims."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import pyoxigraph as ox

from .collisions import batch_conflicts, held_claims, plan_against
from .loading import IDENTIFIER, RDF_TYPE, entry_for, origin_of
from .rdfio import RdfDocument, value_of
from .violations import Violation
from .vocab import DK

if TYPE_CHECKING:  # pragma: no cover
    from .store import KnowledgeStore
    from .validation import FileReport

# the property each kind of claim is stated by (a scenario's or system's IRI: its rdf:type)
_CLAIMED_BY = {"scenario number": DK.scenarioNumber.node, "scenario identifier": IDENTIFIER,
               "system key": DK.systemKey.node}


def store_collisions(store: "KnowledgeStore | None", reports: Sequence["FileReport"]) -> None:
    """Add to each report the collisions of its file with what ``store`` holds from other files (None: no store), and
    with the other files of the batch (load refuses to load two files that claim the same together)."""
    readable = [r for r in reports if r.document is not None and not r.document.named_graphs]
    if not readable:
        return
    entries = [entry_for(r.document, origin_of(r.file)) for r in readable if r.document is not None]
    found: list[tuple[RdfDocument, tuple[str, str] | None, str]] = []
    for clash in batch_conflicts(entries):
        what = f"the {clash.claim[0]} {clash.claim[1]}" if clash.claim is not None else f"the graph <{clash.graph}>"
        found.append((clash.doc, clash.claim, f"defines {what}, as {clash.other.name} does: diagkg load refuses the "
                                              "two together"))
    origins: dict[str, str | None] = {r["graph"]: r["source"] for r in store.select("graph-sources")} if store else {}
    for g in store.reading(lambda raw: list(raw.named_graphs())) if store is not None else ():
        if isinstance(g, ox.NamedNode):
            origins.setdefault(g.value, None)
    held = held_claims(store.select("graph-claims")) if store is not None else []
    for conflict in plan_against(entries, held, False, origins).conflicts:
        found.append((conflict.doc, conflict.claim,
                      f"defines {conflict.what}, which the store already holds in <{conflict.graph}> from "
                      f"{conflict.source}: diagkg load refuses it (load --replace replaces that graph; keep a copy "
                      "first with `diagkg dump`)"))
    for doc, claim, message in found:
        report = next(r for r in readable if r.document is doc)
        report.violations = sorted([*report.violations, _violation(report.file, doc, claim, message)],
                                   key=lambda v: (v.line or 0, v.focus, v.path, v.message))


def _claimed_at(doc: RdfDocument, claim: tuple[str, str] | None) -> tuple[ox.NamedNode | ox.BlankNode, ox.NamedNode]:
    """The subject and property of the statement that makes ``claim`` (None: the document's scenario or system)."""
    if claim is not None and claim[0] in _CLAIMED_BY:
        prop = _CLAIMED_BY[claim[0]]
        for t in doc.triples:
            if t.predicate == prop and not isinstance(t.subject, ox.Triple) and _same(claim, value_of(t.object)):
                return t.subject, prop
    typed = [t.subject for t in doc.triples if t.predicate == RDF_TYPE and not isinstance(t.subject, ox.Triple)
             and t.object in (DK.Scenario.node, DK.System.node)]
    iri = ox.NamedNode(claim[1]) if claim is not None and claim[0] in ("scenario", "system") else None
    return next((s for s in typed if s == iri), typed[0] if typed else ox.BlankNode()), RDF_TYPE


def _same(claim: tuple[str, str], value: str) -> bool:
    if claim[0] == "scenario number":
        try:
            return str(int(value)) == claim[1]
        except ValueError:
            pass
    return value == claim[1]


def _violation(file: str, doc: RdfDocument, claim: tuple[str, str] | None, message: str) -> Violation:
    import rdflib

    from .rdfio import to_rdflib

    subject, prop = _claimed_at(doc, claim)
    s, p = to_rdflib(subject), to_rdflib(prop)
    start = doc.line_of(s)
    line = (doc.statement_line(s, p) if prop != RDF_TYPE else None) or start
    names = doc.graph.namespace_manager

    def show(term: rdflib.term.Node) -> str:
        return names.normalizeUri(term) if isinstance(term, rdflib.URIRef) else "[]"

    return Violation(
        file=file, focus=show(s), path="rdf:type" if prop == RDF_TYPE else show(p), message=message,
        line=line, shape="store identities", value=claim[1] if claim is not None else None,
        focus_node=s.n3() if isinstance(s, (rdflib.URIRef, rdflib.BNode)) else None, result_path=p.n3(),
        component=DK.StoreIdentityConstraintComponent.uri.n3())
