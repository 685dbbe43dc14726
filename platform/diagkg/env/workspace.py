"""What a session works on, taken from the store in use — and what an assistant may see.

Nothing here keeps a catalogue of its own: every scenario, system, action
and inference comes from the store the user chose (``--store``,
``DIAGKG_STORE``, the default on-disk store, or ``--memory``).

* :func:`resolve_scenario` finds a scenario in the store by number or
  identifier; a store that has never held the shipped catalogue gets it
  loaded first (said through ``notify``).
* :func:`workspace` is a session's *working memory*: a private in-memory store
  seeded with the graphs the session needs (ontology, the system, its stored
  inferences, the scenario). The session's circuit state lives there; the
  store in use is written once, when the trajectory is stored.
* :class:`KnowledgeView` is what a non-privileged assistant gets: a read-only
  view holding the ontology, the system and its inferences — and nothing of
  the scenario (faults, faulty components, ideal repair) or of the live state.
  It is a separate in-memory store, so the answer is not reachable through it.
"""

from __future__ import annotations

from numbers import Integral
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeGuard

import pyoxigraph as ox

from ..errors import InputError, QueryError, UnknownTermError
from ..kg import graphs
from ..kg.memo import Memo
from ..kg.queries import QueryFile
from ..kg.store import KnowledgeSource
from ..kg.vocab import DK

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.loading import LoadReport, Progress
    from ..kg.store import KnowledgeStore
    from .scenarios import Scenario

Notify = Callable[[str], None]

__all__ = ["AnswerCache", "KnowledgeSource", "KnowledgeView", "WorkingMemory", "assistant_view", "prior_view",
           "names_shipped_scenario", "resolve_scenario", "workspace"]


def resolve_scenario(store: "KnowledgeStore", ref: "str | int | Scenario",
                     notify: Notify | None = None) -> "Scenario":
    """A scenario of ``store`` by number or identifier (a :class:`Scenario` is returned as is). A store without
    the shipped catalogue gets it loaded first when ``ref`` names a shipped scenario (a name of none, a typo of
    the user's own, loads nothing: the error says what the store holds)."""
    from ..kg.loading import ensure_shipped, has_shipped
    from .scenarios import Scenario, ScenarioCatalog

    if isinstance(ref, Scenario):
        return ref
    given: object = ref                   # what a caller passes, whatever its annotation says
    if isinstance(given, bool) or not isinstance(given, (str, Integral)):  # None and 3.5 raised AttributeError,
        raise InputError(f"a scenario is named by its number (a whole number) or identifier (a string), or is a "
                         f"Scenario or a file's path; got {given!r}")         # and True ran scenario 1
    if isinstance(given, Integral):
        ref = int(given)                  # (numpy's integers too, as seeds)
    try:
        return ScenarioCatalog.find(store, ref)
    except UnknownTermError:
        if has_shipped(store) or not names_shipped_scenario(ref):
            raise
    ensure_shipped(store, notify=notify)
    return ScenarioCatalog(store).resolve(ref)


def names_shipped_scenario(ref: str | int) -> bool:
    """Whether ``ref`` is the number or identifier of a shipped scenario (as the catalogue's files are named:
    ``NNN-IDENTIFIER.ttl``)."""
    from ..kg.resources import catalog_files

    text = str(ref).strip()
    for f in catalog_files():
        number, _, identifier = Path(f.name).stem.partition("-")
        if text == identifier or (text.isdigit() and int(text) == int(number)):
            return True
    return False


RDF_SUFFIXES = (".ttl", ".nt", ".trig", ".nq", ".rdf", ".owl", ".jsonld", ".n3")


def is_file_ref(ref: object) -> TypeGuard[str | Path]:
    """Whether a scenario reference names a file (a path, or a name with an RDF suffix) rather than a scenario."""
    return isinstance(ref, Path) or (isinstance(ref, str) and Path(ref).suffix.lower() in RDF_SUFFIXES)


