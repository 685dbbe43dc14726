"""The bypass guard's verdict (:func:`~diagkg.env.verification.switch_controls`) is remembered per simulator: a
model-based assistant asks it of the same few states thousands of times a decision (14,697 times for 198 states
over four shipped scenarios). Two systems written here with the same key and the same part names, one whose
switch feeds the lamp and one whose lamp the battery feeds directly (the switch feeds a heater), must each get
their own verdict for the same state: the switch stuck closed is no working system in the first only."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env import verification
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

HEAD = """\
@prefix :        <https://example.org/bench/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:bench a dk:System ; dk:systemKey "bench" ; dcterms:identifier "bench" ; rdfs:label "Bench lamp" ;
    dk:groundReference :bat.neg ; dcterms:description "A 12 V battery, a switch, a lamp and a heater." .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :bench .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :box ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" . :bat.neg a dk:Port ; dk:portName "neg" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Switch" ; dk:partOf :box ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" . :sw.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :box ; dk:resistance 28.8 ; dk:powerThreshold 1 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" . :lamp.n a dk:Port ; dk:portName "n" .
:heater a dk:Resistor ; dcterms:identifier "heater" ; rdfs:label "Heater" ; dk:partOf :box ; dk:resistance 100 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :heater.p, :heater.n .
:heater.p a dk:Port ; dk:portName "p" . :heater.n a dk:Port ; dk:portName "n" .
"""
SWITCHED = ":bat.pos dk:connectedTo :sw.p, :heater.p .\n:sw.n dk:connectedTo :lamp.p .\n" \
    ":bat.neg dk:connectedTo :lamp.n, :heater.n .\n"
DIRECT = ":bat.pos dk:connectedTo :sw.p, :lamp.p .\n:sw.n dk:connectedTo :heater.p .\n" \
    ":bat.neg dk:connectedTo :lamp.n, :heater.n .\n"
SCENARIO = """\
@prefix :        <https://example.org/bench-scenarios/> .
@prefix sys:     <https://example.org/bench/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:BENCH.1 a dk:Scenario ; dk:scenarioNumber 9701 ; dcterms:identifier "BENCH.1" ; rdfs:label "Lamp burnt out" ;
    dk:onSystem sys:bench ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:lamp ] ;
    dk:initialObservations "The lamp is dark." ; dk:faultyComponent sys:lamp ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:lamp ] ] ;
    dk:actionBudget 10 .
"""


def bench(folder, wiring: str) -> KnowledgeStore:
    folder.mkdir()
    (folder / "bench.ttl").write_text(HEAD + wiring)
    (folder / "scenario.ttl").write_text(SCENARIO)
    store = KnowledgeStore.memory()
    load_files(store, [folder / "bench.ttl", folder / "scenario.ttl"])
    return store


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench")
    return {"switched": bench(folder / "switched", SWITCHED), "direct": bench(folder / "direct", DIRECT)}


def verdicts(store: KnowledgeStore) -> tuple[bool, bool]:
    """The guard's verdict on the system as set up, and with the switch stuck closed."""
    with diagkg.make("BENCH.1", store) as session:
        session.reset(seed=0)
        stuck = session.nominal_state.evolve(forced=[("sw", True)])
        return (verification.switch_controls(session, session.nominal_state, session.sim.simulate(session.nominal_state)),
                verification.switch_controls(session, stuck, session.sim.simulate(stuck)))


def test_each_system_gets_its_own_verdict_for_the_same_state(stores):
    for _ in range(2):       # asked again, each answered from what it remembers, and still its own
        assert verdicts(stores["switched"]) == (True, False)
        assert verdicts(stores["direct"]) == (True, True)
