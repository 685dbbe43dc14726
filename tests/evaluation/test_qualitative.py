"""Cluster labels and the qualitative rubric (issue 13's last item) on the torch
written in the tests (not shipped), through the real LLM client against the
scripted OpenAI-compatible server on 127.0.0.1: labels and ratings land in the
campaign's graph with the right links and their call records, a rerun asks
nothing again, a malformed reply is a failed rating with its typed cause, no
LLM means one clear skip message, and the report's rubric tables are computed
against hand-made ratings.
"""

from __future__ import annotations

import json
import os

import pyoxigraph as ox
import pytest

from diagkg.errors import ValidationError
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, qualitative, rubric_report
from diagkg.evaluation.qualitative import Dimension, Level, Match, Rubric
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK
from diagkg.llm.records import CallLog, FailureCause
from diagkg.runs import trajectory

from ..support.llm_campaign import ANSWER, judge
from ..support.llm_server import LLMServer, Reply


@pytest.fixture()
def store(torch_copy):
    """A fresh store holding the loaded torch (a copy per test: each writes its own trajectories)."""
    return torch_copy


def graph_quads(store, campaign):
    return store.quads(campaign.graph)


def objects(quads, subject, predicate):
    return [q.object for q in quads if q.subject == subject and q.predicate.value == str(predicate)]


def test_rubric_of_a_fixed_campaign_resumes_and_records_a_malformed_reply(store):
    campaign = cp.create(store, cp.CampaignConfig(assistants=("oracle",), scenarios=(9101, 9102), runs=2, name="q"))
    execution.run(store, campaign)
    with LLMServer() as server:
        server.script.content = json.dumps(ANSWER)
        server.script.then(Reply(content="I would rather not answer in JSON."))
        first = qualitative.run(store, campaign, judge(server))
        assert (first.ratings, first.ratings_failed, first.labels) == (3, 1, 0)     # --runs N: every trajectory
        assert first.causes == {"unparseable": 1} and len(server.script.calls) == 4
        prompts = [c["messages"][-1]["content"] for c in server.script.calls]
        assert any("DepletedBattery" in p or "epleted" in p for p in prompts)       # the gold, from the store
        assert any("replace_component bat" in p for p in prompts) and any("reconnect_cable lead" in p for p in prompts)
        assert all("hidden from the assistant" in p for p in prompts)

        quads = graph_quads(store, campaign)
        ratings = {q.subject for q in quads if q.predicate.value == str(DK.ratedTrajectory)}
        assert len(ratings) == 4
        trajectories = {r.trajectory for r in cp.recorded(store, campaign).values()}
        assert {objects(quads, r, DK.ratedTrajectory)[0].value for r in ratings} == trajectories
        failed = [r for r in ratings if objects(quads, r, DK.failureCause)]
        assert [objects(quads, r, DK.failureCause)[0].value for r in failed] == [DK.CauseUnparseable]
        for r in ratings:      # each judgement links to its call record(s)
            calls = [q.subject for q in quads if q.predicate.value == str(DK.callFor) and q.object == r]
            assert len(calls) == 1 and objects(quads, calls[0], DK.model)[0].value == "judge-model"
        good = next(r for r in ratings if r not in failed)
        assert objects(quads, good, DK.goldMatch) == [DK.MatchCorrect.node]
        levels = {objects(quads, d, DK.rubricDimension)[0].value: objects(quads, d, DK.ratingLevel)[0].value
                  for d in objects(quads, good, DK.dimensionRating)}
        assert levels[DK.Efficiency] == DK.LevelMedium and levels[DK.Actionability] == DK.LevelHigh
        trajectory.validate(quads, "campaign graph")          # the shapes accept what was written

        second = qualitative.run(store, campaign, judge(server))
        assert (second.ratings, second.ratings_failed, second.already) == (1, 0, 3)   # only the failed one again
        assert len(server.script.calls) == 5
        third = qualitative.run(store, campaign, judge(server))
        assert third.calls == 0 and third.already == 4 and len(server.script.calls) == 5


