"""A water-pump controller written here (not shipped): a 12 V battery, a 2 A fuse, a float switch driving a relay
coil, the relay's contact feeding the pump motor (a resistive load) through a lead, a pump-on LED. Two scenarios leave
the float switch at 0 V: a flat battery with the motor lead off, and a blown fuse. A meter shows both as 0 V; the typed
reading said ``-0.0`` for the first (the solver's -1e-39 V rounded) and ``0.0`` for the blown fuse (its 1e-6 V),
so the reports differed by the sign of a rounding, and the optimal policy told the two faults apart with one reading
no meter gives (the pump's optimum read 107.5 minutes, where an honest policy needs 110)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from diagkg.agents.optimal import outcome_key
from diagkg.env.actions import Action
from diagkg.env.service import Session
from diagkg.evaluation import optimum
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

FEED = """\
@prefix :        <https://example.org/feed/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:feed a dk:System ; dk:systemKey "feed" ; dcterms:identifier "feed" ; rdfs:label "Water-pump controller" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery feeds a float switch and relay coil; the relay feeds the pump motor and an LED." .

:ctrl a dk:Module ; dcterms:identifier "ctrl" ; rdfs:label "Controller" ; dk:partOf :feed .
:housing a dk:Enclosure ; dcterms:identifier "housing" ; rdfs:label "Controller housing" ; dk:partOf :feed ;
    dk:affords dk:Observable, dk:Movable .

:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "12 V battery" ; dk:partOf :ctrl ;
    dk:containedIn :housing ; dk:voltage 12 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .

:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "2 A fuse" ; dk:partOf :ctrl ;
    dk:ratedCurrent 2.0 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" .
:fuse.n a dk:Port ; dk:portName "n" .

:float_sw a dk:Switch ; dcterms:identifier "float_sw" ; rdfs:label "Float switch" ; dk:partOf :ctrl ;
    dk:normallyClosed true ; dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :float_sw.p, :float_sw.n .
:float_sw.p a dk:Port ; dk:portName "p" .
:float_sw.n a dk:Port ; dk:portName "n" .

:coil a dk:Resistor ; dcterms:identifier "coil" ; rdfs:label "Relay coil" ; dk:partOf :ctrl ;
    dk:resistance 120 ; dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :coil.p, :coil.n .
:coil.p a dk:Port ; dk:portName "p" .
:coil.n a dk:Port ; dk:portName "n" .

:relay a dk:Relay ; dcterms:identifier "relay" ; rdfs:label "Pump relay contact" ; dk:partOf :ctrl ;
    dk:normallyClosed false ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :relay.p, :relay.n .
:relay.p a dk:Port ; dk:portName "p" .
:relay.n a dk:Port ; dk:portName "n" .

:lead a dk:Cable ; dcterms:identifier "lead" ; rdfs:label "Motor lead" ; dk:partOf :ctrl ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lead.p, :lead.n .
:lead.p a dk:Port ; dk:portName "p" .
:lead.n a dk:Port ; dk:portName "n" .

:motor a dk:Bulb ; dcterms:identifier "motor" ; rdfs:label "Pump motor" ; dk:partOf :ctrl ;
    dk:resistance 12 ; dk:powerThreshold 1.0 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :motor.p, :motor.n .
:motor.p a dk:Port ; dk:portName "p" .
:motor.n a dk:Port ; dk:portName "n" .

:r_led a dk:Resistor ; dcterms:identifier "r_led" ; rdfs:label "LED resistor" ; dk:partOf :ctrl ;
    dk:resistance 680 ; dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r_led.p, :r_led.n .
:r_led.p a dk:Port ; dk:portName "p" .
:r_led.n a dk:Port ; dk:portName "n" .

:led a dk:LED ; dcterms:identifier "led" ; rdfs:label "Green pump-on LED" ; dk:partOf :ctrl ;
    dk:forwardVoltage 2.0 ; dk:color "green" ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :led.anode, :led.cathode .
:led.anode a dk:Port ; dk:portName "anode" .
:led.cathode a dk:Port ; dk:portName "cathode" .

:ret a dk:Cable ; dcterms:identifier "ret" ; rdfs:label "Return lead" ; dk:partOf :ctrl ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :ret.p, :ret.n .
:ret.p a dk:Port ; dk:portName "p" .
:ret.n a dk:Port ; dk:portName "n" .

:bat.pos dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :float_sw.p, :relay.p .
:float_sw.n dk:connectedTo :coil.p .
:coil.n dk:connectedTo :bat.neg .
:relay.n dk:connectedTo :lead.p, :r_led.p .
:lead.n dk:connectedTo :motor.p .
:r_led.n dk:connectedTo :led.anode .
:motor.n dk:connectedTo :ret.p .
:ret.n dk:connectedTo :bat.neg, :led.cathode .

:coil_drives_relay a dk:SwitchingCoupling ;
    rdfs:label "relay coil pulling in the pump relay" ;
    dk:drives :relay ;
    dk:closedWhen "abs(current('coil')) > 0.05" ; dk:activeByDefault true .
:feed dk:hasCoupling :coil_drives_relay .
"""

SCENARIO = """\
@prefix :        <https://example.org/feed-scenarios/> .
@prefix sys:     <https://example.org/feed/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
:{id} a dk:Scenario ; dk:scenarioNumber {n} ; dcterms:identifier "{id}" ; rdfs:label "{id}" ;
    dk:onSystem sys:feed ; dk:hasCategory dk:Simple ;
    dk:injects {faults} ;
    dk:initialObservations "The pump does not run." ; dk:faultyComponent sys:{part} ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:position 1 ;
        dk:actionType dk:ReplaceComponent ; dk:target sys:{part} ] ] ;
    dk:actionBudget 4 .
"""
FAULT = "[ a dk:Fault ; dk:faultMode dk:{} ; dk:faultTarget sys:{} ]"


def test_a_reading_rounded_to_zero_is_zero_whichever_fault_left_it(tmp_path: Path):
    files = [tmp_path / "feed.ttl", tmp_path / "flat.ttl", tmp_path / "blown.ttl"]
    files[0].write_text(FEED)
    files[1].write_text(SCENARIO.format(id="FEED.1", n=9601, part="bat", faults=FAULT.format("DepletedBattery", "bat") + ", "
                                        + FAULT.format("DetachedEnd", "lead.n")))
    files[2].write_text(SCENARIO.format(id="FEED.2", n=9602, part="fuse", faults=FAULT.format("BlownFuse", "fuse")))
    store = KnowledgeStore.memory()
    load_files(store, files)
    reports = []
    for scenario in optimum.scenarios_of(store, "feed"):
        session = Session(scenario, store, budget=4)
        session.reset(seed=0)
        out, *_ = session.step(Action("measure_voltage", ("float_sw",)))
        values = out["data"]["float_sw"]["port_voltages"]
        assert values == {"p": 0.0, "n": 0.0}
        assert all(math.copysign(1.0, v) == 1.0 for v in values.values())     # no -0.0
        assert "-0.0" not in json.dumps(out["data"], default=str)
        reports.append(outcome_key(out))
    assert reports[0] == reports[1]          # the same report: nothing a meter shows tells them apart
