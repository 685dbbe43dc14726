"""OWL reasoning over a system description.

HermiT (through owlready2, needs a Java runtime) is the reasoner; when Java is
absent, or on request, the OWL-RL rules of owlrl stand in. Either way the result
is the set of *new* triples about the data's own resources (class memberships,
transitive part-of and dependency closures, property chains, inverses), meant
for a system's ``inferred/{key}`` named graph, computed once per system.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import rdflib
from rdflib.namespace import OWL, RDF, RDFS

from ..errors import ReasonerError, ReasonerUnavailable
from .ontology_module import relevant
from .validation import default_ontology
from .vocab import DK_NS

log = logging.getLogger(__name__)

ENGINES = ("auto", "hermit", "owlrl")
# how owlrl states an inconsistency in the closure (owlrl.Namespaces.ERRNS)
OWLRL_ERROR = rdflib.URIRef("http://www.daml.org/2002/03/agents/agent-ont#ErrorMessage")
OWLRL_ERROR_TEXT = rdflib.URIRef("http://www.daml.org/2002/03/agents/agent-ont#error")

# HermiT runs for a second or two: the quick compiler alone and one collector thread start it
# 1.25–1.56× sooner (benchmarks/reasoning.py; the same entailments). A user's own
# JDK_JAVA_OPTIONS is left as it is.
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
_JVM_ENV = threading.Lock()


def java_available() -> bool:
    return shutil.which("java") is not None


def reason(data: rdflib.Graph, engine: str = "auto", ontology: rdflib.Graph | None = None) -> rdflib.Graph:
    """Triples entailed by ``data`` plus the ontology and not already asserted.

    Only triples whose subject is a resource of ``data`` are kept, with a dk:
    predicate or an ``rdf:type`` of a dk: class.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown reasoner {engine!r}; choose from {', '.join(ENGINES)}")
    ontology = ontology if ontology is not None else default_ontology()
    return _new_facts(data, ontology, _closure(data, ontology, engine))


def _closure(data: rdflib.Graph, ontology: rdflib.Graph, engine: str) -> rdflib.Graph:
    """The deductive closure of ``data`` and the ontology by ``engine`` (``auto``: HermiT, or OWL-RL
    without a working Java), the reasoner given only the part of the ontology that can entail
    something about ``data`` (:func:`~diagkg.kg.ontology_module.relevant`: HermiT on a shipped system
    takes 1.3–1.9× less time than with the whole ontology)."""
    ontology = relevant(data, ontology)
    if engine == "auto":
        if java_available():
            try:
                return _hermit(data, ontology)
            except ReasonerUnavailable as exc:   # a Java failure: OWL-RL gives the same entailments here
                log.warning("HermiT failed (%s); using the OWL-RL rules instead", exc)
        return _owlrl(data, ontology)
    return _hermit(data, ontology) if engine == "hermit" else _owlrl(data, ontology)


def reason_together(datas: list[rdflib.Graph], engine: str = "auto",
                    ontology: rdflib.Graph | None = None) -> list[rdflib.Graph]:
    """:func:`reason` for each of ``datas``, worked out in one run of the reasoner where that gives the
    same: the descriptions share no resource (their subjects are disjoint, so what follows about one
    cannot depend on another) and together they are consistent. HermiT starts a Java runtime for each
    run, most of its time on a small system. Otherwise (and for an inconsistent description, so that
    the error names it) each is reasoned over on its own."""
    if len(datas) <= 1:
        return [reason(d, engine=engine, ontology=ontology) for d in datas]
    if engine not in ENGINES:
        raise ValueError(f"unknown reasoner {engine!r}; choose from {', '.join(ENGINES)}")
    owners: set[rdflib.term.Node] = set()
    for d in datas:
        own = set(d.subjects())
        if owners & own:
            return [reason(d, engine=engine, ontology=ontology) for d in datas]
        owners |= own
    ontology = ontology if ontology is not None else default_ontology()
    union = rdflib.Graph()
    for d in datas:
        union += d
    try:
        closure = _closure(union, ontology, engine)
    except ReasonerUnavailable:
        raise                 # no reasoner to run: alone it would fail the same way
    except ReasonerError:     # inconsistent: each alone, so that the error names its own description
        return [reason(d, engine=engine, ontology=ontology) for d in datas]
    return [_new_facts(d, ontology, closure) for d in datas]


