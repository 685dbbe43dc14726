"""Loading RDF files into the store: validated in context, atomic, honest.

A load:

1. parses every file (an unreadable one stops the load, naming it);
2. finds where each document goes (:func:`diagkg.kg.store.graph_for`) and what it
   *claims*: the scenarios (IRI, identifier, number) and systems (IRI, key) it
   defines;
3. compares the claims with the batch and with the store (``graph-claims.rq``).
   Loading the same file again replaces its graph; a *different* file that
   claims what the store already holds is refused, naming both files, unless
   ``replace=True`` (then the report says what was replaced);
4. validates the documents in the context they will live in: the store's
   systems plus the files given (a scenario loads into a store that already
   holds its system); when a system is replaced, the stored scenarios that run
   on it are validated again against the new description;
5. runs the OWL reasoner on every system loaded (skipped when the store
   already holds inferences from the same description and ontology; results
   are also kept in a cache folder, keyed by the same hash);
6. writes everything in one atomic update (:meth:`KnowledgeStore.write_graphs`):
   the ontology and shapes (refreshed), each document's graph with where it
   came from (``dk:loadedFrom``) and its content hash (``dk:contentHash``),
   and the inferred graphs (``dk:inferredFrom``). Killed at any moment, the
   store holds all of it or none of it.

The shipped catalogue (five systems, 135 scenarios) reaches a store the same
way (:func:`load_shipped`, :func:`ensure_shipped`), with files known as
``diagkg:scenarios/…``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import pyoxigraph as ox

from ..errors import InputError, ValidationError
from . import graphs, resources
from .collisions import SHIPPED_PREFIX, Plan, batch_conflicts, held_claims, plan_against
from .inference_cache import REASONING_VERSION, cached_inferences, inferred_together, inferred_triples
from .rdfio import RdfDocument, document_of, expand_paths, parse_file, parse_text, value_of
from .vocab import DK

if TYPE_CHECKING:  # pragma: no cover

    from .rawstore import RawStore
    from .store import KnowledgeStore
    from .validation import Validator, Violation

RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
IDENTIFIER = ox.NamedNode("http://purl.org/dc/terms/identifier")
XSD_STRING = ox.NamedNode("http://www.w3.org/2001/XMLSchema#string")

Progress = Callable[[str, int, int], None]     # (stage, done, total)
Notify = Callable[[str], None]


@dataclass(frozen=True)
class Entry:
    """One document on its way into the store."""

    doc: RdfDocument
    origin: str                          # absolute path, or diagkg:<folder>/<path> for a shipped file
    digest: str                          # SHA-256 of the file's text
    graph: ox.NamedNode                  # where it goes
    claims: frozenset[tuple[str, str]]   # (kind, value): ("scenario identifier", "3CC.S.1")…
    restored: bool = False               # a graph of a dump: keeps its own provenance, and is
                                         # validated only when it is a system, a scenario or a file

    @property
    def systems(self) -> dict[str, str]:
        """System IRI -> key for the systems this document describes."""
        iris = [v for k, v in self.claims if k == "system"]
        keys = {value_of(t.subject): value_of(t.object) for t in self.doc.triples if t.predicate == DK_SYSTEM_KEY}
        return {iri: keys.get(iri, "") for iri in iris}


DK_SYSTEM_KEY = ox.NamedNode(str(DK.systemKey))


@dataclass
class LoadReport:
    """What a load did."""

    loaded: list[Any] = field(default_factory=list)           # LoadedGraph, in file order
    replaced: list[str] = field(default_factory=list)         # one sentence per replaced graph
    notes: list[str] = field(default_factory=list)            # files not loaded and why, shipped catalogue…
    inferred: dict[str, int] = field(default_factory=dict)    # system key -> inferred triples
    revalidated: list[str] = field(default_factory=list)      # scenario graphs checked against a new system


# ---------------------------------------------------------------------------
# identities of files and documents
# ---------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _shipped_roots() -> tuple[tuple[str, Path], ...]:
    roots = []
    for name in resources.FOLDERS:
        try:
            roots.append((name, Path(str(resources.folder(name))).resolve()))
        except (OSError, TypeError):   # pragma: no cover - a resource folder that is not on disk
            continue
    return tuple(roots)


def origin_of(path: str | Path) -> str:
    """How a file is known in the store: ``diagkg:<folder>/<path>`` for a file
    shipped with diagkg, else its absolute path."""
    resolved = Path(path).resolve()
    for name, root in _shipped_roots():
        if resolved.is_relative_to(root):
            return f"{SHIPPED_PREFIX}{name}/{resolved.relative_to(root).as_posix()}"
    return str(resolved)


def digest_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def claims_of(doc: RdfDocument) -> frozenset[tuple[str, str]]:
    """The scenarios and systems a document defines, as (kind, value) pairs."""
    out: set[tuple[str, str]] = set()
    scenario, system = str(DK.Scenario), str(DK.System)
    typed = {(t.subject, value_of(t.object)) for t in doc.triples if t.predicate == RDF_TYPE}
    scenarios = {s for s, c in typed if c == scenario}
    systems = {s for s, c in typed if c == system}
    for t in doc.triples:
        if t.subject in scenarios:
            if t.predicate == IDENTIFIER:
                out.add(("scenario identifier", value_of(t.object)))
            elif t.predicate.value == str(DK.scenarioNumber):
                try:
                    out.add(("scenario number", str(int(value_of(t.object)))))
                except ValueError:
                    out.add(("scenario number", value_of(t.object)))
        elif t.subject in systems and t.predicate == DK_SYSTEM_KEY:
            out.add(("system key", value_of(t.object)))
    out.update(("scenario", s.value) for s in scenarios if isinstance(s, ox.NamedNode))
    out.update(("system", s.value) for s in systems if isinstance(s, ox.NamedNode))
    return frozenset(out)


def entry_for(doc: RdfDocument, origin: str, graph: ox.NamedNode | None = None) -> Entry:
    from .store import graph_for

    return Entry(doc, origin, digest_of(doc.text), graph or graph_for(doc), claims_of(doc))


LOADED_FROM = ox.NamedNode(str(DK.loadedFrom))
CONTENT_HASH = ox.NamedNode(str(DK.contentHash))


def restored_entries(doc: RdfDocument, origin: str) -> list[Entry]:
    """The named graphs of a dump (``diagkg dump`` writes N-Quads) as entries
    that go back into their own graphs, with the provenance they recorded."""
    entries = []
    for name, triples in sorted(doc.named_graphs.items()):
        graph = ox.NamedNode(name)
        own = {t.predicate: value_of(t.object) for t in triples if t.subject == graph}
        part = document_of(triples, f"{doc.name} <{name}>")
        entries.append(Entry(part, own.get(LOADED_FROM, f"{origin}#{name}"), own.get(CONTENT_HASH, digest_of(part.text)),
                             graph, claims_of(part), restored=True))
    return entries


def provenance(graph: ox.NamedNode, origin: str, digest: str) -> list[ox.Triple]:
    return [ox.Triple(graph, ox.NamedNode(str(DK.loadedFrom)), ox.Literal(origin)),
            ox.Triple(graph, ox.NamedNode(str(DK.contentHash)), ox.Literal(digest))]


# ---------------------------------------------------------------------------
# the ontology and the shapes
# ---------------------------------------------------------------------------

@lru_cache(maxsize=1)
def core_graphs() -> dict[ox.NamedNode, list[ox.Triple]]:
    """The ontology and shapes graphs as shipped, each with its provenance."""
    out: dict[ox.NamedNode, list[ox.Triple]] = {}
    for graph, folder in ((graphs.ONTOLOGY, "ontology"), (graphs.SHAPES, "shapes")):
        triples: list[ox.Triple] = []
        hasher = hashlib.sha256()
        for f in resources.files(folder):
            text = f.read_text(encoding="utf-8")
            hasher.update(f.name.encode("utf-8") + b"\0" + text.encode("utf-8"))
            triples += parse_text(text, f.name).triples
        out[graph] = triples + provenance(graph, f"{SHIPPED_PREFIX}{folder}/", hasher.hexdigest())
    return out


@lru_cache(maxsize=1)
def ontology_version() -> str:
    """The content hash of the shipped ontology (fixed for the life of a process)."""
    content_hash = str(DK.contentHash)
    graph = core_graphs()[graphs.ONTOLOGY]
    return next(value_of(t.object) for t in graph if t.predicate.value == content_hash)


# graphs diagkg works out itself: `--graph` may not name one (a dump's copy goes back, with the rest of the dump)
DERIVED_KINDS = {"inferred": "a system's inferences", "tally": "a campaign slot's tally of its trajectories",
                 "optimum": "a system's optimal policy", "run": "the lease of a campaign's run"}


def _is_core_file(origin: str) -> bool:
    return origin.startswith((f"{SHIPPED_PREFIX}ontology/", f"{SHIPPED_PREFIX}shapes/"))


# ---------------------------------------------------------------------------
# inference
# ---------------------------------------------------------------------------

def inference_digest(system_version: str) -> str:
    return hashlib.sha256(f"{system_version}\n{ontology_version()}\nreasoning {REASONING_VERSION}".encode("utf-8")).hexdigest()


def inferred_graph(key: str, triples: list[ox.Triple], digest: str) -> list[ox.Triple]:
    """The content of ``inferred/{key}``: the inferred triples and the digest they follow from."""
    graph = graphs.inferred(key)
    return triples + [ox.Triple(graph, ox.NamedNode(str(DK.inferredFrom)), ox.Literal(digest))]


def recorded_inference_digest(triples: Iterable[ox.Triple]) -> str | None:
    """The ``dk:inferredFrom`` an inferred graph's triples record, if any."""
    return next((value_of(t.object) for t in triples if t.predicate.value == str(DK.inferredFrom)), None)


