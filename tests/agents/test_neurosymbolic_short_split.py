"""A reading that tells the short suspects apart (issue 30). Once a short between two nodes is suspected, the
neuro-symbolic assistant names the parts it may end on, the most placements per minute first. Where the pairs of
nodes it may join are many and their ends many, that is a long list: on ``unwritten_2_39`` of the random systems
nobody on the team wrote, a short from the 22 Ω bulb of the 18 V loop to the 220 Ω bulb of the 8 V loop took seven
namings (730 min). Now, before a suspect is named, the potentials at a part's ends (or the current through it) are
read when the pairs of nodes give them apart and reading them is expected to cost less than it saves
(``short_split``): each pair is simulated, and what is left after the reading is named. The system is written here,
in that system's shape: a 16 V loop of two bulbs; an 18 V loop through two fuses, a resistor and a string of a bulb,
an LED and a switch in parallel with two bulbs, then a 220 Ω bulb; an 8 V loop of three bulbs and a cable across a
330 Ω resistor."""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.runs.runner import run_session

from ..support.circuits import Loop, Parallel, Series, part, reachable, scenarios_between, with_generated

KEY = "three_supplies"
READINGS = ("measure_voltage", "measure_current")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    string = Series((part("Bulb", 1, resistance=10, powerThreshold=0.5),
                     part("LED", 2, forwardVoltage=3.23, color="green", powerThreshold=0.005),
                     part("Switch", 2, normallyClosed=True)))
    bank = Parallel((Parallel((part("Bulb", 0, resistance=22, powerThreshold=0.1), part("Fuse", 1, ratedCurrent=10),
                               part("Bulb", 2, resistance=220, powerThreshold=0.05))),
                     string, part("Resistor", 1, resistance=4.7)))
    loops = (Loop(16, 2, Series((part("Bulb", 0, resistance=10, powerThreshold=1.0),
                                 part("Bulb", 0, resistance=22, powerThreshold=0.1)))),
             Loop(18, 2, Series((bank, part("Bulb", 2, resistance=220, powerThreshold=0.1), part("Fuse", 2, ratedCurrent=5)))),
             Loop(8, 2, Series((part("Bulb", 2, resistance=100, powerThreshold=0.5),
                                part("Bulb", 2, resistance=47, powerThreshold=1.0),
                                part("Bulb", 1, resistance=220, powerThreshold=0.05),
                                Parallel((part("Cable", 0, detachable=True), part("Resistor", 0, resistance=330)))))))
    return with_generated(tmp_path_factory.mktemp(KEY), KEY, reachable(loops, KEY), frozenset({"ShortBetweenNodes"}))


def _session(store, number: int, **config: bool) -> tuple[str, float, list[str]]:
    steps: list[str] = []
    result = run_session(number, NeuroSymbolic(**config), store=store, seed=0, record=False, keep_ledger=False,
                         on_round=lambda r: steps.append(r.to_dict()["intention"]))
    return str(result.end), result.cost, steps


def test_a_reading_taken_before_the_suspects_are_named(store):
    (number,) = scenarios_between(store, {"bulb11.p", "bulb16.n"})
    end, cost, steps = _session(store, number)
    assert end == "success" and steps[0].split()[0] in READINGS, steps
    assert sum(s.startswith("hypothesis") for s in steps) <= 2, steps
    end_off, cost_off, steps_off = _session(store, number, short_split=False)
    assert end_off == "success" and steps_off[0].split()[0] not in READINGS
    assert cost <= cost_off - 300, (cost, cost_off, steps_off)        # 150 against 730 min when written


def test_over_every_short_of_the_system_the_reading_costs_less_than_it_saves(store):
    catalog = ScenarioCatalog(store)
    numbers = [n for n in catalog.numbers() if catalog.resolve(n).key == KEY]
    on = [_session(store, n) for n in numbers]
    off = [_session(store, n, short_split=False) for n in numbers]
    solved = ("success", "success_no_hypothesis")
    assert sum(e in solved for e, _, _ in on) >= sum(e in solved for e, _, _ in off)
    assert sum(c for _, c, _ in on) < sum(c for _, c, _ in off)
