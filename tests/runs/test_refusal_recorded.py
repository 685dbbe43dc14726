"""Why a round's action was refused is stored as its code (``dk:refusal``), not only in the service agent's
words: a trajectory of a hand lamp written here, with refused moves of each kind an outsider's agent makes,
read back with ``trajectory-rounds`` and ``diagkg transcript``. Before, a query could tell a refused round
only by parsing ``dk:outcomeText``."""

from __future__ import annotations

from pathlib import Path

import pytest
import rdflib
from pyoxigraph import NamedNode

from diagkg.agents.registry import BaseAssistant
from diagkg.env.actions import Action, Hypothesis
from diagkg.env.outcomes import Refusal
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs import transcript
from diagkg.runs.runner import run_session

from ..support.paths import ROOT

LAMP = """\
@prefix :        <https://example.org/handlamp/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:handlamp a dk:System ; dk:systemKey "handlamp" ; dcterms:identifier "handlamp" ; rdfs:label "Hand lamp" ;
    dk:groundReference :cell.neg ; dcterms:description "A cell feeds a lamp through a switch and a lead." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :handlamp .
:cell a dk:VoltageSource ; dcterms:identifier "cell" ; rdfs:label "Cell" ; dk:partOf :body ; dk:voltage 6 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :cell.pos, :cell.neg .
:cell.pos a dk:Port ; dk:portName "pos" . :cell.neg a dk:Port ; dk:portName "neg" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Switch" ; dk:partOf :body ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" . :sw.n a dk:Port ; dk:portName "n" .
:lead a dk:Cable ; dcterms:identifier "lead" ; rdfs:label "Lead" ; dk:partOf :body ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lead.p, :lead.n .
:lead.p a dk:Port ; dk:portName "p" . :lead.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :body ; dk:resistance 15 ;
    dk:powerThreshold 0.5 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" . :lamp.n a dk:Port ; dk:portName "n" .
:cell.pos dk:connectedTo :sw.p .
:sw.n dk:connectedTo :lead.p .
:lead.n dk:connectedTo :lamp.p .
:lamp.n dk:connectedTo :cell.neg .
"""

OFF = """\
@prefix sys:     <https://example.org/handlamp/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

<https://example.org/handlamp-scenarios/HL.1> a dk:Scenario ; dk:scenarioNumber 9741 ; dcterms:identifier "HL.1" ;
    rdfs:label "Lead off at the lamp" ; dk:onSystem sys:handlamp ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:lead.n ] ;
    dk:initialObservations "The lamp stays dark." ; dk:faultyComponent sys:lead ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:position 1 ;
        dk:actionType dk:ReconnectCable ; dk:target sys:lead ] ] ;
    dk:actionBudget 10 .
"""

MOVES = [
    (Action("observe_component", ("nope",)), Refusal.UNKNOWN_PART),
    (Action("toggle_switch", ("sw",)), Refusal.UNKNOWN_ACTION),
    (Action("test_diode", ("lamp",)), Refusal.COMPONENT_TYPE),
    (Action("measure_voltage", ("lamp", "sw")), Refusal.TARGET_COUNT),
    (Action("reconnect_cable", ("lamp",)), None),        # (whatever it says: recorded as it is)
    (Action("measure_voltage", ("lamp",)), None),
    (Hypothesis({"lead"}), None),
]


class Scripted(BaseAssistant):
    name = "scripted-refusals"

    def suggest(self) -> Action | Hypothesis | None:
        n = len(self.outcomes)
        return MOVES[n][0] if n < len(MOVES) else None


@pytest.fixture()
def store(tmp_path: Path, monkeypatch) -> KnowledgeStore:
    monkeypatch.setenv("DIAGKG_CHECK_TRAJECTORIES", "always")      # checked against the shapes before it is stored
    (tmp_path / "handlamp.ttl").write_text(LAMP)
    (tmp_path / "hl1.ttl").write_text(OFF)
    s = KnowledgeStore.memory()
    load_files(s, [tmp_path / "handlamp.ttl", tmp_path / "hl1.ttl"])
    return s


def test_a_refused_round_records_its_refusal_code(store):
    result = run_session("HL.1", Scripted(), store=store, seed=0)
    assert str(result.end) == "success" and result.rounds == len(MOVES)
    played = {r["position"]: r for r in store.select("trajectory-rounds", {"trajectory": NamedNode(result.trajectory)})}
    assert len(played) == len(MOVES)
    told = result.record.rounds if result.record is not None else []
    for (move, expected), (position, row), outcome in zip(MOVES, sorted(played.items()), told, strict=True):
        refusal = outcome["refusal"] if isinstance(outcome, dict) else outcome.refusal
        if expected is not None:
            assert str(refusal) == expected.value
        # stored as the outcome said it: the code when refused, nothing when carried out
        assert row["refusal"] == (str(refusal) if refusal else None), (position, move, row)
    assert [played[p]["refusal"] for p in (1, 2, 3, 4)] == ["unknown-part", "unknown-action", "component-type",
                                                           "target-count"]
    assert played[6]["refusal"] is None and played[7]["refusal"] is None
    rounds = transcript.load(store, result.trajectory)["rounds"]
    assert [r["refusal"] for r in rounds[:4]] == ["unknown-part", "unknown-action", "component-type", "target-count"]


def test_the_shape_allows_every_refusal_code():
    shapes = rdflib.Graph().parse(ROOT / "shapes" / "trajectory.ttl")
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    path = rdflib.URIRef("https://w3id.org/diagkg/ontology#refusal")
    prop = next(shapes.subjects(sh.path, path))
    listed = {str(v) for v in rdflib.collection.Collection(shapes, shapes.value(prop, sh["in"]))}
    assert listed == {r.value for r in Refusal}