def stored_inference_digest(store: "KnowledgeStore", key: str) -> str | None:
    graph = graphs.inferred(key)
    return recorded_inference_digest(store.reading(lambda raw: [
        q.triple for q in raw.quads_for_pattern(graph, ox.NamedNode(str(DK.inferredFrom)), None, graph)]))


def infer_system(store: "KnowledgeStore", key: str, engine: str = "auto", use_cache: bool = False) -> int:
    """Run the reasoner on the stored system ``key`` (by default without the
    cache) and store the result in ``inferred/{key}``; returns the number of
    inferred triples."""
    system = graphs.system(key)
    data = store.graph_as_rdflib(system)
    if len(data) == 0:
        raise InputError(f"no system {key!r} in the store; load its description first")
    digest = inference_digest(store.version_of(system))
    triples = inferred_triples(data, digest, engine=engine, use_cache=use_cache)
    store.write_graphs({graphs.inferred(key): inferred_graph(key, triples, digest)})
    return len(triples)


def missing_inferences(store: "KnowledgeStore", key: str) -> list[ox.Triple] | None:
    """None when the store holds current inferences for system ``key`` (a load computes them);
    else what ``inferred/{key}`` should hold (from the cache folder, or reasoned now), written
    nowhere: a session's working memory takes them without the store being written."""
    digest = inference_digest(store.version_of(graphs.system(key)))
    if stored_inference_digest(store, key) == digest:
        return None
    data = store.graph_as_rdflib(graphs.system(key))
    if len(data) == 0:
        raise InputError(f"no system {key!r} in the store; load its description first")
    return inferred_graph(key, inferred_triples(data, digest, use_cache=True), digest)


