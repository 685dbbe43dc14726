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

:plate a dk:System ; dk:systemKey "plate" ; dcterms:identifier "plate" ; rdfs:label "Number plate lights" ;
    dk:groundReference :bat.neg ; dcterms:description "A 12 V battery lights white LEDs, each through 470 ohms." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :plate .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
"""
BRANCH = """
:r{k} a dk:Resistor ; dcterms:identifier "r{k}" ; rdfs:label "Series resistor {k}" ; dk:partOf :body ; dk:resistance 470 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r{k}.p, :r{k}.n .
:r{k}.p a dk:Port ; dk:portName "p" .
:r{k}.n a dk:Port ; dk:portName "n" .
:led{k} a dk:LED ; dcterms:identifier "led{k}" ; rdfs:label "Plate LED {k}" ; dk:partOf :body ; dk:forwardVoltage {vf} ;
    dk:color "white" ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :led{k}.anode, :led{k}.cathode .
:led{k}.anode a dk:Port ; dk:portName "anode" .
:led{k}.cathode a dk:Port ; dk:portName "cathode" .
:bat.pos dk:connectedTo :r{k}.p .
:r{k}.n dk:connectedTo :led{k}.anode .
:led{k}.cathode dk:connectedTo :bat.neg .
"""
FORWARD = (2.0, 3.0, 3.6, 30.0)      # one branch each, side by side on the battery


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    path = tmp_path_factory.mktemp("plate") / "plate.ttl"
    path.write_text(PLATE + "".join(BRANCH.format(k=k, vf=vf) for k, vf in enumerate(FORWARD)))
    store = KnowledgeStore.memory()
    load_files(store, [path])
    return simulator_for(store, "plate").simulate(NOMINAL, random.Random(0))


@pytest.mark.parametrize("k", [0, 1, 2])
def test_an_led_carries_about_its_forward_current_at_its_forward_voltage(solved, k):
    vf, led = FORWARD[k], solved.components[f"led{k}"]
    across = led.port_v["anode"] - led.port_v["cathode"]
    # 470 ohms take the rest of 12 V; at about its forward current (20 mA) the junction (behind the LED's own
    # 1 ohm) is about at its forward voltage: within 10 mV (N Vt ln(I / 20 mA), I within 15 % of 20 mA)
    assert abs(led.current - (12 - across) / 470) < 1e-6 and abs(led.current - 0.02) < 0.003
    assert abs(across - led.current * 1.0 - vf) < 0.01, (vf, across, led.current)
    assert led.lit


def test_an_led_declared_past_its_supply_stays_dark(solved):
    led = solved.components["led3"]
    assert not led.lit and led.current < 1e-6, led
