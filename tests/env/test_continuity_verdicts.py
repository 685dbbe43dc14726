"""What a continuity test says, on a car's brake and tail lights written here (an outsider's finding): the same
0.5 ohm short read "short" across a 5 W tail lamp (0.49 ohm) and "degraded" across a 21 W brake lamp (0.47 ohm, the
lower reading: under 5 % of 28.8 ohm, not of 6.86); and a sound relay at rest read "open", as a broken one does,
so a hypothesis naming it was judged wrong. A contact is now judged against a sound one in the position it
should be in (its lever, or what its coil drives), and any reading of at most 1 ohm that is not the part's own
is a short."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env.actions import Action
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

SYSTEM = """\
@prefix :        <https://example.org/brake/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:brake a dk:System ; dk:systemKey "brake" ; dcterms:identifier "brake" ; rdfs:label "Brake and tail lights" ;
    dk:groundReference :bat.neg ; dcterms:description "The brake switch energises a relay that feeds the brake lamp." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :brake .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:pedal a dk:Switch ; dcterms:identifier "pedal" ; rdfs:label "Brake switch" ; dk:partOf :body ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :pedal.p, :pedal.n .
:pedal.p a dk:Port ; dk:portName "p" .
:pedal.n a dk:Port ; dk:portName "n" .
:coil a dk:Resistor ; dcterms:identifier "coil" ; rdfs:label "Relay coil" ; dk:partOf :body ; dk:resistance 80 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :coil.p, :coil.n .
:coil.p a dk:Port ; dk:portName "p" .
:coil.n a dk:Port ; dk:portName "n" .
:relay a dk:Relay ; dcterms:identifier "relay" ; rdfs:label "Brake relay contact" ; dk:partOf :body ; dk:normallyClosed false ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :relay.p, :relay.n .
:relay.p a dk:Port ; dk:portName "p" .
:relay.n a dk:Port ; dk:portName "n" .
:pull_in a dk:SwitchingCoupling ; rdfs:label "the coil pulls the contact in" ; dk:drives :relay ;
    dk:closedWhen "abs(current('coil')) > 0.05" ; dk:activeByDefault true .
:brake dk:hasCoupling :pull_in .
:stop a dk:Bulb ; dcterms:identifier "stop" ; rdfs:label "Brake lamp" ; dk:partOf :body ; dk:resistance 6.86 ;
    dk:powerThreshold 3 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :stop.p, :stop.n .
:stop.p a dk:Port ; dk:portName "p" .
:stop.n a dk:Port ; dk:portName "n" .
:tail a dk:Bulb ; dcterms:identifier "tail" ; rdfs:label "Tail lamp" ; dk:partOf :body ; dk:resistance 28.8 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :tail.p, :tail.n .
:tail.p a dk:Port ; dk:portName "p" .
:tail.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :pedal.p, :relay.p, :tail.p .
:pedal.n dk:connectedTo :coil.p .
:relay.n dk:connectedTo :stop.p .
:bat.neg dk:connectedTo :coil.n, :stop.n, :tail.n .
"""
SCENARIO = """\
@prefix :        <https://example.org/brake-scenarios/> .
@prefix sys:     <https://example.org/brake/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:{id} a dk:Scenario ; dk:scenarioNumber {number} ; dcterms:identifier "{id}" ; rdfs:label "{id}" ;
    dk:onSystem sys:brake ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:{mode} ; dk:faultTarget sys:{part} ] ;
    dk:initialObservations "A lamp is dark." ; dk:faultyComponent sys:{part} ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:{part} ] ] ;
    dk:actionBudget 10 .
"""
CASES = {"BRK.1": ("ShortedComponent", "stop"), "BRK.2": ("ShortedComponent", "tail"),
         "BRK.3": ("StuckOpen", "pedal"), "BRK.4": ("StuckOpen", "relay")}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("brake")
    (folder / "brake.ttl").write_text(SYSTEM)
    files = [folder / "brake.ttl"]
    for k, (sid, (mode, part)) in enumerate(CASES.items()):
        files.append(folder / f"{sid}.ttl")
        files[-1].write_text(SCENARIO.format(id=sid, number=9701 + k, mode=mode, part=part))
    store = KnowledgeStore.memory()
    load_files(store, files)
    return store


def verdict(store, scenario: str, part: str) -> str:
    with diagkg.make(scenario, store) as s:
        s.reset(seed=0)
        obs = s.step(Action("test_continuity", (part,)))[0]
        assert obs.refusal is None, obs.message
        return str(obs.data[part].verdict)


@pytest.mark.parametrize(("scenario", "part", "said"), [
    ("BRK.1", "stop", "short"), ("BRK.2", "tail", "short"),      # the same 0.5 ohm short across either lamp
    ("BRK.3", "relay", "nominal"),      # at rest (its coil not energised: the pedal stuck open), as it should be
    ("BRK.4", "relay", "open"),         # stuck open while its coil pulls it in
    ("BRK.3", "pedal", "open"),         # a hand switch stuck open, its lever closed
    ("BRK.4", "stop", "nominal"), ("BRK.3", "coil", "nominal")])
def test_a_continuity_verdict_says_what_is_wrong_with_the_part(store, scenario, part, said):
    assert verdict(store, scenario, part) == said