def ensure_inferences(store: "KnowledgeStore", key: str, notify: Notify | None = None) -> None:
    """Store current inferences for system ``key`` if it lacks them (computed when it was loaded;
    an older store may lack them): an explicit write, for the commands that store results."""
    triples = missing_inferences(store, key)
    if triples is None:
        return
    if notify:
        notify(f"the store has no current inferences for system {key}; reasoning once and storing them…")
    store.write_graphs({graphs.inferred(key): triples})


# ---------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------

def load_files(store: "KnowledgeStore", paths: Iterable[str | Path], *, graph: ox.NamedNode | None = None,
               replace: bool = False, validate: bool = True, validator: "Validator | None" = None,
               progress: Progress | None = None, notify: Notify | None = None) -> LoadReport:
    """Validate files (folders are searched) and load them all, or none. Raises :class:`InputError` for unreadable
    files and refused collisions, and :class:`ValidationError` (carrying every violation) when a file does not
    conform in the context of the store."""
    files = expand_paths(paths)
    if not files:
        raise InputError("no RDF files to load")
    docs = []
    for i, f in enumerate(files):
        doc = parse_file(f)
        if not doc.triples and not any(doc.named_graphs.values()):
            # it became a graph holding only its provenance, which any update removes as a graph left empty
            raise InputError(f"{f}: holds no RDF statements (an empty file, or a dump of nothing); nothing was loaded")
        docs.append((doc, origin_of(f)))
        if progress:
            progress("reading", i + 1, len(files))
    return load_documents(store, docs, graph=graph, replace=replace, validate=validate, validator=validator,
                          progress=progress, notify=notify)


