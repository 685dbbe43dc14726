"""Systems written here, not shipped: a garland (a long chain of links), a lantern (three boxes), a
beacon (boxes in a row, an LED each), a trip (a relay switched by its own current) and a twin (two
supplies, either enough), with scenarios on them."""

from __future__ import annotations

from pathlib import Path

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

LINKS = 8


HEAD = """\
@prefix :        <https://example.org/garland/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
"""


AFFORD = "dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable"


def part(ident: str, kind: str, module: str, ports: tuple[str, str], function: str, extra: str = "") -> str:
    a, b = ports
    detachable = ", dk:Detachable" if kind == "Cable" else ""
    return (f":{ident} a dk:{kind} ; dcterms:identifier \"{ident}\" ; rdfs:label \"{ident.replace('_', ' ')}\" ;\n"
            f"    dk:partOf :{module} ; {AFFORD}{detachable} ; dk:hasFunction :{function} ;{extra}\n"
            f"    dk:hasPort :{ident}.{a}, :{ident}.{b} .\n"
            f":{ident}.{a} a dk:Port ; dk:portName \"{a}\" .\n:{ident}.{b} a dk:Port ; dk:portName \"{b}\" .\n")


def garland() -> str:
    """A 6 V battery feeding a lamp through a chain of links (one cable per module),
    each link's function depending on the one before; a return lead closes the loop."""
    text = [HEAD, ':garland a dk:System ; dk:systemKey "garland" ; dcterms:identifier "garland" ; '
            'rdfs:label "Garland" ; dk:groundReference :bat.neg ; dk:hasFunction :fn_operate ;\n'
            f'    dcterms:description "A battery feeds a lamp through {LINKS} links in a row, one after the other; '
            'a return lead closes the circuit." .\n',
            ':fn_operate a dk:Function ; rdfs:label "light the lamp" ; dk:dependsOn :fn_light .\n',
            ':fn_supply a dk:Function ; rdfs:label "supply 6 V" .\n',
            ':fn_return a dk:Function ; rdfs:label "close the circuit" ; dk:dependsOn :fn_supply .\n',
            f':fn_light a dk:Function ; rdfs:label "light" ; dk:dependsOn :fn_link{LINKS}, :fn_return .\n']
    for module in ["supply", "lamp_box", *(f"box{k}" for k in range(1, LINKS + 1))]:
        text.append(f':{module} a dk:Module ; dcterms:identifier "{module}" ; rdfs:label "{module}" ; '
                    f'dk:partOf :garland .\n')
    text.append(part("bat", "VoltageSource", "supply", ("pos", "neg"), "fn_supply", " dk:voltage 6 ;"))
    text.append(part("ret", "Cable", "supply", ("p", "n"), "fn_return"))
    text.append(part("lamp", "Bulb", "lamp_box", ("p", "n"), "fn_light", " dk:resistance 60 ; dk:powerThreshold 0.1 ;"))
    previous, before = "bat.pos", "fn_supply"
    for k in range(1, LINKS + 1):
        text.append(f':fn_link{k} a dk:Function ; rdfs:label "carry the supply through link {k}" ; '
                    f'dk:dependsOn :{before} .\n')
        text.append(part(f"link{k}", "Cable", f"box{k}", ("p", "n"), f"fn_link{k}"))
        text.append(f":{previous} dk:connectedTo :link{k}.p .\n")
        previous, before = f"link{k}.n", f"fn_link{k}"
    text.append(f":{previous} dk:connectedTo :lamp.p .\n:lamp.n dk:connectedTo :ret.p .\n"
                ":ret.n dk:connectedTo :bat.neg .\n")
    return "".join(text)


