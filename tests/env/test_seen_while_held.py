"""A test undone after its round shows the lights while it holds (scoring 7). Before, a bridge across a suspect
part (``short_ports``) told only how its two ends look ("in its normal position") and was taken off at the end of
its round, so the next round's look saw the circuit without it: no bridge, switch opened or cable taken off could
tell anything about the lamps (two outsiders found it). On a system written here: a 12 V battery feeds a lamp
through a fuse, and the fuse is blown."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env.actions import Action, Hypothesis
from diagkg.env.outcomes import Light
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from ..support.scripted import Scripted

SYSTEM = """\
@prefix :        <https://example.org/fused/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:fused a dk:System ; dk:systemKey "fused" ; dcterms:identifier "fused" ; rdfs:label "Fused lamp" ;
    dk:groundReference :bat.neg ; dcterms:description "A 12 V battery feeds a lamp through a fuse." .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :fused .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :box ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" . :bat.neg a dk:Port ; dk:portName "neg" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "Fuse" ; dk:partOf :box ; dk:ratedCurrent 2 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" . :fuse.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :box ; dk:resistance 28.8 ; dk:powerThreshold 1 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" . :lamp.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :fuse.p . :fuse.n dk:connectedTo :lamp.p . :bat.neg dk:connectedTo :lamp.n .
"""
SCENARIO = """\
@prefix :        <https://example.org/fused-scenarios/> .
@prefix sys:     <https://example.org/fused/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:{id} a dk:Scenario ; dk:scenarioNumber {number} ; dcterms:identifier "{id}" ; rdfs:label "Fuse blown" ;
    dk:onSystem sys:fused ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:BlownFuse ; dk:faultTarget sys:fuse ] ;
    dk:initialObservations "The lamp is dark." ; dk:faultyComponent sys:fuse ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:fuse ] ] ;
    {extra} dk:actionBudget 10 .
"""
BRIDGE = Action("short_ports", ("fuse.p", "fuse.n"))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fused")
    (folder / "fused.ttl").write_text(SYSTEM)
    (folder / "blown.ttl").write_text(SCENARIO.format(id="FUSED.1", number=9801, extra=""))
    # a scenario that keeps a bridge (dk:permanentRepair): the next look shows it, and the bridge says nothing more
    (folder / "kept.ttl").write_text(SCENARIO.format(id="FUSED.2", number=9802, extra="dk:permanentRepair dk:ShortPorts ;"))
    s = KnowledgeStore.memory()
    load_files(s, [folder / "fused.ttl", folder / "blown.ttl", folder / "kept.ttl"])
    return s


def test_a_bridge_shows_the_lamps_while_it_holds_and_is_gone_by_the_next_look(store):
    with diagkg.make("FUSED.1", store) as session:
        obs, _ = session.reset(seed=0)
        assert obs["lights"] == {"lamp": Light.OFF}
        bridged, *_ = session.step(BRIDGE)
        assert bridged.data["lights"] == {"lamp": Light.ON}          # the lamp lights past the blown fuse
        looked, *_ = session.step(Action("observe_component", ("lamp",)))
        assert "lights" not in looked.data and looked.data["lamp"].lit is False     # the bridge is off again
        replaced, *_ = session.step(Action("replace_component", ("lamp",)))          # a repair says nothing more
        assert "lights" not in replaced.data


def test_a_bridge_the_scenario_keeps_shows_nothing_more(store):
    with diagkg.make("FUSED.2", store) as session:
        session.reset(seed=0)
        bridged, *_ = session.step(BRIDGE)
        assert "lights" not in bridged.data


def test_the_trajectory_records_the_lamp_seen_while_the_bridge_held(store):
    result = run_session("FUSED.1", Scripted([BRIDGE, Hypothesis(frozenset({"fuse"}))]), seed=0, store=store)
    assert result.end == "success"
    rows = store.select("""PREFIX sosa: <http://www.w3.org/ns/sosa/>
        PREFIX dk: <https://w3id.org/diagkg/ontology#>
        SELECT ?value WHERE { GRAPH ?g { ?o sosa:hasFeatureOfInterest <https://example.org/fused/lamp> ;
            sosa:observedProperty dk:LightEmission ; sosa:hasSimpleResult ?value } }""")
    assert [str(r["value"]).lower() for r in rows] == ["true"]
