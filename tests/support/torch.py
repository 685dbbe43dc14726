"""A user's own system, written here and not shipped: a torch (battery, switch, bulb, power LED,
two leads), scenarios on it, and a scenario on a shipped system."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox

from diagkg.kg.loading import load_files, origin_of
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK

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


_LOADED_FROM = ox.NamedNode(str(DK.loadedFrom))
_LOADED: dict[tuple[str, ...], tuple[list[ox.Quad], dict[str, str]]] = {}     # texts -> quads, origin -> file name


def torch_memory_store(folder: Path) -> KnowledgeStore:
    """An in-memory store holding the torch and its two scenarios (files written in ``folder``).

    The files are validated and loaded (SHACL, reasoning) once per process; later stores get a copy of
    what that load wrote, with each graph's ``dk:loadedFrom`` naming the files written in ``folder``, as
    a load of them would (the texts are the cache's key: a changed text is loaded afresh)."""
    texts = (TORCH, scenario_text(**FLAT), scenario_text(**LOOSE_LEAD))
    files = [folder / "torch.ttl", folder / "t1.ttl", folder / "t2.ttl"]
    for f, text in zip(files, texts, strict=True):
        f.write_text(text)
    store = KnowledgeStore.memory()
    if texts not in _LOADED:
        load_files(store, files)
        _LOADED[texts] = (list(store.raw.quads_for_pattern(None, None, None, None)),
                          {origin_of(f): f.name for f in files})
        return store
    quads, names = _LOADED[texts]
    fresh: dict[ox.BlankNode, ox.BlankNode] = {}      # blank nodes of their own, as a load makes
    store.raw.extend(_copied(q, names, folder, fresh) for q in quads)
    return store


def _copied(q: ox.Quad, names: dict[str, str], folder: Path, fresh: dict[ox.BlankNode, ox.BlankNode]) -> ox.Quad:
    """``q`` with fresh blank nodes, its ``dk:loadedFrom`` naming the file of that name in ``folder``."""
    s, o = q.subject, q.object
    if not isinstance(s, ox.BlankNode) and not isinstance(o, (ox.BlankNode, ox.Literal)):
        return q
    if isinstance(s, ox.BlankNode):
        s = fresh.setdefault(s, ox.BlankNode())
    if isinstance(o, ox.BlankNode):
        o = fresh.setdefault(o, ox.BlankNode())
    elif q.predicate == _LOADED_FROM and isinstance(o, ox.Literal) and o.value in names:
        o = ox.Literal(origin_of(folder / names[o.value]))
    return ox.Quad(s, q.predicate, o, q.graph_name)


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
