"""A diode's declared forward voltage and current at their extremes (an outsider's greenhouse controller, a relay
coil's flyback diode and a blocking diode, written here): a diode declared at 24 V (a stack of them, or a
suppressor) stopped every solve of its system with "math range error" (its saturation current I / (e^x - 1) computed
e^x past a float's range, from about 18 V for a diode, 33 V for an LED); and a diode (not an LED) declared with
dk:forwardCurrent 0 passed validation and then stopped every solve with "float division by zero"."""

from __future__ import annotations

import random

import pytest

from diagkg.env.service import simulator_for
from diagkg.errors import ValidationError
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import NOMINAL

SYSTEM = """\
@prefix :        <https://example.org/coil/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:coil a dk:System ; dk:systemKey "coil" ; dcterms:identifier "coil" ; rdfs:label "Coil and lamp" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery feeds a lamp through a blocking diode; a suppressor diode and an LED sit across it." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :coil .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:block a dk:Diode ; dcterms:identifier "block" ; rdfs:label "Blocking diode" ; dk:partOf :body ;
    dk:forwardVoltage 0.8 ; dk:forwardCurrent {current} ; dk:hasPort :block.anode, :block.cathode .
:block.anode a dk:Port ; dk:portName "anode" .
:block.cathode a dk:Port ; dk:portName "cathode" .
:tvs a dk:Diode ; dcterms:identifier "tvs" ; rdfs:label "Suppressor" ; dk:partOf :body ;
    dk:forwardVoltage {stack} ; dk:hasPort :tvs.anode, :tvs.cathode .
:tvs.anode a dk:Port ; dk:portName "anode" .
:tvs.cathode a dk:Port ; dk:portName "cathode" .
:r a dk:Resistor ; dcterms:identifier "r" ; rdfs:label "LED resistor" ; dk:partOf :body ; dk:resistance 470 ;
    dk:hasPort :r.p, :r.n .
:r.p a dk:Port ; dk:portName "p" .
:r.n a dk:Port ; dk:portName "n" .
:led a dk:LED ; dcterms:identifier "led" ; rdfs:label "Tall LED" ; dk:partOf :body ; dk:forwardVoltage 40 ;
    dk:hasPort :led.anode, :led.cathode .
:led.anode a dk:Port ; dk:portName "anode" .
:led.cathode a dk:Port ; dk:portName "cathode" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :body ; dk:resistance 12 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :block.anode, :tvs.anode, :r.p .
:r.n dk:connectedTo :led.anode .
:block.cathode dk:connectedTo :lamp.p .
:bat.neg dk:connectedTo :lamp.n, :tvs.cathode, :led.cathode .
"""


def load(tmp_path, **values) -> KnowledgeStore:
    path = tmp_path / "coil.ttl"
    path.write_text(SYSTEM.format(**values))
    store = KnowledgeStore.memory()
    load_files(store, [path])
    return store


def test_a_diode_declared_at_a_high_forward_voltage_is_solved(tmp_path):
    result = simulator_for(load(tmp_path, current=2.0, stack=24), "coil").simulate(NOMINAL, random.Random(0))
    assert result.error is None and result.converged
    tvs, led, lamp = (result.components[c] for c in ("tvs", "led", "lamp"))
    # 12 V across a 24 V diode and (with 470 ohms) a 40 V LED: neither conducts; the lamp behind the 0.8 V diode
    # (2 A at 0.8 V: about 0.76 V at its ~1 A) lights
    assert abs(tvs.current) < 1e-6 and abs(led.current) < 1e-6 and not led.lit
    assert lamp.lit and 0.9 < lamp.current < 0.95 and abs(lamp.current - lamp.port_v["p"] / 12) < 1e-6


@pytest.mark.parametrize("current", [0, -1])
def test_a_diode_forward_current_of_zero_or_less_is_refused(tmp_path, current):
    with pytest.raises(ValidationError) as info:
        load(tmp_path, current=current, stack=0.7)
    assert [(v.focus, v.path) for v in info.value.violations] == [(":block", "dk:forwardCurrent")]
