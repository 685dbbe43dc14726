"""The reasoner is given the part of the ontology that can entail something about a description
(:func:`diagkg.kg.ontology_module.relevant`): it must entail exactly what the whole ontology does, on
the shipped systems and on systems written here, one of them with OWL axioms of its own (a class
under ``dk:Bulb``, a property under the transitive ``dk:dependsOn``) and ports stated only from the
port's side (``dk:portOf``: the ontology's inverse axiom is about ``dk:hasPort``). A description with
an axiom of its own that may not hold where its own terms are empty (a chain of its own, a nominal on
an ontology class, an axiom about an ontology term) can reach the ontology's individuals it never
names: it is given the whole ontology."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import rdflib
from rdflib.namespace import OWL, RDF, RDFS

from diagkg.errors import ReasonerError
from diagkg.kg import ontology_module, reasoning
from diagkg.kg.validation import default_ontology

from ..support.rear import rear_text
from ..support.torch import TORCH

ROOT = Path(__file__).resolve().parents[2]
DK = rdflib.Namespace("https://w3id.org/diagkg/ontology#")
EX = rdflib.Namespace("https://example.org/beacon/")

BEACON = """\
@prefix :     <https://example.org/beacon/> .
@prefix dk:   <https://w3id.org/diagkg/ontology#> .
@prefix owl:  <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

:Beacon rdfs:subClassOf dk:Bulb .
:powers a owl:ObjectProperty ; rdfs:subPropertyOf dk:dependsOn .
:troubledBy a owl:ObjectProperty ; owl:propertyChainAxiom ( dk:hasFunction dk:defines ) .
:beacon a dk:System ; dk:systemKey "beacon" .
:lamp a :Beacon ; dk:partOf :beacon ; dk:hasFunction :shine ; :troubledBy :stuck .
:lamp.p dk:portOf :lamp . :lamp.n dk:portOf :lamp .
:shine a dk:Function ; :powers :feed ; dk:defines :dark .
:feed dk:dependsOn :cell .
:cell a dk:Function .
:dark a dk:Problem .
"""


OWN = rdflib.Namespace("https://example.org/own#")
PRE = """\
@prefix :     <https://example.org/own#> .
@prefix dk:   <https://w3id.org/diagkg/ontology#> .
@prefix owl:  <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
"""


def graph(text: str) -> rdflib.Graph:
    return rdflib.Graph().parse(data=text, format="turtle")


def whole(monkeypatch) -> None:
    """Reason with the whole ontology from now on, as before the module."""
    monkeypatch.setattr(reasoning, "relevant", lambda data, ontology: ontology)


# without its chain, the description's axioms hold where its own terms are empty: it is given the module
OWN_LOCAL_BEACON = BEACON.replace(":troubledBy a owl:ObjectProperty ; owl:propertyChainAxiom ( dk:hasFunction dk:defines ) .\n",
                                  "").replace(" ; :troubledBy :stuck", "")

# a description stating something of an ontology term: the reasoner passes on the ontology's IRI-valued
# annotation of it as a fact about the description's subject
NOTED = """\
@prefix dk:   <https://w3id.org/diagkg/ontology#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
dk:Bulb rdfs:comment "A lamp of ours." .
"""


def beacon_entailed(beacon: rdflib.Graph) -> None:
    """What the beacon's description (its own axioms, and the ontology's) entails about it."""
    assert (EX.lamp, RDF.type, DK.Bulb) in beacon                      # the user's class under dk:Bulb
    assert (EX.shine, DK.dependsOn, EX.cell) in beacon                 # their property under a transitive one
    assert (EX.lamp, DK.hasPort, EX["lamp.p"]) in beacon              # the inverse axiom about dk:hasPort
    assert (EX.lamp, DK.failsVia, EX.dark) in beacon                   # the ontology's chain


@pytest.mark.skipif(shutil.which("java") is None, reason="HermiT needs a Java runtime")
def test_hermit_entails_the_same_with_the_module_as_with_the_whole_ontology(monkeypatch):
    datas = [graph(TORCH), graph(rear_text()), graph(NOTED), graph(OWN_LOCAL_BEACON),
             *(rdflib.Graph().parse(f) for f in sorted((ROOT / "scenarios/systems").glob("*.ttl")))]
    assert all(len(reasoning.relevant(d, default_ontology())) < len(default_ontology()) for d in datas)
    with_module = reasoning.reason_together(datas, engine="hermit")
    whole(monkeypatch)
    with_whole = reasoning.reason_together(datas, engine="hermit")
    for data, mine, theirs in zip(datas, with_module, with_whole, strict=True):
        assert len(mine) > 0 and set(mine) == set(theirs), next(data.subjects(), None)
    assert (DK.Bulb, DK.readsParameter, DK.isIndicator) in with_module[2]
    beacon_entailed(with_module[3])


@pytest.mark.skipif(shutil.which("java") is None, reason="HermiT needs a Java runtime")
def test_hermit_entails_what_the_whole_ontology_does_for_axioms_of_the_description_s_own():
    # the ontology is given whole to these (a chain of its own, which its terms being empty would not
    # satisfy; a nominal on an ontology class): the ontology's verdicts, which the description never
    # names, are all :me
    datas = [graph(BEACON), graph(PRE + ":me a dk:Module . dk:Verdict rdfs:subClassOf [ owl:oneOf ( :me ) ] .")]
    assert all(reasoning.relevant(d, default_ontology()) is default_ontology() for d in datas)
    with_module = reasoning.reason_together(datas, engine="hermit")
    assert (OWN.me, RDF.type, DK.Verdict) in with_module[1]
    beacon_entailed(with_module[0])


def test_owl_rl_reads_an_ontology_class_equal_to_an_individual_as_one_resource():
    # so the ontology's affordances are :me's instances, :x is a value of :seenBy (under dk:hasEffect) of
    # each, and its cause by the inverse: the module lacks the affordances the description never names
    data = graph(PRE + """:me owl:sameAs dk:Affordance ; rdfs:label "me" . :x a dk:Problem .
