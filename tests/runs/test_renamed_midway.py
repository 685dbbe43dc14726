"""A session is recorded under the name its assistant had when it was given the session (the name its privilege was
decided by): one that renamed itself "oracle" while it played was stored as the oracle (the trajectory's assistant
label, the trajectory list, the run's result), unprivileged. On the torch."""

from __future__ import annotations

import pytest

from diagkg.agents.registry import BaseAssistant
from diagkg.env.actions import Hypothesis
from diagkg.runs.runner import run_session

from ..support.torch import torch_memory_store


class Renamer(BaseAssistant):
    name = "adv-renamer"

    def suggest(self):
        self.name = "oracle"
        return Hypothesis(frozenset({"bat"}), "the battery")


@pytest.fixture(scope="module")
def torch(tmp_path_factory):
    return torch_memory_store(tmp_path_factory.mktemp("torch"))


def test_an_assistant_that_renames_itself_is_recorded_by_its_name(torch):
    result = run_session("TORCH.1", Renamer(), store=torch, seed=0, keep_ledger=False)
    assert result.assistant == "adv-renamer" and result.record is not None and result.record.assistant == "adv-renamer"
    listed = {(r["assistant"], r["end"]) for r in torch.select("trajectory-list")}
    assert listed == {("adv-renamer", "success")}
