"""A cable's power includes the heat of the contacts its ends sit on (an outsider's car harness, written here).
Every end that can come off sits on its node through a 0.1 mOhm contact, which no component reported: a short
from the battery's terminal to the far end of a ground lead drew hundreds of amperes, the lead's two contacts
took watts (8.5 W of 206 A while a cable was never below 0.01 ohm, 11.7 W of 241 A since), and the sources
delivered 0.4 % more than the parts dissipated (the physics pages promise 0.1 %). The
cable's power is now what its port voltages and current say it takes; what its damage rules would read is not
changed."""

from __future__ import annotations

import random

import pytest

from diagkg.sim.circuit import NOMINAL

from ..support.physics import kirchhoff_violations, power_gap
from ..support.stores import simulator_of

SYSTEM = """\
@prefix :        <https://example.org/harness/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:harness a dk:System ; dk:systemKey "harness" ; dcterms:identifier "harness" ; rdfs:label "Harness" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A battery lights a lamp through a feed cable and a ground lead." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :harness .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12.6 ;
    dk:internalResistance 0.05 ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:feed a dk:Cable ; dcterms:identifier "feed" ; rdfs:label "Feed cable" ; dk:partOf :body ; dk:resistance 0.001 ;
    dk:affords dk:Detachable ; dk:hasPort :feed.p, :feed.n .
:feed.p a dk:Port ; dk:portName "p" .
:feed.n a dk:Port ; dk:portName "n" .
:lead a dk:Cable ; dcterms:identifier "lead" ; rdfs:label "Ground lead" ; dk:partOf :body ; dk:resistance 0.001 ;
    dk:affords dk:Detachable ; dk:hasPort :lead.p, :lead.n .
:lead.p a dk:Port ; dk:portName "p" .
:lead.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :body ; dk:resistance 28.8 ;
    dk:powerThreshold 1.0 ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :feed.p .
:feed.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :lead.n .
:lead.p dk:connectedTo :bat.neg .
"""


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    return simulator_of(tmp_path_factory.mktemp("harness") / "harness.ttl", SYSTEM, "harness")


@pytest.mark.parametrize("shorted", [False, True])
def test_the_sources_deliver_what_the_parts_take_and_a_cable_takes_what_its_ports_say(sim, shorted):
    state = NOMINAL.evolve(shorts=((("bat", "pos"), ("lead", "n"), 0.001),)) if shorted else NOMINAL
    result = sim.simulate(state, random.Random(0))
    assert kirchhoff_violations(sim.skeleton, state, result) == []
    delivered, dissipated, agree = power_gap(result)
    assert agree, (delivered, dissipated)
    lead = result.components["lead"]
    drop = abs((lead.port_v["n"] or 0.0) - (lead.port_v["p"] or 0.0))
    assert abs(lead.power - drop * abs(lead.current)) <= 1e-3 * lead.power
    if shorted:                                   # 12.6 V over the battery's 0.05 ohm, the short and the lead
        assert abs(lead.current) > 200
        assert lead.power > 2 * 1e-4 * lead.current ** 2        # its two contacts' heat is in it
