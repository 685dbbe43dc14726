"""A user's LED torch, written here and not shipped: a 4.5 V cell lights a white LED (its only light, declared
``dk:isIndicator false``: an LED is an indicator otherwise) through a switch and a resistor. The LED affords no
measurement."""

from __future__ import annotations

LED_TORCH = """\
@prefix :        <https://example.org/ledtorch/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:ledtorch a dk:System ; dk:systemKey "ledtorch" ; dcterms:identifier "ledtorch" ; rdfs:label "LED torch" ;
    dk:groundReference :cell.neg ;
    dcterms:description "A 4.5 V cell lights a white LED through a switch and a resistor." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :ledtorch .
:cell a dk:VoltageSource ; dcterms:identifier "cell" ; rdfs:label "Cell" ; dk:partOf :body ; dk:voltage 4.5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :cell.pos, :cell.neg .
:cell.pos a dk:Port ; dk:portName "pos" . :cell.neg a dk:Port ; dk:portName "neg" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Switch" ; dk:partOf :body ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Replaceable ; dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" . :sw.n a dk:Port ; dk:portName "n" .
:r a dk:Resistor ; dcterms:identifier "r" ; rdfs:label "Resistor" ; dk:partOf :body ; dk:resistance 47 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r.p, :r.n .
:r.p a dk:Port ; dk:portName "p" . :r.n a dk:Port ; dk:portName "n" .
:led a dk:LED ; dcterms:identifier "led" ; rdfs:label "White LED" ; dk:partOf :body ; dk:forwardVoltage 3.0 ;
    dk:color "white" ; dk:isIndicator false ;
    dk:affords dk:Observable, dk:Reachable, dk:Replaceable ; dk:hasPort :led.anode, :led.cathode .
:led.anode a dk:Port ; dk:portName "anode" . :led.cathode a dk:Port ; dk:portName "cathode" .
:cell.pos dk:connectedTo :sw.p .
:sw.n dk:connectedTo :r.p .
:r.n dk:connectedTo :led.anode .
:led.cathode dk:connectedTo :cell.neg .
"""
