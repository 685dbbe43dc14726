"""What the neuro-symbolic assistant lost on one of the random systems of
benchmarks/unwritten_systems.py (nobody on the team wrote it), written out here part by part.

* A short across a lamp that draws no over-current: the lamp goes dark, the lamp in series with it burns
  brighter, and no current reads above the working one where the assistant looks (it measured the rest of
  the system until its rounds ran out). A part that carries less than its working current is starved; when
  it conducts (its continuity reads nominal) and no part that opened would give what was read, something
  bypasses it. The parts a short that shows the lights seen, and gives every current and voltage read so
  far, may end on are then named, most likely first.
* A battery's loose terminal, every lamp of its circuit coming and going: its voltage read right at a
  moment the terminal held ruled the battery out (and was evidence that the parts it depends on work).
  While a light comes and goes, a reading right is a moment: it clears no fault that acts at random.
* Two cables of different circuits with their ends swapped: an inspected cable end sits beside a fuse's
  end, where the other cable's end belongs (the crossings it knew were of ends sitting beside cables).
"""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.kg.loading import load_files
from diagkg.runs.runner import run_session

from ..support.circuits import Leaf, Loop, Parallel, Series, reachable, render, scenarios_between, with_generated
from ..support.stores import catalog_copy

KEY = "porch"
SOLVED = ("success", "success_no_hypothesis")


def _system() -> str:
    """One of those random systems, written out part by part: a 23 V supply through a cable, a 5 A fuse and
    a resistor; a 15 V one through a blue LED, a fuse, a diode, a 47 Ω bulb, a 22 Ω bulb with a 33 Ω resistor
    across it, and two cables back; a 3 V one through a resistor into a resistor, a fuse and a resistor in
    parallel (no lamp). One ground."""
    def leaf(type_: str, module: int, *params: tuple[str, object], detachable: bool = False) -> Leaf:
        return Leaf(type_, params, module=module, detachable=detachable)

    loops = (
        Loop(23, 2, Series((leaf("Cable", 1, ("resistance", 0.05)), leaf("Fuse", 2, ("ratedCurrent", 5)),
                            leaf("Resistor", 2, ("resistance", 47))))),
        Loop(15, 0, Series((leaf("LED", 2, ("forwardVoltage", 2.68), ("color", "blue"), ("forwardCurrent", 0.02)),
                            leaf("Fuse", 0, ("ratedCurrent", 10)), leaf("Diode", 2, ("forwardVoltage", 0.86)),
                            leaf("Bulb", 2, ("resistance", 47), ("powerThreshold", 1.0)),
                            Parallel((leaf("Resistor", 1, ("resistance", 33)),
                                      leaf("Bulb", 1, ("resistance", 22), ("powerThreshold", 0.1)))),
                            leaf("Cable", 1, detachable=True), leaf("Cable", 0)))),
        Loop(3, 0, Series((leaf("Resistor", 1, ("resistance", 10)),
                           Parallel((leaf("Resistor", 1, ("resistance", 1)), leaf("Fuse", 1, ("ratedCurrent", 10)),
                                     leaf("Resistor", 1, ("resistance", 4.7))))))),
    )
    text = render(loops, key=KEY).turtle
    return text.replace("dk:affords dk:Observable,", "dk:affords dk:Observable, dk:Reachable,")


