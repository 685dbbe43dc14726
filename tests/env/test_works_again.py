"""No repair that leaves the fault in place: an action ends a session as a repair (``success_no_hypothesis``)
when the system works, and works too with the faults left alone (what of the fault snapshot is still in the
state graph, without what the session did besides: damage, cables swapped, a battery turned round).

Found on a random system (``benchmarks/unwritten_systems.py``, ``unwritten_2_37``): a test's bridge
blew a fuse, the blown fuse cut an injected short off, every lamp lit, and the session ended as a
repair with the short still there. Here on a string of two lamps written in the test: a short from
the string's middle to a fused node bypasses the lower lamp; bridging the battery to that node
blows the fuse, and both lamps light with the short in place.

On the garland of tests/support/chains.py (a lamp fed through eight links, link 7's end off), swapping
link 1's and link 8's battery-side ends feeds the lamp past link 7: it lit, and the session ended as a
repair with link 7 still off. `benchmarks/fake_repairs.py` (random walks over the catalogue) found 408
such ends in 4,911 walks on the shipped systems and their generated scenarios, none after.

And a test never outlives its round, also on a part repaired before: a bridge across it, a cable
reconnected and then taken off to test, a switch replaced and then opened (each used to stay for good
there: a reset kept whatever state a repaired part was in; now a part repaired before stays as it was
when the round began, a part the round repairs as the round left it)."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env.checks import check_scenario
from diagkg.env.effects import still_broken
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.env.verification import injected_parts
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.chains import chain_store

STRING = """\
@prefix :        <https://example.org/string/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:string a dk:System ; dk:systemKey "string" ; dcterms:identifier "string" ; rdfs:label "Two lamps in a string" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery lights two lamps in series; a fused tap sits beside them, carrying nothing." .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :string .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :box ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" . :bat.neg a dk:Port ; dk:portName "neg" .
:upper a dk:Bulb ; dcterms:identifier "upper" ; rdfs:label "Upper lamp" ; dk:partOf :box ; dk:resistance 29 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :upper.p, :upper.n .
:upper.p a dk:Port ; dk:portName "p" . :upper.n a dk:Port ; dk:portName "n" .
:lower a dk:Bulb ; dcterms:identifier "lower" ; rdfs:label "Lower lamp" ; dk:partOf :box ; dk:resistance 29 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :lower.p, :lower.n .
:lower.p a dk:Port ; dk:portName "p" . :lower.n a dk:Port ; dk:portName "n" .
:tap a dk:Fuse ; dcterms:identifier "tap" ; rdfs:label "Tap fuse" ; dk:partOf :box ; dk:ratedCurrent 1 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :tap.p, :tap.n .
:tap.p a dk:Port ; dk:portName "p" ; dk:openByDesign true . :tap.n a dk:Port ; dk:portName "n" .

:bat.pos dk:connectedTo :upper.p .
:upper.n dk:connectedTo :lower.p .
:lower.n dk:connectedTo :bat.neg .
:tap.n dk:connectedTo :bat.neg .
"""

SCENARIOS_TEXT = """\
@prefix :        <https://example.org/string-scenarios/> .
@prefix sys:     <https://example.org/string/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:STRING.1 a dk:Scenario ; dk:scenarioNumber 9341 ; dcterms:identifier "STRING.1" ;
    rdfs:label "The string's middle shorted to the tap" ; dk:onSystem sys:string ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:ShortBetweenNodes ; dk:faultTarget sys:lower.p ; dk:otherTarget sys:tap.p ] ;
    dk:initialObservations "The lower lamp is dark." ;
    dk:faultyComponent sys:lower ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:lower ] ] ;
    dk:actionBudget 10 .

{burned2}

