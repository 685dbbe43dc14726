"""Neuro-symbolic: after one of two crossed cables is named (judged partial), the other is found by an inspection.

Naming one cable of a crossed pair repairs it: its ends go back where they belong, and the other cable's end still
sits where the first one's belonged, beside it. Before, the assistant went on from its dependencies, which said
nothing of a cable in another loop, and the session ran out of rounds (a generated system, ``unwritten_22_24``
S.601 and S.602). Now (``look_after_partial``) the one cable the report found faulty is inspected next, and a cable
whose end sits beside it where it does not belong is named before anything else. Checked on a system written here (a
bulb behind a cable and a diode turned against it, beside a 0 V cable with a closed switch), every crossing
``diagkg generate`` makes of it, with the first naming forced to one of the two."""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.env.actions import Hypothesis
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from ..support.circuits import Loop, Parallel, Series, part, reachable, with_generated
from .test_model_based_shorts_before_joins import cable

KEY = "crossed_or_short_one"
SOLVED = ("success", "success_no_hypothesis")


def system_ttl() -> str:
    """bat0 -> bulb1 -> cable2 -> d3 (turned against it) -> r4 -> 0 V; bat5 -> r6 -> (cable7 | sw8) -> 0 V."""
    return reachable((
        Loop(12, 0, Series((part("Bulb", 0, resistance=24, powerThreshold=0.5), cable(),
                            part("Diode", 0, reversed=True, forwardVoltage=0.7), part("Resistor", 0, resistance=1000)))),
        Loop(12, 0, Series((part("Resistor", 0, resistance=100), Parallel((cable(), part("Switch", 0, normallyClosed=True))))))),
        KEY)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeStore:
    return with_generated(tmp_path_factory.mktemp(KEY), KEY, system_ttl(), frozenset({"CrossedCables"}))


class NamesOneFirst(NeuroSymbolic):
    """Names ``cable2`` alone first (one of the two crossed), then goes on as the assistant does."""

    def suggest(self):
        if not self.outcomes:
            self.last = Hypothesis(frozenset({"cable2"}), "one of the two")
            return self.last
        return super().suggest()


def _crossings(store: KnowledgeStore) -> list[int]:
    catalog = ScenarioCatalog(store)
    numbers = [n for n in catalog.numbers() if catalog.resolve(n).key == KEY
               and {f.mode for f in catalog.resolve(n).faults} == {"CrossedCables"}]
    assert numbers
    return numbers


def _steps(store: KnowledgeStore, number: int, **config) -> tuple[str, float, list[tuple[str, str | None]]]:
    rounds: list[dict] = []
    result = run_session(number, NamesOneFirst(**config), seed=0, store=store, record=False, keep_ledger=False,
                         on_round=lambda r: rounds.append(r.to_dict()))
    return result.end, result.cost, [(r["intention"], r["verdict"]) for r in rounds]


def test_the_partner_is_inspected_for_and_named(store: KnowledgeStore):
    for number in _crossings(store):
        end, cost, steps = _steps(store, number)
        assert steps[0] == ("hypothesis {cable2}", "partial")
        assert steps[1][0] == "inspect_connections cable2"
        assert steps[2][0] == "hypothesis {cable7}"
        assert end in SOLVED, steps


def test_without_it_the_partner_is_not_looked_for(store: KnowledgeStore):
    for number in _crossings(store):
        end, cost, steps = _steps(store, number, look_after_partial=False)
        on_end, on_cost, _ = _steps(store, number)
        assert steps[1][0] != "inspect_connections cable2"
        assert on_cost < cost, (number, steps)
