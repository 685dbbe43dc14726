"""Regret in every report (diagkg.evaluation.regret) on a torch written in the test: a campaign of the oracle,
the optimal assistant and random search over three seeds is measured against the stored optimum (the optimal
assistant's regret is nought where no chance is in play), pass@1, pass^k and the flip rate come from the runs
over seeds, fault-isolation figures from the trajectories, a system without a stored optimum is said so, a new
figure query is a new table without running anything again, and `diagkg report --rescore` writes the tables."""

from __future__ import annotations

import math
import shutil
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
from tests.support.torch_optimum import ACTIONS, CASES, SCENARIO, write_files

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
    for a in ("oracle", "optimal"):          # every session succeeds: each is measured against the optimum
        assert rows[("torch", a)]["succeeded"] == rows[("torch", a)]["against optimum"] == 3 * len(CASES)
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


LONGEST = ("# The most rounds a session of a campaign took, per assistant.\n#\n# inputs:\n"
           "#   ?campaign (iri)  the campaign\n# outputs:\n#   ?campaign ?assistant ?most\n"
           "PREFIX dk: <https://w3id.org/diagkg/ontology#>\n"
           "SELECT ?campaign ?assistant (MAX(?r) AS ?most) WHERE { GRAPH ?g { ?campaign dk:hasTrajectory ?t . "
           "?t dk:recordOf ?s . ?s dk:assistantName ?assistant ; dk:roundCount ?r } } GROUP BY ?campaign ?assistant\n")


def test_the_command_line_reports_a_users_figure_folder_and_refuses_a_figure_it_cannot_show(measured, tmp_path):
    path, cid, _ = measured
    mine = tmp_path / "my-figures"
    mine.mkdir()
    (mine / "figure-longest-session.rq").write_text(LONGEST)
    out = tmp_path / "report"
    done = run_cli("--store", str(path), "report", cid, "--figures", str(mine), "--out", str(out))
    assert done.returncode == 0, done.stderr
    table = (out / "figure-longest-session.csv").read_text().splitlines()
    assert table[0] == "campaign,assistant,most" and len(table) == 1 + len(ASSISTANTS)
    assert "figure-longest-session" in (out / "report.html").read_text()
    # what cannot be shown is refused, saying why, before anything is written
    (mine / "figure-per-seed.rq").write_text(LONGEST.replace("#   ?campaign (iri)  the campaign\n",
                                                             "#   ?campaign (iri)  the campaign\n#   ?seed (integer)\n"))
    empty = tmp_path / "nothing"
    empty.mkdir()
    for folder, says in ((mine, "figure-per-seed.rq: a figure takes ?campaign alone"),
                         (empty, "no figure-*.rq file in it"), (tmp_path / "nope", "no such folder")):
        again = tmp_path / "again"
        r = run_cli("--store", str(path), "report", cid, "--figures", str(folder), "--out", str(again))
        assert r.returncode == 2 and says in r.stderr, r.stderr
        assert not again.exists()


