"""A campaign records the version of the optimal policy its optimal assistant played. When `diagkg optimum` works
the policy out again afterwards (another catalogue, a fix to the search), `diagkg report` measured the campaign
against the policy stored now and said nothing: the optimal assistant read a regret below nought (a pump's 107.5
minutes against 110). The optimum table now names the campaigns that played another version. Run on a torch written
for the tests (tests/support/torch_optimum.py)."""

from __future__ import annotations

from pathlib import Path

from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, optimum, regret
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from tests.support.torch_optimum import ACTIONS, CASES, write_files


def _note(store: KnowledgeStore, campaign_ids: list[str]) -> str:
    (row,) = {t.name: t for t in regret.tables(store, campaign_ids)}["optimum"].rows
    return str(row[-1])


def test_the_report_names_a_campaign_that_played_another_version_of_the_policy(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("DIAGKG_CHECK_TRAJECTORIES", "never")
    store = KnowledgeStore.memory()
    load_files(store, write_files(tmp_path))
    optimum.store_optimum(store, optimum.solve(store, "torch", actions=ACTIONS[:2], repeats=3))
    config = cp.CampaignConfig(assistants=("optimal",), scenarios=tuple(c["n"] for c in CASES), runs=1)
    before = cp.create(store, config)
    execution.run(store, before)
    assert _note(store, [before.id]) == ""              # played the policy stored

    optimum.store_optimum(store, optimum.solve(store, "torch", actions=ACTIONS, repeats=3))    # worked out again
    after = cp.create(store, config)
    execution.run(store, after)
    note = _note(store, [before.id, after.id])
    assert note.startswith(f"worked out again since {before.id} played it") and after.id not in note
    assert _note(store, [after.id]) == ""
