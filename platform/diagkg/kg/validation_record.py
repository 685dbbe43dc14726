"""Validation reports kept in the store (``diagkg validate --record``): SHACL's report, with provenance.

A run of the validator becomes one named graph ``validation/{id}`` holding

* an ``sh:ValidationReport`` (``sh:conforms``), one ``sh:ValidationResult`` per
  violation: ``sh:focusNode``, ``sh:resultPath`` (a single property),
  ``sh:value``, ``sh:sourceShape``, ``sh:sourceConstraintComponent`` (pySHACL's,
  or diagkg's own for its checks beside the shapes: ``dk:UnknownTermConstraintComponent``,
  ``dk:ExpressionConstraintComponent``, ``dk:SystemContextConstraintComponent``,
  ``dk:WellFormedConstraintComponent`` for a file that is not readable RDF),
  ``sh:resultSeverity``, ``sh:resultMessage``, and where it was written
  (``dk:sourceDocument``, the file; ``dk:sourceLine``);
* its provenance (PROV-O): the report ``prov:wasGeneratedBy`` a ``prov:Activity``
  (start and end, ``prov:used`` every file, each with its ``dk:contentHash``, and
  the shapes' graph) ``prov:wasAssociatedWith`` the validator (a
  ``prov:SoftwareAgent`` labelled with diagkg's version).

``queries/validation-reports.rq`` lists them.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import pyoxigraph as ox

from . import graphs
from .rdfio import datetime_literal, to_oxigraph
from .vocab import DK

if TYPE_CHECKING:  # pragma: no cover
    from .store import KnowledgeStore
    from .validation import FileReport

SH = "http://www.w3.org/ns/shacl#"
PROV = "http://www.w3.org/ns/prov#"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
RDFS_LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
REPORT_BASE = "https://w3id.org/diagkg/validation/"
SEVERITIES = {"Violation": "Violation", "Warning": "Warning", "Info": "Info"}


def _sh(local: str) -> ox.NamedNode:
    return ox.NamedNode(SH + local)


def _prov(local: str) -> ox.NamedNode:
    return ox.NamedNode(PROV + local)


def _term(n3: str | None) -> ox.NamedNode | ox.BlankNode | ox.Literal | None:
    """A term written in N-Triples (or Turtle's long strings) back as a term."""
    if n3 is None:
        return None
    import rdflib
    from rdflib.util import from_n3

    term = from_n3(n3)
    if not isinstance(term, (rdflib.URIRef, rdflib.BNode, rdflib.Literal)):
        raise ValueError(f"not an RDF term: {n3!r}")
    return to_oxigraph(term)


def file_iri(path: str) -> ox.NamedNode:
    """The ``file:`` IRI of a file named on the command line (absolute)."""
    return ox.NamedNode(Path(path).resolve().as_uri())


def content_hash(path: str) -> str | None:
    try:
        return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def report_triples(reports: Sequence[FileReport], *, started: datetime, ended: datetime, agent: str,
                   report_id: str | None = None) -> tuple[ox.NamedNode, ox.NamedNode, list[ox.Triple]]:
    """The graph, the report's IRI and the triples of a validation run (see the module's documentation)."""
    rid = report_id or f"{ended.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    report = ox.NamedNode(REPORT_BASE + rid)
    activity, software = ox.NamedNode(report.value + "#activity"), ox.NamedNode(report.value + "#validator")
    out: list[ox.Triple] = []

    def add(s: ox.NamedNode | ox.BlankNode, p: ox.NamedNode, o: ox.NamedNode | ox.BlankNode | ox.Literal) -> None:
        out.append(ox.Triple(s, p, o))

    conforms = all(r.conforms for r in reports)
    add(report, RDF_TYPE, _sh("ValidationReport"))
    add(report, RDF_TYPE, _prov("Entity"))
    add(report, _sh("conforms"), ox.Literal(str(conforms).lower(), datatype=ox.NamedNode(XSD + "boolean")))
    add(report, _prov("wasGeneratedBy"), activity)
    add(report, _prov("generatedAtTime"), datetime_literal(ended))
    add(activity, RDF_TYPE, _prov("Activity"))
    add(activity, RDFS_LABEL, ox.Literal("diagkg validate"))
    add(activity, _prov("startedAtTime"), datetime_literal(started))
    add(activity, _prov("endedAtTime"), datetime_literal(ended))
    add(activity, _prov("wasAssociatedWith"), software)
    add(activity, _prov("used"), graphs.SHAPES)
    add(software, RDF_TYPE, _prov("SoftwareAgent"))
    add(software, RDFS_LABEL, ox.Literal(agent))
    n = 0
    for r in reports:
        source = file_iri(r.file)
        add(activity, _prov("used"), source)
        add(source, RDF_TYPE, _prov("Entity"))
        digest = content_hash(r.file)
        if digest is not None:
            add(source, DK.contentHash.node, ox.Literal(digest))
        if r.error is not None:
            n += 1
            result = ox.NamedNode(f"{report.value}#result-{n}")
            add(report, _sh("result"), result)
            add(result, RDF_TYPE, _sh("ValidationResult"))
            add(result, _sh("focusNode"), source)
            add(result, _sh("resultSeverity"), _sh("Violation"))
            add(result, _sh("sourceConstraintComponent"), DK.WellFormedConstraintComponent.node)
            add(result, _sh("resultMessage"), ox.Literal(str(r.error)))
            add(result, DK.sourceDocument.node, source)
        for v in r.violations:
            n += 1
            result = ox.NamedNode(f"{report.value}#result-{n}")
            add(report, _sh("result"), result)
            add(result, RDF_TYPE, _sh("ValidationResult"))
            focus = _term(v.focus_node)
            add(result, _sh("focusNode"), focus if focus is not None else source)
            for prop, term in (("resultPath", _term(v.result_path)), ("value", _term(v.value_term)),
                               ("sourceShape", _term(v.source_shape)),
                               ("sourceConstraintComponent", _term(v.component))):
                if term is not None:
                    add(result, _sh(prop), term)
            add(result, _sh("resultSeverity"), _sh(SEVERITIES.get(v.severity, "Violation")))
            add(result, _sh("resultMessage"), ox.Literal(v.message))
            add(result, DK.sourceDocument.node, source)
            if v.line:
                add(result, DK.sourceLine.node, ox.Literal(str(v.line), datatype=ox.NamedNode(XSD + "integer")))
    return graphs.named("validation", rid), report, out


def record(store: KnowledgeStore, reports: Sequence[FileReport], *, started: datetime, agent: str) -> ox.NamedNode:
    """Store a validation run's report in a graph of its own; returns the report's IRI."""
    graph, report, triples = report_triples(reports, started=started, ended=datetime.now(timezone.utc), agent=agent)
    store.write_graphs({graph: triples})
    return report
