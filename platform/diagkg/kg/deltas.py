"""What a SPARQL update changes, read off a private copy of the store.

The update text runs *unchanged*, by pyoxigraph itself, on a copy (a checkpoint of the
on-disk store, or a copy of an in-memory one): its semantics (WHERE evaluated once before
any template is applied, fresh blank nodes per solution, ``WITH``/``USING``, ``LOAD``,
``CLEAR``/``DROP``/``ADD``/``MOVE``/``COPY``, later operations seeing what earlier ones
wrote) are pyoxigraph's own, so there is no second SPARQL engine to disagree with it, and no
SPARQL text is built or rewritten here. What it changed is then read off the copy by
comparing, before and after, the graphs it could have written.

Which graphs those are (its :class:`Footprint`) comes from the update parsed by rdflib
(``parseUpdate`` + ``translateUpdate``, never executed): graph IRIs of the templates,
``WITH``, ``USING``, ``GRAPH`` clauses of the pattern, the targets of ``LOAD``, ``CLEAR``,
``DROP``, ``CREATE``, ``ADD``, ``MOVE``, ``COPY``. Whatever is in doubt widens it to every
graph: a graph variable, ``BASE`` or a relative IRI (IRI resolution is left to pyoxigraph),
a request rdflib cannot parse. A check after the run (the copy's size and its named graphs)
catches a footprint that missed a change (:class:`FootprintMissed`: compute again with every
graph). The default graph is always read (diagkg keeps nothing there, so it costs nothing).

The footprint also says what the update *read*: the digests of those graphs
(:func:`digest`) go with the change, and whoever applies it checks, under the write lock,
that the store still holds the same (:mod:`diagkg.kg.updates`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import pyoxigraph as ox

from ..errors import InputError, NotRdfError, QueryError, StoreError
from .queries import explain_syntax_error

DEFAULT = ""          # the key of the default graph
EVERY_NAME = "*"      # the key of the set of named graphs (a digest of their names)

GraphName = ox.NamedNode | ox.BlankNode | ox.DefaultGraph

_ABSOLUTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def key_of(graph: GraphName) -> str:
    """A graph's key: its IRI, ``_:label`` for a blank node, :data:`DEFAULT` for the default graph."""
    if isinstance(graph, ox.DefaultGraph):
        return DEFAULT
    if isinstance(graph, ox.BlankNode):
        return "_:" + graph.value
    return graph.value


def graph_of(key: str) -> GraphName:
    """The graph with this key (see :func:`key_of`)."""
    if key == DEFAULT:
        return ox.DefaultGraph()
    if key.startswith("_:"):
        return ox.BlankNode(key[2:])
    return ox.NamedNode(key)


# ---------------------------------------------------------------------------
# the footprint
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Footprint:
    """The graphs an update may read and write (keys, see :func:`key_of`)."""

    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    reads_all: bool = False
    writes_all: bool = False
    loads: bool = False           # has a LOAD (a syntax error may then be the fetched document's)

    @classmethod
    def everything(cls, loads: bool = False) -> "Footprint":
        return cls(frozenset({DEFAULT}), frozenset({DEFAULT}), True, True, loads)


class _Doubt(Exception):
    """Something the footprint cannot pin down: every graph."""


def footprint(text: str) -> Footprint:
    """What ``text`` (a SPARQL update) may read and write, read from its rdflib parse."""
    from rdflib.plugins.sparql.algebra import translateUpdate
    from rdflib.plugins.sparql.parser import parseUpdate

    loads = False
    try:
        parsed = parseUpdate(text)
        if any(getattr(part, "name", "") == "Base" for prologue in parsed["prologue"] for part in prologue):
            raise _Doubt
        operations = translateUpdate(parsed).algebra
        loads = any(op.name == "Load" for op in operations)
        reads: set[str] = {DEFAULT}
        writes: set[str] = set()
        reads_all = writes_all = False
        for op in operations:
            r, w, ra, wa = _operation(op)
            reads |= r
            writes |= w
            reads_all |= ra
            writes_all |= wa
    except _Doubt:
        return Footprint.everything(loads)
    except Exception:  # noqa: BLE001 - rdflib cannot read it (pyoxigraph may): every graph
        return Footprint.everything(loads)
    return Footprint(frozenset(reads), frozenset(writes), reads_all or writes_all, writes_all, loads)


def _field(node: Any, name: str) -> Any:
    """A field of an rdflib algebra node, None when absent (``CompValue.get`` answers the name itself)."""
    return dict.get(node, name) if isinstance(node, dict) else None


