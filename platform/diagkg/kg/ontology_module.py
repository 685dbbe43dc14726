"""The part of the ontology that can entail something about a description: what the reasoner is given.

HermiT spends most of its run on the whole ontology (3,300 triples: labels and comments, the
action catalogue, the evaluation and LLM vocabularies) when a system description uses a small part
of it. :func:`relevant` keeps the axioms reachable from the description's own terms, a syntactic
module in the spirit of ⊥-locality (Cuenca Grau et al., *Modular reuse of ontologies*, JAIR 2008),
read off the RDF:

* an axiom about a term (its declaration and characteristics, ``rdfs:subClassOf``,
  ``rdfs:subPropertyOf``, ``rdfs:domain``, ``rdfs:range``, an individual's class) is kept when the
  term is in the signature: about a class, property or individual the description never reaches
  it says nothing the description can use (the term may be read as empty);
* any other axiom (equivalences, inverses, chains, disjointness, equalities, a blank-node axiom
  such as ``owl:AllDisjointClasses``) is kept when it mentions a term of the signature, and an
  individual's property value when its subject or value is in it;
* annotations (labels, comments, any ``owl:AnnotationProperty``) are left out: they entail nothing;
  one of a property of its own whose value is an IRI (``dk:Bulb dk:readsParameter dk:isIndicator``)
  is kept with its subject, as the reasoner passes it on as a fact about a description that states
  something about that subject;
* every kept axiom's terms join the signature, until nothing more is kept.

The signature starts with every IRI of the description (built-in RDF, RDFS, OWL and XSD terms
aside). An individual the module leaves out (its class and property values) is unconnected to the
description: a model of the whole is one of the module and the description beside one of the
ontology. That holds while the description's own axioms hold where its own terms (those the
ontology lacks) are empty, so the ontology is given whole to a description with any other axiom of
its own (one about an ontology term, ``owl:equivalentClass``, a chain, a GCI, a nominal: ``dk:Verdict
rdfs:subClassOf [ owl:oneOf ( :me ) ]`` makes ``:me`` a verdict through the ontology's verdicts),
and so is an ontology with an axiom that is not ⊥-local (a key, which can equate an individual of
the description with any other; a nominal; ``owl:complementOf``, ``owl:allValuesFrom``, an upper
bound on a cardinality, a reflexive property, ``owl:Thing`` or a top property on the left).
``tests/kg/test_ontology_module.py`` checks that the reasoner entails the same with the module as
with the whole ontology, on the shipped systems and on systems written in the test.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import rdflib
from rdflib.namespace import OWL, RDF, RDFS, XSD

Triple = tuple[rdflib.term.Node, rdflib.term.Node, rdflib.term.Node]

_BUILT_IN = (str(RDF), str(RDFS), str(OWL), str(XSD))
_ANNOTATIONS = frozenset({RDFS.label, RDFS.comment, RDFS.seeAlso, RDFS.isDefinedBy, OWL.versionInfo, OWL.deprecated,
                          OWL.priorVersion, OWL.backwardCompatibleWith, OWL.incompatibleWith})
# axioms about their subject: they say nothing the description can use unless it reaches the subject
_ABOUT_SUBJECT = frozenset({RDF.type, RDFS.subClassOf, RDFS.subPropertyOf, RDFS.domain, RDFS.range})
_DECLARATIONS = frozenset({OWL.Class, RDFS.Class, OWL.ObjectProperty, OWL.DatatypeProperty, OWL.AnnotationProperty,
                           RDF.Property, OWL.NamedIndividual, OWL.Thing, OWL.Ontology, RDFS.Datatype})
_SCHEMA = _DECLARATIONS - {OWL.NamedIndividual, OWL.Thing, OWL.Ontology}
# what a description's own property may be said to be and still hold where it is empty
_LOCAL_CHARACTERISTICS = frozenset({OWL.FunctionalProperty, OWL.InverseFunctionalProperty, OWL.TransitiveProperty,
                                    OWL.SymmetricProperty, OWL.AsymmetricProperty, OWL.IrreflexiveProperty})
# assertions about individuals (the blank nodes of an owl:AllDifferent, a negative property assertion)
_ASSERTIONS = frozenset({OWL.sameAs, OWL.differentFrom, OWL.distinctMembers, OWL.members, OWL.sourceIndividual,
                         OWL.assertionProperty, OWL.targetIndividual, OWL.targetValue, RDF.first, RDF.rest})
# types that make no axiom: declarations, the blank nodes of assertions, a class expression, a list
_TYPES_LOCAL = _DECLARATIONS | {OWL.AllDifferent, OWL.NegativePropertyAssertion, OWL.Restriction, RDF.List}
# triples that make an axiom of a blank node (a GCI …)
_AXIOM_PREDICATES = frozenset({RDFS.subClassOf, RDFS.subPropertyOf, RDFS.domain, RDFS.range, OWL.equivalentClass,
                               OWL.equivalentProperty, OWL.disjointWith, OWL.propertyDisjointWith, OWL.disjointUnionOf,
                               OWL.propertyChainAxiom, OWL.hasKey, OWL.imports})
# an ontology stating any of these is given whole: not ⊥-local (what holds where its terms are empty)
_NOT_LOCAL = frozenset({OWL.hasKey, OWL.oneOf, OWL.hasValue, OWL.complementOf, OWL.allValuesFrom, OWL.maxCardinality,
                        OWL.maxQualifiedCardinality, OWL.cardinality, OWL.qualifiedCardinality,
                        OWL.topObjectProperty, OWL.topDataProperty})
# axioms about a term of the description's own that hold where it is empty
_OWN_LOCAL = frozenset({RDFS.subClassOf, RDFS.subPropertyOf, RDFS.domain, RDFS.range, OWL.disjointWith,
                        OWL.propertyDisjointWith})
_TOP = frozenset({OWL.Thing, RDFS.Resource})
_TOP_HARMLESS = frozenset({RDF.type, RDFS.subClassOf, RDFS.domain, RDFS.range, OWL.someValuesFrom, OWL.onClass})


def _term(node: rdflib.term.Node) -> bool:
    return isinstance(node, rdflib.URIRef) and not str(node).startswith(_BUILT_IN)


@dataclass(frozen=True)
class _Axiom:
    triples: tuple[Triple, ...]
    terms: frozenset[rdflib.URIRef]     # every term it mentions: they join the signature when it is kept


@dataclass
class _Index:
    size: int
    header: list[Triple]                                   # the ontology's own declaration, always kept
    about: dict[rdflib.URIRef, list[_Axiom]]              # kept when the term is in the signature
    mentioning: dict[rdflib.URIRef, list[_Axiom]]         # kept when any of the terms it is filed under is
    whole: bool                                            # an axiom not ⊥-local: the ontology is given whole
    terms: frozenset[rdflib.term.Node]                     # every term of the ontology
    vocabulary: frozenset[rdflib.term.Node]                # its classes and properties


def _closure(graph: rdflib.Graph, node: rdflib.term.Node, reached: set[rdflib.BNode]) -> Iterator[Triple]:
    """The triples of the blank nodes reachable from ``node`` (a class expression, a list), each of them
    added to ``reached`` (a blank node two axioms share is in both)."""
    stack = [node] if isinstance(node, rdflib.BNode) else []
    seen: set[rdflib.BNode] = set()
    while stack:
        b = stack.pop()
        if b in seen:
            continue
        seen.add(b)
        reached.add(b)
        for s, p, o in graph.triples((b, None, None)):
            yield s, p, o
            if isinstance(o, rdflib.BNode):
                stack.append(o)


def _not_local(ontology: rdflib.Graph) -> bool:
    """Whether ``ontology`` states something that may not hold where the terms it is about are empty."""
    for s, p, o in ontology:
        if p in _NOT_LOCAL or o in _NOT_LOCAL or o == OWL.ReflexiveProperty:
            return True
        if p in (OWL.minCardinality, OWL.minQualifiedCardinality) and str(o) == "0":
            return True
        if isinstance(s, rdflib.URIRef) and not _term(s) and not (p == RDF.type and o in _DECLARATIONS):
            return True      # owl:Thing rdfs:subClassOf …, a built-in property's axiom
        if o in _TOP and p not in _TOP_HARMLESS:
            return True      # owl:Thing in a union, an equivalence
    return False


def _index(ontology: rdflib.Graph) -> _Index:
    properties = set(ontology.subjects(RDF.type, OWL.ObjectProperty)) | set(ontology.subjects(RDF.type, OWL.DatatypeProperty))
    annotations = (set(_ANNOTATIONS) | set(ontology.subjects(RDF.type, OWL.AnnotationProperty))) - properties
    header = [t for t in ontology.triples((None, RDF.type, OWL.Ontology))]
    ontologies = {s for s, _, _ in header}
    about: dict[rdflib.URIRef, list[_Axiom]] = defaultdict(list)
    mentioning: dict[rdflib.URIRef, list[_Axiom]] = defaultdict(list)
    reached: set[rdflib.BNode] = set()

    def axiom(triples: Iterable[Triple]) -> _Axiom:
        ts = tuple(triples)
        return _Axiom(ts, frozenset(n for t in ts for n in t if _term(n)))   # type: ignore[misc]

    for s, p, o in ontology:
        if not isinstance(s, rdflib.URIRef) or s in ontologies:
            continue
        if p in annotations:    # an IRI value of its own property is passed on as a fact about the subject
            if _term(p) and _term(o):
                about[s].append(axiom([(s, p, o)]))
            continue
        ax = axiom([(s, p, o), *_closure(ontology, o, reached)])
        if p in _ABOUT_SUBJECT:
            about[s].append(ax)
        elif _term(p):          # an individual's property value: its subject or its value brings it in
            for t in (s, o):
                if _term(t):
                    mentioning[t].append(ax)   # type: ignore[index]
        else:
            for t in ax.terms:
                mentioning[t].append(ax)
    # blank-node axioms no named term's axiom reaches (owl:AllDisjointClasses, an annotated axiom…), each
    # from its root: a blank node no triple names (then any left, in a cycle), not from a list's inner cell
    blanks = {s for s in ontology.subjects() if isinstance(s, rdflib.BNode)} - reached
    named = {o for o in ontology.objects() if isinstance(o, rdflib.BNode)}
    for b in sorted(blanks - named) + sorted(blanks & named):
        if b in reached:
            continue
        ax = axiom(t for t in _closure(ontology, b, reached) if t[1] not in annotations)
        for t in ax.terms:
            mentioning[t].append(ax)
    terms = frozenset(n for t in ontology for n in t if _term(n))
    vocabulary = frozenset(n for s, p, o in ontology if p not in annotations           # a declared or used class or property
                           for n in ((s,) if p == RDF.type and o in _SCHEMA else (p, o) if p == RDF.type
                                     else (p, s, o) if p in _ABOUT_SUBJECT else (p,)) if _term(n))
    return _Index(len(ontology), header, dict(about), dict(mentioning), _not_local(ontology), terms, vocabulary)


def _own_axioms_local(data: rdflib.Graph, index: _Index) -> bool:
    """Whether each axiom of ``data`` is an assertion about individuals, or holds where the description's
    own terms (those the ontology lacks) are empty: a declaration; ``rdfs:subClassOf``,
    ``rdfs:subPropertyOf``, ``rdfs:domain``, ``rdfs:range``, a disjointness or a characteristic (not
    reflexivity) of a term of its own."""
    def own(node: rdflib.term.Node) -> bool:
        return _term(node) and node not in index.terms

    for s, p, o in data:
        if p == OWL.sameAs and (s in index.vocabulary or o in index.vocabulary):
            return False        # OWL-RL puts the one for the other everywhere: the ontology's instances of a class too
        if p in _ANNOTATIONS or p in _ASSERTIONS or _term(p):
            continue            # an annotation, a property value, an equality, an owl:AllDifferent's members
        if p == RDF.type:
            if _term(o) or isinstance(o, rdflib.BNode) or o in _TYPES_LOCAL or (o in _LOCAL_CHARACTERISTICS and own(s)):
                continue
        elif p in _OWN_LOCAL and own(s):
            continue
        elif isinstance(s, rdflib.BNode) and p not in _AXIOM_PREDICATES:
            continue            # a class expression's part: the axiom it is in is judged by its own triple
        return False
    return True


_INDEXES: dict[int, tuple[rdflib.Graph, _Index]] = {}


def _indexed(ontology: rdflib.Graph) -> _Index:
    held = _INDEXES.get(id(ontology))
    if held is not None and held[0] is ontology and held[1].size == len(ontology):
        return held[1]
    index = _index(ontology)
    if len(_INDEXES) > 8:
        _INDEXES.clear()
    _INDEXES[id(ontology)] = (ontology, index)
    return index


def relevant(data: rdflib.Graph, ontology: rdflib.Graph) -> rdflib.Graph:
    """The axioms of ``ontology`` that can entail something about ``data`` (see the module's text)."""
    index = _indexed(ontology)
    if index.whole or not _own_axioms_local(data, index):
        return ontology
    signature = {n for t in data for n in t if _term(n)}
    todo = list(signature)
    kept: set[int] = set()
    out = rdflib.Graph()
    for t in index.header:
        out.add(t)
    while todo:
        term = todo.pop()
        for ax in (*index.about.get(term, ()), *index.mentioning.get(term, ())):   # type: ignore[call-overload]
            if id(ax) in kept:
                continue
            kept.add(id(ax))
            for t in ax.triples:
                out.add(t)
            for new in ax.terms - signature:
                signature.add(new)
                todo.append(new)
    return out
