"""The neuro-symbolic assistant on parts no shipped system has, found lacking on random systems nobody
on the team wrote (benchmarks/unwritten_systems.py), checked here on systems written in the tests.

* A blown fuse is something the catalogue's tests reveal: a look shows it blown, its continuity
  reads open, no current flows through it and its two ends stand at different potentials. The
  catalogue said none of this, so the assistant, which plans only tests that reveal a suspected
  fault mode, never tested a fuse (the rear-light system, its fuse blown).
* A switch set up open reads open on a continuity test when it works (contacts are read as they
  are, against their closed resistance) and conducts when it is stuck closed: the assistant took
  the first for an anomaly (and replaced a working switch) and the second for a nominal reading (a
  hall light whose bypass switch is stuck closed); by the wiring, a lamp needs such a switch to stay
  open when closing it puts the lamp out.
* A diode mounted the wrong way round is what the catalogue says a diode test reveals; tested in
  place, probes on its terminals as marked, it conducts the wrong way. The test read the part alone
  (nominal), so the assistant cleared the reversed diode it had just tested (the rear light's
  protection diode reversed).
* Every claim of the catalogue's ``dk:reveals`` that applies on the rear-light system shows there; a
  look at a flat battery shows nothing, and the claim went (a look at a blown fuse shows it blown, which
  the assistant did not read)."""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.agents.neurosymbolic_knowledge import Knowledge
from diagkg.agents.neurosymbolic_knowledge import Test as PlannedTest
from diagkg.env.actions import Action
from diagkg.env.outcomes import Continuity, Current, DiodeTest, Kind, Outcome, Sighting, Voltages
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.env.service import make
from diagkg.generation.generate import GenerationConfig, generate
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from ..support.rear import rear_memory_store

BLOWN = """\
@prefix :        <https://example.org/rear-scenarios/> .
@prefix sys:     <https://example.org/rear/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:REAR.3 a dk:Scenario ;
    dk:scenarioNumber 9303 ;
    dcterms:identifier "REAR.3" ;
    rdfs:label "Blown fuse" ;
    dk:onSystem sys:rear ;
    dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:BlownFuse ; dk:faultTarget sys:fuse ] ;
    dk:initialObservations "Every rear light is dark." ;
    dk:statedSymptom [ dk:about sys:tail_l ; dk:appearance dk:Dark ] , [ dk:about sys:tail_r ; dk:appearance dk:Dark ] ,
        [ dk:about sys:green ; dk:appearance dk:Dark ] , [ dk:about sys:plate ; dk:appearance dk:Dark ] ;
    dk:faultyComponent sys:fuse ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:fuse ] ] ;
    dk:actionBudget 10 .
"""


REVERSED = BLOWN.replace("REAR.3", "REAR.4").replace("9303", "9304").replace('"Blown fuse"', '"Reversed diode"') \
    .replace("dk:faultMode dk:BlownFuse ; dk:faultTarget sys:fuse",
             "dk:faultMode dk:ReversedComponent ; dk:faultTarget sys:dio.anode ; dk:otherTarget sys:dio.cathode") \
    .replace("dk:faultyComponent sys:fuse", "dk:faultyComponent sys:dio").replace("dk:target sys:fuse", "dk:target sys:dio")


GREEN_REVERSED = REVERSED.replace("REAR.4", "REAR.6").replace("9304", "9306").replace("sys:dio", "sys:green") \
    .replace("Reversed diode", "Reversed green indicator") \
    .replace('"Every rear light is dark."', '"The green indicator is dark; the tail lamps are lit."') \
    .replace("dk:statedSymptom [ dk:about sys:tail_l ; dk:appearance dk:Dark ] , [ dk:about sys:tail_r ; dk:appearance dk:Dark ] ,",
             "dk:statedSymptom [ dk:about sys:tail_l ; dk:appearance dk:Lit ] , [ dk:about sys:tail_r ; dk:appearance dk:Lit ] ,") \
    .replace("[ dk:about sys:green ; dk:appearance dk:Dark ] , [ dk:about sys:plate ; dk:appearance dk:Dark ]",
             "[ dk:about sys:green ; dk:appearance dk:Dark ] , [ dk:about sys:plate ; dk:appearance dk:Lit ]")


def _store(tmp_path):
    store = rear_memory_store(tmp_path)
    files = [tmp_path / "rear-3.ttl", tmp_path / "rear-4.ttl", tmp_path / "rear-6.ttl"]
    for file, text in zip(files, (BLOWN, REVERSED, GREEN_REVERSED), strict=True):
        file.write_text(text)
    load_files(store, files)
    return store


@pytest.fixture(scope="module")
def rear_quads(tmp_path_factory: pytest.TempPathFactory) -> list:
    """The rear light and its scenarios, loaded (validated, reasoned) once for the module."""
    loaded = _store(tmp_path_factory.mktemp("rear"))
    quads = list(loaded.raw.quads_for_pattern(None, None, None, None))
    loaded.close()
    return quads


