"""A campaign-wide LLM cost limit (issue 14): an ``llm`` campaign on the torch
written in the tests (not shipped), against the scripted OpenAI-compatible
server on 127.0.0.1 with a pricing table, stops at its limit, records why in
its graph, gives each session only what remained, and continues with a higher
limit on resume (counting what failed sessions that were retried had spent).
"""

from __future__ import annotations

import json

import pytest

from diagkg.evaluation import budget, execution
from diagkg.evaluation import campaign as cp
from diagkg.kg.store import KnowledgeStore

from ..support.llm_campaign import HYPOTHESISE, llm_config, sessions_of
from ..support.llm_server import LLMServer, Reply


@pytest.fixture()
def store(torch_copy):
    """A fresh store holding the loaded torch (a copy per test: each writes its own trajectories)."""
    return torch_copy


def test_a_campaign_stops_at_its_cost_limit_and_resumes_with_a_higher_one(store):
    with LLMServer() as server:
        server.script.content = HYPOTHESISE
        server.script.then(Reply(content="this is not JSON"))        # seed 0: a paid call, then llm_truncation
        cfg = cp.CampaignConfig(assistants=("llm",), scenarios=(9101,), runs=6, config=llm_config(server),
                                name="money")
        campaign = cp.create(store, cfg)
        first = execution.run(store, campaign, cost_limit=0.35)
        # seed 0 spends 0.1 (unparseable), seed 1 0.1 (success), seed 2 has 0.15 left < 0.2 for one call: stopped
        assert first.progress.ran == 3 and len(server.script.calls) == 2
        assert first.stopped is not None and first.stopped.reason is budget.StopReason.COST_LIMIT
        assert first.stopped.left == 3 and first.money == pytest.approx(0.2)
        assert first.to_json()["stopped"] == {"reason": "cost_limit", "cost_limit": 0.35, "spent": 0.2, "left": 3}
        seen = sessions_of(store, campaign)
        assert [seen[s]["end"] for s in range(3)] == ["llm_truncation", "success", "llm_truncation"]
        assert [seen[s]["limit"] for s in range(3)] == pytest.approx([0.35, 0.25, 0.15])   # what remained, each
        assert all(v["money"] <= v["limit"] + 1e-12 for v in seen.values())
        stops = budget.stops(store, campaign)
        assert [(r["reason"], float(r["limit"]), float(r["spent"]), int(r["left"])) for r in stops] == \
            [("cost_limit", 0.35, pytest.approx(0.2), 3)]
        assert stops[0]["stop"].startswith(campaign.iri)

        again = execution.run(store, campaign, cost_limit=0.35)       # the same limit: nothing runs
        assert again.progress.ran == 0 and again.stopped is not None and len(budget.stops(store, campaign)) == 2

        ran_before = len(server.script.calls)
        more = execution.run(store, campaign, cost_limit=1.0, retry_failed=True)
        assert more.stopped is None and more.states == {"complete": 1}
        seen = sessions_of(store, campaign)
        assert sorted(seen) == list(range(6)) and all(v["end"] == "success" for v in seen.values())
        assert seen[0]["prior"] == pytest.approx(0.1)       # the retried seed 0 keeps its first 0.1 counted
        assert all(v["money"] <= v["limit"] + 1e-12 for v in seen.values())
        assert len(server.script.calls) - ran_before == more.progress.ran
    # the store is the source of truth: 6 successful calls of 0.1 and the failed one of seed 0
    assert budget.Spending.read(store, campaign).spent == pytest.approx(0.7)
    assert more.money == pytest.approx(0.7)
    # the report reads each assistant's money off the slot tallies (the retried seed's first call counted), as
    # the query over every trajectory gives it, whether the writer kept the tally or a resume wrote it afresh
    from diagkg.evaluation import metrics, tally
    from diagkg.evaluation.html_report import money_by_assistant

    for _ in ("as the writer left it", "written afresh"):
        read: list[str] = []
        data = metrics.load(store, [campaign.id])
        assert money_by_assistant(store, data, read) == {"llm": pytest.approx(0.7)} and read == ["tally-sessions"]
        tally.rebuild(store, campaign)
    rows = store.select("campaign-money-by-assistant", {"campaign": campaign.node})
    assert [(r["assistant"], float(r["money"])) for r in rows] == [("llm", pytest.approx(0.7))]


