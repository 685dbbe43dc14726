"""The naming plan prices a naming in each diagnosis's world as it would be paid there.

The model-based assistant weighs naming its diagnoses one after another against testing first (``naming_cost``,
``naming_plan``). A naming was priced at what it costs in its own diagnosis's worlds throughout; but two cables
named as crossed are a swap (20 min) where they are crossed, and turned back as overbroad at a replacement's price
(130 min) where one of them carries a short instead. With ``world_prices`` each world not its diagnosis's pays what
the naming costs there (predicted in that world). Checked on a system written here: a bulb fed through a cable and
a diode turned against it, beside a resistor to 0 V through a cable and a closed switch in parallel (crossing the
two cables' ends lights the bulb as a short to 0 V does), every short and crossing ``diagkg generate`` makes of it:
no session dearer, the shorts cheaper in all."""

from __future__ import annotations

import pytest

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
    return with_generated(tmp_path_factory.mktemp(KEY), KEY, system_ttl(), frozenset({"ShortBetweenNodes", "CrossedCables"}))


def test_no_session_dearer_and_the_shorts_cheaper(store: KnowledgeStore):
    catalog = ScenarioCatalog(store)
    numbers = [n for n in catalog.numbers() if catalog.resolve(n).key == KEY]
    modes = {n: {f.mode for f in catalog.resolve(n).faults} for n in numbers}
    assert {"ShortBetweenNodes"} in modes.values() and {"CrossedCables"} in modes.values()
    costs: dict[int, list[float]] = {}
    for n in numbers:
        for config in ({"world_prices": False}, {}):
            result = run_session(n, "model-based", seed=0, store=store, record=False, keep_ledger=False, config=config)
            assert result.end in SOLVED, (n, config, result.end)
            costs.setdefault(n, []).append(result.cost)
    assert all(now <= before for before, now in costs.values()), costs
    shorts = [n for n in numbers if modes[n] == {"ShortBetweenNodes"}]
    assert sum(costs[n][1] for n in shorts) < sum(costs[n][0] for n in shorts), costs
