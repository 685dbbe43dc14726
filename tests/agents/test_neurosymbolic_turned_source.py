"""A battery in backwards read as such, on a system nobody on the team wrote: the voltage across a source
depends on nothing outside it, so two potentials read the other way round from the working system's are
the source's own (``source_local``), whatever the parts the wiring makes it depend on. Found on the random
systems of benchmarks/unwritten_systems.py (generator seed 2, ``unwritten_2_37``, scenarios S.625/S.626):
the first reading said the battery's plus sat at -20 V, and the neuro-symbolic assistant spread that
anomaly over everything the battery's loop holds, tested part after part and ran out of rounds. The loop
here is one of that system's, written out part by part."""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from ..support.circuits import Leaf, Loop, Parallel, Series, reachable, with_generated

KEY = "stranger_turned"


def _system() -> str:
    def bulb(ohms: float, threshold: float, module: int) -> Leaf:
        return Leaf("Bulb", (("resistance", ohms), ("powerThreshold", threshold)), module=module)

    white = Leaf("LED", (("forwardVoltage", 1.65), ("color", "white"), ("forwardCurrent", 0.02), ("powerThreshold", 0.005)),
                 reversed=True, module=0)
    loop = Series((Parallel((white, Leaf("Resistor", (("resistance", 4700),), module=1), bulb(47, 0.1, 0))),
                   Parallel((bulb(60, 0.1, 2), Leaf("Diode", (("forwardVoltage", 0.86),), module=2))),
                   bulb(100, 0.05, 0)))
    loops = (Loop(20, 1, loop), Loop(20, 1, loop),
             Loop(3, 1, Series((bulb(22, 1.0, 2), Parallel((Leaf("Fuse", (("ratedCurrent", 10),), module=0),
                                                             Leaf("Resistor", (("resistance", 100),), module=1)))))))
    return reachable(loops, KEY)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return with_generated(tmp_path_factory.mktemp("stranger_turned"), KEY, _system(), frozenset({"ReversedBattery"}))


def test_a_battery_read_the_wrong_way_round_is_turned_round(store):
    catalog = ScenarioCatalog(store)
    numbers = [n for n in catalog.numbers() if catalog.resolve(n).key == KEY]
    assert numbers
    for number in numbers:
        rounds: list[dict] = []
        result = run_session(number, NeuroSymbolic(), store=store, seed=0, record=False,
                             keep_ledger=False, on_round=lambda r, into=rounds: into.append(r.to_dict()))
        steps = [(e["action"], tuple(e["targets"])) for r in rounds for e in r.get("executed") or ()]
        battery = catalog.resolve(number).faults[0].target.rsplit("/", 1)[-1]
        read = ("measure_voltage", (battery,))
        assert read in steps, steps       # (the cheapest reading that tells it)
        # once its plus is read below its minus, the battery is turned round next, and that ends it
        after = steps[steps.index(read) + 1:]
        assert after[:1] == [("reverse_battery", (battery,))], steps
        assert result.end == "success_no_hypothesis" and result.cost <= 120, (result.end, result.cost, steps)


def test_a_part_found_turned_round_whose_fault_shows_every_light_is_not_set_aside(tmp_path):
    """An LED found mounted the wrong way round (its diode test says so) that nothing is said to depend on
    was set aside as an indicator while the dark lamp's dependencies were searched, until the rounds ran
    out (``unwritten_2_37`` S.629/S.630): its fault alone, set on the system as described, shows every light
    seen, so it accounts for the dark lamp too, and it is repaired at once."""
    store = with_generated(tmp_path, KEY, _system(), frozenset({"ReversedComponent"}))
    catalog = ScenarioCatalog(store)
    numbers = [n for n in catalog.numbers() if catalog.resolve(n).key == KEY
               and catalog.resolve(n).faults[0].target.rsplit("/", 1)[-1].startswith("led")]
    assert numbers
    for number in numbers:
        led = catalog.resolve(number).faults[0].target.rsplit("/", 1)[-1].split(".")[0]
        rounds: list[dict] = []
        result = run_session(number, NeuroSymbolic(), store=store, seed=0, record=False, keep_ledger=False,
                             on_round=lambda r, into=rounds: into.append(r.to_dict()))
        steps = [(e["action"], tuple(e["targets"])) for r in rounds for e in r.get("executed") or ()]
        assert result.end in ("success", "success_no_hypothesis"), steps
        found = steps.index(("test_diode", (led,)))
        assert steps[found + 1][1] == (led,), steps       # repaired (or named) right after


