"""The model-based assistant: candidates from the fault catalogue, each
simulated in a world of its own; it never sees the scenario.

It diagnoses a system written here (not shipped) with no code change, finds a
misleading double fault by pairing single faults, and a session can be tried
forward and rolled back exactly (what its worlds rely on).
"""

from __future__ import annotations

import pytest

import diagkg
from diagkg.agents.modelbased import ModelBasedAssistant
from diagkg.agents.registry import create
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from .conftest import catalog_store
from .test_store_first import torch_memory_store


@pytest.fixture(scope="module")
def torch_store(tmp_path_factory) -> KnowledgeStore:
    return torch_memory_store(tmp_path_factory.mktemp("model-based"))


def test_it_is_registered_and_not_privileged():
    assistant = create("model-based")
    assert isinstance(assistant, ModelBasedAssistant) and not assistant.privileged


@pytest.mark.parametrize("scenario", ["TORCH.1", "TORCH.2"])
def test_it_diagnoses_a_users_own_system(torch_store, scenario):
    assistant = ModelBasedAssistant()
    result = run_session(scenario, assistant, store=torch_store, seed=0)
    assert result.end in ("success", "success_no_hypothesis"), result.record.rounds if result.record else None
    assert assistant.briefing is not None and assistant.briefing.scenario is None     # never sees the answer
    # its candidates came from the fault catalogue applied to the torch's parts
    modes = {c.faults[0].mode for c in assistant.singles}
    assert {"DepletedBattery", "OpenComponent", "DetachedEnd"} <= modes
    assert {p for c in assistant.singles for p in c.faulty} <= set(assistant.briefing.parts)


def test_it_pairs_single_faults_when_none_explains_the_reports():
    store = catalog_store()
    assistant = ModelBasedAssistant()
    result = run_session("3CC.M.4", assistant, store=store, seed=0)    # open lamp + open power LED
    # naming both, or replacing the lamp (which alone makes the system work: an LED is no main lamp)
    assert result.end in ("success", "success_no_hypothesis")
    assert assistant.widened
    assert assistant.candidates()[0][0] == frozenset({"main_bulb", "psu_green_led"})


def test_a_session_rolls_back_exactly():
    store = catalog_store()
    session = diagkg.make("3CC.L.1", store)          # a loose connection: chance is part of the state
    session.reset(seed=3)
    point = session.checkpoint()
    first = [session.step(diagkg.Action("observe_component", ("main_bulb",)))[0] for _ in range(3)]
    session.step(diagkg.Action("reconnect_cable", ("psu_cable_pos",)))          # a repair, kept for good
    session.rollback(point)
    again = [session.step(diagkg.Action("observe_component", ("main_bulb",)))[0] for _ in range(3)]
    assert again == first
    assert session.round == 3 and not session.repaired
