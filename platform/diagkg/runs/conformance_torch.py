"""The small system the conformance check (:mod:`diagkg.runs.conformance`) works on: a torch (a
battery, a switch, a bulb with its lead, a power LED with its resistor, a return lead, in one case)
with three scenarios (a budget of 30 rounds each, ample for nine parts), written as a user would write
them and loaded into a store of the check's own.

============  ======  ===============================================================
scenario      faults  what it is for
============  ======  ===============================================================
``CONF.T1``   1       a flat battery: a whole session
``CONF.T2``   1       the bulb lead off its terminal: a whole session
``CONF.T3``   2       both: hypotheses judged wrong, overbroad and partial
============  ======  ===============================================================
"""

from __future__ import annotations

from ..kg.loading import load_documents
from ..kg.rdfio import parse_text
from ..kg.store import KnowledgeStore

NS = "https://w3id.org/diagkg/conformance/torch/"
PREFIXES = f"""\
@prefix :        <{NS}> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
"""

SYSTEM = PREFIXES + '''
:torch a dk:System ; dk:systemKey "conformance_torch" ; dcterms:identifier "conformance_torch" ;
    rdfs:label "Torch (conformance check)" ; dk:groundReference :bat.neg ;
    dcterms:description """A 6 V battery feeds a bulb through a switch and a lead; a green LED with its resistor
shows that the battery is charged. A return lead closes the circuit. All in one case.""" .

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
'''

SCENARIO = """\
@prefix :        <https://w3id.org/diagkg/conformance/scenario/> .
@prefix sys:     <{ns}> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:{id} a dk:Scenario ; dk:scenarioNumber {number} ; dcterms:identifier "{id}" ; rdfs:label "{label}" ;
    dk:onSystem sys:torch ; dk:hasCategory dk:{category} ;
    {faults} ;
    dk:initialObservations "{symptoms}" ;
    dk:idealRepair [ a dk:RepairPlan ; {steps} ] ;
    dk:actionBudget 30 .
"""

FAULTS = {   # id -> (fault mode, target, faulty part, repair)
    "bat": ("DepletedBattery", "bat", "bat", "ReplaceComponent"),
    "lead": ("DetachedEnd", "lead.n", "lead", "ReconnectCable"),
}
SCENARIOS = (   # id, number, label, faults, symptoms
    ("CONF.T1", 9901, "Flat battery", ("bat",), "The torch stays dark when switched on, and the green LED is dark too."),
    ("CONF.T2", 9902, "Bulb lead off", ("lead",), "The torch stays dark when switched on, but the green LED is lit."),
    ("CONF.T3", 9903, "Flat battery and bulb lead off", ("bat", "lead"),
     "The torch stays dark when switched on, and the green LED is dark too."),
)
WHOLE_SESSIONS = ("CONF.T1", "CONF.T2")
TWO_FAULTS = "CONF.T3"


def scenario_text(id: str, number: int, label: str, faults: tuple[str, ...], symptoms: str) -> str:
    injects = " ;\n    ".join(f"dk:injects [ a dk:Fault ; dk:faultMode dk:{FAULTS[f][0]} ; dk:faultTarget sys:{FAULTS[f][1]} ]"
                               for f in faults)
    faulty = " ;\n    ".join(f"dk:faultyComponent sys:{FAULTS[f][2]}" for f in faults)
    steps = " ; ".join(f"dk:step [ a dk:DiagnosticAction ; dk:position {i} ; dk:actionType dk:{FAULTS[f][3]} ; "
                       f"dk:target sys:{FAULTS[f][2]} ]" for i, f in enumerate(faults, 1))
    return SCENARIO.format(ns=NS, id=id, number=number, label=label, symptoms=symptoms, steps=steps,
                           faults=injects + " ;\n    " + faulty, category="Simple" if len(faults) == 1 else "Double")


def load_torch(store: KnowledgeStore) -> None:
    """Load the torch and its scenarios into ``store`` (validated, as a user's files would be)."""
    docs = [(parse_text(SYSTEM, "conformance-torch.ttl"), "diagkg:conformance/torch.ttl")]
    docs += [(parse_text(scenario_text(*s), f"{s[0]}.ttl"), f"diagkg:conformance/{s[0]}.ttl") for s in SCENARIOS]
    load_documents(store, docs)