def test_labels_and_ratings_of_an_adaptive_campaign(store):
    campaign = cp.create(store, cp.CampaignConfig(assistants=("random-search",), scenarios=(9102,),
                                                  protocol="adaptive", batch_size=4, max_batches=2, name="qa"))
    execution.run(store, campaign)
    work = qualitative.plan(store, campaign)
    kinds = {c.kind for c in work.clusters}
    assert qualitative.Kind.EXECUTION in kinds and work.clusters
    # the execution clusters are the final verdict's, as the campaign recorded them (labels in seed order)
    from diagkg.evaluation.protocol import usable

    final = cp.batches(store, campaign)[("random-search", 9102)][-1]
    recorded = [int(x) for x in final["labels"].split(",")]
    seeds = {u.trajectory: i for i, u in enumerate(sorted(usable(store, campaign, "random-search", work.clusters[0]
                                                                  .scenario_iri), key=lambda u: (u.batch, u.seed)))}
    for c in work.clusters:
        if c.kind is qualitative.Kind.EXECUTION:
            assert {recorded[seeds[t]] for t in c.members} == {c.index}
    assert sum(len(c.members) for c in work.clusters if c.kind is qualitative.Kind.EXECUTION) == len(recorded)
    with LLMServer() as server:
        server.script.content = json.dumps(ANSWER)
        summary = qualitative.run(store, campaign, judge(server))
        assert summary.labels == len(work.clusters) and summary.ratings == len(work.ratings) >= 1
        asked = len(server.script.calls)
        assert qualitative.run(store, campaign, judge(server)).calls == 0 and len(server.script.calls) == asked
    quads = graph_quads(store, campaign)
    for c in work.clusters:
        node = ox.NamedNode(c.iri)
        members = {o.value for o in objects(quads, node, DK.clusterMember)}
        assert objects(quads, node, DK.representative)[0].value in members
        assert int(objects(quads, node, DK.clusterSize)[0].value) == len(members) == len(c.members)
    rows = store.select("qualitative-labels", {"campaign": campaign.node})
    assert len(rows) == len(work.clusters) and {r["label"] for r in rows} == {ANSWER["label"]}
    rated = {r["trajectory"] for r in store.select("qualitative-ratings", {"campaign": campaign.node})}
    assert rated == {t for t, _ in work.ratings}
    for t, c in work.ratings:       # a rating names the cluster its trajectory represents
        assert c is not None and c.representative == t
    trajectory.validate(quads, "campaign graph")


def disk_store_without_llm_settings(tmp_path, quads, monkeypatch) -> str:
    """An on-disk store holding the torch, with no LLM configured in the environment."""
    for name in list(os.environ):
        if name.startswith(("DIAGKG_LLM_", "OPENAI_")):
            monkeypatch.delenv(name)
    db = str(tmp_path / "db")
    disk = KnowledgeStore(db)
    disk.add_quads(quads)
    disk.close()
    return db


