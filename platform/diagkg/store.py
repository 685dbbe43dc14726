"""The diagkg knowledge store: an Oxigraph store, embedded and on disk by default.

Where the store lives, in order of precedence:

1. the ``path`` argument (the CLI's ``--store`` option);
2. the ``DIAGKG_STORE`` environment variable;
3. ``$XDG_DATA_HOME/diagkg/store`` (``~/.local/share/diagkg/store``).

``KnowledgeStore.memory()`` gives an in-memory store (tests, throw-away runs).
Only one process can write an on-disk store at a time; another one gets
:class:`~diagkg.errors.StoreLockedError`, and read-only access
(``read_only=True``) keeps working meanwhile. Named graphs follow
:mod:`diagkg.graphs`. Loading validates first and loads nothing unless every
file conforms.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pyoxigraph as ox

from . import graphs, resources
from .errors import InputError, QueryError, StoreError, StoreLockedError, ValidationError
from .queries import QueryFile, from_text, library
from .rdfio import RdfDocument, expand_paths, parse_file, parse_text
from .validation import Validator
from .vocab import DK

ENV_VAR = "DIAGKG_STORE"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def default_store_path() -> Path:
    """The on-disk store used when no path is given."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "diagkg" / "store"


@dataclass(frozen=True)
class LoadedGraph:
    """What :meth:`KnowledgeStore.load_files` put where."""

    file: str
    graph: str
    triples: int


class KnowledgeStore:
    """An Oxigraph store plus the conventions of diagkg."""

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False, in_memory: bool = False):
        self.read_only = read_only
        if in_memory:
            self.path: Path | None = None
            self._store = ox.Store()
            return
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        try:
            if read_only:
                if not self.path.exists():
                    raise StoreError(f"there is no store at {self.path} yet; load something into it first")
                self._store = ox.Store.read_only(str(self.path))
            else:
                self.path.mkdir(parents=True, exist_ok=True)
                self._store = ox.Store(str(self.path))
        except OSError as exc:
            if "lock" in str(exc).lower():
                raise StoreLockedError(self.path) from None
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from None

    # -- construction ------------------------------------------------------
    @classmethod
    def memory(cls) -> "KnowledgeStore":
        return cls(in_memory=True)

    @classmethod
    def open_for_reading(cls, path: str | Path | None = None) -> "KnowledgeStore":
        """Open read-write if possible, read-only if another process holds the lock."""
        try:
            return cls(path)
        except StoreLockedError:
            return cls(path, read_only=True)

    def __enter__(self) -> "KnowledgeStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Flush and release the store (the lock goes with the last reference)."""
        store = getattr(self, "_store", None)
        if store is not None and not self.read_only and self.path is not None:
            try:
                store.flush()
            except OSError:  # pragma: no cover - nothing left to save
                pass
        self._store = None

    @property
    def raw(self) -> ox.Store:
        """The underlying pyoxigraph store."""
        if self._store is None:
            raise StoreError("the store is closed")
        return self._store

    # -- writing -----------------------------------------------------------
    def _writable(self) -> ox.Store:
        if self.read_only:
            raise StoreError(f"the store at {self.path} is open read-only")
        return self.raw

    def replace_graph(self, graph: ox.NamedNode, triples: Iterable[ox.Triple]) -> int:
        """Make ``graph`` hold exactly ``triples``; returns their number."""
        store = self._writable()
        quads = [ox.Quad(t.subject, t.predicate, t.object, graph) for t in triples]
        store.remove_graph(graph) if store.contains_named_graph(graph) else None
        store.extend(quads)
        return len(quads)

    def ensure_core(self) -> None:
        """(Re)load the ontology and the shapes into their named graphs."""
        for graph, folder in ((graphs.ONTOLOGY, "ontology"), (graphs.SHAPES, "shapes")):
            triples: list[ox.Triple] = []
            for f in resources.files(folder):
                triples += parse_text(f.read_text(encoding="utf-8"), f.name).triples
            self.replace_graph(graph, triples)

    def load_documents(self, docs: Sequence[RdfDocument], graph: ox.NamedNode | None = None) -> list[LoadedGraph]:
        """Load already validated documents, each into its graph (see :func:`graph_for`)."""
        self._writable()
        self.ensure_core()
        loaded = []
        for doc in docs:
            target = graph or graph_for(doc)
            n = self.replace_graph(target, doc.triples)
            loaded.append(LoadedGraph(doc.name, target.value, n))
        return loaded

    def load_files(self, paths: Iterable[str | Path], graph: ox.NamedNode | None = None,
                   validator: Validator | None = None) -> list[LoadedGraph]:
        """Validate every file, then load them all; if any file fails, load none.

        Raises :class:`InputError` for unreadable files and
        :class:`ValidationError` (carrying every violation) otherwise.
        """
        self._writable()
        validator = validator or Validator()
        files = expand_paths(paths)
        if not files:
            raise InputError("no RDF files to load")
        docs = [parse_file(f) for f in files]
        results = validator.validate_documents(docs, resolve=self._system_graph)
        violations = [v for doc in docs for v in results[doc.name]]
        if violations:
            raise ValidationError(violations)
        return self.load_documents(docs, graph)

    def _system_graph(self, iri: str):
        """The stored description of the system with this IRI (for validating scenarios)."""
        for q in self.raw.quads_for_pattern(ox.NamedNode(iri), ox.NamedNode(RDF_TYPE), ox.NamedNode(str(DK.System))):
            if isinstance(q.graph_name, ox.NamedNode):
                return self.graph_as_rdflib(q.graph_name)
        return None

    def update(self, query: str | QueryFile, **values: Any) -> None:
        """Run a SPARQL update: a query-file name, a :class:`QueryFile`, or text."""
        q = self._resolve(query)
        text = q.render(**values) if q.is_template else q.text
        try:
            self._writable().update(text)
        except SyntaxError as exc:
            raise QueryError(f"{q.name}: {exc}") from None
        except OSError as exc:
            raise StoreError(f"{q.name}: {exc}") from None

    def infer(self, key: str, engine: str = "auto") -> int:
        """Run the OWL reasoner on system ``key`` and store what it entails in
        ``inferred/{key}``; returns the number of inferred triples."""
        from .reasoning import reason
        from .rdfio import to_oxigraph

        data = self.graph_as_rdflib(graphs.system(key))
        if len(data) == 0:
            raise InputError(f"no system {key!r} in the store; load its description first")
        inferred = reason(data, engine=engine)
        triples = [ox.Triple(*(to_oxigraph(t) for t in triple)) for triple in inferred]
        return self.replace_graph(graphs.inferred(key), triples)

    # -- reading -----------------------------------------------------------
    def graph_as_rdflib(self, graph: ox.NamedNode):
        """A copy of one named graph as an rdflib graph."""
        import rdflib

        from .rdfio import to_rdflib

        g = rdflib.Graph()
        for q in self.raw.quads_for_pattern(None, None, None, graph):
            g.add((to_rdflib(q.subject), to_rdflib(q.predicate), to_rdflib(q.object)))
        return g

    def query(self, query: str | QueryFile, bindings: Mapping[str, Any] | None = None,
              use_default_graph_as_union: bool = True, **template_values: Any):
        """Run a SPARQL query: a query-file name, a :class:`QueryFile`, or text.

        ``bindings`` bind variables of a plain query as RDF terms; templates take
        ``template_values``. By default the default graph is the union of all
        graphs, so a query sees everything unless it names a ``GRAPH``.
        """
        q = self._resolve(query)
        text = q.render(**template_values) if q.is_template else q.text
        subs = q.substitutions(bindings or {}) if bindings else None
        try:
            return self.raw.query(text, substitutions=subs,
                                  use_default_graph_as_union=use_default_graph_as_union)
        except SyntaxError as exc:
            raise QueryError(f"{q.name}: {exc}") from None
        except OSError as exc:
            raise StoreError(f"{q.name}: {exc}") from None

    def select(self, query: str | QueryFile, bindings: Mapping[str, Any] | None = None,
               **template_values: Any) -> list[dict[str, Any]]:
        """Rows of a SELECT as dicts of Python values (IRIs as str, literals converted)."""
        result = self.query(query, bindings, **template_values)
        if not isinstance(result, ox.QuerySolutions):
            raise QueryError("not a SELECT query")
        names = [v.value for v in result.variables]
        return [{n: python_value(row[n]) for n in names} for row in result]

    def graphs(self) -> list[tuple[str, int]]:
        """Named graphs with their number of triples, by name."""
        rows = self.select("graph-summary")
        return [(r["graph"], int(r["triples"])) for r in rows]

    def __len__(self) -> int:
        return len(self.raw)

    def __bool__(self) -> bool:
        return True   # an empty store is still a store (``store or default`` must not drop it)

    @staticmethod
    def _resolve(query: str | QueryFile) -> QueryFile:
        if isinstance(query, QueryFile):
            return query
        lib = library()
        if query in lib:
            return lib.get(query)
        if not any(ch.isspace() for ch in query.strip()):
            return lib.get(query)  # a name that is not in queries/: UnknownQueryError
        return from_text(query)


