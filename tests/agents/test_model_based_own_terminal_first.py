"""A part's own terminal before pairs of faults, from the first decision, on a system nobody on the team wrote
(``unwritten_11_11`` of benchmarks/unwritten_systems.py, generator seed 11, written out part by part).

A component's own terminal coming off is a single fault, tried once no cable end or other single fault explains
what was seen, and before pairs (``CandidateSpace.more_singles``): so every decision did, but the candidates'
start widened to pairs straight away. With a battery's own terminal loose (a lamp flickering), two loose
connections elsewhere that together explain the flicker were believed certain and named (seed 11: 130 min,
wrong; seed 1 here), and the session cost 285 min where naming the battery costs 120."""

from __future__ import annotations

import pytest

from diagkg.env.scenarios import ScenarioCatalog
from diagkg.runs.runner import run_session

from ..support.circuits import Leaf, Loop, Parallel, Series, reachable, with_generated
from ..support.worlds import KeptOpen

KEY = "stranger_own_terminal"
SOLVED = ("success", "success_no_hypothesis")


def _system() -> str:
    def bulb(ohms: float, threshold: float, module: int) -> Leaf:
        return Leaf("Bulb", (("resistance", ohms), ("powerThreshold", threshold)), module=module)

    def fuse(amps: int, module: int) -> Leaf:
        return Leaf("Fuse", (("ratedCurrent", amps),), module=module)

    def loop(volts: int, module: int, last: Leaf) -> Loop:
        blue = Leaf("LED", (("forwardVoltage", 2.25), ("color", "blue"), ("powerThreshold", 0.02)), module=1)
        lead = Leaf("Cable", (("resistance", 0.05),), detachable=True)
        return Loop(volts, module, Series((Parallel((blue, fuse(5, 1))),
                                           Parallel((Series((lead, bulb(60, 0.1, 2))), fuse(10, 0))), last)))

    return reachable((loop(8, 0, bulb(47, 0.05, 1)), loop(17, 2, bulb(60, 0.1, 2))), KEY)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return with_generated(tmp_path_factory.mktemp("stranger_own"), KEY, _system(), frozenset({"LooseConnectionFault"}))


def _battery_terminals(store) -> list[int]:
    """The generated scenarios with a battery's own terminal loose."""
    catalog = ScenarioCatalog(store)
    return [n for n in catalog.numbers() if (s := catalog.resolve(n)).key == KEY
            and any(f.target.rsplit("/", 1)[-1].startswith("bat") for f in s.faults)]


class FirstLook(KeptOpen):
    """A model-based assistant that keeps the candidates its first decision chose between."""

    first: list | None = None

    def choose(self):
        if self.first is None:
            self.first = [c for c, _ in self.space.live]
        return super().choose()


def test_a_parts_own_terminal_comes_before_pairs_at_the_start(store):
    numbers = _battery_terminals(store)
    assert len(numbers) == 4              # each of the two batteries' two terminals
    for n in numbers:
        for seed in (0, 1, 11):
            assistant = FirstLook()
            run_session(n, assistant, store=store, seed=seed, budget=1, record=False, keep_ledger=False)
            live = assistant.first
            # what the first decision chose between: single faults only, the truth among them
            assert live and all(len(c.faults) == 1 for c in live), (n, seed, [c.faulty for c in live])
            truth = ScenarioCatalog(store).resolve(n).faults[0].target
            assert any(c.faults[0].target == truth for c in live), (n, seed)


def test_a_batterys_own_loose_terminal_is_named_without_a_pair_first(store):
    for n in _battery_terminals(store):
        for seed in (0, 1, 11):
            result = run_session(n, "model-based", store=store, seed=seed, record=False, keep_ledger=False)
            assert result.end in SOLVED and result.cost <= 160, (n, seed, result.end, result.cost)