def test_evaluate_cost_limit_on_the_command_line(tmp_path, torch_quads, capsys):  # noqa: F811
    from diagkg.cli.main import main

    db = str(tmp_path / "db")
    disk = KnowledgeStore(db)
    disk.add_quads(torch_quads)
    disk.close()
    with LLMServer() as server:
        server.script.content = HYPOTHESISE
        cfg = json.dumps(llm_config(server))
        assert main(["--store", db, "evaluate", "--assistant", "llm", "--config", cfg, "--scenarios", "TORCH.1",
                     "--runs", "4", "--cost-limit", "0.25", "--format", "json", "--name", "cli-money"]) == 0
        out = capsys.readouterr()
        data = json.loads(out.out.strip().splitlines()[-1])
        assert data["trajectories"] == 2 and data["stopped"]["reason"] == "cost_limit"
        assert "cost limit of 0.25 was reached" in out.err and f"--resume {data['campaign']}" in out.err
        assert main(["--store", db, "evaluate", "--resume", data["campaign"], "--cost-limit", "5"]) == 0
        out = capsys.readouterr()
        # sessions 0.3 (seeds 0, 2, 3; seed 1 had too little left for a call) and the judge configured by the same
        # settings 0.3: it rates seeds 0, 2 and 3 (a truncated session is not judged), one paid call each (the
        # reply is no rubric, so the ratings fail, but the calls were paid)
        assert "language models: 0.6000 spent of a limit of 5" in out.out and "stopped" not in out.out
    # a limit that cannot be kept is refused before anything runs
    no_price = json.dumps({"base_url": "http://127.0.0.1:9/v1", "model": "other-model"})
    assert main(["--store", db, "evaluate", "--assistant", "llm", "--config", no_price, "--scenarios", "TORCH.1",
                 "--cost-limit", "1"]) == 2
    assert "price of model 'other-model'" in capsys.readouterr().err


@pytest.mark.slow
def test_the_writer_keeps_the_sum_with_two_worker_processes(store):
    with LLMServer() as server:
        server.script.content = HYPOTHESISE
        cfg = cp.CampaignConfig(assistants=("llm",), scenarios=(9101,), runs=8, config=llm_config(server),
                                name="money-pool")
        campaign = cp.create(store, cfg)
        summary = execution.run(store, campaign, workers=2, cost_limit=0.35)
    seen = sessions_of(store, campaign)
    # sessions in flight when the limit was reached finish; nothing new is scheduled after that
    assert summary.stopped is not None and summary.stopped.left == 8 - len(seen) > 0
    assert all(v["money"] <= v["limit"] + 1e-12 for v in seen.values())
    assert summary.money == pytest.approx(sum(v["money"] for v in seen.values()))
    assert summary.money >= 0.35 or any(v["end"] == "llm_truncation" for v in seen.values())


def _in_flight(store, runs: int, executor: str) -> tuple[execution.Summary, float]:
    """A campaign of ``runs`` llm sessions on 2 workers of ``executor``, limit 0.35, each call costing 0.1 (held at
    0.2 before it is sent) and answered after 0.3 s, so that several are in flight at once; its summary and what it
    spent, checked: every call sent paid and answered, within the limit, and the refused sessions paid nothing."""
    with LLMServer() as server:
        server.script.then(*[Reply(content=HYPOTHESISE, delay=0.3)] * runs)
        cfg = cp.CampaignConfig(assistants=("llm",), scenarios=(9101,), runs=runs, config=llm_config(server),
                                name="shared")
        campaign = cp.create(store, cfg)
        summary = execution.run(store, campaign, cost_limit=0.35, workers=2, executor=executor)
        sent = len(server.script.calls)
    spent = budget.Spending.read(store, campaign).spent
    assert sent >= 1 and spent == pytest.approx(0.1 * sent) and spent <= 0.35 + 1e-9, (spent, sent)
    seen = sessions_of(store, campaign)
    assert sum(v["end"] == "success" for v in seen.values()) == sent    # each call sent was paid and answered
    refused = [v for v in seen.values() if v["end"] == "llm_truncation"]
    assert refused and all(v["money"] == 0 for v in refused)
    return summary, spent


def test_sessions_in_flight_on_several_workers_share_what_the_campaign_has_left(store):
    """Each session is given what remained when it was sent; with 2 workers, four were sent at once with the
    whole 0.35 each, and each paid its 0.1 call: 0.4 spent of 0.35. The workers now hold each call's estimate
    (0.2, the largest it can cost) in one file before sending it, so the sessions together keep to the limit."""
    summary, _ = _in_flight(store, 8, "local")
    assert summary.stopped is not None and summary.stopped.reason is budget.StopReason.COST_LIMIT


def test_sessions_in_flight_on_a_dask_cluster_share_what_the_campaign_has_left(store):
    """Before, a cluster's workers shared nothing: each session sent was given the whole remainder, and the four
    in flight at once (2 workers, 2 sessions each: the whole campaign) paid their 0.1 calls: 0.4 spent of 0.35.
    The calls now hold their estimate (0.2) in one variable on the scheduler before they are sent (a real
    LocalCluster)."""
    summary, spent = _in_flight(store, 4, "dask")
    assert summary.money == pytest.approx(spent)
