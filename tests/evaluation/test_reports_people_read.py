"""Campaigns people can follow and read (issue 32, item 2), on the torch (a system written in the tests).

* ``evaluate`` says its progress where no bar can be drawn; ``--resume``, ``report``, ``export`` and
  ``remove --campaign`` take the name given to ``--name`` when one campaign has it;
* ``report`` refuses to pool campaigns that repeat an (assistant, scenario, seed) unless ``--pool``,
  and says what it pooled; a paired comparison counts each (scenario, seed) once;
* every plot states its n, costs are relative to each scenario's ideal repair, no two labels overlap
  (hand-made data with long names and many scenarios);
* ``report.html`` has a leaderboard with the SPARQL beside every number and a step viewer that shows
  every round, in Debian's Chromium (driven by Playwright), and the server serves the same page.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from diagkg.cli.main import main
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import metrics as mx
from diagkg.evaluation import plots, steps
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.server.app import ServerConfig, create_app

from ..support.serving import LOCAL
from ..support.torch import FLAT, LOOSE_LEAD, TORCH, scenario_text

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def torch_db(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("readable")
    files = [folder / "torch.ttl", folder / "t1.ttl", folder / "t2.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(scenario_text(**FLAT))
    files[2].write_text(scenario_text(**LOOSE_LEAD))
    store = KnowledgeStore(folder / "store")
    load_files(store, files)
    store.close()
    return str(folder / "store")


def campaign_ids(db: str, name: str) -> list[str]:
    store = KnowledgeStore(db, read_only=True)
    try:
        return [r["campaign"][len(cp.CAMPAIGN_BASE):] for r in cp.campaigns(store) if r["name"] == name]
    finally:
        store.close()


def test_campaigns_by_name_progress_lines_and_pooling(torch_db, tmp_path, capsys):
    db = torch_db
    args = ["--store", db, "evaluate", "--assistant", "oracle,random-search", "--scenarios", "TORCH.1,TORCH.2",
            "--runs", "2", "--name", "night"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "progress: 8/8 trajectories" in err                     # standard error is no terminal here
    (first,) = campaign_ids(db, "night")

    assert main(["--store", db, "evaluate", "--resume", "night"]) == 0        # the name given to --name
    out = capsys.readouterr().out
    assert f"campaign {first}: 8 trajectories (0 run now" in out
    assert main(["--store", db, "export", "night", "--out", str(tmp_path / "night.nq.gz")]) == 0
    assert (tmp_path / "night.nq.gz").stat().st_size > 1000

    assert main(args) == 0                                         # a second campaign, same name, same seeds
    capsys.readouterr()
    assert main(["--store", db, "evaluate", "--resume", "night"]) == 2
    assert "2 campaigns are named 'night'" in capsys.readouterr().err

    assert main(["--store", db, "report", "--out", str(tmp_path / "both")]) == 2      # every campaign: refused
    said = capsys.readouterr().err
    assert "8 (assistant, scenario, seed) slot(s) appear in more than one" in said and "--pool" in said
    assert main(["--store", db, "report", "--pool", "--out", str(tmp_path / "both")]) == 0
    said = capsys.readouterr().err
    assert "pooled 2 campaigns" in said
    page = (tmp_path / "both" / "report.html").read_text()
    assert "pooled 2 campaigns" in page
    paired = (tmp_path / "both" / "paired.csv").read_text().splitlines()
    assert paired[1].startswith("oracle (privileged),random-search,all,4,")   # 4 distinct (scenario, seed) pairs, not 8

    store = KnowledgeStore(db, read_only=True)
    try:
        both = [c.id for c in (cp.open_campaign(store, first),)] + [c for c in campaign_ids(db, "night") if c != first]
        data = mx.load(store, both)
        (everything,) = [p for p in mx.paired(store, data, "oracle", "random-search") if p.group == "all"]
        assert everything.pairs == 4
    finally:
        store.close()

    assert main(["--store", db, "remove", "--campaign", first, "--yes"]) == 0
    capsys.readouterr()
    assert main(["--store", db, "report", "night", "--out", str(tmp_path / "one")]) == 0    # one campaign again
    assert (tmp_path / "one" / "report.html").is_file()


# ---------------------------------------------------------------------------
# plots, on hand-made data
# ---------------------------------------------------------------------------

def hand_data(assistants: int, scenarios: int) -> mx.CampaignData:
    names = [f"assistant-with-a-long-name-{i}" for i in range(assistants)]
    facts = {n: mx.ScenarioFacts(n, f"SYSTEM-{n % 3}.SCENARIO.{n}", f"system_{n % 3}", ("Simple",),
                                 10.0 if n % 2 else 100.0) for n in range(1, scenarios + 1)}
    by_scenario, sessions = [], []
    for i, a in enumerate(names):
        for n, f in facts.items():
            ok = (n + i) % 3
            by_scenario.append({"assistant": a, "scenario": n, "total": 3, "truncated": 0, "crashed": 0, "n": 3,
                                "successes": ok, "cost": 6 * f.ideal_cost, "rounds": 6, "actions": 4, "hypotheses": 2,
                                "correct": ok, "healthy": 0, "diagnosed": ok, "falseRemovals": 0})
            sessions += [{"campaign": "c", "assistant": a, "scenario": n, "seed": s, "cost": 2 * f.ideal_cost,
                          "ok": int(s < ok)} for s in range(3)]
    return mx.CampaignData(by_scenario, sessions, facts, names, ["c"])


@pytest.mark.parametrize(("assistants", "scenarios"), [(2, 3), (7, 12), (3, 55)])
def test_every_plot_states_its_n_and_no_two_labels_overlap(assistants, scenarios):
    data = hand_data(assistants, scenarios)
    figures = {"success-vs-cost": plots.success_vs_cost(data), "per-scenario": plots.success_per_scenario(data),
               "per-system": plots.success_per_system(data), "relative-cost": plots.relative_cost_distributions(data)}
    for name, fig in figures.items():
        title = fig.axes[0].get_title()
        shown = min(scenarios, plots.MAX_SCENARIOS) if name == "per-scenario" else scenarios
        assert f"n = {assistants * shown * 3} sessions" in title, (name, title)
        assert plots.text_overlaps(fig) == [], name
    if scenarios > plots.MAX_SCENARIOS:
        assert f"the {plots.MAX_SCENARIOS} of {scenarios} scenarios" in figures["per-scenario"].axes[0].get_title()


def test_costs_are_relative_to_each_scenarios_ideal_repair():
    data = hand_data(2, 4)           # ideal costs 10 and 100, every session twice its ideal
    relative, left_out = plots.relative_costs(data)
    assert left_out == 0 and {v for vs in relative.values() for v in vs} == {2.0}
    data.scenarios[1] = mx.ScenarioFacts(1, "X.1", "system_1", (), None)        # no ideal repair: left out, counted
    relative, left_out = plots.relative_costs(data)
    assert left_out == 2 * 3 and all(len(v) == 3 * 3 for v in relative.values())
    assert "without an ideal repair left out" in plots.relative_cost_distributions(data).axes[0].get_title()


def test_a_plot_with_overlapping_labels_is_caught():
    from diagkg.evaluation.tables import _figure

    plt = _figure()
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.set_xticks(range(5), [f"a rather long tick label {i}" for i in range(5)])
    assert plots.text_overlaps(fig)
    plt.close(fig)


# ---------------------------------------------------------------------------
# the HTML report in a browser, and from the server
# ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (scripts/setup.sh --dev)")
def test_the_html_report_steps_through_every_round_in_chromium(torch_db, tmp_path, capsys):
    from playwright.sync_api import sync_playwright

    assert main(["--store", torch_db, "evaluate", "--assistant", "neuro-symbolic,random-search", "--scenarios",
                 "TORCH.1,TORCH.2", "--name", "viewed", "--format", "json"]) == 0
    capsys.readouterr()
    assert main(["--store", torch_db, "report", "viewed", "--out", str(tmp_path / "rep")]) == 0
    store = KnowledgeStore(torch_db, read_only=True)
    try:
        (cid,) = campaign_ids(torch_db, "viewed")
        expected = steps.load(store, [cid])
    finally:
        store.close()
    assert len(expected) == 4 and all(t.steps for t in expected)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto((tmp_path / "rep" / "report.html").as_uri())
        header = page.locator("#board tr").first.inner_text()
        assert "success" in header and "diagnosed" in header and "LLM money" in header
        links = page.locator("#board a.q")
        assert links.count() >= 8 * 2                    # every number of both assistants' rows
        target = links.first.get_attribute("href")
        assert target and "SELECT" in page.locator(target).locator("xpath=following-sibling::pre[1]").inner_text()
        options = page.locator("#trajectory option")
        assert options.count() == len(expected)
        for i, t in enumerate(expected):
            page.select_option("#trajectory", index=i)
            assert page.locator("#rounds tbody tr").count() == len(t.steps)
            for k, s in enumerate(t.steps):
                assert page.inner_text("#where") == f"round {s.position} of {len(t.steps)}"
                current = page.locator("#rounds tbody tr.current")
                assert current.get_attribute("data-round") == str(s.position)
                detail = page.inner_text("#detail")
                assert s.outcome in detail and f"{s.running_cost:g} min" in detail.replace(".0 min", " min")
                if k + 1 < len(t.steps):
                    page.click("#next")
        page.screenshot(path=str(tmp_path / "viewer.png"), full_page=True)
        browser.close()
    assert not errors, errors
    assert any(not math.isnan(s.running_cost) and s.ledger for t in expected for s in t.steps)   # a ledger shown

    with TestClient(create_app(ServerConfig(Path(torch_db), workers=1)), base_url=LOCAL) as client:
        served = client.get("/api/campaigns/viewed/report.html")       # by name, as the command line takes it
    assert served.status_code == 200 and 'id="steps-data"' in served.text and 'id="board"' in served.text