def load_documents(store: "KnowledgeStore", docs: Sequence[tuple[RdfDocument, str]], *,
                   graph: ox.NamedNode | None = None, replace: bool = False, validate: bool = True,
                   validator: "Validator | None" = None, progress: Progress | None = None,
                   notify: Notify | None = None) -> LoadReport:
    """Load parsed documents, each with its origin (see :func:`load_files`)."""
    from .store import LoadedGraph

    report = LoadReport()
    if graph is not None and len(docs) > 1:
        raise InputError("--graph takes a single file (each file goes into a graph of its own)")
    if graph is not None and graphs.kind_of(graph) in DERIVED_KINDS:
        raise InputError(f"--graph <{graph.value}> holds {DERIVED_KINDS[graphs.kind_of(graph) or '']}, worked out by "
                         "diagkg; nothing is loaded into it by hand")
    entries: list[Entry] = []
    for doc, origin in docs:
        parts = restored_entries(doc, origin) if doc.named_graphs and graph is None else [entry_for(doc, origin, graph)]
        for entry in parts:
            if _is_core_file(entry.origin):
                report.notes.append(f"{entry.doc.name}: part of diagkg's own "
                                    f"{entry.origin.split(':', 1)[1].split('/')[0]} graph, which every load "
                                    "refreshes; not loaded a second time")
                continue
            if entry.graph in (graphs.ONTOLOGY, graphs.SHAPES):    # what every load writes would be replaced by it
                raise InputError(f"{entry.doc.name}: <{entry.graph.value}> is diagkg's own and every load refreshes "
                                 "it from the files diagkg ships; nothing was loaded")
            entries.append(entry)
    problems = batch_conflicts(entries)
    if problems:
        raise InputError("these files collide, so nothing was loaded:\n  " + "\n  ".join(p.sentence for p in problems))

    # a scenario on a shipped system, into a store that has never seen the shipped catalogue
    if entries and _needs_shipped(store, entries):
        shipped = ensure_shipped(store, notify=notify, progress=progress)
        if shipped is not None:
            report.notes.append("loaded the shipped catalogue first (the files refer to its systems)")

    held = held_claims(store.select("graph-claims"))
    origins = {r["graph"]: r["source"] for r in store.select("graph-sources")}
    for g in store.reading(lambda raw: list(raw.named_graphs())):     # again afresh if a compaction took a file
        if isinstance(g, ox.NamedNode):
            origins.setdefault(g.value, None)
    plan = plan_against(entries, held, replace, origins)
    if plan.conflicts:
        raise InputError("nothing was loaded:\n  " + "\n  ".join(c.sentence for c in plan.conflicts))

    if validate and entries:
        _validate(store, entries, plan, validator, progress, report)

    # inferences for every system loaded
    new: dict[ox.NamedNode, list[ox.Triple]] = dict(core_graphs())
    for e in entries:
        new[e.graph] = list(e.doc.triples) + ([] if e.restored else provenance(e.graph, e.origin, e.digest))
    system_entries = [e for e in entries if e.graph.value.startswith(graphs.BASE + "system/")]
    todo: list[tuple[str, str, Entry]] = []       # systems whose inferences the cache folder lacks
    for e in system_entries:
        if not e.systems:
            continue
        key = next(iter(e.systems.values()))
        digest = inference_digest(e.digest)
        if digest in (stored_inference_digest(store, key),
                      recorded_inference_digest(new.get(graphs.inferred(key), ()))):   # or restored from a dump
            continue
        triples = cached_inferences(digest)
        if triples is None:
            todo.append((key, digest, e))
            continue
        new[graphs.inferred(key)] = inferred_graph(key, triples, digest)
        report.inferred[key] = len(triples)
    if todo:
        # the rest in one run of the reasoner (the rdflib graphs are parsed only for it; what another
        # process keeps meanwhile is read instead)
        what = f"reasoning ({', '.join(key for key, _, _ in todo)})"
        if progress:
            progress(what, 0, 1)
        for (key, digest, _), triples in zip(todo, inferred_together([(e.doc.graph, d) for _, d, e in todo]),
                                             strict=True):
            new[graphs.inferred(key)] = inferred_graph(key, triples, digest)
            report.inferred[key] = len(triples)
        if progress:
            progress(what, 1, 1)
    for iri in plan.replaced_systems:    # inferences of a system replaced under another key are stale
        for h in held:
            if h.kind == "system key" and any(x.kind == "system" and x.value == iri and x.graph == h.graph
                                              for x in held):
                stale = graphs.inferred(h.value)
                if stale not in new:
                    plan.drop.append(stale)

    def recheck(writer: RawStore) -> list[ox.NamedNode]:
        """Inside the write lock: did another process load something that collides meanwhile?"""
        from .store import select_on

        now_held = held_claims(select_on(writer, "graph-claims"))
        if set(now_held) == set(held):
            return []
        now_origins = {r["graph"]: r["source"] for r in select_on(writer, "graph-sources")}
        again = plan_against(entries, now_held, replace, now_origins)
        if again.conflicts:
            raise InputError("nothing was loaded; meanwhile another process loaded:\n  "
                             + "\n  ".join(c.sentence for c in again.conflicts))
        return again.drop

    if progress:
        progress("writing", 0, 1)
    fresh = {} if plan.drop else {g: [ox.Quad(t.subject, t.predicate, t.object, g) for t in triples]    # by bulk load:
                                  for g, triples in new.items() if triples and g.value not in origins}  # nothing dropped
    store.write_graphs({g: t for g, t in new.items() if g not in fresh}, drop=plan.drop, check=recheck, fresh=fresh)
    if progress:
        progress("writing", 1, 1)
    report.replaced = plan.replaced
    report.loaded = [LoadedGraph(e.doc.name, e.graph.value, len(e.doc.triples)) for e in entries]
    return report


