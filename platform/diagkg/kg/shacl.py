"""pySHACL, the reference engine, on rdflib graphs: its runs and the located violations it reports.

:mod:`diagkg.kg.validation` decides what pySHACL validates (every document, or
the focus nodes :mod:`diagkg.kg.conformance` could not clear); this module runs
it and turns each result into a :class:`~diagkg.kg.validation.Violation` that
names the file, the line, the focus node, the path and the message. rdflib and
pySHACL are imported here only, when a document needs them.
"""

from __future__ import annotations

import collections
import contextlib
import re
import threading
import warnings
from functools import lru_cache
from typing import Any, Callable, Iterator, Mapping, Sequence

import pyoxigraph as ox
import pyshacl
import rdflib
from pyshacl.shape import Shape
from rdflib.namespace import RDF, SH
from rdflib.plugins.sparql import processor as _sparql_processor
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.sparql import Query

from ..errors import ExpressionError, nearest
from . import resources
from .rdfio import RdfDocument, to_oxigraph_triple, to_rdflib
from .violations import Violation
from .vocab import DK, DK_NS


def folder_graph(folder: str) -> rdflib.Graph:
    g = rdflib.Graph()
    for f in resources.files(folder):
        g.parse(data=f.read_text(encoding="utf-8"), format="turtle")
    return g


@lru_cache(maxsize=1)
def default_ontology() -> rdflib.Graph:
    """The shipped ontology (cached; do not modify)."""
    return folder_graph("ontology")


@lru_cache(maxsize=1)
def default_shapes() -> rdflib.Graph:
    """The shipped shapes (cached; do not modify)."""
    return folder_graph("shapes")


@lru_cache(maxsize=16)
def shipped_system_graph(iri: str) -> rdflib.Graph | None:
    """The shipped description of the system with this IRI, if there is one."""
    for f in resources.system_files():
        text = f.read_text(encoding="utf-8")
        if iri.rsplit("/", 1)[0] not in text:
            continue
        g = rdflib.Graph()
        g.parse(data=text, format="turtle")
        if (rdflib.URIRef(iri), RDF.type, DK.System.uri) in g:
            return g
    return None


def as_graph(triples: Sequence[ox.Triple]) -> rdflib.Graph:
    """Oxigraph triples as an rdflib graph (strings plain, as a parsed file gives them)."""
    g = rdflib.Graph()
    for t in triples:
        g.add((to_rdflib(t.subject), to_rdflib(t.predicate), to_rdflib(t.object)))
    return g


def as_triples(graph: rdflib.Graph) -> list[ox.Triple]:
    return [to_oxigraph_triple(t) for t in graph]


def has_explicit_strings(graph: rdflib.Graph) -> bool:
    """Does the graph hold a literal typed ``xsd:string`` explicitly (rdflib keeps it apart from a plain one)?"""
    return any(isinstance(o, rdflib.Literal) and o.datatype == rdflib.XSD.string for o in graph.objects())


def nodes_of(doc: RdfDocument) -> set[rdflib.term.Node]:
    return {*doc.graph.subjects(), *doc.graph.objects()}


class DataBase:
    """The ontology as the lasting part of the data graphs pySHACL validates: copied into one graph once,
    the documents and their context added to it for a run and taken out after (copying the ontology, 3,400
    triples, into a new graph for each run was 30 ms, more than the run of a small document). A run holds
    the graph alone (:meth:`holding`); each run's prefixes are those of its documents only, as in a graph
    of its own."""

    def __init__(self, ontology: rdflib.Graph):
        self._ontology = ontology
        self._lock = threading.Lock()
        self._graph = self._fresh()

    def _fresh(self) -> rdflib.Graph:
        graph = rdflib.Graph()
        graph += self._ontology
        return graph

    @contextlib.contextmanager
    def holding(self, graphs: Sequence[rdflib.Graph], prefixes: Sequence[tuple[str, Any]]) -> Iterator[rdflib.Graph]:
        """The ontology with ``graphs`` added and ``prefixes`` bound (a prefix already bound keeps its
        first namespace), for the ``with`` block; afterwards the ontology alone again."""
        with self._lock:
            data = self._graph
            data.namespace_manager = rdflib.Graph().namespace_manager    # a new graph's bindings, no earlier run's
            for prefix, ns in prefixes:
                data.bind(prefix, ns, override=False)
            ontology = self._ontology
            added = dict.fromkeys(t for g in graphs for t in g if t not in ontology)     # in the documents' order
            data.addN((s, p, o, data) for s, p, o in added)
            try:
                yield data
            finally:
                for t in added:
                    data.remove(t)
                if len(data) != len(ontology):      # the ontology changed, or a run wrote into the data: start again
                    self._graph = self._fresh()


