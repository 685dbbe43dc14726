"""A voltage is read as a voltmeter reads it (physics version 3).

On a stranger's desk lamp, a blown fuse whose far side led only to a switch with a loose end read "n 6.0000 V, p
12.0000 V": a node cut off on every side by opens sat at the ratio of the opens' gigaohms, half the supply, where a
10 MΩ meter reads about 0.1 V. Here on the torch of tests/support/torch.py: its switch stuck open and its bulb burnt,
the lead between them is cut off on both sides. A node a current flows through reads as before. A node held only
by a diode that carries next to nothing (an LED past an open part) is not held (physics version 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

import diagkg
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.torch import TORCH

METER_OHMS = 1e7        # a digital multimeter's input resistance (diagkg.sim.simulator.METER_OHMS)

SCENARIO = """\
@prefix :        <https://example.org/torch-scenarios/> .
@prefix sys:     <https://example.org/torch/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:CUT.1 a dk:Scenario ; dk:scenarioNumber 9701 ; dcterms:identifier "CUT.1" ; rdfs:label "Switch stuck open, bulb burnt" ;
    dk:onSystem sys:torch ; dk:hasCategory dk:Double ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:StuckOpen ; dk:faultTarget sys:sw ],
               [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:bulb ] ;
    dk:initialObservations "The torch stays dark; its LED is lit." ;
    dk:faultyComponent sys:sw, sys:bulb ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:sw ] ;
        dk:step [ a dk:DiagnosticAction ; dk:position 2 ; dk:actionType dk:ReplaceComponent ; dk:target sys:bulb ] ] ;
    dk:actionBudget 10 .
"""

LED_RESISTOR_OPEN = """\
@prefix :        <https://example.org/torch-scenarios/> .
@prefix sys:     <https://example.org/torch/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:CUT.2 a dk:Scenario ; dk:scenarioNumber 9702 ; dcterms:identifier "CUT.2" ; rdfs:label "LED resistor open" ;
    dk:onSystem sys:torch ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:r_led ] ;
    dk:initialObservations "The LED is dark." ;
    dk:faultyComponent sys:r_led ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:r_led ] ] ;
    dk:actionBudget 10 .
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeStore:
    folder = tmp_path_factory.mktemp("voltmeter")
    (folder / "torch.ttl").write_text(TORCH)
    (folder / "cut.ttl").write_text(SCENARIO)
    (folder / "cut2.ttl").write_text(LED_RESISTOR_OPEN)
    s = KnowledgeStore.memory()
    load_files(s, [Path(folder / name) for name in ("torch.ttl", "cut.ttl", "cut2.ttl")])
    return s


def _read(store: KnowledgeStore, part: str, scenario: str = "CUT.1") -> dict[str, float | None]:
    with diagkg.make(scenario, store=store) as session:
        session.reset(seed=0)
        outcome, *_ = session.step(diagkg.Action("measure_voltage", (part,)))
        return dict(outcome.data[part].port_voltages)


def test_a_node_cut_off_on_both_sides_reads_what_the_meter_pulls_it_to(store):
    with diagkg.make("CUT.1", store=store) as session:
        session.reset(seed=0)
        node = session.simulate().components["lead"].port_v["p"]      # the solve alone: the opens' ratio
    assert node is not None and node > 1.0
    lead = _read(store, "lead")
    for port in ("p", "n"):
        reading = lead[port]
        # 6 V through a gigaohm into the meter's 10 MΩ: about 6 * 1e7 / 1e9 (between the two opens, a little less)
        assert reading is not None and 0.0 < reading < 6.0 * METER_OHMS / 1e9 * 1.05, lead


def test_a_node_a_current_flows_through_reads_as_before(store):
    bat = _read(store, "bat")
    assert bat == {"neg": 0.0, "pos": 6.0}
    with diagkg.make("CUT.1", store=store) as session:
        session.reset(seed=0)
        led = session.simulate().components["r_led"].port_v
    assert _read(store, "r_led") == {p: round(v, 4) for p, v in led.items() if v is not None}


def test_an_led_fed_only_through_an_open_part_reads_what_the_meter_pulls_it_to(store):
    # the LED's resistor open: the solve alone puts the anode where the LED's own leakage matches the open's (about
    # 1.5 V), and a diode counted as holding its node whatever it carried, so the meter was not put on it (a
    # stranger's solar light read 2.04 V past an open relay; the meter reads 0.06 V there)
    with diagkg.make("CUT.2", store=store) as session:
        session.reset(seed=0)
        result = session.simulate()
        node, led_current = result.components["led"].port_v["anode"], result.components["led"].current
    assert node is not None and node > 0.5 and abs(led_current) < 1e-6
    reading = _read(store, "led", "CUT.2")["anode"]
    assert reading is not None and 0.0 <= reading < 6.0 * METER_OHMS / 1e9 * 1.05, reading
