"""A user's bicycle lamp, written here and not shipped: a 6 V dynamo feeds a front lamp through a fuse and a
cable (one module). Its fuse's rating is a parameter, so that a test can replace the system with one whose fuse
is rated below what the lamp draws (0.3 A: blown as set up)."""

from __future__ import annotations

_SYSTEM = """\
@prefix :        <https://example.org/KEY/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:KEY a dk:System ; dk:systemKey "KEY" ; dcterms:identifier "KEY" ; rdfs:label "Bicycle lamp" ;
    dk:groundReference :dyn.neg ; dcterms:description "A dynamo feeds a lamp through a fuse and a cable." .
:frame a dk:Module ; dcterms:identifier "frame" ; rdfs:label "Frame" ; dk:partOf :KEY .
:dyn a dk:VoltageSource ; dcterms:identifier "dyn" ; rdfs:label "Dynamo" ; dk:partOf :frame ; dk:voltage 6 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :dyn.pos, :dyn.neg .
:dyn.pos a dk:Port ; dk:portName "pos" . :dyn.neg a dk:Port ; dk:portName "neg" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "Fuse" ; dk:partOf :frame ; dk:ratedCurrent RATING ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" . :fuse.n a dk:Port ; dk:portName "n" .
:cable a dk:Cable ; dcterms:identifier "cable" ; rdfs:label "Lamp cable" ; dk:partOf :frame ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :cable.p, :cable.n .
:cable.p a dk:Port ; dk:portName "p" . :cable.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Front lamp" ; dk:partOf :frame ; dk:resistance 15 ;
    dk:powerThreshold 0.5 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" . :lamp.n a dk:Port ; dk:portName "n" .
:dyn.pos dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :cable.p .
:cable.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :dyn.neg .
"""


def bike_lamp(key: str, rating: float = 1.0) -> str:
    """The lamp's system as Turtle, under the key ``key`` (its namespace ``https://example.org/KEY/``)."""
    return _SYSTEM.replace("KEY", key).replace("RATING", repr(rating))


_CABLE_OFF = """\
@prefix sys:     <https://example.org/KEY/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

<https://example.org/KEY-scenarios/SID> a dk:Scenario ; dk:scenarioNumber NUMBER ; dcterms:identifier "SID" ;
    rdfs:label "Cable off at the lamp" ; dk:onSystem sys:KEY ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:cable.n ] ;
    dk:initialObservations "The lamp stays dark." ; dk:faultyComponent sys:cable ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:position 1 ;
        dk:actionType dk:ReconnectCable ; dk:target sys:cable ] ] ;
    dk:actionBudget 6 .
"""


def cable_off(key: str, sid: str, number: int) -> str:
    """A scenario of the lamp ``key`` (:func:`bike_lamp`), identified ``sid`` and numbered ``number``: the cable's
    end at the lamp has come off (reconnecting the cable repairs it)."""
    return _CABLE_OFF.replace("KEY", key).replace("SID", sid).replace("NUMBER", str(number))