def _graph_key(term: Any) -> str:
    """The key of a graph named by a constant; a variable or anything in doubt raises :class:`_Doubt`."""
    from rdflib import URIRef

    if isinstance(term, URIRef) and _ABSOLUTE.match(str(term)):
        return str(term)
    raise _Doubt


def _ref(term: Any) -> str:
    """``DEFAULT``, or a graph IRI (ADD/MOVE/COPY, CLEAR/DROP targets)."""
    if term == "DEFAULT":
        return DEFAULT
    return _graph_key(term)


def _template(clause: Any, default: str) -> tuple[set[str], bool]:
    """The graphs a template (or quad data) writes: (keys, every graph?)."""
    from rdflib import Variable

    out: set[str] = set()
    every = False
    if clause is None:
        return out, every
    if _field(clause, "triples"):
        out.add(default)
    for graph in (_field(clause, "quads") or {}):
        if isinstance(graph, Variable):
            every = True
        else:
            out.add(_graph_key(graph))
    return out, every


def _operation(op: Any) -> tuple[set[str], set[str], bool, bool]:
    """(reads, writes, reads every graph, writes every graph) of one update operation."""
    name = op.name
    if name in ("InsertData", "DeleteData"):
        w, every = _template(op, DEFAULT)
        return set(), w, False, every
    if name == "DeleteWhere":
        w, every = _template(op, DEFAULT)
        return set(w), w, every, every
    if name == "Modify":
        with_graph = _graph_key(_field(op, "withClause")) if _field(op, "withClause") is not None else DEFAULT
        writes: set[str] = set()
        writes_all = False
        for clause in (_field(op, "delete"), _field(op, "insert")):
            w, every = _template(clause, with_graph)
            writes |= w
            writes_all |= every
        reads: set[str] = set()
        using = _field(op, "using") or []
        if using:
            for u in using:
                for k in ("default", "named"):
                    if _field(u, k) is not None:
                        reads.add(_graph_key(_field(u, k)))
        else:
            reads.add(with_graph)
        reads_all = False
        for term in _graph_terms(_field(op, "where")):
            try:
                reads.add(_graph_key(term))
            except _Doubt:
                reads_all = True
        return reads, writes, reads_all, writes_all
    if name == "Load":
        target = _field(op, "graphiri")
        return set(), {_graph_key(target) if target is not None else DEFAULT}, False, False
    if name in ("Clear", "Drop"):
        target = _field(op, "graphiri")
        if target in ("NAMED", "ALL"):
            return set(), set(), False, True
        return set(), {_ref(target)}, False, False
    if name == "Create":
        return set(), {_graph_key(_field(op, "graphiri"))}, False, False
    if name in ("Add", "Move", "Copy"):
        source, target = (_ref(g) for g in _field(op, "graph"))
        return {source}, {target, source} if name == "Move" else {target}, False, False
    raise _Doubt


