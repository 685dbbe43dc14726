"""Honest success (issue 25): a hypothesis is judged only on what it names, costs the repairs it
implies with their access, and only a correct one ends a session in ``success``.

Adversarial assistants written against the public API (tests/support/adversaries.py) try to game
the score on the torch and a lantern written here (not shipped) and on one shipped scenario per
system: none of the hypothesis adversaries ends in any ``success…``; replacing every part ends at
most ``success_no_hypothesis``, its healthy replacements counted as false removals.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import diagkg
from diagkg.env.actions import Hypothesis
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs import scoring
from diagkg.runs.runner import run_session

from ..support.adversaries import HYPOTHESIS_ADVERSARIES, ReplaceAll
from ..support.cli import run_cli
from ..support.stores import shipped_store
from ..support.torch import torch_memory_store

# a lamp behind an inspection panel (the lens): replacing it means opening the panel first
LANTERN = """\
@prefix :        <https://example.org/lantern/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:lantern a dk:System ; dk:systemKey "lantern" ; dcterms:identifier "lantern" ; rdfs:label "Lantern" ;
    dk:groundReference :cell.neg ;
    dcterms:description "A 9 V cell lights a lamp through a switch; the lamp sits in a housing behind a lens." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :lantern .
:housing a dk:Enclosure ; dcterms:identifier "housing" ; rdfs:label "Lamp housing" ; dk:partOf :body ;
    dk:affords dk:Observable, dk:Movable .
:lens a dk:InspectionPanel ; dcterms:identifier "lens" ; rdfs:label "Lens" ; dk:partOf :body ; dk:containedIn :housing ;
    dk:affords dk:Observable, dk:Reachable, dk:Openable .
:cell a dk:VoltageSource ; dcterms:identifier "cell" ; rdfs:label "9 V cell" ; dk:partOf :body ; dk:voltage 9 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :cell.pos, :cell.neg .
:cell.pos a dk:Port ; dk:portName "pos" .
:cell.neg a dk:Port ; dk:portName "neg" .
:switch a dk:Switch ; dcterms:identifier "switch" ; rdfs:label "Switch" ; dk:partOf :body ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :switch.p, :switch.n .
:switch.p a dk:Port ; dk:portName "p" .
:switch.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :body ; dk:containedIn :housing ;
    dk:resistance 90 ; dk:powerThreshold 0.1 ;
    dk:affords dk:Observable, dk:Measurable, dk:Replaceable ; dk:hasPort :lamp.p, :lamp.n ;
    dk:affordsWhen [ a dk:ConditionalAffordance ; dk:grants dk:Reachable ;
        dk:whenAny [ a dk:StateCondition ; dk:onElement :lens ; dk:inState dk:Open ] ] .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .
:cell.pos dk:connectedTo :switch.p .
:switch.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :cell.neg .
"""

LANTERN_OPEN = """\
@prefix :        <https://example.org/lantern-scenarios/> .
@prefix sys:     <https://example.org/lantern/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:LANTERN.1 a dk:Scenario ; dk:scenarioNumber 9401 ; dcterms:identifier "LANTERN.1" ; rdfs:label "Lamp open" ;
    dk:onSystem sys:lantern ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:lamp ] ;
    dk:initialObservations "The lantern stays dark when switched on." ;
    dk:faultyComponent sys:lamp ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:lamp ] ] ;
    dk:actionBudget 10 .
