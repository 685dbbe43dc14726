"""SHACL validation of RDF files against the diagkg shapes.

Data are validated together with the ontology (so that the class hierarchy is
known) by pySHACL on rdflib graphs. Besides the shapes, every term of the dk:
namespace a file uses must exist in the ontology: a misspelt property would
otherwise pass unnoticed. Each problem becomes a :class:`Violation` that names
the file, the line where the focus node is written (when it can be found), the
focus node, the path and the message.
"""

from __future__ import annotations

import contextlib
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

import pyshacl
import rdflib
from rdflib.namespace import RDF, SH
from rdflib.plugins.sparql import processor as _sparql_processor
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.sparql import Query

from ..errors import ExpressionError, InputError
from . import resources
from .rdfio import RdfDocument, expand_paths, parse_file
from .vocab import DK, DK_NS

if TYPE_CHECKING:  # pragma: no cover
    from .store import KnowledgeStore


@dataclass(frozen=True)
class Violation:
    """One way a file does not conform."""

    file: str
    focus: str
    path: str
    message: str
    line: int | None = None
    severity: str = "Violation"
    value: str | None = None
    shape: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        shown = self.value is not None and self.value != self.focus and self.value not in self.message
        value = f" (value: {self.value})" if shown else ""
        return f"{where}: {self.focus} — {self.path} — {self.message}{value}"


@dataclass
class FileReport:
    """The outcome of validating one file: an input error, or zero or more violations."""

    file: str
    violations: list[Violation] = field(default_factory=list)
    error: InputError | None = None
    document: RdfDocument | None = None

    @property
    def conforms(self) -> bool:
        return self.error is None and not self.violations


SystemResolver = Callable[[str], "rdflib.Graph | None"]


def store_resolver(store: "KnowledgeStore | None", fallback: list[str] | None = None) -> SystemResolver:
    """How ``diagkg validate`` finds the system a file refers to: in ``store``,
    else among the shipped descriptions (each IRI found there is added to
    ``fallback``, so that the caller can say so)."""

    def resolve(iri: str) -> rdflib.Graph | None:
        graph = store.system_graph(iri) if store is not None else None
        if graph is None:
            graph = shipped_system_graph(iri)
            if graph is not None and fallback is not None:
                fallback.append(iri)
        return graph

    return resolve


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


def _folder_graph(folder: str) -> rdflib.Graph:
    g = rdflib.Graph()
    for f in resources.files(folder):
        g.parse(data=f.read_text(encoding="utf-8"), format="turtle")
    return g


@lru_cache(maxsize=1)
def default_ontology() -> rdflib.Graph:
    """The shipped ontology (cached; do not modify)."""
    return _folder_graph("ontology")


@lru_cache(maxsize=1)
def default_shapes() -> rdflib.Graph:
    """The shipped shapes (cached; do not modify)."""
    return _folder_graph("shapes")


@lru_cache(maxsize=1)
def _known_terms() -> frozenset[str]:
    return frozenset(str(s) for s in default_ontology().subjects() if str(s).startswith(DK_NS))