{burned3}
"""


BURNED = """\
:STRING.{n} a dk:Scenario ; dk:scenarioNumber 934{n} ; dcterms:identifier "STRING.{n}" ;
    rdfs:label "{label}" ; dk:onSystem sys:string ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:lower ] ;
    dk:initialObservations "Both lamps are dark." ;
    dk:faultyComponent sys:lower ;{extra}
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:lower ] ] ;
    dk:actionBudget 10 ."""

# a burned lower lamp (STRING.2), and the same in a scenario that makes bridging a repair (STRING.3)
SCENARIOS = SCENARIOS_TEXT.replace("{burned2}", BURNED.format(n=2, label="A burned lower lamp", extra="")).replace(
    "{burned3}", BURNED.format(n=3, label="A burned lower lamp, bridged for good",
                               extra="\n    dk:permanentRepair dk:ShortPorts ;"))


@pytest.fixture(scope="module")
def string(tmp_path_factory):
    folder = tmp_path_factory.mktemp("string")
    head, *bodies = SCENARIOS.split("\n\n")
    files = [folder / "string.ttl"] + [folder / f"scenario-{n}.ttl" for n in range(len(bodies))]
    files[0].write_text(STRING)
    for path, body in zip(files[1:], bodies, strict=True):       # one file per scenario
        path.write_text(head + "\n\n" + body)
    store = KnowledgeStore.memory()
    load_files(store, files)
    return store


def act(session, action: str, *targets: str):
    out, *_ = session.step(diagkg.Action(action, targets))
    return out


def test_lamps_lit_by_a_blown_fuse_that_cut_the_fault_off_are_not_a_repair(string):
    session = diagkg.make("STRING.1", string)
    _, info = session.reset(seed=0)
    assert list(session.initial_result.lit) == ["upper"]                       # the short bypasses the lower lamp through the tap
    act(session, "short_ports", "bat.pos", "tap.p")        # the battery straight into the tap: it blows
    state = session.state()
    assert ("tap", "blown") in state.damaged and state.shorts   # the injected short is still there…
    assert session.is_nominal()                                  # …and yet both lamps light
    assert injected_parts(session) & still_broken(session, state) == {"lower", "tap"}
    assert not session.is_nominal(state.evolve(damaged=()))      # it works thanks to the blown tap…
    assert session.end is None and not session.works_again()     # …so it is not a repair: the session goes on
    out, *_ = session.step(diagkg.Hypothesis(frozenset({"lower", "tap"})))
    assert out["verdict"] == "correct" and session.end == "success"


def test_two_cables_swapped_past_a_cable_that_is_off_are_not_a_repair(tmp_path):
    store = chain_store(tmp_path)
    session = diagkg.make("GARLAND.1", store)
    session.reset(seed=0)
    act(session, "swap_cables", "link1", "link8")           # link 8 now takes the battery straight to the lamp
    assert "lamp" in session.simulate().lit and session.is_nominal()
    assert session.end is None and not session.works_again()
    act(session, "reconnect_cable", "link7")
    assert session.end == "success_no_hypothesis"


def test_the_ideal_repair_still_ends_as_a_repair(string):
    session = diagkg.make("STRING.1", string)
    session.reset(seed=0)
    act(session, "replace_component", "lower")            # clears the short (it belongs to both ends)
    assert session.end == "success_no_hypothesis" and session.works_again()


def test_a_fuse_a_test_blew_beside_a_working_circuit_does_not_stop_a_repair(string):
    session = diagkg.make("STRING.2", string)
    session.reset(seed=0)
    act(session, "short_ports", "bat.pos", "tap.p")        # blows the tap, which carries nothing
    assert ("tap", "blown") in session.state().damaged and session.end is None
    act(session, "replace_component", "lower")
    assert session.end == "success_no_hypothesis" and ("tap", "blown") in session.state().damaged


def test_a_bridge_is_taken_off_after_its_round_also_on_a_part_replaced_before(string):
    session = diagkg.make("STRING.2", string)
    session.reset(seed=0)
    act(session, "replace_component", "upper")            # healthy: replaced all the same
    assert session.end is None and "upper" in session.repaired
    act(session, "short_ports", "upper.p", "upper.n")
    assert not session.state().shorts                     # gone after the round, as on any other part
    act(session, "replace_component", "lower")
    assert session.end == "success_no_hypothesis"         # the upper lamp was not left bypassed


def test_a_scenario_that_makes_bridging_a_repair_keeps_the_bridge(string):
    session = diagkg.make("STRING.3", string)
    session.reset(seed=0)
    act(session, "short_ports", "lower.p", "lower.n")
    assert len(session.state().shorts) == 1 and session.end is None   # kept; the burned lamp is still there


WORKAROUND = """\
@prefix :        <https://example.org/garland-scenarios/> .
@prefix sys:     <https://example.org/garland/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:GARLAND.9 a dk:Scenario ; dk:scenarioNumber 9319 ; dcterms:identifier "GARLAND.9" ;
    rdfs:label "Link 7 off, worked around" ; dk:onSystem sys:garland ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:link7.n ] ;
    dk:initialObservations "The lamp stays dark." ;
    dk:faultyComponent sys:link7 ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:SwapCablePolarities ;
                  dk:target sys:link1, sys:link8 ] ] ;
    dk:actionBudget 10 .