def lantern() -> str:
    """Three boxes in a row, as a user might build a bench lantern: a supply box (6 V battery, a green
    LED with its resistor across it, two cables out), a switch box (the switch, two cables on) and a
    head (two cables, the bulb)."""
    text = [HEAD.replace("garland", "lantern"),
            ':lantern a dk:System ; dk:systemKey "lantern" ; dcterms:identifier "lantern" ; rdfs:label "Lantern" ; '
            'dk:groundReference :bat.neg ; dk:hasFunction :fn_operate ;\n'
            '    dcterms:description "A battery box with a green LED feeds a bulb in a head through a switch box." .\n',
            ':fn_operate a dk:Function ; rdfs:label "light the bulb" ; dk:dependsOn :fn_light .\n',
            ':fn_supply a dk:Function ; rdfs:label "supply 6 V" .\n',
            ':fn_indicate a dk:Function ; rdfs:label "show the supply" ; dk:dependsOn :fn_supply .\n',
            ':fn_feed a dk:Function ; rdfs:label "take the supply out" ; dk:dependsOn :fn_supply .\n',
            ':fn_switch a dk:Function ; rdfs:label "switch the supply" ; dk:dependsOn :fn_feed .\n',
            ':fn_light a dk:Function ; rdfs:label "light" ; dk:dependsOn :fn_switch .\n']
    for module in ("supply", "switch_box", "head"):
        text.append(f':{module} a dk:Module ; dcterms:identifier "{module}" ; rdfs:label "{module}" ; '
                    f'dk:partOf :lantern .\n')
    text += [part("bat", "VoltageSource", "supply", ("pos", "neg"), "fn_supply", " dk:voltage 6 ;"),
             part("r_led", "Resistor", "supply", ("p", "n"), "fn_indicate", " dk:resistance 330 ;"),
             part("led", "LED", "supply", ("anode", "cathode"), "fn_indicate",
                  ' dk:forwardVoltage 2.0 ; dk:color "green" ; skos:altLabel "supply LED", "green LED" ;'),
             part("s_pos", "Cable", "supply", ("p", "n"), "fn_feed"), part("s_neg", "Cable", "supply", ("p", "n"), "fn_feed"),
             part("sw", "Switch", "switch_box", ("p", "n"), "fn_switch", " dk:normallyClosed true ;"),
             part("c_pos", "Cable", "switch_box", ("p", "n"), "fn_switch"),
             part("c_neg", "Cable", "switch_box", ("p", "n"), "fn_switch"),
             part("h_pos", "Cable", "head", ("p", "n"), "fn_light"), part("h_neg", "Cable", "head", ("p", "n"), "fn_light"),
             part("bulb", "Bulb", "head", ("p", "n"), "fn_light",
                  ' dk:resistance 60 ; dk:powerThreshold 0.1 ; skos:altLabel "bulb", "lantern bulb" ;'),
             ":bat.pos dk:connectedTo :r_led.p, :s_pos.p .\n:r_led.n dk:connectedTo :led.anode .\n"
             ":led.cathode dk:connectedTo :bat.neg .\n:s_pos.n dk:connectedTo :sw.p .\n:sw.n dk:connectedTo :c_pos.p .\n"
             ":c_pos.n dk:connectedTo :h_pos.p .\n:h_pos.n dk:connectedTo :bulb.p .\n:bulb.n dk:connectedTo :h_neg.n .\n"
             ":h_neg.p dk:connectedTo :c_neg.n .\n:c_neg.p dk:connectedTo :s_neg.n .\n:s_neg.p dk:connectedTo :bat.neg .\n"]
    return "".join(text).replace("@prefix dcterms:", "@prefix skos:    <http://www.w3.org/2004/02/skos/core#> .\n"
                                 "@prefix dcterms:", 1)


