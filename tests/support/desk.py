"""A user's own system written for the llm-grounded tests (not shipped): a desk lamp whose
battery, resistor and switch sit in a base that opens by a panel or is turned over, so that
what can be done to a part depends on the physical state (the switch toggles only with the
panel open); and scenarios on it."""

from __future__ import annotations

from pathlib import Path

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

DESK = """\
@prefix :        <https://example.org/desk/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:desk a dk:System ; dk:systemKey "desk" ; dcterms:identifier "desk" ; rdfs:label "Desk lamp" ;
    dk:groundReference :cell.neg ;
    dcterms:description "A 9 V cell in the base feeds the bulb through a switch, a resistor and a flex." .
:stand a dk:Module ; dcterms:identifier "stand" ; rdfs:label "Stand" ; dk:partOf :desk .
:base a dk:Enclosure ; dcterms:identifier "base" ; rdfs:label "Lamp base" ; dk:partOf :stand ;
    dk:affords dk:Observable, dk:Movable .
:hatch a dk:InspectionPanel ; dcterms:identifier "hatch" ; rdfs:label "Back panel" ; dk:partOf :stand ;
    dk:containedIn :base ; dk:affords dk:Observable, dk:Reachable, dk:Openable .
:cell a dk:VoltageSource ; dcterms:identifier "cell" ; rdfs:label "9 V cell" ; dk:partOf :stand ; dk:voltage 9 ;
    dk:containedIn :base ; dk:affords dk:Measurable, dk:Replaceable ; dk:hasPort :cell.pos, :cell.neg ;
    dk:affordsWhen [ a dk:ConditionalAffordance ; dk:grants dk:Observable, dk:Reachable ;
        dk:whenAny [ a dk:StateCondition ; dk:onElement :base ; dk:inState dk:Inverted ] ] .
:cell.pos a dk:Port ; dk:portName "pos" .
:cell.neg a dk:Port ; dk:portName "neg" .
:res a dk:Resistor ; dcterms:identifier "res" ; rdfs:label "Series resistor" ; dk:partOf :stand ; dk:resistance 10 ;
    dk:containedIn :base ; dk:affords dk:Replaceable ; dk:hasPort :res.p, :res.n ;
    dk:affordsWhen [ a dk:ConditionalAffordance ; dk:grants dk:Reachable, dk:Measurable ;
        dk:whenAny [ a dk:StateCondition ; dk:onElement :hatch ; dk:inState dk:Open ] ] .
:res.p a dk:Port ; dk:portName "p" .
:res.n a dk:Port ; dk:portName "n" .
:switch a dk:Switch ; dcterms:identifier "switch" ; rdfs:label "Switch" ; dk:partOf :stand ; dk:normallyClosed true ;
    dk:containedIn :base ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :switch.p, :switch.n ;
    dk:affordsWhen [ a dk:ConditionalAffordance ; dk:grants dk:Togglable ;
        dk:whenAny [ a dk:StateCondition ; dk:onElement :hatch ; dk:inState dk:Open ] ] .
:switch.p a dk:Port ; dk:portName "p" .
:switch.n a dk:Port ; dk:portName "n" .
:flex a dk:Cable ; dcterms:identifier "flex" ; rdfs:label "Arm flex" ; dk:partOf :stand ; dk:resistance 0.1 ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :flex.p, :flex.n .
:flex.p a dk:Port ; dk:portName "p" .
:flex.n a dk:Port ; dk:portName "n" .
:bulb a dk:Bulb ; dcterms:identifier "bulb" ; rdfs:label "Bulb" ; dk:partOf :stand ; dk:resistance 90 ;
    dk:powerThreshold 0.1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :bulb.p, :bulb.n .
:bulb.p a dk:Port ; dk:portName "p" .
:bulb.n a dk:Port ; dk:portName "n" .
:cell.pos dk:connectedTo :switch.p .
:switch.n dk:connectedTo :res.p .
:res.n dk:connectedTo :flex.p .
:flex.n dk:connectedTo :bulb.p .
:bulb.n dk:connectedTo :cell.neg .
"""

SCENARIO = """\
@prefix :        <https://example.org/desk-scenarios/> .
@prefix sys:     <https://example.org/desk/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:{id} a dk:Scenario ; dk:scenarioNumber {number} ; dcterms:identifier "{id}" ; rdfs:label "{label}" ;
    dk:onSystem sys:desk ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:{mode} ; dk:faultTarget sys:{faulty} ] ;
    dk:initialObservations "The lamp stays dark when switched on." ;
    dk:faultyComponent sys:{faulty} ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:{faulty} ] ] ;
    dk:actionBudget 8 .
"""

BULB_OPEN = dict(id="DESK.1", number=9501, label="Bulb open", mode="OpenComponent", faulty="bulb")
CELL_FLAT = dict(id="DESK.2", number=9502, label="Cell flat", mode="DepletedBattery", faulty="cell")
NAMESPACE = "https://example.org/desk/"


def desk_memory_store(folder: Path) -> KnowledgeStore:
    """An in-memory store holding the desk lamp and its two scenarios (files written in ``folder``)."""
    files = [folder / "desk.ttl", folder / "d1.ttl", folder / "d2.ttl"]
    files[0].write_text(DESK)
    files[1].write_text(SCENARIO.format(**BULB_OPEN))
    files[2].write_text(SCENARIO.format(**CELL_FLAT))
    store = KnowledgeStore.memory()
    load_files(store, files)
    return store


# refusals a session gives before it looks at what a part affords (what the menu's kinds and types exclude)
STRUCTURAL = frozenset({"unknown-action", "target-count", "unknown-part", "removed-part", "target-kind",
                        "component-type", "missing-tool", "missing-value"})


def afforded(session, parts, actions=None) -> set[tuple[str, str]]:
    """The (action, part) pairs a real session carries out in its current state: every action
    on every part (each pair of parts for an action of two targets) tried and set back; a pair
    counts when it was not refused for its kind, its type or what it affords (a refusal after
    the action was carried out, by what it observes, still counts)."""
    from diagkg.env.actions import Action

    out = set()
    for aid, spec in session.catalogue.items():
        if actions is not None and aid not in actions:
            continue
        tries = [(p,) for p in parts] if spec.target_count == 1 else [(p, q) for p in parts for q in parts]
        for targets in tries:
            point = session.checkpoint()
            report, *_ = session.step(Action(aid, targets, 0.5 if spec.parameter else None))
            session.rollback(point)
            refusal = report["refusal"]
            if refusal == "not-afforded" or (refusal in STRUCTURAL and not report["executed"]):
                continue
            out.update((aid, t) for t in targets)
    return out