def test_no_llm_skips_with_one_clear_message(tmp_path, torch_quads, capsys, monkeypatch):  # noqa: F811
    from diagkg.cli.main import main

    db = disk_store_without_llm_settings(tmp_path, torch_quads, monkeypatch)
    assert main(["--store", db, "evaluate", "--assistant", "oracle", "--scenarios", "TORCH.1", "--format", "json"]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out.strip().splitlines()[-1])
    assert data["qualitative"] is None and out.err.count("qualitative analysis skipped") == 1
    assert "DIAGKG_LLM_BASE_URL" in out.err and "diagkg qualitative" in out.err
    assert main(["--store", db, "qualitative", data["campaign"]]) == 0
    assert "qualitative analysis skipped" in capsys.readouterr().err
    assert main(["--store", db, "report", data["campaign"], "--out", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "qualitative rubric was not run" in page


# ---------------------------------------------------------------------------
# hand-made ratings: the shape and the report's tables
# ---------------------------------------------------------------------------

def hand_rating(campaign, traj: str, levels: dict[str, str], match: str) -> list[ox.Quad]:
    rubric = Rubric({Dimension(d): (Level(v), "because") for d, v in levels.items()}, "ok", Match(match), "why")
    return qualitative.rating_quads(campaign, traj, None, qualitative._new_iri(campaign), CallLog(), rubric, None)


def test_the_shape_refuses_a_rating_without_its_five_dimensions(store):
    campaign = cp.create(store, cp.CampaignConfig(assistants=("oracle",), scenarios=(9101,), name="shape"))
    quads = hand_rating(campaign, "https://example.org/t/1", {d.value: "high" for d in Dimension}, "partial")
    trajectory.validate(quads, "good rating")
    broken = [q for q in quads if not (q.predicate.value == str(DK.dimensionRating) and q.object.value.endswith("efficiency"))]
    with pytest.raises(ValidationError) as err:
        trajectory.validate(broken, "broken rating")
    assert any("five dimension ratings" in str(v) for v in err.value.violations)
    failed = qualitative.Judged("", False, FailureCause.TIMEOUT, "no answer")
    iri = qualitative._new_iri(campaign)
    ok_failed = qualitative.rating_quads(campaign, "https://example.org/t/2", None, iri, CallLog(), None, failed)
    trajectory.validate(ok_failed, "failed rating")              # a failed rating: its cause instead


def test_report_tables_from_hand_made_ratings(store, tmp_path):
    campaign = cp.create(store, cp.CampaignConfig(assistants=("oracle", "random-search"), scenarios=(9101, 9102),
                                                  runs=1, name="hand"))
    execution.run(store, campaign)
    slots = cp.recorded(store, campaign)
    plan = {("oracle", 9101): ({"actionability": "high", "diagnostic_coherence": "high", "efficiency": "high",
                                "consistency": "high", "evidence_usage": "medium"}, "correct"),
            ("oracle", 9102): ({"actionability": "high", "diagnostic_coherence": "medium", "efficiency": "low",
                                "consistency": "high", "evidence_usage": "medium"}, "partial"),
            ("random-search", 9101): ({d.value: "low" for d in Dimension}, "incorrect")}
    for (a, n), (levels, match) in plan.items():
        store.add_quads(hand_rating(campaign, slots[(a, n, 0)].trajectory, levels, match))
    data = rubric_report.load(store, [campaign.id])
    tables = {t.name: t for t in rubric_report.tables(store, data)}
    by_assistant = {(r[0], r[1]): r[2:] for r in tables["rubric-by-assistant"].rows}
    assert by_assistant[("oracle", "efficiency")] == [1, 0, 1, 2]            # high, medium, low, rated
    assert by_assistant[("oracle", "evidence_usage")] == [0, 2, 0, 2]
    assert by_assistant[("random-search", "consistency")] == [0, 0, 1, 1]
    gold = {r[0]: r[1:] for r in tables["gold-match"].rows}
    assert gold["oracle"] == [1, 1, 0, 0, 0, 2] and gold["random-search"] == [0, 0, 1, 0, 0, 1]
    by_category = {(r[0], r[1], r[2]): r[3:] for r in tables["rubric-by-category"].rows}
    assert by_category[("simple", "oracle", "diagnostic_coherence")] == [1, 1, 0, 2]
    by_system = {(r[0], r[1], r[2]): r[3:] for r in tables["rubric-by-system"].rows}
    assert by_system[("torch", "random-search", "actionability")] == [0, 0, 1, 1]
    images = rubric_report.plots(data, tmp_path)
    assert [p.name for p in images] == ["rubric.png"] and images[0].stat().st_size > 1000


def test_qualitative_and_report_on_the_command_line(tmp_path, torch_quads, capsys, monkeypatch):  # noqa: F811
    from diagkg.cli.main import main

    db = disk_store_without_llm_settings(tmp_path, torch_quads, monkeypatch)
    with LLMServer() as server:
        server.script.content = json.dumps(ANSWER)
        judge_cfg = json.dumps({"llm": {"base_url": server.base_url, "model": "judge-model", "retries": 0}})
        # the judge configured in --config: it runs at the end of the campaign
        assert main(["--store", db, "evaluate", "--assistant", "oracle", "--scenarios", "TORCH.1", "--runs", "2",
                     "--config", judge_cfg, "--format", "json"]) == 0
        data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert data["qualitative"]["ratings"] == 2 and data["qualitative"]["calls"] == 2
        assert main(["--store", db, "qualitative", data["campaign"], "--format", "json"]) == 0    # nothing left
        again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert again["calls"] == 0 and again["already_done"] == 2 and len(server.script.calls) == 2
    assert main(["--store", db, "report", data["campaign"], "--out", str(tmp_path / "rep")]) == 0
    out = tmp_path / "rep"
    assert (out / "rubric.png").is_file() and (out / "gold-match.tex").is_file()
    assert "| oracle (privileged) | 2 | 0 | 0 | 0 | 0 | 2 |" in (out / "gold-match.md").read_text()   # briefed with the answer
    page = (out / "report.html").read_text()
    assert "rubric.png" in page or 'alt="rubric"' in page
    assert "qualitative rubric was not run" not in page
