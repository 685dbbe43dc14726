"""A system none of whose lamps lights as set up: a warning lamp, dark while all is well.

A repair by an action judged such a system working when no lamp lit (``Session.works_again``), but a hypothesis's
repair never did (``main_function_works`` wanted a lamp lit as set up): naming exactly the faulty part was
`partial`, so no diagnosis could end a session in success, and the model-based assistant ran out of rounds on a
short a stranger's circuit made (tests/agents/test_model_based_world_prices.py). Here on a warning lamp written in
the test: a bulb behind a diode turned against the supply, which a shorted diode lights."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

SYSTEM = """\
@prefix :        <https://example.org/warning/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:warning a dk:System ; dk:systemKey "warning" ; dcterms:identifier "warning" ; rdfs:label "Warning lamp" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A battery feeds a warning lamp through a diode turned against it: it lights if the diode shorts." .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :warning .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :box ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Measurable, dk:Reachable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Warning lamp" ; dk:partOf :box ; dk:resistance 24 ;
    dk:powerThreshold 0.5 ; dk:affords dk:Observable, dk:Measurable, dk:Reachable, dk:Replaceable ;
    dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:d a dk:Diode ; dcterms:identifier "d" ; rdfs:label "Blocking diode" ; dk:partOf :box ; dk:forwardVoltage 0.7 ;
    dk:affords dk:Observable, dk:Measurable, dk:Reachable, dk:Replaceable ; dk:hasPort :d.anode, :d.cathode .
:d.anode a dk:Port ; dk:portName "anode" .
:d.cathode a dk:Port ; dk:portName "cathode" .
:bat.pos dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :d.cathode .
:d.anode dk:connectedTo :bat.neg .
"""

SCENARIO = """\
@prefix :        <https://example.org/warning-scenarios/> .
@prefix sys:     <https://example.org/warning/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:WARN.1 a dk:Scenario ; dk:scenarioNumber 9601 ; dcterms:identifier "WARN.1" ; rdfs:label "Diode shorted" ;
    dk:onSystem sys:warning ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:ShortedComponent ; dk:faultTarget sys:d ] ;
    dk:initialObservations "The warning lamp is lit." ;
    dk:faultyComponent sys:d ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:d ] ] ;
    dk:actionBudget 6 .
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeStore:
    folder = tmp_path_factory.mktemp("warning")
    (folder / "warning.ttl").write_text(SYSTEM)
    (folder / "warn1.ttl").write_text(SCENARIO)
    s = KnowledgeStore.memory()
    load_files(s, [folder / "warning.ttl", folder / "warn1.ttl"])
    return s


def test_naming_the_faulty_part_of_a_warning_lamp_is_a_diagnosis(store):
    with diagkg.make("WARN.1", store=store) as session:
        obs, _ = session.reset(seed=0)
        assert obs["lights"]["lamp"] == "on"           # lit, where the system as set up keeps it dark
        outcome, _, terminated, _, info = session.step(diagkg.Hypothesis({"lamp"}))
        assert outcome["verdict"] == "wrong" and not terminated
        outcome, _, terminated, _, info = session.step(diagkg.Hypothesis({"d"}))
        assert outcome["verdict"] == "correct" and terminated and info["end"] == "success"


def test_a_repair_by_an_action_ends_it_as_before(store):
    with diagkg.make("WARN.1", store=store) as session:
        session.reset(seed=0)
        _, _, terminated, _, info = session.step(diagkg.Action("replace_component", ("d",)))
        assert terminated and info["end"] == "success_no_hypothesis"
