"""The optimum names what a correct diagnosis needs, not every part with an injected fault. A short between two
parts belongs to both, and either end's repair clears it (diagkg.env.verification), so naming one end and the
fuse it blew is correct. The optimum's hypotheses in a world were each faulty part alone and every set between the
parts with an injected fault (both ends of a short) and every faulty part: on a system nobody on the team wrote
(``unwritten_11_17`` of benchmarks/unwritten_systems.py, generator seed 11, written out here) a short from battery
0's negative pole to bulb 3's far end, which blows fuse 4, cost the optimum 360 min (both ends and the fuse) where
model-based named battery 0 and fuse 4 (240): model-based's mean came out below the "exact" optimum (0.97×)."""

from __future__ import annotations

import pytest

from diagkg.env.scenarios import ScenarioCatalog
from diagkg.evaluation import optimum
from diagkg.runs.runner import run_session

from ..support.circuits import Leaf, Loop, Parallel, Series, part, reachable, scenarios_between, with_generated

KEY = "stranger_fused_short"
SOLVED = ("success", "success_no_hypothesis")


def bulb(ohms: float, watts: float, module: int) -> Leaf:
    return part("Bulb", module, resistance=ohms, powerThreshold=watts)


def resistor(ohms: float, module: int) -> Leaf:
    return part("Resistor", module, resistance=ohms)


def _system() -> str:
    amber = part("LED", 2, forwardVoltage=3.48, color="amber", forwardCurrent=0.01, powerThreshold=0.005)
    turned = part("LED", 1, reversed=True, forwardVoltage=2.71, color="amber", powerThreshold=0.005)
    return reachable((
        Loop(14, 2, Series((Parallel((Parallel((amber, turned, bulb(60, 0.1, 0))), part("Fuse", 1, ratedCurrent=5))),
                            bulb(60, 1.0, 0)))),
        Loop(22, 2, Series((bulb(22, 0.05, 1), Parallel((
            Parallel((part("Diode", 1, forwardVoltage=0.47), part("Diode", 0, forwardVoltage=0.39), resistor(4.7, 1))),
            Series((bulb(22, 0.5, 0), bulb(22, 0.5, 0)))))))),
        Loop(5, 0, Series((Parallel((resistor(4.7, 1), bulb(100, 0.05, 0), resistor(33, 2))), bulb(220, 0.1, 2)))),
    ), KEY)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return with_generated(tmp_path_factory.mktemp(KEY), KEY, _system(), frozenset({"ShortBetweenNodes"}))


def test_a_short_that_blew_a_fuse_is_named_by_one_end_and_the_fuse(store):
    catalog = ScenarioCatalog(store)
    short = [catalog.resolve(n) for n in scenarios_between(store, {"bat0.neg", "bulb3.n"})]
    assert len(short) == 1
    # one scenario as the whole prior: the optimum is the cheapest way to success there, a naming of two parts
    result = optimum.solve(store, KEY, scenarios=short, time_limit=60)
    assert result.exact and result.expected_cost == pytest.approx(240.0), result.to_json()
    optimum.store_optimum(store, result)
    run = run_session(short[0].number, "optimal", store=store, record=False, keep_ledger=False)
    assert run.end == "success" and run.cost == pytest.approx(240.0), run.to_json()


def test_no_assistant_that_solves_every_short_costs_less_than_the_optimum(store):
    catalog = ScenarioCatalog(store)
    scenarios = [catalog.resolve(n) for n in catalog.numbers() if catalog.resolve(n).key == KEY]
    assert len(scenarios) >= 10
    result = optimum.solve(store, KEY, scenarios=scenarios, time_limit=120)
    assert result.exact
    runs = [run_session(s.number, "model-based", store=store, seed=11, record=False, keep_ledger=False)
            for s in scenarios]
    assert all(r.end in SOLVED for r in runs)
    assert sum(r.cost for r in runs) / len(runs) >= result.expected_cost - 1e-9, result.expected_cost