def run(shapes: rdflib.Graph, base: DataBase, docs: Sequence[RdfDocument],
        context: Sequence[rdflib.Graph], out: dict[str, list[Violation]],
        focus: set[rdflib.term.Node] | None = None) -> None:
    """Validate ``docs`` with pySHACL and add each violation to the list of the
    document that wrote its focus node. The data graph is the documents plus
    the ontology (``base``'s graph, so that class membership and the component-type metaclass
    are visible) plus the context; only focus nodes written in a document are
    reported, and with ``focus`` only those nodes are validated at all (each
    focus node's results do not depend on the others')."""
    prefixes = [binding for doc in docs for binding in doc.graph.namespaces()]
    with base.holding([*(doc.graph for doc in docs), *context], prefixes) as data, \
            _prepared_query_cache(), _focus_only(focus):
        conforms, report, _ = pyshacl.validate(
            data, shacl_graph=shapes, inference="none",
            advanced=False, allow_warnings=True, abort_on_first=False, meta_shacl=False,
        )
        if not conforms:
            _collect(shapes, docs, context, data, report, out)


def _collect(shapes: rdflib.Graph, docs: Sequence[RdfDocument], context: Sequence[rdflib.Graph], data: rdflib.Graph,
             report: rdflib.Graph, out: dict[str, list[Violation]]) -> None:
    # a node belongs to the document that describes it (a subject there), else to one that names it; not to a
    # document that only names a node the context describes (a scenario naming sys:fuse reported the violations
    # of the fuse its system file wrote, at its own line)
    owners: dict[rdflib.term.Node, RdfDocument] = {}
    for doc in docs:
        for node in doc.graph.subjects():
            owners.setdefault(node, doc)
    described = {node for g in context for node in g.subjects()}
    for doc in docs:
        for node in doc.graph.objects():
            if node not in described:
                owners.setdefault(node, doc)
    # the report's own results; the details pySHACL nests under them (why a
    # value failed an sh:node shape, with the value itself as focus) repeat them
    with warnings.catch_warnings():       # rdflib warns of an ill-typed value ("abc"^^xsd:decimal) as it writes it
        warnings.simplefilter("ignore")
        for result in report.objects(None, SH.result):
            focus = report.value(result, SH.focusNode)
            owner = owners.get(focus) if focus is not None else None
            if owner is not None:
                out[owner.name].append(_violation(shapes, owner, data, report, result))


def orphan(doc: RdfDocument, iri: str) -> Violation:
    """The violation of a document whose system (dk:onSystem) cannot be found."""
    subject = next(doc.graph.subjects(DK.onSystem.uri, rdflib.URIRef(iri)))
    return Violation(
        file=doc.name, focus=_show(doc.graph, subject), path="dk:onSystem",
        message=f"the system {_show(doc.graph, rdflib.URIRef(iri))} is not known here: "
                "it is neither in the store nor among the files given; load its "
                "description first, or give it together with this file",
        line=doc.line_of(subject), shape="system context", focus_node=subject.n3(),
        result_path=DK.onSystem.uri.n3(), value_term=rdflib.URIRef(iri).n3(),
        component=DK.SystemContextConstraintComponent.uri.n3())


