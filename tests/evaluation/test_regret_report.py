"""Regret in every report (diagkg.evaluation.regret) on a torch written in the test: a campaign of the oracle,
the optimal assistant and random search over three seeds is measured against the stored optimum (the optimal
assistant's regret is nought where no chance is in play), pass@1, pass^k and the flip rate come from the runs
over seeds, fault-isolation figures from the trajectories, a system without a stored optimum is said so, a new
figure query is a new table without running anything again, and `diagkg report --rescore` writes the tables."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, optimum, regret
from diagkg.kg.loading import load_files
from diagkg.kg.queries import QueryLibrary
from diagkg.kg.store import KnowledgeStore
from tests.support.cli import run_cli
from tests.support.torch_optimum import ACTIONS, CASES, write_files

ASSISTANTS = ("oracle", "optimal", "random-search")


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, optimum.Optimum]]:
    folder = tmp_path_factory.mktemp("torch-regret")
    patch = pytest.MonkeyPatch()
    patch.setenv("DIAGKG_CHECK_TRAJECTORIES", "never")        # the trajectories' shapes are tested elsewhere
    path = folder / "store"
    with KnowledgeStore(path) as store:
        load_files(store, write_files(folder))
        best = optimum.solve(store, "torch", actions=ACTIONS, repeats=3)
        optimum.store_optimum(store, best)
        config = cp.CampaignConfig(assistants=ASSISTANTS, scenarios=tuple(c["n"] for c in CASES), runs=3,
                                   name="regret")
        campaign = cp.create(store, config)
        t0 = time.monotonic()
        execution.run(store, campaign)
        print(f"campaign: {time.monotonic() - t0:.1f} s")
    patch.undo()
    yield path, campaign.id, best


def _rows(table):
    return {(r[0], r[1]): dict(zip(table.columns, r, strict=True)) for r in table.rows}


def test_costs_are_measured_against_the_stored_optimum(measured):
    path, cid, best = measured
    with KnowledgeStore(path, read_only=True) as store:
        tables = {t.name: t for t in regret.tables(store, [cid])}
    (system,) = tables["optimum"].rows
    assert system[0] == "torch" and system[1] == pytest.approx(best.expected_cost) and system[4] is True
    assert system[8] == ""                           # worked out for this version of the system
    rows = _rows(tables["regret"])
    for a in ASSISTANTS:
        assert rows[("torch", a)]["sessions"] == 3 * len(CASES)
        assert rows[("torch", a)]["optimum"] == pytest.approx(best.expected_cost)
    promised = {s.number: s.expected for s in best.scenarios}
    deterministic = sum(promised[c["n"]] for c in CASES[:4])
    optimal = rows[("torch", "optimal")]
    # the optimal assistant pays what it promised where no chance is in play; the loose lead costs what its draws do
    assert optimal["regret"] * optimal["sessions"] == pytest.approx(
        optimal["mean cost"] * optimal["sessions"] - 3 * sum(promised.values()))
    assert optimal["mean cost"] * optimal["sessions"] >= 3 * deterministic
    # the oracle knows the answer; random search pays for guessing
    assert rows[("torch", "oracle")]["cost / oracle"] == pytest.approx(1.0)
    assert rows[("torch", "random-search")]["regret"] > 0
    assert rows[("torch", "random-search")]["cost / optimum"] > 1


def test_success_over_seeds_and_fault_isolation(measured):
    path, cid, _ = measured
    with KnowledgeStore(path, read_only=True) as store:
        tables = {t.name: t for t in regret.tables(store, [cid])}
        figures = regret.load(store, [cid])
    reliable = _rows(tables["reliability"])
    for a in ASSISTANTS:
        r = reliable[("torch", a)]
        assert r["scenarios"] == len(CASES) and r["k"] == 3
        assert 0 <= r["pass^k"] <= r["pass@1"] <= 1 and 0 <= r["flip rate"] <= 1
    assert reliable[("torch", "oracle")]["pass^k"] == 1.0
    # pass^k and the flip rate from the runs themselves
    rs = figures[(next(iter(figures))[0], "random-search")]
    expected = sum(math.comb(c, 3) / math.comb(n, 3) for n, c in rs.runs.values()) / len(rs.runs)
    assert reliable[("torch", "random-search")]["pass^k"] == pytest.approx(expected)
    isolation = _rows(tables["isolation"])
    oracle = isolation[("torch", "oracle")]
    assert 0 < oracle["isolation accuracy"] <= 1 and oracle["false removals"] == 0
    assert oracle["isolated to 1 part"] <= oracle["isolated to ≤ 2 parts"] <= oracle["isolation accuracy"]
    assert isolation[("torch", "random-search")]["false removals"] > 0


def test_a_new_figure_query_is_a_new_table_of_stored_campaigns(measured, tmp_path):
    path, cid, _ = measured
    (tmp_path / "figure-longest-session.rq").write_text(
        "# The most rounds a session of a campaign took, per assistant.\n#\n# inputs:\n"
        "#   ?campaign (iri)  the campaign\n# outputs:\n#   ?campaign ?assistant ?most\n"
        "PREFIX dk: <https://w3id.org/diagkg/ontology#>\n"
        "SELECT ?campaign ?assistant (MAX(?r) AS ?most) WHERE { GRAPH ?g { ?campaign dk:hasTrajectory ?t . "
        "?t dk:recordOf ?s . ?s dk:assistantName ?assistant ; dk:roundCount ?r } } GROUP BY ?campaign ?assistant\n")
    with KnowledgeStore(path, read_only=True) as store:
        tables = {t.name: t for t in regret.tables(store, [cid], QueryLibrary(extra=[tmp_path]))}
    longest = tables["figure-longest-session"]
    assert longest.columns == ["campaign", "assistant", "most"]
    assert {r[1] for r in longest.rows} == set(ASSISTANTS) and all(int(r[2]) >= 1 for r in longest.rows)


def test_report_rescore_writes_the_tables_and_a_system_without_an_optimum_is_said_so(measured, tmp_path):
    path, cid, _ = measured
    out = tmp_path / "report"
    done = run_cli("--store", str(path), "report", cid, "--rescore", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "cost / optimum" in (out / "regret.md").read_text()
    assert "pass^k" in (out / "reliability.md").read_text().replace("\\", "")
    with KnowledgeStore(path, read_only=True) as store:
        (system,) = regret.optimum_table(store, ["https://example.org/elsewhere/lamp"]).rows
    assert system[0] == "lamp" and "no stored optimum: run diagkg optimum lamp" in system[8]