:me rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :seenBy ; owl:hasValue :x ] . :seenBy rdfs:subPropertyOf dk:hasEffect .""")
    assert (OWN.x, DK.hasCause, DK.Observable) in reasoning.reason(data, engine="owlrl")


@pytest.mark.skipif(shutil.which("java") is None, reason="HermiT needs a Java runtime")
def test_a_system_inconsistent_through_an_axiom_it_does_not_name_is_still_refused():
    # neither class named: :x is a function by dk:hasSubFunction's domain and a problem by dk:defines's range,
    # and the axiom that the two are disjoint is about dk:Function, which the module reaches only through them
    broken = graph("@prefix : <https://example.org/x#> . @prefix dk: <https://w3id.org/diagkg/ontology#> .\n"
                   ":x dk:hasSubFunction :y . :z dk:defines :x .")
    with pytest.raises(ReasonerError, match="inconsistent"):
        reasoning.reason(broken, engine="hermit")
    # no verdict can be, and the ontology has verdicts the description never names
    with pytest.raises(ReasonerError, match="inconsistent"):
        reasoning.reason(graph(PRE + ":me a dk:Module . dk:Verdict rdfs:subClassOf owl:Nothing ."), engine="hermit")


def test_the_module_leaves_out_what_the_description_cannot_reach():
    ontology = default_ontology()
    module = ontology_module.relevant(graph(TORCH), ontology)
    assert 0 < len(module) < len(ontology) / 2
    assert not set(module.triples((None, RDFS.label, None)))                         # annotations entail nothing
    # the torch has no functions and no problems: what relates them is left out
    assert (DK.hasCause, OWL.inverseOf, DK.hasEffect) not in module
    assert not set(module.triples((DK.failsVia, OWL.propertyChainAxiom, None)))
    assert (DK.monitors, RDFS.subPropertyOf, DK.dependsOn) not in module
    assert (DK.hasPort, OWL.inverseOf, DK.portOf) in module
    assert (DK.partOf, RDFS.subPropertyOf, DK.within) in module and (DK.within, RDF.type, OWL.TransitiveProperty) in module


def test_a_reached_class_brings_its_equivalence_and_a_key_brings_the_whole_ontology():
    ontology = graph("""\
@prefix : <https://example.org/o#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
:Lit owl:equivalentClass [ a owl:Restriction ; owl:onProperty :glows ; owl:someValuesFrom :Light ] .
:Light rdfs:subClassOf :Energy .
:Heat rdfs:subClassOf :Energy .
:glows a owl:ObjectProperty ; rdfs:label "glows" .
""")
    data = graph("@prefix : <https://example.org/o#> . :bulb :glows :ray . :ray a :Light .")
    module = ontology_module.relevant(data, ontology)
    o = rdflib.Namespace("https://example.org/o#")
    assert (o.Lit, OWL.equivalentClass, None) in module and (None, OWL.someValuesFrom, o.Light) in module
    assert (o.Light, RDFS.subClassOf, o.Energy) in module
    assert (o.Heat, RDFS.subClassOf, o.Energy) not in module        # a class the description never reaches
    assert (o.glows, RDFS.label, None) not in module
    ontology.add((o.Lit, OWL.hasKey, rdflib.BNode()))
    assert len(ontology_module.relevant(data, ontology)) == len(ontology)


@pytest.mark.skipif(shutil.which("java") is None, reason="HermiT needs a Java runtime")
def test_an_unexpected_failure_of_owlready2_falls_back_to_owlrl_or_says_what_failed(monkeypatch):
    """Anything owlready2 raises besides its inconsistency and Java errors (it raised an AttributeError reading
    HermiT's answer about a user's undeclared property) came out as a traceback, and ``auto`` did not fall back."""
    import owlready2

    from diagkg.errors import ReasonerUnavailable

    def stumbles(*args, **kwargs):
        raise AttributeError("'dependsOn' object has no attribute 'equivalent_to'")

    monkeypatch.setattr(owlready2, "sync_reasoner_hermit", stumbles)
    data = graph(TORCH)
    assert set(reasoning.reason(data)) == set(reasoning.reason(data, engine="owlrl"))       # auto: OWL-RL instead
    with pytest.raises(ReasonerUnavailable, match="AttributeError: 'dependsOn'"):
        reasoning.reason(data, engine="hermit")


def test_blank_nodes_come_whole_however_they_are_shared():
    text = PRE + """<https://example.org/own> a owl:Ontology .
