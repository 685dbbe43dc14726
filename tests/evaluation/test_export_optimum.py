"""A campaign that played the optimal policy records the policy's version with its scenarios and systems, and
`diagkg export` carries the policy's graph (``optimum/{key}``) with them; `diagkg import` refused every such
export ("holds graphs an export never holds: …/graph/optimum/torch"). It takes the policy as it takes a system:
added to a store without one, kept where the store holds the same version, refused (nothing imported) where it
holds another. Run on a torch written for the tests (tests/support/torch_optimum.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagkg.errors import InputError
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, optimum, regret, transfer
from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from tests.support.torch_optimum import ACTIONS, CASES, write_files


def _figures(store: KnowledgeStore, cid: str) -> dict[str, list]:
    return {t.name: [r[:-2] for r in t.rows] if t.name == "regret" else list(t.rows)   # not the decision times
            for t in regret.tables(store, [cid])}


def test_an_exported_campaign_of_the_optimal_assistant_imports_with_its_policy(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("DIAGKG_CHECK_TRAJECTORIES", "never")
    store = KnowledgeStore.memory()
    load_files(store, write_files(tmp_path))
    optimum.store_optimum(store, optimum.solve(store, "torch", actions=ACTIONS, repeats=3))
    campaign = cp.create(store, cp.CampaignConfig(assistants=("oracle", "optimal"),
                                                  scenarios=tuple(c["n"] for c in CASES), runs=1, name="moved"))
    execution.run(store, campaign)
    data = transfer.export_campaign(store, campaign.id)
    policy = graphs.named("optimum", "torch")
    assert policy.value.encode() in data

    elsewhere = KnowledgeStore.memory()
    result = transfer.import_campaign(elsewhere, data, "moved.nq")
    assert result.campaign == campaign.id and result.trajectories == len(CASES) * 2
    assert elsewhere.version_of(policy) == store.version_of(policy)
    assert _figures(elsewhere, campaign.id) == _figures(store, campaign.id)
    assert [r[0] for r in _figures(elsewhere, campaign.id)["optimum"]] == ["torch"]

    # a store holding the same policy keeps it (a second campaign of the first store); one holding another (worked
    # out again: its bounds and seconds differ) refuses the import, importing nothing
    second = cp.create(store, cp.CampaignConfig(assistants=("optimal",), scenarios=(CASES[0]["n"],), runs=1,
                                                name="second"))
    execution.run(store, second)
    kept = transfer.import_campaign(elsewhere, transfer.export_campaign(store, second.id), "second.nq")
    assert kept.trajectories == 1 and kept.knowledge_added == 0 and kept.knowledge_kept >= 3
    other = KnowledgeStore.memory()
    load_files(other, write_files(tmp_path))
    optimum.store_optimum(other, optimum.solve(other, "torch", actions=ACTIONS[:2], repeats=3))
    assert other.version_of(policy) != store.version_of(policy)
    with pytest.raises(InputError, match="another version of <https://w3id.org/diagkg/graph/optimum/torch>"):
        transfer.import_campaign(other, data, "moved.nq")
    assert not other.raw.contains_named_graph(campaign.graph)
