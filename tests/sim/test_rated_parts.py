"""Diodes and resistors have ratings too, written here as a stranger rated a protected lamp (not shipped): a 12 V
battery, a protection diode rated 1 A, a 10 ohm resistor rated 20 W, a 12 ohm lamp. A stranger's diode bridge
carried 211 A at 198 W in each of two diodes, and two batteries 125 A through their 0.1 ohm internal resistances
(1.56 kW), and nothing was damaged: only lamps, LEDs and fuses had damage rules. A diode or resistor that states
``dk:maxCurrent`` or ``dk:maxPower`` now burns open above it (one that states neither, as every shipped one, is not
rated)."""

from __future__ import annotations

import pytest

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import state_from_turtle
from diagkg.sim.simulator import Simulator

RATED = '''\
@prefix :        <https://example.org/rated/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:rated a dk:System ; dk:systemKey "rated" ; dcterms:identifier "rated" ; rdfs:label "Protected lamp" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery lights a lamp through a protection diode rated 1 A and a 10 ohm resistor rated 20 W." .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :rated .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "12 V battery" ; dk:partOf :box ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:d a dk:Diode ; dcterms:identifier "d" ; rdfs:label "Protection diode" ; dk:partOf :box ; dk:forwardVoltage 0.7 ;
    dk:maxCurrent 1.0 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :d.anode, :d.cathode .
:d.anode a dk:Port ; dk:portName "anode" .
:d.cathode a dk:Port ; dk:portName "cathode" .
:r a dk:Resistor ; dcterms:identifier "r" ; rdfs:label "10 ohm resistor" ; dk:partOf :box ; dk:resistance 10 ; dk:maxPower 20 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r.p, :r.n .
:r.p a dk:Port ; dk:portName "p" .
:r.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :box ; dk:resistance 12 ; dk:powerThreshold 0.5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :d.anode .
:d.cathode dk:connectedTo :r.p .
:r.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :bat.neg .
'''

PREFIXES = "@prefix : <https://example.org/rated/> .\n@prefix dk: <https://w3id.org/diagkg/ontology#> .\n"
SHORTED_LAMP = PREFIXES + ":lamp dk:hasOverride [ a dk:ParameterValue ; dk:parameter dk:resistance ; dk:value 0.1 ] .\n"


def _sim(tmp_path, text: str) -> Simulator:
    (tmp_path / "rated.ttl").write_text(text)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "rated.ttl"])
    return Simulator.from_store(store, "rated")


def test_a_diode_past_its_rated_current_burns_open(tmp_path):
    sim = _sim(tmp_path, RATED)
    nominal = sim.simulate()
    assert nominal.lit == ("lamp",) and not nominal.damage
    assert nominal.components["d"].current == pytest.approx((12 - 0.7) / 22, rel=0.05)        # about 0.5 A: rated 1 A
    shorted = sim.simulate(state_from_turtle(SHORTED_LAMP, "state.ttl", sim.skeleton))
    assert [(d.component, d.state) for d in shorted.damage] == [("d", "burntOut")]
    assert shorted.damage[0].current == pytest.approx(1.1, rel=0.05)
    assert abs(shorted.components["r"].current) < 1e-6 and shorted.lit == ()                  # open: nothing flows


def test_a_resistor_past_its_rated_power_burns_open_and_an_unrated_one_never(tmp_path):
    sim = _sim(tmp_path, RATED.replace("dk:maxCurrent 1.0 ;", "dk:maxCurrent 2.0 ;").replace("dk:maxPower 20 ;",
                                                                                             "dk:maxPower 5 ;"))
    shorted = sim.simulate(state_from_turtle(SHORTED_LAMP, "state.ttl", sim.skeleton))
    assert [(d.component, d.state) for d in shorted.damage] == [("r", "burntOut")]            # 12 W, rated 5
    unrated = _sim(tmp_path, RATED.replace(" dk:maxCurrent 1.0 ;", "").replace(" dk:maxPower 20 ;", ""))
    assert not unrated.simulate(state_from_turtle(SHORTED_LAMP, "state.ttl", unrated.skeleton)).damage
