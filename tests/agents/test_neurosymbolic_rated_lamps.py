"""A user's car lights, written here (not shipped): lamps whose labels carry their rating in brackets
("Left reversing lamp (21 W)"), and a relay whose contact feeds the reversing lamps, closed by the current of a
coil that the reverse switch energises. Every loose connection the generator places on it (18 scenarios).

* A report is read with its asides in brackets left out, and a name was read as its label's words: "Brake lamp
  (21 W) is flickering" named no light, so no light was said to come and go (the typed lights of the start say
  each lit or dark at one moment) and the loose ends were sought among everything (``whole_names``).
* A relay a switching coupling drives was taken to be opened by its own current, whatever the coupling reads:
  each reversing lamp then depended on the other, a lamp seen lit vouched for nothing its twin needs, and a
  loose end in the coil's circuit was sought among the lamps first (``load_switched``).
"""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.runs.runner import run_session

from ..support.circuits import with_generated

SYSTEM = """\
@prefix :        <https://example.org/tow/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:tow a dk:System ; dk:systemKey "tow" ; dcterms:identifier "tow" ; rdfs:label "Trailer lights" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery feeds a brake lamp through the pedal switch, and two reversing lamps through \
the contact of a relay whose coil the reverse switch energises." .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :tow .
:back a dk:Module ; dcterms:identifier "back" ; rdfs:label "Back" ; dk:partOf :tow .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :box ; dk:voltage 12.0 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" . :bat.neg a dk:Port ; dk:portName "neg" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "Main fuse" ; dk:partOf :box ; dk:ratedCurrent 10.0 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" . :fuse.n a dk:Port ; dk:portName "n" .
:pedal a dk:Switch ; dcterms:identifier "pedal" ; rdfs:label "Pedal switch" ; dk:partOf :box ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :pedal.p, :pedal.n .
:pedal.p a dk:Port ; dk:portName "p" . :pedal.n a dk:Port ; dk:portName "n" .
:gear a dk:Switch ; dcterms:identifier "gear" ; rdfs:label "Reverse switch" ; dk:partOf :box ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :gear.p, :gear.n .
:gear.p a dk:Port ; dk:portName "p" . :gear.n a dk:Port ; dk:portName "n" .
:coil a dk:Resistor ; dcterms:identifier "coil" ; rdfs:label "Relay coil" ; dk:partOf :box ; dk:resistance 80.0 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :coil.p, :coil.n .
:coil.p a dk:Port ; dk:portName "p" . :coil.n a dk:Port ; dk:portName "n" .
:relay a dk:Relay ; dcterms:identifier "relay" ; rdfs:label "Relay contact" ; dk:partOf :box ; dk:normallyClosed false ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :relay.p, :relay.n .
:relay.p a dk:Port ; dk:portName "p" . :relay.n a dk:Port ; dk:portName "n" .
:brake a dk:Bulb ; dcterms:identifier "brake" ; rdfs:label "Brake lamp (21 W)" ; dk:partOf :back ; dk:resistance 6.86 ;
    dk:powerThreshold 5.0 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :brake.p, :brake.n .
:brake.p a dk:Port ; dk:portName "p" . :brake.n a dk:Port ; dk:portName "n" .
:rev_l a dk:Bulb ; dcterms:identifier "rev_l" ; rdfs:label "Left reversing lamp (21 W)" ; dk:partOf :back ;
    dk:resistance 6.86 ; dk:powerThreshold 5.0 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :rev_l.p, :rev_l.n .
:rev_l.p a dk:Port ; dk:portName "p" . :rev_l.n a dk:Port ; dk:portName "n" .
:rev_r a dk:Bulb ; dcterms:identifier "rev_r" ; rdfs:label "Right reversing lamp (21 W)" ; dk:partOf :back ;
    dk:resistance 6.86 ; dk:powerThreshold 5.0 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :rev_r.p, :rev_r.n .
:rev_r.p a dk:Port ; dk:portName "p" . :rev_r.n a dk:Port ; dk:portName "n" .
:coil_closes a dk:SwitchingCoupling ; rdfs:label "coil current closing the relay" ; dk:drives :relay ;
    dk:closedWhen "abs(current('coil')) > 0.1" ; dk:activeByDefault true .
:tow dk:hasCoupling :coil_closes .
:bat.pos dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :pedal.p, :gear.p, :relay.p .
:pedal.n dk:connectedTo :brake.p .
:gear.n dk:connectedTo :coil.p .
:relay.n dk:connectedTo :rev_l.p, :rev_r.p .
:bat.neg dk:connectedTo :brake.n, :coil.n, :rev_l.n, :rev_r.n .
"""
SOLVED = ("success", "success_no_hypothesis")


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    store = with_generated(tmp_path_factory.mktemp("tow"), "tow", SYSTEM, frozenset({"LooseConnectionFault"}))
    catalog = ScenarioCatalog(store)
    numbers = {catalog.resolve(n).label: n for n in catalog.numbers() if catalog.resolve(n).key == "tow"}
    assert len(numbers) == 18

    def run(**config: bool) -> dict[str, tuple[bool, float]]:
        out = {}
        for label, n in numbers.items():
            # the report's words alone (the lights it states as data, stated_lights, would say what they fail to)
            result = run_session(n, NeuroSymbolic(**{"stated_lights": False, **config}), store=store, seed=0, record=False,
                                 keep_ledger=False)
            out[label] = (result.end in SOLVED, result.cost)
        return out
    return run


def test_a_name_with_its_rating_in_brackets_is_read_and_a_coil_driven_relay_keeps_its_lamps_apart(sessions):
    on = sessions()
    assert all(solved for solved, _ in on.values()), on
    # without whole_names no light is said to come and go: 8 of the 18 ran out of rounds when written
    names_off = sessions(whole_names=False)
    assert sum(solved for solved, _ in names_off.values()) <= len(on) - 6, names_off
    # without load_switched every one is still solved, but a loose end in the coil's circuit costs more (the lamps
    # were tested first): 225-255 minutes, where 135-165 find it
    switched_off = sessions(load_switched=False)
    coil_circuit = [label for label in on if label.startswith(("Loose connection on Relay", "Loose connection on Reverse"))]
    assert len(coil_circuit) == 6
    assert all(switched_off[label][1] >= on[label][1] + 60 for label in coil_circuit), (on, switched_off)
    assert sum(cost for _, cost in switched_off.values()) > sum(cost for _, cost in on.values())
