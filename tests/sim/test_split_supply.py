"""A split supply written here as a hobbyist wires a ±9 V rail (not shipped): two 9 V batteries in series, 0 V taken
at their junction, an upper lamp from +9 V to 0 V and a lower one from 0 V to -9 V, each behind its own fuse and
switch contact, and an LED across the whole 18 V. Voltages below 0 V are read as such; the 0 V lead carries
nothing while the two lamps match, so it may come off and both stay lit; ``diagkg simulate`` showed the
lead's ends as -0.000 V, and took a system's key only (a file written a minute ago now too)."""

from __future__ import annotations

import pytest

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import state_from_turtle
from diagkg.sim.simulator import Simulator

from ..support.cli import run_cli

SPLIT = '''\
# A split supply, as a hobbyist wires a ±9 V rail: two 9 V batteries in series,
# 0 V taken at their junction. The upper lamp hangs from +9 V to 0 V, the lower
# one from 0 V to -9 V, each behind its own fuse; one switch breaks both rails;
# a red LED across the whole 18 V shows that both batteries are in.
@prefix :        <https://example.org/split/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:split a dk:System ; dk:systemKey "split" ; dcterms:identifier "split" ; rdfs:label "Split-rail lamp pair" ;
    dk:groundReference :bat_hi.neg ;
    dcterms:description """Two 9 V batteries in series give +9 V and -9 V around a 0 V junction. An upper lamp
runs from +9 V through fuse_hi to 0 V, a lower lamp from 0 V through fuse_lo to -9 V. A double switch (two contacts,
sw_hi and sw_lo) breaks both rails. A red LED and its resistor across the full 18 V show both batteries are in.""" .

:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :split .

:bat_hi a dk:VoltageSource ; dcterms:identifier "bat_hi" ; rdfs:label "Upper 9 V battery" ; dk:partOf :box ; dk:voltage 9 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat_hi.pos, :bat_hi.neg .
:bat_hi.pos a dk:Port ; dk:portName "pos" .
:bat_hi.neg a dk:Port ; dk:portName "neg" .
:bat_lo a dk:VoltageSource ; dcterms:identifier "bat_lo" ; rdfs:label "Lower 9 V battery" ; dk:partOf :box ; dk:voltage 9 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat_lo.pos, :bat_lo.neg .
:bat_lo.pos a dk:Port ; dk:portName "pos" .
:bat_lo.neg a dk:Port ; dk:portName "neg" .
:fuse_hi a dk:Fuse ; dcterms:identifier "fuse_hi" ; rdfs:label "Upper fuse, 1 A" ; dk:partOf :box ; dk:ratedCurrent 1 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse_hi.p, :fuse_hi.n .
:fuse_hi.p a dk:Port ; dk:portName "p" .
:fuse_hi.n a dk:Port ; dk:portName "n" .
:fuse_lo a dk:Fuse ; dcterms:identifier "fuse_lo" ; rdfs:label "Lower fuse, 1 A" ; dk:partOf :box ; dk:ratedCurrent 1 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse_lo.p, :fuse_lo.n .
:fuse_lo.p a dk:Port ; dk:portName "p" .
:fuse_lo.n a dk:Port ; dk:portName "n" .
:sw_hi a dk:Switch ; dcterms:identifier "sw_hi" ; rdfs:label "Switch, upper contact" ; dk:partOf :box ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :sw_hi.p, :sw_hi.n .
:sw_hi.p a dk:Port ; dk:portName "p" .
:sw_hi.n a dk:Port ; dk:portName "n" .
:sw_lo a dk:Switch ; dcterms:identifier "sw_lo" ; rdfs:label "Switch, lower contact" ; dk:partOf :box ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :sw_lo.p, :sw_lo.n .
:sw_lo.p a dk:Port ; dk:portName "p" .
:sw_lo.n a dk:Port ; dk:portName "n" .
:lamp_hi a dk:Bulb ; dcterms:identifier "lamp_hi" ; rdfs:label "Upper lamp" ; dk:partOf :box ;
    dk:resistance 40 ; dk:powerThreshold 0.5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lamp_hi.p, :lamp_hi.n .
:lamp_hi.p a dk:Port ; dk:portName "p" .
:lamp_hi.n a dk:Port ; dk:portName "n" .
:lamp_lo a dk:Bulb ; dcterms:identifier "lamp_lo" ; rdfs:label "Lower lamp" ; dk:partOf :box ;
    dk:resistance 40 ; dk:powerThreshold 0.5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lamp_lo.p, :lamp_lo.n .
:lamp_lo.p a dk:Port ; dk:portName "p" .
:lamp_lo.n a dk:Port ; dk:portName "n" .
:r_led a dk:Resistor ; dcterms:identifier "r_led" ; rdfs:label "LED resistor" ; dk:partOf :box ; dk:resistance 1500 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r_led.p, :r_led.n .
:r_led.p a dk:Port ; dk:portName "p" .
:r_led.n a dk:Port ; dk:portName "n" .
:led a dk:LED ; dcterms:identifier "led" ; rdfs:label "Red rail LED" ; dk:partOf :box ; dk:forwardVoltage 2.0 ; dk:color "red" ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :led.anode, :led.cathode .
:led.anode a dk:Port ; dk:portName "anode" .
:led.cathode a dk:Port ; dk:portName "cathode" .
:mid a dk:Cable ; dcterms:identifier "mid" ; rdfs:label "0 V lead" ; dk:partOf :box ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Detachable, dk:Replaceable ; dk:hasPort :mid.p, :mid.n .
:mid.p a dk:Port ; dk:portName "p" .
:mid.n a dk:Port ; dk:portName "n" .

# the rails: bat_lo.neg (-9) | bat_lo.pos = bat_hi.neg (0 V) | bat_hi.pos (+9)
:bat_lo.pos dk:connectedTo :bat_hi.neg .
:bat_hi.pos dk:connectedTo :fuse_hi.p, :r_led.p .
:fuse_hi.n dk:connectedTo :sw_hi.p .
:sw_hi.n dk:connectedTo :lamp_hi.p .
:bat_hi.neg dk:connectedTo :mid.p .
:mid.n dk:connectedTo :lamp_hi.n, :lamp_lo.p .
:lamp_lo.n dk:connectedTo :sw_lo.p .
:sw_lo.n dk:connectedTo :fuse_lo.p .
:fuse_lo.n dk:connectedTo :bat_lo.neg .
:r_led.n dk:connectedTo :led.anode .
:led.cathode dk:connectedTo :bat_lo.neg .
'''