[] a owl:AllDisjointClasses ; owl:members ( :A :B :C :D ) .
:E rdfs:subClassOf _:r . :F rdfs:subClassOf _:r . _:r a owl:Restriction ; owl:onProperty :p ; owl:someValuesFrom :Q .
"""
    data = graph(PRE + ":x a :D, :F .")
    for _ in range(30):     # blank node labels are new on each parse, and sets of them come in any order
        module = ontology_module.relevant(data, graph(text))
        assert len(set(module.triples((None, RDF.first, None)))) == 4     # all four disjoint classes
        assert (None, OWL.someValuesFrom, OWN.Q) in module                # the restriction both classes share


def test_an_axiom_that_may_not_hold_where_its_terms_are_empty_brings_the_whole_ontology():
    text = PRE + "<https://example.org/own> a owl:Ontology . :D rdfs:subClassOf :E .\n"
    data = graph(PRE + ":x a :D .")
    for axiom in (":A owl:equivalentClass [ owl:complementOf :B ] .", "owl:Thing rdfs:subClassOf :A .",
                  ":A owl:equivalentClass [ owl:oneOf ( :a ) ] .", ":p a owl:ReflexiveProperty ."):
        ontology = graph(text + axiom)
        assert ontology_module.relevant(data, ontology) is ontology, axiom
    # the description's own axioms: those that hold where its own terms are empty keep the module
    ontology = default_ontology()
    for axiom in (":Lamp rdfs:subClassOf dk:Bulb ; owl:disjointWith :Fan .", ":on rdfs:subPropertyOf dk:dependsOn .",
                  ":on a owl:TransitiveProperty ; rdfs:range [ owl:oneOf ( :x ) ] .", ":x owl:sameAs dk:Observable .",
                  ":x a [ owl:unionOf ( dk:Bulb dk:LED ) ] ."):
        assert ontology_module.relevant(graph(PRE + axiom), ontology) is not ontology, axiom
    for axiom in (":Lamp owl:equivalentClass dk:Bulb .", "dk:Bulb rdfs:subClassOf :Lamp .", ":on owl:inverseOf dk:dependsOn .",
                  "owl:Thing rdfs:subClassOf [ owl:onProperty :on ; owl:hasValue :x ] .", ":on a owl:ReflexiveProperty .",
                  "dk:affords a owl:FunctionalProperty .", ":x owl:sameAs dk:Bulb .",
                  "[] a owl:AllDisjointClasses ; owl:members ( :A dk:Bulb ) ."):
        assert ontology_module.relevant(graph(PRE + axiom), ontology) is ontology, axiom


@pytest.mark.parametrize("engine", ["hermit", "owlrl"])
def test_an_activity_that_is_also_an_entity_is_refused(engine):
    """PROV-O declares activities and entities disjoint; the ontology's extract of it said nothing, so a
    description that made a scenario (an entity) a session (an activity) was reasoned over as consistent."""
    with pytest.raises(ReasonerError, match="inconsistent"):
        reasoning.reason(graph(PRE + ":s a dk:Scenario, dk:DiagnosticSession ."), engine=engine)


def test_the_owl_rl_rules_refuse_what_contradicts_the_ontology():
    """owlrl writes a contradiction into the closure as a node of its own and goes on: a function that is a
    problem (disjoint classes, through a domain and a range) was reasoned over as consistent by OWL-RL alone."""
    broken = graph(PRE + ":x dk:hasSubFunction :y . :z dk:defines :x .")
    with pytest.raises(ReasonerError, match="inconsistent"):
        reasoning.reason(broken, engine="owlrl")
    with pytest.raises(ReasonerError, match="inconsistent"):     # with another description, each then alone
        reasoning.reason_together([broken, graph(PRE + ":a a dk:Function .")], engine="owlrl")
