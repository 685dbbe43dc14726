"""The graphs an update changed, made whole again before anything is written.

An update (:mod:`diagkg.kg.updates`) is worked out on a private copy of the store. Before
its change is applied, every graph it touched is checked and completed here, on that copy,
by the rules every write to the knowledge follows (``diagkg update``, an update through a
server's ``/sparql``, ``load --replace``):

* **diagkg's own graphs and derived graphs are not written by updates**: the ontology and
  the shapes (every load refreshes them), ``inferred/{key}`` (computed from its system), a
  campaign slot's ``tally/…`` (computed from its trajectories) and ``optimum/{key}`` (computed
  by ``diagkg optimum``); an update may drop either of the last two whole:
  :class:`~diagkg.errors.UpdateRefused`. Nor is the store's default graph, where diagkg keeps
  nothing (``dump`` and ``graphs`` leave it out).
* **A trajectory graph is validated against its shapes** (:mod:`diagkg.kg.trajectory_shapes`;
  a violation refuses the whole update), and the slot tallies of the campaign slots it was or
  is in are dropped in the same write: a tally is a pure function of its slot's trajectories.
* **A system, scenario or file graph keeps what it is**: the systems and scenarios it
  defines (their IRIs, the system key, the scenario identifier) stay; a changed identity is
  refused (remove the graph and load the new description). A new such graph must be the
  one :func:`diagkg.kg.store.graph_for` would give its content. What it claims (a scenario
  number…) must not be claimed by another graph.
* **It is validated in context**, as a load validates: against the shapes and the
  ontology's terms, a scenario with its system as the update leaves it, a changed system
  with every stored scenario that runs on it. A violation refuses the whole update
  (:class:`~diagkg.errors.ValidationError`, exit 1).
* **A graph left empty is removed**, with its provenance; a system that stored scenarios
  still run on cannot go (remove them in the same update).
* **Its version follows its data**: ``dk:contentHash`` becomes the SHA-256 of its content
  (its N-Triples lines, sorted; the provenance statements excluded), ``dk:loadedFrom`` is
  kept. Every cache derived from a graph is keyed by this version
  (:meth:`~diagkg.kg.store.KnowledgeStore.version_of`), so none survives the change.
* **A system's inferences follow it**: ``inferred/{key}`` is computed again for the new
  version (``dk:inferredFrom``); a system removed takes its inferences with it.

Blank-node labels make a content hash depend on the copy it was computed on: the same
content may get two versions (a cache misses once), never one version for two contents.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

import pyoxigraph as ox

from ..errors import UpdateRefused, ValidationError
from . import graphs
from .collisions import Held, held_claims, shown
from .deltas import DEFAULT, Delta, Snapshot
from .inference_cache import inferred_triples
from .loading import CONTENT_HASH, LOADED_FROM, claims_of, inference_digest, inferred_graph
from .rdfio import RdfDocument, parse_text, value_of
from .store import KnowledgeStore, graph_for
from .vocab import DK

if TYPE_CHECKING:  # pragma: no cover
    import rdflib

    from .validation import Validator, Violation

RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
REVISED_KINDS = ("system", "scenario", "file")
# what a graph is: the claims an update may not change
IDENTITY = ("system", "system key", "scenario", "scenario identifier")


@dataclass(frozen=True)
class Revision:
    """A graph given a new version (``after`` empty: removed)."""

    graph: str
    before: str
    after: str


@dataclass
class Settled:
    """What the rules add to an update's own change."""

    replace: dict[str, list[ox.Triple]] = field(default_factory=dict)   # graph key -> its whole new content
    drop: set[str] = field(default_factory=set)                         # graphs removed whole
    read: set[str] = field(default_factory=set)     # other graphs the checks read (context, dependents)
    claims: frozenset[Held] | None = None           # the other graphs' claims, when identities were checked
    revisions: list[Revision] = field(default_factory=list)
    inferred: dict[str, int] = field(default_factory=dict)              # system key -> inferred triples
    revalidated: list[str] = field(default_factory=list)                # stored scenarios checked again
    stale: list[str] = field(default_factory=list)      # slot tallies dropped: a trajectory of their slot changed


def content_version(triples: Iterable[ox.Triple]) -> str:
    """The version of a graph's content (provenance statements excluded by the caller)."""
    lines = sorted(str(t) for t in triples)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def _split(graph: ox.NamedNode, triples: Iterable[ox.Triple]) -> tuple[list[ox.Triple], str | None, str]:
    """A graph's content without its provenance, where it was loaded from, and its recorded version."""
    body, origin, version = [], None, ""
    for t in triples:
        if t.subject == graph and t.predicate == LOADED_FROM:
            origin = value_of(t.object)
        elif t.subject == graph and t.predicate == CONTENT_HASH:
            version = value_of(t.object)
        else:
            body.append(t)
    return body, origin, version


def _document(name: str, triples: list[ox.Triple]) -> RdfDocument:
    text = "".join(f"{line}\n" for line in sorted(f"{t} ." for t in triples))
    return parse_text(text, name, suffix=".nt")