def _graph_terms(node: Any) -> Iterator[Any]:
    """The terms of every ``GRAPH`` clause in a pattern (translated or, inside EXISTS, as parsed)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, CompValue):
        if node.name in ("Graph", "GraphGraphPattern"):
            yield _field(node, "term")
        for value in node.values():
            yield from _graph_terms(value)
    elif isinstance(node, dict):
        for value in node.values():
            yield from _graph_terms(value)
    elif isinstance(node, (list, tuple)) or type(node).__name__ == "ParseResults":
        for value in node:
            yield from _graph_terms(value)


# ---------------------------------------------------------------------------
# digests, snapshots, deltas
# ---------------------------------------------------------------------------

def digest(raw: Any, key: str) -> str:
    """A digest of one graph's content (order-free), or of the set of named graphs for
    :data:`EVERY_NAME`; ``raw`` is a pyoxigraph store (or anything with its reading methods)."""
    if key == EVERY_NAME:
        names = sorted(key_of(g) for g in raw.named_graphs())
        return hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()
    total, count = 0, 0
    for quad in raw.quads_for_pattern(None, None, None, graph_of(key)):
        total += int.from_bytes(hashlib.blake2b(str(quad).encode("utf-8"), digest_size=16).digest(), "big")
        count += 1
    exists = key == DEFAULT or raw.contains_named_graph(graph_of(key))
    return f"{count}:{total % (1 << 128):032x}" if exists else "absent"


def every_key(raw: Any) -> set[str]:
    """The keys of every graph of a store, the default graph included."""
    return {DEFAULT, *(key_of(g) for g in raw.named_graphs())}


@dataclass
class Snapshot:
    """What a copy held before an update ran: the content of each graph it may write, and
    the digests of each graph it may read or write."""

    footprint: Footprint
    contents: dict[str, frozenset[ox.Triple]]
    existed: frozenset[str]              # named graphs (keys) that existed, among those captured
    digests: dict[str, str]
    size: int
    names: frozenset[str]

    @classmethod
    def take(cls, raw: ox.Store, fp: Footprint) -> "Snapshot":
        names = frozenset(key_of(g) for g in raw.named_graphs())
        written = ({DEFAULT} | names) if fp.writes_all else set(fp.writes)
        read = ({DEFAULT} | names) if fp.reads_all else set(fp.reads)
        contents = {k: frozenset(q.triple for q in raw.quads_for_pattern(None, None, None, graph_of(k)))
                    for k in written}
        digests = {k: digest(raw, k) for k in read | written}
        if fp.reads_all or fp.writes_all:
            digests[EVERY_NAME] = digest(raw, EVERY_NAME)
        return cls(fp, contents, frozenset(k for k in written if k in names), digests, len(raw), names)


@dataclass
class Delta:
    """What an update changed: triples removed and added per graph, named graphs created and dropped."""

    removed: dict[str, frozenset[ox.Triple]] = field(default_factory=dict)
    added: dict[str, frozenset[ox.Triple]] = field(default_factory=dict)
    created: frozenset[str] = frozenset()
    dropped: frozenset[str] = frozenset()
    after: dict[str, frozenset[ox.Triple]] = field(default_factory=dict, repr=False)   # changed graphs, as left

    @property
    def empty(self) -> bool:
        return not (self.removed or self.added or self.created or self.dropped)

    def graphs(self) -> list[str]:
        """The keys of the graphs changed, in order."""
        return sorted({*self.removed, *self.added, *self.created, *self.dropped})


class FootprintMissed(Exception):
    """The update changed a graph its footprint did not name: compute again with every graph."""


def diff(before: Snapshot, raw: ox.Store) -> Delta:
    """What changed in ``raw`` since ``before`` was taken (raises :class:`FootprintMissed`)."""
    names = frozenset(key_of(g) for g in raw.named_graphs())
    delta = Delta()
    net = 0
    captured = dict(before.contents)
    if before.footprint.writes_all:      # graphs made by the update: empty before
        captured.update((k, frozenset()) for k in names - before.names)
    for key, old in captured.items():
        new = frozenset(q.triple for q in raw.quads_for_pattern(None, None, None, graph_of(key)))
        if new != old:
            if old - new:
                delta.removed[key] = old - new
            if new - old:
                delta.added[key] = new - old
            delta.after[key] = new
            net += len(new) - len(old)
    delta.created = frozenset(k for k in names - before.names if k in captured)
    delta.dropped = frozenset(k for k in before.names - names if k in captured)
    for key in delta.created | delta.dropped:
        delta.after.setdefault(key, frozenset())
    if (names ^ before.names) - set(captured) or len(raw) - before.size != net:
        raise FootprintMissed
    return delta


def run(raw: ox.Store, text: str, fp: Footprint, name: str = "update") -> None:
    """Run the update on a copy, its failures as diagkg's typed errors."""
    try:
        raw.update(text)
    except SyntaxError as exc:
        if fp.loads:      # the update parsed (rdflib read it): the document LOAD fetched did not
            raise NotRdfError(f"{name}: LOAD fetched a document that is not RDF (or not in the format its "
                              f"media type says): {' '.join(str(exc).split())}") from None
        raise QueryError(explain_syntax_error(name, text, exc)) from None
    except ValueError as exc:
        raise QueryError(f"{name}: {exc}") from None
    except RuntimeError as exc:     # pyoxigraph: a fetched document of a media type it cannot read, a SERVICE failed
        if fp.loads:
            raise NotRdfError(f"{name}: LOAD fetched a document that is not RDF (or of a media type it cannot "
                              f"read): {' '.join(str(exc).split())[:300]}") from None
        raise InputError(f"{name}: the update could not be evaluated: {' '.join(str(exc).split())[:300]}") from None
    except OSError as exc:
        if fp.loads:
            raise InputError(f"{name}: LOAD could not fetch its document: {' '.join(str(exc).split())[:300]}") from None
        raise StoreError(f"{name}: {exc}") from None


def blank_nodes(triples: Iterable[ox.Triple]) -> set[ox.BlankNode]:
    """The blank nodes of some triples."""
    return {t for triple in triples for t in (triple.subject, triple.object) if isinstance(t, ox.BlankNode)}