class Validator:
    """Validates RDF documents against shapes and an ontology (the shipped ones by default)."""

    def __init__(self, shapes: rdflib.Graph | None = None, ontology: rdflib.Graph | None = None):
        self.shapes = shapes if shapes is not None else default_shapes()
        self.ontology = ontology if ontology is not None else default_ontology()

    # -- public API --------------------------------------------------------
    def validate_document(self, doc: RdfDocument, context: Sequence[rdflib.Graph] = ()) -> list[Violation]:
        """Violations of one parsed document; ``context`` graphs (e.g. the system a
        scenario refers to) are visible to the shapes but not reported on. A
        system the document refers to (dk:onSystem) and that is not in the
        context is looked up among the shipped systems."""
        return self.validate_documents([doc], context)[doc.name]

    def validate_documents(self, docs: Sequence[RdfDocument], context: Sequence[rdflib.Graph] = (),
                           resolve: "SystemResolver | None" = None,
                           progress: Callable[[int], None] | None = None) -> dict[str, list[Violation]]:
        """Validate several documents at once; one list of violations per document name.

        Documents that refer to the same systems are validated together in one
        pySHACL run (with the systems' descriptions, from the batch itself,
        ``context``, ``resolve`` or the shipped files); each violation goes to
        the document that wrote its focus node. A document whose system cannot
        be found gets that one violation and is not checked further (the
        shapes would only report knock-on effects). ``progress`` is told how
        many more documents are done after each pySHACL run.
        """
        defined: dict[str, rdflib.Graph] = {}
        for g in (*context, *(d.graph for d in docs)):
            for s in g.subjects(RDF.type, DK.System.uri):
                defined.setdefault(str(s), g)
        groups: dict[frozenset[str], list[RdfDocument]] = {}
        out: dict[str, list[Violation]] = {}
        for doc in docs:
            out[doc.name] = self._unknown_terms(doc) + self._bad_expressions(doc)
            own = {str(s) for s in doc.graph.subjects(RDF.type, DK.System.uri)}
            needed = frozenset(str(o) for o in doc.graph.objects(None, DK.onSystem.uri)) - own
            groups.setdefault(needed, []).append(doc)
        for needed, members in groups.items():
            extra: list[rdflib.Graph] = list(context)
            orphans: set[str] = set()
            for iri in sorted(needed):
                graph = defined.get(iri) or (resolve or shipped_system_graph)(iri)
                if graph is None:
                    for doc in members:
                        if any(str(o) == iri for o in doc.graph.objects(None, DK.onSystem.uri)):
                            orphans.add(doc.name)
                            subject = next(doc.graph.subjects(DK.onSystem.uri, rdflib.URIRef(iri)))
                            out[doc.name].append(Violation(
                                file=doc.name, focus=_show(doc.graph, subject), path="dk:onSystem",
                                message=f"the system {_show(doc.graph, rdflib.URIRef(iri))} is not known here: "
                                        "it is neither in the store nor among the files given; load its "
                                        "description first, or give it together with this file",
                                line=doc.line_of(subject), shape="system context"))
                elif graph not in extra:
                    extra.append(graph)
            checked = [doc for doc in members if doc.name not in orphans]
            if checked:
                self._shacl(checked, extra, out)
            if progress is not None:
                progress(len(members))
        return {name: sorted(set(v), key=lambda x: (x.line or 0, x.focus, x.path, x.message))
                for name, v in out.items()}

    def _shacl(self, docs: Sequence[RdfDocument], context: Sequence[rdflib.Graph],
               out: dict[str, list[Violation]]) -> None:
        # The data graph is the documents plus the ontology (so that class
        # membership and the component-type metaclass are visible) plus the
        # context; only focus nodes written in a document are reported.
        data = rdflib.Graph()
        for doc in docs:
            for prefix, ns in doc.graph.namespaces():
                data.bind(prefix, ns, override=False)
            data += doc.graph
        data += self.ontology
        for g in context:
            data += g
        with _prepared_query_cache():
            conforms, report, _ = pyshacl.validate(
                data, shacl_graph=self.shapes, inference="none",
                advanced=False, allow_warnings=True, abort_on_first=False, meta_shacl=False,
            )
        if conforms:
            return
        owners: dict[rdflib.term.Node, RdfDocument] = {}
        for doc in docs:
            for node in (*doc.graph.subjects(), *doc.graph.objects()):
                owners.setdefault(node, doc)
        # the report's own results; the details pySHACL nests under them (why a
        # value failed an sh:node shape, with the value itself as focus) repeat them
        for result in report.objects(None, SH.result):
            focus = report.value(result, SH.focusNode)
            owner = owners.get(focus)
            if owner is not None:
                out[owner.name].append(self._violation(owner, data, report, result))

    def validate_file(self, path: str | Path, context: Sequence[rdflib.Graph] = ()) -> FileReport:
        try:
            doc = parse_file(path)
        except InputError as exc:
            return FileReport(str(path), error=exc)
        return FileReport(str(path), self.validate_document(doc, context), document=doc)

    def validate_paths(self, paths: Iterable[str | Path], resolve: "SystemResolver | None" = None) -> list[FileReport]:
        """Validate files and folders (recursively); one report per file, in order.

        Files are validated together, so a scenario finds the description of
        its system among the other files of the same call."""
        reports: list[FileReport] = []
        docs: list[RdfDocument] = []
        for p in expand_paths(paths):
            try:
                doc = parse_file(p)
            except InputError as exc:
                reports.append(FileReport(str(p), error=exc))
                continue
            docs.append(doc)
            reports.append(FileReport(str(p), document=doc))
        results = self.validate_documents(docs, resolve=resolve)
        for r in reports:
            if r.document is not None:
                r.violations = results[r.document.name]
        return reports

    # -- helpers -----------------------------------------------------------
    def _node_shape(self, shape: rdflib.term.Node | None) -> str | None:
        """The named node shape a result comes from (property and SPARQL
        constraints are blank nodes hanging off it)."""
        if shape is None:
            return None
        owner = _owning_shape(self.shapes, shape)
        return self.shapes.namespace_manager.normalizeUri(owner) if isinstance(owner, rdflib.URIRef) else None

    def _unknown_terms(self, doc: RdfDocument) -> list[Violation]:
        known = _known_terms()
        out: list[Violation] = []
        seen: set[str] = set()
        for s, p, o in doc.graph:
            for term, role in ((p, "property"), (o, "value")):
                if isinstance(term, rdflib.URIRef) and str(term).startswith(DK_NS) and str(term) not in known:
                    if str(term) in seen:
                        continue
                    seen.add(str(term))
                    out.append(Violation(
                        file=doc.name, focus=_show(doc.graph, s), path=_show(doc.graph, p),
                        message=f"unknown term {_show(doc.graph, term)}: it is not in the diagkg ontology "
                                f"(used as a {role})",
                        line=doc.line_of(term) or doc.line_of(s), shape="ontology terms",
                    ))
        return out

    def _bad_expressions(self, doc: RdfDocument) -> list[Violation]:
        """Behaviour expressions that would be refused when simulating."""
        from .expressions import COUPLING_FUNCTIONS, ELEMENT_FUNCTIONS, RESULT_FUNCTIONS, compile_expression

        out = []
        for prop, functions in ((DK.valueExpression, ELEMENT_FUNCTIONS), (DK.condition, ELEMENT_FUNCTIONS),
                                (DK.saturationCurrentExpression, ELEMENT_FUNCTIONS), (DK.emitsLightWhen, RESULT_FUNCTIONS),
                                (DK.damagedWhen, RESULT_FUNCTIONS),
                                (DK.closedWhen, COUPLING_FUNCTIONS)):
            for s, o in doc.graph.subject_objects(prop.uri):
                try:
                    compile_expression(str(o), "expression", functions)
                except ExpressionError as exc:
                    out.append(Violation(
                        file=doc.name, focus=_describe(doc.graph, s), path=_show(doc.graph, prop.uri),
                        message=str(exc).replace("expression: ", "", 1),
                        line=_line_of_node(doc, doc.graph, s), shape="behaviour expressions"))
        return out

    def _violation(self, doc: RdfDocument, data: rdflib.Graph, report: rdflib.Graph,
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
            line=_line_of_node(doc, data, focus),
            severity=str(severity).rsplit("#", 1)[-1] if severity else "Violation",
            value=_show(doc.graph, value) if value is not None else None,
            shape=self._node_shape(shape),
        )


