"""A user's car rear-light system, written from the README and not shipped: a 12 V battery
feeds two tail bulbs, a green indicator LED and a white number-plate LED (3.0 V, with its
470 ohm resistor) through a 5 A fuse, a switch, a protection diode and a harness. With a
scenario whose shorted tail lamp blows the fuse."""

from __future__ import annotations

from pathlib import Path

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

REAR = """\
@prefix :        <https://example.org/rear/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:rear a dk:System ; dk:systemKey "rear" ; dcterms:identifier "rear" ; rdfs:label "Car rear lights" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery feeds two tail bulbs, a green indicator and a white plate LED through a fuse, \
a switch, a protection diode and a harness." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :rear .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" . :bat.neg a dk:Port ; dk:portName "neg" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "5 A fuse" ; dk:partOf :body ; dk:ratedCurrent {rating} ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" . :fuse.n a dk:Port ; dk:portName "n" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Light switch" ; dk:partOf :body ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" . :sw.n a dk:Port ; dk:portName "n" .
:dio a dk:Diode ; dcterms:identifier "dio" ; rdfs:label "Protection diode" ; dk:partOf :body ; dk:forwardVoltage 0.7 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :dio.anode, :dio.cathode .
:dio.anode a dk:Port ; dk:portName "anode" . :dio.cathode a dk:Port ; dk:portName "cathode" .
:harness a dk:Cable ; dcterms:identifier "harness" ; rdfs:label "Harness" ; dk:partOf :body ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :harness.p, :harness.n .
:harness.p a dk:Port ; dk:portName "p" . :harness.n a dk:Port ; dk:portName "n" .
:tail_l a dk:Bulb ; dcterms:identifier "tail_l" ; rdfs:label "Left tail bulb" ; dk:partOf :body ; dk:resistance 29 ;
    dk:powerThreshold 1 ;{tail_rating}
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :tail_l.p, :tail_l.n .
:tail_l.p a dk:Port ; dk:portName "p" . :tail_l.n a dk:Port ; dk:portName "n" .
:tail_r a dk:Bulb ; dcterms:identifier "tail_r" ; rdfs:label "Right tail bulb" ; dk:partOf :body ; dk:resistance 29 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :tail_r.p, :tail_r.n .
:tail_r.p a dk:Port ; dk:portName "p" . :tail_r.n a dk:Port ; dk:portName "n" .
:r_green a dk:Resistor ; dcterms:identifier "r_green" ; rdfs:label "Indicator resistor" ; dk:partOf :body ;
    dk:resistance 1000 ; dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r_green.p, :r_green.n .
:r_green.p a dk:Port ; dk:portName "p" . :r_green.n a dk:Port ; dk:portName "n" .
:green a dk:LED ; dcterms:identifier "green" ; rdfs:label "Green indicator" ; dk:partOf :body ; dk:forwardVoltage 2.0 ;
    dk:color "green" ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :green.anode, :green.cathode .
:green.anode a dk:Port ; dk:portName "anode" . :green.cathode a dk:Port ; dk:portName "cathode" .
:r_plate a dk:Resistor ; dcterms:identifier "r_plate" ; rdfs:label "Plate LED resistor" ; dk:partOf :body ;
    dk:resistance 470 ; dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r_plate.p, :r_plate.n .
:r_plate.p a dk:Port ; dk:portName "p" . :r_plate.n a dk:Port ; dk:portName "n" .
:plate a dk:LED ; dcterms:identifier "plate" ; rdfs:label "Plate LED" ; dk:partOf :body ;
    dk:forwardVoltage {plate_vf} ; dk:color "white" ;{plate_rating}
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :plate.anode, :plate.cathode .
:plate.anode a dk:Port ; dk:portName "anode" . :plate.cathode a dk:Port ; dk:portName "cathode" .

:bat.pos dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :sw.p .
:sw.n dk:connectedTo :dio.anode .
:dio.cathode dk:connectedTo :harness.p .
:harness.n dk:connectedTo :tail_l.p, :tail_r.p, :r_green.p, :r_plate.p .
:r_green.n dk:connectedTo :green.anode .
:r_plate.n dk:connectedTo :plate.anode .
:tail_l.n dk:connectedTo :bat.neg .
:tail_r.n dk:connectedTo :bat.neg .
:green.cathode dk:connectedTo :bat.neg .
:plate.cathode dk:connectedTo :bat.neg .
"""


def rear_text(rating: float = 5, plate_vf: float = 3.0, plate_rating: str = "", tail_rating: str = "") -> str:
    """The rear-light system: ``rating`` of its fuse (A), the plate LED's forward voltage, and
    extra statements (e.g. `` dk:maxCurrent 0.01 ;``) for the plate LED and the left tail bulb."""
    return REAR.format(rating=rating, plate_vf=plate_vf, plate_rating=plate_rating, tail_rating=tail_rating)


SHORTED_TAIL = """\
@prefix :        <https://example.org/rear-scenarios/> .
@prefix sys:     <https://example.org/rear/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:REAR.1 a dk:Scenario ;
    dk:scenarioNumber 9301 ;
    dcterms:identifier "REAR.1" ;
    rdfs:label "Shorted tail lamp" ;
    dk:onSystem sys:rear ;
    dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:ShortedComponent ; dk:faultTarget sys:tail_l ; dk:faultValue 0.01 ] ;
    dk:initialObservations "Every rear light is dark." ;
    dk:statedSymptom [ dk:about sys:tail_r ; dk:appearance dk:Dark ] ;
    dk:faultyComponent sys:tail_l, sys:fuse ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:tail_l ] ,
            [ a dk:DiagnosticAction ; dk:position 2 ; dk:actionType dk:ReplaceComponent ; dk:target sys:fuse ] ] ;
    dk:actionBudget 10 .
"""


OPEN_TAIL = """\
@prefix :        <https://example.org/rear-scenarios/> .
@prefix sys:     <https://example.org/rear/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:REAR.2 a dk:Scenario ;
    dk:scenarioNumber 9302 ;
    dcterms:identifier "REAR.2" ;
    rdfs:label "Burned right tail lamp" ;
    dk:onSystem sys:rear ;
    dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:tail_r ] ;
    dk:initialObservations "The right tail lamp stays dark." ;
    dk:faultyComponent sys:tail_r ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:tail_r ] ] ;
    dk:actionBudget 10 .
"""


def rear_memory_store(folder: Path, **system: object) -> KnowledgeStore:
    """An in-memory store holding the rear-light system (see :func:`rear_text`) and its two
    scenarios, a shorted tail lamp (REAR.1) and a burned one (REAR.2) (files written in ``folder``)."""
    files = [folder / "rear.ttl", folder / "rear-1.ttl", folder / "rear-2.ttl"]
    files[0].write_text(rear_text(**system))     # type: ignore[arg-type]
    files[1].write_text(SHORTED_TAIL)
    files[2].write_text(OPEN_TAIL)
    store = KnowledgeStore.memory()
    load_files(store, files)
    return store
