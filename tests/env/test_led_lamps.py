"""An LED that is a system's main light (``dk:isIndicator false``) counts as a lamp the working system needs.

Found on a bike light written as a user would (two cells, a protection diode, a fuse, a switch, a white LED
headlight with its resistor and a small bulb in parallel): with the LED open, the bulb still lit, and every
LED counted as an indicator, so the system "worked" with the fault in place. Any first action ended the
session in success (model-based measured a resistor, 20 minutes, and "repaired" the light), and
``diagkg check`` passed the scenario. Now an LED declared ``dk:isIndicator false`` is a lamp like a bulb,
and ``check`` fails a scenario whose faults leave the system working, naming the LED whose light they
change when it is an indicator by default."""

from __future__ import annotations

from pathlib import Path

import pytest

import diagkg
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from ..support.cli import run_cli

BIKE = """\
@prefix :        <https://example.org/bike/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:bike a dk:System ; dk:systemKey "bike" ; dcterms:identifier "bike" ; rdfs:label "Bike light" ;
    dk:groundReference :cell.neg ;
    dcterms:description "A 6 V cell feeds, through a switch, a white LED headlight with its resistor and a rear bulb." .
:frame a dk:Module ; dcterms:identifier "frame" ; rdfs:label "Frame" ; dk:partOf :bike .
:cell a dk:VoltageSource ; dcterms:identifier "cell" ; rdfs:label "Cell" ; dk:partOf :frame ; dk:voltage 6 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :cell.pos, :cell.neg .
:cell.pos a dk:Port ; dk:portName "pos" . :cell.neg a dk:Port ; dk:portName "neg" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Switch" ; dk:partOf :frame ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Replaceable ; dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" . :sw.n a dk:Port ; dk:portName "n" .
:head a dk:LED ; dcterms:identifier "head" ; rdfs:label "White LED headlight" ; dk:partOf :frame ;
    dk:forwardVoltage 3.0 ; dk:color "white" ;{declared}
    dk:affords dk:Observable, dk:Reachable, dk:Replaceable ; dk:hasPort :head.anode, :head.cathode .
:head.anode a dk:Port ; dk:portName "anode" . :head.cathode a dk:Port ; dk:portName "cathode" .
:r a dk:Resistor ; dcterms:identifier "r" ; rdfs:label "LED resistor" ; dk:partOf :frame ; dk:resistance 100 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r.p, :r.n .
:r.p a dk:Port ; dk:portName "p" . :r.n a dk:Port ; dk:portName "n" .
:rear a dk:Bulb ; dcterms:identifier "rear" ; rdfs:label "Rear bulb" ; dk:partOf :frame ; dk:resistance 40 ;
    dk:powerThreshold 0.2 ; dk:affords dk:Observable, dk:Reachable, dk:Replaceable ; dk:hasPort :rear.p, :rear.n .
:rear.p a dk:Port ; dk:portName "p" . :rear.n a dk:Port ; dk:portName "n" .
:cell.pos dk:connectedTo :sw.p .
:sw.n dk:connectedTo :r.p, :rear.p .
:r.n dk:connectedTo :head.anode .
:cell.neg dk:connectedTo :head.cathode, :rear.n .
"""

HEAD_OPEN = """\
@prefix :        <https://example.org/bike-scenarios/> .
@prefix sys:     <https://example.org/bike/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:BIKE.1 a dk:Scenario ; dk:scenarioNumber 8801 ; dcterms:identifier "BIKE.1" ; rdfs:label "Headlight open" ;
    dk:onSystem sys:bike ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:head ] ;
    dk:initialObservations "The rear bulb lights but the headlight stays dark." ;
    dk:faultyComponent sys:head ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:head ] ] ;
    dk:actionBudget 10 .
"""


def files(tmp_path: Path, declared: str) -> list[Path]:
    system, scenario = tmp_path / "bike.ttl", tmp_path / "head-open.ttl"
    system.write_text(BIKE.format(declared=declared))
    scenario.write_text(HEAD_OPEN)
    return [system, scenario]


def store_of(tmp_path: Path, declared: str) -> KnowledgeStore:
    store = KnowledgeStore.memory()
    load_files(store, files(tmp_path, declared))
    return store


