"""What a continuity test's message says the meter showed, on a small lamp circuit written here (an
outsider's greenhouse controller): a battery read "a diode (it conducts one way), not applicable (a
source)", and a cable whose end is off "a diode (it conducts one way), one end is off its terminal":
the reading said "diode" whenever no resistance came back. It is now a diode's only for a part that
conducts one way."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env.actions import Action
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

SYSTEM = """\
@prefix :        <https://example.org/shed/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:shed a dk:System ; dk:systemKey "shed" ; dcterms:identifier "shed" ; rdfs:label "Shed light" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A battery with its internal resistance feeds a lamp through a blocking diode and a lead." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :shed .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:internalResistance 0.2 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:d a dk:Diode ; dcterms:identifier "d" ; rdfs:label "Blocking diode" ; dk:partOf :body ; dk:forwardVoltage 0.7 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :d.anode, :d.cathode .
:d.anode a dk:Port ; dk:portName "anode" .
:d.cathode a dk:Port ; dk:portName "cathode" .
:lead a dk:Cable ; dcterms:identifier "lead" ; rdfs:label "Lamp lead" ; dk:partOf :body ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lead.p, :lead.n .
:lead.p a dk:Port ; dk:portName "p" .
:lead.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :body ; dk:resistance 12 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :d.anode .
:d.cathode dk:connectedTo :lead.p .
:lead.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :bat.neg .
"""
SCENARIO = """\
@prefix :        <https://example.org/shed-scenarios/> .
@prefix sys:     <https://example.org/shed/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:SHED.1 a dk:Scenario ; dk:scenarioNumber 9811 ; dcterms:identifier "SHED.1" ; rdfs:label "Lead off" ;
    dk:onSystem sys:shed ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:lead.n ] ;
    dk:initialObservations "The lamp is dark." ; dk:faultyComponent sys:lead ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReconnectCable ; dk:target sys:lead ] ] ;
    dk:actionBudget 10 .
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shed")
    (folder / "shed.ttl").write_text(SYSTEM)
    (folder / "SHED.1.ttl").write_text(SCENARIO)
    store = KnowledgeStore.memory()
    load_files(store, [folder / "shed.ttl", folder / "SHED.1.ttl"])
    return store


@pytest.mark.parametrize(("part", "said"), [
    ("bat", "Continuity of bat: not applicable (a source)."),
    ("lead", "Continuity of lead: one end is off its terminal."),
    ("d", "Continuity of d: a diode (it conducts one way), nominal."),
    ("lamp", "Continuity of lamp: 12 Ω, nominal.")])
def test_a_continuity_message_says_diode_only_of_a_diode(store, part, said):
    with diagkg.make("SHED.1", store) as s:
        s.reset(seed=0)
        obs = s.step(Action("test_continuity", (part,)))[0]
    assert obs.refusal is None, obs.message
    assert obs.message == said
