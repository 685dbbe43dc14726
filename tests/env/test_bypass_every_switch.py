"""The bypass guard tries every closed hand switch, and every lamp it controls (a car's rear lights,
written here: a brake switch feeding the brake lamp, a light switch feeding two tail lamps, each
through its own lead). Before, it opened the first closed switch by name only: with the light switch
stuck closed, opening the brake switch put the brake lamp out and the system "worked", so every
assistant succeeded at its first step (a refused one too); and a switch whose lamps went out only in
part when opened passed as well."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env.actions import Action, Hypothesis
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

SYSTEM = """\
@prefix :        <https://example.org/rear/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:rear a dk:System ; dk:systemKey "rear" ; dcterms:identifier "rear" ; rdfs:label "Rear lights" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery feeds the brake lamp through the brake switch, two tail lamps through the light switch." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :rear .

:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
"""
SWITCH = """
:{id} a dk:Switch ; dcterms:identifier "{id}" ; rdfs:label "{label}" ; dk:partOf :body ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :{id}.p, :{id}.n .
:{id}.p a dk:Port ; dk:portName "p" .
:{id}.n a dk:Port ; dk:portName "n" .
"""
LAMP = """
:{id} a dk:Bulb ; dcterms:identifier "{id}" ; rdfs:label "{label}" ; dk:partOf :body ; dk:resistance 28.8 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :{id}.p, :{id}.n .
:{id}.p a dk:Port ; dk:portName "p" .
:{id}.n a dk:Port ; dk:portName "n" .
"""
LEAD = """
:{id} a dk:Cable ; dcterms:identifier "{id}" ; rdfs:label "{label}" ; dk:partOf :body ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :{id}.p, :{id}.n .
:{id}.p a dk:Port ; dk:portName "p" .
:{id}.n a dk:Port ; dk:portName "n" .
"""
WIRING = """
:bat.pos dk:connectedTo :brake_sw.p, :light_sw.p .
:brake_sw.n dk:connectedTo :brake_lamp.p .
:light_sw.n dk:connectedTo :lead_l.p, :lead_r.p .
:lead_l.n dk:connectedTo :tail_l.p .
:lead_r.n dk:connectedTo :tail_r.p .
:bat.neg dk:connectedTo :brake_lamp.n, :tail_l.n, :tail_r.n .
"""
SCENARIO = """\
@prefix :        <https://example.org/rear-scenarios/> .
@prefix sys:     <https://example.org/rear/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:{id} a dk:Scenario ; dk:scenarioNumber {number} ; dcterms:identifier "{id}" ; rdfs:label "{label}" ;
    dk:onSystem sys:rear ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; {fault} ] ;
    dk:initialObservations "Every lamp is lit; the tail lamps stay lit with the light switch off." ;
    dk:faultyComponent sys:{part} ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:{part} ] ] ;
    dk:actionBudget 10 .
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rear")
    system = SYSTEM + SWITCH.format(id="brake_sw", label="Brake switch") + SWITCH.format(id="light_sw", label="Light switch") \
        + "".join(LAMP.format(id=i, label=i.replace("_", " ")) for i in ("brake_lamp", "tail_l", "tail_r")) \
        + "".join(LEAD.format(id=i, label=i.replace("_", " ")) for i in ("lead_l", "lead_r")) + WIRING
    files = [folder / "rear.ttl", folder / "stuck.ttl", folder / "past.ttl"]
    files[0].write_text(system)
    files[1].write_text(SCENARIO.format(id="REAR.1", number=9601, label="Light switch stuck closed", part="light_sw",
                                        fault="dk:faultMode dk:StuckClosed ; dk:faultTarget sys:light_sw"))
    # a short from the battery to the right tail lamp's feed: opening the light switch puts the left one out only
    files[2].write_text(SCENARIO.format(id="REAR.2", number=9602, label="Right tail feed shorted to the battery",
                                        part="lead_r", fault="dk:faultMode dk:ShortBetweenNodes ; "
                                        "dk:faultTarget sys:lead_r.n ; dk:otherTarget sys:bat.pos"))
    store = KnowledgeStore.memory()
    load_files(store, files)
    return store


@pytest.mark.parametrize("scenario", ["REAR.1", "REAR.2"])
def test_a_switch_that_does_not_control_its_lamps_is_no_working_system_whichever_switch_comes_first(store, scenario):
    s = diagkg.make(scenario, store)
    s.reset(seed=0)
    for step in (Action("observe_component", ("tail_l",)), Action("observe_component", ("brake_sw",))):
        _, _, terminated, _, info = s.step(step)
        assert not terminated and info["end"] is None, info
    s.close()


def test_naming_the_stuck_switch_is_a_diagnosis_and_the_working_system_passes_the_guard(store):
    s = diagkg.make("REAR.1", store)
    s.reset(seed=0)
    obs, _, terminated, _, info = s.step(Hypothesis({"light_sw"}))
    assert terminated and obs["verdict"] == "correct" and info["end"] == "success", obs["message"]
    s.close()
