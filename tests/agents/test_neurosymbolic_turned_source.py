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
