"""A user's own system, written here and not shipped: a torch (battery, switch, bulb, power LED,
two leads), scenarios on it, and a scenario on a shipped system."""

from __future__ import annotations

from pathlib import Path

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

TORCH = """\
@prefix :        <https://example.org/torch/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:torch a dk:System ; dk:systemKey "torch" ; dcterms:identifier "torch" ; rdfs:label "Torch" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 6 V battery feeds a bulb through a switch and a lead; a green LED with its resistor shows that the battery is charged. A return lead closes the circuit. All in one case." .

:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :torch .
:case a dk:Enclosure ; dcterms:identifier "case" ; rdfs:label "Torch case" ; dk:partOf :torch ;
    dk:affords dk:Observable, dk:Movable .

:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "6 V battery" ; dk:partOf :body ;
    dk:containedIn :case ; dk:voltage 6 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .

:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Torch switch" ; dk:partOf :body ;
    dk:normallyClosed true ; dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" .
:sw.n a dk:Port ; dk:portName "n" .

:lead a dk:Cable ; dcterms:identifier "lead" ; rdfs:label "Bulb lead" ; dk:partOf :body ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lead.p, :lead.n .
:lead.p a dk:Port ; dk:portName "p" .
:lead.n a dk:Port ; dk:portName "n" .

:bulb a dk:Bulb ; dcterms:identifier "bulb" ; rdfs:label "Torch bulb" ; dk:partOf :body ;
    dk:resistance 60 ; dk:powerThreshold 0.1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :bulb.p, :bulb.n .
:bulb.p a dk:Port ; dk:portName "p" .
:bulb.n a dk:Port ; dk:portName "n" .

:r_led a dk:Resistor ; dcterms:identifier "r_led" ; rdfs:label "LED resistor" ; dk:partOf :body ;
    dk:resistance 330 ; dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r_led.p, :r_led.n .
:r_led.p a dk:Port ; dk:portName "p" .
:r_led.n a dk:Port ; dk:portName "n" .

:led a dk:LED ; dcterms:identifier "led" ; rdfs:label "Green power LED" ; dk:partOf :body ;
    dk:forwardVoltage 2.0 ; dk:color "green" ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :led.anode, :led.cathode .
:led.anode a dk:Port ; dk:portName "anode" .
:led.cathode a dk:Port ; dk:portName "cathode" .

:ret a dk:Cable ; dcterms:identifier "ret" ; rdfs:label "Return lead" ; dk:partOf :body ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :ret.p, :ret.n .
:ret.p a dk:Port ; dk:portName "p" .
:ret.n a dk:Port ; dk:portName "n" .

:bat.pos dk:connectedTo :sw.p, :r_led.p .
:sw.n dk:connectedTo :lead.p .
:lead.n dk:connectedTo :bulb.p .
:r_led.n dk:connectedTo :led.anode .
:bulb.n dk:connectedTo :ret.p .
:ret.n dk:connectedTo :bat.neg, :led.cathode .
"""

SCENARIO = """\
@prefix :        <https://example.org/torch-scenarios/> .
@prefix sys:     <https://example.org/torch/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:{id} a dk:Scenario ;
    dk:scenarioNumber {number} ;
    dcterms:identifier "{id}" ;
    rdfs:label "{label}" ;
    dk:onSystem sys:{system} ;
    dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:{mode} ; dk:faultTarget sys:{target} ] ;
    dk:initialObservations "{symptoms}" ;
    dk:faultyComponent sys:{faulty} ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:{repair} ; dk:target sys:{faulty} ] ] ;
    dk:actionBudget 10 .
"""


def scenario_text(**kw) -> str:
    return SCENARIO.format(**kw).replace("<https://example.org/torch/>",
                                         kw.get("ns", "<https://example.org/torch/>"))


FLAT = dict(id="TORCH.1", number=9101, label="Flat battery", system="torch", mode="DepletedBattery",
            target="bat", faulty="bat", repair="ReplaceComponent",
            symptoms="The torch stays dark when switched on, and the green LED is dark too.")
LOOSE_LEAD = dict(id="TORCH.2", number=9102, label="Bulb lead off", system="torch", mode="DetachedEnd",
                  target="lead.n", faulty="lead", repair="ReconnectCable",
                  symptoms="The torch stays dark when switched on, but the green LED is lit.")
ON_SHIPPED = dict(id="MINE.3CC.1", number=9201, label="Main bulb open", system="three_cubes",
                  mode="OpenComponent", target="main_bulb", faulty="main_bulb", repair="ReplaceComponent",
                  ns="<https://w3id.org/diagkg/system/three_cubes/>",
                  symptoms="With the switch closed the main lamp stays dark; both LEDs are lit.")


def torch_memory_store(folder: Path) -> KnowledgeStore:
    """An in-memory store holding the torch and its two scenarios (files written in ``folder``)."""
    files = [folder / "torch.ttl", folder / "t1.ttl", folder / "t2.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(scenario_text(**FLAT))
    files[2].write_text(scenario_text(**LOOSE_LEAD))
    store = KnowledgeStore.memory()
    load_files(store, files)
    return store


ONE_FAULT = """\
@prefix :        <https://example.org/torch-scenarios/> .
@prefix sys:     <https://example.org/torch/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:{id} a dk:Scenario ;
    dk:scenarioNumber {number} ;
    dcterms:identifier "{id}" ;
    rdfs:label "{label}" ;
    dk:onSystem sys:torch ;
    dk:hasCategory dk:{category} ;
    dk:injects [ a dk:Fault ; {fault} ] ;
    dk:initialObservations "{symptoms}" ;
    dk:faultyComponent {faulty} ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:{repair} ; dk:target sys:{part} ] ] ;
    dk:actionBudget 10 .
"""


def short_scenario(ident: str, number: int, a: str, b: str, label: str, symptoms: str) -> str:
    """A scenario on the torch: a short between ports ``a`` and ``b`` (``part.port``)."""
    part_a, part_b = a.split(".")[0], b.split(".")[0]
    return ONE_FAULT.format(id=ident, number=number, label=label, symptoms=symptoms, category="Simple",
                            fault=f"dk:faultMode dk:ShortBetweenNodes ; dk:faultTarget sys:{a} ; dk:otherTarget sys:{b}",
                            faulty=f"sys:{part_a}, sys:{part_b}", repair="ReplaceComponent", part=part_a)


def loose_scenario(ident: str, number: int, target: str, repair: str, label: str, symptoms: str) -> str:
    """A scenario on the torch: port ``target`` (``part.port``) makes contact now and then (probability 0.5),
    repaired by ``repair`` (an action type) on its part."""
    part = target.split(".")[0]
    return ONE_FAULT.format(id=ident, number=number, label=label, symptoms=symptoms, category="Intermittent",
                            fault=f"dk:faultMode dk:LooseConnectionFault ; dk:faultTarget sys:{target} ; "
                                  "dk:probability 0.5",
                            faulty=f"sys:{part}", repair=repair, part=part)