def twin() -> str:
    """Two supply boxes, each a 6 V battery with a green LED and its resistor across it and a cable out,
    joined through a diode each in a feed box, which lights a bulb through a head cable; a return lead
    closes the circuit. Either supply lights the bulb alone; the declared functions say, as a user
    would write them, that feeding the head depends on both supplies' diodes."""
    text = [HEAD.replace("garland", "twin"),
            ':twin a dk:System ; dk:systemKey "twin" ; dcterms:identifier "twin" ; rdfs:label "Twin" ; '
            'dk:groundReference :bat1.neg ; dk:hasFunction :fn_operate ;\n'
            '    dcterms:description "Two batteries, each with a green LED, feed one bulb through a diode each." .\n',
            ':fn_operate a dk:Function ; rdfs:label "light the bulb" ; dk:dependsOn :fn_light .\n',
            ':fn_feed a dk:Function ; rdfs:label "carry either supply on" ; dk:dependsOn :fn_diode1, :fn_diode2 .\n',
            ':fn_light a dk:Function ; rdfs:label "light" ; dk:dependsOn :fn_feed, :fn_return .\n',
            ':fn_return a dk:Function ; rdfs:label "close the circuit" ; dk:dependsOn :fn_supply1, :fn_supply2 .\n']
    for module in ("supply1", "supply2", "feed_box", "head"):
        text.append(f':{module} a dk:Module ; dcterms:identifier "{module}" ; rdfs:label "{module}" ; '
                    f'dk:partOf :twin .\n')
    for k in (1, 2):
        text += [f':fn_supply{k} a dk:Function ; rdfs:label "supply 6 V ({k})" .\n',
                 f':fn_indicate{k} a dk:Function ; rdfs:label "show supply {k}" ; dk:dependsOn :fn_supply{k} .\n',
                 f':fn_deliver{k} a dk:Function ; rdfs:label "take supply {k} out" ; dk:dependsOn :fn_supply{k} .\n',
                 f':fn_diode{k} a dk:Function ; rdfs:label "pass supply {k} only onwards" ; dk:dependsOn :fn_deliver{k} .\n',
                 part(f"bat{k}", "VoltageSource", f"supply{k}", ("pos", "neg"), f"fn_supply{k}", " dk:voltage 6 ;"),
                 part(f"r_led{k}", "Resistor", f"supply{k}", ("p", "n"), f"fn_indicate{k}", " dk:resistance 330 ;"),
                 part(f"led{k}", "LED", f"supply{k}", ("anode", "cathode"), f"fn_indicate{k}",
                      f' dk:forwardVoltage 2.0 ; dk:color "green" ; skos:altLabel "supply LED {k}" ;'),
                 part(f"out{k}", "Cable", f"supply{k}", ("p", "n"), f"fn_deliver{k}"),
                 part(f"d{k}", "Diode", "feed_box", ("anode", "cathode"), f"fn_diode{k}", " dk:forwardVoltage 0.7 ;"),
                 f":bat{k}.pos dk:connectedTo :r_led{k}.p, :out{k}.p .\n:r_led{k}.n dk:connectedTo :led{k}.anode .\n"
                 f":led{k}.cathode dk:connectedTo :bat{k}.neg .\n:out{k}.n dk:connectedTo :d{k}.anode .\n"
                 f":d{k}.cathode dk:connectedTo :feed.p .\n"]
    text += [part("feed", "Cable", "head", ("p", "n"), "fn_feed"),
             part("bulb", "Bulb", "head", ("p", "n"), "fn_light", ' dk:resistance 60 ; dk:powerThreshold 0.1 ;'),
             part("ret", "Cable", "head", ("p", "n"), "fn_return"),
             ":feed.n dk:connectedTo :bulb.p .\n:bulb.n dk:connectedTo :ret.p .\n"
             ":ret.n dk:connectedTo :bat1.neg .\n:bat2.neg dk:connectedTo :bat1.neg .\n"]
    return "".join(text).replace("@prefix dcterms:", "@prefix skos:    <http://www.w3.org/2004/02/skos/core#> .\n"
                                 "@prefix dcterms:", 1)


BOXES = 4


def beacon() -> str:
    """A battery feeds a lamp through a row of boxes, one cable each; each box has a green LED (with
    its resistor, to the battery's negative) that shows the supply reached it."""
    text = [HEAD.replace("garland", "beacon"),
            ':beacon a dk:System ; dk:systemKey "beacon" ; dcterms:identifier "beacon" ; rdfs:label "Beacon" ; '
            'dk:groundReference :bat.neg ; dk:hasFunction :fn_operate ;\n'
            f'    dcterms:description "A battery feeds a lamp through {BOXES} boxes in a row; each box has a cable and '
            'an LED that shows the supply reached it." .\n',
            ':fn_operate a dk:Function ; rdfs:label "light the lamp" ; dk:dependsOn :fn_light .\n',
            ':fn_supply a dk:Function ; rdfs:label "supply 6 V" .\n',
            ':fn_return a dk:Function ; rdfs:label "close the circuit" ; dk:dependsOn :fn_supply .\n',
            f':fn_light a dk:Function ; rdfs:label "light" ; dk:dependsOn :fn_box{BOXES}, :fn_return .\n',
            ':supply a dk:Module ; dcterms:identifier "supply" ; rdfs:label "supply" ; dk:partOf :beacon .\n',
            part("bat", "VoltageSource", "supply", ("pos", "neg"), "fn_supply", " dk:voltage 6 ;"),
            part("ret", "Cable", "supply", ("p", "n"), "fn_return"),
            part("lamp", "Bulb", "supply", ("p", "n"), "fn_light", " dk:resistance 60 ; dk:powerThreshold 0.1 ;")]
    previous, before = "bat.pos", "fn_supply"
    for k in range(1, BOXES + 1):
        text += [f':box{k} a dk:Module ; dcterms:identifier "box{k}" ; rdfs:label "box {k}" ; dk:partOf :beacon .\n',
                 f':fn_box{k} a dk:Function ; rdfs:label "carry the supply through box {k}" ; dk:dependsOn :{before} .\n',
                 f':fn_show{k} a dk:Function ; rdfs:label "show the supply in box {k}" ; dk:dependsOn :fn_box{k} .\n',
                 part(f"link{k}", "Cable", f"box{k}", ("p", "n"), f"fn_box{k}"),
                 part(f"r{k}", "Resistor", f"box{k}", ("p", "n"), f"fn_show{k}", " dk:resistance 330 ;"),
                 part(f"led{k}", "LED", f"box{k}", ("anode", "cathode"), f"fn_show{k}",
                      f' dk:forwardVoltage 2.0 ; dk:color "green" ; skos:altLabel "LED {k}" ;'),
                 f":{previous} dk:connectedTo :link{k}.p .\n:link{k}.n dk:connectedTo :r{k}.p .\n"
                 f":r{k}.n dk:connectedTo :led{k}.anode .\n:led{k}.cathode dk:connectedTo :bat.neg .\n"]
        previous, before = f"link{k}.n", f"fn_box{k}"
    text.append(f":{previous} dk:connectedTo :lamp.p .\n:lamp.n dk:connectedTo :ret.p .\n:ret.n dk:connectedTo :bat.neg .\n")
    return "".join(text).replace("@prefix dcterms:", "@prefix skos:    <http://www.w3.org/2004/02/skos/core#> .\n"
                                 "@prefix dcterms:", 1)


