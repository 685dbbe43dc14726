"""A fuse's and a current sensor's own resistance, as stated (an outsider's greenhouse controller, written here):
a fuse stating dk:resistance 2.0 and a current sensor's 0.5 ohm shunt were solved as 0.01 ohm each (their stamps
read dk:resistance only as a fault's override, while the docs said a fuse or current sensor is 0.01 ohm unless it
states dk:resistance), so the lamp behind them took 1.0 A instead of 0.83. They now read what they state; 0.01
ohm unless they state one, and a fault's override still wins (an open current sensor)."""

from __future__ import annotations

import random

import pytest

from diagkg.env.service import simulator_for
from diagkg.errors import ValidationError
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import NOMINAL

SYSTEM = """\
@prefix :        <https://example.org/tray/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:tray a dk:System ; dk:systemKey "tray" ; dcterms:identifier "tray" ; rdfs:label "Seed tray heater" ;
    dk:groundReference :bat.neg ;
    dcterms:description "Two lamps on a 12 V battery: one behind a slow fuse and a current shunt, one behind a plain fuse." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :tray .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:slow a dk:Fuse ; dcterms:identifier "slow" ; rdfs:label "Slow fuse" ; dk:partOf :body ; dk:ratedCurrent 5 ;
    dk:resistance {fuse} ; dk:hasPort :slow.p, :slow.n .
:slow.p a dk:Port ; dk:portName "p" .
:slow.n a dk:Port ; dk:portName "n" .
:shunt a dk:CurrentSensor ; dcterms:identifier "shunt" ; rdfs:label "Current shunt" ; dk:partOf :body ;
    dk:currentThreshold 3 ; dk:resistance 0.5 ; dk:hasPort :shunt.p, :shunt.n .
:shunt.p a dk:Port ; dk:portName "p" .
:shunt.n a dk:Port ; dk:portName "n" .
:heat a dk:Bulb ; dcterms:identifier "heat" ; rdfs:label "Heat lamp" ; dk:partOf :body ; dk:resistance 12 ;
    dk:powerThreshold 1 ; dk:hasPort :heat.p, :heat.n .
:heat.p a dk:Port ; dk:portName "p" .
:heat.n a dk:Port ; dk:portName "n" .
:plain a dk:Fuse ; dcterms:identifier "plain" ; rdfs:label "Plain fuse" ; dk:partOf :body ; dk:ratedCurrent 5 ;
    dk:hasPort :plain.p, :plain.n .
:plain.p a dk:Port ; dk:portName "p" .
:plain.n a dk:Port ; dk:portName "n" .
:grow a dk:Bulb ; dcterms:identifier "grow" ; rdfs:label "Grow lamp" ; dk:partOf :body ; dk:resistance 12 ;
    dk:powerThreshold 1 ; dk:hasPort :grow.p, :grow.n .
:grow.p a dk:Port ; dk:portName "p" .
:grow.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :slow.p, :plain.p .
:slow.n dk:connectedTo :shunt.p .
:shunt.n dk:connectedTo :heat.p .
:plain.n dk:connectedTo :grow.p .
:bat.neg dk:connectedTo :heat.n, :grow.n .
"""


def load(tmp_path, fuse) -> KnowledgeStore:
    path = tmp_path / "tray.ttl"
    path.write_text(SYSTEM.format(fuse=fuse))
    store = KnowledgeStore.memory()
    load_files(store, [path])
    return store


def test_a_fuse_and_a_current_sensor_have_the_resistance_they_state(tmp_path):
    sim = simulator_for(load(tmp_path, 2.0), "tray")
    result = sim.simulate(NOMINAL, random.Random(0))
    slow, shunt, plain = (result.components[c] for c in ("slow", "shunt", "plain"))
    stated = 12 / (2.0 + 0.5 + 12)                  # 0.828 A
    assert abs(slow.current - stated) < 1e-6 and abs(shunt.current - stated) < 1e-6
    assert abs(slow.power - stated ** 2 * 2.0) < 1e-6 and abs(shunt.port_v["p"] - shunt.port_v["n"] - 0.5 * stated) < 1e-6
    assert abs(plain.current - 12 / 12.01) < 1e-6    # states none: 0.01 ohm
    opened = sim.simulate(NOMINAL.evolve(overrides=(("shunt", "resistance", 1e9),)), random.Random(0))
    assert "heat" not in opened.lit and abs(opened.components["shunt"].current) < 1e-6 and "grow" in opened.lit


@pytest.mark.parametrize("fuse", [0, -1])
def test_a_fuse_resistance_of_zero_or_less_is_refused(tmp_path, fuse):
    with pytest.raises(ValidationError) as info:
        load(tmp_path, fuse)
    assert [(v.focus, v.path) for v in info.value.violations] == [(":slow", "dk:resistance")]