PREFIXES = "@prefix : <https://example.org/split/> .\n@prefix dk: <https://w3id.org/diagkg/ontology#> .\n"


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Simulator:
    path = tmp_path_factory.mktemp("split") / "split.ttl"
    path.write_text(SPLIT)
    store = KnowledgeStore.memory()
    load_files(store, [path])
    return Simulator.from_store(store, "split")


def test_the_rails_sit_either_side_of_0_v_and_the_currents_balance(sim):
    r = sim.simulate()
    c = r.components
    assert set(r.lit) == {"lamp_hi", "lamp_lo", "led"}
    assert c["bat_lo"].port_v["neg"] == pytest.approx(-9.0, abs=1e-3) and c["bat_hi"].port_v["pos"] == pytest.approx(9.0, abs=1e-3)
    assert c["lamp_lo"].port_v["n"] < -8.9 < 8.9 < c["lamp_hi"].port_v["p"]
    # the current law at the 0 V junction: what the upper lamp brings down, the lower one takes on
    assert c["lamp_hi"].current == pytest.approx(c["lamp_lo"].current, rel=1e-6)
    assert abs(c["mid"].current) < 1e-6
    # power balance: the batteries give what the parts take
    given = -(c["bat_hi"].current * 9.0 + c["bat_lo"].current * 9.0)
    taken = sum(x.power for cid, x in c.items() if not cid.startswith("bat"))
    assert given == pytest.approx(taken, rel=1e-3)


def test_the_0_v_lead_off_leaves_both_lamps_lit_in_series(sim):
    r = sim.simulate(state_from_turtle(PREFIXES + ":mid.n dk:detached true .", "state.ttl", sim.skeleton))
    assert {"lamp_hi", "lamp_lo"} <= set(r.lit)
    assert r.components["lamp_hi"].current == pytest.approx(r.components["lamp_lo"].current, rel=1e-6)


def test_simulate_shows_no_negative_zero(tmp_path):
    path = tmp_path / "split.ttl"
    path.write_text(SPLIT)
    r = run_cli("--memory", "simulate", str(path))
    assert r.returncode == 0, r.stderr
    assert "-0.000" not in r.stdout and "neg=-9.000" in r.stdout, r.stdout
    # a file is simulated in a scratch copy of the store: recording into the store needs it loaded first
    recorded = run_cli("--memory", "simulate", str(path), "--record")
    assert recorded.returncode != 0 and "load" in recorded.stderr
    # and a file that does not validate says where, and why
    bad = tmp_path / "bad.ttl"
    bad.write_text(SPLIT.replace("dk:resistance 1500", "dk:resistance -1500"))
    refused = run_cli("--memory", "simulate", str(bad))
    assert refused.returncode != 0 and ":r_led" in refused.stdout + refused.stderr
