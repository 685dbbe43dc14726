"""The ``ideal`` warnings of ``diagkg check`` give the reason that holds for the part a session leaves broken (outsider
h1, F11): a shorted series protection diode was said to be left "as a broken indicator", and the advice to state the
minutes a session charges on the plan would have priced a two-step plan at its first step, leaving the diode shorted."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagkg.env.checks import check_scenario
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.torch import TORCH

# the torch with a protection diode in series with everything
DIODE_TORCH = TORCH.replace(":bat.pos dk:connectedTo :sw.p, :r_led.p .", """\
:d1 a dk:Diode ; dcterms:identifier "d1" ; rdfs:label "Protection diode" ; dk:partOf :body ;
    dk:forwardVoltage 0.7 ; dk:forwardCurrent 1.0 ; dk:maxCurrent 30.0 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :d1.anode, :d1.cathode .
:d1.anode a dk:Port ; dk:portName "anode" .
:d1.cathode a dk:Port ; dk:portName "cathode" .
:bat.pos dk:connectedTo :d1.anode .
:d1.cathode dk:connectedTo :sw.p, :r_led.p .""")

TWO = """\
@prefix :        <https://example.org/torch-scenarios/> .
@prefix sys:     <https://example.org/torch/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:TORCH.8 a dk:Scenario ; dk:scenarioNumber 9108 ; dcterms:identifier "TORCH.8" ;
    rdfs:label "Bulb open, protection diode shorted" ; dk:onSystem sys:torch ; dk:hasCategory dk:Double ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:bulb ],
               [ a dk:Fault ; dk:faultMode dk:ShortedComponent ; dk:faultTarget sys:d1 ] ;
    dk:initialObservations "The torch stays dark when switched on, but its green LED is lit." ;
    dk:faultyComponent sys:bulb, sys:d1 ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:bulb ],
                [ a dk:DiagnosticAction ; dk:position 2 ; dk:actionType dk:ReplaceComponent ; dk:target sys:d1 ] ] ;
    dk:actionBudget 10 .
"""


@pytest.fixture(scope="module")
def warnings(tmp_path_factory) -> list[str]:
    folder: Path = tmp_path_factory.mktemp("diode")
    (folder / "torch.ttl").write_text(DIODE_TORCH)
    (folder / "two.ttl").write_text(TWO)
    store = KnowledgeStore.memory()
    load_files(store, [folder / "torch.ttl", folder / "two.ttl"])
    report = check_scenario(store, ScenarioCatalog(store).resolve(9108), file=str(folder / "two.ttl"))
    store.close()
    return [f.message for f in report.findings if f.check == "ideal"]


def test_a_part_whose_fault_no_lamp_shows_is_not_called_an_indicator(warnings):
    step = next(w for w in warnings if w.startswith("a session ends in success without step 2 (replace_component d1)"))
    assert "indicator" not in step
    assert "the fault of d1 changes no lamp a session judges by" in step


def test_the_advice_on_the_price_says_the_plan_leaves_the_diode(warnings):
    price = next(w for w in warnings if w.startswith("a session charges"))
    assert "after step 1 of 2, leaving d1 as the faults made it" in price
    assert "figure-faults-left" in price
    assert "state dk:costMinutes" not in price        # pricing the plan at its first step would leave the diode shorted
