"""A user's own system, written here and not shipped: a workshop lamp of 15 parts in two
modules (a supply box and a lamp head). A 12 V battery feeds, through a 2 A fuse and a
switch, two lamps in parallel over a pair of cables; a green LED with its resistor shows that
the supply is on, and a protection diode sits in the feed."""

from __future__ import annotations

WORKSHOP = """\
@prefix :        <https://example.org/workshop/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:workshop a dk:System ; dk:systemKey "workshop" ; dcterms:identifier "workshop" ; rdfs:label "Workshop lamp" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery feeds two lamps through a fuse, a switch, a diode and cables; an LED shows power." .

:supply a dk:Module ; dcterms:identifier "supply" ; rdfs:label "Supply box" ; dk:partOf :workshop .
:head a dk:Module ; dcterms:identifier "head" ; rdfs:label "Lamp head" ; dk:partOf :workshop .

:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "12 V battery" ; dk:partOf :supply ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" . :bat.neg a dk:Port ; dk:portName "neg" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "2 A fuse" ; dk:partOf :supply ; dk:ratedCurrent 2 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" . :fuse.n a dk:Port ; dk:portName "n" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Lamp switch" ; dk:partOf :supply ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" . :sw.n a dk:Port ; dk:portName "n" .
:dio a dk:Diode ; dcterms:identifier "dio" ; rdfs:label "Protection diode" ; dk:partOf :supply ; dk:forwardVoltage 0.7 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :dio.anode, :dio.cathode .
:dio.anode a dk:Port ; dk:portName "anode" . :dio.cathode a dk:Port ; dk:portName "cathode" .
:r_led a dk:Resistor ; dcterms:identifier "r_led" ; rdfs:label "LED resistor" ; dk:partOf :supply ; dk:resistance 1000 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r_led.p, :r_led.n .
:r_led.p a dk:Port ; dk:portName "p" . :r_led.n a dk:Port ; dk:portName "n" .
:led a dk:LED ; dcterms:identifier "led" ; rdfs:label "Supply LED" ; dk:partOf :supply ; dk:forwardVoltage 2.0 ;
    dk:color "green" ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :led.anode, :led.cathode .
:led.anode a dk:Port ; dk:portName "anode" . :led.cathode a dk:Port ; dk:portName "cathode" .
:feed a dk:Cable ; dcterms:identifier "feed" ; rdfs:label "Feed cable" ; dk:partOf :supply ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :feed.p, :feed.n .
:feed.p a dk:Port ; dk:portName "p" . :feed.n a dk:Port ; dk:portName "n" .
:ret a dk:Cable ; dcterms:identifier "ret" ; rdfs:label "Return cable" ; dk:partOf :supply ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :ret.p, :ret.n .
:ret.p a dk:Port ; dk:portName "p" . :ret.n a dk:Port ; dk:portName "n" .
:lamp_a a dk:Bulb ; dcterms:identifier "lamp_a" ; rdfs:label "Left lamp" ; dk:partOf :head ; dk:resistance 29 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :lamp_a.p, :lamp_a.n .
:lamp_a.p a dk:Port ; dk:portName "p" . :lamp_a.n a dk:Port ; dk:portName "n" .
:lamp_b a dk:Bulb ; dcterms:identifier "lamp_b" ; rdfs:label "Right lamp" ; dk:partOf :head ; dk:resistance 29 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :lamp_b.p, :lamp_b.n .
:lamp_b.p a dk:Port ; dk:portName "p" . :lamp_b.n a dk:Port ; dk:portName "n" .
:lead_a a dk:Cable ; dcterms:identifier "lead_a" ; rdfs:label "Left lamp lead" ; dk:partOf :head ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lead_a.p, :lead_a.n .
:lead_a.p a dk:Port ; dk:portName "p" . :lead_a.n a dk:Port ; dk:portName "n" .
:lead_b a dk:Cable ; dcterms:identifier "lead_b" ; rdfs:label "Right lamp lead" ; dk:partOf :head ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lead_b.p, :lead_b.n .
:lead_b.p a dk:Port ; dk:portName "p" . :lead_b.n a dk:Port ; dk:portName "n" .

:bat.pos dk:connectedTo :fuse.p, :r_led.p .
:r_led.n dk:connectedTo :led.anode .
:led.cathode dk:connectedTo :bat.neg .
:fuse.n dk:connectedTo :sw.p .
:sw.n dk:connectedTo :dio.anode .
:dio.cathode dk:connectedTo :feed.p .
:feed.n dk:connectedTo :lead_a.p, :lead_b.p .
:lead_a.n dk:connectedTo :lamp_a.p .
:lead_b.n dk:connectedTo :lamp_b.p .
:lamp_a.n dk:connectedTo :ret.p .
:lamp_b.n dk:connectedTo :ret.p .
:ret.n dk:connectedTo :bat.neg .
"""
