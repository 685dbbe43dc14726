"""An assistant's briefing holds a catalogue of its own: the session's was handed over, itself the one dictionary
every caller of ``action_catalogue`` got, so an assistant that set replace_component to cost nothing in its
briefing was charged nothing, and so was every later session in the process (the oracle's too). On the torch."""

from __future__ import annotations

import dataclasses

import pytest

import diagkg
from diagkg.agents.registry import BaseAssistant
from diagkg.env.actions import Action, action_catalogue
from diagkg.runs.runner import run_session

from ..support.torch import torch_memory_store


class FreeRepairs(BaseAssistant):
    """Sets every repair's cost to nought in its briefing's catalogue, then replaces the flat battery."""

    name = "adv-free-repairs"

    def setup(self, briefing):
        super().setup(briefing)
        for aid, spec in list(briefing.catalogue.items()):
            briefing.catalogue[aid] = dataclasses.replace(spec, cost=0.0)

    def suggest(self):
        return Action("replace_component", ("bat",))


@pytest.fixture(scope="module")
def torch(tmp_path_factory):
    return torch_memory_store(tmp_path_factory.mktemp("torch"))


def test_an_assistant_cannot_set_its_own_prices_nor_anyone_elses(torch):
    result = run_session("TORCH.1", FreeRepairs(), store=torch, seed=0, record=False, keep_ledger=False)
    assert (result.end, result.cost) == ("success_no_hypothesis", 120.0)
    result = run_session("TORCH.1", "oracle", store=torch, seed=0, record=False, keep_ledger=False)
    assert (result.end, result.cost) == ("success", 120.0)
    assert action_catalogue(torch)["replace_component"].cost == 120.0


def test_each_caller_gets_a_catalogue_of_its_own(torch):
    mine = action_catalogue(torch)
    mine.pop("replace_component")
    with diagkg.make("TORCH.1", torch) as session:
        assert session.catalogue["replace_component"].cost == 120.0
        assert session.catalogue is not action_catalogue(torch)