def _merged(data: rdflib.Graph, ontology: rdflib.Graph) -> rdflib.Graph:
    g = rdflib.Graph()
    g += ontology
    g += data
    return g


def _owlrl(data: rdflib.Graph, ontology: rdflib.Graph) -> rdflib.Graph:
    import owlrl

    g = _merged(data, ontology)
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False, datatype_axioms=False).expand(g)
    # the rules write what contradicts the ontology into the graph, as nodes of their own, and go on: a
    # description HermiT refuses (a scenario that is a session, a function that is a problem) was accepted
    found = sorted(str(m) for node in g.subjects(rdflib.RDF.type, OWLRL_ERROR) for m in g.objects(node, OWLRL_ERROR_TEXT))
    if found:
        raise ReasonerError(f"the OWL-RL rules found the data inconsistent with the ontology: {'; '.join(found[:3])}"
                            + (f" (and {len(found) - 3} more)" if len(found) > 3 else ""))
    return g


def _hermit(data: rdflib.Graph, ontology: rdflib.Graph) -> rdflib.Graph:
    if not java_available():
        raise ReasonerUnavailable("HermiT needs a Java runtime ('java' is not on PATH); use engine='owlrl'")
    import owlready2

    merged = _merged(data, ontology)
    _declare_properties(merged)
    with tempfile.TemporaryDirectory(prefix="diagkg-owl-") as tmp:
        path = Path(tmp) / "input.nt"
        merged.serialize(path, format="nt", encoding="utf-8")
        world = owlready2.World()
        cwd = os.getcwd()
        closure = rdflib.Graph()
        try:
            onto = world.get_ontology(path.as_uri()).load()
            os.chdir(tmp)  # owlready2 writes temporary files in the working directory
            with onto, _jvm_options():
                owlready2.sync_reasoner_hermit(world, infer_property_values=True, debug=0)
            for s, p, o in world.as_rdflib_graph():
                closure.add((s, p, o))
        except owlready2.OwlReadyInconsistentOntologyError as exc:
            raise ReasonerError(f"HermiT found the data inconsistent with the ontology: {exc}") from None
        except owlready2.OwlReadyJavaError as exc:
            raise ReasonerUnavailable(f"HermiT (Java) failed: {str(exc).strip()[:300]}") from None
        except FileNotFoundError as exc:  # java vanished between the check and the call
            raise ReasonerUnavailable(f"cannot start HermiT: {exc}") from None
        except Exception as exc:     # owlready2 stumbling on the description or on HermiT's answer
            raise ReasonerUnavailable(f"HermiT (through owlready2) failed on this description: {type(exc).__name__}: "
                                      f"{str(exc).strip()[:300]}") from None
        finally:
            os.chdir(cwd)
        # HermiT classifies and fills property values but leaves transitive and chained closures
        # implicit, and owlready2 keeps an individual's most specific classes only; materialise those
        # the same way OWL-RL would, by the axioms of the description too (a user's class under
        # dk:Bulb makes its lamps bulbs, components and system parts; their property under
        # dk:dependsOn makes dependencies)
        _close_properties(closure, merged)
        return closure


_PROPERTY_KINDS = (OWL.ObjectProperty, OWL.DatatypeProperty)