def protected(key: str) -> str | None:
    """Why no update may write this graph (None: it may)."""
    if key in (graphs.ONTOLOGY.value, graphs.SHAPES.value):
        return f"<{key}> is diagkg's own and every load refreshes it"
    if key != DEFAULT and not key.startswith("_:") and graphs.kind_of(ox.NamedNode(key)) == "inferred":
        return (f"<{key}> holds what the reasoner derives from a system; change the system, and its "
                "inferences follow")
    if key.startswith("_:"):
        return "a graph named by a blank node cannot be written by name"
    if key == DEFAULT:
        return ("the update writes the store's default graph, where diagkg keeps nothing (`diagkg dump` and "
                "`diagkg graphs` leave it out): name the graph you mean with GRAPH, WITH or INTO")
    return None


# graphs diagkg works out from others, that a report reads in their place: an update may drop one, not write it
WORKED_OUT = {
    "tally": ("a campaign slot's tally, worked out from its trajectories", "change the trajectories (their slots' "
              "tallies are dropped with them) or drop the tally whole, and `diagkg report --rebuild` writes it afresh"),
    "optimum": ("a system's optimal policy, worked out by `diagkg optimum` (the anchor of regret)",
                "drop it whole, and `diagkg optimum` works it out again"),
}


def _tally_written(key: str, delta: Delta) -> str | None:
    """Why an update may not leave this worked-out graph with this content (None: it may). A report reads a slot's
    tally in place of its trajectories, and a system's optimal policy as the anchor of its regret: one written by
    hand would be read as if worked out. Dropping one whole is allowed (the report then reads the trajectories,
    or measures no regret until `diagkg optimum` runs again)."""
    kind = None if key == DEFAULT or key.startswith("_:") else graphs.kind_of(ox.NamedNode(key))
    if kind not in WORKED_OUT or not delta.after.get(key):
        return None
    what, remedy = WORKED_OUT[kind]
    return f"<{key}> is {what}; an update may not write it: {remedy}"


def settle(raw: ox.Store, delta: Delta, before: Snapshot, validator: "Validator | None" = None) -> Settled:
    """Check and complete what ``delta`` (an update's change, already made on the copy ``raw``,
    whose state before it is ``before``) does to system, scenario and file graphs."""
    out = Settled()
    for key in delta.graphs():
        why = protected(key) or _tally_written(key, delta)
        if why is not None:
            raise UpdateRefused(f"nothing was written: {why}")
    _settle_trajectories(raw, delta, before, out)
    revised = [k for k in delta.graphs()
               if k != DEFAULT and graphs.kind_of(ox.NamedNode(k)) in REVISED_KINDS]
    if not revised:
        return out
    store = KnowledgeStore.over(raw)
    docs: dict[str, RdfDocument] = {}
    bodies: dict[str, list[ox.Triple]] = {}
    origins: dict[str, str | None] = {}
    versions: dict[str, str] = {}
    gone: dict[str, frozenset[tuple[str, str]]] = {}
    for key in revised:
        node = ox.NamedNode(key)
        old_body, origin, version = _split(node, before.contents.get(key, frozenset()))
        new_body, _, _ = _split(node, delta.after.get(key, frozenset()))
        origins[key], versions[key] = origin, version
        old_claims = claims_of(_document(key, old_body)) if old_body else frozenset()
        if not new_body:
            gone[key] = old_claims
            continue
        name = f"<{key}> as the update leaves it" + (f" (loaded from {shown(origin)})" if origin else "")
        doc = _document(name, new_body)
        new_claims = claims_of(doc)
        kind = graphs.kind_of(node)
        if old_body and kind != "file":
            was = {c for c in old_claims if c[0] in IDENTITY}
            now = {c for c in new_claims if c[0] in IDENTITY}
            if was != now:
                changes = [f"no longer {k} {v}" for k, v in sorted(was - now)] + [f"now {k} {v}" for k, v in sorted(now - was)]
                raise UpdateRefused(f"nothing was written: the update changes what <{key}> defines ("
                                    + "; ".join(changes) + "); a graph keeps the systems and scenarios it was loaded "
                                    "with: remove it (diagkg remove) and load the new description")
        elif not old_body and kind != "file" and graph_for(doc) != node:
            raise UpdateRefused(f"nothing was written: what the update writes into <{key}> belongs in "
                                f"<{graph_for(doc).value}> (a system's key, a scenario's identifier name its graph)")
        docs[key], bodies[key] = doc, new_body

    _check_claims(store, docs, revised, out)
    _check_removals(store, gone, revised, out)
    _validate(raw, store, docs, revised, validator, out)

    for key, doc in docs.items():
        node = ox.NamedNode(key)
        version = content_version(bodies[key])
        origin = origins[key]
        provenance = [ox.Triple(node, LOADED_FROM, ox.Literal(origin))] if origin else []
        out.replace[key] = [*bodies[key], *provenance, ox.Triple(node, CONTENT_HASH, ox.Literal(version))]
        out.revisions.append(Revision(key, versions[key], version))
        for system_key in sorted(v for k, v in claims_of(doc) if k == "system key"):
            digest = inference_digest(version)
            triples = inferred_triples(doc.graph, digest)
            out.replace[graphs.inferred(system_key).value] = inferred_graph(system_key, triples, digest)
            out.inferred[system_key] = len(triples)
    for key, claims in gone.items():
        out.drop.add(key)
        out.revisions.append(Revision(key, versions[key], ""))
        for system_key in sorted(v for k, v in claims if k == "system key"):
            inferred = graphs.inferred(system_key).value
            if raw.contains_named_graph(ox.NamedNode(inferred)):
                out.drop.add(inferred)
    return out