def _validate(store: "KnowledgeStore", entries: Sequence[Entry], plan: Plan, validator: "Validator | None",
              progress: Progress | None, report: LoadReport) -> None:
    from .validation import Validator, store_resolver

    validator = validator or Validator()
    total = len(entries)
    done = [0]

    def tick(n: int) -> None:
        done[0] += n
        if progress:
            progress("validating", done[0], total)

    if progress:
        progress("validating", 0, total)
    checked = [e for e in entries if not e.restored or graphs.kind_of(e.graph) in ("system", "scenario", "file")]
    results = validator.validate_documents([e.doc for e in checked], resolve=store_resolver(store, shipped=False),
                                           progress=tick)
    violations: list[Violation] = [v for e in checked for v in results[e.doc.name]]
    if violations:
        raise ValidationError(violations)
    # scenarios already stored that run on a system being replaced
    if not plan.replaced_systems:
        return
    batch_graphs = {e.graph.value for e in entries} | {g.value for g in plan.drop}
    dependents: list[RdfDocument] = []
    sources: dict[str, str] = {}
    for iri in sorted(plan.replaced_systems):
        for r in store.select("scenarios-on-system", {"system": ox.NamedNode(iri)}):
            if r["graph"] in batch_graphs:
                continue
            # the stored graph, named as stored: its lines are those of its own serialisation, not of a file
            name = f"{r['graph']} (as stored)"
            dependents.append(document_of([q.triple for q in store.quads(ox.NamedNode(r["graph"]))], name))
            if r["source"] and not r["source"].startswith(SHIPPED_PREFIX):
                sources[name] = r["source"]
            report.revalidated.append(r["graph"])
    if not dependents:
        return
    context = [e.doc for e in entries if e.systems]
    results = validator.validate_documents(dependents, context=context)
    failing = [d for d in dependents if results[d.name]]
    if failing:
        violations = [v for d in failing for v in _in_its_file(validator, d, sources.get(d.name), context, results[d.name])]
        raise ValidationError(violations)