"""


def test_diagkg_check_says_an_ideal_repair_works_around_the_fault(tmp_path):
    store = chain_store(tmp_path)
    path = tmp_path / "workaround.ttl"
    path.write_text(WORKAROUND)
    load_files(store, [path])
    scenario = ScenarioCatalog(store).resolve("GARLAND.9")
    report = check_scenario(store, scenario, seeds=1)
    repair = [f for f in report.findings if f.check == "repair"]
    assert len(repair) == 1 and not repair[0].passed
    assert "works around a fault instead of repairing it" in repair[0].message and repair[0].file == str(path)
    assert repair[0].line == WORKAROUND.splitlines().index(
        next(line for line in WORKAROUND.splitlines() if "dk:idealRepair" in line)) + 1


def test_a_cable_reconnected_then_taken_off_to_test_is_back_on_after_the_round(tmp_path):
    session = diagkg.make("GARLAND.2", chain_store(tmp_path))       # links 2 and 6 off
    session.reset(seed=0)
    act(session, "reconnect_cable", "link2")
    assert "link2" in session.repaired
    assert all(port[0] != "link2" for port in session.state().detached)
    act(session, "disconnect_cable", "link2")                 # a test: both ends off for the round
    assert all(port[0] != "link2" for port in session.state().detached), "taken off for good"
    act(session, "reconnect_cable", "link6")
    assert session.end == "success_no_hypothesis"             # link 2 was not left off


SWITCHED = STRING.replace(":lower.n dk:connectedTo :bat.neg .", """\
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Switch" ; dk:partOf :box ; dk:normallyClosed true ;
    dk:affords dk:Observable, dk:Reachable, dk:Togglable, dk:Measurable, dk:Replaceable ; dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" . :sw.n a dk:Port ; dk:portName "n" .
:lower.n dk:connectedTo :sw.p .
:sw.n dk:connectedTo :bat.neg .""")

STUCK = """\
:STUCK.1 a dk:Scenario ; dk:scenarioNumber 9361 ; dcterms:identifier "STUCK.1" ;
    rdfs:label "The switch stuck closed" ; dk:onSystem sys:string ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:StuckClosed ; dk:faultTarget sys:sw ] ;
    dk:initialObservations "Both lamps stay lit when the switch is opened." ;
    dk:faultyComponent sys:sw ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:sw ] ] ;
    dk:actionBudget 10 ."""


@pytest.fixture(scope="module")
def switched(tmp_path_factory):
    """The string with a switch in its return (written here): the lower lamp burned (STRING.2), and the
    switch stuck closed (STUCK.1)."""
    folder = tmp_path_factory.mktemp("switched")
    (folder / "string.ttl").write_text(SWITCHED)
    head, *bodies = SCENARIOS.split("\n\n")
    (folder / "burned.ttl").write_text(head + "\n\n" + bodies[1])      # STRING.2: the lower lamp burned
    (folder / "stuck.ttl").write_text(head + "\n\n" + STUCK)
    store = KnowledgeStore.memory()
    load_files(store, [folder / "string.ttl"])
    load_files(store, [folder / "burned.ttl", folder / "stuck.ttl"])
    return store


def test_a_switch_replaced_then_opened_to_test_is_closed_again_after_the_round(switched):
    store = switched
    session = diagkg.make("STRING.2", store)
    session.reset(seed=0)
    act(session, "replace_component", "sw")                  # healthy: replaced all the same
    assert "sw" in session.repaired and session.end is None
    act(session, "open_switch", "sw")
    assert session.state().positions == session.injected_state.positions, "left open for good"
    act(session, "replace_component", "lower")
    assert session.end == "success_no_hypothesis"


def test_lamps_lit_past_a_switch_stuck_closed_are_not_a_working_system(switched):
    session = diagkg.make("STUCK.1", switched)
    _, info = session.reset(seed=0)
    assert list(session.initial_result.lit) == ["lower", "upper"] and session.is_nominal()     # every lamp lit, as set up…
    act(session, "observe_component", "upper")
    assert session.end is None and not session.works_again()            # …but the switch does not control them
    act(session, "open_switch", "sw")
    act(session, "replace_component", "sw")
    assert session.end == "success_no_hypothesis"
    hypothesis = diagkg.make("STUCK.1", switched)
    hypothesis.reset(seed=0)
    out, *_ = hypothesis.step(diagkg.Hypothesis(frozenset({"upper"})))
    assert out["verdict"] == "wrong" and hypothesis.end is None
    out, *_ = hypothesis.step(diagkg.Hypothesis(frozenset({"sw"})))
    assert out["verdict"] == "correct" and hypothesis.end == "success"


BYPASSED = """\
@prefix :        <https://example.org/pilot/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:pilot a dk:System ; dk:systemKey "pilot" ; dcterms:identifier "pilot" ; rdfs:label "A lamp with a bypassed pilot" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 9 V battery lights a lamp through a pilot lamp that a fuse bypasses." .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :pilot .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :box ; dk:voltage 9 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" . :bat.neg a dk:Port ; dk:portName "neg" .
:warn a dk:Bulb ; dcterms:identifier "warn" ; rdfs:label "Pilot lamp" ; dk:partOf :box ; dk:resistance 22 ;
    dk:powerThreshold 0.1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :warn.p, :warn.n .