def _scenario(number: int, fault: str, faulty: str, dark: str = "bulb10", lit: str = "bulb8 led5",
              flickering: str = "", text: str = "Some lamps are dark.") -> str:
    said = ", ".join(f"[ dk:about sys:{p} ; dk:appearance dk:{looks} ]"
                     for parts, looks in ((dark, "Dark"), (lit, "Lit"), (flickering, "Flickering")) for p in parts.split())

    return f"""@prefix : <https://example.org/porch-scenarios/> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix dk: <https://w3id.org/diagkg/ontology#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sys: <https://example.org/{KEY}/> .

:PORCH.{number} a dk:Scenario ;
    rdfs:label "Porch light, scenario {number}" ;
    dcterms:identifier "PORCH.{number}" ;
    dk:scenarioNumber {9930 + number} ;
    dk:onSystem sys:{KEY} ;
    dk:hasCategory dk:Simple ;
    dk:actionBudget 11 ;
    dk:injects [ a dk:Fault ; {fault} ] ;
    dk:faultyComponent {", ".join(f"sys:{p}" for p in faulty.split())} ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:actionType dk:ReplaceComponent ;
                                                 dk:position 1 ; dk:target sys:{faulty.split()[0]} ] ] ;
    dk:initialObservations "{text}" ;
    dk:statedSymptom {said} .
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("porch")
    (folder / "porch.ttl").write_text(_system())
    (folder / "porch-1.ttl").write_text(_scenario(
        1, "dk:faultMode dk:ShortBetweenNodes ; dk:faultTarget sys:bulb10.p ; dk:otherTarget sys:bulb10.n", "bulb10"))
    (folder / "porch-2.ttl").write_text(_scenario(2, "dk:faultMode dk:OpenComponent ; dk:faultTarget sys:bulb10",
                                                  "bulb10"))
    (folder / "porch-3.ttl").write_text(_scenario(
        3, "dk:faultMode dk:CrossedCables ; dk:faultTarget sys:cable1.n ; dk:otherTarget sys:cable11.n",
        "cable1 cable11", dark="bulb10 bulb8", lit="led5"))
    (folder / "porch-4.ttl").write_text(_scenario(
        4, "dk:faultMode dk:LooseConnectionFault ; dk:faultTarget sys:bat4.neg ; dk:probability 0.5", "bat4",
        dark="", lit="", flickering="bulb10 bulb8 led5",
        text="Bulb 10 is flickering; Bulb 8 is flickering; LED 5 is flickering."))
    out = catalog_copy()          # the shipped catalogue
    load_files(out, [folder / "porch.ttl"] + [folder / f"porch-{n}.ttl" for n in range(1, 5)])
    return out


def _run(store, scenario: str, **config):
    rounds: list[dict] = []
    result = run_session(scenario, NeuroSymbolic(**config), store=store, seed=0, record=False, keep_ledger=False,
                         on_round=lambda r: rounds.append(r.to_dict()))
    return result, rounds


def test_a_starved_part_that_conducts_points_to_a_short_across_it(store):
    # (the dark lamp's potentials, read first by default, find this short too: see test_neurosymbolic_probe_dark.py)
    assert _run(store, "PORCH.1")[0].end in SOLVED
    result, rounds = _run(store, "PORCH.1", probe_dark=False)
    assert result.end in SOLVED, rounds
    first = next(n for n, r in enumerate(rounds) if r.get("suspects"))
    tests = [(r["action"]["action"], r["action"]["targets"][0]) for r in rounds[:first]]
    # a part read starved and conducting before anything was named: the lamp, or the resistor across it
    assert any(("measure_current", p) in tests and ("test_continuity", p) in tests for p in ("bulb10", "r9")), tests
    assert set(rounds[-1]["suspects"]) & {"bulb10", "r9"}          # an end of the short across the small bulb
    off, _ = _run(store, "PORCH.1", starved_shorts=False, probe_dark=False)
    assert off.end not in SOLVED          # without it, the rest of the system is measured until the rounds run out


def test_an_open_lamp_is_not_taken_for_a_short(store):
    # the same lamp open: what it reads points to it alone; nothing is named as a short's end
    result, rounds = _run(store, "PORCH.2")
    off, _ = _run(store, "PORCH.2", starved_shorts=False)
    assert result.end in SOLVED and (result.end, result.cost) == (off.end, off.cost)
    assert [frozenset(r["suspects"]) for r in rounds if r.get("suspects")] == [{"bulb10"}]


def test_an_end_beside_another_circuits_fuse_names_the_two_cables_crossed(store):
    result, rounds = _run(store, "PORCH.3")
    assert result.end in SOLVED, rounds
    seen = next(n for n, r in enumerate(rounds) if r.get("action") and r["action"]["action"] == "inspect_connections"
                and r["action"]["targets"][0] in ("cable1", "cable11"))
    # the end seen beside the fuse names the two cables at once (not a third cable, then another look)
    assert set(rounds[seen + 1].get("suspects") or ()) == {"cable1", "cable11"}, rounds[seen:]


@pytest.mark.parametrize("flicker_holds", [True, False])
def test_a_reading_right_while_lamps_come_and_go_clears_no_loose_connection(store, flicker_holds):
    result, rounds = _run(store, "PORCH.4", flicker_holds=flicker_holds)
    measured = [r["action"]["targets"][0] for r in rounds if r.get("action") and r["action"]["action"] == "measure_voltage"]
    assert "bat4" in measured, rounds       # read right at a moment its terminal held
    if not flicker_holds:
        assert result.end not in SOLVED     # the battery ruled out: the rounds run out on the rest
        return
    assert result.end in SOLVED, rounds


@pytest.fixture(scope="module")
def shorts(tmp_path_factory):
    """The system with its generated shorts between nodes, built once for the tests that only read it."""
    return with_generated(tmp_path_factory.mktemp(KEY), KEY, _system(), frozenset({"ShortBetweenNodes"}))


def test_a_short_no_opened_part_explains_is_sought_after_a_wrong_naming(shorts):
    """The generated shorts between two nodes of this system (``unwritten_0_21`` on generator seed 0) mostly
    leave lamps dark, as an opened part would, and no current reads above nominal: the assistant named a
    dark bulb, then tested part after part until its rounds ran out (19 of the 70 scenarios the benchmark
    generates for it). Once a naming is judged wrong and no part cut off at one end gives the lights seen
    and every current and voltage read, the parts a short may end on are named (``unexplained_shorts``)."""
    store = shorts
    catalog = ScenarioCatalog(store)
    numbers = [n for n in catalog.numbers() if catalog.resolve(n).key == KEY]
    assert len(numbers) >= 10

    def solved(**config: object) -> int:
        return sum(run_session(n, NeuroSymbolic(**config), store=store, seed=0, record=False,
                               keep_ledger=False).end in SOLVED for n in numbers)

    # (the dark-lamp probe where several lamps are dark, written later, solves every one of them another way: it is
    # off in both runs, so that the rule is seen on its own)
    before, after = solved(unexplained_shorts=False, probe_dark_many=False), solved(probe_dark_many=False)
    assert after >= before + 6, (before, after, len(numbers))       # 11 -> 20 of 34 when written
    assert solved() >= after


def test_where_several_lamps_are_dark_one_found_conducting_is_probed(shorts):
    """The short from the 15 V battery's positive pole to the end of the cable back puts out the LED and both
    bulbs: three lamps out of place, all dark. The first found conducting has its ends' potentials read
    (``probe_dark_many``), which no part cut off at one end gives: the short's ends are named. Before, the probe
    waited for a light alone out of place, and the assistant tested and named part after part."""
    store = shorts
    (number,) = scenarios_between(store, {"bat4.pos", "cable11.n"})

    def session(**config: bool) -> tuple[str, float, list[str]]:
        steps: list[str] = []
        result = run_session(number, NeuroSymbolic(**config), store=store, seed=0, record=False, keep_ledger=False,
                             on_round=lambda r: steps.append(r.to_dict()["intention"]))
        return str(result.end), result.cost, steps

    end, cost, steps = session()
    assert end == "success" and any(s.startswith("measure_voltage bulb") for s in steps), steps
    assert steps[-1] == "hypothesis {cable11}"
    _, cost_one, steps_one = session(probe_dark_many=False)
    assert not any(s.startswith("measure_voltage bulb") for s in steps_one), steps_one
    assert cost < cost_one and len(steps) < len(steps_one)


def _second_system() -> str:
    """Another of those random systems (``unwritten_2_9``): a 9 V supply through a 100 Ω resistor, a cable
    and a reversed diode in parallel, into a 10 Ω bulb; a 12 V one through a cable, a 5 A fuse, a 47 Ω bulb
    and a switch; a 4 V one through a cable, a fuse, a switch and a 100 Ω resistor."""
    def leaf(type_: str, module: int, *params: tuple[str, object], detachable: bool = False,
             reversed_: bool = False) -> Leaf:
        return Leaf(type_, params, module=module, detachable=detachable, reversed=reversed_)

    loops = (
        Loop(9, 0, Series((Parallel((Parallel((leaf("Resistor", 1, ("resistance", 100)),
                                               leaf("Cable", 2, ("resistance", 0.05), detachable=True))),
                                     leaf("Diode", 2, ("forwardVoltage", 0.34), reversed_=True))),
                           leaf("Bulb", 2, ("resistance", 10), ("powerThreshold", 1.0))))),
        Loop(12, 1, Series((leaf("Cable", 0, ("resistance", 0.05), detachable=True), leaf("Fuse", 1, ("ratedCurrent", 5)),
                            leaf("Bulb", 0, ("resistance", 47), ("powerThreshold", 0.5)),
                            leaf("Switch", 1, ("normallyClosed", True))))),
        Loop(4, 0, Series((leaf("Cable", 0, ("resistance", 0.05), detachable=True), leaf("Fuse", 1, ("ratedCurrent", 5)),
                           leaf("Switch", 1, ("normallyClosed", True)), leaf("Resistor", 2, ("resistance", 100))))),
    )
    return reachable(loops, "porch_two")


@pytest.fixture(scope="module")
def porch_two(tmp_path_factory):
    """The second system with its generated shorts between nodes, built once for the tests that only read it."""
    return with_generated(tmp_path_factory.mktemp("porch_two"), "porch_two", _second_system(), frozenset({"ShortBetweenNodes"}))


def test_a_short_no_opened_part_explains_is_sought_once_the_candidates_are_used_up(porch_two):
    """No naming at all: the dark lamp's own tests read nominal, its candidates are used up, and the
    assistant went on to test the parts of circuits whose lamps look as usual (``unwritten_2_9`` S.334/337).
    Where the candidates are used up and no part cut off at one end gives the lights seen and every reading,
    the short suspects are named before looking elsewhere (``unexplained_shorts``)."""
    store = porch_two
    catalog = ScenarioCatalog(store)
    numbers = [n for n in catalog.numbers() if catalog.resolve(n).key == "porch_two"]

    def solved(**config: object) -> int:
        return sum(run_session(n, NeuroSymbolic(**config), store=store, seed=0, record=False,
                               keep_ledger=False).end in SOLVED for n in numbers)

    assert len(numbers) == 13
    before, after = solved(unexplained_shorts=False, probe_dark=False), solved(probe_dark=False)
    assert after >= 12 and before <= after - 3, (before, after)      # 8 and 12; 11 when only a wrong naming was the sign
    # the dark lamp's potentials read first (probe_dark, on by default) find these shorts, without the rule too
    assert solved() == solved(unexplained_shorts=False) == 13


def test_a_short_that_blew_a_fuse_is_suspected_beside_those_that_damage_nothing(porch_two):
    """A short from bulb 8's near end to the 4 V loop blows fuse 7 (physics version 4: before, fuse 12 too, and
    replacing fuse 7 alone brought the system back). The bulb's near end reads 4 V, which a short from the fuse's
    far end to the 4 V battery, damaging nothing, gives too: only shorts that damage nothing were suspected while
    one gave the readings, and the assistant named the parts of that one until its rounds ran out, never fuse 7 or
    bulb 8 (``unwritten_2_9`` S.212/213). Those that damaged something are suspected beside them
    (``damaging_alike``), and the fuse they blew is named after the parts they may end on (``spare_damaged``)."""
    store = porch_two
    (number,) = scenarios_between(store, {"bulb8.p", "fuse12.n"})
    assert ScenarioCatalog(store).resolve(number).faulty == {"fuse7", "bulb8", "fuse12"}
    runs = [run_session(number, NeuroSymbolic(**config), store=store, seed=0, record=False, keep_ledger=False)
            for config in ({}, {"damaging_alike": False}, {"spare_damaged": False})]
    assert [str(r.end) for r in runs] == ["success", "timeout", "success"], runs
    # the fuse those shorts blow is named after the short's other end (``spare_damaged``): named first while the
    # short was elsewhere, it blew again and was named twice (445 min, where 325 do)
    assert runs[0].cost + 100 <= runs[2].cost, (runs[0].cost, runs[2].cost)


@pytest.mark.parametrize("number", [205, 211])
def test_once_a_shorts_end_is_repaired_the_fuse_a_short_there_blew_is_named(porch_two, number):
    """A short from the 4 V supply's positive terminal to the 47 Ω bulb's supply end blows the 5 A fuse before
    it. The dark bulb's potentials read 4 V at that end, and a short upstream of the fuse, which damages nothing,
    gives them too: only such shorts were suspected. Once an end of the short (the 4 V battery, or its cable) is
    named and found faulty, what the shorts ending there damage is named next, those that damage something among
    them (``short_damage`` with ``damaging_shorts``): the fuse. Before, the fuse was never named and the rounds
    ran out."""
    store = porch_two
    scenario = ScenarioCatalog(store).resolve(number)
    assert scenario.faults[0].mode == "ShortBetweenNodes" and "fuse7" in scenario.faulty
    named: list[tuple[str, ...]] = []
    result = run_session(number, NeuroSymbolic(), store=store, seed=0, record=False, keep_ledger=False,
                         on_round=lambda r: named.append(tuple(r.to_dict().get("suspects") or ())))
    named = [s for s in named if s]
    assert result.end == "success" and named[-1] == ("fuse7",), named
    assert set(named[-2]) & (scenario.faulty - {"fuse7"})        # right after the short's end
