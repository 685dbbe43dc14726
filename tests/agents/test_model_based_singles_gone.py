"""After an early widening, the shorts between nodes once no single stands beside the pairs.

Pairs join the singles still standing before a costly repair of a lone single (``widen_share``, see
test_model_based_widen_early.py), without the shorts between nodes (screening them is dear, and a single
of a part still stands). When the reports then refute the last single, what stands is pairs only, and a
widening would have tried first what comes before pairs: a component's own loose terminal and the shorts
(one fault that explains every report is likelier than two). Before, no widening came (something stood),
and two blown fuses were named where a short across the lamp between them had blown both (a generated
system, ``unwritten_0_21`` S.635: 430 -> 390 min). Checked on the fused lamps written in
test_model_based_overcurrent.py, with the shorts kept out at the start (``shorted_share`` 1)."""

from __future__ import annotations

import pytest

from diagkg.agents.modelbased import ModelBasedAssistant
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from .test_model_based_overcurrent import fused_store, shorts_on


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> KnowledgeStore:
    return fused_store(tmp_path_factory.mktemp("singles_gone"))


class Widened(ModelBasedAssistant):
    """At its first decision: the pairs joined early, then every single taken away (as reports refuting
    them would), and :meth:`CandidateSpace.singles_gone` asked twice; what it answered and what stood noted."""

    answers: list[bool]
    before: list
    after: list

    def choose(self):
        if not self.worlds.steps and not hasattr(self, "answers"):
            space = self.space
            shorts_at_start = space.shorts
            space.widen_early()
            space.live = [(c, point) for c, point in space.live if len(c.faults) > 1]
            self.before = [c for c, _ in space.live]
            self.answers = [space.singles_gone(), space.singles_gone(), shorts_at_start]
            self.after = [c for c, _ in space.live]
        return super().choose()


def test_once_no_single_stands_the_shorts_join_the_pairs(store):
    assistant = Widened(shorted_share=1.0, widen_share=0.3)
    run_session("FUSED.S1", assistant, store=store, seed=0, record=False, keep_ledger=False)
    first, second, shorts_at_start = assistant.answers
    assert not shorts_at_start                     # kept out at the start here
    assert assistant.before and all(len(c.faults) == 2 for c in assistant.before)
    assert first and not second                    # tried once
    assert assistant.space.shorts
    # the short that blew the fuse (the bulb's feed to the return lead) stands now, one fault, beside the pairs
    assert shorts_on(assistant.after, "ret") and shorts_on(assistant.after, "bulb")
    assert all(c in assistant.after for c in assistant.before)


def test_not_where_the_shorts_were_candidates_already(store):
    """With the shorts candidates from the start (a part shorted is a likely reading of the lights here), the
    early widening leaves nothing for later: no second screening."""
    assistant = Widened(widen_share=0.3)
    run_session("FUSED.S1", assistant, store=store, seed=0, record=False, keep_ledger=False)
    first, second, shorts_at_start = assistant.answers
    assert shorts_at_start
    assert not first and not second
    assert len(assistant.after) == len(assistant.before)