STACKED = """\
@prefix :        <https://example.org/stacked/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:stacked a dk:System ; dk:systemKey "stacked" ; dcterms:identifier "stacked" ; rdfs:label "Bike light" ;
    dk:groundReference :c2.neg ;
    dcterms:description "Two 3 V cells in series feed, past a diode, a fuse and a switch (or its button), an LED and a bulb." .
:frame a dk:Module ; dcterms:identifier "frame" ; rdfs:label "Frame" ; dk:partOf :stacked .
:c1 a dk:VoltageSource ; dcterms:identifier "c1" ; rdfs:label "Upper cell" ; dk:partOf :frame ; dk:voltage 3 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :c1.pos, :c1.neg .
:c1.pos a dk:Port ; dk:portName "pos" . :c1.neg a dk:Port ; dk:portName "neg" .
:c2 a dk:VoltageSource ; dcterms:identifier "c2" ; rdfs:label "Lower cell" ; dk:partOf :frame ; dk:voltage 3 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :c2.pos, :c2.neg .
:c2.pos a dk:Port ; dk:portName "pos" . :c2.neg a dk:Port ; dk:portName "neg" .
:d a dk:Diode ; dcterms:identifier "d" ; rdfs:label "Diode" ; dk:partOf :frame ; dk:forwardVoltage 0.3 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :d.anode, :d.cathode .
:d.anode a dk:Port ; dk:portName "anode" . :d.cathode a dk:Port ; dk:portName "cathode" .
:f a dk:Fuse ; dcterms:identifier "f" ; rdfs:label "Fuse" ; dk:partOf :frame ; dk:ratedCurrent 0.5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :f.p, :f.n .
:f.p a dk:Port ; dk:portName "p" . :f.n a dk:Port ; dk:portName "n" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Switch" ; dk:partOf :frame ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Replaceable ; dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" . :sw.n a dk:Port ; dk:portName "n" .
:btn a dk:Switch ; dcterms:identifier "btn" ; rdfs:label "Bypass button" ; dk:partOf :frame ; dk:normallyClosed false ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Replaceable ; dk:hasPort :btn.p, :btn.n .
:btn.p a dk:Port ; dk:portName "p" . :btn.n a dk:Port ; dk:portName "n" .
:led a dk:LED ; dcterms:identifier "led" ; rdfs:label "White LED" ; dk:partOf :frame ; dk:forwardVoltage 3.0 ;
    dk:color "white" ; dk:isIndicator false ;
    dk:affords dk:Observable, dk:Reachable, dk:Replaceable ; dk:hasPort :led.anode, :led.cathode .
:led.anode a dk:Port ; dk:portName "anode" . :led.cathode a dk:Port ; dk:portName "cathode" .
:r a dk:Resistor ; dcterms:identifier "r" ; rdfs:label "LED resistor" ; dk:partOf :frame ; dk:resistance 100 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :r.p, :r.n .
:r.p a dk:Port ; dk:portName "p" . :r.n a dk:Port ; dk:portName "n" .
:bulb a dk:Bulb ; dcterms:identifier "bulb" ; rdfs:label "Bulb" ; dk:partOf :frame ; dk:resistance 20 ;
    dk:powerThreshold 0.2 ; dk:affords dk:Observable, dk:Reachable, dk:Replaceable ; dk:hasPort :bulb.p, :bulb.n .
:bulb.p a dk:Port ; dk:portName "p" . :bulb.n a dk:Port ; dk:portName "n" .
:c2.pos dk:connectedTo :c1.neg .
:c1.pos dk:connectedTo :d.anode .
:d.cathode dk:connectedTo :f.p .
:f.n dk:connectedTo :sw.p, :btn.p .
:sw.n dk:connectedTo :r.p, :bulb.p, :btn.n .
:r.n dk:connectedTo :led.anode .
:c2.neg dk:connectedTo :led.cathode, :bulb.n .
"""

FLAT_UPPER = """\
@prefix :        <https://example.org/stacked-scenarios/> .
@prefix sys:     <https://example.org/stacked/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:STACK.1 a dk:Scenario ; dk:scenarioNumber 8601 ; dcterms:identifier "STACK.1" ; rdfs:label "Upper cell flat" ;
    dk:onSystem sys:stacked ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:DepletedBattery ; dk:faultTarget sys:c1 ] ;
    dk:initialObservations "The white LED is dark, where it is lit when the system works. The bulb looks as usual." ;
    dk:faultyComponent sys:c1 ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:c1 ] ] ;
    dk:actionBudget 10 .
"""


def test_a_flat_cell_of_a_stack_read_across_its_terminals_is_its_own_fault(tmp_path):
    """A cell of a stack whose terminals both sit away from ground: read flat (its plus at its minus's 3 V),
    the reading was spread over everything the cell depends on, and the search ran out of rounds (a bike
    light written as a user would). The voltage across a source is the source's own, flat as turned."""
    (tmp_path / "stacked.ttl").write_text(STACKED)
    (tmp_path / "flat.ttl").write_text(FLAT_UPPER)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "stacked.ttl", tmp_path / "flat.ttl"])
    rounds: list[dict] = []
    result = run_session("STACK.1", NeuroSymbolic(), store=store, seed=0, record=False, keep_ledger=False,
                         on_round=lambda r: rounds.append(r.to_dict()))
    steps = [(e["action"], tuple(e["targets"])) for r in rounds for e in r.get("executed") or ()]
    assert result.end in ("success", "success_no_hypothesis"), steps
    read = steps.index(("measure_voltage", ("c1",)))
    assert steps[read + 1][1] == ("c1",), steps        # named (or replaced) right after the reading