_PATCH_LOCK = threading.Lock()


@contextlib.contextmanager
def _prepared_query_cache() -> Iterator[None]:
    """Translate each SPARQL constraint once per validation instead of once per focus node.

    pySHACL hands rdflib the text of a SPARQL constraint for every focus node,
    and rdflib parses it every time (80 % of the validation time). A translated
    query is meant to be evaluated many times with different initial bindings
    (that is what ``prepareQuery`` is for), so while pySHACL runs, rdflib's
    SPARQL processor is given a cache of translated queries keyed by their text.
    """
    from unittest import mock  # its patch puts the method back however the block ends

    original = _sparql_processor.SPARQLProcessor.query
    cache: dict[tuple[str, str | None, tuple[tuple[str, Any], ...]], Query] = {}

    def query(self: _sparql_processor.SPARQLProcessor, strOrQuery: str | Query,  # noqa: N803
              initBindings: Mapping[str, rdflib.term.Identifier] | None = None,
              initNs: Mapping[str, Any] | None = None, base: str | None = None,
              DEBUG: bool = False) -> Mapping[str, Any]:
        if isinstance(strOrQuery, str):
            key = (strOrQuery, base, tuple(sorted((initNs or {}).items())))
            prepared = cache.get(key)
            if prepared is None:
                prepared = translateQuery(parseQuery(strOrQuery), base, initNs)
                cache[key] = prepared
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
    if isinstance(term, rdflib.BNode) and depth < 4:
        for s in graph.subjects(None, term):
            return _line_of_node(doc, graph, s, depth + 1)
        return None
    return doc.line_of(term)


def _show_path(data: rdflib.Graph, report: rdflib.Graph, path: rdflib.term.Node) -> str:
    if isinstance(path, rdflib.BNode):
        inverse = report.value(path, SH.inversePath)
        if inverse is not None:
            return "^" + _show(data, inverse)
        return "(complex path)"
    return _show(data, path)


__all__ = ["Violation", "FileReport", "Validator", "default_ontology", "default_shapes", "DK"]
