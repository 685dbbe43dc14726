"""A light barrier, written as a stranger would (not shipped): a transmitter box (9 V battery, 1 A fuse, switch,
emitter LED and its resistor) 20 cm from a receiver box (a photoresistor in a divider; a relay closed by a
:class:`dk:SwitchingCoupling` while the divider's middle is above 4 V lights the green "beam OK" lamp); the
emitter's light reaches the photoresistor through an optical coupling active by default, blocked when either
box is turned."""

BARRIER = '''\
# A light barrier, as a hobbyist would describe it: a transmitter box with a
# battery, a fuse, a switch and an emitter LED faces a receiver box 20 cm away.
# The receiver's photoresistor sits in a divider; while the divider's middle is
# above 4 V a relay closes and lights the green "beam OK" lamp.
@prefix :        <https://example.org/barrier/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos:    <http://www.w3.org/2004/02/skos/core#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:barrier a dk:System ;
    dk:systemKey "barrier" ; dcterms:identifier "barrier" ;
    rdfs:label "Light barrier" ;
    dk:groundReference :bat.neg ;
    dcterms:description """A transmitter box holds a 9 V battery, a 1 A fuse, an on/off switch and a red emitter
LED with its resistor. Twenty centimetres away a receiver box holds a photoresistor in a divider with a fixed
resistor; a relay closes while the divider's middle is above 4 V and lights a green lamp: the beam is intact.
A two-wire link carries the supply from the transmitter to the receiver.""" .

:tx a dk:Module ; dcterms:identifier "tx" ; rdfs:label "Transmitter" ; dk:partOf :barrier .
:rx a dk:Module ; dcterms:identifier "rx" ; rdfs:label "Receiver" ; dk:partOf :barrier .
:tx_box a dk:Enclosure ; dcterms:identifier "tx_box" ; rdfs:label "Transmitter box" ; dk:partOf :tx ;
    dk:affords dk:Observable, dk:Reachable, dk:Movable ; dk:xPosition 0.0 ; dk:yPosition 0.0 ; dk:zPosition 0.0 .
:rx_box a dk:Enclosure ; dcterms:identifier "rx_box" ; rdfs:label "Receiver box" ; dk:partOf :rx ;
    dk:affords dk:Observable, dk:Reachable, dk:Movable ; dk:xPosition 0.2 ; dk:yPosition 0.0 ; dk:zPosition 0.0 .

:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "9 V battery" ; dk:partOf :tx ; dk:containedIn :tx_box ;
    dk:voltage 9 ; dk:affords dk:Observable, dk:Measurable, dk:Reachable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" .
:bat.neg a dk:Port ; dk:portName "neg" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "1 A fuse" ; dk:partOf :tx ; dk:containedIn :tx_box ;
    dk:ratedCurrent 1.0 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" .
:fuse.n a dk:Port ; dk:portName "n" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "On/off switch" ; dk:partOf :tx ; dk:containedIn :tx_box ;
    dk:normallyClosed true ; dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" .
:sw.n a dk:Port ; dk:portName "n" .
:tx_r a dk:Resistor ; dcterms:identifier "tx_r" ; rdfs:label "Emitter resistor" ; dk:partOf :tx ; dk:containedIn :tx_box ;
    dk:resistance 330 ; dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :tx_r.p, :tx_r.n .
:tx_r.p a dk:Port ; dk:portName "p" .
:tx_r.n a dk:Port ; dk:portName "n" .
:tx_led a dk:LED ; dcterms:identifier "tx_led" ; rdfs:label "Emitter LED" ; dk:partOf :tx ; dk:containedIn :tx_box ;
    dk:forwardVoltage 2.0 ; dk:color "red" ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable, dk:Coverable ;
    dk:hasPort :tx_led.anode, :tx_led.cathode .
:tx_led.anode a dk:Port ; dk:portName "anode" .
:tx_led.cathode a dk:Port ; dk:portName "cathode" .
:link_pos a dk:Cable ; dcterms:identifier "link_pos" ; rdfs:label "Link, + wire" ; dk:partOf :tx ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Detachable, dk:Replaceable ; dk:hasPort :link_pos.p, :link_pos.n .
:link_pos.p a dk:Port ; dk:portName "p" ; dk:containedIn :tx_box .
:link_pos.n a dk:Port ; dk:portName "n" ; dk:containedIn :rx_box .
:link_neg a dk:Cable ; dcterms:identifier "link_neg" ; rdfs:label "Link, - wire" ; dk:partOf :tx ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Detachable, dk:Replaceable ; dk:hasPort :link_neg.p, :link_neg.n .
:link_neg.p a dk:Port ; dk:portName "p" ; dk:containedIn :tx_box .
:link_neg.n a dk:Port ; dk:portName "n" ; dk:containedIn :rx_box .

:ldr a dk:LightSensor ; dcterms:identifier "ldr" ; rdfs:label "Photoresistor" ; dk:partOf :rx ; dk:containedIn :rx_box ;
    dk:darkResistance 100000 ; dk:litResistance 1000 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable, dk:Coverable ;
    dk:hasPort :ldr.p, :ldr.n .
:ldr.p a dk:Port ; dk:portName "p" .
:ldr.n a dk:Port ; dk:portName "n" .
:rx_r a dk:Resistor ; dcterms:identifier "rx_r" ; rdfs:label "Divider resistor" ; dk:partOf :rx ; dk:containedIn :rx_box ;
    dk:resistance 1000 ; dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :rx_r.p, :rx_r.n .
:rx_r.p a dk:Port ; dk:portName "p" .
:rx_r.n a dk:Port ; dk:portName "n" .
:relay a dk:Relay ; dcterms:identifier "relay" ; rdfs:label "Beam relay" ; dk:partOf :rx ; dk:containedIn :rx_box ;
    dk:normallyClosed false ; dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :relay.p, :relay.n .
:relay.p a dk:Port ; dk:portName "p" .
:relay.n a dk:Port ; dk:portName "n" .
:ok_lamp a dk:Bulb ; dcterms:identifier "ok_lamp" ; rdfs:label "Green beam-OK lamp" ; dk:partOf :rx ; dk:containedIn :rx_box ;
    dk:resistance 60 ; dk:powerThreshold 0.5 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :ok_lamp.p, :ok_lamp.n .
:ok_lamp.p a dk:Port ; dk:portName "p" .
:ok_lamp.n a dk:Port ; dk:portName "n" .
:ldr skos:altLabel "LDR", "light sensor" .
:ok_lamp skos:altLabel "green lamp" .

:beam a dk:OpticalCoupling ; rdfs:label "the emitter's light on the photoresistor" ;
    dk:emitter :tx_led ; dk:receiver :ldr ; dk:maxDistance 0.5 ; dk:activeByDefault true ;
    dk:blockedWhen [ a dk:StateCondition ; dk:onElement :tx_box ; dk:inState dk:Rotated ] ,
                   [ a dk:StateCondition ; dk:onElement :rx_box ; dk:inState dk:Rotated ] .
:sense a dk:SwitchingCoupling ; rdfs:label "divider drives the relay" ;
    dk:drives :relay ; dk:closedWhen "voltage('rx_r', 'p') > 4" ; dk:activeByDefault true .
:barrier dk:hasCoupling :beam, :sense .

:bat.pos dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :sw.p .
:sw.n dk:connectedTo :tx_r.p, :link_pos.p .
:tx_r.n dk:connectedTo :tx_led.anode .
:tx_led.cathode dk:connectedTo :bat.neg .
:link_neg.p dk:connectedTo :bat.neg .
:link_pos.n dk:connectedTo :ldr.p, :relay.p .
:ldr.n dk:connectedTo :rx_r.p .
:rx_r.n dk:connectedTo :link_neg.n .
:relay.n dk:connectedTo :ok_lamp.p .
:ok_lamp.n dk:connectedTo :link_neg.n .
'''
