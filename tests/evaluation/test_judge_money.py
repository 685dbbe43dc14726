"""The judge's money counts in the campaign's money (``--cost-limit``): on the torch
written in the tests (not shipped), an ``llm`` campaign and its judge against the
scripted OpenAI-compatible server with a pricing table (every call 0.1: 10
completion tokens at 10,000 per million; a call is sent only when 0.2 still fits).
What the judge spent is read back from its call records, lowers what a resumed
campaign's sessions are given, stops the judge from starting once the limit is
reached, and is in the figure ``diagkg evaluate`` reports — all against values
computed by hand.
"""

from __future__ import annotations

import json

import pytest

from diagkg.evaluation import budget, execution, qualitative
from diagkg.evaluation import campaign as cp
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK

from ..support.llm_campaign import ANSWER, HYPOTHESISE, llm_config, sessions_of
from ..support.llm_server import LLMServer


def judgements(store, campaign) -> int:
    return sum(1 for q in store.quads(campaign.graph) if q.predicate.value == str(DK.judgedIn))


def test_the_judges_money_counts_in_the_limit_and_the_total(tmp_path, torch_quads, capsys):  # noqa: F811
    from diagkg.cli.main import main

    db = str(tmp_path / "db")
    store = KnowledgeStore(db)
    store.add_quads(torch_quads)
    with LLMServer() as server:
        server.script.content = HYPOTHESISE
        campaign = cp.create(store, cp.CampaignConfig(assistants=("llm",), scenarios=(9101,), runs=2,
                                                      config=llm_config(server), name="judge-money"))
        # seed 0 spends 0.1 of 0.25; seed 1 is given 0.15 < 0.2: no call (llm_truncation, to be run again)
        first = execution.run(store, campaign, cost_limit=0.25)
        assert first.money == pytest.approx(0.1)
        assert [v["end"] for _, v in sorted(sessions_of(store, campaign).items())] == ["success", "llm_truncation"]

        server.script.content = json.dumps(ANSWER)
        judged = qualitative.run(store, campaign, qualitative.judge_settings(llm_config(server)))
        assert (judged.ratings, judged.calls) == (1, 1) and judged.money == pytest.approx(0.1)   # seed 0 only
        spending = budget.Spending.read(store, campaign, 0.5)
        assert (spending.sessions, spending.judge, spending.spent) == pytest.approx((0.1, 0.1, 0.2))
        assert len(spending.by_judge_call) == 1

        # resumed with 0.5: seed 1, run again, is given what the sessions and the judge left, 0.3 (not 0.4)
        server.script.content = HYPOTHESISE
        second = execution.run(store, campaign, cost_limit=0.5, retry_failed=True)
        assert second.progress.ran == 1 and second.stopped is None
        assert sessions_of(store, campaign)[1]["limit"] == pytest.approx(0.3)
        assert second.money == pytest.approx(0.3)            # sessions 0.2 + judge 0.1
        store.close()

        server.script.content = json.dumps(ANSWER)
        calls = len(server.script.calls)
        # 0.3 spent, a limit of 0.3: reached, the judge does not start (seed 1's new session is still unrated)
        assert main(["--store", db, "evaluate", "--resume", campaign.id, "--cost-limit", "0.3",
                     "--format", "json"]) == 0
        out = capsys.readouterr()
        data = json.loads(out.out.strip().splitlines()[-1])
        assert data["qualitative"] is None and data["llm_money"] == pytest.approx(0.3)
        assert "qualitative analysis not run: the campaign's LLM cost limit of 0.3 is reached" in out.err
        assert len(server.script.calls) == calls

        # a higher limit: the judge rates seed 1 with what remains (0.7), and the total counts it
        assert main(["--store", db, "evaluate", "--resume", campaign.id, "--cost-limit", "1"]) == 0
        out = capsys.readouterr()
        assert len(server.script.calls) == calls + 1
        assert "1 rubric rating(s) now (1 already done)" in out.out
        assert "language models: 0.4000 spent of a limit of 1" in out.out
    store = KnowledgeStore(db)
    try:
        campaign = cp.open_campaign(store, campaign.id)
        assert judgements(store, campaign) == 2
        spending = budget.Spending.read(store, campaign)
        assert (spending.sessions, spending.judge) == pytest.approx((0.2, 0.2))
    finally:
        store.close()
