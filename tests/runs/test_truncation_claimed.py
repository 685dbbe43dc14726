"""A session ends in ``llm_truncation`` (left out of the success rate, run again by ``--retry-failed``) only when a
language-model call of the session failed: an assistant that guessed wrong and then raised the truncation error
itself read as a session that says nothing, so guessing once and "truncating" every miss read 100 % success. It
ends in surrender (a failure) now; a truncation whose failed call is in the session's log still ends so."""

from __future__ import annotations

import pytest

from diagkg.agents.registry import BaseAssistant
from diagkg.env.actions import Action, Hypothesis
from diagkg.errors import LLMTruncation
from diagkg.llm.client import LLMFailure
from diagkg.llm.records import CallRecord, FailureCause
from diagkg.runs.runner import run_session

from ..support.torch import torch_memory_store


class Claimer(BaseAssistant):
    """Names the bulb; when that is not the diagnosis, claims that its language model failed (it has none)."""

    name = "adv-claim-truncation"

    def setup(self, briefing):
        super().setup(briefing)
        self.told = None

    def suggest(self) -> Action | Hypothesis | None:
        if self.told is None:
            return Hypothesis(frozenset({"bulb"}), "a lucky guess")
        raise LLMTruncation("the model's reply was cut off")

    def record(self, outcome) -> None:
        self.told = outcome


class Failing(BaseAssistant):
    """A language-model assistant whose call failed: the failed call is in the session's log."""

    name = "llm-that-failed"

    def suggest(self) -> Action | Hypothesis | None:
        log = self.briefing.llm
        assert log is not None
        log.add(CallRecord(purpose="decide", role="assistant", model="m", messages=[], parameters={}, key="k",
                           error="no answer within 1 s", cause=FailureCause.TIMEOUT))
        raise LLMFailure(FailureCause.TIMEOUT, "no answer within 1 s")


@pytest.fixture(scope="module")
def torch(tmp_path_factory):
    return torch_memory_store(tmp_path_factory.mktemp("torch"))


def test_a_truncation_without_a_failed_call_is_a_failure(torch):
    # TORCH.1: the battery is flat, so the guess is wrong and the assistant "truncates"
    result = run_session("TORCH.1", Claimer(), store=torch, seed=0, record=False, keep_ledger=False)
    assert result.end == "surrender" and result.llm_cause is None
    assert result.rounds == 2 and result.cost == 120.0        # the guess's repair is charged, the claim is a round
    # TORCH.2: the lead's end is off; the guess is wrong again
    result = run_session("TORCH.2", Claimer(), store=torch, seed=0, record=False, keep_ledger=False)
    assert result.end == "surrender" and result.diagnosis is not None and result.diagnosis.false_removals == 1


def test_a_failed_call_in_the_log_still_ends_in_llm_truncation(torch):
    result = run_session("TORCH.1", Failing(), store=torch, seed=0, record=False, keep_ledger=False)
    assert result.end == "llm_truncation" and result.llm_cause is FailureCause.TIMEOUT
