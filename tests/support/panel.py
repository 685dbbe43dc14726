"""A caravan's 12 V panel written for the tests (not shipped; an outsider's system, issue 30): a battery, a 5 A fuse,
a main switch, a feed cable, a ceiling lamp, a reading lamp behind its switch, a USB load with its LED (the socket's
light, no indicator), a return cable; and scenarios on it."""

from __future__ import annotations

from pathlib import Path

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

PANEL = """\
@prefix :        <https://example.org/panel/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:panel a dk:System ; dk:systemKey "panel" ; dcterms:identifier "panel" ; rdfs:label "Caravan 12 V panel" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery feeds, through a 5 A fuse and a main switch, two lamps and a USB socket." .
:mod a dk:Module ; dcterms:identifier "mod" ; rdfs:label "Panel" ; dk:partOf :panel .
""" + "".join(
    f""":{cid} a dk:{kind} ; dcterms:identifier "{cid}" ; rdfs:label "{cid}" ; dk:partOf :mod ; {extra}
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable{more} ; dk:hasPort :{cid}.{a}, :{cid}.{b} .
:{cid}.{a} a dk:Port ; dk:portName "{a}" .
:{cid}.{b} a dk:Port ; dk:portName "{b}" .
""" for cid, kind, extra, more, a, b in (
        ("bat", "VoltageSource", "dk:voltage 12 ;", "", "pos", "neg"),
        ("fuse", "Fuse", "dk:ratedCurrent 5.0 ;", "", "p", "n"),
        ("main_sw", "Switch", "dk:normallyClosed true ;", ", dk:Togglable", "p", "n"),
        ("feed", "Cable", "dk:resistance 0.05 ;", ", dk:Detachable", "p", "n"),
        ("ceiling", "Bulb", "dk:resistance 12 ; dk:powerThreshold 1.0 ;", "", "p", "n"),
        ("read_sw", "Switch", "dk:normallyClosed true ;", ", dk:Togglable", "p", "n"),
        ("reading", "Bulb", "dk:resistance 24 ; dk:powerThreshold 1.0 ;", "", "p", "n"),
        ("usb", "Resistor", "dk:resistance 24 ;", "", "p", "n"),
        ("usb_led_r", "Resistor", "dk:resistance 1000 ;", "", "p", "n"),
        ("usb_led", "LED", 'dk:forwardVoltage 2.0 ; dk:color "green" ; dk:isIndicator false ;', "", "anode", "cathode"),
        ("ret", "Cable", "dk:resistance 0.05 ;", ", dk:Detachable", "p", "n"))) + """
:bat.pos dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :main_sw.p .
:main_sw.n dk:connectedTo :feed.p .
:feed.n dk:connectedTo :ceiling.p, :read_sw.p, :usb.p, :usb_led_r.p .
:read_sw.n dk:connectedTo :reading.p .
:usb_led_r.n dk:connectedTo :usb_led.anode .
:ceiling.n dk:connectedTo :ret.p .
:reading.n dk:connectedTo :ret.p .
:usb.n dk:connectedTo :ret.p .
:usb_led.cathode dk:connectedTo :ret.p .
:ret.n dk:connectedTo :bat.neg .
"""

SCENARIO = """\
@prefix :        <https://example.org/panel-scenarios/> .
@prefix sys:     <https://example.org/panel/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
:{id} a dk:Scenario ; dk:scenarioNumber {n} ; dcterms:identifier "{id}" ; rdfs:label "{id}" ;
    dk:onSystem sys:panel ; dk:hasCategory dk:{category} ;
    dk:injects {faults} ;
    dk:initialObservations "{words}" ;
    dk:statedSymptom {stated} ;
    dk:faultyComponent {faulty} ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step {steps} ] ;
    dk:actionBudget 10 .
"""
LIGHTS = ("ceiling", "reading", "usb_led")


def case(id: str, n: int, faults: list[str], repairs: list[tuple[str, str]], looks: tuple[str, str, str], words: str,
         category: str = "Simple") -> str:
    """A scenario on the panel: ``faults`` (Turtle of each dk:Fault's properties), ``repairs`` (action type, part) its
    ideal repair (the parts they repair its faulty components), ``looks`` the stated appearance of the ceiling lamp,
    the reading lamp and the USB LED, ``words`` the report."""
    return SCENARIO.format(
        id=id, n=n, category=category, words=words,
        faults=", ".join(f"[ a dk:Fault ; {f} ]" for f in faults),
        stated=", ".join(f"[ dk:about sys:{lamp} ; dk:appearance dk:{look} ]" for lamp, look in zip(LIGHTS, looks, strict=True)),
        faulty=", ".join(sorted({f"sys:{part}" for _, part in repairs})),
        steps=", ".join(f"[ a dk:DiagnosticAction ; dk:position {k} ; dk:actionType dk:{a} ; dk:target sys:{p} ]"
                        for k, (a, p) in enumerate(repairs, 1)))


def panel_store(folder: Path, scenarios: list[str]) -> KnowledgeStore:
    """An in-memory store holding the panel and ``scenarios`` (Turtle, :func:`case`), written in ``folder``."""
    files = [folder / "panel.ttl"] + [folder / f"s{k}.ttl" for k in range(len(scenarios))]
    files[0].write_text(PANEL)
    for path, text in zip(files[1:], scenarios, strict=True):
        path.write_text(text)
    store = KnowledgeStore.memory()
    load_files(store, files)
    return store
