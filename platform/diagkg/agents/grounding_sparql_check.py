"""A language model's SPARQL query, checked against the ontology before it runs.

:meth:`QueryChecker.check` returns a :class:`QueryVerdict`: accepted, or the first
reason it is not —

* ``query-syntax`` — it does not parse (the parser's words, with the line);
* ``query-update`` — it would change the graph (the view is read-only);
* ``query-remote`` — it would fetch something (``SERVICE``);
* ``query-undeclared`` — a property or class the ontology does not declare (with the
  nearest declared names: "did you mean dk:hasPort?"), or any ``dk:`` term it does not;
* ``query-domain`` / ``query-range`` — a typed term used where a property's declared
  ``rdfs:domain`` or ``rdfs:range`` excludes it: a variable typed in the query
  (``?x a dk:Bulb``) or an IRI the graph types, whose classes are all disjoint from it in
  the class hierarchy (neither a subclass nor a superclass), a literal where a class is
  expected, an IRI where a datatype is. Untyped variables pass.

The ontology is read from the graph with ``queries/ontology-declarations.rq`` and
``ontology-subclasses.rq`` (once per version of the ontology graph); the terms of the
RDF, RDFS, OWL, XSD, SHACL and PROV-O vocabularies count as declared. Queries may use the usual
prefixes without declaring them (:data:`PREFIXES`). Running an accepted query, bounded in
time and size, is :mod:`.grounding_bounded`'s job.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Iterator, Mapping

import pyoxigraph as ox

from ..errors import QueryError
from ..kg import graphs
from ..kg.memo import Memo
from ..kg.sparql_scan import scan
from ..kg.vocab import DK_NS

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource

RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS_NS = "http://www.w3.org/2000/01/rdf-schema#"
OWL_NS = "http://www.w3.org/2002/07/owl#"
XSD_NS = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = RDF_NS + "type"
# prefixes a query may use without declaring them (and that the answers are written with)
PREFIXES = {"dk": DK_NS, "rdf": RDF_NS, "rdfs": RDFS_NS, "owl": OWL_NS, "xsd": XSD_NS,
            "dcterms": "http://purl.org/dc/terms/", "skos": "http://www.w3.org/2004/02/skos/core#",
            "prov": "http://www.w3.org/ns/prov#", "sosa": "http://www.w3.org/ns/sosa/", "ssn": "http://www.w3.org/ns/ssn/"}
DATATYPE_NAMESPACES = (XSD_NS,)
LITERAL_CLASSES = frozenset({RDFS_NS + "Literal", RDF_NS + "langString", RDF_NS + "PlainLiteral", RDFS_NS + "Datatype"})


class QueryCode(StrEnum):
    """A query's verdict (the code recorded on the call that asked it, ``dk:choiceRejected``)."""

    ACCEPTED = "query-accepted"
    SYNTAX = "query-syntax"
    UPDATE = "query-update"
    REMOTE = "query-remote"
    UNDECLARED = "query-undeclared"
    DOMAIN = "query-domain"
    RANGE = "query-range"
    TIMEOUT = "query-timeout"       # accepted, then stopped at the time limit (diagkg.agents.grounding_bounded)


@dataclass(frozen=True)
class Finding:
    """One thing wrong with a query: the term, and what would have been right."""

    code: QueryCode
    term: str
    detail: str
    suggestions: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code.value, "term": self.term, "detail": self.detail, "did_you_mean": list(self.suggestions)}


@dataclass(frozen=True)
class QueryVerdict:
    code: QueryCode
    findings: tuple[Finding, ...] = ()

    @property
    def accepted(self) -> bool:
        return self.code is QueryCode.ACCEPTED


def short(iri: str) -> str:
    """An IRI with the usual prefix (``dk:hasPort``), else in angle brackets."""
    for prefix, ns in PREFIXES.items():
        if iri.startswith(ns) and iri[len(ns):].replace("_", "").replace("-", "").isalnum():
            return f"{prefix}:{iri[len(ns):]}"
    return f"<{iri}>"


@dataclass
class Ontology:
    """What the ontology graph declares: terms, properties, classes, domains, ranges and superclasses."""

    declared: set[str] = field(default_factory=set)
    properties: set[str] = field(default_factory=set)
    classes: set[str] = field(default_factory=set)
    domains: dict[str, set[str]] = field(default_factory=dict)
    ranges: dict[str, set[str]] = field(default_factory=dict)
    supers: dict[str, set[str]] = field(default_factory=dict)

    def compatible(self, types: set[str], expected: str) -> bool:
        """Whether something of ``types`` can be an ``expected`` (a type below or above it;
        types the hierarchy does not know say nothing)."""
        known = {t for t in types if t in self.classes}
        if not known or expected not in self.classes:
            return True
        return any(t == expected or expected in self.supers.get(t, ()) or t in self.supers.get(expected, ())
                   for t in known)


