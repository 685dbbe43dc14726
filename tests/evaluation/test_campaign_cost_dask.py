"""A campaign's LLM cost limit on a Dask cluster: the sessions in flight on its workers share what the campaign
has left, as a local pool's do (tests/evaluation/test_campaign_cost.py), on the torch written in the tests and
the scripted OpenAI-compatible server on 127.0.0.1, with a real local Dask cluster."""

from __future__ import annotations

import pytest

from diagkg.evaluation import budget, execution
from diagkg.evaluation import campaign as cp

from ..support.llm_campaign import HYPOTHESISE, llm_config, sessions_of
from ..support.llm_server import LLMServer, Reply


def test_sessions_in_flight_on_a_dask_cluster_share_what_the_campaign_has_left(torch_copy):
    """Before, a cluster's workers shared nothing: each session sent was given the whole remainder, and the four
    in flight at once (2 workers, 2 sessions each: the whole campaign) paid their 0.1 calls: 0.4 spent of 0.35. The calls now hold
    their estimate (0.2) in one variable on the scheduler before they are sent."""
    store = torch_copy
    with LLMServer() as server:
        server.script.then(*[Reply(content=HYPOTHESISE, delay=0.3)] * 4)
        cfg = cp.CampaignConfig(assistants=("llm",), scenarios=(9101,), runs=4, config=llm_config(server), name="cluster")
        campaign = cp.create(store, cfg)
        summary = execution.run(store, campaign, cost_limit=0.35, workers=2, executor="dask")
        sent = len(server.script.calls)
    spent = budget.Spending.read(store, campaign).spent
    assert sent >= 1 and spent == pytest.approx(0.1 * sent) and spent <= 0.35 + 1e-9, (spent, sent)
    assert summary.money == pytest.approx(spent)
    seen = sessions_of(store, campaign)
    assert sum(v["end"] == "success" for v in seen.values()) == sent
    refused = [v for v in seen.values() if v["end"] == "llm_truncation"]
    assert refused and all(v["money"] == 0 for v in refused)