def _node_shape(shapes: rdflib.Graph, shape: rdflib.term.Node | None) -> str | None:
    """The named node shape a result comes from (property and SPARQL
    constraints are blank nodes hanging off it)."""
    if shape is None:
        return None
    owner = _owning_shape(shapes, shape)
    return shapes.namespace_manager.normalizeUri(owner) if isinstance(owner, rdflib.URIRef) else None


def unknown_terms(doc: RdfDocument, known: frozenset[str]) -> list[Violation]:
    """The dk: terms a document uses that the ontology does not define, located: once per node that uses one, at
    the first line from that node's where the term is written (a misspelt property on three bulbs is three
    violations, each at its bulb)."""
    out: list[Violation] = []
    seen: set[tuple[rdflib.term.Node, str]] = set()
    for s, p, o in doc.graph:
        for term, role in ((p, "property"), (o, "value")):
            if isinstance(term, rdflib.URIRef) and str(term).startswith(DK_NS) and str(term) not in known:
                if (s, str(term)) in seen:
                    continue
                seen.add((s, str(term)))
                start = _line_of_node(doc, doc.graph, s)
                out.append(Violation(
                    file=doc.name, focus=_show(doc.graph, s), path=_show(doc.graph, p),
                    message=f"unknown term {_show(doc.graph, term)}: it is not in the diagkg ontology "
                            f"(used as a {role})",
                    line=doc.statement_line(s, p, term if role == "value" else None)
                    or (doc.line_of(term, start) if start is not None else None) or doc.line_of(term) or start,
                    shape="ontology terms", focus_node=s.n3(), result_path=p.n3() if isinstance(p, rdflib.URIRef) else None,
                    value_term=term.n3(), component=DK.UnknownTermConstraintComponent.uri.n3(),
                    suggestion=_nearest_term(doc, term, known),
                ))
    return sorted(out, key=lambda v: (v.line or 0, v.focus))


def bad_expressions(doc: RdfDocument) -> list[Violation]:
    """Behaviour expressions that would be refused when simulating."""
    from .expressions import COUPLING_FUNCTIONS, ELEMENT_FUNCTIONS, RESULT_FUNCTIONS, compile_expression, coupling_problems

    out = []
    for prop, functions in ((DK.valueExpression, ELEMENT_FUNCTIONS), (DK.condition, ELEMENT_FUNCTIONS),
                            (DK.saturationCurrentExpression, ELEMENT_FUNCTIONS),
                            (DK.emissionCoefficientExpression, ELEMENT_FUNCTIONS), (DK.emitsLightWhen, RESULT_FUNCTIONS),
                            (DK.damagedWhen, RESULT_FUNCTIONS),
                            (DK.closedWhen, COUPLING_FUNCTIONS)):
        for s, o in doc.graph.subject_objects(prop.uri):
            try:
                problems = coupling_problems(compile_expression(str(o), "expression", functions), str(s),
                                             ((str(a), str(b), str(c)) for a, b, c in doc.graph))
            except ExpressionError as exc:
                problems = [str(exc).replace("expression: ", "", 1)]
            for problem in problems:
                out.append(Violation(
                    file=doc.name, focus=_describe(doc.graph, s), path=_show(doc.graph, prop.uri),
                    message=problem,
                    line=doc.statement_line(s, prop.uri, o) or _line_of_node(doc, doc.graph, s),
                    shape="behaviour expressions",
                    focus_node=s.n3(), result_path=prop.uri.n3(), value_term=o.n3(),
                    component=DK.ExpressionConstraintComponent.uri.n3()))
    return out