"""

SHIPPED = ["3CC.S.1", "10CC.S.1", "DCAC.S.1", "3CC-AS.S.1", "3CC-CS.S.1"]
SUCCESS = ("success", "success_no_hypothesis")


@pytest.fixture(scope="module")
def torch(tmp_path_factory) -> KnowledgeStore:
    return torch_memory_store(tmp_path_factory.mktemp("torch"))


@pytest.fixture(scope="module")
def lantern(tmp_path_factory) -> KnowledgeStore:
    folder: Path = tmp_path_factory.mktemp("lantern")
    (folder / "lantern.ttl").write_text(LANTERN)
    (folder / "l1.ttl").write_text(LANTERN_OPEN)
    store = KnowledgeStore.memory()
    load_files(store, [folder / "lantern.ttl"])
    load_files(store, [folder / "l1.ttl"])
    return store


def _cases(torch: KnowledgeStore, lantern: KnowledgeStore) -> list[tuple[KnowledgeStore, str]]:
    return [(torch, "TORCH.1"), (torch, "TORCH.2"), (lantern, "LANTERN.1"), *((shipped_store(), s) for s in SHIPPED)]


@pytest.mark.parametrize("adversary", HYPOTHESIS_ADVERSARIES, ids=lambda c: c.name)
def test_no_hypothesis_adversary_ends_in_any_success(torch, lantern, adversary):
    for store, scenario in _cases(torch, lantern):
        # the hypothesis ledger is left out: it is not what is judged here, and its open conditions for a
        # hypothesis naming every part are most of the time (8.8 of 12 s on ten cubes)
        result = run_session(scenario, adversary(), store=store, seed=0, budget=3, record=False, keep_ledger=False)
        assert result.end not in SUCCESS, (adversary.name, scenario, result.end)
        assert result.diagnosis is not None and not result.diagnosis.diagnosed


def test_replacing_everything_succeeds_without_a_diagnosis_and_counts_its_false_removals(torch, lantern):
    removals = 0
    for store, scenario in _cases(torch, lantern):
        result = run_session(scenario, ReplaceAll(), store=store, seed=0, budget=60, record=False, keep_ledger=False)
        assert result.end in ("success_no_hypothesis", "timeout", "surrender"), (scenario, result.end)
        assert result.diagnosis is not None and not result.diagnosis.diagnosed
        removals += result.diagnosis.false_removals
        # each healthy replacement is counted once, in the round it was made
        healthy = [part for r in result.record.rounds for part in r.get("healthy", ())]
        assert len(healthy) == result.diagnosis.false_removals
    assert removals > 0


def test_verdicts_judge_only_what_is_named(torch):
    session = diagkg.make("TORCH.1", torch)      # the battery is flat
    session.reset(seed=0)
    steps = [({"bat", "bulb"}, "overbroad", ["bulb"]), ({"bulb"}, "wrong", ["bulb"]), (set(), "empty", []),
             ({"nothing_here"}, "empty", [])]
    for named, verdict, healthy in steps:
        outcome, cost, terminated, _, _ = session.step(Hypothesis(frozenset(named)))
        assert (outcome["verdict"], outcome["healthy"], terminated) == (verdict, healthy, False), named
        assert not session.repaired                   # nothing repaired on the way
    assert session.step(Hypothesis(frozenset({"bulb", "bat"})))[0]["verdict"] == "overbroad"
    outcome, cost, terminated, _, info = session.step(Hypothesis(frozenset({"bat"})))
    assert (outcome["verdict"], terminated, info["end"]) == ("correct", True, "success")


def test_a_partial_hypothesis_repairs_and_a_correct_one_names_every_fault_left(tmp_path):
    """Two faults (the bulb lead off and a flat battery): naming one is partial and repairs it;
    naming the other then is correct. Naming both at once is correct at once."""
    from ..support.torch import FLAT, TORCH, scenario_text

    (tmp_path / "torch.ttl").write_text(TORCH)
    both = scenario_text(**dict(FLAT, id="TORCH.9", number=9109)).replace(
        "dk:injects [ a dk:Fault ; dk:faultMode dk:DepletedBattery ; dk:faultTarget sys:bat ]",
        "dk:injects [ a dk:Fault ; dk:faultMode dk:DepletedBattery ; dk:faultTarget sys:bat ] , "
        "[ a dk:Fault ; dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:lead.n ]").replace(
        "dk:faultyComponent sys:bat", "dk:faultyComponent sys:bat, sys:lead")
    (tmp_path / "t9.ttl").write_text(both)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "torch.ttl"])
    load_files(store, [tmp_path / "t9.ttl"])
    session = diagkg.make("TORCH.9", store)
    session.reset(seed=0)
    outcome = session.step(Hypothesis(frozenset({"bat"})))[0]
    assert outcome["verdict"] == "partial" and session.repaired == {"bat"}
    outcome, _, terminated, _, info = session.step(Hypothesis(frozenset({"lead"})))
    assert (outcome["verdict"], info["end"]) == ("correct", "success")
    session.reset(seed=0)
    assert session.step(Hypothesis(frozenset({"bat", "lead"})))[0]["verdict"] == "correct"


def test_naming_a_part_costs_its_repair_with_its_access_and_the_oracle_pays_no_more(lantern):
    """The lamp sits behind the lens: naming it costs opening the lens and replacing it, what the
    oracle's repair costs; the oracle takes that way (a diagnosis at the same cost)."""
    session = diagkg.make("LANTERN.1", lantern)
    session.reset(seed=0)
    catalogue = session.catalogue
    outcome, cost, *_ = session.step(Hypothesis(frozenset({"lamp"})))
    assert outcome["verdict"] == "correct"
    assert [e["action"] for e in outcome["executed"]] == ["open_opening", "verify_repair"]
    assert cost == catalogue["open_opening"].cost + catalogue["replace_component"].cost
    oracle = run_session("LANTERN.1", "oracle", store=lantern, seed=0, record=False)
    assert (oracle.end, oracle.cost) == ("success", cost)


