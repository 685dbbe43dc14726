"""A probe that changes a part is priced with taking it back. Scored by information per minute, turning a
battery round counted its 30 minutes once; where the battery is healthy (nearly every world) the model-based
assistant must turn it back before the system can work, and it did: on a system nobody on the team wrote
(``unwritten_5_6`` of benchmarks/unwritten_systems.py, generator seed 5, written out here), a short between a
bulb and a fuse was met by turning each of its two batteries round and back (120 minutes) before three current
readings found the fuse. Now the probe's minutes count the undoing in the worlds where it is its own undoing and
does not make the system work (``ModelBasedAssistant.paid_back``), and the other options are scored again
without it while it falls below them."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

from diagkg.runs.runner import run_session

from ..support.circuits import Leaf, Loop, Parallel, Series, reachable, scenarios_between, with_generated

KEY = "stranger_twin_loops"


def _system() -> str:
    def leaf(kind: str, module: int, **params: object) -> Leaf:
        return Leaf(kind, tuple(params.items()), module=module)

    def fuse(amps: float, module: int) -> Leaf:
        return leaf("Fuse", module, ratedCurrent=amps)

    def resistor(ohms: float, module: int) -> Leaf:
        return leaf("Resistor", module, resistance=ohms)

    def bulb(ohms: float, module: int) -> Leaf:
        return leaf("Bulb", module, resistance=ohms, powerThreshold=0.05)

    def led(volts: float, colour: str, amps: float, watts: float, module: int) -> Leaf:
        return leaf("LED", module, forwardVoltage=volts, color=colour, forwardCurrent=amps, powerThreshold=watts)

    loops = (
        Loop(4, 2, Series((bulb(60, 1), Parallel((
            Series((fuse(10, 2), resistor(10000, 0))),
            Series((resistor(1000, 2), fuse(10, 0))),
            Series((Series((fuse(5, 0), fuse(5, 1), led(2.0, "ultraviolet", 0.02, 0.005, 2))), resistor(100, 1)))))))),
        Loop(18, 0, Series((bulb(220, 1), Parallel((
            Parallel((led(1.63, "green", 0.02, 0.005, 0), leaf("Switch", 0, normallyClosed=True), resistor(4700, 2))),
            Parallel((bulb(60, 1), led(2.75, "red", 0.01, 0.02, 2)))))))),
    )
    return reachable(loops, KEY)


def test_a_battery_is_not_turned_round_and_back_as_a_probe(tmp_path: Path):
    store = with_generated(tmp_path, KEY, _system(), frozenset({"ShortBetweenNodes"}))
    short = scenarios_between(store, {"bulb11.n", "fuse2.n"})
    assert len(short) == 1
    rounds: list[dict] = []
    result = run_session(short[0], "model-based", seed=0, store=store, record=False, keep_ledger=False,
                         on_round=lambda r: rounds.append(r.to_dict()))
    steps = [(e["action"], tuple(e["targets"])) for r in rounds for e in r["executed"]]
    assert result.end in ("success", "success_no_hypothesis")
    # no probe taken and taken back: the same change twice in a row
    assert not any(a == b and a[0] == "reverse_battery" for a, b in pairwise(steps))
