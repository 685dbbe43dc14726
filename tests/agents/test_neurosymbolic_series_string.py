"""The neuro-symbolic assistant on a string of lamps in series, written here as a decorator wires fairy lights (not
shipped): a 24 V supply, a lead, a fuse, a switch, eight 3 V bulbs in series and a return lead. One bulb burnt out
puts the whole string out; the bulbs before it read the supply at both ends, those after it 0 V.

Once the parts whose opening explains every reading are the candidates, a voltage read next is weighed by how its
readings, simulated with each candidate open, split them (``open_split``): the string is halved, not walked. It
tested the bulbs' continuity one by one and ran out of rounds on the last bulb (generated scenario ``S.242`` of such
a string: 216 of 248 sessions solved before, 236 after); a bulb reading the supply at both ends carries no current,
and is no suspect of its own for it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.rounds import Round
from diagkg.runs.runner import run_session

PARTS = """\
@prefix :        <https://example.org/fairy/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:fairy a dk:System ; dk:systemKey "fairy" ; dcterms:identifier "fairy" ; rdfs:label "Fairy-light string" ;
    dk:groundReference :psu.neg ;
    dcterms:description "A 24 V supply feeds, through a lead, a fuse and a switch, eight 3 V bulbs in series." .
:string a dk:Module ; dcterms:identifier "string" ; rdfs:label "String" ; dk:partOf :fairy .
:psu a dk:VoltageSource ; dcterms:identifier "psu" ; rdfs:label "24 V supply" ; dk:partOf :string ; dk:voltage 24 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :psu.pos, :psu.neg .
:psu.pos a dk:Port ; dk:portName "pos" .
:psu.neg a dk:Port ; dk:portName "neg" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "0.5 A fuse" ; dk:partOf :string ; dk:ratedCurrent 0.5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" .
:fuse.n a dk:Port ; dk:portName "n" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Switch" ; dk:partOf :string ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" .
:sw.n a dk:Port ; dk:portName "n" .
"""

CABLE = """\
:{c} a dk:Cable ; dcterms:identifier "{c}" ; rdfs:label "{c} lead" ; dk:partOf :string ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Detachable, dk:Replaceable ; dk:hasPort :{c}.p, :{c}.n .
:{c}.p a dk:Port ; dk:portName "p" .
:{c}.n a dk:Port ; dk:portName "n" .
"""

BULB = """\
:b{i} a dk:Bulb ; dcterms:identifier "b{i}" ; rdfs:label "Bulb {i}" ; dk:partOf :string ; dk:resistance 15 ;
    dk:powerThreshold 0.2 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :b{i}.p, :b{i}.n .
:b{i}.p a dk:Port ; dk:portName "p" .
:b{i}.n a dk:Port ; dk:portName "n" .
"""

BULBS = 8
WIRES = ":psu.pos dk:connectedTo :lead.p .\n:lead.n dk:connectedTo :fuse.p .\n:fuse.n dk:connectedTo :sw.p .\n" \
    ":sw.n dk:connectedTo :b1.p .\n" + "".join(f":b{i}.n dk:connectedTo :b{i + 1}.p .\n" for i in range(1, BULBS)) + \
    f":b{BULBS}.n dk:connectedTo :ret.p .\n:ret.n dk:connectedTo :psu.neg .\n"

FAIRY = PARTS + CABLE.format(c="lead") + CABLE.format(c="ret") + "".join(BULB.format(i=i) for i in range(1, BULBS + 1)) + WIRES

SCENARIO = """\
@prefix :        <https://example.org/fairy-scenarios/> .
@prefix sys:     <https://example.org/fairy/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:FAIRY.{i} a dk:Scenario ; dk:scenarioNumber {n} ; dcterms:identifier "FAIRY.{i}" ; rdfs:label "Bulb {i} burnt out" ;
    dk:onSystem sys:fairy ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:b{i} ] ;
    dk:initialObservations "The whole string is dark." ;
    dk:faultyComponent sys:b{i} ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:b{i} ] ] ;
    dk:actionBudget 11 .
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeStore:
    folder = tmp_path_factory.mktemp("fairy")
    (folder / "fairy.ttl").write_text(FAIRY)
    for i in range(1, BULBS + 1):
        (folder / f"b{i}.ttl").write_text(SCENARIO.format(i=i, n=9900 + i))
    s = KnowledgeStore.memory()
    load_files(s, [folder])
    return s


def test_a_burnt_out_bulb_in_a_string_is_found_by_halving(store):
    rounds, costs = {}, {}
    for i in range(1, BULBS + 1):
        steps: list[str] = []
        result = run_session(f"FAIRY.{i}", "neuro-symbolic", store=store, record=False, on_round=_noting(steps))
        assert result.end in ("success", "success_no_hypothesis"), (i, steps)
        assert f"name b{i}" in steps and sum(s.startswith("name") for s in steps) == 1, (i, steps)   # named right, once
        rounds[i], costs[i] = result.rounds, result.cost
    # the last bulb, the farthest a walk along the string reaches, within 8 rounds (the budget is 11)
    assert rounds[BULBS] <= 8, rounds
    assert sum(costs.values()) / BULBS < 230, costs


def _noting(steps: list[str]) -> Callable[[Round], None]:
    """What each round did, into ``steps``: the action, or ``name`` and the parts named."""
    return lambda r: steps.append(str(r.action) if r.action else f"name {','.join(r.suspects or ())}")