def _settle_trajectories(raw: ox.Store, delta: Delta, before: Snapshot, out: Settled) -> None:
    """Changed trajectory graphs are validated against their shapes (all of them, every violation
    listed), and the tallies of the campaign slots they were or are in are dropped in the same write
    (:mod:`diagkg.kg.trajectory_shapes`)."""
    from . import trajectory_shapes

    changed = [k for k in delta.graphs() if k != DEFAULT and graphs.kind_of(ox.NamedNode(k)) == "trajectory"]
    found: list[Violation] = []
    for key in changed:
        after = sorted(delta.after.get(key, frozenset()), key=str)
        if after:
            found += trajectory_shapes.violations(after, f"<{key}> as the update leaves it")
    if found:
        raise ValidationError(found)
    stale: set[str] = set()
    for key in changed:
        stale |= trajectory_shapes.stale_tallies(raw, before.contents.get(key, frozenset()),
                                                 delta.after.get(key, frozenset()))
    stale -= set(changed)
    out.drop |= stale
    out.read |= stale         # as they were: a campaign writing one of these slots meanwhile makes the update again
    out.stale = sorted(stale)


def _check_claims(store: KnowledgeStore, docs: dict[str, RdfDocument], revised: list[str], out: Settled) -> None:
    """What the changed graphs claim must not be claimed by another graph."""
    others = [h for h in held_claims(store.select("graph-claims")) if h.graph not in revised]
    out.claims = frozenset(others)
    by_claim: dict[tuple[str, str], list[Held]] = {}
    for h in others:
        by_claim.setdefault((h.kind, h.value), []).append(h)
    problems = []
    for key, doc in docs.items():
        for claim in sorted(claims_of(doc)):
            for h in by_claim.get(claim, ()):
                source = f" (from {shown(h.origin)})" if h.origin else ""
                problems.append(f"<{key}> would define the {claim[0]} {claim[1]}, which <{h.graph}>{source} defines")
    if problems:
        raise UpdateRefused("nothing was written:\n  " + "\n  ".join(problems))


def _check_removals(store: KnowledgeStore, gone: dict[str, frozenset[tuple[str, str]]], revised: list[str],
                    out: Settled) -> None:
    """A system left empty cannot go while stored scenarios run on it."""
    for key, claims in gone.items():
        for kind, iri in sorted(claims):
            if kind != "system":
                continue
            left = [r["graph"] for r in store.select("scenarios-on-system", {"system": ox.NamedNode(iri)})
                    if r["graph"] not in gone]
            out.read.update(left)
            if left:
                raise UpdateRefused(f"nothing was written: the update leaves <{key}> empty, but {len(left)} stored "
                                    f"scenario(s) run on its system (e.g. <{left[0]}>); remove them in the same "
                                    "update, or keep the system")


def _validate(raw: ox.Store, store: KnowledgeStore, docs: dict[str, RdfDocument], revised: list[str],
              validator: "Validator | None", out: Settled) -> None:
    """The changed graphs in context, and the stored scenarios on a changed system."""
    from .validation import Validator

    if not docs:
        return
    validator = validator or Validator()

    def resolve(iri: str) -> "rdflib.Graph | None":
        for q in raw.quads_for_pattern(ox.NamedNode(iri), RDF_TYPE, ox.NamedNode(str(DK.System)), None):
            if isinstance(q.graph_name, ox.NamedNode):
                if q.graph_name.value not in revised:
                    out.read.add(q.graph_name.value)
                return store.graph_as_rdflib(q.graph_name)
        return None

    results = validator.validate_documents(list(docs.values()), resolve=resolve)
    violations: list[Violation] = [v for d in docs.values() for v in results[d.name]]
    if violations:
        raise ValidationError(violations)
    systems = {key: doc for key, doc in docs.items() if any(k == "system" for k, _ in claims_of(doc))}
    dependents: list[RdfDocument] = []
    for doc in systems.values():
        for iri in sorted(v for k, v in claims_of(doc) if k == "system"):
            for r in store.select("scenarios-on-system", {"system": ox.NamedNode(iri)}):
                if r["graph"] in revised or r["graph"] in out.revalidated:
                    continue
                node = ox.NamedNode(r["graph"])
                body, origin, _ = _split(node, (q.triple for q in raw.quads_for_pattern(None, None, None, node)))
                dependents.append(_document(shown(origin) if origin else r["graph"], body))
                out.revalidated.append(r["graph"])
                out.read.add(r["graph"])
    if not dependents:
        return
    results = validator.validate_documents(dependents, context=[d.graph for d in systems.values()])
    violations = [v for d in dependents for v in results[d.name]]
    if violations:
        raise ValidationError(violations)