def _violation(shapes: rdflib.Graph, doc: RdfDocument, data: rdflib.Graph, report: rdflib.Graph,
               result: rdflib.term.Node) -> Violation:
    focus = report.value(result, SH.focusNode)
    assert focus is not None   # results are reported for the document that wrote their focus node
    path = report.value(result, SH.resultPath)
    value = report.value(result, SH.value)
    message = report.value(result, SH.resultMessage)
    severity = report.value(result, SH.resultSeverity)
    shape = report.value(result, SH.sourceShape)
    return Violation(
        file=doc.name,
        focus=_describe(doc.graph, focus),
        path=_show_path(doc.graph, report, path) if path is not None else "(the node itself)",
        message=_shorten(str(message), doc.graph) if message else "does not conform",
        line=(doc.statement_line(focus, path, value) if isinstance(path, rdflib.URIRef) else None)
        or _line_of_node(doc, data, focus),
        severity=str(severity).rsplit("#", 1)[-1] if severity else "Violation",
        value=_show(doc.graph, value) if value is not None else None,
        shape=_node_shape(shapes, shape),
        focus_node=focus.n3(),
        result_path=path.n3() if isinstance(path, rdflib.URIRef) else None,
        value_term=value.n3() if value is not None else None,
        source_shape=shape.n3() if isinstance(shape, rdflib.URIRef) else None,
        component=_n3(report.value(result, SH.sourceConstraintComponent)),
        suggestion=_nearest_declared(doc, data, value) or _nearest_declared(doc, data, focus),
    )


def _split(iri: str) -> tuple[str, str]:
    """An IRI as its namespace (up to the last ``/`` or ``#``) and its local name."""
    cut = max(iri.rfind("/"), iri.rfind("#")) + 1
    return iri[:cut], iri[cut:]


def _nearest_term(doc: RdfDocument, term: rdflib.term.Node, known: frozenset[str]) -> str | None:
    """The ontology term nearest to an unknown ``dk:`` term, as the file writes it."""
    local = str(term)[len(DK_NS):]
    near = nearest(local, (k[len(DK_NS):] for k in known if k.startswith(DK_NS)))
    return _show(doc.graph, rdflib.URIRef(DK_NS + near)) if near else None


def _nearest_declared(doc: RdfDocument, data: rdflib.Graph, term: rdflib.term.Node | None) -> str | None:
    """For an IRI declared nowhere (no statement is about it: a misspelt port in a connection), the nearest IRI
    of its namespace that is declared, as the file writes it; None for anything else."""
    if not isinstance(term, rdflib.URIRef) or (term, None, None) in data:
        return None
    namespace, local = _split(str(term))
    pool = {name for s in set(data.subjects()) if isinstance(s, rdflib.URIRef)
            for ns, name in [_split(str(s))] if ns == namespace and name}
    near = nearest(local, pool)
    return _show(doc.graph, rdflib.URIRef(namespace + near)) if near else None


def _n3(term: rdflib.term.Node | None) -> str | None:
    return term.n3() if isinstance(term, (rdflib.URIRef, rdflib.BNode, rdflib.Literal)) else None


_PATCH_LOCK = threading.Lock()
_TRANSLATED_MOST = 512      # SPARQL constraints (their text as pySHACL hands it over) kept translated
_TRANSLATED: collections.OrderedDict[tuple[str, str | None, tuple[tuple[str, Any], ...]], Query] = \
    collections.OrderedDict()


@contextlib.contextmanager
def _prepared_query_cache() -> Iterator[None]:
    """Translate each SPARQL constraint once per process instead of once per focus node.

    pySHACL hands rdflib the text of a SPARQL constraint for every focus node,
    and rdflib parses it every time (80 % of the validation time). A translated
    query is meant to be evaluated many times with different initial bindings
    (that is what ``prepareQuery`` is for), so while pySHACL runs, rdflib's
    SPARQL processor is given the translated queries keyed by their text, the
    base and the prefixes: kept from one validation to the next (the shapes'
    few constraints; most recently used first, :data:`_TRANSLATED_MOST` at most),
    each validation of a process after its first parses none of them.
    """
    from unittest import mock  # its patch puts the method back however the block ends

    original = _sparql_processor.SPARQLProcessor.query

    def query(self: _sparql_processor.SPARQLProcessor, strOrQuery: str | Query,  # noqa: N803
              initBindings: Mapping[str, rdflib.term.Identifier] | None = None,
              initNs: Mapping[str, Any] | None = None, base: str | None = None,
              DEBUG: bool = False) -> Mapping[str, Any]:
        if isinstance(strOrQuery, str):
            key = (strOrQuery, base, tuple(sorted((initNs or {}).items())))
            prepared = _TRANSLATED.get(key)
            if prepared is None:
                prepared = translateQuery(parseQuery(strOrQuery), base, initNs)
                _TRANSLATED[key] = prepared
                if len(_TRANSLATED) > _TRANSLATED_MOST:
                    with contextlib.suppress(KeyError):
                        _TRANSLATED.popitem(last=False)
            else:
                with contextlib.suppress(KeyError):     # dropped meanwhile by another thread's query
                    _TRANSLATED.move_to_end(key)
            strOrQuery = prepared
        return original(self, strOrQuery, initBindings, initNs, base, DEBUG)

    with _PATCH_LOCK, mock.patch.object(_sparql_processor.SPARQLProcessor, "query", query):
        yield