TRIP = HEAD.replace("garland", "trip") + """\
:trip a dk:System ; dk:systemKey "trip" ; dcterms:identifier "trip" ; rdfs:label "Trip" ;
    dk:groundReference :bat.neg ; dk:hasFunction :fn_operate ;
    dcterms:description "A battery feeds a lamp through a relay that opens above 0.5 A; an LED shows it passes current." .
:fn_operate a dk:Function ; rdfs:label "light the lamp" ; dk:dependsOn :fn_light .
:fn_supply a dk:Function ; rdfs:label "supply 6 V" .
:fn_protect a dk:Function ; rdfs:label "cut an over-current" ; dk:dependsOn :fn_supply .
:fn_feed a dk:Function ; rdfs:label "carry the supply to the lamp" ; dk:dependsOn :fn_protect .
:fn_return a dk:Function ; rdfs:label "close the circuit" ; dk:dependsOn :fn_supply .
:fn_light a dk:Function ; rdfs:label "light" ; dk:dependsOn :fn_feed, :fn_return .
:fn_indicate a dk:Function ; rdfs:label "show that the relay passes current" ; dk:dependsOn :fn_protect .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "box" ; dk:partOf :trip .
""" + "".join([
    part("bat", "VoltageSource", "box", ("pos", "neg"), "fn_supply", " dk:voltage 6 ;"),
    part("relay", "Relay", "box", ("p", "n"), "fn_protect", " dk:normallyClosed true ;"),
    part("lead", "Cable", "box", ("p", "n"), "fn_feed"),
    part("lamp", "Bulb", "box", ("p", "n"), "fn_light", " dk:resistance 60 ; dk:powerThreshold 0.1 ;"),
    part("ret", "Cable", "box", ("p", "n"), "fn_return"),
    part("r_led", "Resistor", "box", ("p", "n"), "fn_indicate", " dk:resistance 330 ;"),
    part("led", "LED", "box", ("anode", "cathode"), "fn_indicate", ' dk:forwardVoltage 2.0 ; dk:color "green" ;'),
]) + """\
:bat.pos dk:connectedTo :relay.p .
:relay.n dk:connectedTo :lead.p, :r_led.p .
:r_led.n dk:connectedTo :led.anode .
:led.cathode dk:connectedTo :bat.neg .
:lead.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :ret.p .
:ret.n dk:connectedTo :bat.neg .
:overcurrent a dk:SwitchingCoupling ; rdfs:label "over-current trip" ; dk:drives :relay ;
    dk:closedWhen "abs(current('relay')) <= 0.5" ; dk:activeByDefault true .
:trip dk:hasCoupling :overcurrent .
"""


SCENARIO = """\
@prefix :        <https://example.org/{system}-scenarios/> .
@prefix sys:     <https://example.org/{system}/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:{id} a dk:Scenario ;
    dk:scenarioNumber {number} ;
    dcterms:identifier "{id}" ;
    rdfs:label "{label}" ;
    dk:onSystem sys:{system} ;
    dk:hasCategory dk:Simple ;
    {faults} ;
    dk:initialObservations "{symptoms}" ;
    dk:faultyComponent {faulty} ;
    dk:idealRepair [ a dk:RepairPlan ; {steps} ] ;
    dk:actionBudget 10 .
"""