def load_scenario_file(store: "KnowledgeStore", path: "str | Path", *, replace: bool = False,
                       progress: "Progress | None" = None, notify: Notify | None = None) -> "tuple[str, LoadReport]":
    """A scenario file validated against the store and loaded into it (``diagkg run --scenario FILE``,
    :func:`diagkg.make`): the identifier of its scenario, and what the load did."""
    from ..kg.loading import load_files

    report = load_files(store, [path], replace=replace, progress=progress, notify=notify)
    graph = report.loaded[0].graph if report.loaded else ""
    ids = [r["value"] for r in store.select("graph-claims") if r["graph"] == graph and r["kind"] == "scenario identifier"]
    if not ids:
        raise InputError(f"{path}: holds no scenario")
    return str(ids[0]), report


def graph_holding(store: Any, node: str, cls: str) -> ox.NamedNode | None:
    """The named graph in which ``node`` is declared an instance of ``cls``."""
    rows = store.select("graph-of", {"node": ox.NamedNode(node), "class": ox.NamedNode(cls)})
    return ox.NamedNode(rows[0]["graph"]) if rows else None


def _knowledge_graphs(store: "KnowledgeStore", system_iri: str, key: str) -> list[ox.NamedNode]:
    system = graph_holding(store, system_iri, str(DK.System)) or graphs.system(key)
    return [graphs.ONTOLOGY, system, graphs.inferred(key)]


def _knowledge(store: "KnowledgeStore", system_iri: str,
               key: str) -> tuple[list[ox.NamedNode], tuple[str, ...], list[ox.Triple] | None]:
    """The graphs a session or a view of system ``key`` is seeded with, their versions, and the
    inferences the store lacks (an older store), worked out without writing the store (None when it
    holds current ones; their version is then the digest they follow from)."""
    from ..kg.loading import missing_inferences, recorded_inference_digest

    names = _knowledge_graphs(store, system_iri, key)
    inferred = missing_inferences(store, key)
    versions = tuple(store.version_of(n) for n in names)
    if inferred is not None:
        versions = (*versions[:-1], f"computed:{recorded_inference_digest(inferred)}")
    return names, versions, inferred


_SEEDS: Memo[tuple[ox.Quad, ...]] = Memo("seeds", 4)     # the quads a memory is seeded with, by the graphs' versions


def _seed(store: "KnowledgeStore", names: list[ox.NamedNode], inferred: list[ox.Triple] | None,
          versions: tuple[str, ...]) -> "KnowledgeStore":
    """A fresh in-memory store holding ``names`` of ``store``, the last one (the inferences) from
    ``inferred`` when given. The quads are read out of ``store`` once for these ``versions`` of these
    graphs (on disk, ~12 µs a quad: 50 ms for a system and the ontology) and copied from what was read
    for the next memory seeded alike (a session's and its assistant's view: ~10 ms)."""
    from ..kg.store import KnowledgeStore

    def read() -> tuple[ox.Quad, ...]:
        quads = _quads_of(store, names if inferred is None else names[:-1])
        if inferred is not None:
            quads += [ox.Quad(t.subject, t.predicate, t.object, names[-1]) for t in inferred]
        return tuple(quads)

    quads = _SEEDS.get_or((tuple(n.value for n in names), versions), read)
    memory = KnowledgeStore.memory()
    with memory.writing() as w:
        w.extend(quads)
    return memory


def _quads_of(store: "KnowledgeStore", names: list[ox.NamedNode]) -> list[ox.Quad]:
    """The quads of graphs ``names`` of ``store``, read whole (again on a fresh snapshot if another
    process's compaction took a file meanwhile)."""
    return store.reading(lambda raw: [q for name in names for q in raw.quads_for_pattern(None, None, None, name)])


def _copy(store: "KnowledgeStore", names: list[ox.NamedNode]) -> "KnowledgeStore":
    from ..kg.store import KnowledgeStore

    memory = KnowledgeStore.memory()
    with memory.writing() as w:
        w.extend(_quads_of(store, names))
    return memory