:warn.p a dk:Port ; dk:portName "p" . :warn.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :box ; dk:resistance 100 ;
    dk:powerThreshold 0.5 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" . :lamp.n a dk:Port ; dk:portName "n" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "Bypass fuse" ; dk:partOf :box ; dk:ratedCurrent 5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" . :fuse.n a dk:Port ; dk:portName "n" .

:bat.pos dk:connectedTo :warn.p, :fuse.p .
:warn.n dk:connectedTo :fuse.n, :lamp.p .
:lamp.n dk:connectedTo :bat.neg .
"""

BLOWN = """\
@prefix :        <https://example.org/pilot-scenarios/> .
@prefix sys:     <https://example.org/pilot/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:PILOT.1 a dk:Scenario ; dk:scenarioNumber 9371 ; dcterms:identifier "PILOT.1" ;
    rdfs:label "The bypass fuse blown" ; dk:onSystem sys:pilot ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:BlownFuse ; dk:faultTarget sys:fuse ] ;
    dk:initialObservations "The pilot lamp is lit, and the lamp too." ;
    dk:faultyComponent sys:fuse ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:fuse ] ] ;
    dk:actionBudget 10 .
"""


@pytest.fixture(scope="module")
def bypassed(tmp_path_factory):
    """A lamp fed through a pilot lamp that a fuse bypasses (written here), the fuse blown (PILOT.1)."""
    folder = tmp_path_factory.mktemp("pilot")
    (folder / "pilot.ttl").write_text(BYPASSED)
    (folder / "blown.ttl").write_text(BLOWN)
    store = KnowledgeStore.memory()
    load_files(store, [folder / "pilot.ttl"])
    load_files(store, [folder / "blown.ttl"])
    return store


def test_a_lamp_lit_that_the_working_system_keeps_dark_is_no_working_system(bypassed):
    """Found on a random system (``unwritten_5_9``): a short blew two fuses that bypass a lamp, and naming the
    other end of the short was judged correct, the lamp lit where the working system keeps it dark."""
    session = diagkg.make("PILOT.1", bypassed)
    session.reset(seed=0)
    # every lamp lit as set up…
    assert list(session.nominal_lit) == ["lamp"] and sorted(session.initial_result.lit) == ["lamp", "warn"]
    assert not session.is_nominal()                                         # …but the pilot should be dark
    act(session, "observe_component", "lamp")
    assert session.end is None                                              # a look is no repair
    act(session, "replace_component", "fuse")
    assert session.end == "success_no_hypothesis" and session.is_nominal()
    hypothesis = diagkg.make("PILOT.1", bypassed)
    hypothesis.reset(seed=0)
    out, *_ = hypothesis.step(diagkg.Hypothesis(frozenset({"fuse"})))
    assert out["verdict"] == "correct" and hypothesis.end == "success"