def scenario(system: str, id: str, number: int, label: str, faults: list[tuple[str, str]], symptoms: str) -> str:
    injected = ", ".join(f"[ a dk:Fault ; dk:faultMode dk:{mode} ; dk:faultTarget sys:{target} ]"
                         for mode, target in faults)
    parts = sorted({t.split(".")[0] for _, t in faults})
    steps = ", ".join(f"[ a dk:DiagnosticAction ; dk:position {i} ; dk:actionType dk:"
                      f"{'ReconnectCable' if mode == 'DetachedEnd' else 'ReplaceComponent'} ; dk:target sys:{p} ]"
                      for i, (p, (mode, _)) in enumerate(zip(parts, faults, strict=True), start=1))
    return SCENARIO.format(system=system, id=id, number=number, label=label, faults="dk:injects " + injected,
                           faulty=", ".join(f"sys:{p}" for p in parts), steps="dk:step " + steps, symptoms=symptoms)


DARK = "The lamp stays dark."


def chain_store(folder: Path) -> KnowledgeStore:
    """An in-memory store holding the garland, the trip and their scenarios (files written in ``folder``)."""
    files = {"garland.ttl": garland(), "trip.ttl": TRIP,
             "g1.ttl": scenario("garland", "GARLAND.1", 9301, "Link 7 off", [("DetachedEnd", "link7.n")], DARK),
             "g2.ttl": scenario("garland", "GARLAND.2", 9302, "Links 2 and 6 off",
                                [("DetachedEnd", "link2.n"), ("DetachedEnd", "link6.p")], DARK),
             "g3.ttl": scenario("garland", "GARLAND.3", 9304, "Flat battery", [("DepletedBattery", "bat")], DARK),
             "t1.ttl": scenario("trip", "TRIP.1", 9303, "Shorted lamp", [("ShortedComponent", "lamp")],
                                "The lamp never stays lit; at most it flickers. The led is dark or flickers at most.")}
    return _stored(folder, files)


def lantern_store(folder: Path) -> KnowledgeStore:
    """An in-memory store holding the lantern and a double fault on it: a flat battery, and the switch
    box's + cable off the head."""
    return _stored(folder, {"lantern.ttl": lantern(), "l1.ttl": scenario(
        "lantern", "LANTERN.1", 9305, "Flat battery and a cable off",
        [("DepletedBattery", "bat"), ("DetachedEnd", "c_pos.n")], "The lantern bulb stays dark, and so does the green LED."),
        "l2.ttl": scenario("lantern", "LANTERN.2", 9306, "A cable off", [("DetachedEnd", "h_neg.n")],
                           "The lantern bulb stays dark, but the green LED is lit.")})


def beacon_store(folder: Path) -> KnowledgeStore:
    """An in-memory store holding the beacon and two double faults on it: box 2's LED open, so the
    supply seems lost in box 2, and box 3's cable off its terminal further on (BEACON.1); box 2's LED
    open and the lamp open (BEACON.2)."""
    return _stored(folder, {"beacon.ttl": beacon(), "b1.ttl": scenario(
        "beacon", "BEACON.1", 9307, "An LED open and a cable off further on",
        [("OpenComponent", "led2"), ("DetachedEnd", "link3.n")],
        "The lamp stays dark. LED 1 is lit; LED 2, LED 3 and LED 4 are dark."),
        "b2.ttl": scenario("beacon", "BEACON.2", 9308, "An LED open and the lamp open",
                           [("OpenComponent", "led2"), ("OpenComponent", "lamp")],
                           "The lamp stays dark. LED 1, LED 3 and LED 4 are lit; LED 2 is dark.")})


def twin_store(folder: Path) -> KnowledgeStore:
    """An in-memory store holding the twin and a double fault on it: battery 2 flat, and the feed cable's
    end off the bulb (TWIN.1)."""
    return _stored(folder, {"twin.ttl": twin(), "w1.ttl": scenario(
        "twin", "TWIN.1", 9309, "A flat battery and the feed off the bulb",
        [("DepletedBattery", "bat2"), ("DetachedEnd", "feed.n")],
        "The bulb stays dark. Supply LED 1 is lit; supply LED 2 is dark.")})


def _stored(folder: Path, files: dict[str, str]) -> KnowledgeStore:
    """The systems (the files without a scenario's number in their name) loaded first, then the rest."""
    for name, text in files.items():
        (folder / name).write_text(text)
    systems = [n for n in files if not any(ch.isdigit() for ch in n)]
    s = KnowledgeStore.memory()
    load_files(s, [folder / n for n in systems])
    load_files(s, [folder / n for n in files if n not in systems])
    return s
