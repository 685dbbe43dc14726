"""A relay that chatters, written here as a stranger wired a car's reversing lights (not shipped): a 12 V battery
with its internal resistance, a 10 A fuse, a relay whose coil hangs on the fused bus and whose contact feeds a
21 W lamp. A short across the lamp pulls the bus down, the coil lets go, the bus comes back, the coil pulls in
again: the state never settles. Damage was applied only where every one of the last solves called for it, so the
fuse, carrying 100 A in every other solve, held ("converged: NO", 109 A through a 10 A fuse, nothing damaged), and
the scenario generated from it was a lamp flickering. A chattering relay passes through each of those states in
turn: what any of them damages is damaged."""

from __future__ import annotations

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import state_from_turtle
from diagkg.sim.simulator import Simulator


def _part(name: str, kind: str, ports: tuple[str, str], extra: str) -> str:
    a, b = ports
    return (f":{name} a dk:{kind} ; dcterms:identifier \"{name}\" ; rdfs:label \"{name}\" ; dk:partOf :bay ; {extra}\n"
            f"    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :{name}.{a}, :{name}.{b} .\n"
            f":{name}.{a} a dk:Port ; dk:portName \"{a}\" .\n:{name}.{b} a dk:Port ; dk:portName \"{b}\" .\n")


HEAD = '''\
@prefix :        <https://example.org/reversing/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
'''

REVERSING = HEAD + '''
:reversing a dk:System ; dk:systemKey "reversing" ; dcterms:identifier "reversing" ; rdfs:label "Reversing light" ;
    dk:groundReference :bat.neg ; dcterms:description "A battery, a fuse, a relay and its coil, a reversing lamp." ;
    dk:hasCoupling :pull_in .
:bay a dk:Module ; dcterms:identifier "bay" ; rdfs:label "Bay" ; dk:partOf :reversing .
''' + "".join((
    _part("bat", "VoltageSource", ("pos", "neg"), "dk:voltage 12.0 ;"),
    _part("rint", "Resistor", ("p", "n"), "dk:resistance 0.1 ;"),
    _part("fuse", "Fuse", ("p", "n"), "dk:ratedCurrent 10.0 ;"),
    _part("coil", "Resistor", ("p", "n"), "dk:resistance 80.0 ;"),
    _part("relay", "Relay", ("p", "n"), "dk:normallyClosed false ;"),
    _part("lamp", "Bulb", ("p", "n"), "dk:resistance 6.86 ; dk:powerThreshold 5.0 ;"),
)) + '''
:pull_in a dk:SwitchingCoupling ; rdfs:label "the coil pulls the contact in" ; dk:drives :relay ;
    dk:closedWhen "abs(current('coil')) > 0.1" ; dk:activeByDefault true .
:bat.pos dk:connectedTo :rint.p .
:rint.n dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :coil.p, :relay.p .
:relay.n dk:connectedTo :lamp.p .
:coil.n dk:connectedTo :bat.neg .
:lamp.n dk:connectedTo :bat.neg .
'''

# a buzzer: the coil in series with the relay's own normally closed contact and a small lamp, nothing overloaded
BUZZER = HEAD + '''
:buzzer a dk:System ; dk:systemKey "buzzer" ; dcterms:identifier "buzzer" ; rdfs:label "Buzzer" ;
    dk:groundReference :bat.neg ; dcterms:description "A relay that opens its own coil's circuit." ;
    dk:hasCoupling :pull_in .
:bay a dk:Module ; dcterms:identifier "bay" ; rdfs:label "Bay" ; dk:partOf :buzzer .
''' + "".join((
    _part("bat", "VoltageSource", ("pos", "neg"), "dk:voltage 12.0 ;"),
    _part("fuse", "Fuse", ("p", "n"), "dk:ratedCurrent 1.0 ;"),
    _part("relay", "Relay", ("p", "n"), "dk:normallyClosed true ;"),
    _part("coil", "Resistor", ("p", "n"), "dk:resistance 80.0 ;"),
    _part("lamp", "Bulb", ("p", "n"), "dk:resistance 100.0 ; dk:powerThreshold 0.2 ;"),
)) + '''
:pull_in a dk:SwitchingCoupling ; rdfs:label "the coil pulls the contact open" ; dk:drives :relay ;
    dk:closedWhen "abs(current('coil')) < 0.01" ; dk:activeByDefault true .
:bat.pos dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :relay.p .
:relay.n dk:connectedTo :coil.p .
:coil.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :bat.neg .
'''


def _sim(tmp_path, key: str, text: str) -> Simulator:
    path = tmp_path / f"{key}.ttl"
    path.write_text(text)
    store = KnowledgeStore.memory()
    load_files(store, [path])
    return Simulator.from_store(store, key)


def test_a_fuse_a_chattering_relay_overloads_blows(tmp_path):
    sim = _sim(tmp_path, "reversing", REVERSING)
    nominal = sim.simulate()
    assert nominal.converged and nominal.lit == ("lamp",) and not nominal.damage
    state = state_from_turtle(HEAD + ":lamp dk:hasOverride [ a dk:ParameterValue ; dk:parameter dk:shortResistance ; "
                              "dk:value 0.01 ] .", "state.ttl", sim.skeleton)
    r = sim.simulate(state)
    # contact in: 12 V over little more than 0.1 + 0.01 ohm, about 90 A through the 10 A fuse, the bus at about 1 V
    # and the coil letting go
    assert [d.component for d in r.damage] == ["fuse"], r.damage
    assert abs(r.damage[0].current) > 5 * 10
    # with the fuse open everything is dark and the state settles
    assert r.converged and r.lit == () and abs(r.components["fuse"].current) < 1e-6
    assert r.live["closed:relay"] is False and abs(r.components["relay"].current) < 1e-6


def test_a_relay_that_chatters_unharmed_flickers_and_its_live_values_are_those_of_the_table(tmp_path):
    sim = _sim(tmp_path, "buzzer", BUZZER)
    r = sim.simulate()
    assert not r.converged and not r.damage and r.flickering == ("lamp",)
    # the contact's live value is the one the table was solved with: closed while current flows through it
    closed = abs(r.components["relay"].current) > 1e-3
    assert r.live["closed:relay"] is closed
