"""Naming a cable charges what repairing it takes: an end off is reconnected (a port's minutes), a cable
broken or shorted inside is replaced (a component's minutes, what ``replace_component`` charges) — found on a
random system (``benchmarks/unwritten_systems.py --seed 5``, ``unwritten_5_9``), where a short on a cable's
port was cleared by naming the cable for 10 minutes, against 120 for any action of the catalogue that clears it.
On the torch of tests/support/torch.py (a user's system, not shipped)."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.torch import LOOSE_LEAD, ONE_FAULT, TORCH, scenario_text, short_scenario

OPEN_LEAD = ONE_FAULT.format(id="TORCH.41", number=9141, label="Bulb lead broken inside", category="Simple",
                             fault="dk:faultMode dk:OpenComponent ; dk:faultTarget sys:lead",
                             symptoms="The torch stays dark when switched on, but the green LED is lit.",
                             faulty="sys:lead", repair="ReplaceComponent", part="lead")
SHORTED_LEAD = short_scenario("TORCH.42", 9142, "lead.n", "ret.p", "The bulb bridged at its lead",
                              "The torch stays dark when switched on, but the green LED is lit.")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("naming")
    files = [folder / "torch.ttl", folder / "open.ttl", folder / "shorted.ttl", folder / "loose.ttl"]
    for path, text in zip(files, [TORCH, OPEN_LEAD, SHORTED_LEAD, scenario_text(**LOOSE_LEAD)], strict=True):
        path.write_text(text)
    store = KnowledgeStore.memory()
    load_files(store, files[:1])
    load_files(store, files[1:])
    return store


def cost_of(store: KnowledgeStore, scenario: str, step: diagkg.Action | diagkg.Hypothesis) -> tuple[float, str]:
    session = diagkg.make(scenario, store)
    session.reset(seed=0)
    out, *_ = session.step(step)
    return out.cost, session.end or ""


@pytest.mark.parametrize("scenario", ["TORCH.41", "TORCH.42"])
def test_naming_a_cable_broken_or_shorted_inside_costs_its_replacement(store, scenario):
    named, end = cost_of(store, scenario, diagkg.Hypothesis(frozenset({"lead"})))
    replaced, _ = cost_of(store, scenario, diagkg.Action("replace_component", ("lead",)))
    assert end == "success" and named == replaced > 100
    reconnected, still = cost_of(store, scenario, diagkg.Action("reconnect_cable", ("lead",)))
    assert still == "" and reconnected < named          # reconnecting its ends does not repair it


def test_naming_a_cable_with_an_end_off_or_healthy_costs_a_port(store):
    named, end = cost_of(store, "TORCH.2", diagkg.Hypothesis(frozenset({"lead"})))
    reconnected, _ = cost_of(store, "TORCH.2", diagkg.Action("reconnect_cable", ("lead",)))
    assert end == "success" and named == reconnected < 100
    healthy, _ = cost_of(store, "TORCH.41", diagkg.Hypothesis(frozenset({"ret"})))
    assert healthy == named                             # a healthy cable named: a port's minutes, as before