def _in_its_file(validator: "Validator", stored: RdfDocument, source: str | None, context: Sequence[RdfDocument],
                 found: list[Violation]) -> list[Violation]:
    """A stored scenario's violations located in the file it was loaded from, when that file is still what
    was loaded (its content hash, ``dk:contentHash``: its lines, its prefixes); else as found in the stored
    graph."""
    hashes = {value_of(t.object) for t in stored.triples if t.predicate == CONTENT_HASH}
    try:
        doc = parse_file(source) if source is not None and Path(source).is_file() else None
    except (InputError, OSError):
        doc = None
    if doc is None or digest_of(doc.text) not in hashes:
        return found
    return validator.validate_documents([doc], context=context)[doc.name] or found


def _needs_shipped(store: "KnowledgeStore", entries: Sequence[Entry]) -> bool:
    """Do the documents refer to a shipped system the store has never held?"""
    defined = {v for e in entries for k, v in e.claims if k == "system"}
    wanted = {value_of(t.object) for e in entries for t in e.doc.triples if t.predicate.value == str(DK.onSystem)}
    missing = wanted - defined
    if not missing or has_shipped(store):
        return False
    held = {r["value"] for r in store.select("graph-claims") if r["kind"] == "system"}
    return bool((missing - held) & shipped_system_iris())


# ---------------------------------------------------------------------------
# the shipped catalogue
# ---------------------------------------------------------------------------

def shipped_files() -> list[Path]:
    """The shipped systems and scenarios, systems first."""
    return [Path(str(f)) for f in resources.system_files()] + [Path(str(f)) for f in resources.catalog_files()]


@lru_cache(maxsize=1)
def shipped_system_iris() -> frozenset[str]:
    out: set[str] = set()
    for f in resources.system_files():
        doc = parse_text(f.read_text(encoding="utf-8"), f.name)
        out.update(v for k, v in claims_of(doc) if k == "system")
    return frozenset(out)


def has_shipped(store: "KnowledgeStore") -> bool:
    """Does the store hold any scenario loaded from the shipped catalogue? (A
    shipped system loaded on its own does not count.)"""
    prefix = f"{SHIPPED_PREFIX}scenarios/catalog/"
    return any((r["source"] or "").startswith(prefix) for r in store.select("graph-sources"))


def load_shipped(store: "KnowledgeStore", *, replace: bool = False, validate: bool = False,
                 progress: Progress | None = None, notify: Notify | None = None) -> LoadReport:
    """Load the shipped systems and scenarios (validated by diagkg's own test
    suite, so the shapes are skipped unless ``validate``)."""
    return load_files(store, shipped_files(), replace=replace, validate=validate, progress=progress, notify=notify)


def ensure_shipped(store: "KnowledgeStore", *, notify: Notify | None = None,
                   progress: Progress | None = None) -> LoadReport | None:
    """Load the shipped catalogue into a store that has none of it (saying so
    through ``notify``); None when the store already has it."""
    if has_shipped(store):
        return None
    if notify:
        notify(f"the store has no shipped catalogue yet; loading it into "
               f"{store.location} (diagkg load --shipped)…")
    return load_shipped(store, progress=progress)