class _Pool:
    """Working memories whose sessions have ended, kept for the next session on
    the same knowledge: seeding one costs milliseconds (the ontology alone is
    about 2,000 triples), emptying its session graphs costs microseconds.

    A working memory is keyed by the versions of the graphs it was seeded with,
    so a changed ontology, system or inference never reaches a new session.
    Sessions write only graphs of their own (the circuit state); a returned
    memory keeps its seed graphs and loses every other graph.
    """

    PER_KEY = 4

    def __init__(self) -> None:
        self._free: dict[tuple[str, ...], list["KnowledgeStore"]] = {}

    def take(self, versions: tuple[str, ...]) -> "KnowledgeStore | None":
        free = self._free.get(versions)
        return free.pop() if free else None

    def give_back(self, versions: tuple[str, ...], memory: "KnowledgeStore", seed: frozenset[ox.NamedNode]) -> None:
        raw = memory.raw
        for graph in list(raw.named_graphs()):
            if graph not in seed:
                raw.remove_graph(graph)
        raw.clear_graph(ox.DefaultGraph())
        memory.compact()          # what its sessions removed would slow the next one down
        free = self._free.setdefault(versions, [])
        if len(free) < self.PER_KEY:
            free.append(memory)
        if len(self._free) > 16:          # knowledge that changed: forget the oldest
            self._free.pop(next(iter(self._free)))


_POOL = _Pool()


class WorkingMemory:
    """A session's working memory (:attr:`store`) and the one way to give it back:
    :meth:`release`, called by its session's ``close`` (never by the garbage collector: a
    memory nobody releases is simply dropped with its session, not reused)."""

    __slots__ = ("store", "_versions", "_seed", "_pooled")

    def __init__(self, store: "KnowledgeStore", versions: tuple[str, ...], seed: frozenset[ox.NamedNode],
                 pooled: bool):
        self.store = store
        self._versions, self._seed, self._pooled = versions, seed, pooled

    def release(self) -> bool:
        """Return the memory to the pool, emptied of everything but its seed, for a later session on
        the same versions of the same knowledge; the holder must not use it afterwards. Only the
        first call does anything; returns whether this one did."""
        if not self._pooled:
            return False
        self._pooled = False
        _POOL.give_back(self._versions, self.store, self._seed)
        return True


def workspace(store: "KnowledgeStore", scenario: "Scenario", notify: Notify | None = None,
              pooled: bool = True) -> WorkingMemory:
    """A session's working memory for ``scenario``, seeded from ``store`` (taken from the pool
    of released memories on the same versions of the same knowledge when ``pooled``)."""
    names, versions, inferred = _knowledge(store, scenario.system_iri, scenario.key)
    memory = _POOL.take(versions) if pooled else None
    if memory is None:
        if inferred is not None and notify:
            notify(f"the store has no current inferences for system {scenario.key}; worked out for this "
                   "session (diagkg load --replace, or any update of the system, stores them)")
        memory = _seed(store, names, inferred, versions)
    scenario_graph = graph_holding(store, scenario.iri, str(DK.Scenario)) or graphs.named("scenario", scenario.id)
    memory.raw.extend(store.raw.quads_for_pattern(None, None, None, scenario_graph))
    return WorkingMemory(memory, versions, frozenset(names), pooled)