def test_an_led_declared_a_main_light_must_light_again(tmp_path):
    store = store_of(tmp_path, " dk:isIndicator false ;")
    with diagkg.make("BIKE.1", store=store) as session:
        session.reset(seed=0)
        assert {"head", "rear"} <= session.nominal_bulbs and "head" in session.main_bulbs
        # a measurement repairs nothing: the session goes on
        outcome, _, terminated, _, info = session.step(diagkg.Action("measure_voltage", ("r",)))
        assert outcome.success and not terminated and info["end"] is None
        # replacing the headlight is the repair
        *_, terminated, _, info = session.step(diagkg.Action("replace_component", ("head",)))
        assert terminated and info["end"] == "success_no_hypothesis"
    with diagkg.make("BIKE.1", store=store) as session:
        session.reset(seed=0)
        *_, terminated, _, info = session.step(diagkg.Hypothesis({"head"}))
        assert terminated and info["end"] == "success"


def test_an_undeclared_led_is_an_indicator_and_check_says_the_scenario_ends_at_once(tmp_path):
    store = store_of(tmp_path, "")
    with diagkg.make("BIKE.1", store=store) as session:
        session.reset(seed=0)
        assert "head" not in session.nominal_bulbs
        # as the rule says, the LED is an indicator: the system works as the faults leave it, so no action restores it
        # (a measurement ended the session in success_no_hypothesis); check says so
        *_, terminated, _, info = session.step(diagkg.Action("measure_voltage", ("r",)))
        assert not terminated and info["end"] is None
    system, scenario = files(tmp_path, "")
    r = run_cli("--memory", "check", str(system), str(scenario))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "BIKE.1: working: the system works with the faults in place" in r.stdout
    assert "the faults change the light of head, an LED, which counts as an indicator unless its system declares " \
           "it dk:isIndicator false" in r.stdout
    declared = files(tmp_path, " dk:isIndicator false ;")
    r = run_cli("--memory", "check", *map(str, declared))
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("assistant", ["model-based", "neuro-symbolic"])
def test_the_assistants_repair_a_main_led_with_a_diagnosis(tmp_path, assistant):
    store = store_of(tmp_path, " dk:isIndicator false ;")
    result = run_session("BIKE.1", assistant, store=store, seed=0, record=False, keep_ledger=False)
    assert result.end == "success" and result.cost >= 120      # the headlight named (and replaced)


def test_loading_a_system_no_lamp_of_which_is_judged_warns_at_the_system(tmp_path):
    # an LED torch whose one light is an LED not declared a main light: every fault leaves it "working"
    torch = BIKE.format(declared="").replace(
        """:rear a dk:Bulb ; dcterms:identifier "rear" ; rdfs:label "Rear bulb" ; dk:partOf :frame ; dk:resistance 40 ;
    dk:powerThreshold 0.2 ; dk:affords dk:Observable, dk:Reachable, dk:Replaceable ; dk:hasPort :rear.p, :rear.n .
:rear.p a dk:Port ; dk:portName "p" . :rear.n a dk:Port ; dk:portName "n" .
""", "").replace(":sw.n dk:connectedTo :r.p, :rear.p .", ":sw.n dk:connectedTo :r.p .").replace(
        ":cell.neg dk:connectedTo :head.cathode, :rear.n .", ":cell.neg dk:connectedTo :head.cathode .")
    assert ":rear" not in torch
    path = tmp_path / "torch.ttl"
    path.write_text(torch)
    r = run_cli("--store", str(tmp_path / "store"), "load", str(path))
    assert r.returncode == 0, r.stderr
    line = next(i for i, text in enumerate(torch.splitlines(), 1) if text.startswith(":bike a dk:System"))
    assert f"warning: {path}:{line}: bike: lamps: no lamp a session judges the system by is lit in the nominal " \
           "state" in r.stderr
    assert "head is lit, but an LED is an indicator unless declared dk:isIndicator false" in r.stderr
    path.write_text(torch.replace('dk:color "white" ;', 'dk:color "white" ; dk:isIndicator false ;'))
    r = run_cli("--store", str(tmp_path / "store2"), "load", str(path))
    assert r.returncode == 0 and "lamps:" not in r.stderr, r.stderr