def _owning_shape(shapes: rdflib.Graph, shape: rdflib.term.Node) -> rdflib.term.Node:
    for prop in (SH.property, SH.sparql):
        for owner in shapes.subjects(prop, shape):
            return owner
    return shape


_IRI_IN_TEXT = re.compile(r"https?://[^\s,;()<>\"]+")


def _shorten(text: str, graph: rdflib.Graph) -> str:
    """Write the full IRIs that SPARQL messages substitute as prefixed names."""
    def short(m: re.Match[str]) -> str:
        iri = m.group(0)
        tail = iri[len(iri.rstrip(".:,;")):]
        return _show(graph, rdflib.URIRef(iri[: len(iri) - len(tail)])) + tail
    return _IRI_IN_TEXT.sub(short, text)


def _show(graph: rdflib.Graph, term: rdflib.term.Node) -> str:
    if isinstance(term, rdflib.URIRef):
        try:
            return graph.namespace_manager.normalizeUri(term)
        except Exception:  # pragma: no cover - rdflib refuses odd IRIs
            return f"<{term}>"
    if isinstance(term, rdflib.Literal):
        return term.n3(graph.namespace_manager)
    return "[]"


def _describe(graph: rdflib.Graph, term: rdflib.term.Node, depth: int = 0) -> str:
    """A readable name; a blank node is described by the triple that points to it."""
    if not isinstance(term, rdflib.BNode) or depth > 3:
        return _show(graph, term)
    for s, p in graph.subject_predicates(term):
        return f"{_describe(graph, s, depth + 1)} {_show(graph, p)} []"
    return "[]"


def _line_of_node(doc: RdfDocument, graph: rdflib.Graph, term: rdflib.term.Node, depth: int = 0) -> int | None:
    """The line where ``term`` is written; a blank node (``[ dk:about sys:ldr ; … ]``) is found from the line of
    what holds it on: the last of the first lines, from there, where each IRI it is said of is written."""
    if isinstance(term, rdflib.BNode) and depth < 4:
        for s in graph.subjects(None, term):
            start = _line_of_node(doc, graph, s, depth + 1)
            if start is None:
                return None
            own = [doc.line_of(o, start) for o in graph.objects(term) if isinstance(o, rdflib.URIRef)]
            return max((n for n in own if n is not None), default=start)
        return None
    return doc.line_of(term)


def _show_path(data: rdflib.Graph, report: rdflib.Graph, path: rdflib.term.Node) -> str:
    if isinstance(path, rdflib.BNode):
        inverse = report.value(path, SH.inversePath)
        if inverse is not None:
            return "^" + _show(data, inverse)
        return "(complex path)"
    return _show(data, path)


@contextlib.contextmanager
def _focus_only(focus: set[rdflib.term.Node] | None) -> Iterator[None]:
    """While pySHACL runs, each shape's targets are only the nodes of ``focus`` (None: all)."""
    if focus is None:
        yield
        return
    from unittest import mock

    original: Callable[..., set[rdflib.term.Node]] = Shape.focus_nodes

    def focus_nodes(self: Shape, data_graph: Any, debug: bool = False) -> set[rdflib.term.Node]:
        return {n for n in original(self, data_graph, debug) if n in focus}

    with mock.patch.object(Shape, "focus_nodes", focus_nodes):
        yield