@pytest.fixture()
def rear(rear_quads: list):
    """A fresh in-memory copy of :func:`rear_quads` per test (one test writes scenarios into it)."""
    store = KnowledgeStore.memory()
    store.raw.extend(rear_quads)
    yield store
    store.close()


def _revealing(store) -> set[str]:
    """The catalogue's actions that say they reveal a blown fuse (the tests the knowledge holds for the fuse)."""
    tests = Knowledge.of(store, "rear").tests
    return {action for (action, part), test in tests.items() if part == "fuse" and any(
        mode.endswith("BlownFuse") for mode in test.modes)}


def test_every_test_said_to_reveal_a_blown_fuse_shows_it(rear):
    store = rear
    assert _revealing(store) == {"observe_component", "test_continuity", "measure_current", "measure_voltage"}
    readings = {}
    for blown in (False, True):
        session = make("REAR.3" if blown else "REAR.2", store)
        session.reset(seed=0)
        for action in sorted(_revealing(store)):
            readings[action, blown] = session.execute(Action(action, ("fuse",))).data["fuse"]
    seen, working = readings["observe_component", True], readings["observe_component", False]
    assert isinstance(seen, Sighting) and "blown" in (seen.damage or ()) and not working.damage
    assert isinstance(readings["test_continuity", True], Continuity)
    assert (readings["test_continuity", True].verdict, readings["test_continuity", False].verdict) == ("open", "nominal")
    current, nominal = readings["measure_current", True], readings["measure_current", False]
    assert isinstance(current, Current) and current.current == 0 and nominal.current > 0.1
    ends, level = readings["measure_voltage", True], readings["measure_voltage", False]
    assert isinstance(ends, Voltages)
    assert abs(ends.port_voltages["p"] - ends.port_voltages["n"]) > 10 > abs(level.port_voltages["p"] - level.port_voltages["n"])


def test_neuro_symbolic_tests_the_fuse_and_finds_it(rear):
    store = rear
    assistant = NeuroSymbolic()
    result = run_session("REAR.3", assistant, store=store, seed=0, record=False)
    assert result.end in ("success", "success_no_hypothesis"), result.end
    assert result.record is not None
    done = [(e["action"], tuple(e.get("targets", ()))) for r in result.record.rounds for e in r.get("executed", [])]
    assert any(t == ("fuse",) and a in _revealing(store) for a, t in done), done
    named = [r for r in result.record.rounds if r.get("kind") == "hypothesis" and r.get("verdict") == "correct"]
    assert ("replace_component", ("fuse",)) in done or named


HALL = """\
@prefix :        <https://example.org/hall/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:hall a dk:System ; dk:systemKey "hall" ; dcterms:identifier "hall" ; rdfs:label "Hall lights" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery feeds a hall bulb and a night lamp in series; a bypass switch across \
the night lamp, left open, puts it out when closed." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :hall .
:bat a dk:VoltageSource ; dcterms:identifier "bat" ; rdfs:label "Battery" ; dk:partOf :body ; dk:voltage 12 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :bat.pos, :bat.neg .
:bat.pos a dk:Port ; dk:portName "pos" . :bat.neg a dk:Port ; dk:portName "neg" .
:hall_bulb a dk:Bulb ; dcterms:identifier "hall_bulb" ; rdfs:label "Hall bulb" ; dk:partOf :body ; dk:resistance 24 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :hall_bulb.p, :hall_bulb.n .
:hall_bulb.p a dk:Port ; dk:portName "p" . :hall_bulb.n a dk:Port ; dk:portName "n" .
:night a dk:Bulb ; dcterms:identifier "night" ; rdfs:label "Night lamp" ; dk:partOf :body ; dk:resistance 24 ;
    dk:powerThreshold 1 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :night.p, :night.n .
:night.p a dk:Port ; dk:portName "p" . :night.n a dk:Port ; dk:portName "n" .
:bypass a dk:Switch ; dcterms:identifier "bypass" ; rdfs:label "Bypass switch" ; dk:partOf :body ;
    dk:normallyClosed false ; dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :bypass.p, :bypass.n .
:bypass.p a dk:Port ; dk:portName "p" . :bypass.n a dk:Port ; dk:portName "n" .
:bat.pos dk:connectedTo :hall_bulb.p .
:hall_bulb.n dk:connectedTo :night.p, :bypass.p .
:night.n dk:connectedTo :bat.neg .
:bypass.n dk:connectedTo :bat.neg .
"""

STUCK_CLOSED = """\
@prefix :        <https://example.org/hall-scenarios/> .
@prefix sys:     <https://example.org/hall/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:HALL.1 a dk:Scenario ; dk:scenarioNumber 9401 ; dcterms:identifier "HALL.1" ; rdfs:label "Bypass stuck closed" ;
    dk:onSystem sys:hall ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:StuckClosed ; dk:faultTarget sys:bypass ] ;
    dk:initialObservations "The night lamp is dark; the hall bulb is lit." ;
    dk:statedSymptom [ dk:about sys:night ; dk:appearance dk:Dark ] , [ dk:about sys:hall_bulb ; dk:appearance dk:Lit ] ;
    dk:faultyComponent sys:bypass ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:position 1 ;
        dk:actionType dk:ReplaceComponent ; dk:target sys:bypass ] ] ;
    dk:actionBudget 10 .
"""


