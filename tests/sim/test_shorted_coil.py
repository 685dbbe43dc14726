"""A short across a relay's coil, declared either way (an outsider's greenhouse controller, a coil driving the
lamp relay, written here): the coil's 0.5 ohm short declared as the coil's own fault (dk:ShortedComponent, its
dk:shortResistance) kept the relay pulled in, where the same short declared between its two ports
(dk:ShortBetweenNodes) let it drop out. The coupling read current('coil') as everything entering the coil's
terminals, the short's 0.58 A included, where the winding carries 2.9 mA; and the coil's own damage rule
(maxCurrent 0.2 A) burnt it out on the short's current. The elements that bypass a part (dk:bypassesComponent) are
now left out of what its coupling and rules read; its port currents and power, what a meter in series reads, keep
them."""

from __future__ import annotations

import random

import pytest

from diagkg.sim.circuit import NOMINAL

from ..support.stores import simulator_of

SYSTEM = """\
@prefix :        <https://example.org/pump/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:pump a dk:System ; dk:systemKey "pump" ; dcterms:identifier "pump" ; rdfs:label "Pump lamp" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A battery feeds a relay coil through a resistor; the relay, pulled in, lights a lamp." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :pump .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:feed a dk:Resistor ; dcterms:identifier "feed" ; rdfs:label "Feed resistor" ; dk:partOf :body ; dk:resistance 20 ;
    dk:hasPort :feed.p, :feed.n .
:feed.p a dk:Port ; dk:portName "p" .
:feed.n a dk:Port ; dk:portName "n" .
:coil a dk:Resistor ; dcterms:identifier "coil" ; rdfs:label "Relay coil" ; dk:partOf :body ; dk:resistance 100 ;
    dk:maxCurrent 0.2 ; dk:hasPort :coil.p, :coil.n .
:coil.p a dk:Port ; dk:portName "p" .
:coil.n a dk:Port ; dk:portName "n" .
:relay a dk:Relay ; dcterms:identifier "relay" ; rdfs:label "Lamp relay" ; dk:partOf :body ; dk:normallyClosed false ;
    dk:hasPort :relay.p, :relay.n .
:relay.p a dk:Port ; dk:portName "p" .
:relay.n a dk:Port ; dk:portName "n" .
:pull_in a dk:SwitchingCoupling ; rdfs:label "the coil pulls the contact in" ; dk:drives :relay ;
    dk:closedWhen "abs(current('coil')) > 0.05" ; dk:activeByDefault true .
:pump dk:hasCoupling :pull_in .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :body ; dk:resistance 12 ;
    dk:powerThreshold 1 ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :feed.p, :relay.p .
:feed.n dk:connectedTo :coil.p .
:relay.n dk:connectedTo :lamp.p .
:bat.neg dk:connectedTo :coil.n, :lamp.n .
"""


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    return simulator_of(tmp_path_factory.mktemp("pump") / "pump.ttl", SYSTEM, "pump")


def test_the_working_relay_is_pulled_in(sim):
    result = sim.simulate(NOMINAL, random.Random(0))
    assert result.live["closed:relay"] and "lamp" in result.lit
    assert abs(result.components["coil"].current - 0.1) < 1e-6 and not result.damage


@pytest.mark.parametrize("declared", ["own", "between"])
def test_a_short_across_the_coil_lets_the_relay_drop_out_however_declared(sim, declared):
    if declared == "own":
        state = NOMINAL.evolve(overrides=(("coil", "shortResistance", 0.5),))
    else:
        state = NOMINAL.evolve(shorts=((("coil", "p"), ("coil", "n"), 0.5),))
    result = sim.simulate(state, random.Random(0))
    # 12 V over 20 ohms and 100 || 0.5 ohms: 0.585 A, of which the winding takes 0.5 / 100.5 = 2.9 mA
    total = 12 / (20 + 100 * 0.5 / 100.5)
    winding = total * 0.5 / 100.5
    assert not result.live["closed:relay"] and "lamp" not in result.lit
    assert not result.damage                       # 2.9 mA in a coil rated 0.2 A
    coil = result.components["coil"]
    if declared == "own":                          # a meter in series with the coil reads the short's current too
        assert abs(coil.current - total) < 1e-4 * total and abs(coil.own_current - winding) < 1e-4 * winding
    else:
        assert abs(coil.current - winding) < 1e-4 * winding
