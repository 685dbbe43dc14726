"""A fuse protects what is behind it (an outsider's car tail-light feed, written here): a 12.6 V battery of 0.05 ohm
feeds a reverse-polarity diode rated 6 A, a 5 A fuse and a 28.8 ohm tail lamp rated 10 W. A short from the lamp's
feed to 0 V draws about 97 A: the fuse is 19 times past its rating, the diode 16 times. Parts of different types
were damaged in the same round, so the diode burnt out beside the fuse, and replacing the blown fuse (what the
fault calls for) left the lamp dark for good. A damage state declared dk:failsFirst (dk:blown) now happens first:
the fuse blows alone, the circuit is solved again, and the diode, its current gone, holds. Without a fuse the diode
still burns out, and damage of other types that does not involve a fuse still happens in the same round."""

from __future__ import annotations

import random

import pytest

from diagkg.sim.circuit import NOMINAL

from ..support.stores import simulator_of

SYSTEM = """\
@prefix :        <https://example.org/tail/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:tail a dk:System ; dk:systemKey "tail" ; dcterms:identifier "tail" ; rdfs:label "Tail light feed" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A car battery feeds a tail lamp through a reverse-polarity diode and a fuse." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :tail .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12.6 ;
    dk:internalResistance 0.05 ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:d_rev a dk:Diode ; dcterms:identifier "d_rev" ; rdfs:label "Reverse-polarity diode" ; dk:partOf :body ;
    dk:forwardVoltage 0.7 ; dk:forwardCurrent 1.0 ; dk:maxCurrent 6.0 ; dk:hasPort :d_rev.anode, :d_rev.cathode .
:d_rev.anode a dk:Port ; dk:portName "anode" .
:d_rev.cathode a dk:Port ; dk:portName "cathode" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "5 A fuse" ; dk:partOf :body ; dk:ratedCurrent 5.0 ;
    dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" .
:fuse.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Tail lamp" ; dk:partOf :body ; dk:resistance 28.8 ;
    dk:powerThreshold 1.0 ; dk:maxPower 10 ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :d_rev.anode .
:d_rev.cathode dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :lamp.p .
:bat.neg dk:connectedTo :lamp.n .
"""


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    return simulator_of(tmp_path_factory.mktemp("tail") / "tail.ttl", SYSTEM, "tail")


SHORT = (("lamp", "p"), ("lamp", "n"), 0.001)


def test_the_working_lamp_is_lit_and_nothing_is_damaged(sim):
    result = sim.simulate(NOMINAL, random.Random(0))
    assert "lamp" in result.lit and not result.damage
    assert 0.40 < result.components["lamp"].current < 0.42          # (12.6 - 0.7) / 28.8


def test_a_short_blows_the_fuse_and_the_diode_behind_it_holds(sim):
    result = sim.simulate(NOMINAL.evolve(shorts=(SHORT,)), random.Random(0))
    assert [(d.component, d.state) for d in result.damage] == [("fuse", "blown")]
    assert abs(result.damage[0].current) > 19 * 5.0              # about 97 A through 0.05 + 0.01 + 0.001 ohm and the diode
    assert result.converged and not result.lit
    assert all(abs(c.current) < 1e-6 for c in result.components.values())


def test_the_fuse_replaced_after_the_short_is_gone_lights_the_lamp_again(sim):
    damaged = sim.simulate(NOMINAL.evolve(shorts=(SHORT,)), random.Random(0))
    state = NOMINAL.evolve(damaged={(d.component, d.state) for d in damaged.damage} - {("fuse", "blown")})
    assert "lamp" in sim.simulate(state, random.Random(0)).lit      # the diode was not left burnt out


def test_without_a_fuse_the_diode_still_burns_out(sim):
    bridged = NOMINAL.evolve(shorts=(SHORT, (("fuse", "p"), ("fuse", "n"), 1e-4)),
                             damaged={("fuse", "blown")})
    result = sim.simulate(bridged, random.Random(0))
    assert [(d.component, d.state) for d in result.damage] == [("d_rev", "burntOut")]
