"""A parameter that nothing of the component's type reads is warned about, at the component's line.

An outside user gave a bulb ``dk:ratedCurrent 0.3`` (a fuse's parameter: a bulb reads ``dk:maxCurrent``): it
validated, loaded and simulated with no word, and the user believed the bulb rated. ``diagkg load`` and
``diagkg check`` now warn (the file stays valid); what a type reads is declared (ontology/behaviour.ttl's stamps
and rules, the shapes, ``dk:readsParameter``), so a switch's ``dk:resistance`` (read by its stamp, an
override) and its ``dk:normallyClosed`` (read by the simulator) draw none. Here on a system written in the test."""

from __future__ import annotations

import pytest

from diagkg.env.checks import check_scenario, parameter_warnings
from diagkg.env.parameters import type_reads
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.env.service import simulator_for
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import NOMINAL

from ..support.cli import run_cli

SYSTEM = """\
@prefix :        <https://example.org/unread/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:unread a dk:System ; dk:systemKey "unread" ; dcterms:identifier "unread" ; rdfs:label "Rated lamp" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A battery lights a lamp through a switch." .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :unread .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :box ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Measurable, dk:Reachable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Switch" ; dk:partOf :box ; dk:normallyClosed true ;
    dk:onResistance 0.05 ; dk:affords dk:Observable, dk:Measurable, dk:Reachable, dk:Replaceable, dk:Togglable ;
    dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" .
:sw.n a dk:Port ; dk:portName "n" .
:bulb a dk:Bulb ; dcterms:identifier "bulb" ; rdfs:label "Lamp" ; dk:partOf :box ; dk:resistance 24 ;
    dk:powerThreshold 0.5 ;RATING dk:affords dk:Observable, dk:Measurable, dk:Reachable, dk:Replaceable ;
    dk:hasPort :bulb.p, :bulb.n .
:bulb.p a dk:Port ; dk:portName "p" .
:bulb.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :sw.p .
:sw.n dk:connectedTo :bulb.p .
:bulb.n dk:connectedTo :bat.neg .
"""

SCENARIO = """\
@prefix :        <https://example.org/unread-scenarios/> .
@prefix sys:     <https://example.org/unread/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:UNREAD.1 a dk:Scenario ; dk:scenarioNumber 9701 ; dcterms:identifier "UNREAD.1" ; rdfs:label "Lamp open" ;
    dk:onSystem sys:unread ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:bulb ] ;
    dk:initialObservations "The lamp is dark." ;
    dk:faultyComponent sys:bulb ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:bulb ] ] ;
    dk:actionBudget 6 .
"""

WARNING = ("unread: parameters: bulb states dk:ratedCurrent, which nothing of a Bulb reads (it reads: isIndicator, "
           "maxCurrent, maxPower, powerThreshold, resistance, shortResistance): it changes nothing")


def _system(rating: str) -> str:
    return SYSTEM.replace("RATING", rating)


@pytest.fixture()
def store() -> KnowledgeStore:
    """A store of each test's own (each loads its own version of the system: a store shared by the module was
    written by three tests, in whatever order the workers ran them)."""
    return KnowledgeStore.memory()


def test_what_a_type_reads_is_declared(tmp_path, store):
    (tmp_path / "unread.ttl").write_text(_system(""))
    load_files(store, [tmp_path / "unread.ttl"])
    reads, judged = type_reads(store)
    bulb, switch, fuse = (reads[f"https://w3id.org/diagkg/ontology#{t}"] for t in ("Bulb", "Switch", "Fuse"))
    assert "maxCurrent" in bulb and "ratedCurrent" not in bulb and "isIndicator" in bulb      # a rule; dk:readsParameter
    assert {"normallyClosed", "onResistance", "offResistance"} <= switch      # a stamp; the simulator; shapes
    # a switch's stamp reads dk:resistance only where a fault overrides it (has('resistance')); a fuse's, as stated
    assert "resistance" not in switch and "resistance" in fuse
    assert "ratedCurrent" in fuse and "ratedCurrent" in judged and "color" not in judged    # a label-like string is no parameter


def test_a_bulb_stating_a_fuses_rating_is_warned_about_at_its_line(tmp_path):
    system, scenario, store = tmp_path / "unread.ttl", tmp_path / "unread-1.ttl", str(tmp_path / "store")
    system.write_text(_system(" dk:ratedCurrent 0.3 ;"))
    scenario.write_text(SCENARIO)
    bulb_line = next(n for n, line in enumerate(system.read_text().splitlines(), 1) if line.startswith(":bulb "))

    done = run_cli("--store", store, "load", str(system), str(scenario))
    assert done.returncode == 0, done.stderr
    assert f"warning: {system}:{bulb_line}: {WARNING}" in done.stderr
    assert done.stderr.count("warning:") == 1, done.stderr      # the switch's contact resistance and position are read

    done = run_cli("--store", store, "check", "UNREAD.1")
    assert f"{system}:{bulb_line}: UNREAD.1: parameters: bulb states dk:ratedCurrent" in done.stdout, done.stdout


def test_a_system_whose_parameters_are_all_read_gets_none(tmp_path, store):
    system, scenario = tmp_path / "unread.ttl", tmp_path / "unread-1.ttl"
    system.write_text(_system(" dk:maxCurrent 0.8 ;"))
    scenario.write_text(SCENARIO)
    load_files(store, [system, scenario], replace=True)
    assert parameter_warnings(store, simulator_for(store, "unread")) == []
    report = check_scenario(store, ScenarioCatalog(store).resolve("UNREAD.1"))
    assert [f for f in report.findings if f.check == "parameters"] == []


def test_a_switch_stating_a_resistance_is_warned_that_it_changes_nothing(tmp_path, store):
    """A switch's stamp reads dk:resistance only as a fault's override (``resistance if has('resistance') else
    (onResistance if closed else offResistance)``): one a switch states is solved as 0.01 ohm, and was not warned
    about (an outsider's greenhouse controller); its closed contact's resistance is dk:onResistance."""
    system, scenario = tmp_path / "unread.ttl", tmp_path / "unread-1.ttl"
    system.write_text(_system("").replace("dk:onResistance 0.05", "dk:resistance 0.05"))
    scenario.write_text(SCENARIO)
    load_files(store, [system, scenario], replace=True)
    sim = simulator_for(store, "unread")
    assert [f.message.split(",")[0] for f in parameter_warnings(store, sim)] == ["sw states dk:resistance"]
    assert sim.own_elements(NOMINAL, "sw", {"closed:sw": True}) == [("R", 0.01)]      # not the 0.05 it states
