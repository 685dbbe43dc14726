"""Two circuits with nothing in common, written here as a cyclist would (not shipped): a front lamp on its own 6 V
battery and switch, a rear LED on its own 3 V cell, resistor and switch; 0 V is the front battery's negative.

The rear circuit floats: nothing joins it to 0 V but a voltmeter's lead, so each of its terminals reads 0 V to 0 V
(no current returns through the meter), whatever its cell gives across; the solver's own potentials there are
its leakage's (the cell's ends at -1.2 and +1.8 V). A reading rounded to zero said "-0.0000 V"."""

from __future__ import annotations

from pathlib import Path

import pytest

import diagkg
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

BIKE = '''\
@prefix :        <https://example.org/bike/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:bike a dk:System ; dk:systemKey "bike" ; dcterms:identifier "bike" ; rdfs:label "Bicycle lights" ;
    dk:groundReference :fbat.neg ;
    dcterms:description """Two lights with nothing in common: a front lamp on its own 6 V battery and switch,
and a red rear LED on its own 3 V cell, resistor and switch.""" .
:front a dk:Module ; dcterms:identifier "front" ; rdfs:label "Front light" ; dk:partOf :bike .
:rear a dk:Module ; dcterms:identifier "rear" ; rdfs:label "Rear light" ; dk:partOf :bike .
:fbat a dk:VoltageSource ; dcterms:identifier "fbat" ; rdfs:label "Front battery" ; dk:partOf :front ; dk:voltage 6 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fbat.pos, :fbat.neg .
:fbat.pos a dk:Port ; dk:portName "pos" .
:fbat.neg a dk:Port ; dk:portName "neg" .
:fsw a dk:Switch ; dcterms:identifier "fsw" ; rdfs:label "Front switch" ; dk:partOf :front ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fsw.p, :fsw.n .
:fsw.p a dk:Port ; dk:portName "p" .
:fsw.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Front lamp" ; dk:partOf :front ;
    dk:resistance 12 ; dk:powerThreshold 0.5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:rbat a dk:VoltageSource ; dcterms:identifier "rbat" ; rdfs:label "Rear cell" ; dk:partOf :rear ; dk:voltage 3 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :rbat.pos, :rbat.neg .
:rbat.pos a dk:Port ; dk:portName "pos" .
:rbat.neg a dk:Port ; dk:portName "neg" .
:rsw a dk:Switch ; dcterms:identifier "rsw" ; rdfs:label "Rear switch" ; dk:partOf :rear ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :rsw.p, :rsw.n .
:rsw.p a dk:Port ; dk:portName "p" .
:rsw.n a dk:Port ; dk:portName "n" .
:rr a dk:Resistor ; dcterms:identifier "rr" ; rdfs:label "Rear resistor" ; dk:partOf :rear ; dk:resistance 47 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :rr.p, :rr.n .
:rr.p a dk:Port ; dk:portName "p" .
:rr.n a dk:Port ; dk:portName "n" .
:rled a dk:LED ; dcterms:identifier "rled" ; rdfs:label "Rear LED" ; dk:partOf :rear ;
    dk:forwardVoltage 1.8 ; dk:color "red" ;
    dk:isIndicator false ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :rled.anode, :rled.cathode .
:rled.anode a dk:Port ; dk:portName "anode" .
:rled.cathode a dk:Port ; dk:portName "cathode" .
:fbat.pos dk:connectedTo :fsw.p .
:fsw.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :fbat.neg .
:rbat.pos dk:connectedTo :rsw.p .
:rsw.n dk:connectedTo :rr.p .
:rr.n dk:connectedTo :rled.anode .
:rled.cathode dk:connectedTo :rbat.neg .
'''

FLAT = '''\
@prefix :        <https://example.org/bike-scenarios/> .
@prefix sys:     <https://example.org/bike/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
:BK.1 a dk:Scenario ; dk:scenarioNumber 7201 ; dcterms:identifier "BK.1" ; rdfs:label "Rear cell flat" ;
    dk:onSystem sys:bike ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:DepletedBattery ; dk:faultTarget sys:rbat ] ;
    dk:initialObservations "The rear LED is dark." ;
    dk:faultyComponent sys:rbat ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:rbat ] ] ;
    dk:actionBudget 10 .
'''

LAMP = FLAT.replace("BK.1", "BK.2").replace("7201", "7202").replace("Rear cell flat", "Front lamp burnt out") \
    .replace("dk:DepletedBattery ; dk:faultTarget sys:rbat", "dk:OpenComponent ; dk:faultTarget sys:lamp") \
    .replace("The rear LED is dark.", "The front lamp is dark.").replace("sys:rbat", "sys:lamp")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeStore:
    folder: Path = tmp_path_factory.mktemp("bike")
    for name, text in (("bike.ttl", BIKE), ("flat.ttl", FLAT), ("lamp.ttl", LAMP)):
        (folder / name).write_text(text)
    s = KnowledgeStore.memory()
    load_files(s, [folder])
    return s


@pytest.mark.parametrize("scenario", ["BK.1", "BK.2"])
def test_a_floating_circuit_reads_0_v_to_0_v_and_never_minus_zero(store, scenario):
    with diagkg.make(scenario, store=store) as session:
        session.reset(seed=0)
        cell, *_ = session.step(diagkg.Action("measure_voltage", ("rbat",)))
        front, *_ = session.step(diagkg.Action("measure_voltage", ("fbat",)))
    assert cell.data["rbat"].port_voltages == {"neg": 0.0, "pos": 0.0}
    assert cell.message == "Voltages at rbat (to 0 V): neg 0.0000 V, pos 0.0000 V."
    assert front.data["fbat"].port_voltages == {"neg": 0.0, "pos": 6.0}


@pytest.mark.parametrize("assistant", ["oracle", "model-based", "neuro-symbolic"])
def test_each_circuit_is_repaired_on_its_own(store, assistant):
    for scenario in ("BK.1", "BK.2"):
        result = run_session(scenario, assistant, store=store, seed=0, record=False)
        assert result.end in ("success", "success_no_hypothesis"), (assistant, scenario, result.end)


def test_simulate_says_which_parts_nothing_joins_to_0_v(tmp_path):
    from ..support.cli import run_cli

    (tmp_path / "bike.ttl").write_text(BIKE)
    r = run_cli("--memory", "simulate", str(tmp_path / "bike.ttl"))
    assert r.returncode == 0, r.stderr
    note = next(line for line in r.stdout.splitlines() if line.startswith("not joined to 0 V"))
    assert note.endswith(": rbat, rled, rr, rsw"), note
    shipped = run_cli("--memory", "simulate", "three_cubes")
    assert "not joined to 0 V" not in shipped.stdout
