"""A loose end left stops a repair only where it can change the lamps (scoring version 4).

A broken indicator stops no repair (the lamps light with it), but a loose end anywhere did: on a desk lamp
written by a stranger, the pilot LED's terminal loose, the lamp lit, the session never ended as a repair, and
`diagkg generate` wrote four scenarios (the pilot's and its resistor's ends) whose system a session judged broken
while every lamp it judges lit. A system now works only if it works however its loose ends fall: a loose end on a
lamp's path is no working system, as before, and one on the indicator's branch alone is as a broken indicator.
Here on the torch of tests/support/torch.py, whose green LED is an indicator."""

from __future__ import annotations

from pathlib import Path

import pytest

import diagkg
from diagkg.env.checks import check_scenario
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import CircuitState

from ..support.torch import TORCH

SCENARIO = """\
@prefix :        <https://example.org/torch-scenarios/> .
@prefix sys:     <https://example.org/torch/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:{id} a dk:Scenario ; dk:scenarioNumber {number} ; dcterms:identifier "{id}" ; rdfs:label "{id}" ;
    dk:onSystem sys:torch ; dk:hasCategory dk:Intermittent ;
    dk:injects {faults} ;
    dk:initialObservations "The torch flickers, or its LED does." ;
    dk:faultyComponent {faulty} ;
    dk:idealRepair [ a dk:RepairPlan ; {steps} ] ;
    dk:actionBudget 10 .
"""
LOOSE = "[ a dk:Fault ; dk:faultMode dk:LooseConnectionFault ; dk:faultTarget sys:{port} ; dk:probability 0.5 ]"
STEP = "dk:step [ a dk:DiagnosticAction ; dk:position {n} ; dk:actionType dk:{action} ; dk:target sys:{part} ]"


def scenario(sid: str, number: int, ports: list[str], steps: list[tuple[str, str]]) -> str:
    return SCENARIO.format(id=sid, number=number, faults=", ".join(LOOSE.format(port=p) for p in ports),
                           faulty=", ".join(sorted({f"sys:{p.split('.')[0]}" for p in ports})),
                           steps=" ; ".join(STEP.format(n=i, action=a, part=t) for i, (a, t) in enumerate(steps, 1)))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeStore:
    folder = tmp_path_factory.mktemp("loose-indicator")
    files = [folder / "torch.ttl", folder / "led.ttl", folder / "both.ttl", folder / "lead.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(scenario("LOOSE.1", 9501, ["led.anode"], [("ReplaceComponent", "led")]))
    files[2].write_text(scenario("LOOSE.2", 9502, ["led.anode", "lead.n"],
                                 [("ReplaceComponent", "led"), ("ReconnectCable", "lead")]))
    files[3].write_text(scenario("LOOSE.3", 9503, ["lead.n"], [("ReconnectCable", "lead")]))
    s = KnowledgeStore.memory()
    load_files(s, [Path(f) for f in files])
    return s


def test_a_loose_end_on_the_indicator_alone_leaves_the_system_working(store):
    report = check_scenario(store, ScenarioCatalog(store).resolve("LOOSE.1"))
    working = [f for f in report.findings if f.check == "working"]
    assert working and not working[0].passed, [str(f) for f in report.findings]
    for seed in range(4):     # however the LED's end falls, the bulb lights: no action restores it (any action ended
        with diagkg.make("LOOSE.1", store=store) as session:      # it in success_no_hypothesis, scoring 4 and 5)
            session.reset(seed=seed)
            _, _, terminated, _, info = session.step(diagkg.Action("observe_component", ("bulb",)))
            assert not terminated and info["end"] is None


def test_the_lamps_path_put_right_ends_the_session_with_the_indicators_end_still_loose(store):
    for seed in range(4):
        with diagkg.make("LOOSE.2", store=store) as session:
            session.reset(seed=seed)
            _, _, terminated, _, _ = session.step(diagkg.Action("observe_component", ("bulb",)))
            assert not terminated                 # the bulb's lead is loose: however it falls now, it may fall off
            _, _, terminated, _, info = session.step(diagkg.Action("reconnect_cable", ("lead",)))
            assert terminated and info["end"] == "success_no_hypothesis"


def test_a_loose_end_on_the_lamps_path_is_no_working_system_however_it_falls_now(store):
    report = check_scenario(store, ScenarioCatalog(store).resolve("LOOSE.3"))
    assert report.passed, [str(f) for f in report.findings if not f.passed]
    for seed in range(6):
        with diagkg.make("LOOSE.3", store=store) as session:
            session.reset(seed=seed)
            _, _, terminated, _, _ = session.step(diagkg.Action("observe_component", ("led",)))
            assert not terminated


def test_each_loose_end_falls_every_way_it_may():
    from diagkg.env.verification import loose_falls

    a, b = ("x", "p"), ("y", "n")
    assert loose_falls(CircuitState.make()) == [CircuitState.make()]
    falls = loose_falls(CircuitState.make(loose=[(a, 0.5), (b, 1.0)]))
    assert falls is not None and sorted(sorted(f.detached) for f in falls) == [sorted([a, b]), [b]]
    assert all(not f.loose for f in falls)
    assert loose_falls(CircuitState.make(loose=[((f"c{i}", "p"), 0.5) for i in range(5)])) is None
