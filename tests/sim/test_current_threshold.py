"""A current sensor's ``dk:currentThreshold`` against the coupling that trips on its current, written here (not
shipped): a lamp through a current sensor rated to trip at 2 A, whose coupling closes a relay lighting a red LED.
The threshold is read by no simulation (the coupling's condition trips); a stranger's sensor stated 5 A and its
coupling tripped at 0.5 A, and nothing said so. ``diagkg load`` now warns at the coupling's line."""

from __future__ import annotations

from pathlib import Path

from diagkg.kg.expressions import compile_expression, current_limits

from ..support.cli import run_cli

GUARD = '''\
@prefix :        <https://example.org/guard/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:guard a dk:System ; dk:systemKey "guard" ; dcterms:identifier "guard" ; rdfs:label "Overload guard" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A lamp through a current sensor; above 2 A the sensor's relay lights a red LED." .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :guard .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "12 V battery" ; dk:partOf :box ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:cs a dk:CurrentSensor ; dcterms:identifier "cs" ; rdfs:label "Current sensor" ; dk:partOf :box ; dk:currentThreshold 2.0 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :cs.p, :cs.n .
:cs.p a dk:Port ; dk:portName "p" .
:cs.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :box ; dk:resistance 12 ; dk:powerThreshold 0.5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:relay a dk:Relay ; dcterms:identifier "relay" ; rdfs:label "Overload relay" ; dk:partOf :box ; dk:normallyClosed false ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :relay.p, :relay.n .
:relay.p a dk:Port ; dk:portName "p" .
:relay.n a dk:Port ; dk:portName "n" .
:r_red a dk:Resistor ; dcterms:identifier "r_red" ; rdfs:label "LED resistor" ; dk:partOf :box ; dk:resistance 1000 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r_red.p, :r_red.n .
:r_red.p a dk:Port ; dk:portName "p" .
:r_red.n a dk:Port ; dk:portName "n" .
:red a dk:LED ; dcterms:identifier "red" ; rdfs:label "Red overload LED" ; dk:partOf :box ; dk:forwardVoltage 2.0 ; dk:color "red" ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :red.anode, :red.cathode .
:red.anode a dk:Port ; dk:portName "anode" .
:red.cathode a dk:Port ; dk:portName "cathode" .

:bat.pos dk:connectedTo :cs.p, :relay.p .
:cs.n dk:connectedTo :lamp.p .
:relay.n dk:connectedTo :r_red.p .
:r_red.n dk:connectedTo :red.anode .
:bat.neg dk:connectedTo :lamp.n, :red.cathode .

:trip a dk:SwitchingCoupling ; rdfs:label "the sensor closes the relay above 2 A" ;
    dk:drives :relay ; dk:closedWhen "abs(current('cs')) > 2.0" ; dk:activeByDefault true .
:guard dk:hasCoupling :trip .
'''


def test_the_currents_a_condition_compares_are_read():
    def limits(source: str) -> list[tuple[str, float]]:
        return current_limits(compile_expression(source, "test", ("current", "lit")))

    assert limits("abs(current('cs')) > 2.0") == [("cs", 2.0)]
    assert limits("0.5 <= current('cs') and lit('red')") == [("cs", 0.5)]
    assert limits("abs(current('cs')) > 2 * 1.0") == []          # a number worked out: not compared


def test_a_coupling_tripping_elsewhere_than_the_sensors_threshold_is_warned_of(tmp_path: Path):
    (tmp_path / "guard.ttl").write_text(GUARD)
    r = run_cli("--store", str(tmp_path / "a"), "load", str(tmp_path / "guard.ttl"))
    assert r.returncode == 0 and "threshold:" not in r.stderr, r.stderr
    bad = GUARD.replace('> 2.0"', '> 0.5"')
    assert bad != GUARD
    (tmp_path / "bad.ttl").write_text(bad)
    r = run_cli("--store", str(tmp_path / "b"), "load", str(tmp_path / "bad.ttl"))
    line = bad.splitlines().index(next(x for x in bad.splitlines() if x.startswith(":trip "))) + 1
    assert r.returncode == 0, r.stderr
    assert f"bad.ttl:{line}: guard: threshold: trip trips on current('cs') at 0.5 A, where cs states " \
           "dk:currentThreshold 2 A" in r.stderr, r.stderr