def _declare_properties(g: rdflib.Graph) -> None:
    """Declare, as their kin are, the properties a description relates to the ontology's without
    declaring them (``:powers rdfs:subPropertyOf dk:dependsOn``, as the documentation writes it; OWL-RL
    needs no declaration): owlready2 took the undeclared one for a class's kin, and its reading of
    HermiT's answer raised an AttributeError about dk:dependsOn in most runs (as Python's hash seed
    fell). A property under or over an object (datatype) property, or the inverse of an object
    property or with a chain of its own, is one too."""
    def kind(p: rdflib.term.Node) -> rdflib.term.Node | None:
        return next((k for k in _PROPERTY_KINDS if (p, RDF.type, k) in g), None)

    changed = True
    while changed:
        changed = False
        for p, q in [*g.subject_objects(RDFS.subPropertyOf), *g.subject_objects(OWL.inverseOf)]:
            for undeclared, declared in ((p, q), (q, p)):
                known = kind(declared)
                if kind(undeclared) is None and known is not None and isinstance(undeclared, rdflib.URIRef):
                    g.add((undeclared, RDF.type, known))
                    changed = True
        for p in list(g.subjects(OWL.propertyChainAxiom, None)):
            if kind(p) is None and isinstance(p, rdflib.URIRef):
                g.add((p, RDF.type, OWL.ObjectProperty))
                changed = True


@contextlib.contextmanager
def _jvm_options() -> Iterator[None]:
    """:data:`JVM_OPTIONS` for the Java launcher that owlready2 starts (it inherits the environment;
    ``java`` notes the options on its error stream, which owlready2's reading of HermiT's output
    passes over), unless the user has set ``JDK_JAVA_OPTIONS``."""
    with _JVM_ENV:
        if "JDK_JAVA_OPTIONS" in os.environ:
            yield
            return
        os.environ["JDK_JAVA_OPTIONS"] = JVM_OPTIONS
        try:
            yield
        finally:
            os.environ.pop("JDK_JAVA_OPTIONS", None)


def _close_properties(g: rdflib.Graph, ontology: rdflib.Graph) -> None:
    """Fixpoint of sub-property, transitivity, symmetry, inverses and chains."""
    transitive = set(ontology.subjects(RDF.type, OWL.TransitiveProperty))
    symmetric = set(ontology.subjects(RDF.type, OWL.SymmetricProperty))
    sub = list(ontology.subject_objects(RDFS.subPropertyOf))
    superclasses = list(ontology.subject_objects(RDFS.subClassOf))
    inverse = list(ontology.subject_objects(OWL.inverseOf))
    chains = []
    for p, lst in ontology.subject_objects(OWL.propertyChainAxiom):
        chains.append((p, list(rdflib.collection.Collection(ontology, lst))))
    changed = True
    while changed:
        before = len(g)
        for p, q in sub:
            for s, o in list(g.subject_objects(p)):
                g.add((s, q, o))
        for c, d in superclasses:
            for s in list(g.subjects(RDF.type, c)):
                g.add((s, RDF.type, d))
        for p, q in inverse:
            for s, o in list(g.subject_objects(p)):
                g.add((o, q, s))
            for s, o in list(g.subject_objects(q)):
                g.add((o, p, s))
        for p in symmetric:
            for s, o in list(g.subject_objects(p)):
                g.add((o, p, s))
        for p in transitive:
            pairs = list(g.subject_objects(p))
            succ: dict[rdflib.term.Node, set[rdflib.term.Node]] = {}
            for s, o in pairs:
                succ.setdefault(s, set()).add(o)
            for s, o in pairs:
                for o2 in succ.get(o, ()):
                    g.add((s, p, o2))
        for p, (first, second) in ((p, c) for p, c in chains if len(c) == 2):
            for s, m in list(g.subject_objects(first)):
                for o in list(g.objects(m, second)):
                    g.add((s, p, o))
        changed = len(g) != before


def _new_facts(data: rdflib.Graph, ontology: rdflib.Graph, closure: rdflib.Graph) -> rdflib.Graph:
    own = {s for s in data.subjects() if isinstance(s, rdflib.URIRef)}
    out = rdflib.Graph()
    out.bind("dk", DK_NS)
    for s, p, o in closure:
        if s not in own or (s, p, o) in data:
            continue
        if p == RDF.type:
            if isinstance(o, rdflib.URIRef) and str(o).startswith(DK_NS):
                out.add((s, p, o))
        elif str(p).startswith(DK_NS) and isinstance(o, rdflib.URIRef):
            out.add((s, p, o))
    return out
