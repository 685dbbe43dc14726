"""Trajectories record the scoring and physics versions they were made under (issue 25, item 0);
``diagkg evaluate --resume`` and ``diagkg report`` refuse to mix versions unless told
(``--mix-versions``), saying which they found; trajectories made before versions were recorded
count as ``unrecorded``. On the torch written in tests/support/torch.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from diagkg.env.versions import PHYSICS_VERSION, SCORING_VERSION
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import versions
from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK
from diagkg.runs.runner import run_session

from ..support.cli import run_cli
from ..support.torch import FLAT, TORCH, scenario_text, torch_memory_store


def test_a_trajectory_records_the_versions_it_was_made_under(tmp_path):
    store = torch_memory_store(tmp_path)
    result = run_session(9101, "oracle", store=store)
    traj = ox.NamedNode(result.trajectory)
    graph = graphs.named("trajectory", result.trajectory.rsplit("/", 1)[1])

    def value(term: str) -> list[str]:
        return [q.object.value for q in store.raw.quads_for_pattern(traj, ox.NamedNode(term), None, graph)]

    assert value(DK.scoringVersion) == [SCORING_VERSION] and value(DK.physicsVersion) == [PHYSICS_VERSION]


def _strip_versions(store: Path, trajectory: str) -> None:
    """Make a stored trajectory look as one made before versions were recorded."""
    s = KnowledgeStore(store)
    graph = graphs.named("trajectory", trajectory.rsplit("/", 1)[1])
    kept = [q.triple for q in s.quads(graph) if q.predicate.value not in (DK.scoringVersion, DK.physicsVersion)]
    s.write_graphs({graph: kept})
    s.close()


@pytest.mark.slow
def test_resume_and_report_refuse_to_mix_versions_unless_told(tmp_path):
    (tmp_path / "torch.ttl").write_text(TORCH)
    (tmp_path / "t1.ttl").write_text(scenario_text(**FLAT))
    store = tmp_path / "store"
    with KnowledgeStore(store) as held:        # loaded in this process: the commands under test come next
        load_files(held, [tmp_path / "torch.ttl", tmp_path / "t1.ttl"])
    r = run_cli("--store", str(store), "evaluate", "--assistant", "oracle", "--scenarios", "TORCH.1", "--runs", "3",
                "--name", "old", "--format", "json")
    assert r.returncode == 0, r.stderr
    cid = json.loads(r.stdout)["campaign"]
    reader = KnowledgeStore.open_for_reading(store)
    rows = reader.select("campaign-trajectories", {"campaign": cp.open_campaign(reader, cid).node})
    reader.close()
    _strip_versions(store, rows[0]["trajectory"])            # made "before versions were recorded"
    s = KnowledgeStore(store)           # a slot to run again: its trajectory and the batch's record gone
    campaign = cp.open_campaign(s, cid)
    kept = [q.triple for q in s.quads(campaign.graph) if "#batch-" not in q.subject.value]
    s.write_graphs({campaign.graph: kept}, drop=[graphs.named("trajectory", rows[1]["trajectory"].rsplit("/", 1)[1])])
    s.close()
    current = f"scoring {SCORING_VERSION}, physics {PHYSICS_VERSION}"

    r = run_cli("--store", str(store), "evaluate", "--resume", cid)
    assert r.returncode == 2
    assert "scoring unrecorded, physics unrecorded (1 trajectories)" in r.stderr and current in r.stderr
    assert "--mix-versions" in r.stderr
    r = run_cli("--store", str(store), "report", cid, "--out", str(tmp_path / "rep"))
    assert r.returncode == 2 and "unrecorded" in r.stderr and not (tmp_path / "rep" / "report.html").exists()

    r = run_cli("--store", str(store), "evaluate", "--resume", cid, "--mix-versions", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ran"] == 1
    r = run_cli("--store", str(store), "report", cid, "--mix-versions", "--out", str(tmp_path / "rep"))
    assert r.returncode == 0, r.stderr
    found = versions.found(KnowledgeStore.open_for_reading(store))[cid]
    assert found == {versions.Versions("unrecorded", "unrecorded"): 1, versions.CURRENT: 2}

    # a campaign of one version reports alone; with the mixed one beside it, only when told
    r = run_cli("--store", str(store), "evaluate", "--assistant", "oracle", "--scenarios", "TORCH.1", "--runs", "1",
                "--name", "new", "--format", "json")
    new = json.loads(r.stdout)["campaign"]
    assert run_cli("--store", str(store), "report", new, "--out", str(tmp_path / "r2")).returncode == 0
    r = run_cli("--store", str(store), "report", "--out", str(tmp_path / "r3"))
    assert r.returncode == 2 and cid in r.stderr and new in r.stderr


def test_a_report_says_which_trajectories_it_leaves_out_when_their_scenario_was_removed(tmp_path):
    # a report reads the scenarios the trajectories ran on: after `diagkg remove`, those trajectories dropped out of
    # it without a word, and with none left it said the campaign held "no trajectory yet"
    from ..support.torch import LOOSE_LEAD

    files = [tmp_path / "torch.ttl", tmp_path / "t1.ttl", tmp_path / "t2.ttl"]
    for f, text in zip(files, (TORCH, scenario_text(**FLAT), scenario_text(**LOOSE_LEAD)), strict=True):
        f.write_text(text)
    store = ["--store", str(tmp_path / "store")]
    with KnowledgeStore(tmp_path / "store") as held:        # loaded in this process: the commands under test come next
        load_files(held, files)
    assert run_cli(*store, "evaluate", "--assistant", "oracle", "--scenarios", "9101,9102", "--name", "two").returncode == 0
    assert run_cli(*store, "remove", "scenario/TORCH.2", "--yes").returncode == 0
    out = tmp_path / "report"
    r = run_cli(*store, "report", "two", "--out", str(out))
    assert r.returncode == 0 and "1 graph(s) it ran on are no longer in the store" in r.stderr, r.stderr
    assert "scenario/TORCH.2" in r.stderr and "left out of the report" in (out / "report.html").read_text()
    assert run_cli(*store, "remove", "scenario/TORCH.1", "--yes").returncode == 0
    r = run_cli(*store, "report", "two", "--out", str(tmp_path / "again"))
    assert r.returncode == 2 and "2 graph(s) it ran on are no longer in the store" in r.stderr, r.stderr
    assert "no trajectory yet" not in r.stderr