def test_a_switch_set_up_open_is_judged_by_its_lever(tmp_path):
    files = [tmp_path / "hall.ttl", tmp_path / "hall-1.ttl"]
    files[0].write_text(HALL)
    files[1].write_text(STUCK_CLOSED)
    store = KnowledgeStore.memory()
    load_files(store, files)
    # by the wiring (the hall declares no functions), the night lamp needs the bypass switch to stay open
    assert Knowledge.of(store, "hall").wired["night"] == {"bat", "hall_bulb", "bypass"}
    assistant = NeuroSymbolic()
    result = run_session("HALL.1", assistant, store=store, seed=0, record=False)
    assert result.end in ("success", "success_no_hypothesis"), result.end
    test = PlannedTest("test_continuity", "bypass", 20.0, frozenset())
    # what the assistant makes of the readings of a working switch set up open, and of one stuck closed
    open_reading = Outcome(0, Kind.ACTION, "test_continuity bypass", True, "", 20.0,
                           data={"bypass": Continuity("open", 1e9)})
    closed_reading = Outcome(0, Kind.ACTION, "test_continuity bypass", True, "", 20.0,
                             data={"bypass": Continuity("nominal", 0.01)})
    assert assistant._verdict(test, open_reading) is False and assistant._verdict(test, closed_reading) is True


def test_a_diode_test_shows_a_diode_mounted_the_wrong_way_round(rear):
    store = rear
    tests = Knowledge.of(store, "rear").tests
    assert any(mode.endswith("ReversedComponent") for mode in tests["test_diode", "dio"].modes)   # as the catalogue says
    verdicts = {}
    for number in ("REAR.4", "REAR.2"):         # the diode reversed; a working diode (a tail lamp burned)
        session = make(number, store)
        session.reset(seed=0)
        reading = session.execute(Action("test_diode", ("dio",))).data["dio"]
        assert isinstance(reading, DiodeTest)
        verdicts[number] = reading.verdict
    assert verdicts == {"REAR.4": "reversed", "REAR.2": "nominal"}
    result = run_session("REAR.4", NeuroSymbolic(), store=store, seed=0, record=False)
    assert result.end in ("success", "success_no_hypothesis"), result.end


def test_what_the_catalogue_says_a_test_reveals_it_shows(rear, tmp_path):
    """Every (action, fault mode) pair of ``dk:reveals`` that applies on the rear-light system shows, as the
    assistant reads the outcome, on one placement of the mode at least (``diagkg generate``'s single faults):
    a look at a flat battery shows nothing, so the catalogue no longer says it reveals one."""
    store = rear
    gen = generate(store, GenerationConfig("rear", check=False, seeds=2))
    load_files(store, gen.write(tmp_path / "generated"))
    shown: dict[tuple[str, str], bool] = {}
    for written in gen.written:
        scenario = ScenarioCatalog(store).resolve(written.number)
        (fault,) = scenario.faults
        mode = fault.mode.rsplit("#", 1)[-1]
        parts = {iri.rsplit("/", 1)[-1].split(".")[0] for iri in (fault.target, fault.other) if iri}
        assistant = NeuroSymbolic()
        run_session(written.number, assistant, store=store, seed=0, budget=1, record=False, keep_ledger=False)
        for (action, part), test in sorted(assistant.tests.items()):
            if part in parts and any(m.rsplit("#", 1)[-1] == mode for m in test.modes):
                session = make(written.number, store)
                session.reset(seed=0)
                verdict = assistant._verdict(test, session.execute(Action(action, (part,))))
                shown[action, mode] = shown.get((action, mode), False) or bool(verdict)
    assert ("observe_component", "BlownFuse") in shown and ("test_diode", "ReversedComponent") in shown
    assert len(shown) >= 15
    assert [pair for pair, seen in sorted(shown.items()) if not seen] == []


def test_a_part_seen_with_its_ends_swapped_is_itself_reversed(rear):
    """An inspection of an LED mounted the wrong way round shows each of its ends where the other should
    be: the LED is reversed, not its neighbours' ends off (the assistant took the parts its ends should
    sit beside for parts whose end is off, and replaced them one by one)."""
    store = rear
    assistant = NeuroSymbolic()
    run_session("REAR.6", assistant, store=store, seed=0, budget=1, record=False, keep_ledger=False)
    seen = {}
    for number in ("REAR.6", "REAR.2"):
        session = make(number, store)
        session.reset(seed=0)
        seen[number] = session.execute(Action("inspect_connections", ("green",)))
    assert assistant._reversed("green", seen["REAR.6"]) and not assistant._reversed("green", seen["REAR.2"])
    assert assistant._missing("green", seen["REAR.6"])         # read as ends off, every neighbour would be named
