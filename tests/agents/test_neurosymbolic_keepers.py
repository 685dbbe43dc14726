"""A lamp lit, or coming and going, where the working system keeps it dark, on a system written here: its
needs say what lights it, not what keeps it dark, so the neuro-symbolic assistant suspected the lamp alone.
Found on the random systems of benchmarks/unwritten_systems.py (generator seed 11, ``unwritten_11_10``): a
cable across an LED with a loose end makes the LED flicker; the LED was named (120 min, wrong), then part
after part tested, never the cable, until the rounds ran out. Now the parts whose opening lights such a
lamp in the simulated working system (``Knowledge.keepers``) are implicated with it (``keepers``)."""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.agents.neurosymbolic_knowledge import Knowledge
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.runs.runner import run_session
from diagkg.sim.simulator import Simulator

from ..support.circuits import Leaf, Loop, Parallel, Series, reachable, with_generated

KEY = "kept_dark"
SOLVED = ("success", "success_no_hypothesis")


def _system() -> str:
    def bulb(ohms: float, module: int) -> Leaf:
        return Leaf("Bulb", (("resistance", ohms), ("powerThreshold", 0.1)), module=module)

    def cable(module: int) -> Leaf:
        return Leaf("Cable", (("resistance", 0.5),), module=module)

    # an LED with a cable across it (dark when the system works), in series with two bulbs and a switch; a
    # second loop beside it. The LED is a lamp of the system (dk:isIndicator false): an indicator's light coming
    # and going with a loose end on its branch alone leaves the system working, as a broken indicator does
    led = Leaf("LED", (("forwardVoltage", 2.9), ("color", "white"), ("powerThreshold", 0.005), ("isIndicator", False)),
               module=1)
    loops = (
        Loop(12, 0, Series((bulb(100, 0), Parallel((led, cable(1))), Leaf("Switch", (("normallyClosed", True),), module=1),
                            bulb(100, 1)))),
        Loop(9, 2, Series((bulb(47, 2), cable(2), Leaf("Resistor", (("resistance", 33),), module=2)))),
    )
    return reachable(loops, KEY)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return with_generated(tmp_path_factory.mktemp("kept_dark"), KEY, _system(), frozenset({"LooseConnectionFault"}))


def _parts(store) -> tuple[str, str]:
    """The LED and the cable wired across it (its two ends on the LED's two nets), read from the description."""
    sk = Simulator.from_store(store, KEY).skeleton
    nets = {cid: frozenset(net for (c, _), net in sk.net_of_port.items() if c == cid) for cid in sk.components}
    led = next(c for c, part in sk.components.items() if part.type == "LED")
    return led, next(c for c, part in sk.components.items() if part.type == "Cable" and nets[c] == nets[led])


def test_what_keeps_a_dark_lamp_dark_is_found_by_simulation(store):
    led, across = _parts(store)
    # opening a bulb, the switch or the battery puts the whole loop out; only the cable across the LED lights it
    assert Knowledge.of(store, KEY).keepers == {led: {across}}


def test_a_loose_cable_across_a_flickering_led_is_suspected_with_it(store):
    led, across = _parts(store)
    catalog = ScenarioCatalog(store)
    numbers = [n for n in catalog.numbers() if (s := catalog.resolve(n)).key == KEY
               and any(f.target.rsplit("/", 1)[-1].startswith(f"{across}.") for f in s.faults)]
    assert len(numbers) == 2              # its two ends
    for n in numbers:
        assert dict(catalog.resolve(n).symptoms)[led] == "Flickering"
        for seed in range(3):
            after = run_session(n, NeuroSymbolic(), store=store, seed=seed, record=False, keep_ledger=False)
            before = run_session(n, NeuroSymbolic(keepers=False), store=store, seed=seed, record=False, keep_ledger=False)
            assert after.end in SOLVED, (n, seed, after.end)
            # found by a look at the cable and named, not after naming the LED (120 min)
            assert after.cost <= 60 < before.cost, (n, seed, after.cost, before.cost)
