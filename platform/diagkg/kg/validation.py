"""SHACL validation of RDF files against the diagkg shapes.

Data are validated together with the ontology (so that the class hierarchy is
known) and the descriptions of the systems they refer to. Besides the shapes,
every term of the dk: namespace a file uses must exist in the ontology: a
misspelt property would otherwise pass unnoticed. Each problem becomes a
:class:`Violation` that names the file, the line where the focus node is
written (when it can be found), the focus node, the path and the message.

pySHACL is the reference engine and writes every report (:mod:`diagkg.kg.shacl`).
Most documents conform, though, and pySHACL on rdflib is slow: the shapes
compiled into checks on pyoxigraph terms (:mod:`diagkg.kg.conformance`) first
clear every document all of whose focus nodes certainly conform, without rdflib;
pySHACL then validates the focus nodes of the others, in the same data graph,
so the report is the one pySHACL alone gives. ``Validator(reference=True)``, or
``DIAGKG_VALIDATION=reference`` in the environment, runs pySHACL on everything.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

import pyoxigraph as ox

from ..errors import ExpressionError, InputError
from . import conformance, resources
from .rdfio import XSD_STRING, RdfDocument, expand_paths, parse_file, parse_text
from .violations import Violation
from .vocab import DK, DK_NS

if TYPE_CHECKING:  # pragma: no cover
    import rdflib

    from . import shacl
    from .rawstore import RawStore
    from .store import KnowledgeStore

RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
SYSTEM = ox.NamedNode(str(DK.System))
ON_SYSTEM = ox.NamedNode(str(DK.onSystem))


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


# a system's description, as the shapes see it: an rdflib graph, or pyoxigraph triples
Description = "rdflib.Graph | Sequence[ox.Triple]"
SystemResolver = Callable[[str], "rdflib.Graph | Sequence[ox.Triple] | None"]


def store_resolver(store: "KnowledgeStore | None", fallback: list[str] | None = None, *,
                   shipped: bool = True) -> SystemResolver:
    """How ``diagkg validate`` finds the system a file refers to: in ``store``,
    else (``shipped``) among the shipped descriptions (each IRI found there is
    added to ``fallback``, so that the caller can say so)."""

    def resolve(iri: str) -> Sequence[ox.Triple] | None:
        triples: Sequence[ox.Triple] | None = stored_system(store, iri) if store is not None else None
        if triples is None and shipped:
            triples = shipped_system_triples(iri)
            if triples is not None and fallback is not None:
                fallback.append(iri)
        return triples

    return resolve


def stored_system(store: "KnowledgeStore", iri: str) -> list[ox.Triple] | None:
    """The stored description of the system with this IRI (the triples of its graph; read whole, again
    on a fresh snapshot if another process's compaction took a file meanwhile)."""
    def read(raw: RawStore) -> list[ox.Triple] | None:
        for q in raw.quads_for_pattern(ox.NamedNode(iri), RDF_TYPE, SYSTEM):
            if isinstance(q.graph_name, ox.NamedNode):
                return [x.triple for x in raw.quads_for_pattern(None, None, None, q.graph_name)]
        return None
    return store.reading(read)


@lru_cache(maxsize=16)
def shipped_system_triples(iri: str) -> tuple[ox.Triple, ...] | None:
    """The shipped description of the system with this IRI, if there is one."""
    for f in resources.system_files():
        text = f.read_text(encoding="utf-8")
        if iri.rsplit("/", 1)[0] not in text:
            continue
        doc = parse_text(text, f.name)
        if ox.Triple(ox.NamedNode(iri), RDF_TYPE, SYSTEM) in doc.triples:
            return tuple(doc.triples)
    return None


def shipped_system_graph(iri: str) -> rdflib.Graph | None:
    """The shipped description of the system with this IRI as an rdflib graph."""
    from . import shacl

    return shacl.shipped_system_graph(iri)


def default_ontology() -> rdflib.Graph:
    """The shipped ontology as an rdflib graph (cached; do not modify)."""
    from . import shacl

    return shacl.default_ontology()


def default_shapes() -> rdflib.Graph:
    """The shipped shapes as an rdflib graph (cached; do not modify)."""
    from . import shacl

    return shacl.default_shapes()


def _folder_graph(folder: str) -> rdflib.Graph:
    from . import shacl

    return shacl.folder_graph(folder)


@lru_cache(maxsize=2)
def _folder_triples(folder: str) -> tuple[tuple[ox.Triple, ...], bool]:
    """A shipped folder's triples, parsed by pyoxigraph, and whether a string in it is typed explicitly."""
    triples: list[ox.Triple] = []
    explicit = False
    for f in resources.files(folder):
        text = f.read_text(encoding="utf-8")
        triples += parse_text(text, f.name).triples
        explicit = explicit or conformance.EXPLICIT_STRING.search(text) is not None
    return tuple(triples), explicit


@lru_cache(maxsize=1)
def _default_checker() -> conformance.Checker | None:
    triples, explicit = _folder_triples("shapes")
    if explicit:
        return None
    try:
        return conformance.Checker(triples)
    except conformance.Unsupported:
        return None


@lru_cache(maxsize=1)
def _default_ontology_data() -> conformance.Data:
    """The shipped ontology indexed once (the documents of each check are added over it)."""
    return conformance.Data(_folder_triples("ontology")[0])


@lru_cache(maxsize=1)
def _known_terms() -> frozenset[str]:
    triples, _ = _folder_triples("ontology")
    return frozenset(t.subject.value for t in triples
                     if isinstance(t.subject, ox.NamedNode) and t.subject.value.startswith(DK_NS))


_EXPRESSIONS = {str(p): kind for p, kind in ((DK.valueExpression, "element"), (DK.condition, "element"),
                                             (DK.saturationCurrentExpression, "element"),
                                             (DK.emitsLightWhen, "result"), (DK.damagedWhen, "result"),
                                             (DK.closedWhen, "coupling"))}


class _Source:
    """A graph the shapes see: a document of the batch, or a description from elsewhere."""

    def __init__(self, triples: Sequence[ox.Triple], explicit_strings: bool, *,
                 doc: RdfDocument | None = None, graph: rdflib.Graph | None = None):
        self.triples = triples
        self.explicit_strings = explicit_strings      # rdflib and Oxigraph may read its strings apart
        self._doc = doc
        self._graph = graph

    @classmethod
    def of(cls, item: "rdflib.Graph | RdfDocument | Sequence[ox.Triple]") -> _Source:
        if isinstance(item, RdfDocument):
            if not item.triples and item.text.strip():     # a document made from an rdflib graph
                from . import shacl

                return cls(shacl.as_triples(item.graph), shacl.has_explicit_strings(item.graph), doc=item)
            return cls(item.triples, conformance.EXPLICIT_STRING.search(item.text) is not None, doc=item)
        if isinstance(item, (list, tuple)):
            return cls(item, False)
        from . import shacl

        assert not isinstance(item, Sequence)
        return cls(shacl.as_triples(item), shacl.has_explicit_strings(item), graph=item)

    @cached_property
    def systems(self) -> set[str]:
        return {t.subject.value for t in self.triples
                if t.predicate == RDF_TYPE and t.object == SYSTEM and isinstance(t.subject, ox.NamedNode)}

    @cached_property
    def nodes(self) -> set[conformance.Term]:
        return {n for t in self.triples for n in (t.subject, t.object) if not isinstance(n, ox.Triple)}

    def rdflib_graph(self) -> rdflib.Graph:
        if self._doc is not None:
            return self._doc.graph
        if self._graph is None:
            from . import shacl

            self._graph = shacl.as_graph(self.triples)
        return self._graph


class Validator:
    """Validates RDF documents against shapes and an ontology (the shipped ones by default).

    Shapes and ontology come as rdflib graphs or, to spare a process rdflib and pySHACL until a
    document fails the compiled check, as Oxigraph triples (:meth:`of_triples`)."""

    def __init__(self, shapes: rdflib.Graph | None = None, ontology: rdflib.Graph | None = None, *,
                 reference: bool | None = None):
        self._shapes = shapes
        self._ontology = ontology
        self._shape_triples: tuple[Sequence[ox.Triple], bool] | None = None
        self._onto_triples: tuple[Sequence[ox.Triple], bool] | None = None
        self._prefixes: dict[str, str] = {}
        self.reference = os.environ.get("DIAGKG_VALIDATION") == "reference" if reference is None else reference
        self.by_pyshacl = 0         # documents the compiled check could not clear, validated by pySHACL

    @classmethod
    def of_triples(cls, shapes: tuple[Sequence[ox.Triple], bool], ontology: tuple[Sequence[ox.Triple], bool], *,
                   prefixes: Mapping[str, str] | None = None, reference: bool | None = None) -> Validator:
        """A validator of these shapes and this ontology, each given as its triples and whether a
        string in it is typed ``xsd:string`` explicitly (rdflib and Oxigraph read those apart); the
        rdflib graphs pySHACL needs are made only when a document needs pySHACL, the shapes' with
        ``prefixes`` bound (a violation names its shape by them, as with the parsed files)."""
        v = cls(reference=reference)
        v._shape_triples, v._onto_triples, v._prefixes = shapes, ontology, dict(prefixes or {})
        return v

    @cached_property
    def shapes(self) -> rdflib.Graph:
        if self._shapes is None and self._shape_triples is not None:
            from . import shacl

            graph = shacl.as_graph(self._shape_triples[0])
            for prefix, namespace in self._prefixes.items():
                graph.bind(prefix, namespace)
            return graph
        return self._shapes if self._shapes is not None else default_shapes()

    @cached_property
    def ontology(self) -> rdflib.Graph:
        if self._ontology is None and self._onto_triples is not None:
            from . import shacl

            return shacl.as_graph(self._onto_triples[0])
        return self._ontology if self._ontology is not None else default_ontology()

    @cached_property
    def _pyshacl_base(self) -> shacl.DataBase:
        """The ontology as the lasting part of pySHACL's data graphs (kept for this validator's runs)."""
        from . import shacl

        return shacl.DataBase(self.ontology)

    @cached_property
    def _checker(self) -> conformance.Checker | None:
        """The compiled shapes (None: pySHACL validates everything)."""
        if self.reference:
            return None
        if self._shape_triples is not None:
            triples, explicit = self._shape_triples
        elif self._shapes is None:
            return _default_checker()
        else:
            from . import shacl

            triples, explicit = shacl.as_triples(self._shapes), shacl.has_explicit_strings(self._shapes)
        if explicit:
            return None
        try:
            return conformance.Checker(triples)
        except conformance.Unsupported:
            return None

    @cached_property
    def _ontology_triples(self) -> tuple[Sequence[ox.Triple], bool]:
        if self._onto_triples is not None:
            return self._onto_triples
        if self._ontology is None:
            return _folder_triples("ontology")
        from . import shacl

        return shacl.as_triples(self._ontology), shacl.has_explicit_strings(self._ontology)

    @cached_property
    def _ontology_data(self) -> conformance.Data:
        if self._ontology is None and self._onto_triples is None:
            return _default_ontology_data()
        return conformance.Data(self._ontology_triples[0])

    # -- public API --------------------------------------------------------
    def validate_document(self, doc: RdfDocument, context: Sequence["rdflib.Graph | RdfDocument"] = ()
                          ) -> list[Violation]:
        """Violations of one parsed document; ``context`` graphs (e.g. the system a
        scenario refers to) are visible to the shapes but not reported on. A
        system the document refers to (dk:onSystem) and that is not in the
        context is looked up among the shipped systems."""
        return self.validate_documents([doc], context)[doc.name]

    def validate_documents(self, docs: Sequence[RdfDocument], context: Sequence["rdflib.Graph | RdfDocument"] = (),
                           resolve: SystemResolver | None = None,
                           progress: Callable[[int], None] | None = None) -> dict[str, list[Violation]]:
        """Validate several documents at once; one list of violations per document name.

        Documents that refer to the same systems are validated together (with
        the systems' descriptions, from the batch itself, ``context``,
        ``resolve`` or the shipped files); each violation goes to the document
        that wrote its focus node. A document whose system cannot be found gets
        that one violation and is not checked further (the shapes would only
        report knock-on effects). ``progress`` is told how many more documents
        are done after each group.
        """
        sources = {doc.name: _Source.of(doc) for doc in docs}
        extra_sources = [_Source.of(c) for c in context]
        defined: dict[str, _Source] = {}
        for src in (*extra_sources, *sources.values()):
            for iri in src.systems:
                defined.setdefault(iri, src)
        groups: dict[frozenset[str], list[RdfDocument]] = {}
        out: dict[str, list[Violation]] = {}
        for doc in docs:
            src = sources[doc.name]
            out[doc.name] = self._term_problems(doc, src)
            needed = frozenset(t.object.value for t in src.triples
                               if t.predicate == ON_SYSTEM and isinstance(t.object, ox.NamedNode)) - src.systems
            groups.setdefault(needed, []).append(doc)
        for needed, members in groups.items():
            extra = list(extra_sources)
            orphans: set[str] = set()
            for iri in sorted(needed):
                found = defined.get(iri)
                if found is None:
                    description = (resolve or shipped_system_triples)(iri)
                    found = _Source.of(description) if description is not None else None
                if found is None:
                    from . import shacl

                    for doc in members:
                        if ox.NamedNode(iri) in {t.object for t in sources[doc.name].triples if t.predicate == ON_SYSTEM}:
                            orphans.add(doc.name)
                            out[doc.name].append(shacl.orphan(doc, iri))
                elif not any(found is e for e in extra):
                    extra.append(found)
            checked = [doc for doc in members if doc.name not in orphans]
            if checked:
                self._check(checked, [sources[d.name] for d in checked], extra, out)
            if progress is not None:
                progress(len(members))
        return {name: sorted(set(v), key=lambda x: (x.line or 0, x.focus, x.path, x.message))
                for name, v in out.items()}

    def _check(self, docs: Sequence[RdfDocument], own: Sequence[_Source], extra: Sequence[_Source],
               out: dict[str, list[Violation]]) -> None:
        """The shapes on ``docs``: cleared by the compiled check where it can, else by pySHACL."""
        from_pyshacl: Sequence[RdfDocument] = docs
        explicit = self._ontology_triples[1]
        checker = self._checker
        suspects: set[conformance.Term] | None = None
        if checker is not None and not explicit and not any(s.explicit_strings for s in (*own, *extra)):
            try:
                data = conformance.Data(chain(*(s.triples for s in own), *(s.triples for s in extra)),
                                        base=self._ontology_data)
                suspects = checker.suspects(data, set().union(*(s.nodes for s in own)))
                from_pyshacl = [d for d, s in zip(docs, own, strict=True) if s.nodes & suspects]
            except conformance.Unsupported:
                from_pyshacl = docs
            if not from_pyshacl:
                return
        from . import shacl

        self.by_pyshacl += len(from_pyshacl)
        focus: set[rdflib.term.Node] | None
        if suspects and all(isinstance(n, ox.NamedNode) for n in suspects):
            # every other focus node conforms, the compiled check being sure of it: pySHACL judges only these (a
            # node's results do not depend on the others'), a mutated system's few parts, not its hundred
            import rdflib as rdf

            focus = {rdf.URIRef(n.value) for n in suspects if isinstance(n, ox.NamedNode)}
        else:
            focus = None if len(from_pyshacl) == len(docs) else set().union(*(shacl.nodes_of(d) for d in from_pyshacl))
        shacl.run(self.shapes, self._pyshacl_base, docs, [s.rdflib_graph() for s in extra], out, focus)

    def validate_file(self, path: str | Path, context: Sequence["rdflib.Graph | RdfDocument"] = ()) -> FileReport:
        try:
            doc = parse_file(path)
        except InputError as exc:
            return FileReport(str(path), error=exc)
        return FileReport(str(path), self.validate_document(doc, context), document=doc)

    def validate_paths(self, paths: Iterable[str | Path], resolve: SystemResolver | None = None) -> list[FileReport]:
        """Validate files and folders (recursively); one report per file, in order.

        Files are validated together, so a scenario finds the description of
        its system among the other files of the same call."""
        from .store import graph_for

        reports: list[FileReport] = []
        docs: list[RdfDocument] = []
        for p in expand_paths(paths):
            try:
                doc = parse_file(p)
                if not doc.named_graphs:      # (a dump's graphs are loaded each into its own)
                    graph_for(doc)            # what load refuses of a file as a whole (several scenarios in one)
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
    def _term_problems(self, doc: RdfDocument, src: _Source) -> list[Violation]:
        """Unknown dk: terms and behaviour expressions that would be refused when simulating;
        looked for on pyoxigraph terms, located with rdflib when one is found."""
        from .expressions import COUPLING_FUNCTIONS, ELEMENT_FUNCTIONS, RESULT_FUNCTIONS, compile_expression, coupling_problems

        known = _known_terms()
        functions = {"element": ELEMENT_FUNCTIONS, "result": RESULT_FUNCTIONS, "coupling": COUPLING_FUNCTIONS}
        unknown = bad = False
        for t in src.triples:
            for term in (t.predicate, t.object):
                if isinstance(term, ox.NamedNode) and term.value.startswith(DK_NS) and term.value not in known:
                    unknown = True
            kind = _EXPRESSIONS.get(t.predicate.value)
            if kind is not None and not bad:
                if not isinstance(t.object, ox.Literal) or t.object.datatype.value != XSD_STRING:
                    bad = True      # rdflib may write it its own way: let it say
                    continue
                try:
                    expression = compile_expression(t.object.value, "expression", functions[kind])
                    bad = bool(coupling_problems(expression, _value(t.subject), (
                        (_value(a.subject), a.predicate.value, _value(a.object)) for a in src.triples)))
                except ExpressionError:
                    bad = True
        if not unknown and not bad:
            return []
        from . import shacl

        return (shacl.unknown_terms(doc, known) if unknown else []) + (shacl.bad_expressions(doc) if bad else [])


def _value(term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple) -> str:
    """A term's IRI, blank node id or text (what :func:`~diagkg.kg.expressions.coupling_problems` reads)."""
    return str(term) if isinstance(term, ox.Triple) else term.value


__all__ = ["Violation", "FileReport", "Validator", "default_ontology", "default_shapes", "store_resolver", "DK"]
