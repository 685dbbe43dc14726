"""The model-based assistant on a system whose optical coupling nothing blocks (an outsider's greenhouse
controller: a grow lamp that could shine on the daylight sensor driving its own relay, written here). A short from
the relay's coil to the lamp makes the lamp flicker, as the lamp shining on the sensor would; that coupling,
enabled, was a candidate whose part to name was the coupling itself. A hypothesis naming it names nothing of the
system (judged empty), its world agreed, and the assistant named it again every round until its budget ran out
(13 rounds at 0 minutes). A coupling that nothing blocks has no part to name: it is no candidate."""

from __future__ import annotations

import pytest

from diagkg.agents.modelbased import ModelBasedAssistant
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

SYSTEM = """\
@prefix :        <https://example.org/glasshouse/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:glasshouse a dk:System ; dk:systemKey "glasshouse" ; dcterms:identifier "glasshouse" ; rdfs:label "Glasshouse lamp" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A daylight sensor feeds a relay coil; while the coil carries under 20 mA the relay lights a grow lamp." .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :glasshouse .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :box ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:ldr a dk:LightSensor ; dcterms:identifier "ldr" ; rdfs:label "Daylight sensor" ; dk:partOf :box ;
    dk:darkResistance 10000 ; dk:litResistance 200 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :ldr.p, :ldr.n .
:ldr.p a dk:Port ; dk:portName "p" .
:ldr.n a dk:Port ; dk:portName "n" .
:coil a dk:Resistor ; dcterms:identifier "coil" ; rdfs:label "Relay coil" ; dk:partOf :box ; dk:resistance 100 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :coil.p, :coil.n .
:coil.p a dk:Port ; dk:portName "p" .
:coil.n a dk:Port ; dk:portName "n" .
:relay a dk:Relay ; dcterms:identifier "relay" ; rdfs:label "Lamp relay" ; dk:partOf :box ; dk:normallyClosed true ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :relay.p, :relay.n .
:relay.p a dk:Port ; dk:portName "p" .
:relay.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Grow lamp" ; dk:partOf :box ; dk:resistance 12 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :ldr.p, :relay.p .
:ldr.n dk:connectedTo :coil.p .
:relay.n dk:connectedTo :lamp.p .
:bat.neg dk:connectedTo :coil.n, :lamp.n .
:lamp_on_sensor a dk:OpticalCoupling ; rdfs:label "the grow lamp shining on the daylight sensor" ;
    dk:emitter :lamp ; dk:receiver :ldr ; dk:activeByDefault false .
:coil_opens_relay a dk:SwitchingCoupling ; rdfs:label "the coil opening the lamp relay" ; dk:drives :relay ;
    dk:closedWhen "abs(current('coil')) < 0.02" ; dk:activeByDefault true .
:glasshouse dk:hasCoupling :lamp_on_sensor, :coil_opens_relay .
"""
SCENARIO = """\
@prefix :        <https://example.org/glasshouse-scenarios/> .
@prefix sys:     <https://example.org/glasshouse/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:GLASS.1 a dk:Scenario ; dk:scenarioNumber 9821 ; dcterms:identifier "GLASS.1" ; rdfs:label "Coil shorted to the lamp" ;
    dk:onSystem sys:glasshouse ; dk:hasCategory dk:Intermittent ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:ShortBetweenNodes ; dk:faultTarget sys:coil.p ; dk:otherTarget sys:lamp.p ] ;
    dk:initialObservations "The grow lamp flickers." ; dk:faultyComponent sys:coil, sys:lamp ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:coil ] ] ;
    dk:actionBudget 8 .
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("glasshouse")
    (folder / "glasshouse.ttl").write_text(SYSTEM)
    (folder / "GLASS.1.ttl").write_text(SCENARIO)
    store = KnowledgeStore.memory()
    load_files(store, [folder / "glasshouse.ttl", folder / "GLASS.1.ttl"])
    return store


def test_a_coupling_nothing_blocks_is_never_named(store):
    result = run_session("GLASS.1", ModelBasedAssistant(), store=store, seed=0, record=False)
    named = [sorted(r.outcome.intention.split()) for r in result.record.rounds]
    verdicts = [r.outcome.verdict for r in result.record.rounds]
    assert "empty" not in verdicts, named
    assert result.end == "success", named