_ONTOLOGIES: Memo[Ontology] = Memo("grounding ontologies", 8)      # by the ontology's version


def ontology_of(source: KnowledgeSource) -> Ontology:
    """The declarations of ``source``'s ontology graph (read once per version)."""
    version = source.version_of(graphs.ONTOLOGY)
    found = _ONTOLOGIES.get(version)
    if found is not None:
        return found
    onto = Ontology()
    for r in source.select("ontology-declarations", {"ontology": graphs.ONTOLOGY}):
        term, kind = r["term"], r["declaredAs"] or ""
        onto.declared.add(term)
        if kind.endswith("Property") and kind.startswith((OWL_NS, RDF_NS)):
            onto.properties.add(term)
        if kind in (OWL_NS + "Class", RDFS_NS + "Class") or (kind and kind.startswith(DK_NS) and kind.endswith("Type")):
            onto.classes.add(term)
        if r["domain"]:
            onto.domains.setdefault(term, set()).add(r["domain"])
        if r["range"]:
            onto.ranges.setdefault(term, set()).add(r["range"])
    for r in source.select("ontology-subclasses", {"ontology": graphs.ONTOLOGY}):
        onto.supers.setdefault(r["class"], set()).add(r["superclass"])
        onto.classes.update((r["class"], r["superclass"]))
    return _ONTOLOGIES.put(version, onto)


def _standard(iri: str) -> bool:
    """A term of the RDF, RDFS, OWL, XSD, SHACL or PROV-O vocabularies (as their closed namespaces list
    them: validation records are SHACL's own reports with PROV-O provenance)."""
    from rdflib.namespace import OWL, PROV, RDF, RDFS, SH, XSD
    from rdflib.term import URIRef

    for closed in (RDF, RDFS, OWL, XSD, SH, PROV):
        if iri.startswith(str(closed)):
            return URIRef(iri) in closed
    return False


Triple = tuple[Any, Any, Any]


