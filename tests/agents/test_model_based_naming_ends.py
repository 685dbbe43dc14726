"""A naming ends a session in more worlds than its own diagnosis's. The model-based assistant weighs naming the
candidates' diagnoses one after another against testing first, and ordered the namings as if each ended the
session only where the candidates name its parts. But a short between two nodes is repaired (and the naming
judged correct) by naming the part at either end, and a fuse a short blew, once another blown fuse keeps the
short out, makes the system work when it is replaced: the session ends at the next look. Now (``naming_ends``)
the first namings of that order are tried in the other diagnoses' worlds and ordered by the weight each ends
per minute (:meth:`ModelBasedAssistant.naming_plan`). Both systems here are of benchmarks/unwritten_systems.py,
written out: ``unwritten_0_1`` (generator seed 0) and ``unwritten_2_9`` (seed 2)."""

from __future__ import annotations

import pytest

from diagkg.runs.runner import run_session

from ..support.circuits import Leaf, Loop, Parallel, Series, part, reachable, scenarios_between, with_generated

SOLVED = ("success", "success_no_hypothesis")


def bulb(ohms: float, watts: float, module: int) -> Leaf:
    return part("Bulb", module, resistance=ohms, powerThreshold=watts)


def switch(closed: bool, module: int) -> Leaf:
    return part("Switch", module, normallyClosed=closed)


def resistor(ohms: float, module: int) -> Leaf:
    return part("Resistor", module, resistance=ohms)


def cable(module: int) -> Leaf:
    return part("Cable", module, detachable=True, resistance=0.05)


def fuse(amps: float, module: int) -> Leaf:
    return part("Fuse", module, ratedCurrent=amps)


def three_loops(key: str) -> str:
    """``unwritten_0_1``: a bulb beside two open switches and a second bulb; resistors beside a red LED; a diode
    beside a switch before a bulb."""
    return reachable((
        Loop(9, 0, Series((bulb(10, 0.5, 2), Parallel((switch(False, 0), switch(False, 1), bulb(22, 0.1, 1)))))),
        Loop(17, 2, Series((resistor(10, 1), Parallel((
            resistor(330, 0), resistor(100, 0), part("LED", 0, forwardVoltage=2.7, color="red", powerThreshold=0.02)))))),
        Loop(8, 1, Series((Parallel((part("Diode", 2, forwardVoltage=0.75), switch(False, 1))), bulb(60, 0.05, 1)))),
    ), key)


def fused_loops(key: str) -> str:
    """``unwritten_2_9``: a cable beside a resistor and a diode turned round, before a bulb; a cable, a 5 A fuse, a
    bulb and a switch in series; a cable, a 5 A fuse, a switch and a resistor in series."""
    return reachable((
        Loop(9, 0, Series((Parallel((Parallel((resistor(100, 1), cable(2))),
                                     part("Diode", 2, reversed=True, forwardVoltage=0.34))), bulb(10, 1.0, 2)))),
        Loop(12, 1, Series((cable(0), fuse(5, 1), bulb(47, 0.5, 0), switch(True, 1)))),
        Loop(4, 0, Series((cable(0), fuse(5, 1), switch(True, 1), resistor(100, 2)))),
    ), key)


def _short(store, ends: set[str]) -> int:
    found = scenarios_between(store, ends)
    assert len(found) == 1, found
    return found[0]


def _run(store, number: int, on: bool) -> tuple[str, float, list[tuple[str, ...]]]:
    rounds: list[dict] = []
    result = run_session(number, "model-based", seed=0, store=store, record=False, keep_ledger=False,
                         config={"naming_ends": on}, on_round=lambda r: rounds.append(r.to_dict()))
    named = [tuple(r["suspects"]) for r in rounds if r.get("suspects")]
    return result.end, result.cost, named


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory):
    """Built once for both settings (the sessions only read it)."""
    return with_generated(tmp_path_factory.mktemp("three"), "unwritten_0_1", three_loops("unwritten_0_1"),
                          frozenset({"ShortBetweenNodes"}))


@pytest.fixture(scope="module")
def fused(tmp_path_factory: pytest.TempPathFactory):
    """Built once for both settings (the sessions only read it)."""
    return with_generated(tmp_path_factory.mktemp("fused"), "unwritten_2_9", fused_loops("unwritten_2_9"),
                          frozenset({"ShortBetweenNodes"}))


@pytest.mark.parametrize("on", [True, False])
def test_a_short_is_named_by_the_part_at_either_end(three, on: bool):
    """A short between the negative pole of battery 0 and bulb 1's far end: bulb 4 dark, the rest lit. Each
    placement of a short is a candidate under the part of its first end only; bulb 1 and battery 0 each end it."""
    store = three
    end, cost, named = _run(store, _short(store, {"bat0.neg", "bulb1.n"}), on)
    assert end in SOLVED
    # when written: with naming_ends a switch, then bulb 1 (260 min); without, the two switches and bulb 4 named
    # first, each wrong (500 min). Since an assistant is not told which parts a repair found healthy
    # (Outcome.told), bulb 1's potentials are read and it is replaced, either way: 140 min, no naming
    assert cost <= 260 and all(n in (("bulb1",), ("bat0",)) for n in named[-1:]), (cost, named)


@pytest.mark.parametrize("on", [True, False])
def test_a_fuse_a_short_blew_is_named_with_the_shorts_end(fused, on: bool):
    """A short between bulb 8's near end and fuse 12's far end: the 12 V loop drives 66 A through fuse 7, the
    short and fuse 12 into the 4 V loop. Fuse 7 carries bulb 8's current besides, a little further past its
    rating: it blows and fuse 12, its current gone, holds (physics version 4; before, both blew and replacing fuse
    7 alone made the system work, blown fuse 12 keeping the short out: 160 min with ``naming_ends``). Now the
    short must go too: bulb 8 (or fuse 12) and fuse 7 are named. With ``naming_ends`` fuse 7 is named first as
    well (380 min, against 285 without it): left for a later look (see the session note)."""
    store = fused
    end, cost, named = _run(store, _short(store, {"bulb8.p", "fuse12.n"}), on)
    assert end in SOLVED
    assert {"fuse7"} <= {p for n in named for p in n} and named[-1] in (("fuse7",), ("bulb8",), ("fuse12",)), named
    assert cost <= (400 if on else 300), (cost, named)