def graph_for(doc: RdfDocument) -> ox.NamedNode:
    """The named graph a document belongs in: ``system/<key>`` for a system
    description, ``file/<name>`` for anything else."""
    scenarios = [t.subject for t in doc.triples
                 if t.predicate.value == RDF_TYPE and t.object.value == str(DK.Scenario)]
    if len(set(scenarios)) > 1:
        raise InputError(f"{doc.name}: holds several scenarios; use one file per scenario")
    if scenarios:
        ids = [t.object.value for t in doc.triples
               if t.subject == scenarios[0] and t.predicate.value == "http://purl.org/dc/terms/identifier"]
        return graphs.named("scenario", ids[0] if ids else Path(doc.name).stem)
    systems = [t for t in doc.triples if t.predicate.value == str(DK.systemKey)]
    keys = sorted({t.object.value for t in systems})
    if len(keys) > 1:
        raise InputError(f"{doc.name}: describes several systems ({', '.join(keys)}); use one file per system")
    if keys:
        return graphs.system(keys[0])
    return graphs.named("file", Path(doc.name).name)


def python_value(term: Any) -> Any:
    """A Python value for an RDF term: str for IRIs and strings, numbers, bools."""
    if term is None:
        return None
    if isinstance(term, ox.NamedNode):
        return term.value
    if isinstance(term, ox.BlankNode):
        return "_:" + term.value
    if isinstance(term, ox.Literal):
        dt = term.datatype.value
        xsd = "http://www.w3.org/2001/XMLSchema#"
        try:
            if dt in (xsd + "integer", xsd + "int", xsd + "long", xsd + "positiveInteger", xsd + "nonNegativeInteger"):
                return int(term.value)
            if dt in (xsd + "decimal", xsd + "double", xsd + "float"):
                return float(term.value)
            if dt == xsd + "boolean":
                return term.value in ("true", "1")
        except ValueError:
            return term.value
        return term.value
    return str(term)