def test_report_rescore_writes_the_tables_and_a_system_without_an_optimum_is_said_so(measured, tmp_path):
    path, cid, _ = measured
    out = tmp_path / "report"
    done = run_cli("--store", str(path), "report", cid, "--rescore", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "cost / optimum" in (out / "regret.md").read_text()
    # the terminal is shown each assistant's overall figures (it was told only how many files were written)
    lines = done.stdout.splitlines()
    assert lines[0].split()[:3] == ["assistant", "sessions", "success"], done.stdout
    shown = {row[0]: row for row in (line.replace(" (privileged)", "").split() for line in lines[1:-1])}
    assert set(shown) == set(ASSISTANTS) and all(row[1] == str(3 * len(CASES)) for row in shown.values())
    assert shown["oracle"][2] == "1.000"
    assert "pass^k" in (out / "reliability.md").read_text().replace("\\", "")
    with KnowledgeStore(path, read_only=True) as store:
        (system,) = regret.optimum_table(store, ["https://example.org/elsewhere/lamp"]).rows
    assert system[0] == "lamp" and "no stored optimum: run diagkg optimum lamp" in system[8]


def _figures(rows: dict) -> dict:
    out = {}
    for key, x in rows.items():
        figures = {k: v for k, v in vars(x).items() if k not in ("decisions", "runs")}
        out[key] = (figures, dict(x.runs), sorted(x.decisions))
    return out


def test_the_figures_come_from_the_slot_tallies_and_agree_with_the_trajectories(measured):
    path, cid, _ = measured
    with KnowledgeStore(path, read_only=True) as store:
        read_tallies: list[str] = []
        from_tallies = _figures(regret.load(store, [cid], read=read_tallies))
        read_trajectories: list[str] = []
        rescored = _figures(regret.load(store, [cid], rescore=True, read=read_trajectories))
    # the tallies answer (a few nodes per slot); --rescore reads every trajectory with the figure queries
    assert read_tallies == ["tally-figures"] and set(read_trajectories) == set(regret.KNOWN)
    assert len(from_tallies) == len(ASSISTANTS)
    _same(from_tallies, rescored)


def _same(one: dict, other: dict) -> None:
    assert one.keys() == other.keys()
    for key, (figures, runs, decisions) in other.items():
        tallied, tallied_runs, tallied_decisions = one[key]
        assert tallied == pytest.approx(figures), key
        assert tallied_runs == runs and tallied_decisions == pytest.approx(decisions) and decisions, key


def test_tallies_written_before_decision_times_were_kept_fall_back_to_the_trajectories(measured, tmp_path):
    import shutil

    import pyoxigraph as ox

    from diagkg.evaluation import tally
    from diagkg.kg.vocab import DK

    path, cid, _ = measured
    copy = tmp_path / "store"
    shutil.copytree(path, copy)
    with KnowledgeStore(copy) as store:
        campaign = cp.open_campaign(store, cid)
        old = {}
        for g in tally.tally_graphs(store, campaign):        # each session's entry cut to its first nine fields
            triples = [q.triple for q in store.raw.quads_for_pattern(None, None, None, g)]
            old[g] = [ox.Triple(t.subject, t.predicate, ox.Literal(";".join(
                " ".join(e.split(" ")[:9]) for e in t.object.value.split(";"))))
                if t.predicate == DK.tallySessions.node else t for t in triples]
        store.write_graphs(old)
        read: list[str] = []
        figures = regret.load(store, [cid], read=read)
        assert set(read) == set(regret.KNOWN)              # read from the trajectories, not wrongly from the tallies
        assert all(x.decisions for x in figures.values())
        tally.rebuild(store, campaign)                     # `diagkg report --rebuild` keeps them again
        read.clear()
        _same(_figures(regret.load(store, [cid], read=read)), _figures(figures))
        assert read == ["tally-figures"]


def test_the_step_viewer_of_a_large_campaign_shows_each_slots_example(measured):
    from diagkg.evaluation import steps

    path, cid, _ = measured
    with KnowledgeStore(path, read_only=True) as store:
        every = steps.load(store, [cid])
        notes: list[str] = []
        examples = steps.load(store, [cid], limit=len(every) - 1, notes=notes)
        few: list[str] = []
        first = steps.load(store, [cid], limit=2, notes=few)
    assert len(every) == 3 * len(ASSISTANTS) * len(CASES)
    lowest = {}
    for t in every:                                  # the lowest seed's trajectory of each slot, read on its own
        if (t.assistant, t.scenario) not in lowest or t.seed < lowest[(t.assistant, t.scenario)].seed:
            lowest[(t.assistant, t.scenario)] = t
    assert sorted((t.assistant, t.scenario, t.seed) for t in examples) == \
        sorted((t.assistant, t.scenario, t.seed) for t in lowest.values())
    for t in examples:
        assert t.to_json() == lowest[(t.assistant, t.scenario)].to_json()
    assert notes == [f"campaign {cid} holds {len(every)} trajectories: the step viewer shows {len(examples)}, "
                     f"the lowest seed's of each of its {len(examples)} assistant × scenario slots"]
    assert len(first) == 2 and "the first 2 of its" in few[0]


def test_the_report_page_says_its_step_viewer_shows_examples_only(measured, tmp_path, monkeypatch):
    from diagkg.evaluation import report, steps

    path, cid, _ = measured
    monkeypatch.setattr(steps, "VIEWER_LIMIT", 2 * len(ASSISTANTS) * len(CASES))     # of 3 runs each
    with KnowledgeStore(path, read_only=True) as store:
        report.write_report(store, [cid], tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert f"holds {3 * len(ASSISTANTS) * len(CASES)} trajectories: the step viewer shows {len(ASSISTANTS) * len(CASES)}," in page


def test_a_prior_that_lacks_scenarios_of_the_store_is_said_so(measured, tmp_path):
    """A scenario loaded after the optimum was worked out: its sessions were put beside the optimum of other
    scenarios without a word (the mean cost over every session beside the optimum over some), and the stored
    optimum read as current. Now the optimum's note names the scenarios its prior lacks and holds no more,
    and the regret table says how many sessions are measured against it."""
    path, cid, _ = measured
    copy = tmp_path / "store"
    shutil.copytree(path, copy)
    late = dict(id="OPT.6", n=9306, mode="OpenComponent", target="led", faulty="led", repair="ReplaceComponent",
                extra="")
    (tmp_path / "late.ttl").write_text(SCENARIO.format(**late))
    with KnowledgeStore(copy) as store:
        load_files(store, [tmp_path / "late.ttl"])
        config = cp.CampaignConfig(assistants=("oracle",), scenarios=(9301, 9306), runs=1, name="late")
        campaign = cp.create(store, config)
        execution.run(store, campaign)
    assert run_cli("--store", str(copy), "remove", "--scenario", "OPT.4", "--yes").returncode == 0
    with KnowledgeStore(copy, read_only=True) as store:
        tables = {t.name: t for t in regret.tables(store, [campaign.id])}
    (system,) = tables["optimum"].rows
    assert system[8] == ("its prior lacks 1 scenario(s) of the store (OPT.6): sessions on them are not measured "
                         "against it; its prior holds 1 scenario(s) no longer in the store (OPT.4): run diagkg "
                         "optimum torch again")
    row = _rows(tables["regret"])[("torch", "oracle")]
    assert (row["sessions"], row["against optimum"]) == (2, 1)


def test_an_assistant_that_gives_up_at_once_is_not_measured_below_the_optimum(measured, tmp_path):
    """An assistant that gave up at once (0 % success) read regret −145 min and cost / oracle 0.0 on a stranger's
    system, the best of the table, better than the oracle's: its sessions were put beside the expected cost of
    ending in success. Only sessions that succeeded are measured against the optimum and the oracle now."""
    from diagkg.agents import registry
    from diagkg.agents.registry import BaseAssistant

    class Quitter(BaseAssistant):
        name = "quitter"
        api_version = 3

        def suggest(self):
            return None

    path, cid, _ = measured
    copy = tmp_path / "store"
    shutil.copytree(path, copy)
    registry.register("quitter", Quitter)
    try:
        with KnowledgeStore(copy) as store:
            campaign = cp.create(store, cp.CampaignConfig(assistants=("oracle", "quitter"),
                                                          scenarios=tuple(c["n"] for c in CASES[:3]), name="quit"))
            execution.run(store, campaign)
            rows = _rows({t.name: t for t in regret.tables(store, [campaign.id])}["regret"])
            whole = _rows({t.name: t for t in regret.tables(store, [cid])}["regret"])
    finally:
        registry._REGISTERED.pop("quitter", None)
    quitter, oracle = rows[("torch", "quitter")], rows[("torch", "oracle")]
    assert (quitter["sessions"], quitter["succeeded"], quitter["against optimum"]) == (3, 0, 0)
    assert quitter["mean cost"] == 0
    for figure in ("regret", "cost / optimum", "cost / oracle", "mean cost (against optimum)"):
        assert math.isnan(quitter[figure]), figure
    assert oracle["succeeded"] == oracle["against optimum"] == 3 and oracle["regret"] < 0
    # random search fails some sessions: only those it won are measured, each against its own scenario's optimum
    searched = whole[("torch", "random-search")]
    assert searched["against optimum"] == searched["succeeded"] < searched["sessions"]
    assert searched["regret"] > 0


def test_an_update_may_drop_the_stored_optimum_but_not_write_it(measured, tmp_path):
    """The report measures regret against the stored optimal policy: an update that tripled its expected costs
    turned cost / optimum from 1.5 to 0.5 and regret negative without a word (outsider fx2). Writing the policy is
    refused; dropping it whole is allowed (the report then says no optimum is stored)."""
    from diagkg.errors import UpdateRefused
    from diagkg.kg import graphs
    from diagkg.kg.updates import apply_update

    path, cid, _ = measured
    shutil.copytree(path, tmp_path / "store")
    g = graphs.named("optimum", "torch").value
    with KnowledgeStore(tmp_path / "store") as store:
        before = _rows(next(t for t in regret.tables(store, [cid]) if t.name == "regret"))
        for update in ("PREFIX dk: <https://w3id.org/diagkg/ontology#> "
                       f"DELETE {{ GRAPH <{g}> {{ ?s dk:expectedCost ?c }} }} INSERT {{ GRAPH <{g}> {{ ?s dk:expectedCost ?d }} }} "
                       f"WHERE {{ GRAPH <{g}> {{ ?s dk:expectedCost ?c }} BIND(?c * 3 AS ?d) }}",
                       f"INSERT DATA {{ GRAPH <{graphs.named('optimum', 'lamp').value}> {{ <urn:a> <urn:b> 1 }} }}"):
            with pytest.raises(UpdateRefused, match="optimal policy"):
                apply_update(store, update)
        after = _rows(next(t for t in regret.tables(store, [cid]) if t.name == "regret"))
        assert after == before
        apply_update(store, f"DROP GRAPH <{g}>")
        assert not store.raw.contains_named_graph(graphs.named("optimum", "torch"))
