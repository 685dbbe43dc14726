"""Two needs, either one enough: on the twin of tests/support/chains.py (written in the test), a bulb fed by
two batteries through a diode each, whose declared functions say, as a user would write them, that
feeding the bulb depends on both supplies. The simulated working system says otherwise: with either
supply's parts opened alone the bulb lights as before, with both it goes out. Those needs are *spares*
(`Knowledge.spares`); a dark bulb does not implicate one of them alone.

TWIN.1: battery 2 flat (its LED dark) and the feed's end off the bulb. The assistant measures battery 2
first either way (the dark LED); without spares it then names battery 2 alone as "the only remaining
explanation" of the dark bulb (130 minutes for a partial verdict); with them it knows a flat battery 2
does not keep the bulb dark while battery 1 works, repairs it and looks for the bulb's own fault.
On the shipped asymmetric chains (two supplies joined through diodes the same way), seeds 0-2: 169.0 ->
151.3 minutes a session, 64 -> 66 of 75 solved (docs/results/2026-12.md)."""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.agents.neurosymbolic_knowledge import Knowledge, spare_dependencies
from diagkg.env.service import simulator_for
from diagkg.runs.runner import run_session

from ..support.chains import lantern_store, twin_store

SUPPLIES = {"bat1", "bat2", "out1", "out2", "d1", "d2"}


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    return twin_store(tmp_path_factory.mktemp("twin"))


def test_either_of_two_supplies_is_a_spare_and_a_need_of_one_supply_is_not(twin):
    knowledge = Knowledge.of(twin, "twin")
    assert SUPPLIES <= knowledge.deps["bulb"]                 # declared: the bulb depends on both supplies
    assert knowledge.spares["bulb"] == SUPPLIES               # simulated: either one is enough
    assert knowledge.spares["ret"] == {"bat1", "bat2"}
    assert "led2" not in knowledge.spares                     # LED 2 needs battery 2 and nothing else does
    assert knowledge.spares == spare_dependencies(simulator_for(twin, "twin"), knowledge.deps)


def test_one_supply_has_no_spares(tmp_path):
    store = lantern_store(tmp_path)
    knowledge = Knowledge.of(store, "lantern")
    assert knowledge.deps and knowledge.spares == {}


def names(assistant: NeuroSymbolic, store) -> list[frozenset[str]]:
    rounds: list[dict] = []
    run_session("TWIN.1", assistant, store=store, seed=0, record=False, on_round=lambda r: rounds.append(r.to_dict()))
    return [frozenset(r["data"]["candidates"]) for r in rounds if r.get("kind") == "hypothesis"]


def test_a_dark_bulb_does_not_implicate_one_supply_alone(twin):
    plain = names(NeuroSymbolic(spares=False), twin)
    assert frozenset({"bat2"}) in plain                        # the flat battery named as the bulb's cause
    spared = NeuroSymbolic()
    with_spares = names(spared, twin)
    assert spared.spares["bulb"] == SUPPLIES
    assert frozenset({"bat2"}) not in with_spares and with_spares[-1] == frozenset({"feed"})
    result = run_session("TWIN.1", NeuroSymbolic(), store=twin, seed=0, record=False)
    assert result.end == "success" and result.cost < run_session(
        "TWIN.1", NeuroSymbolic(spares=False), store=twin, seed=0, record=False).cost
