"""A stored round costs its executed actions and its hypothesis, each counted once, on a lamp under a lidded hood
written in tests/env/test_check_access.py (not shipped). A hypothesis naming the lamp opens the lid first (10 min)
and replaces the lamp (120): the lid's opening was stored as an executed action of the round with its 10 minutes,
and the hypothesis with the round's 130, so that whoever summed the stored costs of a round counted the lid twice
(a stranger's SPARQL found 79 such rounds in one campaign). The hypothesis now carries its own 120."""

from __future__ import annotations

from pathlib import Path

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from ..env.test_check_access import HOOD, OPEN_LAMP

ROUNDS = """
PREFIX dk: <https://w3id.org/diagkg/ontology#>
SELECT ?round ?cost ?hypothesis (SUM(?executed) AS ?actions) WHERE {
  GRAPH ?g {
    ?round a dk:Round ; dk:costMinutes ?cost .
    OPTIONAL { ?round dk:suggestion ?h . ?h a dk:Hypothesis ; dk:costMinutes ?hypothesis }
    OPTIONAL { ?round dk:executed/dk:costMinutes ?executed }
  }
} GROUP BY ?round ?cost ?hypothesis
"""


def test_a_round_costs_its_actions_and_its_hypothesis_once(tmp_path: Path):
    (tmp_path / "hood.ttl").write_text(HOOD)
    (tmp_path / "lamp.ttl").write_text(OPEN_LAMP)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path])
    result = run_session("HOOD.1", "oracle", store=store, seed=0)
    assert result.end == "success" and result.cost == 130.0
    rows = store.select(ROUNDS)
    assert len(rows) == 1, rows
    row = rows[0]
    assert float(row["hypothesis"]) == 120.0 and float(row["actions"]) == 10.0 and float(row["cost"]) == 130.0, row