class KnowledgeView:
    """A read-only view of what an assistant may know about one system.

    ``select`` and ``query`` run query files or text as on a store; updates are
    refused. The view holds copies of the ontology, the system description and
    its inferences only.
    """

    def __init__(self, backing: "KnowledgeStore", key: str, versions: tuple[str, ...]):
        self._backing = backing
        self.key = key
        self.versions = versions
        self._ntriples: dict[str, str] | None = None
        self._shared: KnowledgeStore | None = None     # see shared_copy

    def select(self, query: str | QueryFile, bindings: Mapping[str, Any] | None = None,
               **template_values: Any) -> list[dict[str, Any]]:
        self._refuse_updates(query)
        return self._backing.select(query, bindings, **template_values)

    def query(self, query: str | QueryFile, bindings: Mapping[str, Any] | None = None,
              **template_values: Any) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        self._refuse_updates(query)
        return self._backing.query(query, bindings, **template_values)

    def version_of(self, graph: ox.NamedNode) -> str:
        return self._backing.version_of(graph)

    def private_copy(self) -> "KnowledgeStore":
        """A writable in-memory copy of what the view holds (ontology, system,
        inferences): where an assistant builds models of its own, e.g.
        hypothetical faults to simulate. Nothing written there reaches the
        store in use or the session."""
        names = [ox.NamedNode(name) for name, _ in self._backing.graphs()]
        return _copy(self._backing, names)

    def shared_copy(self) -> "KnowledgeStore":
        """An in-memory copy of what the view holds, made once per view and shared by every session that
        asks for it (a view is shared while the graphs it copies are unchanged): what what-if sessions
        (:class:`~diagkg.env.worlds.Shadow`) are made on, which only read it (each writes into a working
        memory of its own). Never write into it; :meth:`private_copy` is the copy to write."""
        if self._shared is None:
            self._shared = self.private_copy()
        return self._shared

    def contains_graph(self, graph: ox.NamedNode) -> bool:
        return self._backing.raw.contains_named_graph(graph)

    def graphs(self) -> list[tuple[str, int]]:
        return self._backing.graphs()

    def ntriples(self) -> dict[str, str]:
        """What the view holds, one N-Triples document per named graph (for a trusted assistant in a
        process of its own; made once per view)."""
        if self._ntriples is None:
            out = {}
            for name, _ in self.graphs():
                quads = self._backing.raw.quads_for_pattern(None, None, None, ox.NamedNode(name))
                out[name] = (ox.serialize((q.triple for q in quads), format=ox.RdfFormat.N_TRIPLES) or b"").decode("utf-8")
            self._ntriples = out
        return dict(self._ntriples)

    @staticmethod
    def _refuse_updates(query: str | QueryFile) -> None:
        from ..kg.store import resolve_query

        if resolve_query(query).is_update:
            raise QueryError("an assistant's view of the knowledge graph is read-only")

    def __repr__(self) -> str:
        return f"<KnowledgeView of system {self.key}>"


_VIEWS: Memo[KnowledgeView] = Memo("views", 16)        # by the versions of the graphs each copies


def assistant_view(store: "KnowledgeStore", system_iri: str, key: str) -> KnowledgeView:
    """The read-only view of one system for non-privileged assistants (shared
    between sessions while the graphs it copies are unchanged)."""
    names, seeded, inferred = _knowledge(store, system_iri, key)
    versions = (key, *seeded)
    return _VIEWS.get_or(versions, lambda: KnowledgeView(_seed(store, names, inferred, seeded), key, versions))


def prior_view(store: "KnowledgeStore", key: str) -> KnowledgeView | None:
    """The read-only view of system ``key``'s stored optimal policy (graph ``optimum/{key}``) for the
    assistants briefed with the prior (:mod:`diagkg.agents.trust`); None when none is stored."""
    graph = graphs.named("optimum", key)
    if not store.raw.contains_named_graph(graph):
        return None
    versions = (key, "optimum", store.version_of(graph))
    return _VIEWS.get_or(versions, lambda: KnowledgeView(_copy(store, [graph]), key, versions))


class AnswerCache:
    """Where an assistant looks up and keeps answers worth keeping (a language
    model's replies, by prompt hash) in the store in use. Only the cache's own
    query files (``llm-cache-*``) can be run through it."""

    QUERY_PREFIX = "llm-cache-"

    def __init__(self, store: "KnowledgeStore"):
        self._select = store.select
        self._update = store.update

    def _check(self, name: str) -> None:
        if not (isinstance(name, str) and name.startswith(self.QUERY_PREFIX)):
            raise QueryError(f"the answer cache only runs its own queries ({self.QUERY_PREFIX}*), not {name!r}")

    def lookup(self, name: str, bindings: Mapping[str, Any]) -> list[dict[str, Any]]:
        self._check(name)
        return self._select(name, bindings)

    def keep(self, name: str, **values: Any) -> None:
        self._check(name)
        self._update(name, **values)
