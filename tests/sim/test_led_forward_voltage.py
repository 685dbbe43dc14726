"""An LED carries its forward current at its forward voltage, whatever that voltage (a number plate's white LED
behind 470 Ω on a 12 V battery, written here). ngspice never uses a saturation current below 1e-28 A, and at the
LED's emission coefficient (1.8) a forward voltage above about 2.82 V asks for less: every LED declared at 2.8 V,
3.0 V, 3.6 V or 30 V was solved alike, at 2.81 V and 17.4 mA, lit (the 30 V one on 12 V too). Such an LED now gets
1e-28 A and a larger emission coefficient."""

from __future__ import annotations

import random

import pytest

from diagkg.env.service import simulator_for
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import NOMINAL

PLATE = """\
@prefix :        <https://example.org/plate/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:plate a dk:System ; dk:systemKey "plate" ; dcterms:identifier "plate" ; rdfs:label "Number plate light" ;
    dk:groundReference :bat.neg ; dcterms:description "A 12 V battery lights a white LED through 470 ohms." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :plate .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:r a dk:Resistor ; dcterms:identifier "r" ; rdfs:label "Series resistor" ; dk:partOf :body ; dk:resistance 470 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r.p, :r.n .
:r.p a dk:Port ; dk:portName "p" .
:r.n a dk:Port ; dk:portName "n" .
:led a dk:LED ; dcterms:identifier "led" ; rdfs:label "Plate LED" ; dk:partOf :body ; dk:forwardVoltage {vf} ;
    dk:color "white" ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :led.anode, :led.cathode .
:led.anode a dk:Port ; dk:portName "anode" .
:led.cathode a dk:Port ; dk:portName "cathode" .
:bat.pos dk:connectedTo :r.p .
:r.n dk:connectedTo :led.anode .
:led.cathode dk:connectedTo :bat.neg .
"""


def solve(tmp_path, vf: float):
    path = tmp_path / f"plate-{vf}.ttl"
    path.write_text(PLATE.format(vf=vf))
    store = KnowledgeStore.memory()
    load_files(store, [path])
    return simulator_for(store, "plate").simulate(NOMINAL, random.Random(0))


@pytest.mark.parametrize("vf", [2.0, 3.0, 3.6])
def test_an_led_carries_about_its_forward_current_at_its_forward_voltage(tmp_path, vf):
    led = solve(tmp_path, vf).components["led"]
    across = led.port_v["anode"] - led.port_v["cathode"]
    # 470 ohms take the rest of 12 V; at about its forward current (20 mA) the junction (behind the LED's own
    # 1 ohm) is about at its forward voltage: within 10 mV (N Vt ln(I / 20 mA), I within 15 % of 20 mA)
    assert abs(led.current - (12 - across) / 470) < 1e-6 and abs(led.current - 0.02) < 0.003
    assert abs(across - led.current * 1.0 - vf) < 0.01, (vf, across, led.current)
    assert led.lit


def test_an_led_declared_past_its_supply_stays_dark(tmp_path):
    result = solve(tmp_path, 30.0)
    assert not result.components["led"].lit and result.components["led"].current < 1e-6, result.components["led"]