def test_the_oracle_repairs_each_part_the_cheapest_way_when_its_ideal_repair_costs_more(tmp_path):
    """The bulb lead is off and the power LED is open; the scenario's ideal repair replaces both
    (240 min) and naming both costs 130 (the LED is an injected fault of its own). Putting the lead
    back (10 min) makes the torch work, which ends the session: the oracle takes that way, and the
    model-based assistant, which finds it too, pays no less."""
    from ..support.torch import LOOSE_LEAD, TORCH, scenario_text

    (tmp_path / "torch.ttl").write_text(TORCH)
    text = scenario_text(**dict(LOOSE_LEAD, id="TORCH.8", number=9108, repair="ReplaceComponent")).replace(
        "dk:injects [ a dk:Fault ; dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:lead.n ]",
        "dk:injects [ a dk:Fault ; dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:lead.n ] , "
        "[ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:led ]").replace(
        "dk:target sys:lead ] ]",
        "dk:target sys:lead ] , [ a dk:DiagnosticAction ; dk:position 2 ; dk:actionType dk:ReplaceComponent ; "
        "dk:target sys:led ] ]")
    (tmp_path / "t8.ttl").write_text(text)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "torch.ttl"])
    load_files(store, [tmp_path / "t8.ttl"])
    oracle = run_session("TORCH.8", "oracle", store=store, seed=0, record=False)
    assert (oracle.end, oracle.cost) == ("success_no_hypothesis", 10.0), oracle.record.rounds
    assert [r["action"]["action"] for r in oracle.record.rounds] == ["reconnect_cable"]
    model = run_session("TORCH.8", "model-based", store=store, seed=0, record=False)
    assert model.end not in SUCCESS or model.cost >= oracle.cost


@pytest.mark.parametrize("scenario", SHIPPED)
def test_the_oracle_is_a_lower_bound_of_the_honest_assistants(scenario):
    store = shipped_store()
    oracle = run_session(scenario, "oracle", store=store, seed=0, record=False)
    assert oracle.end in SUCCESS
    for assistant in ("neuro-symbolic", "random-search"):
        result = run_session(scenario, assistant, store=store, seed=0, record=False)
        if result.end in SUCCESS:
            assert result.cost >= oracle.cost, (assistant, result.cost, oracle.cost)


def test_the_figures_are_computed_from_the_rounds():
    rounds = [{"round": 1, "kind": "action", "cost": 120, "healthy": ["sw"]},
              {"round": 2, "kind": "hypothesis", "suspects": ["bat", "bulb"], "verdict": "overbroad", "cost": 240,
               "healthy": ["bulb"]},
              {"round": 3, "kind": "hypothesis", "suspects": ["lead"], "verdict": "partial", "cost": 10},
              {"round": 4, "kind": "hypothesis", "suspects": ["bat"], "verdict": "correct", "cost": 120}]
    figures = scoring.score({"bat", "lead", "led"}, rounds)
    assert figures == scoring.DiagnosisScore(false_removals=2, precision=1.0, recall=2 / 3, rounds_to_isolate=4,
                                             minutes_to_isolate=490.0, diagnosed=True)
    assert scoring.score({"bat"}, []) == scoring.DiagnosisScore(0, None, 0.0, None, None, False)
    wrong = scoring.score({"bat"}, [{"round": 1, "kind": "hypothesis", "suspects": ["bulb"], "verdict": "wrong",
                                     "cost": 120, "healthy": ["bulb"]}])
    assert (wrong.precision, wrong.recall, wrong.false_removals) == (0.0, 0.0, 1)