def _blocks(node: Any) -> Iterator[list[Triple]]:
    """The blocks of triple patterns of an rdflib algebra tree (in groups, optionals, unions,
    EXISTS…): the patterns of one block hold together, those of two blocks may not (a union)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, CompValue):
        if node.name in ("BGP", "TriplesBlock"):
            # a TriplesBlock (inside EXISTS) keeps each run of patterns as one flat list
            yield [(t[i], t[i + 1], t[i + 2]) for t in node.get("triples") or [] for i in range(0, len(t) - 2, 3)]
        for value in node.values():
            yield from _blocks(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from _blocks(value)


def _iris(node: Any, seen: set[int] | None = None) -> Iterator[str]:
    """Every IRI anywhere in an algebra tree (expressions and paths included)."""
    from rdflib.paths import Path
    from rdflib.plugins.sparql.parserutils import CompValue
    from rdflib.term import URIRef

    if isinstance(node, URIRef):
        yield str(node)
    elif isinstance(node, CompValue):
        for value in node.values():
            yield from _iris(value)
    elif isinstance(node, Path):
        for value in vars(node).values():
            yield from _iris(value)
    elif isinstance(node, (list, tuple, set, frozenset)):
        for value in node:
            yield from _iris(value)


class QueryChecker:
    """Checks queries against what ``source`` (an assistant's view) declares and types."""

    def __init__(self, source: KnowledgeSource, prefixes: Mapping[str, str] | None = None):
        self.source = source
        self.ontology = ontology_of(source)
        self.prefixes = dict(PREFIXES if prefixes is None else prefixes)     # those a query may use undeclared
        self._types: dict[str, set[str]] = {}

    def types_of(self, iri: str) -> set[str]:
        if iri not in self._types:
            self._types[iri] = {r["type"] for r in self.source.select("term-types", {"term": ox.NamedNode(iri)})}
        return self._types[iri]

    def check(self, text: str) -> QueryVerdict:
        """The verdict on a query (see the module)."""
        try:
            scanned = scan(text)
        except QueryError as exc:
            return QueryVerdict(QueryCode.SYNTAX, (Finding(QueryCode.SYNTAX, "", str(exc)),))
        if scanned.is_update:
            return QueryVerdict(QueryCode.UPDATE, (Finding(QueryCode.UPDATE, "", "an update: the knowledge view is read-only; "
                                                                              "ask with SELECT, ASK, CONSTRUCT or DESCRIBE"),))
        if scanned.remotes:
            return QueryVerdict(QueryCode.REMOTE, (Finding(QueryCode.REMOTE, str(scanned.remotes[0]),
                                                           "a query may not fetch anything"),))
        from rdflib.namespace import Namespace
        from rdflib.plugins.sparql.algebra import translateQuery
        from rdflib.plugins.sparql.parser import parseQuery

        try:
            algebra = translateQuery(parseQuery(text), initNs={k: Namespace(v) for k, v in self.prefixes.items()}).algebra
        except Exception as exc:     # pyparsing's and rdflib's errors: the query is not SPARQL it can read
            return QueryVerdict(QueryCode.SYNTAX, (Finding(QueryCode.SYNTAX, "", str(exc).splitlines()[0][:200]),))
        blocks = list(_blocks(algebra))
        findings = self._undeclared(algebra, [t for block in blocks for t in block])
        if findings:
            return QueryVerdict(QueryCode.UNDECLARED, tuple(findings))
        findings = [f for block in blocks for f in self._misused(block)]
        if findings:
            return QueryVerdict(findings[0].code, tuple(findings))
        return QueryVerdict(QueryCode.ACCEPTED)

    # -- declared terms ----------------------------------------------------
    def _undeclared(self, algebra: Any, triples: list[Triple]) -> list[Finding]:
        from rdflib.paths import Path
        from rdflib.term import URIRef

        onto = self.ontology
        out: list[Finding] = []
        reported: set[str] = set()

        def report(iri: str, what: str, pool: set[str]) -> None:
            if iri in reported:
                return
            reported.add(iri)
            near = difflib.get_close_matches(short(iri), sorted(short(t) for t in pool), n=3, cutoff=0.7)
            out.append(Finding(QueryCode.UNDECLARED, short(iri), f"the ontology declares no {what} {short(iri)}", tuple(near)))

        def known(iri: str, pool: set[str]) -> bool:
            return iri in pool or _standard(iri)

        for _s, p, o in triples:
            predicates = [str(p)] if isinstance(p, URIRef) else list(_iris(p)) if isinstance(p, Path) else []
            for pred in predicates:
                if not known(pred, onto.properties):
                    report(pred, "property", onto.properties)
            if isinstance(p, URIRef) and str(p) == RDF_TYPE and isinstance(o, URIRef) and not known(str(o), onto.classes):
                report(str(o), "class", onto.classes)
        for iri in _iris(algebra):
            if iri.startswith(DK_NS) and iri not in onto.declared:
                report(iri, "term", onto.declared)
        return out

    # -- domains and ranges -------------------------------------------------
    def _misused(self, triples: list[Triple]) -> list[Finding]:
        """What one block of patterns uses outside a domain or range (its variables typed in the block)."""
        from rdflib.term import Literal, URIRef, Variable

        onto = self.ontology
        typed: dict[str, set[str]] = {}
        for s, p, o in triples:
            if isinstance(s, Variable) and isinstance(p, URIRef) and str(p) == RDF_TYPE and isinstance(o, URIRef):
                typed.setdefault(str(s), set()).add(str(o))

        def types(term: Any) -> set[str]:
            if isinstance(term, Variable):
                return typed.get(str(term), set())
            if isinstance(term, URIRef):
                return self.types_of(str(term))
            return set()

        out: list[Finding] = []
        for s, p, o in triples:
            if not isinstance(p, URIRef) or str(p) == RDF_TYPE:
                continue
            prop = str(p)
            for domain in sorted(onto.domains.get(prop, ())):
                given = types(s)
                if given and not onto.compatible(given, domain):
                    out.append(Finding(QueryCode.DOMAIN, f"{_show(s)} {short(prop)}",
                                       f"{short(prop)} applies to a {short(domain)}; {_show(s)} is a "
                                       f"{', '.join(sorted(short(t) for t in given))}"))
            for range_ in sorted(onto.ranges.get(prop, ())):
                datatype = range_.startswith(DATATYPE_NAMESPACES) or range_ in LITERAL_CLASSES
                if isinstance(o, Literal):
                    if not datatype:
                        out.append(Finding(QueryCode.RANGE, f"{short(prop)} {o.n3()}",
                                           f"{short(prop)} leads to a {short(range_)}, not to a literal"))
                    continue
                given = types(o)
                if datatype and (given or isinstance(o, URIRef)):
                    out.append(Finding(QueryCode.RANGE, f"{short(prop)} {_show(o)}",
                                       f"{short(prop)} leads to a literal ({short(range_)}), not to a resource"))
                elif given and not onto.compatible(given, range_):
                    out.append(Finding(QueryCode.RANGE, f"{short(prop)} {_show(o)}",
                                       f"{short(prop)} leads to a {short(range_)}; {_show(o)} is a "
                                       f"{', '.join(sorted(short(t) for t in given))}"))
        return out


def _show(term: Any) -> str:
    from rdflib.term import URIRef, Variable

    if isinstance(term, Variable):
        return f"?{term}"
    if isinstance(term, URIRef):
        return short(str(term))
    return str(term)[:60]


__all__ = ["Finding", "Ontology", "PREFIXES", "QueryChecker", "QueryCode", "QueryVerdict", "ontology_of", "short"]
