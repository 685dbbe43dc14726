"""A water-pump controller written for the tests (not shipped): a 12 V battery, a 2 A fuse, a float switch driving a
relay coil, the relay's contact feeding the pump motor (a resistive load, typed a bulb: the lamp a session judges by)
through a lead, a pump-on LED with its resistor at the relay's output, a return lead; and scenarios on it."""

from __future__ import annotations

from pathlib import Path

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

PUMP = """\
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
    dk:initialObservations "The pump does not run." ; dk:faultyComponent {faulty} ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step {steps} ] ;
    dk:actionBudget {budget} .
"""
STEP = "[ a dk:DiagnosticAction ; dk:position {} ; dk:actionType dk:{} ; dk:target sys:{} ]"

FAULT = "[ a dk:Fault ; dk:faultMode dk:{} ; dk:faultTarget sys:{} ]"


def case(id: str, n: int, faults: list[tuple[str, str]], repairs: list[tuple[str, str]], budget: int = 6) -> str:
    """A scenario on the pump: ``faults`` (mode, target) injected, ``repairs`` (action type, part) its ideal repair,
    the parts they repair its faulty components."""
    return SCENARIO.format(id=id, n=n, budget=budget, faults=", ".join(FAULT.format(*f) for f in faults),
                           faulty=", ".join(f"sys:{part}" for _, part in repairs),
                           steps=", ".join(STEP.format(k, *r) for k, r in enumerate(repairs, 1)))


def pump_store(folder: Path, scenarios: list[str]) -> KnowledgeStore:
    """An in-memory store holding the pump and ``scenarios`` (Turtle, :func:`case`), written in ``folder``."""
    files = [folder / "feed.ttl"] + [folder / f"s{k}.ttl" for k in range(len(scenarios))]
    files[0].write_text(PUMP)
    for path, text in zip(files[1:], scenarios, strict=True):
        path.write_text(text)
    store = KnowledgeStore.memory()
    load_files(store, files)
    return store