def test_the_trajectory_records_the_figures_and_run_prints_them(tmp_path):
    store_path = tmp_path / "store"
    (tmp_path / "lantern.ttl").write_text(LANTERN)
    (tmp_path / "l1.ttl").write_text(LANTERN_OPEN)
    assert run_cli("--store", str(store_path), "load", str(tmp_path / "lantern.ttl")).returncode == 0
    assert run_cli("--store", str(store_path), "load", str(tmp_path / "l1.ttl")).returncode == 0
    r = run_cli("--store", str(store_path), "run", "--scenario", "LANTERN.1", "--assistant", "random-search",
                "--format", "json")
    assert r.returncode == 0, r.stderr
    last = json.loads(r.stdout.strip().splitlines()[-1])
    assert {"end", "cost", "false_removals"} <= set(last)
    r = run_cli("--store", str(store_path), "query", "trajectory-diagnosis", "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["results"]["bindings"]
    assert len(rows) == 1 and int(rows[0]["falseRemovals"]["value"]) == last["false_removals"]
    assert rows[0]["end"]["value"] == last["end"]


def test_a_campaign_report_shows_success_with_and_without_a_diagnosis(torch_quads):
    """The oracle diagnoses; the replacer repairs without a diagnosis and replaces healthy parts on the
    way: the campaign's metrics (from its tallies and from every trajectory alike) tell them apart."""
    from diagkg.agents.registry import register
    from diagkg.evaluation import campaign as cp
    from diagkg.evaluation import execution
    from diagkg.evaluation import metrics as mx

    register(ReplaceAll.name, ReplaceAll)
    store = KnowledgeStore.memory()
    store.add_quads(torch_quads)
    campaign = cp.create(store, cp.CampaignConfig(assistants=("oracle", ReplaceAll.name), scenarios=(9101, 9102),
                                                  runs=1, name="honest"))
    execution.run(store, campaign)
    for per_trajectory in (False, True):
        data = mx.load(store, [campaign.id], per_trajectory=per_trajectory)
        rows = {m.assistant: m.row() for m in mx.overall(data)}
        assert (rows["oracle"]["diagnosed_rate"], rows["oracle"]["false_removals"]) == (1.0, 0.0)
        replacer = rows[ReplaceAll.name]
        assert (replacer["success_rate"], replacer["diagnosed_rate"], replacer["repaired_rate"]) == (1.0, 0.0, 1.0)
        assert replacer["false_removals"] == 1.0       # TORCH.2: the battery and the bulb before the lead


# the same adversaries as programs of their own (the exec: boundary), in any language: here Python
ADVERSARY_PROGRAM = """\
import json, sys

def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()

kind = sys.argv[1]
brief = json.loads(sys.stdin.readline())
parts = sorted(p for p, k in brief["parts"].items() if k not in ("enclosure", "opening", "module"))
size = max(2, -(-len(parts) // 3))
turn = 0
while True:
    if kind == "name-all":
        send({"kind": "hypothesis", "parts": parts})
    elif kind == "thirds":
        send({"kind": "hypothesis", "parts": [parts[(turn % 3 * size + j) % len(parts)] for j in range(size)]})
    elif kind == "empty":
        send({"kind": "hypothesis", "parts": []})
    elif kind == "replace-all":
        send({"kind": "act", "action": "replace_component", "targets": [parts[turn]]} if turn < len(parts)
             else {"kind": "stop"})
    turn += 1
    if json.loads(sys.stdin.readline())["kind"] == "end":
        break
"""


@pytest.mark.parametrize("kind", ["name-all", "thirds", "empty", "replace-all"])
def test_the_adversaries_as_programs_of_their_own(torch, tmp_path, kind):
    """Through the exec: boundary, on the torch and a shipped scenario: the hypothesis adversaries end in
    no success; the replacer at most in success without a diagnosis, its healthy replacements counted."""
    import sys

    program = tmp_path / "adversary.py"
    program.write_text(ADVERSARY_PROGRAM)
    removals = {}
    for store, scenario in ((torch, "TORCH.2"), (shipped_store(), "3CC.S.1")):
        result = run_session(scenario, f"exec:{sys.executable} {program} {kind}", store=store, seed=0,
                             budget=3 if kind != "replace-all" else 40, record=False)
        assert result.diagnosis is not None and not result.diagnosis.diagnosed, (kind, scenario, result.end)
        removals[scenario] = result.diagnosis.false_removals
        if kind == "replace-all":
            assert result.end in ("success_no_hypothesis", "surrender", "timeout"), (scenario, result.end)
        else:
            assert result.end not in SUCCESS, (kind, scenario, result.end)
    if kind == "replace-all":    # TORCH.2 (the lead off): the battery and the bulb replaced before the lead
        assert removals["TORCH.2"] == 2
    elif kind != "empty":        # every hypothesis names healthy parts
        assert all(n > 0 for n in removals.values()), removals
