"""A state file that opens or closes a part with no contact is refused (an outsider's tail lamp, written here):
`:lamp dk:isClosed true` in `diagkg simulate --state` was taken and ignored, so a misplaced position (meant for the
switch beside the lamp) showed the circuit as if it had not been written. A switch's position is read as before."""

from __future__ import annotations

import random

import pytest

from diagkg.errors import InputError
from diagkg.sim.circuit import state_from_turtle

from ..support.stores import simulator_of

SYSTEM = """\
@prefix :        <https://example.org/sw/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:sw_sys a dk:System ; dk:systemKey "sw_sys" ; dcterms:identifier "sw_sys" ; rdfs:label "Switched lamp" ;
    dk:groundReference :bat.neg ; dcterms:description "A battery lights a lamp through a switch, open as set up." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :sw_sys .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Switch" ; dk:partOf :body ; dk:normallyClosed false ;
    dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" .
:sw.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :body ; dk:resistance 28.8 ;
    dk:powerThreshold 1 ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :sw.p .
:sw.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :bat.neg .
"""

STATE = """\
@prefix : <https://example.org/sw/> .
@prefix dk: <https://w3id.org/diagkg/ontology#> .
:{part} dk:{prop} true .
"""


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    return simulator_of(tmp_path_factory.mktemp("sw") / "sw.ttl", SYSTEM, "sw_sys")


def test_the_switch_closed_lights_the_lamp(sim):
    state = state_from_turtle(STATE.format(part="sw", prop="isClosed"), "closed.ttl", sim.skeleton)
    assert "lamp" in sim.simulate(state, random.Random(0)).lit


@pytest.mark.parametrize("prop", ["isClosed", "forcedClosed"])
def test_a_lamp_closed_is_refused(sim, prop):
    with pytest.raises(InputError, match=r"lamp is a Bulb, with no contact"):
        state_from_turtle(STATE.format(part="lamp", prop=prop), "lamp.ttl", sim.skeleton)
