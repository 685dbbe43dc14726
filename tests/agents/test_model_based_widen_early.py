"""A single that survives because the reports went against the likelier ones is not believed as certain. The
model-based assistant tries pairs of faults only when no single fault explains the reports, so a single left
standing was believed against other singles only: with a lamp and an indicator both dark, a measurement that
finds the supply sound left one single, a part on the way to both, and it was named as certain — where two parts
of the two branches explain the same reports. Now (``widen_share``) the pairs join the singles still standing once
these hold less than that share of the weight the singles had at the start; a pair that holds a standing single's
faults stays out (that single explains what it does). The system below is written here: a supply through a diode
(not reachable by a meter) feeding a bulb between two cables and, beside it, a resistor and an LED; the bulb and
the LED have both failed open."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagkg.kg.loading import load_files, load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from ..support.circuits import Loop, Parallel, Series, part, reachable

KEY = "guarded_pair"
SCENARIO = 9701
SOLVED = ("success", "success_no_hypothesis")

SCENARIO_TTL = f"""@prefix : <https://example.org/{KEY}/scenario/> .
@prefix sys: <https://example.org/{KEY}/> .
@prefix dk: <https://w3id.org/diagkg/ontology#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:GP.1 a dk:Scenario ; dk:scenarioNumber {SCENARIO} ; dcterms:identifier "GP.1" ; rdfs:label "A bulb and an LED open" ;
    dcterms:description "The bulb has burned out and the LED beside it has failed open: it looks like no supply." ;
    dk:onSystem sys:{KEY} ; dk:hasCategory dk:Double ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:bulb3 ] ,
        [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:led7 ] ;
    dk:initialObservations "The bulb and the LED are both dark." ;
    dk:faultyComponent sys:bulb3, sys:led7 ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:bulb3 ] ,
            [ a dk:DiagnosticAction ; dk:position 2 ; dk:actionType dk:ReplaceComponent ; dk:target sys:led7 ] ] ;
    dk:actionBudget 10 .
"""


def cable(module: int):
    return part("Cable", module, detachable=True, resistance=0.05)


def system_ttl() -> str:
    """bat0 -> d1 (a diode no meter reaches) -> [cable2, bulb3, cable4] beside [cable5, r6, led7] -> ground."""
    turtle = reachable((Loop(12, 0, Series((
        part("Diode", 0, forwardVoltage=0.7),
        Parallel((Series((cable(1), part("Bulb", 1, resistance=24, powerThreshold=0.5), cable(1))),
                  Series((cable(1), part("Resistor", 1, resistance=470),
                          part("LED", 1, forwardVoltage=2.0, color="green", powerThreshold=0.02)))))))),), KEY)
    unmeasured = turtle.replace("dk:Measurable, dk:Replaceable ; dk:hasPort :d1.anode", "dk:Replaceable ; dk:hasPort :d1.anode")
    assert unmeasured != turtle
    return unmeasured


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeStore:
    folder: Path = tmp_path_factory.mktemp("widen_early")
    (folder / "system.ttl").write_text(system_ttl())
    (folder / "scenario.ttl").write_text(SCENARIO_TTL)
    kept = KnowledgeStore.memory()
    load_shipped(kept)
    load_files(kept, [folder / "system.ttl", folder / "scenario.ttl"])
    return kept


def _run(store: KnowledgeStore, number: int, config: dict) -> tuple[str, float, list[tuple[str, ...]]]:
    rounds: list[dict] = []
    result = run_session(number, "model-based", seed=0, store=store, record=False, keep_ledger=False,
                         config=config, on_round=lambda r: rounds.append(r.to_dict()))
    return result.end, result.cost, [tuple(r["suspects"]) for r in rounds if r.get("suspects")]


def test_a_lone_single_with_little_weight_left_is_weighed_against_pairs(store: KnowledgeStore):
    # the diode holds a third of the singles' weight at the start (its open and reversed modes against the supply's
    # flat and reversed ones); once a measurement finds the supply sound it is all that stands
    end, before, named = _run(store, SCENARIO, {"widen_share": 0})
    assert end in SOLVED
    assert named[0] == ("d1",)               # named as certain: wrong
    end, after, named = _run(store, SCENARIO, {"widen_share": 0.5})
    assert end in SOLVED
    assert ("d1",) not in named              # the pairs of the two branches weighed against it first
    assert after <= before - 60, (before, after)


def test_only_before_a_costly_repair(store: KnowledgeStore):
    """Replacing the diode is expected to cost less than ``widen_minutes`` here: no widening, the diode named as
    with the setting off (a cheap repair of a lone single is its own test)."""
    assert _run(store, SCENARIO, {"widen_share": 0.5, "widen_minutes": 10_000}) == \
        _run(store, SCENARIO, {"widen_share": 0})


def test_a_pair_that_holds_a_standing_single_stays_out(store: KnowledgeStore):
    """Widening early adds pairs of parts of both branches, never the diode with another part: the diode
    alone explains whatever such a pair does (checked on the candidates right after the widening)."""
    from diagkg.agents.candidates import CandidateSpace

    seen: list[list[frozenset[str]]] = []
    original = CandidateSpace.widen_early

    def spy(self: CandidateSpace) -> None:
        original(self)
        seen.append([c.faulty for c, _ in self.live])

    CandidateSpace.widen_early = spy        # type: ignore[method-assign]
    try:
        _run(store, SCENARIO, {"widen_share": 0.5})
    finally:
        CandidateSpace.widen_early = original        # type: ignore[method-assign]
    assert len(seen) == 1
    diagnoses = seen[0]
    assert frozenset({"d1"}) in diagnoses
    assert any(len(d) == 2 for d in diagnoses)
    assert not any("d1" in d and len(d) > 1 for d in diagnoses)


def test_shipped_default_does_not_name_the_battery_inside(tmp_path: Path):
    """Shipped 3CC-AS.M.4 (a burned lamp and the supply LED open, on the ambient light sensor), the default
    setting: the battery reads 12 V, and its internal resistor, the only single left (a quarter of the
    singles' weight), is no longer named before the pairs are weighed."""
    kept = KnowledgeStore.memory()
    load_shipped(kept)
    end, before, named_before = _run(kept, 89, {"widen_share": 0})
    end_now, now, named_now = _run(kept, 89, {})
    assert end in SOLVED and end_now in SOLVED
    assert ("battery_internal_resistor",) in named_before
    assert ("battery_internal_resistor",) not in named_now
    assert now < before
